//! A cloud node group as this crate describes it: what a pool maps to and what is read back.

use std::collections::BTreeMap;

pub use crate::model::{CapacityType, Scaling, Taint};

/// One node group: a single capacity type, a set of instance types and a node image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroupSpec {
    /// The group's name on the cloud.
    pub name: String,
    /// On-demand or spot.
    pub capacity_type: CapacityType,
    /// Instance types, in launch priority order for on-demand groups.
    pub instance_types: Vec<String>,
    /// The node image type (EKS `amiType`, e.g. `AL2023_x86_64_NVIDIA`).
    pub ami_type: String,
    /// Node counts.
    pub scaling: Scaling,
    /// Kubernetes labels on every node.
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints on every node, sorted.
    pub taints: Vec<Taint>,
    /// Cloud resource tags.
    pub tags: BTreeMap<String, String>,
}
