//! The seam for single VMs: the [`Instances`] trait each cloud's driver implements (image
//! lookup, launch, read, find by marker, list ours, start, label, delete) and the neutral
//! types it speaks, among them what a reclaim does ([`ReclaimPolicy`]) and why a VM is
//! stopped ([`StopCause`], which each driver reads from its cloud's own record). Nothing
//! here stops or deletes a VM on its own.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::CloudError;
use crate::offer::Cloud;
use crate::pace::Pace;

/// AWS tag key every VM we launch carries; its value is the VM's key ([`marker_key`]).
pub const MARKER_TAG: &str = "gpu.tf/instance";
/// The same marker where `/` is illegal: Google Cloud labels and Azure tag names.
pub const MARKER_LABEL: &str = "gpu-tf-instance";

/// The marker's key of a VM: its name, which is unique where the cloud names VMs
/// (a zone on Google Cloud, a resource group on Azure) and chosen unique on AWS.
pub fn marker_key(name: &str) -> String {
    name.to_string()
}

/// What a reclaim does to a spot VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReclaimPolicy {
    /// Stopped (deallocated), disks kept: EC2 interruption behaviour `stop` on a persistent
    /// request, Compute `instanceTerminationAction = STOP`, Azure `evictionPolicy =
    /// Deallocate`. The default.
    #[default]
    Stop,
    /// Deleted with its disks (EC2 `terminate`, Compute `DELETE`, Azure `Delete`).
    Delete,
}

impl ReclaimPolicy {
    /// `stop` or `delete`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReclaimPolicy::Stop => "stop",
            ReclaimPolicy::Delete => "delete",
        }
    }

    /// Parses `stop` / `delete`, any case.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stop" => Some(ReclaimPolicy::Stop),
            "delete" => Some(ReclaimPolicy::Delete),
            _ => None,
        }
    }
}

/// Why a stopped VM stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopCause {
    /// The cloud took the spot capacity back: the watcher starts it again.
    Reclaim,
    /// Someone stopped it (API, console, or from inside the VM): left alone.
    Person,
    /// Anything else (a scheduled retirement, an unknown code): left alone, reported
    /// with the cloud's own words.
    Other(String),
}

impl StopCause {
    /// Whether a watcher may start the VM again.
    pub fn restartable(&self) -> bool {
        *self == StopCause::Reclaim
    }
}

/// The image a VM boots, as its cloud names it, and where that choice came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// AWS `ami-…`; Google Cloud `projects/p/global/images/i`; Azure
    /// `publisher:offer:sku:version` or an image's ARM id.
    pub id: String,
    /// Human words: the AMI's name, the image family, the marketplace offer.
    pub description: String,
}

/// What only one cloud needs to launch a VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstanceClass {
    /// EC2.
    Aws {
        /// Subnet (none: the default VPC's subnet of the zone).
        subnet_id: Option<String>,
        /// Security groups (none: the VPC's default).
        security_group_ids: Vec<String>,
        /// EC2 key pair.
        key_name: Option<String>,
    },
    /// Azure virtual machines.
    Azure {
        /// Resource group of the VM and its disk and NIC.
        resource_group: String,
        /// The subnet's ARM id the NIC joins.
        subnet_id: String,
        /// Linux admin user.
        admin_username: String,
        /// Its SSH public key (not a secret, but never logged anyway).
        ssh_public_key: String,
    },
    /// Compute Engine.
    Gcp {
        /// Project.
        project: String,
        /// Network (`default` when unset).
        network: Option<String>,
        /// Subnetwork.
        subnetwork: Option<String>,
        /// Service account e-mail (none: no service account).
        service_account: Option<String>,
    },
}

/// Everything a launch needs, already checked and canonical.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchSpec {
    /// The VM's name in its cloud (AWS: the `Name` tag).
    pub name: String,
    /// Region.
    pub region: String,
    /// Zone: required on Google Cloud; on AWS and Azure `None` lets the cloud choose.
    pub zone: Option<String>,
    /// Machine type / VM size.
    pub machine_type: String,
    /// Spot (else on-demand / regular).
    pub spot: bool,
    /// What a reclaim does to a spot VM.
    pub reclaim: ReclaimPolicy,
    /// Boot image.
    pub image: String,
    /// Boot disk size, GB.
    pub disk_size_gb: u32,
    /// Cloud tags / labels, the ownership marker included.
    pub labels: BTreeMap<String, String>,
    /// User data / cloud-init, as written (the adapter encodes it).
    pub user_data: Option<String>,
    /// The cloud's own settings.
    pub class: InstanceClass,
}

/// Power state, neutral.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerState {
    /// Being created or started (EC2 `pending`, Compute `PROVISIONING`/`STAGING`, Azure
    /// `starting`).
    Starting,
    /// Running.
    Running,
    /// Stopping (EC2 `stopping`, Compute `STOPPING`, Azure `deallocating`/`stopping`).
    Stopping,
    /// Stopped with its disks (EC2 `stopped`, Compute `TERMINATED`/`SUSPENDED`, Azure
    /// `deallocated`/`stopped`).
    Stopped,
    /// Being deleted or gone (EC2 `shutting-down`/`terminated`).
    Terminated,
}

impl PowerState {
    /// Lower-case word.
    pub fn as_str(self) -> &'static str {
        match self {
            PowerState::Starting => "starting",
            PowerState::Running => "running",
            PowerState::Stopping => "stopping",
            PowerState::Stopped => "stopped",
            PowerState::Terminated => "terminated",
        }
    }
}

/// One VM as its cloud reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveInstance {
    /// How the adapter addresses it: EC2 `i-…`, Compute
    /// `projects/p/zones/z/instances/n`, Azure the VM's ARM id.
    pub id: String,
    /// The cloud's own unique id, which a delete and re-create would change: EC2 `i-…`,
    /// Compute's numeric `id`, Azure's `vmId`.
    pub unique_id: String,
    /// Name (AWS: the `Name` tag).
    pub name: String,
    /// Region.
    pub region: String,
    /// Zone, when the VM has one.
    pub zone: Option<String>,
    /// Machine type / VM size.
    pub machine_type: String,
    /// Spot.
    pub spot: bool,
    /// Reclaim behaviour as the cloud records it (`None` for on-demand).
    pub reclaim: Option<ReclaimPolicy>,
    /// Boot image as the cloud reports it (may be empty where the cloud forgets it).
    pub image: String,
    /// Boot disk size, GB (0 when unknown).
    pub disk_size_gb: u32,
    /// Power state.
    pub power: PowerState,
    /// Why it is stopped, when stopped (or stopping).
    pub stop_cause: Option<StopCause>,
    /// The latest reclaim the cloud still records (unix seconds), even if running again.
    pub last_reclaim: Option<i64>,
    /// Disks attached, boot disk first, as the cloud addresses them (EC2 `vol-…`, Compute
    /// `projects/p/zones/z/disks/d`, Azure ARM ids).
    pub disk_ids: Vec<String>,
    /// Tags / labels, the cloud's own stripped, the ownership marker kept.
    pub labels: BTreeMap<String, String>,
    /// Whether the cloud restarts a reclaimed VM itself (EC2 persistent spot requests):
    /// a watcher then only watches.
    pub restarts_itself: bool,
}

impl LiveInstance {
    /// The ownership marker's value, if the VM carries one.
    pub fn marker(&self) -> Option<&str> {
        self.labels
            .get(MARKER_TAG)
            .or_else(|| self.labels.get(MARKER_LABEL))
            .map(String::as_str)
    }
}

/// Single VMs on one cloud (one region on AWS; one project on Google Cloud; one
/// subscription on Azure). Implementations retry throttling inside each call.
#[async_trait]
pub trait Instances: Send + Sync {
    /// The cloud.
    fn cloud(&self) -> Cloud;

    /// This client's clock: what a wait for one of its VMs (`capacity_wait`) counts, the
    /// test-only time scale applied ([`crate::pace`]).
    fn pace(&self) -> Pace;

    /// The cloud's own validated NVIDIA driver + CUDA image for GPU VMs in `region`,
    /// looked up now (the newest of its family).
    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError>;

    /// Launches `spec` and returns it as first reported. Safe to repeat: a VM already
    /// launched for `spec` (same name and marker) is returned instead of a second one.
    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError>;

    /// Reads a VM by [`LiveInstance::id`]; `Ok(None)` when it is gone.
    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError>;

    /// The VM carrying the marker `key` in `spec`'s place, if any (finds a launch whose
    /// answer was lost).
    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError>;

    /// Every VM carrying the ownership marker in scope.
    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError>;

    /// Every live VM in scope that carries the ownership marker or whose machine type
    /// `gpu` takes (the catalog's GPU machine types; on Compute Engine also any VM with
    /// accelerators attached): the inventory's GPU VMs, the provider's or not.
    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError>;

    /// Starts a stopped VM (returns once the cloud accepted it; an insufficient-capacity
    /// answer is [`CloudError::InsufficientCapacity`]).
    async fn start(&self, id: &str) -> Result<(), CloudError>;

    /// Replaces the VM's user labels with `labels` (the marker and the cloud's own kept).
    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError>;

    /// Deletes the VM and the disks created with it (and anything that would relaunch
    /// it: an EC2 persistent spot request); returns once the cloud accepted it.
    async fn delete(&self, id: &str) -> Result<(), CloudError>;
}

/// Whether a machine type (EC2 instance type, Compute Engine machine type, Azure VM size)
/// has GPUs.
pub type GpuMachine<'a> = dyn Fn(&str) -> bool + Send + Sync + 'a;

/// A shared client is a client (tests hand one fake to every place through a connector).
#[async_trait]
impl<T: Instances + ?Sized> Instances for std::sync::Arc<T> {
    fn cloud(&self) -> Cloud {
        (**self).cloud()
    }

    fn pace(&self) -> Pace {
        (**self).pace()
    }

    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError> {
        (**self).default_image(region).await
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        (**self).launch(spec).await
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        (**self).get(id).await
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        (**self).find(spec).await
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        (**self).list_managed().await
    }

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        (**self).list_gpu(gpu).await
    }

    async fn start(&self, id: &str) -> Result<(), CloudError> {
        (**self).start(id).await
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        (**self).set_labels(id, labels).await
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        (**self).delete(id).await
    }
}
