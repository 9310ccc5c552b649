//! The instance's `aws {}` block (EC2): its schema, its typed values, the core
//! `AwsInstanceConfig` it becomes, and the import id `aws/<region>/<i-…>`.

use gpu_core::clouds::aws::instance_rules as rules;
use gpu_core::instance::config::AwsInstanceConfig;
use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use serde::Deserialize;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{Tf, Type};

use super::{ImportTarget, bad_id, written};
use crate::model_values::opt;

/// The `aws` block of `gpu_instance`.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "aws",
        Block::new("EC2 settings (only with `cloud = \"aws\"`).")
            .attribute(Attribute::optional("subnet_id", Type::String).describe(
                "Subnet to launch in (its zone wins); default: the default VPC's subnet in `zone`.",
            ))
            .attribute(
                Attribute::optional("security_group_ids", Type::list(Type::String))
                    .describe("Security groups (`sg-…`); default: the VPC's default group."),
            )
            .attribute(
                Attribute::optional("key_name", Type::String).describe("EC2 key pair for SSH."),
            ),
    )
}

/// The `aws` block's values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AwsBlock {
    /// `subnet_id`.
    pub subnet_id: Tf<String>,
    /// `security_group_ids` (an element may be unknown until apply).
    pub security_group_ids: Tf<Vec<Tf<String>>>,
    /// `key_name`.
    pub key_name: Tf<String>,
}

/// The block as core reads it, when written.
pub fn config(block: &Tf<AwsBlock>) -> Option<AwsInstanceConfig> {
    written(block).map(|b| AwsInstanceConfig {
        subnet_id: opt(&b.subnet_id),
        security_group_ids: b
            .security_group_ids
            .known()
            .map(|l| l.iter().filter_map(opt).collect())
            .unwrap_or_default(),
        key_name: opt(&b.key_name),
    })
}

/// The shape of an EC2 import id, for messages.
pub const ID_SHAPE: &str = "\"aws/<region>/<instance-id>\"";

/// Reads `aws/<region>/<i-…>` (an instance id names no region, so the id adds it); `None`
/// for an id of another shape.
pub fn parse_import(id: &str) -> Option<Result<ImportTarget, String>> {
    let rest = id.strip_prefix("aws/")?;
    let bad = |why: &str| Err(bad_id(id, why));
    let Some((region, instance)) = rest.split_once('/') else {
        return Some(bad("names no instance"));
    };
    if !rules::is_instance_id(instance) {
        return Some(bad(&format!("does not end in {}", rules::INSTANCE_ID_TEXT)));
    }
    let region = spelling::region(Some(Cloud::Aws), region);
    if region.is_empty() || region.contains('/') {
        return Some(bad("names no region"));
    }
    Some(Ok(ImportTarget {
        cloud: Cloud::Aws,
        id: instance.to_string(),
        region,
        zone: None,
        block: None,
    }))
}
