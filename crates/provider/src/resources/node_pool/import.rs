//! `ImportResourceState` for `gpu_node_pool`: the import id parsed and checked into a
//! minimal state; the read that follows finds the groups. One id per cloud, which is also
//! the pool's `id`:
//! - `aws/<region>/<cluster>/<name>`;
//! - `azure/<subscription>/<resource-group>/<cluster>/<name>` (the region is the cluster's
//!   `location`, read by the read that follows);
//! - `gcp/<project>/<location>/<cluster>/<name>` (the region is the location's).

use std::collections::{BTreeMap, BTreeSet};

use gpu_core::catalog::Catalog;
use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use gpu_core::seam::{ClusterRef, is_guid, region_of_location};
use tfplugin::Value;

/// The shapes of import ids, for messages.
pub const SHAPES: &str = "\"aws/<region>/<cluster>/<name>\", \"azure/<subscription>/<resource-group>/<cluster>/<name>\" or \"gcp/<project>/<location>/<cluster>/<name>\"";

/// The import id (and resource `id`) of pool `pool` in `cluster`.
pub fn import_id(cluster: &ClusterRef, pool: &str) -> String {
    match cluster {
        ClusterRef::Eks { region, name } => format!("aws/{region}/{name}/{pool}"),
        ClusterRef::Aks {
            subscription,
            resource_group,
            name,
        } => format!("azure/{subscription}/{resource_group}/{name}/{pool}"),
        ClusterRef::Gke {
            project,
            location,
            name,
        } => format!("gcp/{project}/{location}/{name}/{pool}"),
    }
}

/// Parses an import id into a minimal state (`cloud`, `region` when the id says it,
/// `cluster`, `name`); the region must be one where `catalog` has the cloud's GPU offers
/// (a pool elsewhere could not be priced). Everything is checked before any cloud call.
pub fn import_state(id: &str, object_keys: &[String], catalog: &Catalog) -> Result<Value, String> {
    let parts: Vec<&str> = id.split('/').collect();
    let cloud = parts.first().and_then(|c| spelling::cloud(c));
    let empty_part =
        || format!("the import id {id:?} has an empty part; it must look like {SHAPES}");
    let (cloud, region, cluster, name) = match (cloud, parts.as_slice()) {
        (Some(Cloud::Aws), [_, region, cluster, name]) => {
            if [region, cluster, name].iter().any(|p| p.is_empty()) {
                return Err(empty_part());
            }
            let region = spelling::region(Some(Cloud::Aws), region);
            // Refused here, before the read that follows an import calls the cloud with it.
            if !crate::config::is_aws_region(&region) {
                return Err(format!(
                    "the import id {id:?} names region {region:?}, which is not an AWS region; an AWS region looks like \"us-east-1\" or \"eu-west-2\""
                ));
            }
            (Cloud::Aws, Some(region), cluster.to_string(), *name)
        }
        (Some(Cloud::Azure), [_, sub, rg, cluster, name]) => {
            if [sub, rg, cluster, name].iter().any(|p| p.is_empty()) {
                return Err(empty_part());
            }
            if !is_guid(sub) {
                return Err(format!(
                    "the import id {id:?} names subscription {sub:?}, which is not a GUID such as \"00000000-0000-0000-0000-000000000000\""
                ));
            }
            let arm = ClusterRef::Aks {
                subscription: sub.to_ascii_lowercase(),
                resource_group: rg.to_string(),
                name: cluster.to_string(),
            }
            .id();
            (Cloud::Azure, None, arm, *name)
        }
        (Some(Cloud::Gcp), [_, project, location, cluster, name]) => {
            if [project, location, cluster, name]
                .iter()
                .any(|p| p.is_empty())
            {
                return Err(empty_part());
            }
            let location = location.to_ascii_lowercase();
            let path = ClusterRef::Gke {
                project: project.to_string(),
                location: location.clone(),
                name: cluster.to_string(),
            }
            .id();
            (Cloud::Gcp, Some(region_of_location(&location)), path, *name)
        }
        (Some(_), _) => {
            return Err(format!(
                "the import id {id:?} must look like {SHAPES}, e.g. \"aws/us-east-1/train-east/train\""
            ));
        }
        (None, _) => {
            return Err(format!(
                "the import id {id:?} must start with the cloud (aws, azure or gcp) and look like {SHAPES}"
            ));
        }
    };
    if let Some(region) = &region {
        check_region(id, cloud, region, catalog)?;
    }
    let problems = gpu_core::pool::validate::name_errors(cloud, &cluster, name);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(format!(
            "the import id {id:?} cannot name a pool: {}",
            list.join("; ")
        ));
    }
    let mut m: BTreeMap<String, Value> = object_keys
        .iter()
        .map(|k| (k.clone(), Value::Null))
        .collect();
    m.insert("cloud".into(), Value::string(cloud.to_string()));
    let parsed = ClusterRef::parse(cloud, region.as_deref().unwrap_or_default(), &cluster);
    m.insert("region".into(), region.map_or(Value::Null, Value::string));
    m.insert("cluster".into(), Value::string(&cluster));
    m.insert("name".into(), Value::string(name));
    m.insert("taint".into(), Value::List(Vec::new()));
    let id = parsed
        .map(|c| import_id(&c, name))
        .map_err(|e| format!("the import id {id:?}: {e}"))?;
    m.insert("id".into(), Value::string(id));
    Ok(Value::Object(m))
}

/// Refuses `region` when the catalog has no GPU offer of `cloud` there.
pub fn check_region(id: &str, cloud: Cloud, region: &str, catalog: &Catalog) -> Result<(), String> {
    let regions: BTreeSet<&str> = catalog
        .offers()
        .iter()
        .filter(|o| o.cloud == cloud)
        .map(|o| o.region.as_str())
        .collect();
    if regions.contains(region) {
        return Ok(());
    }
    let list: Vec<&str> = regions.iter().copied().collect();
    let cloud = crate::clouds::cloud_name(cloud);
    Err(format!(
        "the import id {id:?} names region {region:?}, where the catalog has no {cloud} GPU offer, so no gpu_node_pool can be priced there; {cloud} regions with GPU offers: {}",
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<String> {
        ["id", "cloud", "region", "cluster", "name", "gpu", "taint"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn each_clouds_id_round_trips_into_cluster_and_id() {
        let catalog = Catalog::embedded();
        let catalog = &catalog;
        let sub = "00000000-1111-4222-8333-444444444444";
        let cases = [
            (
                "aws/US-EAST-1/train-east/train".to_string(),
                "aws",
                Some("us-east-1"),
                "train-east".to_string(),
                "aws/us-east-1/train-east/train".to_string(),
            ),
            (
                format!("azure/{sub}/rg-ml/aks1/train"),
                "azure",
                None,
                format!(
                    "/subscriptions/{sub}/resourceGroups/rg-ml/providers/Microsoft.ContainerService/managedClusters/aks1"
                ),
                format!("azure/{sub}/rg-ml/aks1/train"),
            ),
            (
                "gcp/my-project/us-central1-a/gke1/train".to_string(),
                "gcp",
                Some("us-central1"),
                "projects/my-project/locations/us-central1-a/clusters/gke1".to_string(),
                "gcp/my-project/us-central1-a/gke1/train".to_string(),
            ),
        ];
        for (id, cloud, region, cluster, canonical) in cases {
            let s = import_state(&id, &keys(), catalog).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(s.get_attr("cloud").and_then(Value::as_str), Some(cloud));
            assert_eq!(s.get_attr("region").and_then(Value::as_str), region);
            assert_eq!(
                s.get_attr("cluster").and_then(Value::as_str),
                Some(cluster.as_str())
            );
            assert_eq!(
                s.get_attr("id").and_then(Value::as_str),
                Some(canonical.as_str())
            );
        }
    }

    #[test]
    fn bad_ids_are_refused_naming_what_is_wrong() {
        let catalog = Catalog::embedded();
        let catalog = &catalog;
        for (id, says) in [
            ("azure/not-a-guid/rg/aks1/train", "not a GUID"),
            (
                "azure/00000000-1111-4222-8333-444444444444/rg/aks1",
                "must look like",
            ),
            ("gcp/p/us-central1//train", "empty part"),
            ("gcp/p/mars-north9/gke1/train", "no Google Cloud GPU offer"),
            ("oracle/x/y/z", "must start with the cloud"),
        ] {
            let e = import_state(id, &keys(), catalog).unwrap_err();
            assert!(e.contains(says), "{id}: {e}");
        }
    }
}
