//! The pool's `azure {}` block (AKS agent pools): its schema, its checks on an azure pool,
//! the AKS node class it makes, and its values read back from a live pool.

use gpu_core::model::AzureClass;
use gpu_core::seam::is_guid;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{AttributePath, Diagnostics, Type, Value};

use super::spelling::{canonical, canonical_set, mapped, quoted, unmapped};
use crate::resources::node_pool::inputs::pool_reservation;
use crate::resources::node_pool::model::{self, PoolModel};

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
pub(super) const AKS_DRIVERS: [(&str, &str); 2] = [("install", "Install"), ("none", "None")];

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

/// Checks the `azure` block of an azure pool (unknown values pass).
pub(super) fn check_azure(config: &Value, d: &mut Diagnostics) {
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

/// `/subscriptions/<guid>/resourceGroups/<g>/providers/Microsoft.Network/virtualNetworks/<v>/subnets/<s>`,
/// segment names in any letter case, as ARM reads them.
pub(super) fn is_subnet_arm_id(s: &str) -> bool {
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

/// One attribute of the block in its canonical form (the cloud's spelling, sets sorted).
pub(super) fn canonical_attr(attr: &str, v: &Value) -> Option<Vec<String>> {
    let one = |s: Option<String>| s.map(|s| vec![s]);
    let text = v.as_str();
    match attr {
        "os_sku" => one(text
            .and_then(|t| canonical(t, &AKS_OS_SKUS))
            .map(String::from)),
        "gpu_driver" => one(text.and_then(|t| mapped(t, &AKS_DRIVERS)).map(String::from)),
        "subnet_id" => one(text.map(|t| t.trim().to_ascii_lowercase())),
        "zones" => canonical_set(v),
        _ => None,
    }
}

/// The block's attributes as a live agent pool of class `c` reports them.
pub(super) fn live_pairs(c: &AzureClass) -> Vec<(&'static str, Value)> {
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
    ]
}

/// Whether the live value of `attr` (canonical `live`) is what an unset attribute means.
pub(super) fn is_default(attr: &str, live: Option<&Vec<String>>) -> bool {
    match attr {
        "os_sku" => live == Some(&vec!["Ubuntu".to_string()]),
        "gpu_driver" => live == Some(&vec!["Install".to_string()]),
        // Unset means the cluster's: what it is cannot be told from the pool.
        "subnet_id" => true,
        _ => live.is_none_or(Vec::is_empty),
    }
}
