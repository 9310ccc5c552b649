//! How a [`NodePoolSpec`] maps onto EKS managed node groups: an on-demand group holding the
//! floor and a spot group for the rest.

use std::collections::BTreeMap;

use super::choose::{ChosenType, by_on_demand_price};
use super::group::{CapacityType, NodeGroupSpec, Scaling};
use super::spec::{
    LABEL_CAPACITY_TYPE, LABEL_CLOUD, LABEL_MODEL, LABEL_POOL, NodePoolSpec, gpu_taint,
};

/// Suffix of the on-demand group's name.
pub const ON_DEMAND_SUFFIX: &str = "-od";
/// Suffix of the spot group's name.
pub const SPOT_SUFFIX: &str = "-spot";

/// The node counts of the on-demand and spot groups (`None` where a group is omitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// The on-demand group.
    pub on_demand: Option<Scaling>,
    /// The spot group.
    pub spot: Option<Scaling>,
}

/// Splits a pool's counts: with spot, an on-demand group of exactly `on_demand_min`
/// (omitted at 0) and a spot group for the rest (omitted when it could hold no node);
/// without spot, one on-demand group with the pool's counts.
pub fn split(spec: &NodePoolSpec) -> Split {
    let n = spec.node_counts();
    if !spec.capacity.spot {
        return Split {
            on_demand: Some(Scaling {
                min: n.on_demand_min,
                max: n.on_demand_max,
                desired: spec.desired_nodes,
            }),
            spot: None,
        };
    }
    let od = n.on_demand_min;
    let on_demand = (od > 0).then_some(Scaling {
        min: od,
        max: od,
        desired: Some(od),
    });
    let (min, max) = (n.spot_min, n.spot_max);
    let spot = (max > 0).then(|| Scaling {
        min,
        max,
        desired: spec
            .desired_nodes
            .map(|d| d.saturating_sub(od).clamp(min, max)),
    });
    Split { on_demand, spot }
}

/// The EKS node groups of `spec` over `types` (chosen or pinned, spot order), with
/// `default_labels` from the provider merged under the pool's tags.
pub fn node_groups(
    spec: &NodePoolSpec,
    types: &[ChosenType],
    default_labels: &BTreeMap<String, String>,
) -> Vec<NodeGroupSpec> {
    let s = split(spec);
    let names = |v: &[ChosenType]| v.iter().map(|t| t.instance_type.clone()).collect();
    let mut out = Vec::new();
    if let Some(scaling) = s.on_demand {
        let od_types = names(&by_on_demand_price(types));
        out.push(group(
            spec,
            CapacityType::OnDemand,
            od_types,
            scaling,
            default_labels,
        ));
    }
    if let Some(scaling) = s.spot {
        out.push(group(
            spec,
            CapacityType::Spot,
            names(types),
            scaling,
            default_labels,
        ));
    }
    out
}

/// The generation-0 name of `spec`'s group of `capacity` (a pool's on-demand floor and
/// reserved capacity share the `-od` group).
pub fn group_name(spec: &NodePoolSpec, capacity: CapacityType) -> String {
    let suffix = match capacity {
        CapacityType::OnDemand | CapacityType::Reserved => ON_DEMAND_SUFFIX,
        CapacityType::Spot => SPOT_SUFFIX,
    };
    format!("{}{suffix}", spec.name)
}

/// One group with the pool's labels, taints and tags.
fn group(
    spec: &NodePoolSpec,
    capacity: CapacityType,
    instance_types: Vec<String>,
    scaling: Scaling,
    default_labels: &BTreeMap<String, String>,
) -> NodeGroupSpec {
    let mut labels = spec.labels.clone();
    labels.insert(LABEL_CLOUD.into(), spec.cloud.to_string());
    labels.insert(LABEL_MODEL.into(), spec.gpu.name.into());
    labels.insert(LABEL_CAPACITY_TYPE.into(), capacity.label_value().into());
    labels.insert(LABEL_POOL.into(), spec.name.clone());
    let mut taints = vec![gpu_taint()];
    taints.extend(spec.taints.iter().cloned());
    taints.sort();
    taints.dedup();
    let mut tags = default_labels.clone();
    tags.extend(spec.tags.clone());
    tags.insert(LABEL_POOL.into(), spec.name.clone());
    NodeGroupSpec {
        name: group_name(spec, capacity),
        capacity_type: capacity,
        instance_types,
        ami_type: spec.driver.eks_ami_type().into(),
        scaling,
        labels,
        taints,
        tags,
    }
}
