//! Plain request and read-back types for node groups, independent of any cloud SDK.

use std::collections::BTreeMap;
use std::fmt;

use super::CloudError;

pub use crate::model::{CapacityType, Scaling, Taint, TaintEffect};

/// Everything needed to create one managed node group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroupRequest {
    /// Cluster the group joins.
    pub cluster: String,
    /// Node group name, unique within the cluster.
    pub name: String,
    /// On-demand or spot.
    pub capacity_type: CapacityType,
    /// Instance types, most preferred first (spot groups may list several).
    pub instance_types: Vec<String>,
    /// AMI type as the cloud names it, e.g. `AL2023_x86_64_NVIDIA`.
    pub ami_type: String,
    /// Node counts.
    pub scaling: Scaling,
    /// Kubernetes labels on every node.
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints on every node.
    pub taints: Vec<Taint>,
    /// Cloud resource tags on the group.
    pub tags: BTreeMap<String, String>,
    /// IAM role ARN the nodes run as.
    pub node_role_arn: String,
    /// Subnet ids the nodes are placed in.
    pub subnets: Vec<String>,
    /// Idempotency token: a retried create with the same token is not a second group.
    pub client_request_token: Option<String>,
}

impl NodeGroupRequest {
    /// The checks EKS makes before anything starts, so a bad request fails without a call.
    pub fn validate(&self) -> Result<(), CloudError> {
        if self.cluster.is_empty() || self.name.is_empty() {
            return Err(CloudError::Invalid(
                "cluster and name must not be empty".into(),
            ));
        }
        if self.instance_types.is_empty() {
            return Err(CloudError::Invalid(
                "at least one instance type is needed".into(),
            ));
        }
        if self.capacity_type == CapacityType::Reserved {
            return Err(CloudError::Invalid(
                "node groups on reserved capacity (capacity blocks) are not supported".into(),
            ));
        }
        if self.subnets.is_empty() {
            return Err(CloudError::Invalid("at least one subnet is needed".into()));
        }
        self.scaling.check().map_err(CloudError::Invalid)
    }
}

/// In-place changes to a node group; empty fields change nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeGroupUpdate {
    /// New node counts.
    pub scaling: Option<Scaling>,
    /// Labels to add or overwrite.
    pub labels_add: BTreeMap<String, String>,
    /// Label keys to remove.
    pub labels_remove: Vec<String>,
    /// Taints to add or overwrite (matched on key and effect).
    pub taints_add: Vec<Taint>,
    /// Taints to remove (matched on key and effect).
    pub taints_remove: Vec<Taint>,
}

impl NodeGroupUpdate {
    /// True when the update would change nothing.
    pub fn is_empty(&self) -> bool {
        self.scaling.is_none()
            && self.labels_add.is_empty()
            && self.labels_remove.is_empty()
            && self.taints_add.is_empty()
            && self.taints_remove.is_empty()
    }
}

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

/// A node group as read back from the cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroup {
    /// Cluster the group belongs to.
    pub cluster: String,
    /// Node group name.
    pub name: String,
    /// Cloud resource id (ARN on AWS).
    pub arn: String,
    /// Lifecycle state.
    pub status: NodeGroupStatus,
    /// On-demand, spot or capacity block.
    pub capacity_type: CapacityType,
    /// Instance types.
    pub instance_types: Vec<String>,
    /// AMI type.
    pub ami_type: String,
    /// Node counts.
    pub scaling: Scaling,
    /// Kubernetes labels.
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints.
    pub taints: Vec<Taint>,
    /// Cloud resource tags.
    pub tags: BTreeMap<String, String>,
    /// IAM role ARN of the nodes.
    pub node_role_arn: String,
    /// Subnet ids.
    pub subnets: Vec<String>,
    /// Kubernetes version the nodes run, when reported.
    pub kubernetes_version: Option<String>,
    /// Health issues, empty when healthy.
    pub health: Vec<HealthIssue>,
}

/// The steady state [`super::NodeGroups::wait_until`] waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitTarget {
    /// The group exists and is `Active`.
    Active,
    /// The group no longer exists.
    Deleted,
}
