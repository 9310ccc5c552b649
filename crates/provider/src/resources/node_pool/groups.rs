//! The `node_groups` attribute, cloud-neutral (schema version 1): desired groups at plan
//! time, live ones after apply and read; and the prior groups' shapes, from which plan
//! and apply decide what changes in place and what rolls.

use std::collections::BTreeMap;

use gpu_core::model::{GroupSpec, NodeClass};
use gpu_core::offer::Cloud;
use gpu_core::pool::CapacityType;
use gpu_core::pool::layout::class_for_capacity;
use gpu_core::seam::NodeGroup;
use tfplugin::{Tf, Value};

use super::model::{self, GroupModel, PoolModel};

/// One `node_groups` element: `capacity` is `on-demand` or `spot`, `image` the node image
/// (EKS AMI type, AKS OS SKU, GKE image type), `id` the cloud's id of the group (an ARN on
/// EKS).
fn element(
    name: &str,
    capacity: CapacityType,
    types: &[String],
    image: &str,
    min: u32,
    max: u32,
    id: Value,
) -> Value {
    Value::object([
        ("name", Value::string(name)),
        ("capacity", Value::string(capacity.label_value())),
        (
            "instance_types",
            Value::List(types.iter().map(Value::string).collect()),
        ),
        ("image", Value::string(image)),
        ("min_nodes", Value::number(min)),
        ("max_nodes", Value::number(max)),
        ("id", id),
    ])
}

/// The planned groups; ids come from `known_ids` (by name) or are unknown until apply.
pub fn planned(desired: &[GroupSpec], known_ids: &BTreeMap<String, String>) -> Value {
    Value::List(
        desired
            .iter()
            .map(|g| {
                let id = known_ids
                    .get(&g.name)
                    .map_or_else(Value::unknown, Value::string);
                element(
                    &g.name,
                    g.capacity,
                    &g.machine_types,
                    g.class.image(),
                    g.scaling.min,
                    g.scaling.max,
                    id,
                )
            })
            .collect(),
    )
}

/// The live groups, in the order given (capacity-block groups, which a pool never
/// creates, are listed as on-demand).
pub fn live(groups: &[NodeGroup]) -> Value {
    Value::List(
        groups
            .iter()
            .map(|g| {
                element(
                    g.name(),
                    capacity_of(g),
                    &g.spec.machine_types,
                    g.spec.class.image(),
                    g.spec.scaling.min,
                    g.spec.scaling.max,
                    Value::string(&g.id),
                )
            })
            .collect(),
    )
}

/// The pool's capacity type of a live group: its own, with reserved capacity (which a
/// pool never creates) counted as on-demand.
pub fn capacity_of(g: &NodeGroup) -> CapacityType {
    match g.spec.capacity {
        CapacityType::Reserved => CapacityType::OnDemand,
        c => c,
    }
}

/// The known `node_groups` elements of pool `pool` (config, plan or state).
fn recorded(pool: &Value) -> Vec<GroupModel> {
    PoolModel::of(pool)
        .node_groups
        .into_known()
        .unwrap_or_default()
        .into_iter()
        .filter_map(Tf::into_known)
        .collect()
}

/// Cloud ids by group name from pool `pool`'s `node_groups`.
pub fn ids(pool: &Value) -> BTreeMap<String, String> {
    recorded(pool)
        .into_iter()
        .filter_map(|g| Some((g.name.into_known()?, g.id.into_known()?)))
        .collect()
}

/// Group names from pool `pool`'s `node_groups`.
pub fn names(pool: &Value) -> Vec<String> {
    recorded(pool)
        .into_iter()
        .filter_map(|g| g.name.into_known())
        .collect()
}

/// The groups recorded in pool state `state` on `cloud`, as far as state knows them: name,
/// capacity, machine types and image, in the node class of the pool's cloud block (what
/// plan and apply compare to decide what rolls).
pub fn prior(state: &Value, cloud: Cloud) -> Vec<GroupSpec> {
    if state.is_null() {
        return Vec::new();
    }
    let Some(class) = super::cloud_blocks::node_class(state, cloud) else {
        return Vec::new();
    };
    let keeps_reclaimed = PoolModel::of(state)
        .reclaim
        .known()
        .and_then(|r| gpu_core::pool::Reclaim::parse(r))
        == Some(gpu_core::pool::Reclaim::Stop);
    recorded(state)
        .into_iter()
        .filter_map(|g| {
            let name = g.name.into_known()?;
            let capacity = CapacityType::parse(g.capacity.known()?)?;
            let machine_types = model::strings(&g.instance_types).unwrap_or_default();
            let image = g.image.into_known()?;
            Some(GroupSpec {
                name,
                machine_types,
                scaling: Default::default(),
                labels: Default::default(),
                taints: Vec::new(),
                tags: Default::default(),
                class: class_for_capacity(&with_image(&class, image), capacity, keeps_reclaimed),
                capacity,
            })
        })
        .collect()
}

/// `class` with its node image set to `image`.
fn with_image(class: &NodeClass, image: String) -> NodeClass {
    let mut c = class.clone();
    match &mut c {
        NodeClass::Aws(a) => a.ami_type = image,
        NodeClass::Azure(a) => a.os_sku = image,
        NodeClass::Gcp(g) => g.image_type = image,
    }
    c
}

/// Pool value `pool` with every `node_groups` element's `id` set to null, for
/// comparisons that ignore ids.
pub fn strip_ids(pool: &mut Value) {
    let Value::Object(attrs) = pool else {
        return;
    };
    if let Some(Value::List(items)) = attrs.get_mut("node_groups") {
        for g in items {
            if let Value::Object(m) = g {
                m.insert("id".into(), Value::Null);
            }
        }
    }
}

/// Version-0 `node_groups` elements (EKS wire values: `capacity_type = "ON_DEMAND"`,
/// `ami_type`, `arn`) as version 1 (`capacity = "on-demand"`, `image`, `id`), in JSON.
pub fn upgrade_v0_json(groups: &serde_json::Value) -> serde_json::Value {
    let Some(items) = groups.as_array() else {
        return groups.clone();
    };
    serde_json::Value::Array(
        items
            .iter()
            .map(|g| {
                let capacity = g
                    .get("capacity_type")
                    .and_then(serde_json::Value::as_str)
                    .and_then(CapacityType::parse)
                    .map(|c| serde_json::Value::from(c.label_value()))
                    .unwrap_or(serde_json::Value::Null);
                serde_json::json!({
                    "name": g.get("name").cloned().unwrap_or_default(),
                    "capacity": capacity,
                    "instance_types": g.get("instance_types").cloned().unwrap_or_default(),
                    "image": g.get("ami_type").cloned().unwrap_or_default(),
                    "min_nodes": g.get("min_nodes").cloned().unwrap_or_default(),
                    "max_nodes": g.get("max_nodes").cloned().unwrap_or_default(),
                    "id": g.get("arn").cloned().unwrap_or_default(),
                })
            })
            .collect(),
    )
}
