//! Node groups on a cloud: one small async trait ([`NodeGroups`]) over neutral groups
//! ([`GroupSpec`] with a per-cloud [`NodeClass`]), each cloud's rules as data
//! ([`traits`]), the one in-place-or-roll decision ([`drift`]), the one wait loop
//! ([`poll`]), typed errors, an in-memory [`fake`] serving EKS, AKS and GKE rules, and the
//! EKS adapter `aws`, the AKS adapter `azure` and the GKE adapter `gcp`.
//!
//! The trait is Karpenter-sized on purpose: create, get, update to a whole desired state,
//! list, delete, wait. Mapping a pool onto groups is `pool::layout`'s job.

pub mod choke;
pub mod cluster;
pub mod delta;
pub mod drift;
pub mod error;
pub mod fake;
pub mod poll;
pub mod traits;
pub mod turns;
pub mod types;

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "azure")]
pub mod azure;
#[cfg(feature = "gcp")]
pub mod gcp;

use std::time::Duration;

pub use cluster::{BadClusterRef, ClusterRef, is_guid, is_zone_of};
pub use error::CloudError;
pub use traits::CloudTraits;
pub use turns::Turn;
pub use types::{
    AwsClass, AzureClass, CapacityType, GcpClass, GroupSpec, HealthIssue, NodeClass, NodeGroup,
    NodeGroupStatus, Scaling, Taint, TaintEffect, WaitTarget,
};

/// Create, read, update and delete of one cloud's node groups (EKS node groups, AKS agent
/// pools, GKE node pools) in clusters named by [`ClusterRef`].
///
/// Implementations must be cheap to share (`Send + Sync`); every method is one logical
/// call (the adapter may retry throttling inside it). What a group may be called and what
/// it can change in place are the adapter's: [`NodeGroups::traits`] and [`drift`].
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

    /// The names of every group in `cluster` (for import, which must find a pool's
    /// groups); [`CloudError::NotFound`] when the cluster does not exist.
    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError>;

    /// Starts deleting a group; [`CloudError::NotFound`] when it is already gone.
    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError>;

    /// Polls (through [`poll::until`]) until the group is `Active` (returns it) or gone
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
    /// operation per cluster ([`CloudTraits::serial_operations`]; [`turns`]); the turn
    /// lasts until the returned [`Turn`] is dropped. Reads never need one. Default: at
    /// once, for clouds that run operations on different groups in parallel.
    async fn take_turn(&self, _cluster: &ClusterRef) -> Result<Turn, CloudError> {
        Ok(Turn::free())
    }

    /// Sleeps `pause` on this adapter's clock before a change the cloud refused as busy
    /// ([`CloudError::Busy`]) is sent again; [`CloudError::Cancelled`] when the provider
    /// is asked to stop meanwhile.
    async fn pause(&self, pause: Duration) -> Result<(), CloudError>;
}
