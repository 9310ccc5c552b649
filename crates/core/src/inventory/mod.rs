//! The estate: every GPU node group, VM and commitment the clouds list, as one kind of
//! [`Item`], priced from the catalog ([`price`]) and summed by group and cloud
//! ([`totals`], and by any keys: [`spend`]). Money never counts a GPU-hour twice: what runs is priced as it runs, and a
//! commitment counts only what it bills beyond what runs in it (its idle share).

pub mod items;
pub mod price;
pub mod spend;
pub mod totals;

use std::collections::BTreeMap;

use crate::offer::Cloud;

pub use items::{
    GroupPlace, commitment_import_id_of, commitment_item, instance_item, node_group_item,
};
pub use totals::{Total, totals};

/// What an inventory item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ItemKind {
    /// A Kubernetes node group (EKS node group, AKS agent pool, GKE node pool) with GPUs.
    NodePool,
    /// A GPU VM.
    Instance,
    /// A capacity commitment (block, reservation, committed use).
    Commitment,
}

impl ItemKind {
    /// Every kind, in the order items are listed.
    pub const ALL: [ItemKind; 3] = [ItemKind::NodePool, ItemKind::Instance, ItemKind::Commitment];

    /// The word a configuration writes (`node_pool`, `instance`, `commitment`).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::NodePool => "node_pool",
            ItemKind::Instance => "instance",
            ItemKind::Commitment => "commitment",
        }
    }

    /// The kind a word names (any letter case, `-` for `_`).
    pub fn parse(word: &str) -> Option<Self> {
        let w = word.trim().to_ascii_lowercase().replace('-', "_");
        ItemKind::ALL.into_iter().find(|k| k.as_str() == w)
    }
}

/// One thing in the estate, as the inventory reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Node group, VM or commitment.
    pub kind: ItemKind,
    /// Its cloud.
    pub cloud: Cloud,
    /// Its region (for zonal things too).
    pub region: String,
    /// The cluster's id, for a node group.
    pub cluster: Option<String>,
    /// The cloud's own name of it (node group, VM or reservation name; a commitment's id).
    pub name: String,
    /// Whether the provider made it (it carries the provider's marker).
    pub managed: bool,
    /// GPU model, when the catalog knows the machine type.
    pub gpu: Option<String>,
    /// GPUs per node / VM / committed instance.
    pub gpu_count: Option<u32>,
    /// Nodes running (node group), 1 (VM), or the instances a commitment reserves.
    pub nodes: u32,
    /// `on_demand`, `spot` or `reserved`.
    pub capacity: String,
    /// USD per hour as it runs now (for a commitment: its idle share), when priced.
    pub hourly_usd: Option<f64>,
    /// `hourly_usd` over 730 hours.
    pub monthly_usd: Option<f64>,
    /// Tags / labels (the provider's marker left out).
    pub labels: BTreeMap<String, String>,
    /// The id `terraform import` takes for the provider's resource, where there is one.
    pub import_id: Option<String>,
    /// Where the price came from.
    pub price_source: String,
    /// Commitments: instances running in it, when the cloud says.
    pub used_instances: Option<u32>,
    /// Commitments: share in use, 0 to 1, when the cloud says.
    pub utilization: Option<f64>,
    /// Commitments: what its unused share costs a month.
    pub idle_monthly_usd: Option<f64>,
}

/// A place the inventory could not read, and why: reported as a warning while the rest
/// goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct Unread {
    /// What was not read (`aws us-east-1 commitments`, a cluster id).
    pub what: String,
    /// The cloud's answer.
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_in_any_spelling_and_print_as_configured() {
        assert_eq!(ItemKind::parse("Node-Pool"), Some(ItemKind::NodePool));
        assert_eq!(ItemKind::parse(" commitment "), Some(ItemKind::Commitment));
        assert_eq!(ItemKind::parse("vm"), None);
        for k in ItemKind::ALL {
            assert_eq!(ItemKind::parse(k.as_str()), Some(k));
        }
    }
}
