//! The typed, validated description of a GPU node pool, independent of any cloud.

use std::collections::BTreeMap;

use crate::gpu::GpuModel;
pub use crate::model::DriverPolicy;
pub use crate::model::{Taint, TaintEffect};
use crate::offer::Cloud;

/// How many instance types a pool spreads spot capacity over when it chooses them itself.
pub const DEFAULT_INSTANCE_TYPE_COUNT: usize = 3;

/// Label prefix reserved for the labels every pool sets on its nodes.
pub const RESERVED_LABEL_PREFIX: &str = "gpu.tf/";
/// Label naming the cloud of a node (`aws`, `azure`, `gcp`).
pub const LABEL_CLOUD: &str = "gpu.tf/cloud";
/// Label naming the GPU model of a node (`H100`).
pub const LABEL_MODEL: &str = "gpu.tf/model";
/// Label naming a node's capacity type (`on-demand` or `spot`).
pub const LABEL_CAPACITY_TYPE: &str = "gpu.tf/capacity-type";
/// Label (and tag) naming the pool a node belongs to.
pub const LABEL_POOL: &str = "gpu.tf/pool";
/// Label: the USD per node-hour the pool's cost preview used for this node (`55.04`).
pub const LABEL_PRICE: &str = "gpu.tf/price-usd-per-hour";
/// Label: which price that is, `spot` or `on-demand` (spot nodes without a spot price
/// are priced at on-demand, an upper bound).
pub const LABEL_PRICED_AS: &str = "gpu.tf/priced-as";
/// Label: the price's source, as a label value (`aws_karpenter-provider-aws_1d927085_…`).
pub const LABEL_PRICE_SOURCE: &str = "gpu.tf/price-source";
/// Label: the price's date (`2026-07-20`), or `undated`.
pub const LABEL_PRICE_AS_OF: &str = "gpu.tf/price-as-of";

/// A GPU node pool: what the user asked for, checked (see [`super::NodePoolConfig::validate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NodePoolSpec {
    /// The cloud the pool runs on.
    pub cloud: Cloud,
    /// The region, as the cloud spells it.
    pub region: String,
    /// The Kubernetes cluster the nodes join.
    pub cluster: String,
    /// The pool's name; node group names derive from it.
    pub name: String,
    /// The GPU model of every node.
    pub gpu: &'static GpuModel,
    /// GPUs per node.
    pub gpu_count: u32,
    /// Instance types the user pinned; empty means "choose from the catalog".
    pub instance_types: Vec<String>,
    /// Fewest nodes.
    pub min_nodes: u32,
    /// Most nodes.
    pub max_nodes: u32,
    /// Nodes wanted now; `None` leaves the count to the autoscaler.
    pub desired_nodes: Option<u32>,
    /// Spot or on-demand, and the on-demand floor.
    pub capacity: CapacitySpec,
    /// What happens to a reclaimed spot VM.
    pub reclaim: Reclaim,
    /// Which node image (and so which GPU driver) nodes boot.
    pub driver: DriverPolicy,
    /// Kubernetes labels the user adds to every node.
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints the user adds to every node.
    pub taints: Vec<Taint>,
    /// Cloud resource tags.
    pub tags: BTreeMap<String, String>,
    /// The commitment the on-demand floor runs on, if any.
    pub reservation: Option<PoolReservation>,
}

/// On-demand nodes always kept: `on_demand_min` (at most `max`) with spot, else `min`.
pub(crate) fn on_demand_floor(spot: bool, on_demand_min: u32, min: u32, max: u32) -> u32 {
    if spot { on_demand_min.min(max) } else { min }
}

/// The commitment a pool's on-demand floor consumes, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolReservation {
    /// The commitment's id in its cloud; `None` while unknown (bought in the same apply).
    pub commitment_id: Option<String>,
    /// Its kind, of the pool's cloud.
    pub kind: crate::commitment::CommitmentKind,
    /// Its price per GPU-hour; `None` while unknown.
    pub usd_per_gpu_hour: Option<f64>,
}

impl PoolReservation {
    /// The Compute Engine reservation GKE nodes name in their reservation affinity: a
    /// `gcp_reservation` is one; a `gcp_commitment` holds the one the provider attached
    /// to it, `<name>-r`. `None` for other kinds or while the id is unknown.
    pub fn gke_reservation_name(&self) -> Option<String> {
        use crate::commitment::CommitmentKind::{GcpCommitment, GcpReservation};
        let id = self.commitment_id.as_deref()?.trim().to_ascii_lowercase();
        match self.kind {
            GcpReservation => Some(id),
            GcpCommitment => Some(format!("{id}-r")),
            _ => None,
        }
    }

    /// The capacity reservation group AKS places the floor in: the group holding an
    /// `azure_capacity_reservation` (its id up to `/capacityReservations/`), in lower
    /// case. `None` for other kinds or while the id is unknown.
    pub fn aks_capacity_reservation_group(&self) -> Option<String> {
        if self.kind != crate::commitment::CommitmentKind::AzureCapacityReservation {
            return None;
        }
        let id = self.commitment_id.as_deref()?.trim().to_ascii_lowercase();
        let at = id.find("/capacityreservations/")?;
        Some(id[..at].to_string())
    }
}

impl NodePoolSpec {
    /// On-demand nodes that are always kept: `on_demand_min` with spot, else `min_nodes`.
    pub fn on_demand_floor(&self) -> u32 {
        on_demand_floor(
            self.capacity.spot,
            self.capacity.on_demand_min,
            self.min_nodes,
            self.max_nodes,
        )
    }

    /// How the pool's nodes divide between on-demand and spot, at the floor and the ceiling.
    pub fn node_counts(&self) -> NodeCounts {
        if !self.capacity.spot {
            return NodeCounts {
                on_demand_min: self.min_nodes,
                on_demand_max: self.max_nodes,
                spot_min: 0,
                spot_max: 0,
            };
        }
        let od = self.on_demand_floor();
        NodeCounts {
            on_demand_min: od,
            on_demand_max: od,
            spot_min: self.min_nodes.saturating_sub(od),
            spot_max: self.max_nodes - od,
        }
    }
}

/// On-demand and spot node counts of a pool at `min_nodes` and at `max_nodes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeCounts {
    /// On-demand nodes at the floor.
    pub on_demand_min: u32,
    /// On-demand nodes at the ceiling.
    pub on_demand_max: u32,
    /// Spot nodes at the floor.
    pub spot_min: u32,
    /// Spot nodes at the ceiling.
    pub spot_max: u32,
}

/// The capacity mix of a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CapacitySpec {
    /// Whether nodes above the on-demand floor are spot.
    pub spot: bool,
    /// On-demand nodes always kept (only meaningful with `spot`).
    pub on_demand_min: u32,
}

/// What happens to a spot VM the cloud reclaims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reclaim {
    /// The VM and its disks are deleted (every cloud).
    #[default]
    Delete,
    /// The VM is stopped (deallocated) and its disks kept, where the cloud can.
    Stop,
}

impl Reclaim {
    /// The spelling in configuration: `delete` or `stop`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reclaim::Delete => "delete",
            Reclaim::Stop => "stop",
        }
    }

    /// Parses `delete` / `stop`, case-insensitively.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "delete" => Some(Reclaim::Delete),
            "stop" => Some(Reclaim::Stop),
            _ => None,
        }
    }
}

/// The taint every GPU node carries: `nvidia.com/gpu=present:NoSchedule`.
pub fn gpu_taint() -> Taint {
    Taint {
        key: "nvidia.com/gpu".to_string(),
        value: "present".to_string(),
        effect: TaintEffect::NoSchedule,
    }
}
