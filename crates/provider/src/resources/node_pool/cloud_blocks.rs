//! The pool's `azure {}` and `gcp {}` blocks: their schema, their checks at plan (only on
//! the pool's own cloud: the other blocks are ignored, so one module can carry every
//! cloud's settings) and the node class they make. Values are read in any letter case and
//! always compared in the cloud's own spelling, so `ubuntu` and `Ubuntu` are one value.

use gpu_core::cloud::{is_guid, is_zone_of};
use gpu_core::model::{AzureClass, GcpClass};
use gpu_core::offer::Cloud;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{AttributePath, Diagnostics, Type, Value};

use super::inputs::{opt_text, strings};

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

/// The `azure {}` block of `gpu_node_pool`.
pub fn azure_block() -> NestedBlock {
    NestedBlock::single(
        "azure",
        Block::new("Settings used when `cloud = \"azure\"` (ignored on other clouds). Values are read in any letter case. Checked now; used when AKS node pools come in the next release (until then `cloud = \"azure\"` is refused at plan).")
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
        Block::new("Settings used when `cloud = \"gcp\"` (ignored on other clouds). Values are read in any letter case. Checked now; used when GKE node pools come in the next release (until then `cloud = \"gcp\"` is refused at plan).")
            .attribute(Attribute::optional("service_account", Type::String).describe("E-mail of the service account the nodes run as; default the project's Compute Engine default service account. Changing it rolls the node pools."))
            .attribute(Attribute::optional("node_locations", Type::set(Type::String)).describe("Zones of the nodes, all in the pool's `region` (e.g. `us-central1-a`); default the cluster's. Changing it rolls the node pools."))
            .attribute(Attribute::optional("image_type", Type::String).describe(format!("Node image: one of {}; default `COS_CONTAINERD`. Changing it rolls the node pools.", quoted(&GKE_IMAGE_TYPES))))
            .attribute(Attribute::optional("gpu_driver_version", Type::String).describe("NVIDIA driver GKE installs: `default` (default), `latest`, or `disabled` (you install it, for example with the NVIDIA GPU Operator). Changing it rolls the node pools.")),
    )
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The known `block` of `v`, if set.
fn block<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.get_attr(name).filter(|b| !b.is_null() && b.is_known())
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
    let b = block(v, "azure");
    let get = |name: &str| b.and_then(|b| opt_text(b, name));
    let mut zones = b.and_then(|b| strings(b, "zones")).unwrap_or_default();
    zones.iter_mut().for_each(|z| *z = z.trim().to_string());
    zones.sort();
    zones.dedup();
    AzureClass {
        subnet: get("subnet_id").map(|s| s.trim().to_string()),
        zones,
        os_sku: get("os_sku")
            .and_then(|s| canonical(&s, &AKS_OS_SKUS))
            .unwrap_or("Ubuntu")
            .into(),
        gpu_driver: get("gpu_driver")
            .and_then(|s| mapped(&s, &AKS_DRIVERS))
            .unwrap_or("Install")
            .into(),
    }
}

/// The GKE node class of pool `v`: its `gcp` block, defaults for what is unset (COS with
/// GKE's default driver, the cluster's zones, the default service account). The GPU's
/// accelerator type and count are the layout's, from the pool's GPU.
pub fn gcp_class(v: &Value) -> GcpClass {
    let b = block(v, "gcp");
    let get = |name: &str| b.and_then(|b| opt_text(b, name));
    let mut locations: Vec<String> = b
        .and_then(|b| strings(b, "node_locations"))
        .unwrap_or_default()
        .into_iter()
        .map(|z| z.trim().to_ascii_lowercase())
        .collect();
    locations.sort();
    locations.dedup();
    GcpClass {
        service_account: get("service_account").map(|s| s.trim().to_ascii_lowercase()),
        locations,
        image_type: get("image_type")
            .and_then(|s| canonical(&s, &GKE_IMAGE_TYPES))
            .unwrap_or("COS_CONTAINERD")
            .into(),
        driver_version: get("gpu_driver_version")
            .and_then(|s| mapped(&s, &GKE_DRIVERS))
            .unwrap_or("DEFAULT")
            .into(),
        ..Default::default()
    }
}

/// Checks the block of the pool's own `cloud` (`aws`, `azure` or `gcp`; the others are
/// ignored) in `config`, at validate (`region` unknown: `None`) and again at plan.
pub fn check_own(config: &Value, cloud: Cloud, region: Option<&str>, d: &mut Diagnostics) {
    match cloud {
        Cloud::Aws => super::inputs::check_aws(config, d),
        Cloud::Azure => check_azure(config, d),
        Cloud::Gcp => check_gcp(config, region, d),
        _ => {}
    }
}

/// Checks the `azure` block of an azure pool (unknown values pass).
fn check_azure(config: &Value, d: &mut Diagnostics) {
    let Some(b) = block(config, "azure") else {
        return;
    };
    let at = |name: &str| AttributePath::attr("azure").then_attr(name);
    if let Some(s) = opt_text(b, "subnet_id")
        && !is_subnet_arm_id(&s)
    {
        d.attr_error(
            at("subnet_id"),
            "Invalid azure.subnet_id",
            format!("`azure.subnet_id` is {s:?}; it must be a subnet's ARM id such as \"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/gpu\"."),
        );
    }
    if let Some(zones) = strings(b, "zones") {
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
    if let Some(s) = opt_text(b, "os_sku")
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
    if let Some(s) = opt_text(b, "gpu_driver")
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
    let Some(b) = block(config, "gcp") else {
        return;
    };
    let at = |name: &str| AttributePath::attr("gcp").then_attr(name);
    if let Some(s) = opt_text(b, "service_account")
        && !is_email(&s)
    {
        d.attr_error(
            at("service_account"),
            "Invalid gcp.service_account",
            format!("`gcp.service_account` is {s:?}; give the service account's e-mail, such as \"gpu-nodes@my-project.iam.gserviceaccount.com\"."),
        );
    }
    if let Some(zones) = strings(b, "node_locations") {
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
    if let Some(s) = opt_text(b, "image_type")
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
    if let Some(s) = opt_text(b, "gpu_driver_version")
        && mapped(&s, &GKE_DRIVERS).is_none()
    {
        d.attr_error(
            at("gpu_driver_version"),
            "Invalid gcp.gpu_driver_version",
            format!("`gcp.gpu_driver_version` is {s:?}; valid values are `default`, `latest` and `disabled`."),
        );
    }
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
}
