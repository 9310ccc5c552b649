//! A `gpu_instance` as the user wrote it ([`InstanceConfig`]) checked into an
//! [`InstanceSpec`]: every broken rule named by its attribute, before any cloud call. The
//! GPU, region and catalog rules are the node pool's own (a one-node pool), so the two
//! resources accept and price the same things.

use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::freshness::Freshness;
use crate::gpu::{self, GpuModel};
use crate::offer::Cloud;
use crate::pool::{self, ChosenType, FieldError, NodePoolConfig, NodePoolSpec, spelling};

use crate::seam::instances::{InstanceClass, MARKER_LABEL, MARKER_TAG, ReclaimPolicy};

/// The `aws` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AwsInstanceConfig {
    /// `subnet_id`.
    pub subnet_id: Option<String>,
    /// `security_group_ids`.
    pub security_group_ids: Vec<String>,
    /// `key_name`.
    pub key_name: Option<String>,
}

/// The `azure` block.
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

/// The `gcp` block.
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

/// A `gpu_instance` configuration, unchecked; field names are the attribute names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstanceConfig {
    /// `cloud`.
    pub cloud: String,
    /// `region`.
    pub region: String,
    /// `zone`.
    pub zone: Option<String>,
    /// `name` (none: generated at create).
    pub name: Option<String>,
    /// `gpu`.
    pub gpu: Option<String>,
    /// `gpu_count` (default 1 with `gpu`).
    pub gpu_count: Option<i64>,
    /// `instance_type`.
    pub instance_type: Option<String>,
    /// `spot`.
    pub spot: bool,
    /// `reclaim`.
    pub reclaim: Option<String>,
    /// `image`.
    pub image: Option<String>,
    /// `disk_size_gb`.
    pub disk_size_gb: Option<i64>,
    /// `labels` over the provider's `default_labels`.
    pub labels: BTreeMap<String, String>,
    /// `user_data`.
    pub user_data: Option<String>,
    /// The `aws` block, if written.
    pub aws: Option<AwsInstanceConfig>,
    /// The `azure` block, if written.
    pub azure: Option<AzureInstanceConfig>,
    /// The `gcp` block, if written.
    pub gcp: Option<GcpInstanceConfig>,
    /// The provider's `gcp.project`, used when `gcp.project` is unset.
    pub default_gcp_project: Option<String>,
}

/// A checked `gpu_instance`, canonical spellings throughout.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceSpec {
    /// Cloud.
    pub cloud: Cloud,
    /// Region as the cloud spells it.
    pub region: String,
    /// Zone (Azure: `1`, `2` or `3`).
    pub zone: Option<String>,
    /// The name asked for, if any.
    pub name: Option<String>,
    /// GPU model.
    pub gpu: &'static GpuModel,
    /// GPUs on the VM.
    pub gpu_count: u32,
    /// The instance type pinned (`None`: choose from the catalog).
    pub instance_type: Option<String>,
    /// Spot.
    pub spot: bool,
    /// Reclaim behaviour (meaningful with `spot`).
    pub reclaim: ReclaimPolicy,
    /// Image asked for (`None`: the cloud's default GPU image, looked up).
    pub image: Option<String>,
    /// Boot disk, GB.
    pub disk_size_gb: u32,
    /// Labels / tags.
    pub labels: BTreeMap<String, String>,
    /// User data.
    pub user_data: Option<String>,
    /// The cloud's own settings.
    pub class: InstanceClass,
}

/// Default boot disk: room for a CUDA image, a container cache and model weights.
pub const DEFAULT_DISK_GB: u32 = 200;
/// Smallest boot disk accepted: the GPU images themselves need tens of GB.
pub const MIN_DISK_GB: u32 = 50;
/// Longest `name`: room for a generation suffix within Compute's 63 characters.
pub const MAX_NAME_LEN: usize = 57;

impl InstanceConfig {
    /// Checks every rule against `catalog`; every problem at once.
    pub fn validate(&self, catalog: &Catalog) -> Result<InstanceSpec, Vec<FieldError>> {
        validate(self, catalog)
    }
}

impl InstanceSpec {
    /// The instance as a pool of exactly one node (spot or on-demand), so the node pool's
    /// catalog choice and pricing apply unchanged.
    pub fn as_pool(&self) -> NodePoolSpec {
        NodePoolSpec {
            cloud: self.cloud,
            region: self.region.clone(),
            cluster: "instance".into(),
            name: self.name.clone().unwrap_or_else(|| "instance".into()),
            gpu: self.gpu,
            gpu_count: self.gpu_count,
            instance_types: self.instance_type.iter().cloned().collect(),
            min_nodes: 1,
            max_nodes: 1,
            desired_nodes: Some(1),
            capacity: pool::CapacitySpec {
                spot: self.spot,
                on_demand_min: 0,
            },
            reclaim: pool::Reclaim::Delete,
            driver: pool::DriverPolicy::default(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            tags: BTreeMap::new(),
            reservation: None,
        }
    }

    /// The instance type with its catalog prices: the pinned one, or the cheapest for the
    /// GPUs (by spot price when `spot`); `None` when the catalog has none `fresh` allows.
    pub fn chosen_type(&self, catalog: &Catalog, fresh: &Freshness) -> Option<ChosenType> {
        pool::instance_types(&self.as_pool(), catalog, 1, fresh)
            .into_iter()
            .next()
    }
}

struct Problems(Vec<FieldError>);

impl Problems {
    fn push(&mut self, attribute: impl Into<String>, problem: impl Into<String>) {
        self.0.push(FieldError {
            attribute: attribute.into(),
            problem: problem.into(),
        });
    }
}

fn validate(c: &InstanceConfig, catalog: &Catalog) -> Result<InstanceSpec, Vec<FieldError>> {
    let mut p = Problems(Vec::new());
    let cloud = match spelling::cloud(&c.cloud) {
        Some(cl @ (Cloud::Aws | Cloud::Azure | Cloud::Gcp)) => Some(cl),
        _ => {
            p.push(
                "cloud",
                format!(
                    "{:?} is not a cloud gpu_instance runs on; valid: \"aws\", \"azure\", \"gcp\"",
                    c.cloud
                ),
            );
            None
        }
    };
    let region = spelling::region(cloud, &c.region);
    let instance_type = c
        .instance_type
        .as_deref()
        .map(|t| spelling::instance_type(catalog, cloud, t));
    let (gpu, gpu_count) = gpu_of(&mut p, c, cloud, &region, instance_type.as_deref(), catalog);
    // The node pool's own rules for cloud, region, GPU, count, instance type and tags.
    if let (Some(cl), Some(g)) = (cloud, gpu) {
        let as_pool = NodePoolConfig {
            cloud: cl.as_str().into(),
            region: region.clone(),
            cluster: "instance".into(),
            name: "instance".into(),
            gpu: g.name.into(),
            gpu_count: i64::from(gpu_count.unwrap_or(1)),
            instance_types: instance_type.iter().cloned().collect(),
            min_nodes: 1,
            max_nodes: 1,
            spot: c.spot,
            tags: if cl == Cloud::Aws {
                c.labels.clone()
            } else {
                BTreeMap::new()
            },
            ..NodePoolConfig::default()
        };
        if let Err(e) = as_pool.validate(catalog) {
            // The pool's cluster and name are stand-ins here: their rules do not apply.
            for f in
                e.0.into_iter()
                    .filter(|f| f.attribute != "cluster" && f.attribute != "name")
            {
                let attribute = if f.attribute == "instance_types" {
                    "instance_type".to_string()
                } else if let Some(rest) = f.attribute.strip_prefix("tags") {
                    format!("labels{rest}")
                } else {
                    f.attribute
                };
                let problem = f.problem.replace("per node", "per instance");
                if !p
                    .0
                    .iter()
                    .any(|q| q.attribute == attribute && q.problem == problem)
                {
                    p.push(attribute, problem);
                }
            }
        }
    }
    let zone = check_zone(&mut p, cloud, &region, c.zone.as_deref());
    let reclaim = match c.reclaim.as_deref() {
        None => Some(ReclaimPolicy::Stop),
        Some(r) => match ReclaimPolicy::parse(r) {
            Some(_) if !c.spot => {
                p.push(
                    "reclaim",
                    "only a spot instance is reclaimed; remove `reclaim` or set `spot = true`",
                );
                None
            }
            Some(v) => Some(v),
            None => {
                p.push(
                    "reclaim",
                    format!("{r:?} is not valid; valid: \"stop\" (keep the VM and its disks, start it again) or \"delete\""),
                );
                None
            }
        },
    };
    check_name(&mut p, c.name.as_deref());
    let disk_size_gb = check_disk(&mut p, cloud, c.disk_size_gb);
    check_labels(&mut p, cloud, &c.labels);
    check_user_data(&mut p, cloud, c.user_data.as_deref());
    if let (Some(cl), Some(image)) = (cloud, c.image.as_deref()) {
        check_image(&mut p, cl, image);
    }
    let class = cloud.and_then(|cl| class_of(&mut p, cl, c));
    match (cloud, gpu, gpu_count, reclaim, disk_size_gb, class) {
        (Some(cloud), Some(gpu), Some(gpu_count), Some(reclaim), Some(disk), Some(class))
            if p.0.is_empty() =>
        {
            Ok(InstanceSpec {
                cloud,
                region,
                zone,
                name: c.name.clone(),
                gpu,
                gpu_count,
                instance_type,
                spot: c.spot,
                reclaim,
                image: c.image.as_ref().map(|s| s.trim().to_string()),
                disk_size_gb: disk,
                labels: c.labels.clone(),
                user_data: c.user_data.clone(),
                class,
            })
        }
        _ => Err(p.0),
    }
}

/// The GPU and count: from `gpu` (+ `gpu_count`), or from the catalog's row of
/// `instance_type`; exactly one of the two ways.
fn gpu_of(
    p: &mut Problems,
    c: &InstanceConfig,
    cloud: Option<Cloud>,
    region: &str,
    instance_type: Option<&str>,
    catalog: &Catalog,
) -> (Option<&'static GpuModel>, Option<u32>) {
    let count = match c.gpu_count {
        None => Some(None),
        Some(n) if (1..=16).contains(&n) => Some(Some(n as u32)),
        Some(n) => {
            let got = if n == pool::validate::NOT_A_WHOLE_NUMBER {
                "is not a whole number".to_string()
            } else {
                format!("is {n}")
            };
            p.push("gpu_count", format!("{got}; GPUs per instance are 1 to 16"));
            None
        }
    };
    match (c.gpu.as_deref(), instance_type) {
        (Some(_), Some(_)) => {
            p.push(
                "instance_type",
                "set `gpu` (with `gpu_count`) or `instance_type`, not both",
            );
            (None, None)
        }
        (None, None) => {
            p.push(
                "gpu",
                "set `gpu` (with `gpu_count`), or `instance_type`: which GPUs the instance has",
            );
            (None, None)
        }
        (Some(g), None) => match gpu::lookup(g) {
            Ok(m) => (Some(m), count.map(|n| n.unwrap_or(1))),
            Err(e) => {
                p.push("gpu", e.to_string());
                (None, None)
            }
        },
        (None, Some(t)) => {
            if c.gpu_count.is_some() {
                p.push(
                    "gpu_count",
                    "goes with `gpu`; an `instance_type` has its own GPUs",
                );
            }
            let Some(cloud) = cloud else {
                return (None, None);
            };
            let row = catalog
                .offers()
                .iter()
                .find(|o| o.cloud == cloud && o.instance_type == t);
            match row {
                Some(o) => (
                    Some(o.gpu),
                    o.gpu_count
                        .filter(|n| n.fract() == 0.0 && *n >= 1.0)
                        .map(|n| n as u32),
                ),
                None => {
                    let mut known: Vec<&str> = catalog
                        .offers()
                        .iter()
                        .filter(|o| o.cloud == cloud && o.region == region)
                        .map(|o| o.instance_type.as_str())
                        .collect();
                    known.sort_unstable();
                    known.dedup();
                    let shown: Vec<&str> = known.iter().take(12).copied().collect();
                    p.push(
                        "instance_type",
                        format!(
                            "{t:?} is not a GPU instance type on {cloud} in the catalog; {} in {region:?}: {}{}",
                            if known.is_empty() { "no types" } else { "types" },
                            shown.join(", "),
                            if known.len() > shown.len() { ", …" } else { "" }
                        ),
                    );
                    (None, None)
                }
            }
        }
    }
}

fn check_zone(
    p: &mut Problems,
    cloud: Option<Cloud>,
    region: &str,
    zone: Option<&str>,
) -> Option<String> {
    let z = zone.map(|z| z.trim().to_ascii_lowercase());
    match (cloud, z) {
        (Some(Cloud::Gcp), None) => {
            p.push(
                "zone",
                format!("Compute Engine places a VM in a zone: set it, e.g. \"{region}-a\""),
            );
            None
        }
        (Some(Cloud::Azure), Some(z)) => {
            if !matches!(z.as_str(), "1" | "2" | "3") {
                p.push(
                    "zone",
                    format!("{z:?} is not an Azure availability zone; valid: \"1\", \"2\", \"3\" (or unset: no zone)"),
                );
            }
            Some(z)
        }
        (Some(Cloud::Aws | Cloud::Gcp), Some(z)) => {
            let suffix = z.strip_prefix(region).and_then(|s| {
                if cloud == Some(Cloud::Gcp) {
                    s.strip_prefix('-')
                } else {
                    Some(s)
                }
            });
            if !suffix.is_some_and(|s| s.len() == 1 && s.chars().all(|c| c.is_ascii_lowercase())) {
                let example = if cloud == Some(Cloud::Gcp) {
                    format!("{region}-a")
                } else {
                    format!("{region}a")
                };
                p.push(
                    "zone",
                    format!("{z:?} is not a zone of region {region:?}; e.g. \"{example}\""),
                );
            }
            Some(z)
        }
        (_, z) => z,
    }
}

fn check_name(p: &mut Problems, name: Option<&str>) {
    let Some(n) = name else { return };
    let ok = n.len() <= MAX_NAME_LEN
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && !n.ends_with('-')
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        p.push(
            "name",
            format!("{n:?} is not valid: 1 to {MAX_NAME_LEN} of lower-case letters, digits and `-`, starting with a letter and not ending with `-` (a name every cloud accepts)"),
        );
    }
}

fn check_disk(p: &mut Problems, cloud: Option<Cloud>, gb: Option<i64>) -> Option<u32> {
    let max: i64 = match cloud {
        Some(Cloud::Azure) => 4095,
        Some(Cloud::Gcp) => 65536,
        _ => 16384,
    };
    match gb {
        None => Some(DEFAULT_DISK_GB),
        Some(n) if (i64::from(MIN_DISK_GB)..=max).contains(&n) => Some(n as u32),
        Some(n) => {
            let got = if n == pool::validate::NOT_A_WHOLE_NUMBER {
                "is not a whole number".to_string()
            } else {
                format!("is {n}")
            };
            p.push(
                "disk_size_gb",
                format!(
                    "{got}; the boot disk is {MIN_DISK_GB} to {max} GB{}",
                    cloud.map(|c| format!(" on {c}")).unwrap_or_default()
                ),
            );
            None
        }
    }
}

fn check_labels(p: &mut Problems, cloud: Option<Cloud>, labels: &BTreeMap<String, String>) {
    for (k, v) in labels {
        let attr = format!("labels[{k:?}]");
        if k == MARKER_TAG || k == MARKER_LABEL || k.starts_with("gpu.tf/") {
            p.push(
                &attr,
                "the prefix `gpu.tf/` and the key `gpu-tf-instance` are the provider's; use another key",
            );
            continue;
        }
        match cloud {
            Some(Cloud::Gcp) => {
                let key_ok = (1..=63).contains(&k.len())
                    && k.starts_with(|c: char| c.is_ascii_lowercase())
                    && k.chars().all(gcp_label_char);
                let value_ok = v.len() <= 63 && v.chars().all(gcp_label_char);
                if !key_ok || !value_ok {
                    p.push(
                        &attr,
                        "Compute Engine labels are lower-case letters, digits, `_` and `-`, at most 63 each, and keys start with a letter",
                    );
                }
            }
            Some(Cloud::Azure)
                if k.is_empty()
                    || k.chars().count() > 512
                    || k.chars().any(|c| "<>%&\\?/".contains(c))
                    || v.chars().count() > 256 =>
            {
                p.push(
                    &attr,
                    "Azure tag names are 1 to 512 characters without `<>%&\\?/`, values at most 256",
                );
            }
            _ => {} // AWS tags: the node pool's rules, applied above.
        }
    }
}

fn gcp_label_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
}

fn check_user_data(p: &mut Problems, cloud: Option<Cloud>, data: Option<&str>) {
    let Some(d) = data else { return };
    let (limit, what) = match cloud {
        Some(Cloud::Aws) => (16 * 1024, "EC2 takes at most 16 KB of user data"),
        Some(Cloud::Azure) => (
            49_149,
            "Azure takes at most 64 KB of base64 custom data (48 KB before encoding)",
        ),
        Some(Cloud::Gcp) => (
            256 * 1024,
            "Compute Engine metadata values are at most 256 KB",
        ),
        _ => return,
    };
    if d.len() > limit {
        p.push("user_data", format!("is {} bytes; {what}", d.len()));
    }
}

fn check_image(p: &mut Problems, cloud: Cloud, image: &str) {
    let i = image.trim();
    let ok = match cloud {
        Cloud::Aws => i.strip_prefix("ami-").is_some_and(|h| {
            (8..=17).contains(&h.len()) && h.chars().all(|c| c.is_ascii_hexdigit())
        }),
        Cloud::Gcp => i.contains("/global/images/"),
        Cloud::Azure => i.starts_with("/subscriptions/") || i.split(':').count() == 4,
        _ => true,
    };
    if !ok {
        let valid = match cloud {
            Cloud::Aws => "an AMI id, `ami-` and 8 or 17 hex digits",
            Cloud::Gcp => {
                "an image path `projects/<project>/global/images/<image>` or `projects/<project>/global/images/family/<family>`"
            }
            _ => {
                "`publisher:offer:sku:version` (a marketplace image) or an image's ARM id `/subscriptions/…`"
            }
        };
        p.push(
            "image",
            format!("{i:?} is not an image on {cloud}; valid: {valid}"),
        );
    }
}

/// The cloud's own settings, each block checked on its own cloud.
fn class_of(p: &mut Problems, cloud: Cloud, c: &InstanceConfig) -> Option<InstanceClass> {
    for (block, written, owner) in [
        ("aws", c.aws.is_some(), Cloud::Aws),
        ("azure", c.azure.is_some(), Cloud::Azure),
        ("gcp", c.gcp.is_some(), Cloud::Gcp),
    ] {
        if written && owner != cloud {
            p.push(
                block,
                format!("the `{block}` block is for cloud = \"{owner}\"; this instance is on {cloud}: use the `{}` block", cloud.as_str()),
            );
        }
    }
    match cloud {
        Cloud::Aws => {
            let a = c.aws.clone().unwrap_or_default();
            if let Some(s) = &a.subnet_id
                && !s.trim().starts_with("subnet-")
            {
                p.push(
                    "aws.subnet_id",
                    format!("{s:?} is not a subnet id (`subnet-…`)"),
                );
            }
            for (i, g) in a.security_group_ids.iter().enumerate() {
                if !g.trim().starts_with("sg-") {
                    p.push(
                        format!("aws.security_group_ids[{i}]"),
                        format!("{g:?} is not a security group id (`sg-…`)"),
                    );
                }
            }
            Some(InstanceClass::Aws {
                subnet_id: a.subnet_id.map(|s| s.trim().to_string()),
                security_group_ids: a
                    .security_group_ids
                    .iter()
                    .map(|s| s.trim().to_string())
                    .collect(),
                key_name: a.key_name,
            })
        }
        Cloud::Azure => {
            let a = c.azure.clone().unwrap_or_default();
            let rg = a.resource_group.map(|s| s.trim().to_string());
            if rg.as_deref().is_none_or(str::is_empty) {
                p.push(
                    "azure.resource_group",
                    "required on Azure: the resource group the VM, its disk and NIC are created in",
                );
            }
            let subnet = a.subnet_id.map(|s| s.trim().to_string());
            match &subnet {
                None => p.push(
                    "azure.subnet_id",
                    "required on Azure: the ARM id of the subnet the VM's NIC joins (`/subscriptions/…/virtualNetworks/<vnet>/subnets/<subnet>`)",
                ),
                Some(s)
                    if !(s.to_ascii_lowercase().starts_with("/subscriptions/")
                        && s.to_ascii_lowercase().contains("/subnets/")) =>
                {
                    p.push(
                        "azure.subnet_id",
                        format!("{s:?} is not a subnet's ARM id (`/subscriptions/…/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>`)"),
                    )
                }
                _ => {}
            }
            let key = a.ssh_public_key.map(|s| s.trim().to_string());
            if !key
                .as_deref()
                .is_some_and(|k| k.starts_with("ssh-") || k.starts_with("ecdsa-"))
            {
                p.push(
                    "azure.ssh_public_key",
                    "required on Azure: an OpenSSH public key (`ssh-rsa …`, `ssh-ed25519 …`); Linux VMs are created without passwords",
                );
            }
            let user = a.admin_username.unwrap_or_else(|| "azureuser".into());
            if user.is_empty()
                || user.len() > 64
                || matches!(user.as_str(), "root" | "admin" | "administrator")
            {
                p.push(
                    "azure.admin_username",
                    format!("{user:?} is not allowed by Azure: 1 to 64 characters, not `root`, `admin` or `administrator`"),
                );
            }
            Some(InstanceClass::Azure {
                resource_group: rg.unwrap_or_default(),
                subnet_id: subnet.unwrap_or_default(),
                admin_username: user,
                ssh_public_key: key.unwrap_or_default(),
            })
        }
        Cloud::Gcp => {
            let g = c.gcp.clone().unwrap_or_default();
            let project = g
                .project
                .clone()
                .or_else(|| c.default_gcp_project.clone())
                .map(|s| s.trim().to_string());
            if project.as_deref().is_none_or(str::is_empty) {
                p.push(
                    "gcp.project",
                    "no project: set `gcp.project` here or `gcp.project` in the provider block",
                );
            }
            if let Some(sa) = &g.service_account
                && !sa.contains('@')
            {
                p.push(
                    "gcp.service_account",
                    format!("{sa:?} is not a service account e-mail (`name@project.iam.gserviceaccount.com`)"),
                );
            }
            Some(InstanceClass::Gcp {
                project: project.unwrap_or_default(),
                network: g.network,
                subnetwork: g.subnetwork,
                service_account: g.service_account,
            })
        }
        _ => None,
    }
}
