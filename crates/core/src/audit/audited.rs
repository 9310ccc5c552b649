//! The seam clients with their mutating calls routed through [`Audit::run`]: node group
//! create, update and delete; VM launch, start, relabel and delete; commitment purchase
//! and cancel. Reads, waits and pauses pass straight through. Wrapping is how every
//! caller reaches the one choke point: the provider's `Clouds` and the watcher wrap each
//! client they hand out.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;

use super::Audit;
use crate::model::GroupSpec;
use crate::offer::Cloud;
use crate::seam::commitments::{CapacityBlocks, LiveCommitment, Order, PriceQuote};
use crate::seam::instances::{GpuMachine, ImageRef, LaunchSpec, LiveInstance};
use crate::seam::{
    CloudError, CloudTraits, ClusterRef, Commitments, Instances, NodeGroup, NodeGroups, Turn,
    WaitTarget, region_of_location,
};

/// The cloud id of group `name` in `cluster`: the AKS agent pool's ARM id, the GKE node
/// pool's resource name, `<cluster>/<group>` on EKS (its ARN needs the account).
pub fn group_target(cluster: &ClusterRef, name: &str) -> String {
    match cluster {
        ClusterRef::Eks { name: c, .. } => format!("{c}/{name}"),
        ClusterRef::Aks {
            subscription,
            resource_group,
            name: c,
        } => format!(
            "/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.ContainerService/managedClusters/{c}/agentPools/{name}"
        ),
        ClusterRef::Gke {
            project,
            location,
            name: c,
        } => format!("projects/{project}/locations/{location}/clusters/{c}/nodePools/{name}"),
    }
}

/// The region of `cluster` (a GKE zone's region).
fn cluster_region(cluster: &ClusterRef) -> String {
    match cluster {
        ClusterRef::Eks { region, .. } => region.clone(),
        ClusterRef::Aks { .. } => String::new(),
        ClusterRef::Gke { location, .. } => region_of_location(location),
    }
}

/// A node group client whose changes are audited.
pub struct AuditedNodeGroups {
    inner: Box<dyn NodeGroups>,
    audit: Audit,
    cloud: Cloud,
    /// Cluster regions read from the cloud (AKS ids do not name one), by cluster.
    regions: std::sync::Mutex<BTreeMap<ClusterRef, String>>,
}

impl AuditedNodeGroups {
    /// `inner` (of `cloud`), audited by `audit`; `inner` itself when `audit` has no sink.
    pub fn wrap(inner: Box<dyn NodeGroups>, cloud: Cloud, audit: &Audit) -> Box<dyn NodeGroups> {
        if !audit.is_on() {
            return inner;
        }
        Box::new(AuditedNodeGroups {
            inner,
            audit: audit.clone(),
            cloud,
            regions: Default::default(),
        })
    }

    /// The region of `cluster`: its id's, else the cloud's answer (read once).
    async fn region(&self, cluster: &ClusterRef) -> String {
        let named = cluster_region(cluster);
        if !named.is_empty() {
            return named;
        }
        if let Some(r) = self
            .regions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cluster)
        {
            return r.clone();
        }
        let read = self
            .inner
            .cluster_region(cluster)
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        self.regions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cluster.clone(), read.clone());
        read
    }
}

#[async_trait]
impl NodeGroups for AuditedNodeGroups {
    fn traits(&self) -> &'static CloudTraits {
        self.inner.traits()
    }

    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        token: &str,
    ) -> Result<NodeGroup, CloudError> {
        let target = group_target(cluster, &spec.name);
        let call = self.inner.create_group(cluster, spec, token);
        let region = self.region(cluster).await;
        self.audit
            .run(self.cloud, &region, "create_node_group", &target, call)
            .await
    }

    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        self.inner.get_group(cluster, name).await
    }

    async fn update_group(
        &self,
        cluster: &ClusterRef,
        live: &NodeGroup,
        want: &GroupSpec,
    ) -> Result<bool, CloudError> {
        let target = group_target(cluster, &want.name);
        let call = self.inner.update_group(cluster, live, want);
        let region = self.region(cluster).await;
        self.audit
            .run(self.cloud, &region, "update_node_group", &target, call)
            .await
    }

    async fn cluster_region(&self, cluster: &ClusterRef) -> Result<Option<String>, CloudError> {
        self.inner.cluster_region(cluster).await
    }

    async fn nodes_up(
        &self,
        cluster: &ClusterRef,
        group: &NodeGroup,
    ) -> Result<Option<u32>, CloudError> {
        self.inner.nodes_up(cluster, group).await
    }

    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
        self.inner.list_groups(cluster).await
    }

    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
        let target = group_target(cluster, name);
        let call = self.inner.delete_group(cluster, name);
        let region = self.region(cluster).await;
        self.audit
            .run(self.cloud, &region, "delete_node_group", &target, call)
            .await
    }

    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        self.inner.wait_until(cluster, name, target, timeout).await
    }

    async fn take_turn(&self, cluster: &ClusterRef) -> Result<Turn, CloudError> {
        self.inner.take_turn(cluster).await
    }

    async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
        self.inner.pause(pause).await
    }

    fn now(&self) -> Duration {
        self.inner.now()
    }
}

/// A VM client whose changes are audited.
pub struct AuditedInstances {
    inner: Box<dyn Instances>,
    audit: Audit,
    /// The region of the place the client serves (a VM id does not always say it).
    region: String,
}

impl AuditedInstances {
    /// `inner` (serving `region`), audited by `audit`; `inner` itself without a sink.
    pub fn wrap(inner: Box<dyn Instances>, region: &str, audit: &Audit) -> Box<dyn Instances> {
        if !audit.is_on() {
            return inner;
        }
        Box::new(AuditedInstances {
            inner,
            audit: audit.clone(),
            region: region.to_string(),
        })
    }
}

impl AuditedInstances {
    /// The region of VM `id`: the client's, else the zone a Compute Engine id names, else
    /// the VM's own as read (a watcher over a whole subscription or project).
    async fn region_of(&self, id: &str) -> String {
        if !self.region.is_empty() {
            return self.region.clone();
        }
        if let Some(zone) = id.split("/zones/").nth(1).and_then(|z| z.split('/').next()) {
            return region_of_location(zone);
        }
        match self.inner.get(id).await {
            Ok(Some(vm)) => vm.region,
            _ => String::new(),
        }
    }
}

#[async_trait]
impl Instances for AuditedInstances {
    fn cloud(&self) -> Cloud {
        self.inner.cloud()
    }

    fn pace(&self) -> crate::pace::Pace {
        self.inner.pace()
    }

    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError> {
        self.inner.default_image(region).await
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        // The id exists only once the cloud answers: the event names the VM's name first
        // and is sent when the launch returns, with the id the cloud gave.
        let launched = self.inner.launch(spec).await;
        let target = match &launched {
            Ok(vm) => vm.id.clone(),
            Err(_) => spec.name.clone(),
        };
        self.audit
            .run(
                self.cloud(),
                &spec.region,
                "launch_instance",
                &target,
                async { launched },
            )
            .await
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        self.inner.get(id).await
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        self.inner.find(spec).await
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        self.inner.list_managed().await
    }

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        self.inner.list_gpu(gpu).await
    }

    async fn start(&self, id: &str) -> Result<(), CloudError> {
        let region = self.region_of(id).await;
        let call = self.inner.start(id);
        self.audit
            .run(self.cloud(), &region, "start_instance", id, call)
            .await
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        let region = self.region_of(id).await;
        let call = self.inner.set_labels(id, labels);
        self.audit
            .run(self.cloud(), &region, "set_instance_labels", id, call)
            .await
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        let region = self.region_of(id).await;
        let call = self.inner.delete(id);
        self.audit
            .run(self.cloud(), &region, "delete_instance", id, call)
            .await
    }
}

/// A commitment client whose purchases and cancellations are audited.
pub struct AuditedCommitments {
    inner: Box<dyn Commitments>,
    audit: Audit,
    cloud: Cloud,
    region: String,
}

impl AuditedCommitments {
    /// `inner` (of `cloud` in `region`), audited by `audit`; `inner` itself without a sink.
    pub fn wrap(
        inner: Box<dyn Commitments>,
        cloud: Cloud,
        region: &str,
        audit: &Audit,
    ) -> Box<dyn Commitments> {
        if !audit.is_on() {
            return inner;
        }
        Box::new(AuditedCommitments {
            inner,
            audit: audit.clone(),
            cloud,
            region: region.to_string(),
        })
    }
}

#[async_trait]
impl Commitments for AuditedCommitments {
    fn capacity_blocks(&self) -> Option<&dyn CapacityBlocks> {
        self.inner.capacity_blocks()
    }

    async fn quote(&self, order: &Order) -> Result<Option<PriceQuote>, CloudError> {
        self.inner.quote(order).await
    }

    async fn purchase(
        &self,
        order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError> {
        let bought = self.inner.purchase(order, tags).await;
        let target = match &bought {
            Ok(c) => c.id.clone(),
            Err(_) => tags
                .get(crate::commitment::MARKER_TAG)
                .cloned()
                .unwrap_or_default(),
        };
        self.audit
            .run(
                self.cloud,
                &self.region,
                "purchase_commitment",
                &target,
                async { bought },
            )
            .await
    }

    async fn get(&self, location: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError> {
        self.inner.get(location, id).await
    }

    async fn find_by_marker(
        &self,
        region: &str,
        key: &str,
    ) -> Result<Vec<LiveCommitment>, CloudError> {
        self.inner.find_by_marker(region, key).await
    }

    async fn cancel(&self, location: &str, id: &str) -> Result<(), CloudError> {
        // `location` is a zone for zonal kinds: the event names the client's region.
        let call = self.inner.cancel(location, id);
        self.audit
            .run(self.cloud, &self.region, "cancel_commitment", id, call)
            .await
    }

    async fn list(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        self.inner.list(region).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_groups_target_is_its_clouds_own_id() {
        let gke = ClusterRef::Gke {
            project: "p".into(),
            location: "us-central1-a".into(),
            name: "c".into(),
        };
        assert_eq!(
            group_target(&gke, "train-spot"),
            "projects/p/locations/us-central1-a/clusters/c/nodePools/train-spot"
        );
        assert_eq!(cluster_region(&gke), "us-central1");
        assert_eq!(region_of_location("europe-west4-a"), "europe-west4");
        assert_eq!(
            region_of_location("us-central1"),
            "us-central1",
            "a region is its own"
        );
        let aks = ClusterRef::Aks {
            subscription: "s".into(),
            resource_group: "rg".into(),
            name: "c".into(),
        };
        assert!(group_target(&aks, "gpu").ends_with("/managedClusters/c/agentPools/gpu"));
        let eks = ClusterRef::Eks {
            region: "us-east-1".into(),
            name: "c".into(),
        };
        assert_eq!(
            (group_target(&eks, "g"), cluster_region(&eks)),
            ("c/g".into(), "us-east-1".into())
        );
    }
}
