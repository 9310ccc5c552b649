//! The cloud-neutral vocabulary shared by pools, cloud adapters and prices: capacity
//! types, node counts and taints. No cloud's wire names live here; each adapter maps its
//! own (EKS `ON_DEMAND` and `NO_SCHEDULE` in `cloud::aws`).

use std::fmt;

/// The capacity a group of machines runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CapacityType {
    /// Regular on-demand VMs.
    OnDemand,
    /// Spot (preemptible) VMs.
    Spot,
    /// Capacity bought ahead: a capacity block, reservation or committed use. Pools read
    /// such groups but do not create them yet.
    Reserved,
}

impl CapacityType {
    /// The value of the `gpu.tf/capacity-type` label: `on-demand`, `spot` or `reserved`.
    pub fn label_value(self) -> &'static str {
        match self {
            CapacityType::OnDemand => "on-demand",
            CapacityType::Spot => "spot",
            CapacityType::Reserved => "reserved",
        }
    }

    /// Parses the label value, ignoring case, `-` and `_` (so `ON_DEMAND` parses too).
    pub fn parse(s: &str) -> Option<Self> {
        match s.replace(['-', '_'], "").to_ascii_lowercase().as_str() {
            "ondemand" => Some(CapacityType::OnDemand),
            "spot" => Some(CapacityType::Spot),
            "reserved" => Some(CapacityType::Reserved),
            _ => None,
        }
    }
}

impl fmt::Display for CapacityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label_value())
    }
}

/// Node counts of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Scaling {
    /// Fewest nodes.
    pub min: u32,
    /// Most nodes.
    pub max: u32,
    /// Nodes wanted now; `None` leaves the live count alone (an autoscaler owns it). A
    /// group read from a cloud always has it.
    pub desired: Option<u32>,
}

impl Scaling {
    /// Checks the counts a cloud would take: `max` at least 1, `min <= max`, `desired`
    /// (when set) within them, every count within an `i32`.
    pub fn check(&self) -> Result<(), String> {
        if self.max < 1 {
            return Err("scaling: max must be at least 1".into());
        }
        if self.min > self.max {
            return Err(format!(
                "scaling: min {} is above max {}",
                self.min, self.max
            ));
        }
        if let Some(d) = self.desired
            && (d < self.min || d > self.max)
        {
            return Err(format!(
                "scaling: desired {d} is outside [{}, {}]",
                self.min, self.max
            ));
        }
        if i32::try_from(self.max).is_err() {
            return Err("scaling: max is too large".into());
        }
        Ok(())
    }
}

/// A Kubernetes taint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Taint {
    /// Taint key, a Kubernetes qualified name.
    pub key: String,
    /// Taint value (may be empty).
    pub value: String,
    /// What the taint does to pods that do not tolerate it.
    pub effect: TaintEffect,
}

impl fmt::Display for Taint {
    /// `key=value:Effect`, the `kubectl taint` form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}:{}", self.key, self.value, self.effect)
    }
}

/// A Kubernetes taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaintEffect {
    /// `NoSchedule`: new pods without a toleration are not scheduled.
    NoSchedule,
    /// `PreferNoSchedule`: the scheduler avoids the node.
    PreferNoSchedule,
    /// `NoExecute`: running pods without a toleration are evicted.
    NoExecute,
}

impl TaintEffect {
    /// Every effect, in the order messages list them.
    pub const ALL: [TaintEffect; 3] = [
        TaintEffect::NoSchedule,
        TaintEffect::PreferNoSchedule,
        TaintEffect::NoExecute,
    ];

    /// The Kubernetes spelling: `NoSchedule`, `PreferNoSchedule`, `NoExecute`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }

    /// Parses the Kubernetes spelling, ignoring case and `_` (so the EKS and GKE API
    /// spellings `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE` parse too).
    pub fn parse(s: &str) -> Option<Self> {
        let n = s.replace('_', "").to_ascii_lowercase();
        TaintEffect::ALL
            .into_iter()
            .find(|e| e.as_str().to_ascii_lowercase() == n)
    }
}

impl fmt::Display for TaintEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
