//! From a whole desired group to the edits a delta-style API takes (EKS's
//! UpdateNodegroupConfig adds and removes labels and taints; tags are separate calls).
//! Adapters whose API takes the whole object (AKS's PUT) do not need it.

use std::collections::BTreeMap;

use crate::model::{GroupSpec, Scaling, Taint};

/// In-place edits of one group's config; empty fields change nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigDelta {
    /// New node counts.
    pub scaling: Option<Scaling>,
    /// Labels to add or overwrite.
    pub labels_add: BTreeMap<String, String>,
    /// Label keys to remove.
    pub labels_remove: Vec<String>,
    /// Taints to add or overwrite (matched on key and effect).
    pub taints_add: Vec<Taint>,
    /// Taints to remove (matched on key and effect).
    pub taints_remove: Vec<Taint>,
}

impl ConfigDelta {
    /// The edits that turn `live` into `want`: counts (the live desired count kept,
    /// clamped into the new range, unless `want` sets one), labels and taints.
    pub fn between(live: &GroupSpec, want: &GroupSpec) -> Self {
        let scaling = want.scaling.resolved_against(Some(live.scaling));
        let mut d = ConfigDelta {
            scaling: (scaling != live.scaling).then_some(scaling),
            ..Default::default()
        };
        for (k, v) in &want.labels {
            if live.labels.get(k) != Some(v) {
                d.labels_add.insert(k.clone(), v.clone());
            }
        }
        d.labels_remove = live
            .labels
            .keys()
            .filter(|k| !want.labels.contains_key(*k))
            .cloned()
            .collect();
        let same_slot = |a: &Taint, b: &Taint| a.key == b.key && a.effect == b.effect;
        d.taints_add = want
            .taints
            .iter()
            .filter(|t| !live.taints.contains(t))
            .cloned()
            .collect();
        d.taints_remove = live
            .taints
            .iter()
            .filter(|l| !want.taints.iter().any(|t| same_slot(t, l)))
            .cloned()
            .collect();
        d
    }

    /// True when the edits would change nothing.
    pub fn is_empty(&self) -> bool {
        self.scaling.is_none()
            && self.labels_add.is_empty()
            && self.labels_remove.is_empty()
            && self.taints_add.is_empty()
            && self.taints_remove.is_empty()
    }

    /// Applies the edits to `g` (what the cloud does with them).
    pub fn apply_to(&self, g: &mut GroupSpec) {
        if let Some(s) = self.scaling {
            g.scaling = s;
        }
        g.labels.extend(self.labels_add.clone());
        for k in &self.labels_remove {
            g.labels.remove(k);
        }
        for t in self.taints_add.iter().chain(&self.taints_remove) {
            g.taints
                .retain(|x| !(x.key == t.key && x.effect == t.effect));
        }
        g.taints.extend(self.taints_add.iter().cloned());
        g.taints.sort();
    }
}

/// Tags to add or overwrite and keys to remove to turn `live` into `want` (`live` as read,
/// the cloud's own tags already stripped).
pub fn tag_delta(
    live: &BTreeMap<String, String>,
    want: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let add = want
        .iter()
        .filter(|(k, v)| live.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let remove = live
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    (add, remove)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AwsClass, CapacityType, NodeClass, TaintEffect};

    fn g(labels: &[(&str, &str)], taints: &[(&str, &str)], scaling: Scaling) -> GroupSpec {
        GroupSpec {
            name: "g".into(),
            capacity: CapacityType::Spot,
            machine_types: vec!["t".into()],
            scaling,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: taints
                .iter()
                .map(|(k, v)| Taint {
                    key: k.to_string(),
                    value: v.to_string(),
                    effect: TaintEffect::NoSchedule,
                })
                .collect(),
            tags: Default::default(),
            class: NodeClass::Aws(AwsClass::default()),
        }
    }

    #[test]
    fn delta_turns_live_into_want_and_keeps_the_live_count() {
        let live = g(
            &[("a", "1"), ("b", "2")],
            &[("x", "1"), ("y", "")],
            Scaling {
                min: 0,
                max: 5,
                desired: Some(4),
            },
        );
        let want = g(
            &[("a", "9")],
            &[("x", "2")],
            Scaling {
                min: 0,
                max: 3,
                desired: None,
            },
        );
        let d = ConfigDelta::between(&live, &want);
        assert_eq!(
            d.scaling,
            Some(Scaling {
                min: 0,
                max: 3,
                desired: Some(3)
            }),
            "4 clamped into [0, 3]"
        );
        assert_eq!(d.labels_remove, ["b"]);
        assert_eq!(d.taints_remove.len(), 1, "y goes, x is overwritten: {d:?}");
        let mut after = live.clone();
        d.apply_to(&mut after);
        assert_eq!((&after.labels, &after.taints), (&want.labels, &want.taints));
        assert!(ConfigDelta::between(&after, &want).is_empty());
    }

    #[test]
    fn tag_delta_adds_changes_and_removes() {
        let live: BTreeMap<String, String> =
            [("a".into(), "1".into()), ("b".into(), "2".into())].into();
        let want: BTreeMap<String, String> = [("a".into(), "2".into())].into();
        let (add, remove) = tag_delta(&live, &want);
        assert_eq!(add, want);
        assert_eq!(remove, ["b"]);
    }
}
