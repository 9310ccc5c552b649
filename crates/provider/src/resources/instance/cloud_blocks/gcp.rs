//! The instance's `gcp {}` block (Compute Engine): its schema, its typed values, the core
//! `GcpInstanceConfig` it becomes, the project a VM lives in, and the import id
//! `projects/<p>/zones/<z>/instances/<name>`.

use gpu_core::clouds::gcp::instance_rules as rules;
use gpu_core::instance::config::GcpInstanceConfig;
use gpu_core::instance::{InstanceClass, InstanceSpec};
use gpu_core::offer::Cloud;
use serde::Deserialize;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{Tf, Type};

use super::{ImportContext, ImportTarget, written};
use crate::clouds::Clouds;
use crate::model_values::opt;

/// The `gcp` block of `gpu_instance`.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "gcp",
        Block::new("Compute Engine settings (only with `cloud = \"gcp\"`).")
            .attribute(Attribute::optional("project", Type::String).describe("Project; default the provider's `gcp.project`."))
            .attribute(Attribute::optional("network", Type::String).describe("Network (default `default`)."))
            .attribute(Attribute::optional("subnetwork", Type::String).describe("Subnetwork."))
            .attribute(Attribute::optional("service_account", Type::String).describe("Service account e-mail the VM runs as (cloud-platform scope); none when unset.")),
    )
}

/// The `gcp` block's values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GcpBlock {
    /// `project`.
    pub project: Tf<String>,
    /// `network`.
    pub network: Tf<String>,
    /// `subnetwork`.
    pub subnetwork: Tf<String>,
    /// `service_account`.
    pub service_account: Tf<String>,
}

/// The block as core reads it, when written.
pub fn config(block: &Tf<GcpBlock>) -> Option<GcpInstanceConfig> {
    written(block).map(|b| GcpInstanceConfig {
        project: opt(&b.project),
        network: opt(&b.network),
        subnetwork: opt(&b.subnetwork),
        service_account: opt(&b.service_account),
    })
}

/// The project a VM lives in: the checked spec's, else the block's, else the provider's.
pub(super) fn scope(
    block: Option<&GcpBlock>,
    spec: Option<&InstanceSpec>,
    clouds: &Clouds,
) -> Option<String> {
    match spec.map(|s| &s.class) {
        Some(InstanceClass::Gcp { project, .. }) => Some(project.clone()),
        _ => block
            .and_then(|b| opt(&b.project))
            .or_else(|| clouds.gcp_project().map(str::to_string)),
    }
}

/// The shape of a Compute Engine import id, for messages.
pub(super) fn id_shape() -> String {
    format!("\"{}\"", rules::INSTANCE_PATH_SHAPE)
}

/// Reads an instance path; its project goes in the `gcp` block unless it is the
/// provider's own (what an unset `gcp.project` means). `None` for an id of another shape.
pub fn parse_import(id: &str, ctx: ImportContext<'_>) -> Option<Result<ImportTarget, String>> {
    let (project, zone, region, _) = rules::parse_instance_path(id)?;
    let block = (Some(project) != ctx.gcp_project).then(|| ("gcp", "project", project.to_string()));
    Some(Ok(ImportTarget {
        cloud: Cloud::Gcp,
        id: id.to_string(),
        region: region.to_string(),
        zone: Some(zone.to_string()),
        block,
    }))
}
