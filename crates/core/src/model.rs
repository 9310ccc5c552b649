//! The cloud-neutral vocabulary shared by pools, cloud adapters and prices: capacity
//! types, node counts, taints and groups of nodes ([`GroupSpec`], with the [`NodeClass`] of
//! what only one cloud has). No cloud's wire names live here; each adapter maps its
//! own (EKS `ON_DEMAND` and `NO_SCHEDULE` in `clouds::aws`).

use std::collections::BTreeMap;
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

/// One group of nodes as a pool wants it (or as it was read back): the neutral part every
/// cloud has, and the [`NodeClass`] for what only its cloud has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    /// The group's name on its cloud (legal there: the cloud's layout names it).
    pub name: String,
    /// On-demand, spot or reserved.
    pub capacity: CapacityType,
    /// Machine types (EKS instance types, AKS VM size, GKE machine type), most preferred
    /// first; AKS and GKE groups hold exactly one.
    pub machine_types: Vec<String>,
    /// Node counts.
    pub scaling: Scaling,
    /// Kubernetes labels on every node.
    pub labels: BTreeMap<String, String>,
    /// Kubernetes taints on every node, sorted.
    pub taints: Vec<Taint>,
    /// Cloud resource tags (Azure tags, GCP resource labels), ownership marker included.
    pub tags: BTreeMap<String, String>,
    /// What only this group's cloud has.
    pub class: NodeClass,
}

/// The part of a group only one cloud has (Karpenter's `NodeClass`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeClass {
    /// An EKS managed node group.
    Aws(AwsClass),
    /// An AKS agent pool.
    Azure(AzureClass),
    /// A GKE node pool.
    Gcp(GcpClass),
}

/// What an EKS managed node group has that others do not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AwsClass {
    /// IAM role ARN the nodes run as.
    pub node_role: String,
    /// Subnet ids; `None` means the cluster's own, read when the group is created.
    pub subnets: Option<Vec<String>>,
    /// EKS `amiType`, e.g. `AL2023_x86_64_NVIDIA`.
    pub ami_type: String,
    /// The EC2 capacity reservation or capacity block the group's instances launch into,
    /// through a launch template the adapter writes; `None` for none. On the on-demand
    /// group only.
    pub capacity_reservation: Option<Ec2Reservation>,
}

/// An EC2 capacity reservation a node group launches into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ec2Reservation {
    /// Its id, `cr-…`.
    pub id: String,
    /// A Capacity Block for ML (the group's capacity type is then `CAPACITY_BLOCK` and the
    /// launch template's market type `capacity-block`), rather than an on-demand
    /// capacity reservation.
    pub capacity_block: bool,
}

/// What an AKS agent pool has that others do not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AzureClass {
    /// `vnetSubnetID`; `None` means the cluster's.
    pub subnet: Option<String>,
    /// Availability zones (`1`, `2`, `3`); empty means regional.
    pub zones: Vec<String>,
    /// `osSKU`, e.g. `Ubuntu` or `AzureLinux`.
    pub os_sku: String,
    /// `gpuProfile.driver`: `Install` (AKS installs the NVIDIA driver) or `None`.
    pub gpu_driver: String,
    /// A spot pool's `scaleSetEvictionPolicy` is `Deallocate` (an evicted VM is stopped
    /// with its disks, the pool's `reclaim = "stop"`) rather than `Delete`.
    pub deallocate_evicted: bool,
    /// `capacityReservationGroupID`: the capacity reservation group the floor's VMs are
    /// placed in (an `azure_capacity_reservation`'s group, ARM id in lower case); `None`
    /// for no group. Set on the on-demand pool only.
    pub capacity_reservation_group: Option<String>,
}

/// What a GKE node pool has that others do not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GcpClass {
    /// Service account e-mail of the nodes; `None` means the project's default.
    pub service_account: Option<String>,
    /// Zones of the nodes (`locations`); empty means the cluster's.
    pub locations: Vec<String>,
    /// `imageType`, e.g. `COS_CONTAINERD`.
    pub image_type: String,
    /// `gpuDriverInstallationConfig.gpuDriverVersion`: `DEFAULT`, `LATEST` or
    /// `INSTALLATION_DISABLED`.
    pub driver_version: String,
    /// GKE accelerator type of the machine's GPUs, e.g. `nvidia-l4` (`pool::layout` fills
    /// it from the pool's GPU); `None` for a machine without GPUs.
    pub accelerator_type: Option<String>,
    /// GPUs per node (`acceleratorCount`).
    pub accelerator_count: u32,
    /// `reservationAffinity`: which Compute Engine reservations the nodes consume;
    /// `None` leaves it to GKE (any matching reservation).
    pub reservation: Option<Reservation>,
}

/// A GKE node pool's reservation affinity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// `ANY_RESERVATION`: any matching reservation of the project.
    Any,
    /// `NO_RESERVATION`: never reserved capacity.
    None,
    /// `SPECIFIC_RESERVATION` of the named reservation.
    Specific(String),
}

/// The node image family, which fixes the GPU driver nodes run (a pool's `driver`; each
/// driver names its images for the families it has, `crate::seam::CloudTraits::image_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DriverPolicy {
    /// Amazon Linux 2023 with NVIDIA drivers; the default.
    #[default]
    Al2023Nvidia,
    /// Bottlerocket with NVIDIA drivers.
    BottlerocketNvidia,
}

impl DriverPolicy {
    /// Every policy, in the order messages list them.
    pub const ALL: [DriverPolicy; 2] =
        [DriverPolicy::Al2023Nvidia, DriverPolicy::BottlerocketNvidia];

    /// The spelling in configuration: `al2023_nvidia` or `bottlerocket_nvidia`.
    pub fn as_str(self) -> &'static str {
        match self {
            DriverPolicy::Al2023Nvidia => "al2023_nvidia",
            DriverPolicy::BottlerocketNvidia => "bottlerocket_nvidia",
        }
    }

    /// Whether `word` names this policy or `image` (a cloud's image name for it), ignoring
    /// case and everything but letters and digits.
    pub fn is_named(self, word: &str, image: Option<&str>) -> bool {
        let squash = |x: &str| -> String {
            x.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let n = squash(word);
        n == squash(self.as_str()) || image.is_some_and(|i| n == squash(i))
    }
}

impl NodeClass {
    /// The cloud a group of this class runs on.
    pub fn cloud(&self) -> crate::offer::Cloud {
        match self {
            NodeClass::Aws(_) => crate::offer::Cloud::Aws,
            NodeClass::Azure(_) => crate::offer::Cloud::Azure,
            NodeClass::Gcp(_) => crate::offer::Cloud::Gcp,
        }
    }

    /// The node image as a word for state and messages: the AMI type, OS SKU or image type.
    pub fn image(&self) -> &str {
        match self {
            NodeClass::Aws(c) => &c.ami_type,
            NodeClass::Azure(c) => &c.os_sku,
            NodeClass::Gcp(c) => &c.image_type,
        }
    }
}

impl Scaling {
    /// The counts to send when a group with live counts `live` becomes `self`: `self`'s
    /// bounds, and its desired count or else the live one, clamped into the bounds.
    pub fn resolved_against(self, live: Option<Scaling>) -> Scaling {
        let live_count = live.map(|l| l.desired.unwrap_or(l.min));
        let want = self.desired.or(live_count).unwrap_or(self.min);
        Scaling {
            desired: Some(want.clamp(self.min, self.max.max(self.min))),
            ..self
        }
    }
}
