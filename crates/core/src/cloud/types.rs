//! Read-back types of node groups, independent of any cloud SDK (what is asked for is a
//! [`GroupSpec`]).

use std::fmt;

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

/// The steady state [`super::NodeGroups::wait_until`] waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitTarget {
    /// The group exists and is `Active`.
    Active,
    /// The group no longer exists.
    Deleted,
}
