//! What a cloud's node groups are like, as data ([`CloudTraits`]): the name rule, how many
//! machine types a group takes, whether operations on one cluster must run one at a time,
//! the ownership marker spelled legally there, and the system labels, taints and tags the
//! cloud adds by itself (stripped on read, so they are never a difference). Each cloud's
//! driver holds its own (`crate::clouds::<cloud>::rules`); `crate::registry` finds them.

use super::{CloudError, HealthIssue, NodeGroupStatus};
use crate::model::{CapacityType, DriverPolicy, GroupSpec, NodeClass};
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
    /// Only one group operation may run in a cluster at a time (a second one is refused as
    /// busy), so a process's changes to one cluster take turns.
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
    /// Whether a name is legal here (see [`CloudTraits::name_ok`]).
    pub(crate) name_ok: fn(&str) -> bool,
    /// The ownership marker's value for a pool name, legal on this cloud.
    pub(crate) marker_of: fn(&str) -> String,
    /// The error of a group settled in a failed state, typed from the cloud's health codes
    /// (see [`CloudTraits::failed_group`]).
    pub(crate) failed: fn(&str, &NodeGroupStatus, &[HealthIssue]) -> CloudError,
    /// How a pool's groups are named here.
    pub naming: GroupNaming,
    /// The cloud's own image name of each node image family it has (EKS `amiType`s).
    pub images: &'static [(DriverPolicy, &'static str)],
    /// What a group of this cloud's class cannot change in place, beyond what no cloud can
    /// (capacity type, machine types): `pool::drift` rolls a group when one differs.
    pub fixed: fn(&NodeClass) -> Vec<FixedField>,
}

/// How a cloud's group names are made from a pool's name (`pool::layout` builds them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupNaming {
    /// `<pool>-od` / `<pool>-spot`, a later generation `-<4 of [0-9a-z]>` after it: the
    /// pool's name as it is (EKS).
    Suffixed,
    /// The same with the pool's name as a slug of at most `len` lowercase letters, digits
    /// and `-`, starting with a letter (GKE).
    Slugged {
        /// Longest slug.
        len: usize,
    },
    /// Opaque: `go` / `gs` and `hash_len` base-36 characters of a hash of the pool's name
    /// (and of the generation), when names are too short for the pool's (AKS).
    Opaque {
        /// Hash characters after the two-letter role.
        hash_len: usize,
    },
}

/// One field a group cannot change in place: its name for messages and its canonical
/// value (`None`: left to the cloud, e.g. the cluster's subnets; never a reason to roll).
pub type FixedField = (&'static str, Option<String>);

/// A set's canonical value as a fixed field: its items sorted, deduplicated, joined by `,`.
pub fn fixed_set(items: impl Iterator<Item = String>) -> String {
    items
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(",")
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
        if g.class.cloud() != self.cloud {
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

    /// The error of group `what` settled in failed state `status` with health `issues`,
    /// typed from this cloud's health codes (EKS's quota and capacity codes), else the
    /// neutral [`CloudError::failed_group`].
    pub fn failed_group(
        &self,
        what: &str,
        status: &NodeGroupStatus,
        issues: &[HealthIssue],
    ) -> CloudError {
        (self.failed)(what, status, issues)
    }

    /// This cloud's image name for `policy`, where it has one.
    pub fn image_of(&self, policy: DriverPolicy) -> Option<&'static str> {
        self.images
            .iter()
            .find(|(p, _)| *p == policy)
            .map(|(_, i)| *i)
    }

    /// The ownership marker's value for pool `pool`, legal on this cloud (e.g. GCP label
    /// values: lowercase letters, digits, `-` and `_`, at most 63).
    pub fn marker_value(&self, pool: &str) -> String {
        (self.marker_of)(pool)
    }
}
