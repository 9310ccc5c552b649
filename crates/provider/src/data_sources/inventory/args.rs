//! `gpu_inventory`'s arguments: decoded once, checked on their attributes before any
//! cloud call, and turned into what to list.

use serde::Deserialize;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Tf, Value};

use gpu_core::catalog::Catalog;
use gpu_core::inventory::ItemKind;
use gpu_core::offer::Cloud;
use gpu_core::pool::kube::label_key_problem;
use gpu_core::region_group::RegionGroup;
use gpu_core::seam::ClusterRef;

use crate::model_values::strings;

/// The clouds an inventory reads.
pub const CLOUDS: [Cloud; 3] = [Cloud::Aws, Cloud::Azure, Cloud::Gcp];

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Raw {
    clouds: Tf<Vec<Tf<String>>>,
    regions: Tf<Vec<Tf<String>>>,
    clusters: Tf<Vec<Tf<String>>>,
    kinds: Tf<Vec<Tf<String>>>,
    group_by: Tf<Vec<Tf<String>>>,
}

/// What to list, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Clouds to read (default all three).
    pub clouds: Vec<Cloud>,
    /// Regions per cloud (every catalog region with GPUs matching `regions`).
    pub regions: Vec<(Cloud, String)>,
    /// Clusters whose node groups are read, with the id as written.
    pub clusters: Vec<(ClusterRef, String)>,
    /// Kinds to list (default all).
    pub kinds: Vec<ItemKind>,
    /// Label keys to total by (default `team`, `project`).
    pub group_by: Vec<String>,
    /// Only what the provider made is wanted (its list resources): VMs are then listed
    /// by their marker alone, so other GPU VMs cost no read.
    pub ours_only: bool,
}

fn error(attr: &str, detail: String) -> Diagnostic {
    Diagnostic::error(format!("Invalid {attr}"), detail).at(AttributePath::attr(attr))
}

/// A cluster's cloud id parsed: an EKS ARN, an AKS ARM id, a GKE path.
pub fn cluster_of(id: &str) -> Result<ClusterRef, String> {
    let id = id.trim();
    if let Some(rest) = id.strip_prefix("arn:aws:eks:") {
        // arn:aws:eks:<region>:<account>:cluster/<name>
        let parts: Vec<&str> = rest.splitn(3, ':').collect();
        if let [region, _account, res] = parts[..]
            && let Some(name) = res.strip_prefix("cluster/")
        {
            return ClusterRef::parse(Cloud::Aws, region, name).map_err(|e| e.to_string());
        }
        return Err(format!(
            "{id:?} is not an EKS cluster ARN (`arn:aws:eks:<region>:<account>:cluster/<name>`)"
        ));
    }
    if id.to_ascii_lowercase().starts_with("/subscriptions/") {
        return ClusterRef::parse(Cloud::Azure, "", id).map_err(|e| e.to_string());
    }
    if id.starts_with("projects/") {
        return ClusterRef::parse(Cloud::Gcp, "", id).map_err(|e| e.to_string());
    }
    Err(format!(
        "{id:?} is not a cluster id: write an EKS cluster ARN, an AKS cluster's ARM id \
         (`/subscriptions/…/managedClusters/<name>`) or a GKE cluster path \
         (`projects/<p>/locations/<l>/clusters/<name>`)"
    ))
}

/// Whether `pattern` (a glob, or a region group) takes `region` of `cloud`.
fn region_matches(pattern: &str, cloud: Cloud, region: &str) -> bool {
    if let Some(group) = RegionGroup::parse(pattern) {
        return group.contains(cloud, region);
    }
    glob::Pattern::new(&pattern.to_ascii_lowercase())
        .is_ok_and(|p| p.matches(&region.to_ascii_lowercase()))
}

/// The checked arguments of `config`; every problem on its attribute.
pub fn check(config: &Value, catalog: &Catalog) -> Result<Listing, Diagnostics> {
    let raw: Raw = tfplugin::tf::decode(config).unwrap_or_default();
    let mut d = Diagnostics::new();
    let clouds = match strings(&raw.clouds) {
        None => CLOUDS.to_vec(),
        Some(words) => words
            .iter()
            .filter_map(|w| {
                let cloud = CLOUDS
                    .into_iter()
                    .find(|c| c.as_str().eq_ignore_ascii_case(w.trim()));
                if cloud.is_none() {
                    d.push(error(
                        "clouds",
                        format!(
                            "`clouds`: {w:?} is not a cloud the inventory reads: aws, azure, gcp."
                        ),
                    ));
                }
                cloud
            })
            .collect(),
    };
    let patterns = strings(&raw.regions).unwrap_or_else(|| vec!["*".into()]);
    for p in &patterns {
        if RegionGroup::parse(p).is_none() && glob::Pattern::new(p).is_err() {
            d.push(error(
                "regions",
                format!(
                    "`regions`: {p:?} is not a glob (`us-*`) or a region group (europe, us, asia)."
                ),
            ));
        }
    }
    let mut regions: Vec<(Cloud, String)> = catalog
        .offers()
        .iter()
        .filter(|o| clouds.contains(&o.cloud))
        .filter(|o| {
            patterns
                .iter()
                .any(|p| region_matches(p, o.cloud, &o.region))
        })
        .map(|o| (o.cloud, o.region.to_ascii_lowercase()))
        .collect();
    regions.sort();
    regions.dedup();
    let mut clusters = Vec::new();
    for id in strings(&raw.clusters).unwrap_or_default() {
        match cluster_of(&id) {
            Ok(c) => clusters.push((c, id.trim().to_string())),
            Err(why) => d.push(error("clusters", format!("`clusters`: {why}."))),
        }
    }
    let kinds = match strings(&raw.kinds) {
        None => ItemKind::ALL.to_vec(),
        Some(words) => words
            .iter()
            .filter_map(|w| {
                let k = ItemKind::parse(w);
                if k.is_none() {
                    d.push(error(
                        "kinds",
                        format!("`kinds`: {w:?} is not a kind: node_pool, instance, commitment."),
                    ));
                }
                k
            })
            .collect(),
    };
    let group_by = strings(&raw.group_by).unwrap_or_else(|| vec!["team".into(), "project".into()]);
    for key in &group_by {
        if let Some(problem) = label_key_problem(key) {
            d.push(error(
                "group_by",
                format!("`group_by`: {key:?} is not a label key: {problem}."),
            ));
        }
    }
    if d.has_errors() {
        return Err(d);
    }
    Ok(Listing {
        clouds,
        regions,
        clusters,
        kinds,
        group_by,
        ours_only: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &[&str])]) -> Value {
        crate::model_values::object_of(
            &super::super::schema(),
            pairs.iter().map(|(k, v)| {
                (
                    *k,
                    Value::List(v.iter().map(|s| Value::string(*s)).collect()),
                )
            }),
        )
    }

    #[test]
    fn defaults_read_every_kind_of_every_cloud_by_team_and_project() {
        let l = check(&config(&[("regions", &["us-east-1"])]), Catalog::embedded()).unwrap();
        assert_eq!(l.kinds, ItemKind::ALL.to_vec());
        assert_eq!(l.group_by, ["team", "project"]);
        assert_eq!(l.regions, [(Cloud::Aws, "us-east-1".to_string())]);
        let all = check(&config(&[]), Catalog::embedded()).unwrap();
        assert!(all.regions.len() > 20, "every catalog region with GPUs");
    }

    #[test]
    fn bad_arguments_are_refused_on_their_attribute() {
        let cases: [(&str, &[&str], &str); 5] = [
            ("kinds", &["vm"], "node_pool, instance, commitment"),
            ("clouds", &["oracle"], "aws, azure, gcp"),
            ("group_by", &["Team Name"], "not a label key"),
            ("clusters", &["train-east"], "EKS cluster ARN"),
            ("regions", &["us-[east"], "not a glob"),
        ];
        for (attr, values, words) in cases {
            let d = check(&config(&[(attr, values)]), Catalog::embedded()).unwrap_err();
            let text = format!("{d:?}");
            assert!(text.contains(words), "{attr}: {text}");
            assert!(text.contains(attr));
        }
    }

    #[test]
    fn cluster_ids_of_each_cloud_parse() {
        let eks = cluster_of("arn:aws:eks:us-west-2:123456789012:cluster/train").unwrap();
        assert_eq!(
            eks,
            ClusterRef::Eks {
                region: "us-west-2".into(),
                name: "train".into()
            }
        );
        let gke = cluster_of("projects/p/locations/us-central1/clusters/c").unwrap();
        assert_eq!(gke.cloud(), Cloud::Gcp);
    }
}
