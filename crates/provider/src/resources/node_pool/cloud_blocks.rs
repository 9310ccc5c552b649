//! The pool's `azure {}` and `gcp {}` blocks: their schema, their checks at plan (only on
//! the pool's own cloud: the other blocks are ignored, so one module can carry every
//! cloud's settings) and the node class they make. Values are read in any letter case and
//! always compared in the cloud's own spelling, so `ubuntu` and `Ubuntu` are one value.

use gpu_core::model::{AwsClass, AzureClass, GcpClass, NodeClass, Reservation};
use gpu_core::offer::Cloud;
use gpu_core::seam::{is_guid, is_zone_of};
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{AttributePath, Diagnostics, Type, Value};

use super::model::{self, GcpModel, PoolModel};

/// AKS `osSKU` values of Linux node pools that run NVIDIA GPUs, as ARM spells them.
pub const AKS_OS_SKUS: [&str; 5] = [
    "Ubuntu",
    "Ubuntu2204",
    "Ubuntu2404",
    "AzureLinux",
    "AzureLinux3",
];

/// AKS availability zones.
pub const AKS_ZONES: [&str; 3] = ["1", "2", "3"];

/// `azure.gpu_driver` values and what AKS `gpuProfile.driver` they become.
const AKS_DRIVERS: [(&str, &str); 2] = [("install", "Install"), ("none", "None")];

/// GKE node images that run NVIDIA GPUs.
pub const GKE_IMAGE_TYPES: [&str; 2] = ["COS_CONTAINERD", "UBUNTU_CONTAINERD"];

/// `gcp.gpu_driver_version` values and what GKE `gpuDriverVersion` they become.
const GKE_DRIVERS: [(&str, &str); 3] = [
    ("default", "DEFAULT"),
    ("latest", "LATEST"),
    ("disabled", "INSTALLATION_DISABLED"),
];

/// `gcp.reservation_affinity` values and the GKE `consumeReservationType` they become.
const GKE_RESERVATIONS: [(&str, &str); 3] = [
    ("any", "ANY_RESERVATION"),
    ("none", "NO_RESERVATION"),
    ("specific", "SPECIFIC_RESERVATION"),
];

/// The `azure {}` block of `gpu_node_pool`.
pub fn azure_block() -> NestedBlock {
    NestedBlock::single(
        "azure",
        Block::new("Settings used when `cloud = \"azure\"` (ignored on other clouds). Values are read in any letter case.")
            .attribute(Attribute::optional("subnet_id", Type::String).describe("ARM id of the subnet for the nodes (`/subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>`); default the cluster's. Changing it rolls the agent pools."))
            .attribute(Attribute::optional("zones", Type::set(Type::String)).describe("Availability zones of the nodes, from `1`, `2`, `3`; default none (regional). Changing it rolls the agent pools."))
            .attribute(Attribute::optional("os_sku", Type::String).describe(format!("Node OS (`osSKU`): one of {}; default `Ubuntu`. Changing it rolls the agent pools.", quoted(&AKS_OS_SKUS))))
            .attribute(Attribute::optional("gpu_driver", Type::String).describe("`install` (default: AKS installs the NVIDIA driver) or `none` (you install it, for example with the NVIDIA GPU Operator). Changing it rolls the agent pools.")),
    )
}

/// The `gcp {}` block of `gpu_node_pool`.
pub fn gcp_block() -> NestedBlock {
    NestedBlock::single(
        "gcp",
        Block::new("Settings used when `cloud = \"gcp\"` (ignored on other clouds). Values are read in any letter case.")
            .attribute(Attribute::optional("service_account", Type::String).describe("E-mail of the service account the nodes run as; default the project's Compute Engine default service account. Changing it rolls the node pools."))
            .attribute(Attribute::optional("node_locations", Type::set(Type::String)).describe("Zones of the nodes, all in the pool's `region` (e.g. `us-central1-a`); default the cluster's. Changing it rolls the node pools."))
            .attribute(Attribute::optional("image_type", Type::String).describe(format!("Node image: one of {}; default `COS_CONTAINERD`. Changing it rolls the node pools.", quoted(&GKE_IMAGE_TYPES))))
            .attribute(Attribute::optional("gpu_driver_version", Type::String).describe("NVIDIA driver GKE installs: `default` (default), `latest`, or `disabled` (you install it, for example with the NVIDIA GPU Operator). Changing it rolls the node pools."))
            .attribute(Attribute::optional("reservation_affinity", Type::String).describe("Which Compute Engine reservations the on-demand node pool (the floor) consumes: `any` (any matching reservation of the project), `none`, or `specific` (the one named by `reservation_name`); default GKE's (any). The spot pool is left to GKE's default. Changing it rolls the on-demand pool."))
            .attribute(Attribute::optional("reservation_name", Type::String).describe("Name of the reservation the on-demand pool consumes, with `reservation_affinity = \"specific\"` (and only then). Changing it rolls the on-demand pool.")),
    )
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `value` spelled as in `allowed` (compared in any letter case).
fn canonical<'a>(value: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value.trim()))
        .copied()
}

/// `value` mapped through `table` (its first column compared in any letter case).
fn mapped(value: &str, table: &[(&str, &'static str)]) -> Option<&'static str> {
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(value.trim()))
        .map(|(_, v)| *v)
}

/// The AKS node class of pool `v`: its `azure` block, defaults for what is unset
/// (Ubuntu, the AKS-installed driver, the cluster's subnet, regional).
pub fn azure_class(v: &Value) -> AzureClass {
    let b = PoolModel::of(v).azure.into_known().unwrap_or_default();
    let mut zones = model::strings(&b.zones).unwrap_or_default();
    zones.iter_mut().for_each(|z| *z = z.trim().to_string());
    zones.sort();
    zones.dedup();
    AzureClass {
        subnet: model::opt(&b.subnet_id).map(|s| s.trim().to_string()),
        zones,
        os_sku: model::opt(&b.os_sku)
            .and_then(|s| canonical(&s, &AKS_OS_SKUS))
            .unwrap_or("Ubuntu")
            .into(),
        gpu_driver: model::opt(&b.gpu_driver)
            .and_then(|s| mapped(&s, &AKS_DRIVERS))
            .unwrap_or("Install")
            .into(),
        // The layout sets it on the spot pool from `reclaim`.
        deallocate_evicted: false,
        // The layout keeps it on the on-demand pool only.
        capacity_reservation_group: pool_reservation(v)
            .and_then(|r| r.aks_capacity_reservation_group()),
    }
}

/// The GKE node class of pool `v`: its `gcp` block, defaults for what is unset (COS with
/// GKE's default driver, the cluster's zones, the default service account). The GPU's
/// accelerator type and count are the layout's, from the pool's GPU.
pub fn gcp_class(v: &Value) -> GcpClass {
    let b = PoolModel::of(v).gcp.into_known().unwrap_or_default();
    let mut locations: Vec<String> = model::strings(&b.node_locations)
        .unwrap_or_default()
        .into_iter()
        .map(|z| z.trim().to_ascii_lowercase())
        .collect();
    locations.sort();
    locations.dedup();
    GcpClass {
        service_account: model::opt(&b.service_account).map(|s| s.trim().to_ascii_lowercase()),
        locations,
        image_type: model::opt(&b.image_type)
            .and_then(|s| canonical(&s, &GKE_IMAGE_TYPES))
            .unwrap_or("COS_CONTAINERD")
            .into(),
        driver_version: model::opt(&b.gpu_driver_version)
            .and_then(|s| mapped(&s, &GKE_DRIVERS))
            .unwrap_or("DEFAULT")
            .into(),
        // A `reservation` block's commitment wins (the two are refused together).
        reservation: commitment_reservation(v).or_else(|| {
            model::opt(&b.reservation_affinity)
                .and_then(|s| mapped(&s, &GKE_RESERVATIONS))
                .and_then(|t| {
                    let name =
                        model::opt(&b.reservation_name).map(|n| n.trim().to_ascii_lowercase());
                    gpu_core::clouds::gcp::rules::reservation_from_gke(
                        t,
                        &name.into_iter().collect::<Vec<_>>(),
                    )
                })
        }),
        ..Default::default()
    }
}

/// The node class of pool `v` on `cloud`: on AWS its `aws` block (node role; subnets, or
/// the cluster's when unset; the AMI type is the layout's, from `driver`); on Azure and
/// GCP their `azure` and `gcp` blocks, with the defaults of [`super::cloud_blocks`].
/// `None` for a cloud without node groups (validation refuses those first).
pub fn node_class(v: &Value, cloud: Cloud) -> Option<NodeClass> {
    Some(match cloud {
        Cloud::Azure => NodeClass::Azure(azure_class(v)),
        Cloud::Gcp => NodeClass::Gcp(gcp_class(v)),
        Cloud::Aws => {
            let aws = super::aws_block::settings(v);
            NodeClass::Aws(AwsClass {
                node_role: aws.node_role_arn.unwrap_or_default(),
                subnets: aws.subnet_ids.filter(|s| !s.is_empty()),
                ami_type: String::new(),
                capacity_reservation: aws_capacity_reservation(v),
            })
        }
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => return None,
    })
}

/// The specific reservation of the `reservation` block's commitment, when its kind is a
/// Google Cloud one and its id is known.
fn commitment_reservation(v: &Value) -> Option<Reservation> {
    pool_reservation(v)?
        .gke_reservation_name()
        .map(Reservation::Specific)
}

/// The EC2 capacity reservation or capacity block the `reservation` block of pool `v`
/// names, when its kind is one and its id is known.
pub fn aws_capacity_reservation(v: &Value) -> Option<gpu_core::model::Ec2Reservation> {
    use gpu_core::commitment::CommitmentKind as K;
    let r = pool_reservation(v)?;
    let capacity_block = match r.kind {
        K::AwsCapacityReservation => false,
        K::AwsCapacityBlock => true,
        _ => return None,
    };
    Some(gpu_core::model::Ec2Reservation {
        id: r.commitment_id?,
        capacity_block,
    })
}

/// The `reservation` block of pool `v` with a kind that parses (its price left out).
fn pool_reservation(v: &Value) -> Option<gpu_core::pool::PoolReservation> {
    let r = super::inputs::reservation(v)?;
    Some(gpu_core::pool::PoolReservation {
        commitment_id: r.commitment_id,
        kind: r.kind.parse().ok()?,
        usd_per_gpu_hour: None,
    })
}

/// Checks the block of the pool's own `cloud` (`aws`, `azure` or `gcp`; the others are
/// ignored) in `config`, at validate (`region` unknown: `None`) and again at plan.
pub fn check_own(config: &Value, cloud: Cloud, region: Option<&str>, d: &mut Diagnostics) {
    match cloud {
        Cloud::Aws => super::aws_block::check(config, d),
        Cloud::Azure => check_azure(config, d),
        Cloud::Gcp => check_gcp(config, region, d),
        _ => {}
    }
}

/// Checks the `azure` block of an azure pool (unknown values pass).
fn check_azure(config: &Value, d: &mut Diagnostics) {
    let Some(b) = PoolModel::of(config).azure.into_known() else {
        return;
    };
    let at = |name: &str| AttributePath::attr("azure").then_attr(name);
    if let Some(s) = model::opt(&b.subnet_id)
        && !is_subnet_arm_id(&s)
    {
        d.attr_error(
            at("subnet_id"),
            "Invalid azure.subnet_id",
            format!("`azure.subnet_id` is {s:?}; it must be a subnet's ARM id such as \"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/gpu\"."),
        );
    }
    if let Some(zones) = model::strings(&b.zones) {
        for z in zones.iter().filter(|z| canonical(z, &AKS_ZONES).is_none()) {
            d.attr_error(
                at("zones"),
                "Invalid availability zone",
                format!(
                    "`azure.zones` has {z:?}; Azure availability zones are \"1\", \"2\" and \"3\"."
                ),
            );
        }
    }
    if let Some(s) = model::opt(&b.os_sku)
        && canonical(&s, &AKS_OS_SKUS).is_none()
    {
        d.attr_error(
            at("os_sku"),
            "Invalid azure.os_sku",
            format!(
                "`azure.os_sku` is {s:?}; GPU agent pools run Linux: valid values are {}.",
                quoted(&AKS_OS_SKUS)
            ),
        );
    }
    if let Some(s) = model::opt(&b.gpu_driver)
        && mapped(&s, &AKS_DRIVERS).is_none()
    {
        d.attr_error(
            at("gpu_driver"),
            "Invalid azure.gpu_driver",
            format!("`azure.gpu_driver` is {s:?}; valid values are `install` (AKS installs the NVIDIA driver) and `none` (you install it)."),
        );
    }
}

/// Checks the `gcp` block of a gcp pool priced in `region` (unknown values pass; zones
/// are checked against the region once it is known).
fn check_gcp(config: &Value, region: Option<&str>, d: &mut Diagnostics) {
    let pool = PoolModel::of(config);
    let Some(b) = pool.gcp.known() else {
        return;
    };
    let at = |name: &str| AttributePath::attr("gcp").then_attr(name);
    if !pool.reservation.is_null() && !b.reservation_affinity.is_null() {
        d.attr_error(
            at("reservation_affinity"),
            "Invalid gcp.reservation_affinity",
            "`gcp.reservation_affinity` and a `reservation` block both say which reservation the on-demand pool consumes: keep one (the `reservation` block also prices the floor at the commitment's price).",
        );
    }
    if let Some(s) = model::opt(&b.service_account)
        && !is_email(&s)
    {
        d.attr_error(
            at("service_account"),
            "Invalid gcp.service_account",
            format!("`gcp.service_account` is {s:?}; give the service account's e-mail, such as \"gpu-nodes@my-project.iam.gserviceaccount.com\"."),
        );
    }
    if let Some(zones) = model::strings(&b.node_locations) {
        if zones.is_empty() {
            d.attr_error(
                at("node_locations"),
                "Empty gcp.node_locations",
                "`gcp.node_locations` is empty; list at least one zone, or leave it unset to use the cluster's zones.",
            );
        }
        // While the region is unknown (validate), the zones wait for plan.
        if let Some(region) = region {
            for z in zones.iter().filter(|z| !is_zone_in(z, region)) {
                d.attr_error(
                    at("node_locations"),
                    "Zone outside the pool's region",
                    format!("`gcp.node_locations` has {z:?}; every zone must be in the pool's region {region:?}, such as \"{region}-a\"."),
                );
            }
        }
    }
    if let Some(s) = model::opt(&b.image_type)
        && canonical(&s, &GKE_IMAGE_TYPES).is_none()
    {
        d.attr_error(
            at("image_type"),
            "Invalid gcp.image_type",
            format!(
                "`gcp.image_type` is {s:?}; GKE runs NVIDIA GPUs on {}.",
                quoted(&GKE_IMAGE_TYPES)
            ),
        );
    }
    if let Some(s) = model::opt(&b.gpu_driver_version)
        && mapped(&s, &GKE_DRIVERS).is_none()
    {
        d.attr_error(
            at("gpu_driver_version"),
            "Invalid gcp.gpu_driver_version",
            format!("`gcp.gpu_driver_version` is {s:?}; valid values are `default`, `latest` and `disabled`."),
        );
    }
    check_reservation(b, d);
}

/// `gcp.reservation_affinity` and `gcp.reservation_name`: a known affinity, and a name
/// exactly when it is `specific`, shaped as Compute Engine names reservations.
fn check_reservation(b: &GcpModel, d: &mut Diagnostics) {
    let at = |name: &str| AttributePath::attr("gcp").then_attr(name);
    if b.reservation_affinity.is_unknown() || b.reservation_name.is_unknown() {
        return;
    }
    let affinity = model::opt(&b.reservation_affinity);
    let name = model::opt(&b.reservation_name);
    let kind = affinity
        .as_deref()
        .map(|a| (a, mapped(a, &GKE_RESERVATIONS)));
    if let Some((a, None)) = kind {
        d.attr_error(
            at("reservation_affinity"),
            "Invalid gcp.reservation_affinity",
            format!("`gcp.reservation_affinity` is {a:?}; valid values are `any`, `none` and `specific`."),
        );
        return;
    }
    let specific = kind.and_then(|(_, t)| t) == Some("SPECIFIC_RESERVATION");
    match (&name, specific) {
        // On the attribute that is written, so Terraform can point at its line.
        (None, true) => d.attr_error(
            at("reservation_affinity"),
            "Missing gcp.reservation_name",
            "`gcp.reservation_affinity = \"specific\"` needs `gcp.reservation_name`: the name of the reservation the on-demand pool consumes.",
        ),
        (Some(_), false) => d.attr_error(
            at("reservation_name"),
            "gcp.reservation_name without a specific affinity",
            "`gcp.reservation_name` is used only with `gcp.reservation_affinity = \"specific\"`: set that, or remove the name.",
        ),
        (Some(n), true) if !is_resource_name(n) => d.attr_error(
            at("reservation_name"),
            "Invalid gcp.reservation_name",
            format!("`gcp.reservation_name` is {n:?}; a reservation name is 1-63 lower-case letters, digits and `-`, starting with a letter and not ending with `-`."),
        ),
        _ => {}
    }
}

/// A Compute Engine resource name (RFC 1035 label, lower case).
fn is_resource_name(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `/subscriptions/<guid>/resourceGroups/<g>/providers/Microsoft.Network/virtualNetworks/<v>/subnets/<s>`,
/// segment names in any letter case, as ARM reads them.
fn is_subnet_arm_id(s: &str) -> bool {
    let parts: Vec<&str> = s.trim().split('/').collect();
    let fixed = [
        (1, "subscriptions"),
        (3, "resourceGroups"),
        (5, "providers"),
        (6, "Microsoft.Network"),
        (7, "virtualNetworks"),
        (9, "subnets"),
    ];
    parts.len() == 11
        && parts[0].is_empty()
        && fixed
            .iter()
            .all(|(i, name)| parts[*i].eq_ignore_ascii_case(name))
        && is_guid(parts[2])
        && [4, 8, 10].iter().all(|i| !parts[*i].is_empty())
}

/// `local@domain.tld`, no spaces.
fn is_email(s: &str) -> bool {
    let s = s.trim();
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !s.contains(char::is_whitespace)
                && !domain.contains('@')
        }
        None => false,
    }
}

/// A zone of `region` ([`is_zone_of`]), both read in any letter case.
fn is_zone_in(zone: &str, region: &str) -> bool {
    is_zone_of(
        &zone.trim().to_ascii_lowercase(),
        &region.trim().to_ascii_lowercase(),
    )
}

/// One attribute of a cloud block, read into its canonical form (the cloud's spelling,
/// sets sorted), so that two spellings of one value compare equal.
fn canonical_attr(block: &str, attr: &str, v: &Value) -> Option<Vec<String>> {
    let one = |s: Option<String>| s.map(|s| vec![s]);
    let text = v.as_str();
    match (block, attr) {
        ("azure", "os_sku") => one(text
            .and_then(|t| canonical(t, &AKS_OS_SKUS))
            .map(String::from)),
        ("azure", "gpu_driver") => {
            one(text.and_then(|t| mapped(t, &AKS_DRIVERS)).map(String::from))
        }
        ("azure", "subnet_id") => one(text.map(|t| t.trim().to_ascii_lowercase())),
        ("gcp", "image_type") => one(text
            .and_then(|t| canonical(t, &GKE_IMAGE_TYPES))
            .map(String::from)),
        ("gcp", "gpu_driver_version") => {
            one(text.and_then(|t| mapped(t, &GKE_DRIVERS)).map(String::from))
        }
        ("gcp", "service_account") | ("gcp", "reservation_name") => {
            one(text.map(|t| t.trim().to_ascii_lowercase()))
        }
        ("gcp", "reservation_affinity") => one(text
            .and_then(|t| mapped(t, &GKE_RESERVATIONS))
            .map(String::from)),
        ("azure", "zones") | ("gcp", "node_locations") => {
            let mut all: Vec<String> = v
                .as_elements()?
                .iter()
                .map(|e| e.as_str().map(|s| s.trim().to_ascii_lowercase()))
                .collect::<Option<_>>()?;
            all.sort();
            all.dedup();
            Some(all)
        }
        _ => None,
    }
}

/// `proposed` with each `azure {}` / `gcp {}` attribute whose new spelling means the same
/// as the prior's (`ubuntu` for `Ubuntu`, zones in another order) set back to the prior's,
/// so the plan shows no change (rule 1: a spelling is never a change).
pub fn keep_prior_spelling(prior: &Value, proposed: &mut Value) {
    for name in ["azure", "gcp"] {
        let (Some(Value::Object(p)), Some(Value::Object(n))) =
            (prior.get_attr(name), proposed.get_attr(name))
        else {
            continue;
        };
        let mut kept = n.clone();
        for (attr, new) in n {
            let Some(old) = p.get(attr) else { continue };
            if old == new || old.is_null() || new.is_null() || !new.is_wholly_known() {
                continue;
            }
            let (a, b) = (
                canonical_attr(name, attr, old),
                canonical_attr(name, attr, new),
            );
            if a.is_some() && a == b {
                kept.insert(attr.clone(), old.clone());
            }
        }
        if let Value::Object(m) = proposed {
            m.insert(name.to_string(), Value::Object(kept));
        }
    }
}

/// The `azure {}` or `gcp {}` block of state `s` after reading `live` (the class of the
/// pool's first group): each attribute the state sets that no longer describes what is
/// live takes the live value (drift shows in the next plan); on import (no block yet) the
/// block holds what differs from the defaults, so a configuration that leaves the
/// defaults out plans no change.
pub fn block_from_live(s: &mut Value, live: &NodeClass, floor: Option<&NodeClass>) {
    let (name, pairs): (&str, Vec<(&str, Value)>) = match live {
        NodeClass::Azure(c) => (
            "azure",
            vec![
                ("os_sku", Value::string(&c.os_sku)),
                (
                    "gpu_driver",
                    Value::string(unmapped(&c.gpu_driver, &AKS_DRIVERS)),
                ),
                (
                    "zones",
                    Value::Set(c.zones.iter().map(Value::string).collect()),
                ),
                (
                    "subnet_id",
                    c.subnet.as_deref().map_or(Value::Null, Value::string),
                ),
            ],
        ),
        NodeClass::Gcp(c) => (
            "gcp",
            vec![
                ("image_type", Value::string(&c.image_type)),
                (
                    "gpu_driver_version",
                    Value::string(unmapped(&c.driver_version, &GKE_DRIVERS)),
                ),
                (
                    "node_locations",
                    Value::Set(c.locations.iter().map(Value::string).collect()),
                ),
                (
                    "service_account",
                    c.service_account
                        .as_deref()
                        .map_or(Value::Null, Value::string),
                ),
                // Read from the floor's class below.
                ("reservation_affinity", Value::Null),
                ("reservation_name", Value::Null),
            ],
        ),
        NodeClass::Aws(_) => return,
    };
    let prior = s.get_attr(name).filter(|b| !b.is_null()).cloned();
    let mut block = match &prior {
        Some(Value::Object(m)) => m.clone(),
        _ => Default::default(),
    };
    // The reservation is the on-demand pool's (the floor's): without one, nothing to read.
    let floor_reservation = match floor {
        Some(NodeClass::Gcp(c)) => Some(c.reservation.clone()),
        _ => None,
    };
    for (attr, mut live_value) in pairs {
        if attr.starts_with("reservation_") {
            let Some(r) = &floor_reservation else {
                continue;
            };
            live_value = match (attr, r) {
                ("reservation_affinity", Some(r)) => Value::string(unmapped(
                    gpu_core::clouds::gcp::rules::consume_type(r),
                    &GKE_RESERVATIONS,
                )),
                ("reservation_name", Some(Reservation::Specific(n))) => Value::string(n),
                _ => Value::Null,
            };
        }
        let old = block.get(attr).cloned().unwrap_or(Value::Null);
        let live_canon = canonical_attr(name, attr, &live_value);
        let is_default = match (name, attr) {
            ("azure", "os_sku") => live_canon == Some(vec!["Ubuntu".into()]),
            ("azure", "gpu_driver") => live_canon == Some(vec!["Install".into()]),
            ("gcp", "image_type") => live_canon == Some(vec!["COS_CONTAINERD".into()]),
            ("gcp", "gpu_driver_version") => live_canon == Some(vec!["DEFAULT".into()]),
            // Unset means the cluster's (or GKE's default): what it is cannot be told from
            // the pool.
            ("azure", "subnet_id")
            | ("gcp", "node_locations")
            | ("gcp", "service_account")
            | ("gcp", "reservation_affinity")
            | ("gcp", "reservation_name") => true,
            _ => live_canon.as_ref().is_none_or(Vec::is_empty),
        };
        let new = if old.is_null() {
            if is_default { Value::Null } else { live_value }
        } else if canonical_attr(name, attr, &old) == live_canon
            || (live_value.is_null() && is_default)
        {
            old
        } else {
            live_value
        };
        block.insert(attr.to_string(), new);
    }
    let all_null = block.values().all(Value::is_null);
    let value = if prior.is_none() && all_null {
        Value::Null
    } else {
        Value::Object(block)
    };
    if let Value::Object(m) = s {
        m.insert(name.to_string(), value);
    }
}

/// The user's word for the cloud's `value` in `table` (`Install` → `install`).
fn unmapped(value: &str, table: &[(&'static str, &str)]) -> String {
    table
        .iter()
        .find(|(_, v)| v.eq_ignore_ascii_case(value))
        .map_or_else(|| value.to_string(), |(k, _)| (*k).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_with(name: &str, block: Value) -> Value {
        Value::object([(name, block)])
    }

    fn errors(d: &Diagnostics) -> Vec<String> {
        d.0.iter()
            .map(|x| {
                let at = x.attribute.as_ref().map(ToString::to_string);
                format!("{} | {}", at.unwrap_or_default(), x.detail)
            })
            .collect()
    }

    #[test]
    fn azure_class_defaults_and_canonical_spellings() {
        assert_eq!(
            azure_class(&Value::object([("azure", Value::Null)])),
            AzureClass {
                subnet: None,
                zones: vec![],
                os_sku: "Ubuntu".into(),
                gpu_driver: "Install".into(),
                deallocate_evicted: false,
                capacity_reservation_group: None,
            }
        );
        let v = pool_with(
            "azure",
            Value::object([
                ("os_sku", Value::string("azurelinux")),
                ("gpu_driver", Value::string("NONE")),
                (
                    "zones",
                    Value::Set(vec![Value::string("3"), Value::string("1")]),
                ),
            ]),
        );
        let c = azure_class(&v);
        assert_eq!(
            (c.os_sku.as_str(), c.gpu_driver.as_str(), c.zones),
            ("AzureLinux", "None", vec!["1".to_string(), "3".to_string()])
        );
    }

    #[test]
    fn gcp_class_defaults_and_canonical_spellings() {
        let c = gcp_class(&Value::object([("gcp", Value::Null)]));
        assert_eq!(
            (
                c.image_type.as_str(),
                c.driver_version.as_str(),
                c.service_account
            ),
            ("COS_CONTAINERD", "DEFAULT", None)
        );
        let v = pool_with(
            "gcp",
            Value::object([
                ("image_type", Value::string("ubuntu_containerd")),
                ("gpu_driver_version", Value::string("Disabled")),
                (
                    "node_locations",
                    Value::Set(vec![
                        Value::string("us-central1-B"),
                        Value::string("us-central1-a"),
                    ]),
                ),
            ]),
        );
        let c = gcp_class(&v);
        assert_eq!(
            (c.image_type.as_str(), c.driver_version.as_str()),
            ("UBUNTU_CONTAINERD", "INSTALLATION_DISABLED")
        );
        assert_eq!(c.locations, ["us-central1-a", "us-central1-b"]);
    }

    #[test]
    fn bad_azure_values_name_their_attribute() {
        let v = pool_with(
            "azure",
            Value::object([
                ("subnet_id", Value::string("subnet-0123abcd")),
                ("zones", Value::Set(vec![Value::string("4")])),
                ("os_sku", Value::string("Windows2022")),
                ("gpu_driver", Value::string("cuda")),
            ]),
        );
        let mut d = Diagnostics::default();
        check_azure(&v, &mut d);
        let e = errors(&d);
        assert_eq!(e.len(), 4, "{e:#?}");
        for (path, word) in [
            ("azure.subnet_id", "ARM id"),
            ("azure.zones", "\"4\""),
            ("azure.os_sku", "`AzureLinux`"),
            ("azure.gpu_driver", "`install`"),
        ] {
            assert!(
                e.iter().any(|x| x.starts_with(path) && x.contains(word)),
                "{path}: {e:#?}"
            );
        }
    }

    #[test]
    fn good_azure_values_pass() {
        let v = pool_with(
            "azure",
            Value::object([
                (
                    "subnet_id",
                    Value::string(
                        "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/net/providers/microsoft.network/virtualNetworks/vnet/subnets/gpu",
                    ),
                ),
                (
                    "zones",
                    Value::Set(vec![Value::string("1"), Value::string("2")]),
                ),
                ("os_sku", Value::string("ubuntu2204")),
                ("gpu_driver", Value::string("Install")),
            ]),
        );
        let mut d = Diagnostics::default();
        check_azure(&v, &mut d);
        assert!(errors(&d).is_empty(), "{:#?}", errors(&d));
    }

    #[test]
    fn bad_gcp_values_name_their_attribute() {
        let v = pool_with(
            "gcp",
            Value::object([
                ("service_account", Value::string("gpu-nodes")),
                (
                    "node_locations",
                    Value::Set(vec![
                        Value::string("us-central1-a"),
                        Value::string("europe-west4-a"),
                    ]),
                ),
                ("image_type", Value::string("WINDOWS_LTSC_CONTAINERD")),
                ("gpu_driver_version", Value::string("550.54")),
            ]),
        );
        let mut d = Diagnostics::default();
        check_gcp(&v, Some("us-central1"), &mut d);
        let e = errors(&d);
        assert_eq!(e.len(), 4, "{e:#?}");
        for (path, word) in [
            ("gcp.service_account", "e-mail"),
            ("gcp.node_locations", "europe-west4-a"),
            ("gcp.image_type", "COS_CONTAINERD"),
            ("gcp.gpu_driver_version", "`latest`"),
        ] {
            assert!(
                e.iter().any(|x| x.starts_with(path) && x.contains(word)),
                "{path}: {e:#?}"
            );
        }
        // While the region is unknown (validate), zones wait; the rest is still checked.
        let mut d = Diagnostics::default();
        check_gcp(&v, None, &mut d);
        let e = errors(&d);
        assert_eq!(e.len(), 3, "{e:#?}");
        assert!(
            !e.iter().any(|x| x.starts_with("gcp.node_locations")),
            "{e:#?}"
        );
    }

    #[test]
    fn shapes() {
        assert!(is_email("gpu@p.iam.gserviceaccount.com"));
        assert!(!is_email("gpu@localhost"));
        assert!(!is_email("a b@c.d"));
        assert!(is_zone_in("US-CENTRAL1-F", "us-central1"));
        assert!(!is_zone_in("us-central1", "us-central1"));
        assert!(!is_zone_in("us-central10-a", "us-central1"));
        assert!(is_guid("00000000-0000-0000-0000-00000000abcd"));
        assert!(!is_guid("0000-0000"));
    }

    #[test]
    fn another_spelling_of_a_block_value_keeps_the_prior_one() {
        let prior = pool_with(
            "azure",
            Value::object([
                ("os_sku", Value::string("Ubuntu")),
                (
                    "zones",
                    Value::Set(vec![Value::string("1"), Value::string("2")]),
                ),
                ("gpu_driver", Value::string("install")),
                ("subnet_id", Value::Null),
            ]),
        );
        let mut proposed = pool_with(
            "azure",
            Value::object([
                ("os_sku", Value::string("ubuntu")),
                (
                    "zones",
                    Value::Set(vec![Value::string("2"), Value::string("1")]),
                ),
                ("gpu_driver", Value::string("None")),
                ("subnet_id", Value::Null),
            ]),
        );
        keep_prior_spelling(&prior, &mut proposed);
        let b = proposed.get_attr("azure").unwrap();
        assert_eq!(b.get_attr("os_sku").and_then(Value::as_str), Some("Ubuntu"));
        assert_eq!(
            b.get_attr("zones"),
            prior.get_attr("azure").unwrap().get_attr("zones")
        );
        // A real change stays a change.
        assert_eq!(
            b.get_attr("gpu_driver").and_then(Value::as_str),
            Some("None")
        );
    }

    #[test]
    fn live_block_keeps_the_users_spelling_shows_drift_and_imports_only_non_defaults() {
        let live = NodeClass::Gcp(GcpClass {
            image_type: "UBUNTU_CONTAINERD".into(),
            driver_version: "DEFAULT".into(),
            locations: vec!["us-central1-a".into()],
            ..Default::default()
        });
        // Import: no block yet; only what differs from the defaults is written.
        let mut s = Value::object([("gcp", Value::Null)]);
        block_from_live(&mut s, &live, None);
        let b = s.get_attr("gcp").unwrap();
        assert_eq!(
            b.get_attr("image_type").and_then(Value::as_str),
            Some("UBUNTU_CONTAINERD")
        );
        assert!(b.get_attr("gpu_driver_version").unwrap().is_null());
        assert!(
            b.get_attr("node_locations").unwrap().is_null(),
            "the cluster's"
        );
        // The user's spelling stays while it means what is live; drift shows.
        let mut s = pool_with(
            "gcp",
            Value::object([
                ("image_type", Value::string("ubuntu_containerd")),
                ("gpu_driver_version", Value::string("latest")),
                ("node_locations", Value::Null),
                ("service_account", Value::Null),
            ]),
        );
        block_from_live(&mut s, &live, None);
        let b = s.get_attr("gcp").unwrap();
        assert_eq!(
            b.get_attr("image_type").and_then(Value::as_str),
            Some("ubuntu_containerd")
        );
        assert_eq!(
            b.get_attr("gpu_driver_version").and_then(Value::as_str),
            Some("default")
        );
        // All defaults on import: no block at all.
        let mut s = Value::object([("azure", Value::Null)]);
        block_from_live(&mut s, &NodeClass::Azure(azure_class(&Value::Null)), None);
        assert!(s.get_attr("azure").unwrap().is_null());
    }

    #[test]
    fn reservation_affinity_is_checked_and_read_into_the_gke_class() {
        let gcp = |pairs: Vec<(&str, &str)>| {
            pool_with(
                "gcp",
                Value::object(pairs.into_iter().map(|(k, v)| (k, Value::string(v)))),
            )
        };
        let check = |v: &Value| {
            let mut d = Diagnostics::new();
            check_own(v, Cloud::Gcp, Some("us-central1"), &mut d);
            errors(&d)
        };
        let ok = gcp(vec![
            ("reservation_affinity", "Specific"),
            ("reservation_name", "h100-floor"),
        ]);
        assert!(check(&ok).is_empty(), "{:?}", check(&ok));
        assert_eq!(
            gcp_class(&ok).reservation,
            Some(Reservation::Specific("h100-floor".into()))
        );
        assert_eq!(
            gcp_class(&gcp(vec![("reservation_affinity", "none")])).reservation,
            Some(Reservation::None)
        );
        assert_eq!(gcp_class(&gcp(vec![])).reservation, None);
        for (pairs, says) in [
            (
                vec![("reservation_affinity", "specific")],
                "gcp.reservation_affinity | `gcp.reservation_affinity = \"specific\"` needs",
            ),
            (
                vec![("reservation_name", "h100-floor")],
                "gcp.reservation_name | `gcp.reservation_name` is used only",
            ),
            (
                vec![("reservation_affinity", "all")],
                "gcp.reservation_affinity | `gcp.reservation_affinity` is \"all\"",
            ),
            (
                vec![
                    ("reservation_affinity", "specific"),
                    ("reservation_name", "H100_Floor"),
                ],
                "gcp.reservation_name | `gcp.reservation_name` is \"H100_Floor\"",
            ),
        ] {
            let errs = check(&gcp(pairs));
            assert!(errs.iter().any(|e| e.starts_with(says)), "{says}: {errs:?}");
        }
    }
}
