//! The rules a node pool configuration must follow; every broken rule is reported, naming
//! the attribute as the user writes it and what would be valid.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::config::NodePoolConfig;
use super::kube::{label_key_problem, label_value_problem};
use super::spec::{
    CapacitySpec, DriverPolicy, NodePoolSpec, PoolReservation, RESERVED_LABEL_PREFIX, Reclaim,
    Taint, TaintEffect,
};
use super::spelling;
use crate::catalog::Catalog;
use crate::gpu::{self, GpuModel};
use crate::offer::{Cloud, Offer};

/// Clouds a node pool can run on.
pub const POOL_CLOUDS: [Cloud; 3] = [Cloud::Aws, Cloud::Azure, Cloud::Gcp];

/// Longest suffix appended to a pool name to name its node groups (`-spot-` and a
/// generation).
pub const GROUP_SUFFIX_LEN: usize = 6 + super::layout::GENERATION_LEN;

/// What a caller puts in a count of [`NodePoolConfig`] for a number that is not whole
/// (`gpu_count = 1.5`): reported as "not a whole number" rather than as a value the user
/// never wrote.
pub const NOT_A_WHOLE_NUMBER: i64 = i64::MIN;

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The attribute path as written in Terraform: `capacity.on_demand_min`, `labels["a"]`.
    pub attribute: String,
    /// What is wrong and what would be valid.
    pub problem: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.attribute, self.problem)
    }
}

/// Every broken rule of one configuration (never empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid node pool: {}", render(.0))]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    /// The problems reported for `attribute`.
    pub fn for_attribute<'a>(&'a self, attribute: &'a str) -> impl Iterator<Item = &'a FieldError> {
        self.0.iter().filter(move |e| e.attribute == attribute)
    }
}

/// Joins problems with `; `.
fn render(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Collects problems while checking.
#[derive(Default)]
struct Problems(Vec<FieldError>);

impl Problems {
    /// Records a problem with `attribute`.
    fn push(&mut self, attribute: impl Into<String>, problem: impl Into<String>) {
        self.0.push(FieldError {
            attribute: attribute.into(),
            problem: problem.into(),
        });
    }

    /// `v` as a `u32`, or a problem when negative (or, for `positive`, zero) or too large.
    fn count(&mut self, attribute: &str, v: i64, positive: bool) -> Option<u32> {
        let min = i64::from(positive);
        match u32::try_from(v) {
            Ok(n) if i64::from(n) >= min => Some(n),
            _ => {
                let max = u32::MAX;
                let got = if v == NOT_A_WHOLE_NUMBER {
                    "is not a whole number".to_string()
                } else if v > i64::from(max) {
                    format!("is more than {max}")
                } else if v < -i64::from(max) {
                    format!("is less than -{max}")
                } else {
                    format!("is {v}")
                };
                self.push(
                    attribute,
                    format!("{got}; it must be a whole number from {min} to {max}"),
                );
                None
            }
        }
    }
}

impl NodePoolConfig {
    /// Checks every rule against `catalog` and returns the typed spec, or every problem at once.
    pub fn validate(&self, catalog: &Catalog) -> Result<NodePoolSpec, ValidationErrors> {
        validate(self, catalog)
    }
}

/// Checks `c` against every rule and `catalog`; see [`NodePoolConfig::validate`].
fn validate(c: &NodePoolConfig, catalog: &Catalog) -> Result<NodePoolSpec, ValidationErrors> {
    let mut p = Problems::default();
    let cloud = check_cloud(&mut p, &c.cloud);
    // Every check and the spec see the canonical spelling of region and instance types.
    let canonical = NodePoolConfig {
        region: spelling::region(cloud, &c.region),
        instance_types: c
            .instance_types
            .iter()
            .map(|t| spelling::instance_type(catalog, cloud, t))
            .collect(),
        ..c.clone()
    };
    let c = &canonical;
    let gpu = match gpu::lookup(&c.gpu) {
        Ok(g) => Some(g),
        Err(e) => {
            p.push("gpu", e.to_string());
            None
        }
    };
    let gpu_count = p.count("gpu_count", c.gpu_count, true);
    let sizes = check_sizes(&mut p, c);
    let reclaim = check_reclaim(&mut p, c, cloud);
    let driver = check_driver(&mut p, c, cloud);
    if let Some(cloud) = cloud {
        check_names(&mut p, cloud, &c.region, &c.cluster, &c.name);
        check_tags(&mut p, cloud, &c.tags);
    }
    check_labels(&mut p, &c.labels);
    let taints = check_taints(&mut p, c);
    let reservation = check_reservation(&mut p, c, cloud, sizes.as_ref());
    if let (Some(cloud), Some(gpu), Some(count)) = (cloud, gpu, gpu_count) {
        check_catalog(&mut p, catalog, c, cloud, gpu, count);
    }
    match (cloud, gpu, gpu_count, sizes, reclaim, driver) {
        (Some(cloud), Some(gpu), Some(gpu_count), Some(s), Some(reclaim), Some(driver))
            if p.0.is_empty() =>
        {
            Ok(NodePoolSpec {
                cloud,
                region: c.region.clone(),
                cluster: c.cluster.clone(),
                name: c.name.clone(),
                gpu,
                gpu_count,
                instance_types: c.instance_types.clone(),
                min_nodes: s.min,
                max_nodes: s.max,
                desired_nodes: s.desired,
                capacity: CapacitySpec {
                    spot: c.spot,
                    on_demand_min: s.on_demand_min,
                },
                reclaim,
                driver,
                labels: c.labels.clone(),
                taints,
                tags: c.tags.clone(),
                reservation,
            })
        }
        _ => Err(ValidationErrors(p.0)),
    }
}

/// The node counts, once each is a valid number.
struct Sizes {
    min: u32,
    max: u32,
    desired: Option<u32>,
    on_demand_min: u32,
}

/// The `reservation` block: a commitment kind of the pool's cloud that its node pools
/// can consume, an id shaped as that cloud names it (when known), a price, and an
/// on-demand floor to run on it.
fn check_reservation(
    p: &mut Problems,
    c: &NodePoolConfig,
    cloud: Option<Cloud>,
    sizes: Option<&Sizes>,
) -> Option<PoolReservation> {
    use crate::commitment::CommitmentKind as K;
    let r = c.reservation.as_ref()?;
    let kind: K = match r.kind.parse() {
        Ok(k) => k,
        Err(e) => {
            p.push("reservation.kind", e.to_string());
            return None;
        }
    };
    let cloud = cloud?;
    let consumable: &[K] = match cloud {
        Cloud::Gcp => &[K::GcpCommitment, K::GcpReservation],
        Cloud::Azure => &[K::AzureReservation, K::AzureCapacityReservation],
        Cloud::Aws => &[K::AwsCapacityReservation, K::AwsCapacityBlock],
        _ => &[],
    };
    let names = |ks: &[K]| {
        ks.iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if kind.cloud() != cloud {
        p.push(
            "reservation.kind",
            format!(
                "is \"{kind}\", a commitment on {}; a pool on {cloud} consumes {}",
                kind.cloud(),
                if consumable.is_empty() {
                    "none yet".to_string()
                } else {
                    names(consumable)
                }
            ),
        );
        return None;
    }
    if let Some(id) = &r.commitment_id {
        let id = id.trim();
        let ok = crate::registry::is_commitment_id(kind, id);
        if !ok {
            p.push(
                "reservation.commitment_id",
                format!(
                    "is {id:?}, not the id of a {kind}: use the `commitment_id` of the `gpu_commitment` (a Compute Engine name on gcp: lower-case letters, digits and `-`)"
                ),
            );
        }
    }
    // A targeted reservation holds one instance type: the floor must run exactly that.
    if matches!(kind, K::AwsCapacityReservation | K::AwsCapacityBlock)
        && c.instance_types.len() != 1
    {
        p.push(
            "instance_types",
            format!("must name the reservation's one instance type (e.g. [\"p5.48xlarge\"]) when the floor runs on an {kind}: instances of other types cannot launch into it"),
        );
    }
    if let Some(usd) = r.usd_per_gpu_hour
        && !(usd.is_finite() && usd >= 0.0)
    {
        p.push(
            "reservation.usd_per_gpu_hour",
            format!("is {usd}; it must be a price of 0 or more, e.g. the commitment's `effective_usd_per_gpu_hour`"),
        );
    }
    if let Some(s) = sizes
        && super::spec::on_demand_floor(c.spot, s.on_demand_min, s.min, s.max) == 0
    {
        p.push(
            "reservation",
            "needs an on-demand floor to run on the commitment: set `capacity.on_demand_min` (or, without spot, `min_nodes`) to the committed nodes",
        );
    }
    Some(PoolReservation {
        commitment_id: r
            .commitment_id
            .as_ref()
            .map(|i| i.trim().to_ascii_lowercase()),
        kind,
        usd_per_gpu_hour: r.usd_per_gpu_hour,
    })
}

/// Parses `cloud` and requires one that has managed Kubernetes node pools.
fn check_cloud(p: &mut Problems, s: &str) -> Option<Cloud> {
    let valid = POOL_CLOUDS.map(Cloud::as_str).join(", ");
    match s.parse::<Cloud>() {
        Ok(c) if POOL_CLOUDS.contains(&c) => Some(c),
        Ok(c) => {
            p.push(
                "cloud",
                format!("{c} has no managed Kubernetes node pools here; valid: {valid}"),
            );
            None
        }
        Err(_) => {
            p.push("cloud", format!("unknown cloud {s:?}; valid: {valid}"));
            None
        }
    }
}

/// Node counts: each a number, min ≤ max, max ≥ 1, on_demand_min ≤ max, desired in range.
fn check_sizes(p: &mut Problems, c: &NodePoolConfig) -> Option<Sizes> {
    let min = p.count("min_nodes", c.min_nodes, false);
    let max = p.count("max_nodes", c.max_nodes, false);
    let odm = p.count("capacity.on_demand_min", c.on_demand_min, false);
    let desired = c.desired_nodes.map(|d| p.count("desired_nodes", d, false));
    let (min, max, odm) = (min?, max?, odm?);
    let mut ok = true;
    if max == 0 {
        p.push(
            "max_nodes",
            "is 0; a pool needs at least 1 node at most (use min_nodes = 0 to scale to zero)",
        );
        ok = false;
    }
    if min > max {
        p.push(
            "min_nodes",
            format!("is {min}, more than max_nodes = {max}; it must be at most {max}"),
        );
        ok = false;
    }
    if odm > max {
        p.push(
            "capacity.on_demand_min",
            format!("is {odm}, more than max_nodes = {max}; it must be at most {max}"),
        );
        ok = false;
    }
    let desired = match desired {
        None => None,
        Some(None) => return None,
        Some(Some(d)) => {
            if d < min || d > max {
                p.push(
                    "desired_nodes",
                    format!("is {d}, outside [min_nodes, max_nodes] = [{min}, {max}]; it must be from {min} to {max}"),
                );
                ok = false;
            }
            Some(d)
        }
    };
    ok.then_some(Sizes {
        min,
        max,
        desired,
        on_demand_min: odm,
    })
}

/// `reclaim`: `delete` or `stop`, and `stop` only where the cloud keeps a stopped spot VM.
fn check_reclaim(p: &mut Problems, c: &NodePoolConfig, cloud: Option<Cloud>) -> Option<Reclaim> {
    let Some(s) = &c.reclaim else {
        return Some(Reclaim::Delete);
    };
    let Some(r) = Reclaim::parse(s) else {
        p.push("reclaim", format!("is {s:?}; valid: \"delete\", \"stop\""));
        return None;
    };
    if r == Reclaim::Stop && c.spot {
        let why = match cloud {
            Some(Cloud::Aws) => Some(
                "aws cannot keep a stopped spot VM in a node group: EKS managed node groups \
                 (Auto Scaling groups) terminate reclaimed spot instances",
            ),
            Some(Cloud::Gcp) => Some(
                "gcp cannot keep a stopped spot VM in a node group: GKE deletes preempted spot nodes",
            ),
            _ => None,
        };
        if let Some(why) = why {
            p.push(
                "reclaim",
                format!(
                    "{why}; \"stop\" is supported on azure (AKS spot eviction policy Deallocate). \
                     To keep a reclaimed GPU VM stopped with its disks on this cloud, use the \
                     `gpu_instance` resource with reclaim = \"stop\"; for this pool use \"delete\""
                ),
            );
            return None;
        }
    }
    Some(r)
}

/// `driver`: a known image family, and only on aws, the one cloud with families today.
fn check_driver(
    p: &mut Problems,
    c: &NodePoolConfig,
    cloud: Option<Cloud>,
) -> Option<DriverPolicy> {
    let Some(s) = &c.driver else {
        return Some(DriverPolicy::default());
    };
    let valid = DriverPolicy::ALL
        .map(|d| format!("{:?}", d.as_str()))
        .join(", ");
    let Some(d) = super::spelling::driver(s) else {
        p.push("driver", format!("is {s:?}; valid: {valid}"));
        return None;
    };
    if let Some(cl) = cloud.filter(|c| *c != Cloud::Aws) {
        p.push(
            "driver",
            format!("image families ({valid}) are EKS node images; leave `driver` unset on {cl}"),
        );
        return None;
    }
    Some(d)
}

/// The problems of `cluster` and `name` alone on `cloud`, by the rules of
/// [`NodePoolConfig::validate`]: for inputs that carry only the names, such as import ids,
/// so that a name no pool could have is refused before any cloud call.
///
/// [`NodePoolConfig::validate`]: super::NodePoolConfig::validate
pub fn name_errors(cloud: Cloud, cluster: &str, name: &str) -> Vec<FieldError> {
    let mut p = Problems::default();
    check_names(&mut p, cloud, "", cluster, name);
    p.0
}

/// `cluster` as the cloud names a cluster ([`crate::seam::ClusterRef`]: an EKS name, an
/// AKS ARM id, a GKE path in `region` or one of its zones; an empty `region` is not
/// checked) and `name` in the cloud's format (on EKS leaving room for the group suffix).
fn check_names(p: &mut Problems, cloud: Cloud, region: &str, cluster: &str, name: &str) {
    let shape = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let max_name = 63 - GROUP_SUFFIX_LEN;
    if cloud == Cloud::Aws {
        // The region does not matter to an EKS name's shape.
        if let Err(e) = crate::seam::ClusterRef::parse(cloud, "", cluster) {
            p.push("cluster", e.0);
        }
        if name.is_empty() || name.len() > max_name || !shape(name) {
            p.push(
                "name",
                format!(
                    "{name:?} cannot name EKS node groups: 1–{max_name} letters, digits, `-` or `_`, starting with a \
                     letter or digit (the groups are `<name>-od-<generation>` and `<name>-spot-<generation>`, at most 63 characters)"
                ),
            );
        }
    } else {
        if cluster.is_empty() {
            p.push("cluster", "must not be empty");
        } else if let Err(e) = crate::seam::ClusterRef::parse(cloud, region, cluster) {
            p.push("cluster", e.0);
        }
        // Every node carries `gpu.tf/pool = <name>`: it must be a Kubernetes label value.
        if name.is_empty() || name.len() > 63 || !shape(name) || name.ends_with(['-', '_']) {
            p.push(
                "name",
                format!(
                    "{name:?} cannot name a pool on {cloud}: 1–63 letters, digits, `-` or `_`, starting and \
                     ending with a letter or digit (nodes carry the label `gpu.tf/pool = <name>`)"
                ),
            );
        }
    }
}

/// `labels`: Kubernetes keys and values, and none under the reserved `gpu.tf/` prefix.
fn check_labels(p: &mut Problems, labels: &BTreeMap<String, String>) {
    for (k, v) in labels {
        let attr = format!("labels[{k:?}]");
        if k.starts_with(RESERVED_LABEL_PREFIX) {
            p.push(
                &attr,
                format!("the prefix `{RESERVED_LABEL_PREFIX}` is reserved: the pool sets those labels itself; use another key"),
            );
        } else if let Some(why) = label_key_problem(k) {
            p.push(
                &attr,
                format!("key {k:?} is not a Kubernetes label key: {why}"),
            );
        }
        if let Some(why) = label_value_problem(v) {
            p.push(
                &attr,
                format!("value {v:?} is not a Kubernetes label value: {why}"),
            );
        }
    }
}

/// The `taint` blocks: Kubernetes keys and values and a known effect.
fn check_taints(p: &mut Problems, c: &NodePoolConfig) -> Vec<Taint> {
    let mut out = Vec::new();
    for (i, t) in c.taints.iter().enumerate() {
        if let Some(why) = label_key_problem(&t.key) {
            p.push(
                format!("taint[{i}].key"),
                format!("{:?} is not a Kubernetes taint key: {why}", t.key),
            );
        }
        if let Some(why) = label_value_problem(&t.value) {
            p.push(
                format!("taint[{i}].value"),
                format!("{:?} is not a Kubernetes taint value: {why}", t.value),
            );
        }
        match TaintEffect::parse(&t.effect) {
            Some(effect) => out.push(Taint {
                key: t.key.clone(),
                value: t.value.clone(),
                effect,
            }),
            None => p.push(
                format!("taint[{i}].effect"),
                format!(
                    "is {:?}; valid: {}",
                    t.effect,
                    TaintEffect::ALL.map(TaintEffect::as_str).join(", ")
                ),
            ),
        }
    }
    out
}

/// `tags`: no reserved prefixes, and on aws the EC2 tag limits.
fn check_tags(p: &mut Problems, cloud: Cloud, tags: &BTreeMap<String, String>) {
    for (k, v) in tags {
        let attr = format!("tags[{k:?}]");
        if k.starts_with(RESERVED_LABEL_PREFIX) {
            p.push(&attr, format!("the prefix `{RESERVED_LABEL_PREFIX}` is reserved for tags the pool sets; use another key"));
        }
        if cloud == Cloud::Aws {
            if k.to_ascii_lowercase().starts_with("aws:") {
                p.push(
                    &attr,
                    "the prefix `aws:` is reserved by AWS; use another key",
                );
            }
            if k.is_empty() || k.chars().count() > 128 {
                p.push(&attr, "AWS tag keys are 1–128 characters");
            }
            if v.chars().count() > 256 {
                p.push(&attr, "AWS tag values are at most 256 characters");
            }
        }
    }
}

/// `gpu`, `region`, `gpu_count` and `instance_types` against what the catalog offers.
fn check_catalog(
    p: &mut Problems,
    catalog: &Catalog,
    c: &NodePoolConfig,
    cloud: Cloud,
    gpu: &'static GpuModel,
    count: u32,
) {
    let with_gpu: Vec<&Offer> = catalog
        .offers()
        .iter()
        .filter(|o| o.gpu.name == gpu.name)
        .collect();
    let on_cloud: Vec<&Offer> = with_gpu
        .iter()
        .copied()
        .filter(|o| o.cloud == cloud)
        .collect();
    if on_cloud.is_empty() {
        let clouds: BTreeSet<Cloud> = with_gpu.iter().map(|o| o.cloud).collect();
        p.push(
            "gpu",
            format!(
                "the catalog has no {gpu} on {cloud}; clouds with {gpu}: {}",
                list(clouds.iter())
            ),
        );
        return;
    }
    let in_region: Vec<&Offer> = on_cloud
        .iter()
        .copied()
        .filter(|o| o.region == c.region)
        .collect();
    let scope = if in_region.is_empty() {
        let regions: BTreeSet<&str> = on_cloud.iter().map(|o| o.region.as_str()).collect();
        p.push(
            "region",
            format!(
                "{:?} has no {gpu} on {cloud} in the catalog; regions with {gpu} on {cloud}: {}",
                c.region,
                list(regions.iter())
            ),
        );
        on_cloud
    } else {
        in_region
    };
    let counts = whole_counts(&scope);
    if !counts.contains(&count) {
        let place = if scope.iter().all(|o| o.region == c.region) {
            format!("{cloud} {}", c.region)
        } else {
            cloud.to_string()
        };
        p.push(
            "gpu_count",
            format!(
                "{gpu} on {place} comes with {} GPUs per node, not {count}",
                list(counts.iter())
            ),
        );
        return;
    }
    check_instance_types(p, catalog, c, cloud, gpu, count);
}

/// Each pinned instance type must be in the region with exactly `count` × `gpu`.
fn check_instance_types(
    p: &mut Problems,
    catalog: &Catalog,
    c: &NodePoolConfig,
    cloud: Cloud,
    gpu: &'static GpuModel,
    count: u32,
) {
    let fits: BTreeSet<&str> = catalog
        .offers()
        .iter()
        .filter(|o| {
            o.cloud == cloud
                && o.region == c.region
                && o.gpu.name == gpu.name
                && o.gpu_count == Some(f64::from(count))
        })
        .map(|o| o.instance_type.as_str())
        .collect();
    let fitting = || {
        format!(
            "instance types with {count} × {gpu} in {}: {}",
            c.region,
            list(fits.iter())
        )
    };
    let mut seen = BTreeSet::new();
    for (i, t) in c.instance_types.iter().enumerate() {
        let attr = format!("instance_types[{i}]");
        if !seen.insert(t.as_str()) {
            p.push(
                &attr,
                format!("{t:?} is listed twice; list each instance type once"),
            );
            continue;
        }
        if fits.contains(t.as_str()) {
            continue;
        }
        let row = catalog
            .offers()
            .iter()
            .find(|o| o.cloud == cloud && o.instance_type == *t);
        let here = catalog
            .offers()
            .iter()
            .find(|o| o.cloud == cloud && o.region == c.region && o.instance_type == *t);
        let problem = match (here, row) {
            (Some(o), _) => format!(
                "{t} has {} × {}, not {count} × {gpu}; {}",
                fmt_count(o.gpu_count),
                o.gpu,
                fitting()
            ),
            (None, Some(_)) => format!(
                "{t} is not offered in {} on {cloud} (catalog); {}",
                c.region,
                fitting()
            ),
            (None, None) => format!(
                "{t} is not a {cloud} GPU instance type in the catalog; {}",
                fitting()
            ),
        };
        p.push(attr, problem);
    }
}

/// Whole GPU counts among `offers`, ascending.
fn whole_counts(offers: &[&Offer]) -> BTreeSet<u32> {
    offers
        .iter()
        .filter_map(|o| o.gpu_count)
        .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= f64::from(u32::MAX))
        .map(|n| n as u32)
        .collect()
}

/// A GPU count as the catalog has it (`?` when unknown).
fn fmt_count(n: Option<f64>) -> String {
    n.map_or_else(|| "?".to_string(), |n| n.to_string())
}

/// `a, b, c`, or `none` when empty.
fn list<T: fmt::Display>(items: impl Iterator<Item = T>) -> String {
    let v: Vec<String> = items.map(|i| i.to_string()).collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}
