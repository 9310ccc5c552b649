//! Rolling groups without an outage: the one decision of whether a desired group keeps a
//! live group's name (changed in place) or gets a new generation's name (created, waited
//! for, and only then is the old one deleted). What cannot change in place is the cloud's
//! ([`super::drift`]); how generations are named is the layout's
//! ([`super::layout::generation_name`]).
//!
//! Plan and apply both call [`name_generations`] with the same prior groups and desired
//! groups, so they agree on every name without storing a counter.

use std::collections::BTreeSet;

use super::drift;
use super::layout;
use crate::model::{CapacityType, GroupSpec};
use crate::offer::Cloud;

/// One group rolled to a new generation: created and ready before `from` is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roll {
    /// On-demand or spot.
    pub capacity: CapacityType,
    /// The live group that is deleted once `to` is ready.
    pub from: String,
    /// The new group.
    pub to: String,
    /// Why the live group cannot be changed in place.
    pub reasons: Vec<String>,
}

/// Names each of `desired` (pool `pool` on `cloud`, generation-0 names as the layout gave
/// them) against the `prior` groups: a prior group of the same capacity type that can
/// become it in place keeps its name (an update in place); with no prior group of that
/// capacity type the group keeps its generation-0 name; otherwise it gets a new
/// generation's name and the change is returned as a [`Roll`].
pub fn name_generations(
    cloud: Cloud,
    pool: &str,
    desired: &mut [GroupSpec],
    prior: &[GroupSpec],
) -> Vec<Roll> {
    let mut taken: BTreeSet<String> = prior.iter().map(|p| p.name.clone()).collect();
    let mut rolls = Vec::new();
    for d in desired.iter_mut() {
        let same_kind: Vec<&GroupSpec> =
            prior.iter().filter(|p| p.capacity == d.capacity).collect();
        if let Some(keep) = same_kind
            .iter()
            .find(|p| drift::roll_reasons(p, d).is_empty())
        {
            d.name = keep.name.clone();
            continue;
        }
        let base = d.name.clone();
        let next = |taken: &BTreeSet<String>| {
            layout::generation_name(cloud, pool, &base, &drift::fingerprint(d), taken)
        };
        let Some(old) = same_kind.first() else {
            if taken.contains(&d.name) {
                d.name = next(&taken);
            }
            taken.insert(d.name.clone());
            continue;
        };
        let name = next(&taken);
        taken.insert(name.clone());
        rolls.push(Roll {
            capacity: d.capacity,
            from: old.name.clone(),
            to: name.clone(),
            reasons: drift::roll_reasons(old, d),
        });
        d.name = name;
    }
    rolls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AwsClass, AzureClass, NodeClass, Scaling};
    use std::collections::BTreeMap;

    fn group(name: &str, capacity: CapacityType, types: &[&str]) -> GroupSpec {
        GroupSpec {
            name: name.into(),
            capacity,
            machine_types: types.iter().map(|t| t.to_string()).collect(),
            scaling: Scaling::default(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            tags: BTreeMap::new(),
            class: NodeClass::Aws(AwsClass {
                node_role: "arn:aws:iam::1:role/n".into(),
                subnets: None,
                ami_type: "AL2023_x86_64_NVIDIA".into(),
                capacity_reservation: None,
            }),
        }
    }

    fn names(cloud: Cloud, want: &mut [GroupSpec], prior: &[GroupSpec]) -> Vec<Roll> {
        name_generations(cloud, "train", want, prior)
    }

    #[test]
    fn a_new_pool_keeps_the_base_names_and_rolls_nothing() {
        let mut want = vec![
            group("train-od", CapacityType::OnDemand, &["g6.xlarge"]),
            group(
                "train-spot",
                CapacityType::Spot,
                &["g6.xlarge", "g6.2xlarge"],
            ),
        ];
        assert!(names(Cloud::Aws, &mut want, &[]).is_empty());
        assert_eq!(
            (want[0].name.as_str(), want[1].name.as_str()),
            ("train-od", "train-spot")
        );
    }

    #[test]
    fn the_same_roll_is_named_the_same_twice() {
        // Plan and apply compute the names apart: same inputs, same names.
        let prior = vec![group("train-spot", CapacityType::Spot, &["g6.xlarge"])];
        let name = |types: &[&str]| {
            let mut want = vec![group("train-spot", CapacityType::Spot, types)];
            names(Cloud::Aws, &mut want, &prior);
            want.remove(0).name
        };
        let a = name(&["g6.2xlarge", "g6.4xlarge"]);
        assert_eq!(a, name(&["G6.4XLARGE", "g6.2xlarge"]));
        assert!(
            a.starts_with("train-spot-") && layout::may_be_group_of(Cloud::Aws, "train", &a),
            "{a}"
        );
        assert_ne!(a, name(&["g6.2xlarge"]));
    }

    #[test]
    fn an_in_place_change_keeps_the_name_and_a_fixed_one_rolls() {
        let prior = vec![
            group("train-od", CapacityType::OnDemand, &["g6.xlarge"]),
            group("train-spot", CapacityType::Spot, &["g6.xlarge"]),
        ];
        // Same fixed fields (types re-cased, counts changed): both names stay.
        let mut same = vec![
            group("train-od", CapacityType::OnDemand, &["G6.XLARGE"]),
            group("train-spot", CapacityType::Spot, &["g6.xlarge"]),
        ];
        same[1].scaling.max = 9;
        assert!(names(Cloud::Aws, &mut same, &prior).is_empty());
        assert_eq!(
            (same[0].name.as_str(), same[1].name.as_str()),
            ("train-od", "train-spot")
        );
        // Other spot types: the spot group rolls to a new generation, the floor stays.
        let mut other = vec![
            group("train-od", CapacityType::OnDemand, &["g6.xlarge"]),
            group("train-spot", CapacityType::Spot, &["g6.2xlarge"]),
        ];
        let rolls = names(Cloud::Aws, &mut other, &prior);
        assert_eq!(other[0].name, "train-od");
        assert_eq!(rolls.len(), 1, "{rolls:?}");
        assert_eq!(rolls[0].from, "train-spot");
        assert_eq!(rolls[0].to, other[1].name);
        assert!(other[1].name.starts_with("train-spot-"));
        assert_eq!(
            rolls[0].reasons,
            vec!["machine types g6.xlarge → g6.2xlarge"]
        );
    }

    #[test]
    fn mid_roll_the_ready_generation_is_kept() {
        let old = group("train-spot", CapacityType::Spot, &["g6.xlarge"]);
        let mut new = vec![group("train-spot", CapacityType::Spot, &["g6.2xlarge"])];
        names(Cloud::Aws, &mut new, std::slice::from_ref(&old));
        let prior = vec![old, new[0].clone()];
        let mut again = vec![group("train-spot", CapacityType::Spot, &["g6.2xlarge"])];
        assert!(names(Cloud::Aws, &mut again, &prior).is_empty());
        assert_eq!(again[0].name, new[0].name);
    }

    #[test]
    fn a_taken_name_is_salted() {
        // A leftover group holds the name the shape would get: the roll takes another.
        let old = group("train-spot", CapacityType::Spot, &["g6.xlarge"]);
        let mut first = vec![group("train-spot", CapacityType::Spot, &["g6.2xlarge"])];
        names(Cloud::Aws, &mut first, std::slice::from_ref(&old));
        let mut squatter = group(&first[0].name, CapacityType::OnDemand, &["x"]);
        squatter.capacity = CapacityType::OnDemand;
        let mut second = vec![group("train-spot", CapacityType::Spot, &["g6.2xlarge"])];
        names(Cloud::Aws, &mut second, &[old, squatter]);
        assert_ne!(second[0].name, first[0].name);
        assert!(layout::may_be_group_of(
            Cloud::Aws,
            "train",
            &second[0].name
        ));
    }

    #[test]
    fn aks_rolls_to_a_new_legal_opaque_name() {
        let class = |driver: &str| {
            NodeClass::Azure(AzureClass {
                os_sku: "Ubuntu".into(),
                gpu_driver: driver.into(),
                ..Default::default()
            })
        };
        let base = layout::base_name(Cloud::Azure, "train", CapacityType::Spot);
        let mut old = group(&base, CapacityType::Spot, &["Standard_NC24ads_A100_v4"]);
        old.class = class("Install");
        let mut want = vec![GroupSpec {
            class: class("None"),
            ..old.clone()
        }];
        let rolls = names(Cloud::Azure, &mut want, &[old]);
        assert_eq!(rolls.len(), 1);
        assert_eq!(rolls[0].reasons, vec!["gpu driver Install → None"]);
        let n = &want[0].name;
        assert!(
            crate::clouds::azure::rules::AKS.name_ok(n) && n.starts_with("gs") && *n != base,
            "{n}"
        );
    }
}
