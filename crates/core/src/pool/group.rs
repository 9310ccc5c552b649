//! A cloud node group as this crate describes it: what a pool maps to and what is read back.

use std::collections::BTreeMap;
use std::fmt;

use super::spec::Taint;

/// On-demand or spot capacity of one node group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CapacityType {
    /// Regular on-demand VMs.
    OnDemand,
    /// Spot (preemptible) VMs.
    Spot,
}

impl CapacityType {
    /// The value of the `gpu.tf/capacity-type` label: `on-demand` or `spot`.
    pub fn label_value(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "on-demand",
            CapacityType::Spot => "spot",
        }
    }

    /// The EKS `capacityType`: `ON_DEMAND` or `SPOT`.
    pub fn eks_str(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "ON_DEMAND",
            CapacityType::Spot => "SPOT",
        }
    }

    /// Parses the EKS spelling or the label value, ignoring case, `-` and `_`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.replace(['-', '_'], "").to_ascii_lowercase().as_str() {
            "ondemand" => Some(CapacityType::OnDemand),
            "spot" => Some(CapacityType::Spot),
            _ => None,
        }
    }
}

impl fmt::Display for CapacityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label_value())
    }
}

/// Node counts of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scaling {
    /// Fewest nodes.
    pub min: u32,
    /// Most nodes.
    pub max: u32,
    /// Nodes wanted now; `None` leaves the live count alone (an autoscaler owns it).
    pub desired: Option<u32>,
}

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
