//! A node pool as the user wrote it (names, numbers as given), before
//! `NodePoolConfig::validate` (in `pool::validate`) turns it into a `NodePoolSpec`.

use std::collections::BTreeMap;

/// The configuration of a node pool, unchecked; field names are the Terraform attribute names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodePoolConfig {
    /// `cloud`: `aws`, `azure` or `gcp`.
    pub cloud: String,
    /// `region`.
    pub region: String,
    /// `cluster`: the Kubernetes cluster's name.
    pub cluster: String,
    /// `name`: the pool's name.
    pub name: String,
    /// `gpu`: a GPU model name or alias.
    pub gpu: String,
    /// `gpu_count`: GPUs per node.
    pub gpu_count: i64,
    /// `instance_types`: pinned types; empty to choose from the catalog.
    pub instance_types: Vec<String>,
    /// `min_nodes`.
    pub min_nodes: i64,
    /// `max_nodes`.
    pub max_nodes: i64,
    /// `desired_nodes`, if set.
    pub desired_nodes: Option<i64>,
    /// `capacity.spot`.
    pub spot: bool,
    /// `capacity.on_demand_min`.
    pub on_demand_min: i64,
    /// `reclaim`: `delete` (default) or `stop`.
    pub reclaim: Option<String>,
    /// `driver`: `al2023_nvidia` (default) or `bottlerocket_nvidia`.
    pub driver: Option<String>,
    /// `labels`.
    pub labels: BTreeMap<String, String>,
    /// The `taint` blocks, in order.
    pub taints: Vec<TaintConfig>,
    /// `tags`.
    pub tags: BTreeMap<String, String>,
    /// The `reservation` block, if written.
    pub reservation: Option<ReservationConfig>,
}

/// The `reservation` block: the commitment the on-demand floor runs on, unchecked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReservationConfig {
    /// `commitment_id`, `None` while unknown (a commitment bought in the same apply).
    pub commitment_id: Option<String>,
    /// `kind`: the commitment's kind (`gcp_commitment`, ...).
    pub kind: String,
    /// `usd_per_gpu_hour`: the commitment's price per GPU-hour, `None` while unknown.
    pub usd_per_gpu_hour: Option<f64>,
}

/// One `taint` block, unchecked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaintConfig {
    /// `key`.
    pub key: String,
    /// `value` (empty when unset).
    pub value: String,
    /// `effect`: `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}
