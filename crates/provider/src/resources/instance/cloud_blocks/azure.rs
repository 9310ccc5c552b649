//! The instance's `azure {}` block (Azure VMs): its schema, its typed values, the core
//! `AzureInstanceConfig` it becomes, the provider's subscription it needs, and the import
//! id (the VM's ARM id).

use gpu_core::clouds::azure::instance_rules as rules;
use gpu_core::instance::config::AzureInstanceConfig;
use gpu_core::offer::Cloud;
use serde::Deserialize;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{AttributePath, Diagnostic, Tf, Type};

use super::{ImportContext, ImportTarget, bad_id, written};
use crate::clouds::Clouds;
use crate::model_values::opt;

/// The `azure` block of `gpu_instance`.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "azure",
        Block::new("Azure settings (only with `cloud = \"azure\"`); the VM is created in the provider's `azure.subscription_id`.")
            .attribute(Attribute::optional("resource_group", Type::String).describe("Resource group of the VM, its OS disk and its NIC. Required."))
            .attribute(Attribute::optional("subnet_id", Type::String).describe("ARM id of the subnet the VM's NIC joins. Required."))
            .attribute(Attribute::optional("admin_username", Type::String).describe("Linux admin user (default `azureuser`)."))
            .attribute(Attribute::optional("ssh_public_key", Type::String).describe("OpenSSH public key of the admin user. Required: VMs are created without passwords.")),
    )
}

/// The `azure` block's values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AzureBlock {
    /// `resource_group`.
    pub resource_group: Tf<String>,
    /// `subnet_id`.
    pub subnet_id: Tf<String>,
    /// `admin_username`.
    pub admin_username: Tf<String>,
    /// `ssh_public_key`.
    pub ssh_public_key: Tf<String>,
}

/// The block as core reads it, when written.
pub fn config(block: &Tf<AzureBlock>) -> Option<AzureInstanceConfig> {
    written(block).map(|b| AzureInstanceConfig {
        resource_group: opt(&b.resource_group),
        subnet_id: opt(&b.subnet_id),
        admin_username: opt(&b.admin_username),
        ssh_public_key: opt(&b.ssh_public_key),
    })
}

/// The scope Azure VMs live in: the provider's subscription.
pub(super) fn scope(clouds: &Clouds) -> Option<String> {
    clouds.azure_subscription().map(str::to_string)
}

/// The error of an Azure VM without the provider's `azure.subscription_id` to create it in.
pub(super) fn missing_subscription(clouds: &Clouds) -> Option<Diagnostic> {
    clouds.azure_subscription().is_none().then(|| {
        Diagnostic::error(
            "Azure VMs need the provider's azure.subscription_id",
            "gpu_instance creates Azure VMs in the provider's `azure.subscription_id`: set it in the `provider \"gpu\"` block's `azure` block.",
        )
        .at(AttributePath::attr("cloud"))
    })
}

/// The shape of an Azure import id, for messages.
pub(super) fn id_shape() -> String {
    format!("an Azure VM's ARM id (\"{}\")", rules::VM_ID_SHAPE)
}

/// Reads a VM's ARM id (any id starting with `/`), in the provider's subscription; `None`
/// for an id of another shape.
pub fn parse_import(id: &str, ctx: ImportContext<'_>) -> Option<Result<ImportTarget, String>> {
    if !id.starts_with('/') {
        return None;
    }
    let Some((sub, rg, _)) = rules::parse_vm_id(id) else {
        return Some(Err(bad_id(id, "is not an Azure VM's ARM id")));
    };
    match ctx.azure_subscription {
        Some(mine) if mine.eq_ignore_ascii_case(sub) => {}
        Some(mine) => {
            return Some(Err(format!(
                "{id:?} is in subscription {sub}; the provider's `azure.subscription_id` is {mine}: import it with a provider configured for {sub}"
            )));
        }
        None => {
            return Some(Err(format!(
                "{id:?} is an Azure VM: set the provider's `azure.subscription_id` ({sub})"
            )));
        }
    }
    Some(Ok(ImportTarget {
        cloud: Cloud::Azure,
        id: id.to_string(),
        region: String::new(), // read from the VM's location
        zone: None,
        block: Some(("azure", "resource_group", rg.to_string())),
    }))
}
