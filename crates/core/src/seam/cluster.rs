//! [`ClusterRef`]: a Kubernetes cluster named the way its own cloud names it, so that one
//! `cluster` attribute can name an EKS cluster (its name, in the pool's region), an AKS
//! cluster (its ARM id) or a GKE cluster (`projects/p/locations/l/clusters/c`, where the
//! location is a region or a zone), and a cluster that contradicts the pool's cloud or
//! region is refused before any cloud call. Each driver reads and writes its own cloud's
//! id (`clouds::<cloud>::rules`); `registry::cluster` gives `ClusterRef::parse`, `id` and
//! `Display` by cloud.

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

impl ClusterRef {
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
}

/// The region of a Google Cloud location: the location itself, or the region of a zone
/// (`us-central1-a` → `us-central1`).
pub fn region_of_location(location: &str) -> String {
    match location.rsplit_once('-') {
        Some((region, zone)) if zone.len() == 1 && region.contains('-') => region.to_string(),
        _ => location.to_string(),
    }
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
    use crate::clouds::azure::rules::AKS_SHAPE;
    use crate::clouds::gcp::rules::GKE_SHAPE;
    use crate::offer::Cloud;

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

    #[test]
    fn gke_locations_name_their_region() {
        assert_eq!(region_of_location("us-central1-a"), "us-central1");
        assert_eq!(region_of_location("us-central1"), "us-central1");
        assert_eq!(region_of_location("europe-west4-b"), "europe-west4");
        assert_eq!(region_of_location("europe-west4-a"), "europe-west4");
    }
}
