//! The monthly cost of the GPU resources in a saved plan, as `terraform show -json` writes it
//! (`resource_changes[].change.before/after`): each resource's cost before and after, the
//! totals, and the totals by a tag or label (`team`, `project`) or by cloud.
//!
//! A resource's cost is its `monthly_usd` attribute (at `min_nodes` for a pool). A cost the
//! plan leaves unknown (`after_unknown`) is counted nowhere and said so. Its groups come
//! from its `labels` and `tags` over the provider's `default_labels` where the plan's
//! configuration writes them as constants.

use std::collections::BTreeMap;

use serde_json::Value;

/// The resource types whose cost a plan carries.
pub const PRICED_TYPES: [&str; 2] = ["gpu_node_pool", "gpu_instance"];

/// One priced resource of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    /// Its Terraform address (`module.x.gpu_node_pool.train`).
    pub address: String,
    /// Its resource type.
    pub kind: String,
    /// What the plan does: `create`, `update`, `replace`, `delete` or `no-op`.
    pub action: String,
    /// Where it runs (after the change, else before): `aws`, `azure`, `gcp`.
    pub cloud: String,
    /// Its `team`, `project` and other tags or labels (after the change, else before).
    pub tags: BTreeMap<String, String>,
    /// USD per month before the change (none for a create).
    pub before: Option<f64>,
    /// USD per month after the change (none for a delete, or when unknown until apply).
    pub after: Option<f64>,
    /// Whether the plan leaves the cost after the change unknown.
    pub unknown: bool,
}

impl CostRow {
    /// `after - before`, nothing counted where a side is absent; none when unknown.
    pub fn diff(&self) -> Option<f64> {
        (!self.unknown).then(|| self.after.unwrap_or(0.0) - self.before.unwrap_or(0.0))
    }
}

/// A total: before, after and the change.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Total {
    /// USD per month before.
    pub before: f64,
    /// USD per month after.
    pub after: f64,
    /// `after - before`.
    pub diff: f64,
}

impl Total {
    fn add(&mut self, r: &CostRow) {
        if r.unknown {
            return;
        }
        self.before += r.before.unwrap_or(0.0);
        self.after += r.after.unwrap_or(0.0);
        self.diff = self.after - self.before;
    }
}

/// Why a file is not a plan this can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// Not JSON.
    NotJson(String),
    /// JSON without `resource_changes`.
    NotAPlan,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::NotJson(e) => write!(f, "not JSON: {e}"),
            PlanError::NotAPlan => f.write_str(
                "no `resource_changes` in it: give the output of `terraform show -json <planfile>`",
            ),
        }
    }
}

/// The priced resources of `plan` (the JSON of `terraform show -json <planfile>`).
pub fn rows(plan: &str) -> Result<Vec<CostRow>, PlanError> {
    let v: Value = serde_json::from_str(plan).map_err(|e| PlanError::NotJson(e.to_string()))?;
    let changes = v
        .get("resource_changes")
        .and_then(Value::as_array)
        .ok_or(PlanError::NotAPlan)?;
    let defaults = default_labels(&v);
    Ok(changes
        .iter()
        .filter_map(row)
        .map(|mut r| {
            for (k, val) in &defaults {
                r.tags.entry(k.clone()).or_insert_with(|| val.clone());
            }
            r
        })
        .collect())
}

/// The provider's `default_labels`, where the configuration in the plan has them as a
/// constant (`configuration.provider_config.gpu.expressions.default_labels`).
fn default_labels(plan: &Value) -> BTreeMap<String, String> {
    plan.pointer("/configuration/provider_config")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|providers| providers.values())
        .filter(|p| p.get("name").and_then(Value::as_str) == Some("gpu"))
        .filter_map(|p| {
            p.pointer("/expressions/default_labels/constant_value")
                .and_then(Value::as_object)
        })
        .flat_map(|m| m.iter())
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// One resource change as a row, if it is a priced GPU resource.
fn row(c: &Value) -> Option<CostRow> {
    let kind = c.get("type")?.as_str()?;
    if !PRICED_TYPES.contains(&kind) || c.get("mode").and_then(Value::as_str) == Some("data") {
        return None;
    }
    let change = c.get("change")?;
    let side = |k: &str| change.get(k).filter(|v| v.is_object());
    let (before, after) = (side("before"), side("after"));
    let monthly = |s: Option<&Value>| s.and_then(|s| s.get("monthly_usd")).and_then(Value::as_f64);
    let unknown = change
        .pointer("/after_unknown/monthly_usd")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let actions: Vec<&str> = change
        .get("actions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let action = match actions.as_slice() {
        ["create"] => "create",
        ["delete"] => "delete",
        ["update"] => "update",
        [_, _] => "replace",
        _ => "no-op",
    };
    let described = after.or(before)?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let cloud = text(described.pointer("/placement/cloud"))
        .or_else(|| text(described.get("cloud")))
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut tags = BTreeMap::new();
    for key in ["labels", "tags"] {
        if let Some(m) = described.get(key).and_then(Value::as_object) {
            for (k, v) in m {
                if let Some(v) = v.as_str() {
                    tags.insert(k.clone(), v.to_string());
                }
            }
        }
    }
    Some(CostRow {
        address: c.get("address")?.as_str()?.to_string(),
        kind: kind.to_string(),
        action: action.to_string(),
        cloud,
        tags,
        before: monthly(before),
        after: if unknown { None } else { monthly(after) },
        unknown,
    })
}

/// The totals of `rows`.
pub fn total(rows: &[CostRow]) -> Total {
    let mut t = Total::default();
    for r in rows {
        t.add(r);
    }
    t
}

/// The totals of `rows` by `key`: `cloud`, or a tag or label (`team`, `project`);
/// resources without it count under `(none)`.
pub fn totals_by(rows: &[CostRow], key: &str) -> BTreeMap<String, Total> {
    let mut out: BTreeMap<String, Total> = BTreeMap::new();
    for r in rows {
        let group = if key == "cloud" {
            Some(r.cloud.clone()).filter(|c| !c.is_empty())
        } else {
            r.tags.get(key).cloned()
        };
        out.entry(group.unwrap_or_else(|| "(none)".into()))
            .or_default()
            .add(r);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A plan as `terraform show -json` writes it: a new pool, a changed pool, a VM being
    /// destroyed, a pool whose cost is left to the apply, and something not ours.
    pub(crate) fn plan() -> String {
        json!({
            "format_version": "1.2",
            "configuration": {"provider_config": {"gpu": {
                "name": "gpu", "full_name": "registry.terraform.io/gpu-tf/gpu",
                "expressions": {"default_labels": {"constant_value": {"project": "llm"}}}}}},
            "resource_changes": [
                {"address": "gpu_node_pool.train", "mode": "managed", "type": "gpu_node_pool",
                 "change": {"actions": ["create"], "before": null,
                            "after": {"cloud": "aws", "monthly_usd": 40179.2,
                                      "tags": {"team": "ml"}},
                            "after_unknown": {"monthly_usd": false}}},
                {"address": "module.infer.gpu_node_pool.serve", "mode": "managed",
                 "type": "gpu_node_pool",
                 "change": {"actions": ["update"],
                            "before": {"cloud": "gcp", "monthly_usd": 1000.0,
                                       "tags": {"team": "serving"}},
                            "after": {"cloud": "GCP", "monthly_usd": 1500.5,
                                      "tags": {"team": "serving"},
                                      "placement": {"cloud": "azure"}},
                            "after_unknown": {}}},
                {"address": "gpu_instance.dev", "mode": "managed", "type": "gpu_instance",
                 "change": {"actions": ["delete"],
                            "before": {"cloud": "azure", "monthly_usd": 289.81,
                                       "labels": {"team": "ml"}},
                            "after": null, "after_unknown": {}}},
                {"address": "gpu_node_pool.later", "mode": "managed", "type": "gpu_node_pool",
                 "change": {"actions": ["create"], "before": null,
                            "after": {"cloud": "gcp"},
                            "after_unknown": {"monthly_usd": true}}},
                {"address": "terraform_data.x", "mode": "managed", "type": "terraform_data",
                 "change": {"actions": ["create"], "before": null, "after": {}}},
                {"address": "data.gpu_spot_offer.h100", "mode": "data", "type": "gpu_spot_offer",
                 "change": {"actions": ["read"], "before": null, "after": {}}}
            ]
        })
        .to_string()
    }

    #[test]
    fn each_priced_resource_is_read_with_its_before_after_and_tags() {
        let rows = rows(&plan()).unwrap();
        let addresses: Vec<&str> = rows.iter().map(|r| r.address.as_str()).collect();
        assert_eq!(
            addresses,
            [
                "gpu_node_pool.train",
                "module.infer.gpu_node_pool.serve",
                "gpu_instance.dev",
                "gpu_node_pool.later"
            ]
        );
        let serve = &rows[1];
        assert_eq!((serve.before, serve.after), (Some(1000.0), Some(1500.5)));
        assert_eq!(serve.cloud, "azure", "where it runs: its placement");
        assert_eq!(serve.diff(), Some(500.5));
        assert_eq!(rows[2].action, "delete");
        assert_eq!(rows[2].diff(), Some(-289.81));
        assert_eq!(rows[2].tags["team"], "ml");
        assert!(rows[3].unknown && rows[3].diff().is_none());
        // The provider's default labels, under the resource's own.
        assert_eq!(rows[0].tags["project"], "llm");
        assert_eq!(rows[1].tags["project"], "llm");
    }

    #[test]
    fn totals_count_every_known_cost_once_and_group_by_tag_and_cloud() {
        let rows = rows(&plan()).unwrap();
        let t = total(&rows);
        assert!((t.before - 1289.81).abs() < 1e-9, "{t:?}");
        assert!((t.after - 41679.7).abs() < 1e-9, "{t:?}");
        assert!((t.diff - (41679.7 - 1289.81)).abs() < 1e-9);
        let teams = totals_by(&rows, "team");
        assert!((teams["ml"].diff - (40179.2 - 289.81)).abs() < 1e-9);
        assert!((teams["serving"].diff - 500.5).abs() < 1e-9);
        assert_eq!(
            teams["(none)"],
            Total::default(),
            "the unknown pool counts nowhere"
        );
        let clouds = totals_by(&rows, "cloud");
        assert_eq!(
            clouds.keys().collect::<Vec<_>>(),
            ["aws", "azure", "gcp"],
            "{clouds:?}"
        );
        assert!((clouds["azure"].diff - (500.5 - 289.81)).abs() < 1e-9);
    }

    #[test]
    fn a_file_that_is_not_a_plan_says_what_to_give() {
        assert!(matches!(rows("nope"), Err(PlanError::NotJson(_))));
        let e = rows("{}").unwrap_err().to_string();
        assert!(e.contains("terraform show -json"), "{e}");
    }
}
