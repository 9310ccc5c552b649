//! How a [`NodePoolSpec`] maps onto one cloud's node groups: an on-demand group holding
//! the floor and a spot group above it, named legally on that cloud, with the labels every
//! pool sets, the GPU taint (where the cloud does not add it itself), the tags and the
//! ownership marker, and the [`NodeClass`] the caller chose.
//!
//! Each cloud's driver says how its groups are named (`GroupNaming` in its rules):
//!
//! | naming (cloud) | generation 0 | later generations | machine types per group |
//! |---|---|---|---|
//! | suffixed (EKS) | `<name>-od`, `<name>-spot` | `<name>-spot-k3x9` | up to 3 |
//! | opaque (AKS) | `go` / `gs` + 10 of a hash of the name | the hash also covers the shape | 1 |
//! | slugged (GKE) | `<slug>-od`, `<slug>-spot` (slug ≤ 30) | `<slug>-spot-k3x9` | 1 |
//!
//! AKS pool names are opaque (12 lowercase letters and digits leave no room for the pool's
//! name); which pool a group belongs to is its ownership tag, on every cloud.

use std::collections::{BTreeMap, BTreeSet};

use super::choose::{ChosenType, by_on_demand_price, by_spot_price};
use super::spec::{
    LABEL_CAPACITY_TYPE, LABEL_CLOUD, LABEL_MODEL, LABEL_POOL, LABEL_PRICE, LABEL_PRICE_AS_OF,
    LABEL_PRICE_SOURCE, LABEL_PRICED_AS, NodePoolSpec, gpu_taint,
};
use super::stable_hash::fnv1a;
use crate::cost::{PricedAs, priced_as};
use crate::model::{CapacityType, GroupSpec, NodeClass, Scaling};
use crate::offer::Cloud;
use crate::seam::traits::GroupNaming;

/// Suffix of the on-demand group's name (EKS, GKE).
pub const ON_DEMAND_SUFFIX: &str = "-od";
/// Suffix of the spot group's name (EKS, GKE).
pub const SPOT_SUFFIX: &str = "-spot";
/// Characters of a generation suffix (`-` + 4 of `[0-9a-z]`) of suffixed names.
pub const GENERATION_LEN: usize = 4;

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
/// without spot, one on-demand group with the pool's counts. The same on every cloud.
pub fn split(spec: &NodePoolSpec) -> Split {
    split_counts(
        spec.capacity.spot,
        spec.min_nodes,
        spec.max_nodes,
        spec.capacity.on_demand_min,
        spec.desired_nodes,
    )
}

/// [`split`] of bare counts: `spot` or not, `min`/`max` nodes, the on-demand floor `odm`
/// (capped at `max`) and the desired count, if managed (for reading a pool back from its
/// groups, where no spec exists yet).
pub fn split_counts(spot: bool, min: u32, max: u32, odm: u32, desired: Option<u32>) -> Split {
    if !spot {
        return Split {
            on_demand: Some(Scaling { min, max, desired }),
            spot: None,
        };
    }
    let od = odm.min(max);
    let on_demand = (od > 0).then_some(Scaling {
        min: od,
        max: od,
        desired: Some(od),
    });
    let (smin, smax) = (min.saturating_sub(od), max - od);
    let spot = (smax > 0).then(|| Scaling {
        min: smin,
        max: smax,
        desired: desired.map(|d| d.saturating_sub(od).clamp(smin, smax)),
    });
    Split { on_demand, spot }
}

/// The groups of `spec` over `types` (chosen or pinned, spot order) on `spec.cloud`, with
/// `class` (on AWS its AMI type is set from the pool's `driver`) and `default_tags` from
/// the provider under the pool's own tags. Names are generation 0; see
/// [`super::generation::name_generations`].
pub fn groups(
    spec: &NodePoolSpec,
    types: &[ChosenType],
    class: &NodeClass,
    default_tags: &BTreeMap<String, String>,
) -> Vec<GroupSpec> {
    let s = split(spec);
    let per_group = crate::registry::node_group_rules(spec.cloud)
        .map_or(usize::MAX, |t| t.machine_types_per_group);
    let names = |v: &[ChosenType]| -> Vec<String> {
        v.iter()
            .take(per_group)
            .map(|t| t.instance_type.clone())
            .collect()
    };
    let mut out = Vec::new();
    if let Some(scaling) = s.on_demand {
        let od_types = names(&by_on_demand_price(types));
        out.push(group(
            spec,
            CapacityType::OnDemand,
            od_types,
            scaling,
            class,
            default_tags,
            priced_as(types, CapacityType::OnDemand),
        ));
    }
    if let Some(scaling) = s.spot {
        // Where the group takes fewer types than were chosen or pinned (AKS, GKE: one), it
        // takes the cheapest on spot: the one the cost preview prices its nodes at, and the
        // same whatever order pinned types are written in.
        let spot_types = if types.len() > per_group {
            names(&by_spot_price(types))
        } else {
            names(types)
        };
        out.push(group(
            spec,
            CapacityType::Spot,
            spot_types,
            scaling,
            class,
            default_tags,
            priced_as(types, CapacityType::Spot),
        ));
    }
    out
}

/// The generation-0 name of pool `pool`'s group of `capacity` on `cloud` (a pool's
/// on-demand floor and reserved capacity share the on-demand group).
pub fn base_name(cloud: Cloud, pool: &str, capacity: CapacityType) -> String {
    let spot = capacity == CapacityType::Spot;
    match naming(cloud) {
        GroupNaming::Opaque { hash_len } => opaque_name(spot, pool, hash_len),
        GroupNaming::Slugged { len } => format!("{}{}", slug(pool, len), suffix(spot)),
        GroupNaming::Suffixed => format!("{pool}{}", suffix(spot)),
    }
}

/// How `cloud` names groups (its driver's rules; suffixed for a cloud without node groups,
/// which validation refuses before any layout).
fn naming(cloud: Cloud) -> GroupNaming {
    crate::registry::node_group_rules(cloud).map_or(GroupNaming::Suffixed, |r| r.naming)
}

/// The name of a later generation of `base` (a [`base_name`]) whose fixed fields print
/// as `fingerprint`, salted until it is not in `taken`.
pub fn generation_name(
    cloud: Cloud,
    pool: &str,
    base: &str,
    fingerprint: &str,
    taken: &BTreeSet<String>,
) -> String {
    (0u32..)
        .map(|salt| {
            let seed = if salt == 0 {
                fingerprint.to_string()
            } else {
                format!("{fingerprint}#{salt}")
            };
            match naming(cloud) {
                GroupNaming::Opaque { hash_len } => {
                    let role = &base[..2];
                    format!(
                        "{role}{}",
                        base36(fnv1a(&format!("{pool}|{seed}")), hash_len)
                    )
                }
                _ => format!("{base}-{}", base36(fnv1a(&seed), GENERATION_LEN)),
            }
        })
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| base.to_string())
}

/// Whether `name` may be one of pool `pool`'s groups on `cloud`, by its shape alone:
/// suffixed names `<name>-od|spot` with or without a generation; opaque names any name of
/// the opaque shape (the ownership tag then decides).
pub fn may_be_group_of(cloud: Cloud, pool: &str, name: &str) -> bool {
    match naming(cloud) {
        GroupNaming::Opaque { hash_len } => {
            name.len() == 2 + hash_len
                && (name.starts_with("go") || name.starts_with("gs"))
                && crate::registry::node_group_rules(cloud).is_some_and(|r| r.name_ok(name))
        }
        GroupNaming::Slugged { len } => suffixed(&slug(pool, len), name),
        GroupNaming::Suffixed => suffixed(pool, name),
    }
}

fn suffixed(base: &str, name: &str) -> bool {
    let Some(rest) = name.strip_prefix(base) else {
        return false;
    };
    let Some(rest) = rest
        .strip_prefix(ON_DEMAND_SUFFIX)
        .or_else(|| rest.strip_prefix(SPOT_SUFFIX))
    else {
        return false;
    };
    rest.is_empty()
        || rest.strip_prefix('-').is_some_and(|s| {
            s.len() == GENERATION_LEN
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        })
}

fn suffix(spot: bool) -> &'static str {
    if spot { SPOT_SUFFIX } else { ON_DEMAND_SUFFIX }
}

/// `g` + `o`/`s` + 10 base-36 characters of a hash of the pool's name.
fn opaque_name(spot: bool, pool: &str, hash_len: usize) -> String {
    let role = if spot { 's' } else { 'o' };
    format!("g{role}{}", base36(fnv1a(pool), hash_len))
}

/// A pool name as a slug: lower case, `[a-z0-9-]`, starting with a letter, at most `len`
/// characters, no trailing `-`.
fn slug(pool: &str, len: usize) -> String {
    let mut s: String = pool
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s.insert(0, 'p');
    }
    s.truncate(len);
    s.trim_end_matches('-').to_string()
}

fn base36(mut n: u64, len: usize) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = vec![b'0'; len];
    for slot in out.iter_mut().rev() {
        *slot = digits[(n % 36) as usize];
        n /= 36;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// `class` as a group of `capacity` carries it: a reservation (GKE reservation affinity,
/// EC2 capacity reservation or block, AKS capacity reservation group) covers the floor
/// only, so a spot group has none; an AKS spot pool deallocates evicted VMs when the pool
/// keeps reclaimed ones (`keeps_reclaimed`). Plan and apply read prior groups through it
/// too, so what they compare is what the layout writes.
pub fn class_for_capacity(
    class: &NodeClass,
    capacity: CapacityType,
    keeps_reclaimed: bool,
) -> NodeClass {
    let spot = capacity == CapacityType::Spot;
    let mut c = class.clone();
    match &mut c {
        NodeClass::Aws(a) if spot => a.capacity_reservation = None,
        NodeClass::Gcp(g) if spot => g.reservation = None,
        NodeClass::Azure(a) => {
            a.deallocate_evicted = spot && keeps_reclaimed;
            if spot {
                a.capacity_reservation_group = None;
            }
        }
        _ => {}
    }
    c
}

/// The price labels of nodes priced at `p`: what cost tools read instead of their own,
/// possibly lagging, price feed.
pub fn price_labels(p: &PricedAs) -> [(String, String); 4] {
    let origin = &p.row.origin;
    [
        (LABEL_PRICE.into(), price_value(p.row.usd_per_hour)),
        (
            LABEL_PRICED_AS.into(),
            if p.spot_price { "spot" } else { "on-demand" }.into(),
        ),
        (LABEL_PRICE_SOURCE.into(), label_slug(&origin.source)),
        (
            LABEL_PRICE_AS_OF.into(),
            origin
                .as_of
                .as_deref()
                .map_or_else(|| "undated".into(), label_slug),
        ),
    ]
}

/// A price as a label value: at most 6 decimals, no trailing zeros (`55.04`, `0.3106`).
fn price_value(usd: f64) -> String {
    let s = format!("{usd:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Free text as a Kubernetes label value: runs of other characters become `_`, starting
/// and ending with a letter or digit (`unknown` when none is left), at most 63 characters.
/// A longer text keeps its first 54 and a `-` and 8 hex digits of a stable hash of the
/// whole text, so two long texts that share a beginning never read as one; the full text
/// stays in the resource's attributes.
pub fn label_slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let cleaned = out.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if cleaned.is_empty() {
        return "unknown".into();
    }
    if cleaned.len() <= 63 {
        return cleaned.to_string();
    }
    let head = cleaned[..54].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    format!("{head}-{:08x}", super::stable_hash::fnv1a(text) as u32)
}

/// One group with the pool's labels, taints, tags and ownership marker.
fn group(
    spec: &NodePoolSpec,
    capacity: CapacityType,
    machine_types: Vec<String>,
    scaling: Scaling,
    class: &NodeClass,
    default_tags: &BTreeMap<String, String>,
    price: Option<PricedAs>,
) -> GroupSpec {
    let mut labels = spec.labels.clone();
    labels.insert(LABEL_CLOUD.into(), spec.cloud.to_string());
    labels.insert(LABEL_MODEL.into(), spec.gpu.name.into());
    labels.insert(LABEL_CAPACITY_TYPE.into(), capacity.label_value().into());
    labels.insert(LABEL_POOL.into(), spec.name.clone());
    if let Some(p) = &price {
        labels.extend(price_labels(p));
    }
    // GKE taints GPU nodes itself (and strips the taint from what it reports).
    let mut taints = if matches!(class, NodeClass::Gcp(_)) {
        Vec::new()
    } else {
        vec![gpu_taint()]
    };
    taints.extend(spec.taints.iter().cloned());
    taints.sort();
    taints.dedup();
    let mut tags = default_tags.clone();
    tags.extend(spec.tags.clone());
    if let Some(t) = crate::registry::node_group_rules(spec.cloud) {
        tags.insert(t.ownership_tag.into(), t.marker_value(&spec.name));
    } else {
        tags.insert(LABEL_POOL.into(), spec.name.clone());
    }
    let keeps_reclaimed = spec.reclaim == crate::pool::Reclaim::Stop;
    let class = match class_for_capacity(class, capacity, keeps_reclaimed) {
        NodeClass::Aws(c) => NodeClass::Aws(crate::model::AwsClass {
            ami_type: crate::registry::node_group_rules(spec.cloud)
                .and_then(|r| r.image_of(spec.driver))
                .unwrap_or_default()
                .into(),
            ..c
        }),
        NodeClass::Gcp(c) => NodeClass::Gcp(crate::model::GcpClass {
            accelerator_type: machine_types
                .first()
                .and_then(|m| crate::gpu::gke_accelerator(spec.gpu, m))
                .map(str::to_string),
            accelerator_count: spec.gpu_count,
            ..c
        }),
        azure => azure,
    };
    GroupSpec {
        name: base_name(spec.cloud, &spec.name, capacity),
        capacity,
        machine_types,
        scaling,
        labels,
        taints,
        tags,
        class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_legal_on_each_cloud_for_any_pool_name() {
        for pool in ["train", "Train_Big.v2", "9lives", &"x".repeat(53)] {
            for cloud in [Cloud::Aws, Cloud::Azure, Cloud::Gcp] {
                let t = crate::registry::node_group_rules(cloud).unwrap();
                for cap in [CapacityType::OnDemand, CapacityType::Spot] {
                    let base = base_name(cloud, pool, cap);
                    let next = generation_name(cloud, pool, &base, "fp", &BTreeSet::new());
                    if cloud == Cloud::Aws && !t.name_ok(&next) {
                        // EKS pool names are validated to leave room (53 characters).
                        assert!(pool.len() > 53 || pool.contains('.'), "{pool}");
                        continue;
                    }
                    assert!(t.name_ok(&base), "{cloud} {base}");
                    assert!(t.name_ok(&next), "{cloud} {next}");
                    assert_ne!(base, next);
                    assert!(may_be_group_of(cloud, pool, &base), "{cloud} {base}");
                    assert!(may_be_group_of(cloud, pool, &next), "{cloud} {next}");
                }
            }
        }
    }

    #[test]
    fn aks_names_are_opaque_but_stable_and_differ_by_role_and_pool() {
        let a = base_name(Cloud::Azure, "train", CapacityType::Spot);
        assert_eq!(a, base_name(Cloud::Azure, "train", CapacityType::Spot));
        assert!(a.starts_with("gs") && a.len() == 12, "{a}");
        assert_ne!(a, base_name(Cloud::Azure, "train2", CapacityType::Spot));
        assert!(base_name(Cloud::Azure, "train", CapacityType::OnDemand).starts_with("go"));
        assert!(!may_be_group_of(Cloud::Azure, "train", "nodepool1"));
    }

    #[test]
    fn gke_slugs_are_lowercase_and_short() {
        assert_eq!(
            base_name(Cloud::Gcp, "Train_Big", CapacityType::Spot),
            "train-big-spot"
        );
        assert_eq!(
            base_name(Cloud::Gcp, "9lives", CapacityType::OnDemand),
            "p9lives-od"
        );
        let long = base_name(Cloud::Gcp, &"a".repeat(53), CapacityType::Spot);
        assert!(long.len() <= 40 - 1 - GENERATION_LEN, "{long}");
        assert!(!may_be_group_of(Cloud::Gcp, "train", "training-od"));
    }

    #[test]
    fn eks_shape_recognises_only_the_pools_names() {
        assert!(may_be_group_of(Cloud::Aws, "train", "train-od"));
        assert!(may_be_group_of(Cloud::Aws, "train", "train-spot-k3x9"));
        for other in [
            "train-od2",
            "train-spot-x",
            "training-od",
            "train-gpu-abcd",
            "train-od-ABCD",
        ] {
            assert!(!may_be_group_of(Cloud::Aws, "train", other), "{other}");
        }
    }
}
