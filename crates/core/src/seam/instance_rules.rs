//! What a cloud's single VMs are like, as data ([`InstanceRules`]): its zones, largest boot
//! disk, label and user-data limits, image shapes, ownership marker, and how its own block
//! of a `gpu_instance` ([`InstanceBlocks`]) becomes an [`InstanceClass`]. Each cloud's
//! driver holds its own (`crate::clouds::<cloud>::instance_rules`);
//! `crate::registry::instance_rules` finds them.

use super::instances::InstanceClass;
use crate::offer::Cloud;

/// The `aws` block of a `gpu_instance`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AwsInstanceConfig {
    /// `subnet_id`.
    pub subnet_id: Option<String>,
    /// `security_group_ids`.
    pub security_group_ids: Vec<String>,
    /// `key_name`.
    pub key_name: Option<String>,
}

/// The `azure` block of a `gpu_instance`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AzureInstanceConfig {
    /// `resource_group`.
    pub resource_group: Option<String>,
    /// `subnet_id`.
    pub subnet_id: Option<String>,
    /// `admin_username` (default `azureuser`).
    pub admin_username: Option<String>,
    /// `ssh_public_key`.
    pub ssh_public_key: Option<String>,
}

/// The `gcp` block of a `gpu_instance`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcpInstanceConfig {
    /// `project` (else the provider's `gcp.project`).
    pub project: Option<String>,
    /// `network`.
    pub network: Option<String>,
    /// `subnetwork`.
    pub subnetwork: Option<String>,
    /// `service_account`.
    pub service_account: Option<String>,
}

/// Every cloud block of one `gpu_instance` (each `None` when not written), and the
/// provider's `gcp.project`: what a cloud's rules read its [`InstanceClass`] from.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstanceBlocks<'a> {
    /// The `aws` block.
    pub aws: Option<&'a AwsInstanceConfig>,
    /// The `azure` block.
    pub azure: Option<&'a AzureInstanceConfig>,
    /// The `gcp` block.
    pub gcp: Option<&'a GcpInstanceConfig>,
    /// The provider's `gcp.project`, used when `gcp.project` is unset.
    pub default_gcp_project: Option<&'a str>,
}

impl InstanceBlocks<'_> {
    /// Whether the block of `cloud` is written (a cloud without a block: never).
    pub fn written(&self, cloud: Cloud) -> bool {
        match cloud {
            Cloud::Aws => self.aws.is_some(),
            Cloud::Azure => self.azure.is_some(),
            Cloud::Gcp => self.gcp.is_some(),
            Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => false,
        }
    }
}

/// Broken rules a cloud's checks found: `(attribute as written, problem)`, in order.
pub type RuleProblems = Vec<(String, String)>;

/// The rules of one cloud's single VMs (see the module docs).
#[derive(Debug)]
pub struct InstanceRules {
    /// The cloud.
    pub cloud: Cloud,
    /// Largest boot disk, GB.
    pub max_disk_gb: i64,
    /// The labels are cloud tags under the node pool's tag rules (checked there), not
    /// under this cloud's own label rule.
    pub labels_are_pool_tags: bool,
    /// Longest user data, bytes.
    pub user_data_limit: usize,
    /// The sentence that says [`Self::user_data_limit`].
    pub user_data_rule: &'static str,
    /// The image shapes the cloud takes, for messages.
    pub image_shapes: &'static str,
    /// The label key the ownership marker is written under.
    pub marker: &'static str,
    /// The tag the cloud shows as a VM's name, set to the VM's name at launch (EC2 `Name`).
    pub name_tag: Option<&'static str>,
    /// The problem of `zone` (lower case; `None`: unset) in `region`, if any.
    pub(crate) zone_problem: fn(&str, Option<&str>) -> Option<String>,
    /// The problem of one label `(key, value)`, if any.
    pub(crate) label_problem: fn(&str, &str) -> Option<&'static str>,
    /// Whether an image id (trimmed) has a shape the cloud takes.
    pub(crate) image_ok: fn(&str) -> bool,
    /// The cloud's block checked (problems pushed) and read into its class.
    pub(crate) class: fn(&InstanceBlocks<'_>, &mut RuleProblems) -> InstanceClass,
}

impl InstanceRules {
    /// The problem of `zone` (lower case; `None`: unset) for a VM in `region`, if any.
    pub fn zone_problem(&self, region: &str, zone: Option<&str>) -> Option<String> {
        (self.zone_problem)(region, zone)
    }

    /// The problem of label `key = value` on this cloud, if any.
    pub fn label_problem(&self, key: &str, value: &str) -> Option<&'static str> {
        (self.label_problem)(key, value)
    }

    /// Whether `image` (trimmed) has a shape this cloud takes.
    pub fn image_ok(&self, image: &str) -> bool {
        (self.image_ok)(image)
    }

    /// This cloud's class of VM from `blocks`, its block's problems pushed on `problems`.
    pub fn class_of(
        &self,
        blocks: &InstanceBlocks<'_>,
        problems: &mut RuleProblems,
    ) -> InstanceClass {
        (self.class)(blocks, problems)
    }
}
