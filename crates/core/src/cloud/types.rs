//! Plain request and read-back types for node groups, independent of any cloud SDK.

use std::collections::BTreeMap;
use std::fmt;

use super::CloudError;

/// How the nodes of a group are bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapacityType {
    /// Regular on-demand instances.
    OnDemand,
    /// Spot instances, reclaimable by the cloud.
    Spot,
    /// EC2 Capacity Blocks; read back only (creating one needs a launch template).
    CapacityBlock,
}

impl CapacityType {
    /// The EKS wire name (`ON_DEMAND`, `SPOT`, `CAPACITY_BLOCK`).
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "ON_DEMAND",
            CapacityType::Spot => "SPOT",
            CapacityType::CapacityBlock => "CAPACITY_BLOCK",
        }
    }

    /// Parses the EKS wire name; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ON_DEMAND" => Some(CapacityType::OnDemand),
            "SPOT" => Some(CapacityType::Spot),
            "CAPACITY_BLOCK" => Some(CapacityType::CapacityBlock),
            _ => None,
        }
    }
}

/// The Kubernetes effect of a taint: the one type the pool model and the cloud adapters
/// share (`eks_str()` gives the EKS wire name, `parse` takes either spelling).
pub use crate::pool::spec::TaintEffect;

/// A Kubernetes taint put on every node of a group; identified by `key` and `effect`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Taint {
    /// Taint key, e.g. `nvidia.com/gpu`.
    pub key: String,
    /// Optional taint value.
    pub value: Option<String>,
    /// What the taint does to pods that do not tolerate it.
    pub effect: TaintEffect,
}

/// Node counts of a group: `min <= desired <= max`, `max >= 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scaling {
    /// Fewest nodes.
    pub min: u32,
    /// Most nodes.
    pub max: u32,
    /// Nodes wanted now.
    pub desired: u32,
}

impl Scaling {
    /// Checks the bounds EKS enforces, so a bad request fails before any call.
    pub fn validate(&self) -> Result<(), CloudError> {
        if self.max < 1 {
            return Err(CloudError::Invalid(
                "scaling: max must be at least 1".into(),
            ));
        }
        if self.min > self.max {
            return Err(CloudError::Invalid(format!(
                "scaling: min {} is above max {}",
                self.min, self.max
            )));
        }
        if self.desired < self.min || self.desired > self.max {
            return Err(CloudError::Invalid(format!(
                "scaling: desired {} is outside [{}, {}]",
                self.desired, self.min, self.max
            )));
        }
        if i32::try_from(self.max).is_err() {
            return Err(CloudError::Invalid("scaling: max is too large".into()));
        }
        Ok(())
    }
}

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
        if self.capacity_type == CapacityType::CapacityBlock {
            return Err(CloudError::Invalid(
                "CAPACITY_BLOCK node groups need a launch template, which is not supported".into(),
            ));
        }
        if self.subnets.is_empty() {
            return Err(CloudError::Invalid("at least one subnet is needed".into()));
        }
        self.scaling.validate()
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
    /// Parses the EKS wire name (`CREATING`, `ACTIVE`, ...).
    pub fn parse(s: &str) -> Self {
        match s {
            "CREATING" => NodeGroupStatus::Creating,
            "ACTIVE" => NodeGroupStatus::Active,
            "UPDATING" => NodeGroupStatus::Updating,
            "DELETING" => NodeGroupStatus::Deleting,
            "CREATE_FAILED" => NodeGroupStatus::CreateFailed,
            "DELETE_FAILED" => NodeGroupStatus::DeleteFailed,
            "DEGRADED" => NodeGroupStatus::Degraded,
            other => NodeGroupStatus::Other(other.to_string()),
        }
    }

    /// The EKS wire name.
    pub fn as_str(&self) -> &str {
        match self {
            NodeGroupStatus::Creating => "CREATING",
            NodeGroupStatus::Active => "ACTIVE",
            NodeGroupStatus::Updating => "UPDATING",
            NodeGroupStatus::Deleting => "DELETING",
            NodeGroupStatus::CreateFailed => "CREATE_FAILED",
            NodeGroupStatus::DeleteFailed => "DELETE_FAILED",
            NodeGroupStatus::Degraded => "DEGRADED",
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
