//! The provider block's `azure {}` face: its schema and checks, its settings, and the Azure
//! session settings they become.

use gpu_core::clouds::azure::AzureSettings;
use gpu_core::seam::is_guid;
use serde::Deserialize;
use tfplugin::Type;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::validators::Validator;

use crate::checks;

/// The `azure` block's schema.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "azure",
        Block::new("Settings for Azure, used by node pools on AKS, Azure VMs (`gpu_instance`) and Azure commitments. Credentials come from the standard Azure chain (environment client secret, workload identity, managed identity, Azure CLI); `AZURE_AUTHORITY_HOST` is honoured. See the Azure credentials guide.")
            .attribute(Attribute::optional("subscription_id", Type::String).describe("Azure subscription (a GUID): where `gpu_instance` creates VMs, Azure commitments are bought and `live = true` asks Azure's spot placement score; when set, a pool whose `cluster` is in another subscription fails at plan.").validate(guid()))
            .attribute(Attribute::optional("tenant_id", Type::String).describe("Microsoft Entra tenant to authenticate against (a GUID). Defaults to the credential's tenant.").validate(guid()))
            .attribute(Attribute::optional("endpoint", Type::String).describe("Azure Resource Manager endpoint override, for emulators and private endpoints. Defaults to `https://management.azure.com`. (Sovereign clouds are not supported yet: tokens are requested for the public cloud's Resource Manager.)").validate(checks::http_url())),
    )
}

/// A GUID such as a subscription or tenant id.
fn guid() -> Validator {
    Validator::with_detail(|name, v| {
        if v.as_str().is_some_and(is_guid) {
            Ok(())
        } else {
            Err(format!(
                "`{name}` must be a GUID such as \"00000000-0000-0000-0000-000000000000\"."
            ))
        }
    })
    .describe("Must be a GUID.")
}

/// The `azure` block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct AzureConfig {
    /// Subscription id.
    pub subscription_id: Option<String>,
    /// Tenant id.
    pub tenant_id: Option<String>,
    /// ARM endpoint override.
    pub endpoint: Option<String>,
}

impl AzureConfig {
    /// The Azure session settings of this block.
    pub fn settings(&self) -> AzureSettings {
        AzureSettings {
            subscription_id: self.subscription_id.clone(),
            tenant_id: self.tenant_id.clone(),
            endpoint: self.endpoint.clone(),
            ..Default::default()
        }
    }
}
