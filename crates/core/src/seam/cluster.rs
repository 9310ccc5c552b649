//! [`ClusterRef`]: a Kubernetes cluster named the way its own cloud names it, so that one
//! `cluster` attribute can name an EKS cluster (its name, in the pool's region), an AKS
//! cluster (its ARM id) or a GKE cluster (`projects/p/locations/l/clusters/c`, where the
//! location is a region or a zone), and a cluster that contradicts the pool's cloud or
//! region is refused before any cloud call.

use std::fmt;

use crate::offer::Cloud;

/// An existing managed Kubernetes cluster, by the cloud's own id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClusterRef {
    /// An EKS cluster: its name, in `region`.
    Eks {
        /// AWS region, e.g. `us-east-1`.
        region: String,
        /// Cluster name.
        name: String,
    },
    /// An AKS managed cluster.
    Aks {
        /// Subscription id (a GUID).
        subscription: String,
        /// Resource group name.
        resource_group: String,
        /// Cluster name.
        name: String,
    },
    /// A GKE cluster.
    Gke {
        /// Project id.
        project: String,
        /// A region (`us-central1`) or a zone (`us-central1-a`).
        location: String,
        /// Cluster name.
        name: String,
    },
}

/// Why a `cluster` value cannot name a cluster of the pool's cloud and region; the text
/// says what a valid one looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadClusterRef(pub String);

const AKS_SHAPE: &str = "/subscriptions/<subscription>/resourceGroups/<resource-group>/providers/Microsoft.ContainerService/managedClusters/<name>";
const GKE_SHAPE: &str = "projects/<project>/locations/<region-or-zone>/clusters/<name>";

impl ClusterRef {
    /// Reads `id` as a cluster of `cloud` for a pool priced in `region`: an EKS cluster
    /// name; an AKS ARM id (path segment names in any letter case, as ARM treats them);
    /// a GKE path whose location is `region` or one of its zones (any, when `region` is
    /// empty).
    pub fn parse(cloud: Cloud, region: &str, id: &str) -> Result<Self, BadClusterRef> {
        let id = id.trim();
        match cloud {
            Cloud::Aws => parse_eks(region, id),
            Cloud::Azure => parse_aks(id),
            Cloud::Gcp => parse_gke(region, id),
            other => Err(BadClusterRef(format!(
                "{other} has no managed Kubernetes clusters here; valid clouds: aws, azure, gcp"
            ))),
        }
    }

    /// The cloud the cluster is on.
    pub fn cloud(&self) -> Cloud {
        match self {
            ClusterRef::Eks { .. } => Cloud::Aws,
            ClusterRef::Aks { .. } => Cloud::Azure,
            ClusterRef::Gke { .. } => Cloud::Gcp,
        }
    }

    /// The cluster's own name (the last part of its id).
    pub fn name(&self) -> &str {
        match self {
            ClusterRef::Eks { name, .. }
            | ClusterRef::Aks { name, .. }
            | ClusterRef::Gke { name, .. } => name,
        }
    }

    /// The cloud's own id, canonical: the EKS name, the AKS ARM id with the ARM segment
    /// names spelled as ARM does, the GKE path.
    pub fn id(&self) -> String {
        match self {
            ClusterRef::Eks { name, .. } => name.clone(),
            ClusterRef::Aks {
                subscription,
                resource_group,
                name,
            } => format!(
                "/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.ContainerService/managedClusters/{name}"
            ),
            ClusterRef::Gke {
                project,
                location,
                name,
            } => format!("projects/{project}/locations/{location}/clusters/{name}"),
        }
    }
}

impl fmt::Display for ClusterRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

fn parse_eks(region: &str, id: &str) -> Result<ClusterRef, BadClusterRef> {
    let ok = id.len() <= 100
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        let hint = if id.starts_with("arn:") {
            " (give the cluster's name, not its ARN)"
        } else if id.contains('/') {
            " (that looks like another cloud's cluster id)"
        } else {
            ""
        };
        return Err(BadClusterRef(format!(
            "{id:?} is not an EKS cluster name: 1–100 letters, digits, `-` or `_`, starting with a letter or digit{hint}"
        )));
    }
    Ok(ClusterRef::Eks {
        region: region.to_string(),
        name: id.to_string(),
    })
}

fn parse_aks(id: &str) -> Result<ClusterRef, BadClusterRef> {
    let bad = |why: &str| {
        BadClusterRef(format!(
            "{id:?} is not an AKS cluster id{why}; it looks like \"{AKS_SHAPE}\""
        ))
    };
    let parts: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    let [s, sub, rg_kw, rg, p, ns, mc, name] = parts.as_slice() else {
        return Err(bad(""));
    };
    let is = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if !(is(s, "subscriptions")
        && is(rg_kw, "resourceGroups")
        && is(p, "providers")
        && is(ns, "Microsoft.ContainerService")
        && is(mc, "managedClusters"))
    {
        return Err(bad(""));
    }
    if !is_guid(sub) {
        return Err(bad(" (the subscription must be a GUID)"));
    }
    if rg.is_empty() || name.is_empty() {
        return Err(bad(" (empty resource group or name)"));
    }
    Ok(ClusterRef::Aks {
        subscription: sub.to_ascii_lowercase(),
        resource_group: rg.to_string(),
        name: name.to_string(),
    })
}

fn parse_gke(region: &str, id: &str) -> Result<ClusterRef, BadClusterRef> {
    let parts: Vec<&str> = id.split('/').collect();
    let [p, project, l, location, c, name] = parts.as_slice() else {
        return Err(BadClusterRef(format!(
            "{id:?} is not a GKE cluster id; it looks like \"{GKE_SHAPE}\""
        )));
    };
    if *p != "projects" || *l != "locations" || *c != "clusters" {
        return Err(BadClusterRef(format!(
            "{id:?} is not a GKE cluster id; it looks like \"{GKE_SHAPE}\""
        )));
    }
    if project.is_empty() || name.is_empty() || location.is_empty() {
        return Err(BadClusterRef(format!(
            "{id:?} has an empty part; it looks like \"{GKE_SHAPE}\""
        )));
    }
    let in_region = region.is_empty() || *location == region || is_zone_of(location, region);
    if !in_region {
        return Err(BadClusterRef(format!(
            "{id:?} is in location {location:?}, which is not region {region:?} or one of its zones; set `region` to the cluster's region"
        )));
    }
    Ok(ClusterRef::Gke {
        project: project.to_string(),
        location: location.to_string(),
        name: name.to_string(),
    })
}

/// Whether `zone` is a Google Cloud zone of `region`: the region plus `-<letter>`
/// (`us-central1-a` is in `us-central1`), both as Google spells them (lower case).
pub fn is_zone_of(zone: &str, region: &str) -> bool {
    zone.strip_prefix(region)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|z| z.len() == 1 && z.chars().all(|c| c.is_ascii_lowercase()))
}

/// Whether `s` is a GUID (8-4-4-4-12 hex digits), as Azure subscription and tenant ids are.
pub fn is_guid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUB: &str = "0b1f6471-1bf0-4dda-aec3-cb9272f09590";

    #[test]
    fn each_cloud_reads_its_own_id() {
        let eks = ClusterRef::parse(Cloud::Aws, "us-east-1", "train-east").unwrap();
        assert_eq!(
            (eks.cloud(), eks.name(), eks.id().as_str()),
            (Cloud::Aws, "train-east", "train-east")
        );
        let arm = format!(
            "/subscriptions/{SUB}/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/train"
        );
        let aks = ClusterRef::parse(Cloud::Azure, "eastus", &arm).unwrap();
        assert_eq!((aks.cloud(), aks.name()), (Cloud::Azure, "train"));
        assert_eq!(aks.id(), arm);
        // ARM segment names in another case mean the same cluster, spelled one way.
        let lower = arm.to_ascii_lowercase();
        assert_eq!(
            ClusterRef::parse(Cloud::Azure, "eastus", &lower)
                .unwrap()
                .id(),
            arm
        );
        for location in ["us-central1", "us-central1-a"] {
            let path = format!("projects/p1/locations/{location}/clusters/train");
            let gke = ClusterRef::parse(Cloud::Gcp, "us-central1", &path).unwrap();
            assert_eq!(
                (gke.cloud(), gke.name(), gke.id()),
                (Cloud::Gcp, "train", path)
            );
        }
    }

    #[test]
    fn a_cluster_that_contradicts_cloud_or_region_is_refused_with_the_valid_shape() {
        let arm = format!(
            "/subscriptions/{SUB}/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/train"
        );
        let e = ClusterRef::parse(Cloud::Aws, "us-east-1", &arm).unwrap_err();
        assert!(e.0.contains("another cloud's cluster id"), "{e}");
        let e = ClusterRef::parse(Cloud::Aws, "us-east-1", "arn:aws:eks:us-east-1:1:cluster/x")
            .unwrap_err();
        assert!(e.0.contains("not its ARN"), "{e}");
        let e = ClusterRef::parse(Cloud::Azure, "eastus", "train").unwrap_err();
        assert!(e.0.contains(AKS_SHAPE), "{e}");
        let bad_sub = arm.replace(SUB, "not-a-guid");
        assert!(
            ClusterRef::parse(Cloud::Azure, "eastus", &bad_sub)
                .unwrap_err()
                .0
                .contains("GUID")
        );
        let e = ClusterRef::parse(Cloud::Gcp, "us-central1", "train").unwrap_err();
        assert!(e.0.contains(GKE_SHAPE), "{e}");
        let e = ClusterRef::parse(
            Cloud::Gcp,
            "us-central1",
            "projects/p/locations/europe-west4-a/clusters/c",
        )
        .unwrap_err();
        assert!(e.0.contains("not region \"us-central1\""), "{e}");
        // A region that only starts the same is not the region.
        assert!(
            ClusterRef::parse(
                Cloud::Gcp,
                "us-central1",
                "projects/p/locations/us-central10/clusters/c"
            )
            .is_err()
        );
        assert!(ClusterRef::parse(Cloud::Cudo, "x", "c").is_err());
    }
}
