//! Node groups on a cloud: one small async trait ([`NodeGroups`]), plain request and
//! read-back types, typed errors, an in-memory [`fake`] and the EKS adapter [`aws`].
//!
//! The trait is Karpenter-sized on purpose: create, describe, update the mutable config
//! and the tags, delete, wait for a steady state, and read the cluster's subnets. Mapping a cloud-neutral pool onto these node
//! groups is the caller's job.

pub mod cluster;
pub mod error;
pub mod fake;
pub mod poll;
pub mod types;

#[cfg(feature = "aws")]
pub mod aws;

use std::collections::BTreeMap;
use std::time::Duration;

pub use cluster::{BadClusterRef, ClusterRef};
pub use error::CloudError;
pub use types::{
    CapacityType, HealthIssue, NodeGroup, NodeGroupRequest, NodeGroupStatus, NodeGroupUpdate,
    Scaling, Taint, TaintEffect, WaitTarget,
};

/// Create, read, update and delete of managed node groups in one cloud account.
///
/// Implementations must be cheap to share (`Send + Sync`); every method is one logical
/// call (the adapter may retry throttling inside it).
#[async_trait::async_trait]
pub trait NodeGroups: Send + Sync {
    /// Starts creating a node group and returns it as the cloud first reports it
    /// (usually `Creating`). A name already taken gives [`CloudError::Conflict`].
    async fn create_node_group(&self, req: &NodeGroupRequest) -> Result<NodeGroup, CloudError>;

    /// Reads a node group; `Ok(None)` when it (or its cluster) does not exist.
    async fn describe_node_group(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError>;

    /// Changes scaling, labels and taints in place; fields left empty are not touched.
    async fn update_node_group_config(
        &self,
        cluster: &str,
        name: &str,
        update: &NodeGroupUpdate,
    ) -> Result<(), CloudError>;

    /// Adds or overwrites the `add` tags and removes the `remove` keys on the node group
    /// with cloud id `arn` (tags are not part of the config update on EKS).
    async fn tag_node_group(
        &self,
        arn: &str,
        add: &BTreeMap<String, String>,
        remove: &[String],
    ) -> Result<(), CloudError>;

    /// The subnet ids the cluster was created with, where node groups go by default;
    /// [`CloudError::NotFound`] when the cluster does not exist.
    async fn cluster_subnets(&self, cluster: &str) -> Result<Vec<String>, CloudError>;

    /// The names of every node group in `cluster` (for import, which must find a pool's
    /// groups by name pattern); [`CloudError::NotFound`] when the cluster does not exist.
    async fn list_node_groups(&self, cluster: &str) -> Result<Vec<String>, CloudError>;

    /// Starts deleting a node group; [`CloudError::NotFound`] when it is already gone.
    async fn delete_node_group(&self, cluster: &str, name: &str) -> Result<(), CloudError>;

    /// Polls until the group is `Active` (returns it) or gone (returns `None`), failing
    /// with a typed error on a failed state and [`CloudError::Timeout`] after `timeout`.
    async fn wait_until(
        &self,
        cluster: &str,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError>;
}
