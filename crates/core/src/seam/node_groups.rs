//! The seam for node groups (EKS node groups, AKS agent pools, GKE node pools): the
//! [`NodeGroups`] trait each cloud's driver implements, Karpenter-sized on purpose (create,
//! get, update to a whole desired state, list, delete, wait; a turn at a cluster that runs
//! one operation at a time), and the read-back types it speaks (what is asked for is a
//! [`GroupSpec`]). Mapping a pool onto groups is `pool::layout`'s job.

use std::fmt;
use std::time::Duration;

use super::{CloudError, CloudTraits, ClusterRef, Turn};

pub use crate::model::{
    AwsClass, AzureClass, CapacityType, GcpClass, GroupSpec, NodeClass, Scaling, Taint, TaintEffect,
};

/// Lifecycle state of a node group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NodeGroupStatus {
    /// Being created.
    Creating,
    /// Ready and steady.
    Active,
    /// A config or version update is running.
    Updating,
    /// Being deleted.
    Deleting,
    /// Creation failed; see the health issues.
    CreateFailed,
    /// Deletion failed; see the health issues.
    DeleteFailed,
    /// Exists but unhealthy (e.g. no spot capacity); see the health issues.
    Degraded,
    /// A state this crate does not know, as the cloud spelled it.
    Other(String),
}

impl NodeGroupStatus {
    /// A word for messages, the same on every cloud: `creating`, `active`, `updating`,
    /// `deleting`, `create failed`, `delete failed`, `degraded`, or the cloud's own word.
    pub fn as_str(&self) -> &str {
        match self {
            NodeGroupStatus::Creating => "creating",
            NodeGroupStatus::Active => "active",
            NodeGroupStatus::Updating => "updating",
            NodeGroupStatus::Deleting => "deleting",
            NodeGroupStatus::CreateFailed => "create failed",
            NodeGroupStatus::DeleteFailed => "delete failed",
            NodeGroupStatus::Degraded => "degraded",
            NodeGroupStatus::Other(s) => s,
        }
    }
}

impl fmt::Display for NodeGroupStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One health issue the cloud reports on a group (e.g. `AsgInstanceLaunchFailures`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthIssue {
    /// Issue code as the cloud spells it.
    pub code: String,
    /// Human message from the cloud.
    pub message: String,
}

/// A node group as read back from the cloud: what it is ([`GroupSpec`], the cloud's own
/// system labels, taints and tags stripped) and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroup {
    /// The cloud's id of the group (an ARN on EKS, an ARM id on AKS, a path on GKE).
    pub id: String,
    /// Lifecycle state.
    pub status: NodeGroupStatus,
    /// Its name, machine types, counts, labels, taints, tags and class.
    pub spec: GroupSpec,
    /// Kubernetes version the nodes run, when reported.
    pub kubernetes_version: Option<String>,
    /// Health issues, empty when healthy.
    pub health: Vec<HealthIssue>,
}

impl NodeGroup {
    /// The group's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

/// The steady state [`NodeGroups::wait_until`] waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitTarget {
    /// The group exists and is `Active`.
    Active,
    /// The group no longer exists.
    Deleted,
}

/// Create, read, update and delete of one cloud's node groups (EKS node groups, AKS agent
/// pools, GKE node pools) in clusters named by [`ClusterRef`].
///
/// Implementations must be cheap to share (`Send + Sync`); every method is one logical
/// call (the adapter may retry throttling inside it). What a group may be called and what
/// it can change in place are the driver's: [`NodeGroups::traits`] and `pool::drift`.
#[async_trait::async_trait]
pub trait NodeGroups: Send + Sync {
    /// The rules of this cloud's groups: names, machine types per group, serial
    /// operations, ownership marker, system labels.
    fn traits(&self) -> &'static CloudTraits;

    /// Starts creating group `spec` in `cluster` and returns it as the cloud first reports
    /// it (usually `Creating`). `token` makes a retried create idempotent where the cloud
    /// supports it. A name already taken gives [`CloudError::Conflict`].
    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        token: &str,
    ) -> Result<NodeGroup, CloudError>;

    /// Reads a group, the cloud's own labels, taints and tags stripped; `Ok(None)` when it
    /// (or its cluster) does not exist.
    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError>;

    /// Makes `live` (the group as just read) what `want` says in everything that can
    /// change in place (counts, labels, taints, tags), however the cloud spells that (EKS:
    /// a config delta from `live` and tag calls; AKS: one PUT). `want.scaling.desired =
    /// None` keeps the live count. Returns whether the cloud started an operation to wait
    /// for.
    async fn update_group(
        &self,
        cluster: &ClusterRef,
        live: &NodeGroup,
        want: &GroupSpec,
    ) -> Result<bool, CloudError>;

    /// The region `cluster` runs in as the cloud reports it, for an import whose id does
    /// not say it (AKS: the managed cluster's `location`); `Ok(None)` where the cluster's
    /// id already names it (the default).
    async fn cluster_region(&self, _cluster: &ClusterRef) -> Result<Option<String>, CloudError> {
        Ok(None)
    }

    /// How many nodes of `group` are up, by the cloud's own count (EKS: its running EC2
    /// instances; AKS: the agent pool's `count` once it has `Succeeded`; GKE: the
    /// instances of its managed instance groups with no action pending); `Ok(None)` where
    /// the cloud gives no count (the default).
    async fn nodes_up(
        &self,
        _cluster: &ClusterRef,
        _group: &NodeGroup,
    ) -> Result<Option<u32>, CloudError> {
        Ok(None)
    }

    /// The names of every group in `cluster` (for import, which must find a pool's
    /// groups); [`CloudError::NotFound`] when the cluster does not exist.
    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError>;

    /// Starts deleting a group; [`CloudError::NotFound`] when it is already gone.
    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError>;

    /// Polls (through [`super::poll::until`]) until the group is `Active` (returns it) or gone
    /// (returns `None`), failing with a typed error on a failed state and
    /// [`CloudError::Timeout`] after `timeout`.
    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError>;

    /// Waits for this process's turn to change `cluster` where the cloud runs one group
    /// operation per cluster ([`CloudTraits::serial_operations`]; [`super::turns`]); the turn
    /// lasts until the returned [`Turn`] is dropped. Reads never need one. Default: at
    /// once, for clouds that run operations on different groups in parallel.
    async fn take_turn(&self, _cluster: &ClusterRef) -> Result<Turn, CloudError> {
        Ok(Turn::free())
    }

    /// Sleeps `pause` on this adapter's clock before a change the cloud refused as busy
    /// ([`CloudError::Busy`]) is sent again; [`CloudError::Cancelled`] when the provider
    /// is asked to stop meanwhile.
    async fn pause(&self, pause: Duration) -> Result<(), CloudError>;

    /// This adapter's clock: time since its origin as its waits and timeouts count it
    /// (the test-only time scale applied, [`crate::pace`]; virtual in the fake).
    fn now(&self) -> Duration;
}
