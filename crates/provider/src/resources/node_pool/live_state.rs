//! The `gpu_node_pool` state rebuilt from the live groups (for refresh, a failed apply and
//! import), keeping the user's spelling wherever it still describes what is live.

use std::collections::{BTreeMap, BTreeSet};

use gpu_core::catalog::Catalog;
use gpu_core::pool::spec::{LABEL_MODEL, RESERVED_LABEL_PREFIX, gpu_taint};
use gpu_core::pool::{DriverPolicy, layout, spelling};
use gpu_core::seam::{CapacityType, NodeClass, NodeGroup};
use tfplugin::Value;

use super::groups;
use super::inputs;
use super::model::{self, PoolModel};
use super::plan::set;

/// The state for `live` (the pool's groups as the cloud reports them), starting from
/// `prior`; `Value::Null` when no group exists (the pool is gone).
pub fn state_from_live(
    prior: &Value,
    live: &[NodeGroup],
    default_labels: &BTreeMap<String, String>,
    catalog: &Catalog,
) -> Value {
    if live.is_empty() {
        return Value::Null;
    }
    // One group per capacity type; mid-roll (an apply failed between creating a new
    // generation and deleting the old) the last by name, and the next apply finishes.
    let of = |c: CapacityType| {
        live.iter()
            .filter(|g| groups::capacity_of(g) == c)
            .max_by(|a, b| a.spec.name.cmp(&b.spec.name))
    };
    let (od, spot) = (of(CapacityType::OnDemand), of(CapacityType::Spot));
    let mut s = prior.clone();
    let importing = PoolModel::of(prior).gpu.is_null();
    if importing {
        fill_identity(&mut s, live, catalog);
    }
    sizes(&mut s, od, spot);
    instance_types(&mut s, od, spot, catalog);
    driver(&mut s, live);
    reclaim(&mut s, spot);
    labels(&mut s, live);
    taints(&mut s, live);
    tags(&mut s, live, default_labels);
    aws_block(&mut s, live);
    if let Some(g) = live.first() {
        super::cloud_blocks::block_from_live(&mut s, &g.spec.class, od.map(|g| &g.spec.class));
    }
    let mut ordered: Vec<NodeGroup> = live.to_vec();
    ordered.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    set(&mut s, "node_groups", groups::live(&ordered));
    s
}

/// On import: the GPU (from the `gpu.tf/model` label or the catalog), its count per node
/// (from the catalog), and the capacity block (spot when a spot group exists).
fn fill_identity(s: &mut Value, live: &[NodeGroup], catalog: &Catalog) {
    let region = model::text(&PoolModel::of(s).region);
    let first_type = live
        .iter()
        .flat_map(|g| g.spec.machine_types.first())
        .next();
    let row = first_type.and_then(|t| {
        catalog
            .offers()
            .iter()
            .find(|o| o.instance_type == *t && (o.region == region || region.is_empty()))
    });
    let model = live
        .iter()
        .find_map(|g| g.spec.labels.get(LABEL_MODEL).cloned())
        .or_else(|| row.map(|o| o.gpu.name.to_string()));
    set(s, "gpu", model.map_or(Value::Null, Value::string));
    let count = row
        .and_then(|o| o.gpu_count)
        .filter(|n| n.fract() == 0.0)
        .map_or(Value::Null, |n| Value::number(n as i64));
    set(s, "gpu_count", count);
    let has_spot = live.iter().any(|g| g.spec.capacity == CapacityType::Spot);
    if has_spot {
        let odm = live
            .iter()
            .find(|g| g.spec.capacity == CapacityType::OnDemand)
            .map_or(0, |g| g.spec.scaling.max);
        set(
            s,
            "capacity",
            Value::object([
                ("spot", Value::Bool(true)),
                ("on_demand_min", Value::number(odm)),
            ]),
        );
    }
    if PoolModel::of(s).taint.is_null() {
        set(s, "taint", Value::List(Vec::new()));
    }
}

/// `min_nodes`, `max_nodes`, `desired_nodes` and `capacity.on_demand_min` from the
/// groups' scaling; the prior values stay when they map onto exactly what is live.
fn sizes(s: &mut Value, od: Option<&NodeGroup>, spot: Option<&NodeGroup>) {
    let (spot_mode, prior_odm) = inputs::capacity(s);
    let live_split = |g: Option<&NodeGroup>| g.map(|g| (g.spec.scaling.min, g.spec.scaling.max));
    let (od_live, spot_live) = (live_split(od), live_split(spot));
    let pool = PoolModel::of(s);
    let prior = (
        model::int(&pool.min_nodes),
        model::int(&pool.max_nodes),
        model::int(&pool.desired_nodes),
    );
    if let (Some(min), Some(max)) = (prior.0, prior.1)
        && min >= 0
        && max >= 0
        && prior_odm >= 0
        && expected_split(spot_mode, min as u32, max as u32, prior_odm as u32)
            == (od_live, spot_live)
    {
        desired_from_live(s, od, spot, spot_mode, prior_odm as u32, prior.2);
        return;
    }
    let (min, max, odm) = if spot_mode {
        let odm = od_live.map_or(0, |(_, max)| max);
        let (smin, smax) = spot_live.unwrap_or((0, 0));
        // A spot group at min 0 fits any min_nodes up to the floor: keep the prior one,
        // or (on import) the floor, which is running anyway.
        let min = if smin == 0 {
            prior.0.map_or(odm, |p| (p.max(0) as u32).min(odm))
        } else {
            odm + smin
        };
        (min, odm + smax, odm)
    } else {
        let (min, max) = od_live.or(spot_live).unwrap_or((0, 0));
        (min, max, 0)
    };
    set(s, "min_nodes", Value::number(min));
    set(s, "max_nodes", Value::number(max));
    if spot_mode
        && i64::from(odm) != prior_odm
        && let Some(Value::Object(c)) = match s {
            Value::Object(m) => m.get_mut("capacity"),
            _ => None,
        }
    {
        c.insert("on_demand_min".into(), Value::number(odm));
    }
    desired_from_live(s, od, spot, spot_mode, odm, prior.2);
}

/// `desired_nodes` only when the user manages it: the sum of the groups' desired counts
/// (the prior value when it maps onto them).
fn desired_from_live(
    s: &mut Value,
    od: Option<&NodeGroup>,
    spot: Option<&NodeGroup>,
    spot_mode: bool,
    odm: u32,
    prior: Option<i64>,
) {
    let Some(prior) = prior else { return };
    // A group read from the cloud always has its count; `min` stands in otherwise.
    let count = |g: &NodeGroup| g.spec.scaling.desired.unwrap_or(g.spec.scaling.min);
    let od_d = od.map_or(0, count);
    let sp_d = spot.map(count);
    let maps = prior >= 0
        && if spot_mode {
            let rest = (prior as u32).saturating_sub(odm);
            od_d == odm.min(od.map_or(0, |g| g.spec.scaling.max))
                && sp_d.is_none_or(|d| {
                    let (min, max) =
                        spot.map_or((0, 0), |g| (g.spec.scaling.min, g.spec.scaling.max));
                    d == rest.clamp(min, max)
                })
        } else {
            od_d == prior as u32
        };
    if !maps {
        set(s, "desired_nodes", Value::number(od_d + sp_d.unwrap_or(0)));
    }
}

/// (min, max) of the on-demand and the spot group (None where omitted).
type GroupSizes = (Option<(u32, u32)>, Option<(u32, u32)>);

/// The group sizes a pool of these counts maps to: the layout's own split, so reading
/// back is the inverse of laying out.
fn expected_split(spot: bool, min: u32, max: u32, odm: u32) -> GroupSizes {
    let s = layout::split_counts(spot, min, max, odm, None);
    let sizes = |g: Option<gpu_core::model::Scaling>| g.map(|g| (g.min, g.max));
    (sizes(s.on_demand), sizes(s.spot))
}

/// `instance_types` from the spot group (or the on-demand one); the prior order stays
/// when the set is the same.
fn instance_types(
    s: &mut Value,
    od: Option<&NodeGroup>,
    spot: Option<&NodeGroup>,
    catalog: &Catalog,
) {
    let Some(g) = spot.or(od) else { return };
    let prior = model::strings(&PoolModel::of(s).instance_types).unwrap_or_default();
    let cloud = super::inputs::cloud_of(s);
    let rules = cloud.and_then(gpu_core::registry::node_group_rules);
    if rules.is_some_and(|t| t.machine_types_per_group == 1) {
        // One type per group (AKS, GKE): each group runs one of the chosen types, so the
        // choice stands while every live type is one of them.
        let live: Vec<String> = spot
            .iter()
            .chain(od.iter())
            .flat_map(|g| g.spec.machine_types.iter().cloned())
            .fold(Vec::new(), |mut v, t| {
                if !v.contains(&t) {
                    v.push(t);
                }
                v
            });
        let chosen = spelling::instance_type_set(catalog, cloud, &prior);
        if prior.is_empty()
            || !spelling::instance_type_set(catalog, cloud, &live).is_subset(&chosen)
        {
            set(
                s,
                "instance_types",
                Value::List(live.iter().map(Value::string).collect()),
            );
        }
        return;
    }
    // Order and letter case mean nothing to a pool: the same set keeps the user's list.
    let set_of = |v: &[String]| spelling::instance_type_set(catalog, cloud, v);
    if set_of(&prior) != set_of(&g.spec.machine_types) {
        let live = Value::List(g.spec.machine_types.iter().map(Value::string).collect());
        set(s, "instance_types", live);
    }
}

/// `driver` from the groups' AMI type (EKS only: elsewhere the driver is the cloud
/// block's); unset stays unset while it is the default.
fn driver(s: &mut Value, live: &[NodeGroup]) {
    let Some(NodeClass::Aws(class)) = live.first().map(|g| &g.spec.class) else {
        return;
    };
    let ami = class.ami_type.as_str();
    let prior = model::opt(&PoolModel::of(s).driver)
        .map_or(Some(DriverPolicy::default()), |d| spelling::driver(&d));
    let now = spelling::driver(ami);
    if prior != now {
        let v = now.map_or_else(|| ami.to_string(), |d| d.as_str().to_string());
        set(s, "driver", Value::string(v));
    }
}

/// `reclaim` from an AKS spot pool's eviction policy (`Deallocate` is `stop`); unset
/// stays unset while it means what is live.
fn reclaim(s: &mut Value, spot: Option<&NodeGroup>) {
    let Some(NodeClass::Azure(c)) = spot.map(|g| &g.spec.class) else {
        return;
    };
    let prior =
        model::opt(&PoolModel::of(s).reclaim).and_then(|r| gpu_core::pool::Reclaim::parse(&r));
    let live = if c.deallocate_evicted {
        gpu_core::pool::Reclaim::Stop
    } else {
        gpu_core::pool::Reclaim::Delete
    };
    if prior.unwrap_or(gpu_core::pool::Reclaim::Delete) != live {
        set(s, "reclaim", Value::string(live.as_str()));
    }
}

/// The user's labels: live labels without the reserved `gpu.tf/` ones; the first group
/// that differs from the prior shows the drift.
fn labels(s: &mut Value, live: &[NodeGroup]) {
    let prior = model::string_map(&PoolModel::of(s).labels);
    for g in live {
        let user: BTreeMap<String, String> = g
            .spec
            .labels
            .iter()
            .filter(|(k, _)| !k.starts_with(RESERVED_LABEL_PREFIX))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if user != prior {
            set(s, "labels", map_or_null(&user));
            return;
        }
    }
}

/// The user's taints: live taints without the NVIDIA one; prior order kept when equal.
fn taints(s: &mut Value, live: &[NodeGroup]) {
    let nvidia = gpu_taint();
    let prior: BTreeSet<(String, String, String)> = PoolModel::of(s)
        .taint
        .into_known()
        .unwrap_or_default()
        .into_iter()
        .map(|t| {
            let t = t.into_known().unwrap_or_default();
            let effect = model::text(&t.effect);
            let effect = gpu_core::pool::TaintEffect::parse(&effect)
                .map_or(effect, |e| e.as_str().to_string());
            (model::text(&t.key), model::text(&t.value), effect)
        })
        .collect();
    for g in live {
        let user: BTreeSet<(String, String, String)> = g
            .spec
            .taints
            .iter()
            .filter(|t| !(t.key == nvidia.key && t.effect == nvidia.effect))
            .map(|t| {
                (
                    t.key.clone(),
                    t.value.clone(),
                    t.effect.as_str().to_string(),
                )
            })
            .collect();
        if user != prior {
            let list = user
                .into_iter()
                .map(|(k, v, e)| {
                    Value::object([
                        ("key", Value::string(k)),
                        (
                            "value",
                            if v.is_empty() {
                                Value::Null
                            } else {
                                Value::string(v)
                            },
                        ),
                        ("effect", Value::string(e)),
                    ])
                })
                .collect();
            set(s, "taint", Value::List(list));
            return;
        }
    }
}

/// The user's tags: live tags without the ownership marker (any cloud's spelling) and
/// without the provider's `default_labels` (unless the prior `tags` set that key too).
fn tags(s: &mut Value, live: &[NodeGroup], default_labels: &BTreeMap<String, String>) {
    let prior = model::string_map(&PoolModel::of(s).tags);
    let markers: Vec<&str> = gpu_core::registry::node_group_clouds()
        .map(|t| t.ownership_tag)
        .collect();
    for g in live {
        let user: BTreeMap<String, String> = g
            .spec
            .tags
            .iter()
            .filter(|(k, _)| {
                !k.starts_with(RESERVED_LABEL_PREFIX) && !markers.contains(&k.as_str())
            })
            .filter(|(k, v)| prior.contains_key(*k) || default_labels.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if user != prior {
            set(s, "tags", map_or_null(&user));
            return;
        }
    }
}

/// `aws.node_role_arn` and `aws.subnet_ids` from the groups (EKS groups only).
fn aws_block(s: &mut Value, live: &[NodeGroup]) {
    let Some(NodeClass::Aws(g)) = live.first().map(|g| &g.spec.class) else {
        return;
    };
    let g_subnets = g.subnets.clone().unwrap_or_default();
    let prior = super::cloud_blocks::aws::settings(s);
    let subnets_same = prior.subnet_ids.as_ref().is_some_and(|p| {
        p.iter().collect::<BTreeSet<_>>() == g_subnets.iter().collect::<BTreeSet<_>>()
    });
    let subnets = if subnets_same {
        Value::List(
            prior
                .subnet_ids
                .unwrap_or_default()
                .iter()
                .map(Value::string)
                .collect(),
        )
    } else {
        Value::List(g_subnets.iter().map(Value::string).collect())
    };
    let role = if prior.node_role_arn.as_deref() == Some(g.node_role.as_str()) {
        Value::string(prior.node_role_arn.unwrap_or_default())
    } else {
        Value::string(&g.node_role)
    };
    set(
        s,
        "aws",
        Value::object([("node_role_arn", role), ("subnet_ids", subnets)]),
    );
}

/// A map value, or null when empty (so an unset attribute stays unset).
fn map_or_null(m: &BTreeMap<String, String>) -> Value {
    if m.is_empty() {
        Value::Null
    } else {
        Value::Map(
            m.iter()
                .map(|(k, v)| (k.clone(), Value::string(v)))
                .collect(),
        )
    }
}
