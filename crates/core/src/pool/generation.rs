//! Rolling node groups without an outage: what an EKS node group cannot change in place
//! (its [`FixedShape`]), the one decision of whether a desired group keeps a live group's
//! name (changed in place) or gets a new generation's name (created, waited for, and only
//! then is the old one deleted), and the names of those generations.
//!
//! Plan and apply both call [`name_generations`] with the same prior groups and desired
//! groups, so they agree on every name without storing a counter.

use std::collections::BTreeSet;

use super::group::{CapacityType, NodeGroupSpec};
use super::stable_hash::fnv1a;

/// Characters of the generation suffix (`<name>-spot-` + 4 of `[0-9a-z]`).
pub const GENERATION_LEN: usize = 4;

/// What an EKS node group cannot change in place; a change of any of it rolls the group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedShape {
    /// On-demand or spot.
    pub capacity_type: CapacityType,
    /// Instance types, lower case; a set (the on-demand group orders them by price, spot
    /// capacity is drawn from all of them).
    pub instance_types: BTreeSet<String>,
    /// The node image type (EKS `amiType`).
    pub image: String,
    /// The nodes' IAM role.
    pub node_role: String,
    /// Subnets, when known (`None`: the cluster's, read at apply; never a reason to roll).
    pub subnets: Option<BTreeSet<String>>,
}

impl FixedShape {
    /// The shape of `group` placed with `node_role` in `subnets`.
    pub fn of(group: &NodeGroupSpec, node_role: &str, subnets: Option<&[String]>) -> Self {
        FixedShape {
            capacity_type: group.capacity_type,
            instance_types: lower_set(&group.instance_types),
            image: group.ami_type.clone(),
            node_role: node_role.to_string(),
            subnets: subnets.map(|s| s.iter().cloned().collect()),
        }
    }

    /// Why a group of shape `self` cannot become `want` in place: one reason per field
    /// that differs; empty when the group can be changed in place.
    pub fn roll_reasons(&self, want: &FixedShape) -> Vec<String> {
        let mut why = Vec::new();
        let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        if self.capacity_type != want.capacity_type {
            why.push(format!(
                "capacity {} → {}",
                self.capacity_type, want.capacity_type
            ));
        }
        if self.instance_types != want.instance_types {
            why.push(format!(
                "instance types [{}] → [{}]",
                list(&self.instance_types),
                list(&want.instance_types)
            ));
        }
        if !self.image.eq_ignore_ascii_case(&want.image) {
            why.push(format!("image {} → {}", self.image, want.image));
        }
        if self.node_role != want.node_role {
            why.push(format!("node role {} → {}", self.node_role, want.node_role));
        }
        if let (Some(a), Some(b)) = (&self.subnets, &want.subnets)
            && a != b
        {
            why.push(format!("subnets [{}] → [{}]", list(a), list(b)));
        }
        why
    }

    /// A stable text of the shape, the input of the generation suffix.
    fn fingerprint(&self) -> String {
        let subnets = self
            .subnets
            .as_ref()
            .map_or_else(|| "cluster".to_string(), join);
        format!(
            "{}|{}|{}|{}|{}",
            self.capacity_type,
            join(&self.instance_types),
            self.image.to_ascii_lowercase(),
            self.node_role,
            subnets
        )
    }
}

/// A group the pool had before this change (from state), with its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorGroup {
    /// Its name on the cloud.
    pub name: String,
    /// What it cannot change in place.
    pub shape: FixedShape,
}

/// One group rolled to a new generation: created and ready before `from` is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roll {
    /// On-demand or spot.
    pub capacity_type: CapacityType,
    /// The live group that is deleted once `to` is ready.
    pub from: String,
    /// The new group.
    pub to: String,
    /// Why the live group cannot be changed in place.
    pub reasons: Vec<String>,
}

/// Names each of `desired` (with the matching `shapes`, same order) against the `prior`
/// groups: a prior group of the same capacity type whose shape it can take in place keeps
/// its name (an update in place); with no prior group of that capacity type the group
/// keeps its base name (its current `name`, e.g. `train-spot`: generation 0); otherwise
/// it gets a new generation's name (`train-spot-k3x9`) and the change is returned as a
/// [`Roll`].
pub fn name_generations(
    desired: &mut [NodeGroupSpec],
    shapes: &[FixedShape],
    prior: &[PriorGroup],
) -> Vec<Roll> {
    let mut taken: BTreeSet<String> = prior.iter().map(|p| p.name.clone()).collect();
    let mut rolls = Vec::new();
    for (d, shape) in desired.iter_mut().zip(shapes) {
        let same_kind: Vec<&PriorGroup> = prior
            .iter()
            .filter(|p| p.shape.capacity_type == d.capacity_type)
            .collect();
        if let Some(keep) = same_kind
            .iter()
            .find(|p| p.shape.roll_reasons(shape).is_empty())
        {
            d.name = keep.name.clone();
            continue;
        }
        let Some(old) = same_kind.first() else {
            if taken.contains(&d.name) {
                d.name = generation_name(&d.name, shape, &taken);
            }
            taken.insert(d.name.clone());
            continue;
        };
        let name = generation_name(&d.name, shape, &taken);
        taken.insert(name.clone());
        rolls.push(Roll {
            capacity_type: d.capacity_type,
            from: old.name.clone(),
            to: name.clone(),
            reasons: old.shape.roll_reasons(shape),
        });
        d.name = name;
    }
    rolls
}

/// `<base>-<4 chars>`: the suffix is derived from the shape, so plan and apply agree;
/// a name in `taken` is salted until free.
pub fn generation_name(base: &str, shape: &FixedShape, taken: &BTreeSet<String>) -> String {
    let print = shape.fingerprint();
    (0u32..)
        .map(|salt| {
            let seed = if salt == 0 {
                print.clone()
            } else {
                format!("{print}#{salt}")
            };
            format!("{base}-{}", base36(fnv1a(&seed), GENERATION_LEN))
        })
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| base.to_string())
}

/// Whether `name` is one of pool `pool`'s group names: `<pool>-od` or `<pool>-spot`,
/// with or without a generation suffix.
pub fn is_group_of(pool: &str, name: &str) -> bool {
    let Some(rest) = name.strip_prefix(pool) else {
        return false;
    };
    let Some(rest) = rest
        .strip_prefix("-od")
        .or_else(|| rest.strip_prefix("-spot"))
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

fn lower_set(v: &[String]) -> BTreeSet<String> {
    v.iter().map(|t| t.trim().to_ascii_lowercase()).collect()
}

fn join(s: &BTreeSet<String>) -> String {
    s.iter().cloned().collect::<Vec<_>>().join(",")
}

/// The last `len` base-36 digits of `n`.
fn base36(mut n: u64, len: usize) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = vec![b'0'; len];
    for slot in out.iter_mut().rev() {
        *slot = digits[(n % 36) as usize];
        n /= 36;
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::Scaling;
    use std::collections::BTreeMap;

    fn group(name: &str, capacity: CapacityType, types: &[&str]) -> NodeGroupSpec {
        NodeGroupSpec {
            name: name.into(),
            capacity_type: capacity,
            instance_types: types.iter().map(|t| t.to_string()).collect(),
            ami_type: "AL2023_x86_64_NVIDIA".into(),
            scaling: Scaling::default(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            tags: BTreeMap::new(),
        }
    }

    fn shape(g: &NodeGroupSpec) -> FixedShape {
        FixedShape::of(g, "arn:aws:iam::1:role/n", None)
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
        let shapes: Vec<_> = want.iter().map(shape).collect();
        let rolls = name_generations(&mut want, &shapes, &[]);
        assert!(rolls.is_empty());
        assert_eq!(
            (want[0].name.as_str(), want[1].name.as_str()),
            ("train-od", "train-spot")
        );
    }

    #[test]
    fn the_same_roll_is_named_the_same_twice() {
        // Plan and apply compute the names apart: same inputs, same names.
        let prior = vec![PriorGroup {
            name: "train-spot".into(),
            shape: shape(&group("train-spot", CapacityType::Spot, &["g6.xlarge"])),
        }];
        let names = |types: &[&str]| {
            let mut want = vec![group("train-spot", CapacityType::Spot, types)];
            let shapes: Vec<_> = want.iter().map(shape).collect();
            name_generations(&mut want, &shapes, &prior);
            want.remove(0).name
        };
        let a = names(&["g6.2xlarge", "g6.4xlarge"]);
        assert_eq!(a, names(&["G6.4XLARGE", "g6.2xlarge"]));
        assert!(
            a.starts_with("train-spot-") && is_group_of("train", &a),
            "{a}"
        );
        assert_ne!(a, names(&["g6.2xlarge"]));
    }

    #[test]
    fn an_in_place_change_keeps_the_name_and_a_fixed_one_rolls() {
        let legacy = group("train-spot", CapacityType::Spot, &["g6.xlarge"]);
        let prior = vec![
            PriorGroup {
                name: "train-od".into(),
                shape: shape(&group("train-od", CapacityType::OnDemand, &["g6.xlarge"])),
            },
            PriorGroup {
                name: legacy.name.clone(),
                shape: shape(&legacy),
            },
        ];
        // Same shapes (types re-cased): both legacy names stay, nothing rolls.
        let mut same = vec![
            group("train-od", CapacityType::OnDemand, &["G6.XLARGE"]),
            group("train-spot", CapacityType::Spot, &["g6.xlarge"]),
        ];
        let shapes: Vec<_> = same.iter().map(shape).collect();
        assert!(name_generations(&mut same, &shapes, &prior).is_empty());
        assert_eq!(
            (same[0].name.as_str(), same[1].name.as_str()),
            ("train-od", "train-spot")
        );
        // Other spot types: the spot group rolls to a new generation, the floor stays.
        let mut other = vec![
            group("train-od", CapacityType::OnDemand, &["g6.xlarge"]),
            group("train-spot", CapacityType::Spot, &["g6.2xlarge"]),
        ];
        let shapes: Vec<_> = other.iter().map(shape).collect();
        let rolls = name_generations(&mut other, &shapes, &prior);
        assert_eq!(other[0].name, "train-od");
        assert_eq!(rolls.len(), 1, "{rolls:?}");
        assert_eq!(rolls[0].from, "train-spot");
        assert_eq!(rolls[0].to, other[1].name);
        assert!(other[1].name.starts_with("train-spot-"));
        assert_eq!(
            rolls[0].reasons,
            vec!["instance types [g6.xlarge] → [g6.2xlarge]"]
        );
    }

    #[test]
    fn mid_roll_the_ready_generation_is_kept() {
        let old = group("train-spot", CapacityType::Spot, &["g6.xlarge"]);
        let mut new = vec![group("train-spot", CapacityType::Spot, &["g6.2xlarge"])];
        let shapes: Vec<_> = new.iter().map(shape).collect();
        name_generations(&mut new, &shapes, &[]);
        let prior = vec![
            PriorGroup {
                name: old.name.clone(),
                shape: shape(&old),
            },
            PriorGroup {
                name: new[0].name.clone(),
                shape: shapes[0].clone(),
            },
        ];
        let mut again = vec![group("train-spot", CapacityType::Spot, &["g6.2xlarge"])];
        assert!(name_generations(&mut again, &shapes, &prior).is_empty());
        assert_eq!(again[0].name, new[0].name);
    }

    #[test]
    fn names_are_salted_when_taken_and_recognised_as_the_pools() {
        let g = group("train-spot", CapacityType::Spot, &["g6.xlarge"]);
        let s = shape(&g);
        let first = generation_name("train-spot", &s, &BTreeSet::new());
        let second = generation_name("train-spot", &s, &BTreeSet::from([first.clone()]));
        assert_ne!(first, second);
        for n in [&first, &second] {
            assert_eq!(n.len(), "train-spot-".len() + GENERATION_LEN);
            assert!(is_group_of("train", n));
        }
        assert!(is_group_of("train", "train-od") && is_group_of("train", "train-spot"));
        for other in [
            "train-od2",
            "train-spot-x",
            "training-od",
            "train-gpu-abcd",
            "train-od-ABCD",
        ] {
            assert!(!is_group_of("train", other), "{other}");
        }
    }

    #[test]
    fn each_fixed_field_is_a_reason() {
        let g = group("p-spot", CapacityType::Spot, &["g6.xlarge"]);
        let base = FixedShape::of(&g, "role-a", Some(&["s1".to_string()]));
        let mut other = base.clone();
        other.image = "BOTTLEROCKET_x86_64_NVIDIA".into();
        other.node_role = "role-b".into();
        other.subnets = Some(BTreeSet::from(["s2".to_string()]));
        let why = base.roll_reasons(&other);
        assert_eq!(why.len(), 3, "{why:?}");
        let mut unknown_subnets = base.clone();
        unknown_subnets.subnets = None;
        assert!(base.roll_reasons(&unknown_subnets).is_empty());
    }
}
