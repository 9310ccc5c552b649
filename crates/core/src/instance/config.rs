//! A `gpu_instance` as the user wrote it ([`InstanceConfig`]) checked into an
//! [`InstanceSpec`]: every broken rule named by its attribute, before any cloud call. The
//! GPU, region and catalog rules are the node pool's own (a one-node pool), so the two
//! resources accept and price the same things. What differs by cloud (zones, disk, labels,
//! user data, images, the cloud's block) is that cloud's driver's rules, found through
//! `crate::registry::instance_rules`.

use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::freshness::Freshness;
use crate::gpu::{self, GpuModel};
use crate::offer::Cloud;
use crate::pool::{self, ChosenType, FieldError, NodePoolConfig, NodePoolSpec, spelling};
use crate::registry;
use crate::seam::instance_rules::{InstanceBlocks, InstanceRules};
use crate::seam::instances::{InstanceClass, MARKER_LABEL, MARKER_TAG, ReclaimPolicy};

pub use crate::seam::instance_rules::{AwsInstanceConfig, AzureInstanceConfig, GcpInstanceConfig};

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
/// Largest boot disk quoted while the cloud is not known.
const UNKNOWN_CLOUD_MAX_DISK_GB: i64 = 16384;

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
    let rules = spelling::cloud(&c.cloud).and_then(registry::instance_rules);
    if rules.is_none() {
        let valid: Vec<String> = registry::instance_clouds()
            .map(|r| format!("{:?}", r.cloud.as_str()))
            .collect();
        p.push(
            "cloud",
            format!(
                "{:?} is not a cloud gpu_instance runs on; valid: {}",
                c.cloud,
                valid.join(", ")
            ),
        );
    }
    let cloud = rules.map(|r| r.cloud);
    let region = spelling::region(cloud, &c.region);
    let instance_type = c
        .instance_type
        .as_deref()
        .map(|t| spelling::instance_type(catalog, cloud, t));
    let (gpu, gpu_count) = gpu_of(&mut p, c, cloud, &region, instance_type.as_deref(), catalog);
    // The node pool's own rules for cloud, region, GPU, count, instance type and tags.
    if let (Some(r), Some(g)) = (rules, gpu) {
        let as_pool = NodePoolConfig {
            cloud: r.cloud.as_str().into(),
            region: region.clone(),
            cluster: "instance".into(),
            name: "instance".into(),
            gpu: g.name.into(),
            gpu_count: i64::from(gpu_count.unwrap_or(1)),
            instance_types: instance_type.iter().cloned().collect(),
            min_nodes: 1,
            max_nodes: 1,
            spot: c.spot,
            tags: if r.labels_are_pool_tags {
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
    let zone = check_zone(&mut p, rules, &region, c.zone.as_deref());
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
    let disk_size_gb = check_disk(&mut p, rules, c.disk_size_gb);
    check_labels(&mut p, rules, &c.labels);
    check_user_data(&mut p, rules, c.user_data.as_deref());
    if let (Some(r), Some(image)) = (rules, c.image.as_deref()) {
        check_image(&mut p, r, image);
    }
    let class = rules.map(|r| class_of(&mut p, r, c));
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

/// The zone, lower case, with the cloud's problem of it (none while the cloud is unknown).
fn check_zone(
    p: &mut Problems,
    rules: Option<&InstanceRules>,
    region: &str,
    zone: Option<&str>,
) -> Option<String> {
    let z = zone.map(|z| z.trim().to_ascii_lowercase());
    if let Some(problem) = rules.and_then(|r| r.zone_problem(region, z.as_deref())) {
        p.push("zone", problem);
    }
    z
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

/// The boot disk: the default, or a size from [`MIN_DISK_GB`] to the cloud's largest.
fn check_disk(p: &mut Problems, rules: Option<&InstanceRules>, gb: Option<i64>) -> Option<u32> {
    let max = rules.map_or(UNKNOWN_CLOUD_MAX_DISK_GB, |r| r.max_disk_gb);
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
                    rules
                        .map(|r| format!(" on {}", r.cloud))
                        .unwrap_or_default()
                ),
            );
            None
        }
    }
}

/// Labels: never the provider's marker keys; otherwise the cloud's label rule.
fn check_labels(
    p: &mut Problems,
    rules: Option<&InstanceRules>,
    labels: &BTreeMap<String, String>,
) {
    for (k, v) in labels {
        let attr = format!("labels[{k:?}]");
        if k == MARKER_TAG || k == MARKER_LABEL || k.starts_with("gpu.tf/") {
            p.push(
                &attr,
                "the prefix `gpu.tf/` and the key `gpu-tf-instance` are the provider's; use another key",
            );
            continue;
        }
        if let Some(problem) = rules.and_then(|r| r.label_problem(k, v)) {
            p.push(&attr, problem);
        }
    }
}

/// User data within the cloud's limit.
fn check_user_data(p: &mut Problems, rules: Option<&InstanceRules>, data: Option<&str>) {
    let (Some(d), Some(r)) = (data, rules) else {
        return;
    };
    if d.len() > r.user_data_limit {
        p.push(
            "user_data",
            format!("is {} bytes; {}", d.len(), r.user_data_rule),
        );
    }
}

/// An image of a shape the cloud takes.
fn check_image(p: &mut Problems, rules: &InstanceRules, image: &str) {
    let i = image.trim();
    if !rules.image_ok(i) {
        p.push(
            "image",
            format!(
                "{i:?} is not an image on {}; valid: {}",
                rules.cloud, rules.image_shapes
            ),
        );
    }
}

/// The cloud's own settings, each block checked on its own cloud.
fn class_of(p: &mut Problems, rules: &InstanceRules, c: &InstanceConfig) -> InstanceClass {
    let blocks = InstanceBlocks {
        aws: c.aws.as_ref(),
        azure: c.azure.as_ref(),
        gcp: c.gcp.as_ref(),
        default_gcp_project: c.default_gcp_project.as_deref(),
    };
    let cloud = rules.cloud;
    for owner in registry::instance_clouds().map(|r| r.cloud) {
        let block = owner.as_str();
        if blocks.written(owner) && owner != cloud {
            p.push(
                block,
                format!("the `{block}` block is for cloud = \"{owner}\"; this instance is on {cloud}: use the `{}` block", cloud.as_str()),
            );
        }
    }
    let mut found = Vec::new();
    let class = rules.class_of(&blocks, &mut found);
    for (attribute, problem) in found {
        p.push(attribute, problem);
    }
    class
}
