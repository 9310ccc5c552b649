//! `gpu_instance` as typed values: what a configuration, a plan or a state holds, decoded
//! once through tfplugin ([`Tf`]: null, unknown until apply, or known) instead of read
//! attribute by attribute.

use std::collections::BTreeMap;

use serde::Deserialize;
use tfplugin::{Tf, Value};

use super::cloud_blocks::aws::AwsBlock;
use super::cloud_blocks::azure::AzureBlock;
use super::cloud_blocks::gcp::GcpBlock;

/// A `gpu_instance` object (configuration, plan or state); an attribute a hand-built value
/// lacks reads as null.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct InstanceModel {
    /// `id`.
    pub id: Tf<String>,
    /// `cloud`.
    pub cloud: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `zone`.
    pub zone: Tf<String>,
    /// `name`.
    pub name: Tf<String>,
    /// `gpu`.
    pub gpu: Tf<String>,
    /// `gpu_count`.
    pub gpu_count: Tf<f64>,
    /// `instance_type`.
    pub instance_type: Tf<String>,
    /// `spot`.
    pub spot: Tf<bool>,
    /// `reclaim`.
    pub reclaim: Tf<String>,
    /// `image`.
    pub image: Tf<String>,
    /// `image_description`.
    pub image_description: Tf<String>,
    /// `disk_size_gb`.
    pub disk_size_gb: Tf<f64>,
    /// `labels` (an element may be unknown until apply).
    pub labels: Tf<BTreeMap<String, Tf<String>>>,
    /// `user_data`.
    pub user_data: Tf<String>,
    /// `vm_name`.
    pub vm_name: Tf<String>,
    /// `last_reclaimed_at`.
    pub last_reclaimed_at: Tf<String>,
    /// `reclaims`.
    pub reclaims: Tf<f64>,
    /// `hourly_usd`.
    pub hourly_usd: Tf<f64>,
    /// `monthly_usd`.
    pub monthly_usd: Tf<f64>,
    /// The `aws` block.
    pub aws: Tf<AwsBlock>,
    /// The `azure` block.
    pub azure: Tf<AzureBlock>,
    /// The `gcp` block.
    pub gcp: Tf<GcpBlock>,
    /// The `failover` blocks.
    pub failover: Tf<Vec<Tf<FailoverModel>>>,
    /// `placement` (computed).
    pub placement: Tf<PlacementModel>,
}

/// One `failover` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FailoverModel {
    /// `cloud`.
    pub cloud: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `zone`.
    pub zone: Tf<String>,
    /// `instance_type`.
    pub instance_type: Tf<String>,
}

/// The computed `placement`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PlacementModel {
    /// `cloud`.
    pub cloud: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `zone`.
    pub zone: Tf<String>,
    /// `instance_type`.
    pub instance_type: Tf<String>,
    /// `since`.
    pub since: Tf<String>,
}

impl InstanceModel {
    /// Decodes `v`; null, or a value off the schema (never sent by Terraform), reads as
    /// all null.
    pub fn of(v: &Value) -> Self {
        crate::model_values::decoded(v, "gpu_instance")
    }

    /// `labels` as written: the known entries.
    pub fn own_labels(&self) -> BTreeMap<String, String> {
        self.labels
            .known()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.known().map(|s| (k.clone(), s.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `labels` over `default_labels`.
    pub fn labels(&self, default_labels: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut all = default_labels.clone();
        all.extend(self.own_labels());
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_values::{flag, opt, text, whole};
    use crate::resources::instance::cloud_blocks::written;

    #[test]
    fn decodes_every_state_and_reads_as_before() {
        let v = Value::object([
            ("cloud", Value::string("aws")),
            ("region", Value::unknown()),
            ("gpu_count", Value::number(2)),
            ("disk_size_gb", Value::number(50.5)),
            ("reclaims", Value::number(3)),
            ("spot", Value::Bool(true)),
            (
                "labels",
                Value::map([("team", Value::string("ml")), ("cc", Value::unknown())]),
            ),
            (
                "aws",
                Value::object([
                    ("key_name", Value::string("me")),
                    (
                        "security_group_ids",
                        Value::List(vec![Value::string("sg-1"), Value::unknown()]),
                    ),
                ]),
            ),
            ("gcp", Value::unknown()),
            ("azure", Value::Null),
        ]);
        let m = InstanceModel::of(&v);
        assert_eq!(text(&m.cloud), "aws");
        assert!(m.region.is_unknown() && m.zone.is_null() && opt(&m.region).is_none());
        assert_eq!(whole(&m.reclaims), Some(3));
        assert_eq!(whole(&m.disk_size_gb), None, "a fraction is not whole");
        assert!(flag(&m.spot));
        assert_eq!(m.own_labels().len(), 1, "an unknown label is left out");
        let aws = written(&m.aws).unwrap();
        assert_eq!(text(&aws.key_name), "me");
        assert!(aws.security_group_ids.known().unwrap()[1].is_unknown());
        assert!(written(&m.gcp).is_some_and(|g| g.project.is_null()));
        assert!(written(&m.azure).is_none());
        assert!(InstanceModel::of(&Value::Null).cloud.is_null());
    }
}
