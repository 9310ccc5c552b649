//! The commitment's `aws {}` block (EC2): its schema, its typed values (the instances'
//! platform and, for a capacity reservation, its match criteria) compared by meaning, and
//! the EC2 orders: a capacity block and a capacity reservation.

use gpu_core::commitment::{CommitmentKind, Order};
use gpu_core::time::parse_rfc3339;
use serde::Deserialize;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{Tf, Type, Value};

use super::Planned;
use crate::model_values::{opt, text};

/// `aws.instance_platform` when unset.
const DEFAULT_PLATFORM: &str = "Linux/UNIX";
/// `aws.instance_match_criteria` when unset.
const DEFAULT_CRITERIA: &str = "open";

/// The `aws` block of `gpu_commitment`.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "aws",
        Block::new("EC2 settings.")
            .attribute(Attribute::optional("instance_platform", Type::String).describe("The instances' platform, as EC2 names it: `Linux/UNIX` (default), `Red Hat Enterprise Linux`, `Windows`, …"))
            .attribute(Attribute::optional("instance_match_criteria", Type::String).describe("`aws_capacity_reservation`: `open` (default: any matching instance uses it) or `targeted` (only instances that name it)."))
    )
}

/// The `aws` block's values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AwsBlock {
    /// `instance_platform`.
    pub instance_platform: Tf<String>,
    /// `instance_match_criteria`.
    pub instance_match_criteria: Tf<String>,
}

/// The text `field` of an `aws` block.
fn aws_text(block: &Tf<AwsBlock>, field: fn(&AwsBlock) -> &Tf<String>) -> Option<String> {
    block.known().and_then(|a| opt(field(a)))
}

/// `aws.instance_platform` (default `Linux/UNIX`).
pub fn platform(block: &Tf<AwsBlock>) -> String {
    aws_text(block, |a| &a.instance_platform).unwrap_or_else(|| DEFAULT_PLATFORM.to_string())
}

/// `aws.instance_match_criteria` (default `open`), lower-case.
pub fn match_criteria(block: &Tf<AwsBlock>) -> String {
    aws_text(block, |a| &a.instance_match_criteria)
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_else(|| DEFAULT_CRITERIA.to_string())
}

/// Whether two `aws` blocks (prior and new, as values) mean the same purchase: platform
/// and criteria compared in any letter case, unset as their defaults.
pub fn same_block(prior: &Value, new: &Value) -> bool {
    let norm = |v: &Value, attr: &str| {
        v.get_attr(attr)
            .and_then(Value::as_str)
            .map(|s| s.trim().to_ascii_lowercase())
    };
    let platform = || DEFAULT_PLATFORM.to_ascii_lowercase();
    let criteria = || DEFAULT_CRITERIA.to_string();
    norm(prior, "instance_platform").unwrap_or_else(platform)
        == norm(new, "instance_platform").unwrap_or_else(platform)
        && norm(prior, "instance_match_criteria").unwrap_or_else(criteria)
            == norm(new, "instance_match_criteria").unwrap_or_else(criteria)
}

/// The EC2 order of `p`: the capacity block offering chosen at plan, or a capacity
/// reservation in its zone.
pub(super) fn order(p: &Planned<'_>) -> Result<Order, String> {
    let m = &p.model;
    match p.kind {
        CommitmentKind::AwsCapacityBlock => Ok(Order::CapacityBlock {
            region: p.region.clone(),
            offering_id: text(&m.offering_id),
            platform: platform(&m.aws),
        }),
        CommitmentKind::AwsCapacityReservation => Ok(Order::CapacityReservation {
            region: p.region.clone(),
            zone: text(&m.zone).trim().to_ascii_lowercase(),
            instance_type: p.instance_type.clone(),
            instance_count: p.count,
            platform: platform(&m.aws),
            match_criteria: match_criteria(&m.aws),
            end: m.end.known().and_then(|e| parse_rfc3339(e)),
        }),
        other => Err(format!("{other} is not an AWS commitment")),
    }
}
