//! The pool's `gcp {}` block (GKE node pools): its schema, its checks on a gcp pool, the
//! GKE node class it makes, and its values read back from a live pool.

use gpu_core::model::{GcpClass, NodeClass, Reservation};
use gpu_core::seam::is_zone_of;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{AttributePath, Diagnostics, Type, Value};

use super::spelling::{canonical, canonical_set, mapped, quoted, unmapped};
use crate::resources::node_pool::inputs::pool_reservation;
use crate::resources::node_pool::model::{self, GcpModel, PoolModel};

/// GKE node images that run NVIDIA GPUs.
pub const GKE_IMAGE_TYPES: [&str; 2] = ["COS_CONTAINERD", "UBUNTU_CONTAINERD"];

/// `gcp.gpu_driver_version` values and what GKE `gpuDriverVersion` they become.
pub(super) const GKE_DRIVERS: [(&str, &str); 3] = [
    ("default", "DEFAULT"),
    ("latest", "LATEST"),
    ("disabled", "INSTALLATION_DISABLED"),
];

/// `gcp.reservation_affinity` values and the GKE `consumeReservationType` they become.
pub(super) const GKE_RESERVATIONS: [(&str, &str); 3] = [
    ("any", "ANY_RESERVATION"),
    ("none", "NO_RESERVATION"),
    ("specific", "SPECIFIC_RESERVATION"),
];

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

/// The specific reservation of the `reservation` block's commitment, when its kind is a
/// Google Cloud one and its id is known.
pub(super) fn commitment_reservation(v: &Value) -> Option<Reservation> {
    pool_reservation(v)?
        .gke_reservation_name()
        .map(Reservation::Specific)
}

/// Checks the `gcp` block of a gcp pool priced in `region` (unknown values pass; zones
/// are checked against the region once it is known).
pub(super) fn check_gcp(config: &Value, region: Option<&str>, d: &mut Diagnostics) {
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
pub(super) fn check_reservation(b: &GcpModel, d: &mut Diagnostics) {
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
pub(super) fn is_resource_name(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `local@domain.tld`, no spaces.
pub(super) fn is_email(s: &str) -> bool {
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
pub(super) fn is_zone_in(zone: &str, region: &str) -> bool {
    is_zone_of(
        &zone.trim().to_ascii_lowercase(),
        &region.trim().to_ascii_lowercase(),
    )
}

/// One attribute of the block in its canonical form (the cloud's spelling, sets sorted).
pub(super) fn canonical_attr(attr: &str, v: &Value) -> Option<Vec<String>> {
    let one = |s: Option<String>| s.map(|s| vec![s]);
    let text = v.as_str();
    match attr {
        "image_type" => one(text
            .and_then(|t| canonical(t, &GKE_IMAGE_TYPES))
            .map(String::from)),
        "gpu_driver_version" => one(text.and_then(|t| mapped(t, &GKE_DRIVERS)).map(String::from)),
        "service_account" | "reservation_name" => one(text.map(|t| t.trim().to_ascii_lowercase())),
        "reservation_affinity" => one(text
            .and_then(|t| mapped(t, &GKE_RESERVATIONS))
            .map(String::from)),
        "node_locations" => canonical_set(v),
        _ => None,
    }
}

/// The block's attributes as a live node pool of class `c` reports them; the reservation
/// is the on-demand pool's (`floor`): without a floor there is none to read.
pub(super) fn live_pairs(c: &GcpClass, floor: Option<&NodeClass>) -> Vec<(&'static str, Value)> {
    let mut pairs = vec![
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
    ];
    if let Some(NodeClass::Gcp(f)) = floor {
        let affinity = f.reservation.as_ref().map_or(Value::Null, |r| {
            Value::string(unmapped(
                gpu_core::clouds::gcp::rules::consume_type(r),
                &GKE_RESERVATIONS,
            ))
        });
        let name = match &f.reservation {
            Some(Reservation::Specific(n)) => Value::string(n),
            _ => Value::Null,
        };
        pairs.push(("reservation_affinity", affinity));
        pairs.push(("reservation_name", name));
    }
    pairs
}

/// Whether the live value of `attr` (canonical `live`) is what an unset attribute means.
pub(super) fn is_default(attr: &str, live: Option<&Vec<String>>) -> bool {
    match attr {
        "image_type" => live == Some(&vec!["COS_CONTAINERD".to_string()]),
        "gpu_driver_version" => live == Some(&vec!["DEFAULT".to_string()]),
        // Unset means the cluster's (or GKE's default): what it is cannot be told from the
        // pool.
        "node_locations" | "service_account" | "reservation_affinity" | "reservation_name" => true,
        _ => live.is_none_or(Vec::is_empty),
    }
}
