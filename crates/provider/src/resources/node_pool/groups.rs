//! The `node_groups` attribute: desired groups at plan time, live ones after apply and read.

use std::collections::BTreeMap;

use gpu_core::cloud::NodeGroup;
use gpu_core::pool::NodeGroupSpec;
use tfplugin::Value;

/// One `node_groups` element.
fn element(
    name: &str,
    capacity: &str,
    types: &[String],
    ami: &str,
    min: u32,
    max: u32,
    arn: Value,
) -> Value {
    Value::object([
        ("name", Value::string(name)),
        ("capacity_type", Value::string(capacity)),
        (
            "instance_types",
            Value::List(types.iter().map(Value::string).collect()),
        ),
        ("ami_type", Value::string(ami)),
        ("min_nodes", Value::number(min)),
        ("max_nodes", Value::number(max)),
        ("arn", arn),
    ])
}

/// The planned groups; ARNs come from `known_arns` (by name) or are unknown until apply.
pub fn planned(desired: &[NodeGroupSpec], known_arns: &BTreeMap<String, String>) -> Value {
    Value::List(
        desired
            .iter()
            .map(|g| {
                let arn = known_arns
                    .get(&g.name)
                    .map_or_else(Value::unknown, Value::string);
                element(
                    &g.name,
                    g.capacity_type.eks_str(),
                    &g.instance_types,
                    &g.ami_type,
                    g.scaling.min,
                    g.scaling.max,
                    arn,
                )
            })
            .collect(),
    )
}

/// The live groups, in the order given.
pub fn live(groups: &[NodeGroup]) -> Value {
    Value::List(
        groups
            .iter()
            .map(|g| {
                element(
                    &g.name,
                    g.capacity_type.as_str(),
                    &g.instance_types,
                    &g.ami_type,
                    g.scaling.min,
                    g.scaling.max,
                    Value::string(&g.arn),
                )
            })
            .collect(),
    )
}

/// ARNs by group name from a `node_groups` value.
pub fn arns(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_elements)
        .unwrap_or_default()
        .iter()
        .filter_map(|g| {
            Some((
                g.get_attr("name")?.as_str()?.to_string(),
                g.get_attr("arn")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

/// Group names from a `node_groups` value.
pub fn names(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_elements)
        .unwrap_or_default()
        .iter()
        .filter_map(|g| g.get_attr("name")?.as_str().map(str::to_string))
        .collect()
}

/// `v` with every element's `arn` set to null, for comparisons that ignore ARNs.
pub fn without_arns(v: Option<&Value>) -> Option<Value> {
    v.map(|v| match v {
        Value::List(items) => Value::List(
            items
                .iter()
                .map(|g| match g {
                    Value::Object(m) => {
                        let mut m = m.clone();
                        m.insert("arn".into(), Value::Null);
                        Value::Object(m)
                    }
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    })
}
