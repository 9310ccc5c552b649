//! Desired node groups against live ones: which to create, which to delete, and for the
//! rest each changed field, in place or by replacement, with a reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::group::{CapacityType, NodeGroupSpec};

/// How a field change is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Updated on the live group.
    InPlace,
    /// The group is deleted and created again.
    Replace,
}

/// One changed field of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// The field: `scaling.min`, `scaling.max`, `scaling.desired`, `labels`, `taints`,
    /// `tags`, `instance_types`, `capacity_type`, `ami_type`.
    pub field: &'static str,
    /// How it is applied.
    pub action: Action,
    /// The live value, rendered.
    pub from: String,
    /// The desired value, rendered.
    pub to: String,
    /// Why, for a human.
    pub reason: String,
}

impl fmt::Display for FieldChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} → {} ({})",
            self.field, self.from, self.to, self.reason
        )
    }
}

/// The changes to one group that exists on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupUpdate {
    /// The group's name.
    pub name: String,
    /// Every changed field (never empty).
    pub changes: Vec<FieldChange>,
}

impl GroupUpdate {
    /// Whether any change forces the group to be replaced.
    pub fn replaces(&self) -> bool {
        self.changes.iter().any(|c| c.action == Action::Replace)
    }
}

/// Everything that differs between desired and live groups.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoolDiff {
    /// Desired groups with no live group of that name.
    pub create: Vec<NodeGroupSpec>,
    /// Live groups no longer desired, by name.
    pub delete: Vec<String>,
    /// Groups on both sides that differ.
    pub update: Vec<GroupUpdate>,
}

impl PoolDiff {
    /// Whether desired and live agree.
    pub fn is_empty(&self) -> bool {
        self.create.is_empty() && self.delete.is_empty() && self.update.is_empty()
    }

    /// Names of the groups that must be replaced.
    pub fn replaced(&self) -> Vec<&str> {
        self.update
            .iter()
            .filter(|u| u.replaces())
            .map(|u| u.name.as_str())
            .collect()
    }
}

/// Compares `desired` with `live` (matched by name; order of either list does not matter).
pub fn diff(desired: &[NodeGroupSpec], live: &[NodeGroupSpec]) -> PoolDiff {
    let live_by: BTreeMap<&str, &NodeGroupSpec> =
        live.iter().map(|g| (g.name.as_str(), g)).collect();
    let desired_names: BTreeSet<&str> = desired.iter().map(|g| g.name.as_str()).collect();
    let mut out = PoolDiff::default();
    for d in desired {
        match live_by.get(d.name.as_str()) {
            None => out.create.push(d.clone()),
            Some(l) => {
                let changes = group_changes(d, l);
                if !changes.is_empty() {
                    out.update.push(GroupUpdate {
                        name: d.name.clone(),
                        changes,
                    });
                }
            }
        }
    }
    out.delete = live
        .iter()
        .filter(|l| !desired_names.contains(l.name.as_str()))
        .map(|l| l.name.clone())
        .collect();
    out
}

/// Every field of `d` that differs from `l`.
fn group_changes(d: &NodeGroupSpec, l: &NodeGroupSpec) -> Vec<FieldChange> {
    let mut v = Vec::new();
    let mut push = |field, action, from: String, to: String, reason: &str| {
        if from != to {
            v.push(FieldChange {
                field,
                action,
                from,
                to,
                reason: reason.to_string(),
            });
        }
    };
    push(
        "capacity_type",
        Action::Replace,
        l.capacity_type.label_value().into(),
        d.capacity_type.label_value().into(),
        "a node group's capacity type cannot change in place",
    );
    let (from, to) = if d.capacity_type == CapacityType::Spot {
        (sorted(&l.instance_types), sorted(&d.instance_types))
    } else {
        (l.instance_types.clone(), d.instance_types.clone())
    };
    push(
        "instance_types",
        Action::Replace,
        format!("{from:?}"),
        format!("{to:?}"),
        "a node group's instance types cannot change in place",
    );
    push(
        "ami_type",
        Action::Replace,
        l.ami_type.clone(),
        d.ami_type.clone(),
        "a node group's image type cannot change in place",
    );
    let (ds, ls) = (d.scaling, l.scaling);
    push(
        "scaling.min",
        Action::InPlace,
        ls.min.to_string(),
        ds.min.to_string(),
        "scaling is updated in place",
    );
    push(
        "scaling.max",
        Action::InPlace,
        ls.max.to_string(),
        ds.max.to_string(),
        "scaling is updated in place",
    );
    if let Some(want) = desired_count(d, l) {
        let from = ls
            .desired
            .map_or_else(|| "unknown".to_string(), |n| n.to_string());
        let reason = if ds.desired.is_some() {
            "scaling is updated in place"
        } else {
            "the live count is outside the new [min, max] and is clamped into it"
        };
        push(
            "scaling.desired",
            Action::InPlace,
            from,
            want.to_string(),
            reason,
        );
    }
    push(
        "labels",
        Action::InPlace,
        fmt_map(&l.labels),
        fmt_map(&d.labels),
        "labels are updated in place",
    );
    push(
        "taints",
        Action::InPlace,
        fmt_taints(&l.taints),
        fmt_taints(&d.taints),
        "taints are updated in place",
    );
    push(
        "tags",
        Action::InPlace,
        fmt_map(&l.tags),
        fmt_map(&d.tags),
        "tags are updated in place",
    );
    v
}

/// The desired count to set: the desired one when given, else the live one clamped into
/// the new range when it falls outside; `None` to leave it.
fn desired_count(d: &NodeGroupSpec, l: &NodeGroupSpec) -> Option<u32> {
    let (min, max) = (d.scaling.min, d.scaling.max);
    match (d.scaling.desired, l.scaling.desired) {
        (Some(want), _) => Some(want),
        (None, Some(live)) if live < min || live > max => Some(live.clamp(min, max.max(min))),
        (None, _) => None,
    }
}

/// `v` sorted (spot groups' instance types are a set).
fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// `{a=1, b=2}`.
fn fmt_map(m: &BTreeMap<String, String>) -> String {
    let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// `[k=v:Effect, …]`, order-insensitive.
fn fmt_taints(t: &[super::spec::Taint]) -> String {
    let mut inner: Vec<String> = t.iter().map(ToString::to_string).collect();
    inner.sort();
    format!("[{}]", inner.join(", "))
}
