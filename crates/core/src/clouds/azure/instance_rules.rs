//! Azure virtual machines as data: availability zones `1` to `3`, the largest OS disk, tag
//! names, custom data, image shapes (marketplace URN or ARM id), the `azure {}` block
//! (resource group, subnet, admin user and SSH key), and the VM id an import names.

use crate::offer::Cloud;
use crate::seam::instance_rules::{InstanceBlocks, InstanceRules, RuleProblems};
use crate::seam::instances::{InstanceClass, MARKER_LABEL};

/// Azure virtual machines.
pub static AZURE_VMS: InstanceRules = InstanceRules {
    cloud: Cloud::Azure,
    max_disk_gb: 4095,
    labels_are_pool_tags: false,
    user_data_limit: 49_149,
    user_data_rule: "Azure takes at most 64 KB of base64 custom data (48 KB before encoding)",
    image_shapes: "`publisher:offer:sku:version` (a marketplace image) or an image's ARM id `/subscriptions/…`",
    marker: MARKER_LABEL,
    name_tag: None,
    zone_problem,
    label_problem,
    image_ok,
    class,
};

/// An availability zone is `1`, `2` or `3`; none is fine.
fn zone_problem(_region: &str, zone: Option<&str>) -> Option<String> {
    let z = zone?;
    (!matches!(z, "1" | "2" | "3")).then(|| {
        format!("{z:?} is not an Azure availability zone; valid: \"1\", \"2\", \"3\" (or unset: no zone)")
    })
}

/// Tag names are 1 to 512 characters without `<>%&\?/`, values at most 256.
fn label_problem(k: &str, v: &str) -> Option<&'static str> {
    (k.is_empty()
        || k.chars().count() > 512
        || k.chars().any(|c| "<>%&\\?/".contains(c))
        || v.chars().count() > 256)
        .then_some("Azure tag names are 1 to 512 characters without `<>%&\\?/`, values at most 256")
}

/// A marketplace URN `publisher:offer:sku:version` or an image's ARM id.
fn image_ok(i: &str) -> bool {
    i.starts_with("/subscriptions/") || i.split(':').count() == 4
}

/// The `azure` block: a resource group, a subnet's ARM id and an SSH key are required, and
/// the admin user must be one Azure allows.
fn class(b: &InstanceBlocks<'_>, p: &mut RuleProblems) -> InstanceClass {
    let mut push = |attr: &str, problem: String| p.push((attr.to_string(), problem));
    let a = b.azure.cloned().unwrap_or_default();
    let rg = a.resource_group.map(|s| s.trim().to_string());
    if rg.as_deref().is_none_or(str::is_empty) {
        push(
            "azure.resource_group",
            "required on Azure: the resource group the VM, its disk and NIC are created in".into(),
        );
    }
    let subnet = a.subnet_id.map(|s| s.trim().to_string());
    match &subnet {
        None => push(
            "azure.subnet_id",
            "required on Azure: the ARM id of the subnet the VM's NIC joins (`/subscriptions/…/virtualNetworks/<vnet>/subnets/<subnet>`)".into(),
        ),
        Some(s)
            if !(s.to_ascii_lowercase().starts_with("/subscriptions/")
                && s.to_ascii_lowercase().contains("/subnets/")) =>
        {
            push(
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
        push(
            "azure.ssh_public_key",
            "required on Azure: an OpenSSH public key (`ssh-rsa …`, `ssh-ed25519 …`); Linux VMs are created without passwords".into(),
        );
    }
    let user = a.admin_username.unwrap_or_else(|| "azureuser".into());
    if user.is_empty()
        || user.len() > 64
        || matches!(user.as_str(), "root" | "admin" | "administrator")
    {
        push(
            "azure.admin_username",
            format!(
                "{user:?} is not allowed by Azure: 1 to 64 characters, not `root`, `admin` or `administrator`"
            ),
        );
    }
    InstanceClass::Azure {
        resource_group: rg.unwrap_or_default(),
        subnet_id: subnet.unwrap_or_default(),
        admin_username: user,
        ssh_public_key: key.unwrap_or_default(),
    }
}

/// How a VM's ARM id looks, for messages.
pub const VM_ID_SHAPE: &str =
    "/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>";

/// A VM's ARM id read as (subscription, resource group, name), its segment names in any
/// letter case as ARM reads them; `None` for any other shape.
pub fn parse_vm_id(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        [s, sub, r, rg, p, ns, t, name]
            if s.eq_ignore_ascii_case("subscriptions")
                && r.eq_ignore_ascii_case("resourceGroups")
                && p.eq_ignore_ascii_case("providers")
                && ns.eq_ignore_ascii_case("Microsoft.Compute")
                && t.eq_ignore_ascii_case("virtualMachines")
                && !name.is_empty() =>
        {
            Some((sub, rg, name))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_tags_images_and_vm_ids() {
        assert_eq!(AZURE_VMS.zone_problem("eastus", Some("2")), None);
        assert!(AZURE_VMS.zone_problem("eastus", Some("eastus-1")).is_some());
        assert!(AZURE_VMS.label_problem("a/b", "x").is_some());
        assert!(AZURE_VMS.label_problem("Team", "ml").is_none());
        assert!(AZURE_VMS.image_ok("microsoft-dsvm:ubuntu-hpc:2204:latest"));
        assert!(!AZURE_VMS.image_ok("ami-0123456789abcdef0"));
        let id =
            "/SUBSCRIPTIONS/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines/vm";
        assert_eq!(parse_vm_id(id), Some(("s", "rg", "vm")));
        assert_eq!(parse_vm_id("/subscriptions/s/resourceGroups/rg"), None);
    }
}
