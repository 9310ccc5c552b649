//! What each cloud's node groups are like, as data: the name rule, how many machine types
//! a group takes, whether operations on one cluster must run one at a time, the ownership
//! marker spelled legally there, and the system labels, taints and tags the cloud adds by
//! itself (stripped on read, so they are never a difference).

use crate::model::{CapacityType, GroupSpec, NodeClass};
use crate::offer::Cloud;

/// The rules of one cloud's node groups (see the module docs).
#[derive(Debug)]
pub struct CloudTraits {
    /// The cloud.
    pub cloud: Cloud,
    /// The managed Kubernetes service: `EKS`, `AKS`, `GKE`.
    pub service: &'static str,
    /// What that service calls a group: `node group`, `agent pool`, `node pool`.
    pub noun: &'static str,
    /// The name rule, for messages.
    pub name_rule: &'static str,
    /// Longest legal group name.
    pub max_name_len: usize,
    /// Most machine types one group may hold (AKS and GKE: one).
    pub machine_types_per_group: usize,
    /// Only one group operation may run in a cluster at a time (AKS answers 409
    /// `OperationNotAllowed` otherwise, GKE 400 `FAILED_PRECONDITION` "Cluster is running
    /// incompatible operation"), so creates and deletes are serialized.
    pub serial_operations: bool,
    /// Autoscaling bounds count per zone (GKE), not per group.
    pub scaling_per_zone: bool,
    /// A reclaimed spot VM can be stopped with its disks instead of deleted.
    pub stop_on_reclaim: bool,
    /// The cloud tag (GCP resource label) that marks a group as a pool's; its value is the
    /// pool's name.
    pub ownership_tag: &'static str,
    /// Label key prefixes the cloud sets itself.
    pub system_label_prefixes: &'static [&'static str],
    /// Taint key prefixes the cloud sets itself.
    pub system_taint_prefixes: &'static [&'static str],
    /// Tag key prefixes the cloud sets itself.
    pub system_tag_prefixes: &'static [&'static str],
    name_ok: fn(&str) -> bool,
}

/// EKS managed node groups.
pub static EKS: CloudTraits = CloudTraits {
    cloud: Cloud::Aws,
    service: "EKS",
    noun: "node group",
    name_rule: "1-63 letters, digits, '-' and '_', starting with a letter or digit",
    max_name_len: 63,
    machine_types_per_group: 20,
    serial_operations: false,
    scaling_per_zone: false,
    stop_on_reclaim: false,
    ownership_tag: "gpu.tf/pool",
    system_label_prefixes: &[],
    system_taint_prefixes: &[],
    system_tag_prefixes: &["aws:"],
    name_ok: eks_name_ok,
};

/// AKS agent pools.
pub static AKS: CloudTraits = CloudTraits {
    cloud: Cloud::Azure,
    service: "AKS",
    noun: "agent pool",
    name_rule: "1-12 lowercase letters and digits, starting with a letter",
    max_name_len: 12,
    machine_types_per_group: 1,
    serial_operations: true,
    scaling_per_zone: false,
    stop_on_reclaim: true,
    ownership_tag: "gpu-tf-pool",
    system_label_prefixes: &["kubernetes.azure.com/"],
    system_taint_prefixes: &["kubernetes.azure.com/"],
    system_tag_prefixes: &["aks-managed-"],
    name_ok: aks_name_ok,
};

/// GKE node pools.
pub static GKE: CloudTraits = CloudTraits {
    cloud: Cloud::Gcp,
    service: "GKE",
    noun: "node pool",
    name_rule: "1-40 lowercase letters, digits and '-', starting with a letter, not ending with '-'",
    max_name_len: 40,
    machine_types_per_group: 1,
    serial_operations: true,
    scaling_per_zone: true,
    stop_on_reclaim: false,
    ownership_tag: "gpu-tf-pool",
    system_label_prefixes: &["cloud.google.com/"],
    // GKE taints every GPU node `nvidia.com/gpu=present:NoSchedule` itself.
    system_taint_prefixes: &["nvidia.com/gpu"],
    system_tag_prefixes: &["goog-"],
    name_ok: gke_name_ok,
};

/// The traits of `cloud`'s node groups; `None` for a cloud without managed Kubernetes here.
pub fn of(cloud: Cloud) -> Option<&'static CloudTraits> {
    match cloud {
        Cloud::Aws => Some(&EKS),
        Cloud::Azure => Some(&AKS),
        Cloud::Gcp => Some(&GKE),
        _ => None,
    }
}

/// The traits of the cloud a group of `class` belongs to.
pub fn of_class(class: &NodeClass) -> &'static CloudTraits {
    match class {
        NodeClass::Aws(_) => &EKS,
        NodeClass::Azure(_) => &AKS,
        NodeClass::Gcp(_) => &GKE,
    }
}

impl CloudTraits {
    /// A group named for messages: `EKS node group`, `AKS agent pool`.
    pub fn kind(&self) -> String {
        format!("{} {}", self.service, self.noun)
    }

    /// Whether `name` is a legal group name here.
    pub fn name_ok(&self, name: &str) -> bool {
        (self.name_ok)(name)
    }

    /// The checks this cloud makes before a group is created, so a bad group fails
    /// without a call: a legal name, 1 to [`Self::machine_types_per_group`] machine types,
    /// a class of this cloud, counts it takes, and no reserved capacity (not managed yet).
    pub fn check_group(&self, g: &GroupSpec) -> Result<(), String> {
        if !self.name_ok(&g.name) {
            return Err(format!(
                "{} name {:?} is not legal: {}",
                self.kind(),
                g.name,
                self.name_rule
            ));
        }
        let n = g.machine_types.len();
        if n == 0 || n > self.machine_types_per_group {
            return Err(format!(
                "an {} holds 1 to {} machine types, not {n}",
                self.kind(),
                self.machine_types_per_group
            ));
        }
        if of_class(&g.class).cloud != self.cloud {
            return Err(format!(
                "an {} needs a {} node class",
                self.kind(),
                self.cloud
            ));
        }
        if g.capacity == CapacityType::Reserved {
            return Err(format!(
                "{}s on reserved capacity are not managed by pools yet",
                self.kind()
            ));
        }
        if let NodeClass::Aws(c) = &g.class
            && c.subnets.as_ref().is_some_and(Vec::is_empty)
        {
            return Err("at least one subnet is needed".into());
        }
        g.scaling.check()
    }

    /// Removes the labels, taints and tags this cloud sets by itself from a group read
    /// back, so that only what a pool asked for is compared.
    pub fn strip_system(&self, g: &mut GroupSpec) {
        let sys = |k: &str, prefixes: &[&str]| prefixes.iter().any(|p| k.starts_with(p));
        g.labels.retain(|k, _| !sys(k, self.system_label_prefixes));
        g.taints
            .retain(|t| !sys(&t.key, self.system_taint_prefixes));
        g.tags.retain(|k, _| !sys(k, self.system_tag_prefixes));
    }

    /// Whether `g` carries this cloud's ownership marker for pool `pool`.
    pub fn owned_by(&self, g: &GroupSpec, pool: &str) -> bool {
        g.tags
            .get(self.ownership_tag)
            .is_some_and(|v| v == &self.marker_value(pool))
    }

    /// The ownership marker's value for pool `pool`, legal on this cloud (GCP label
    /// values: lowercase letters, digits, `-` and `_`, at most 63).
    pub fn marker_value(&self, pool: &str) -> String {
        if self.cloud == Cloud::Gcp {
            let v: String = pool
                .to_ascii_lowercase()
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(63)
                .collect();
            return v;
        }
        pool.to_string()
    }
}

fn eks_name_ok(n: &str) -> bool {
    (1..=63).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_alphanumeric())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn aks_name_ok(n: &str) -> bool {
    (1..=12).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

fn gke_name_ok(n: &str) -> bool {
    (1..=40).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && !n.ends_with('-')
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules_follow_each_cloud() {
        assert!(EKS.name_ok("train-spot-k3x9"));
        assert!(EKS.name_ok("Train_1"));
        assert!(!EKS.name_ok(&"a".repeat(64)));
        assert!(!EKS.name_ok("-x"));
        assert!(AKS.name_ok("gs0123456789"));
        assert!(!AKS.name_ok("gs01234567890"), "13 characters");
        assert!(!AKS.name_ok("train-od"), "no '-' in AKS pool names");
        assert!(!AKS.name_ok("1abc"));
        assert!(GKE.name_ok("train-floor-k3x9"));
        assert!(!GKE.name_ok("Train"));
        assert!(!GKE.name_ok("train-"));
        assert!(!GKE.name_ok(&format!("a{}", "b".repeat(40))));
    }

    #[test]
    fn ownership_markers_are_legal_tag_names_on_their_cloud() {
        // Azure tag names may not hold '/', GCP label keys only [a-z0-9_-].
        assert!(!AKS.ownership_tag.contains('/'));
        assert!(
            GKE.ownership_tag
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        );
        assert_eq!(GKE.marker_value("Train.A"), "train_a");
        assert_eq!(AKS.marker_value("Train.A"), "Train.A");
    }
}
