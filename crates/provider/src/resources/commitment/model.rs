//! `gpu_commitment` as typed values: what a configuration, a plan or a state holds,
//! decoded once through tfplugin ([`Tf`]: null, unknown until apply, or known) instead of
//! read attribute by attribute.

use std::collections::BTreeMap;

use serde::Deserialize;
use tfplugin::{Tf, Value};

use super::cloud_blocks::aws::AwsBlock;
use super::cloud_blocks::azure::AzureBlock;

/// A `gpu_commitment` object (configuration, plan or state); an attribute a hand-built
/// value lacks reads as null.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CommitmentModel {
    /// `kind`.
    pub kind: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `zone`.
    pub zone: Tf<String>,
    /// `gpu`.
    pub gpu: Tf<String>,
    /// `gpu_count`.
    pub gpu_count: Tf<f64>,
    /// `instance_type`.
    pub instance_type: Tf<String>,
    /// `instance_count`.
    pub instance_count: Tf<f64>,
    /// `duration_hours`.
    pub duration_hours: Tf<f64>,
    /// `start_after`.
    pub start_after: Tf<String>,
    /// `start_before`.
    pub start_before: Tf<String>,
    /// `term`.
    pub term: Tf<String>,
    /// `billing`.
    pub billing: Tf<String>,
    /// `end`.
    pub end: Tf<String>,
    /// `on_destroy`.
    pub on_destroy: Tf<String>,
    /// `tags` (an element may be unknown until apply).
    pub tags: Tf<BTreeMap<String, Tf<String>>>,
    /// `offering_id`.
    pub offering_id: Tf<String>,
    /// `commitment_id`.
    pub commitment_id: Tf<String>,
    /// `total_usd`.
    pub total_usd: Tf<f64>,
    /// `upfront_usd`.
    pub upfront_usd: Tf<f64>,
    /// `monthly_usd`.
    pub monthly_usd: Tf<f64>,
    /// `gpus`.
    pub gpus: Tf<f64>,
    /// `effective_usd_per_gpu_hour`.
    pub effective_usd_per_gpu_hour: Tf<f64>,
    /// `status`.
    pub status: Tf<String>,
    /// `used_instances`.
    pub used_instances: Tf<f64>,
    /// `utilization`.
    pub utilization: Tf<f64>,
    /// `idle_monthly_usd`.
    pub idle_monthly_usd: Tf<f64>,
    /// The `aws` block.
    pub aws: Tf<AwsBlock>,
    /// The `azure` block.
    pub azure: Tf<AzureBlock>,
}

impl CommitmentModel {
    /// Decodes `v` ([`crate::model_values::decoded`]).
    pub fn of(v: &Value) -> Self {
        crate::model_values::decoded(v, "gpu_commitment")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_values::{text, value_of, whole};

    #[test]
    fn decodes_every_state_and_reads_numbers_as_before() {
        let v = Value::object([
            ("kind", Value::string("aws_capacity_block")),
            ("region", Value::unknown()),
            ("instance_count", Value::number(2)),
            ("gpu_count", Value::number(2.5)),
            ("tags", Value::map([("team", Value::unknown())])),
            (
                "aws",
                Value::object([("instance_platform", Value::string("Windows"))]),
            ),
        ]);
        let m = CommitmentModel::of(&v);
        assert_eq!(text(&m.kind), "aws_capacity_block");
        assert!(m.region.is_unknown() && m.zone.is_null());
        assert_eq!(whole(&m.instance_count), Some(2));
        assert_eq!(
            whole(&m.gpu_count),
            None,
            "a fraction is not a whole number"
        );
        assert!(m.tags.known().unwrap()["team"].is_unknown());
        let platform = m.aws.known().map(|a| text(&a.instance_platform));
        assert_eq!(platform.as_deref(), Some("Windows"));
        assert_eq!(value_of(&m.region), Value::unknown());
    }
}
