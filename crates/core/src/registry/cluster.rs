//! A cluster's id by its cloud: `ClusterRef::parse`, `id` and `Display`, each answered by
//! the driver of the cluster's cloud (`clouds::<cloud>::rules`).

use std::fmt;

use crate::clouds::{aws, azure, gcp};
use crate::offer::Cloud;
use crate::seam::cluster::{BadClusterRef, ClusterRef};

impl ClusterRef {
    /// Reads `id` as a cluster of `cloud` for a pool priced in `region`: an EKS cluster
    /// name; an AKS ARM id (path segment names in any letter case, as ARM treats them);
    /// a GKE path whose location is `region` or one of its zones (any, when `region` is
    /// empty).
    pub fn parse(cloud: Cloud, region: &str, id: &str) -> Result<Self, BadClusterRef> {
        let id = id.trim();
        match cloud {
            Cloud::Aws => aws::rules::parse_cluster(region, id),
            Cloud::Azure => azure::rules::parse_cluster(id),
            Cloud::Gcp => gcp::rules::parse_cluster(region, id),
            other => Err(BadClusterRef(format!(
                "{other} has no managed Kubernetes clusters here; valid clouds: aws, azure, gcp"
            ))),
        }
    }

    /// The cloud's own id, canonical: the EKS name, the AKS ARM id with the ARM segment
    /// names spelled as ARM does, the GKE path.
    pub fn id(&self) -> String {
        match self {
            ClusterRef::Eks { name, .. } => aws::rules::cluster_id(name),
            ClusterRef::Aks {
                subscription,
                resource_group,
                name,
            } => azure::rules::cluster_id(subscription, resource_group, name),
            ClusterRef::Gke {
                project,
                location,
                name,
            } => gcp::rules::cluster_id(project, location, name),
        }
    }
}

impl fmt::Display for ClusterRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}
