//! `gpu_node_pool` as typed values: what a configuration, a plan or a state holds, decoded
//! once through tfplugin ([`Tf`]: null, unknown until apply, or known) instead of read
//! attribute by attribute.

use std::collections::BTreeMap;
use std::fmt;

use gpu_core::pool::validate::NOT_A_WHOLE_NUMBER;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use tfplugin::{Tf, Value};

pub use crate::model_values::{opt, string_map, strings, text};

/// A `gpu_node_pool` object; an attribute a hand-built value lacks reads as null.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PoolModel {
    /// `cloud`.
    pub cloud: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `cluster`.
    pub cluster: Tf<String>,
    /// `name`.
    pub name: Tf<String>,
    /// `gpu`.
    pub gpu: Tf<String>,
    /// `gpu_count`.
    pub gpu_count: Tf<Int>,
    /// `instance_types`.
    pub instance_types: Tf<Vec<Tf<String>>>,
    /// `min_nodes`.
    pub min_nodes: Tf<Int>,
    /// `max_nodes`.
    pub max_nodes: Tf<Int>,
    /// `desired_nodes`.
    pub desired_nodes: Tf<Int>,
    /// `reclaim`.
    pub reclaim: Tf<String>,
    /// `driver`.
    pub driver: Tf<String>,
    /// `labels`.
    pub labels: Tf<BTreeMap<String, Tf<String>>>,
    /// `tags`.
    pub tags: Tf<BTreeMap<String, Tf<String>>>,
    /// The `taint` blocks.
    pub taint: Tf<Vec<Tf<TaintModel>>>,
    /// The `capacity` block.
    pub capacity: Tf<CapacityModel>,
    /// The `reservation` block.
    pub reservation: Tf<ReservationModel>,
    /// The `aws` block.
    pub aws: Tf<AwsModel>,
    /// The `azure` block.
    pub azure: Tf<AzureModel>,
    /// The `gcp` block.
    pub gcp: Tf<GcpModel>,
    /// `node_groups` (computed).
    pub node_groups: Tf<Vec<Tf<GroupModel>>>,
    /// `time_to_ready_seconds` (computed).
    pub time_to_ready_seconds: Tf<f64>,
    /// `monthly_usd` (computed).
    pub monthly_usd: Tf<f64>,
    /// The `failover` blocks.
    pub failover: Tf<Vec<Tf<FailoverModel>>>,
    /// `capacity_wait`.
    pub capacity_wait: Tf<String>,
    /// `failback`.
    pub failback: Tf<String>,
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
    /// `cluster`.
    pub cluster: Tf<String>,
}

/// The computed `placement`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PlacementModel {
    /// `cloud`.
    pub cloud: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `cluster`.
    pub cluster: Tf<String>,
    /// `instance_type`.
    pub instance_type: Tf<String>,
    /// `since`.
    pub since: Tf<String>,
}

/// One `taint` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaintModel {
    /// `key`.
    pub key: Tf<String>,
    /// `value`.
    pub value: Tf<String>,
    /// `effect`.
    pub effect: Tf<String>,
}

/// The `capacity` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CapacityModel {
    /// `spot`.
    pub spot: Tf<bool>,
    /// `on_demand_min`.
    pub on_demand_min: Tf<Int>,
}

/// The `reservation` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ReservationModel {
    /// `commitment_id`.
    pub commitment_id: Tf<String>,
    /// `kind`.
    pub kind: Tf<String>,
    /// `usd_per_gpu_hour`.
    pub usd_per_gpu_hour: Tf<f64>,
}

/// The `aws` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AwsModel {
    /// `node_role_arn`.
    pub node_role_arn: Tf<String>,
    /// `subnet_ids`.
    pub subnet_ids: Tf<Vec<Tf<String>>>,
}

/// The `azure` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AzureModel {
    /// `subnet_id`.
    pub subnet_id: Tf<String>,
    /// `os_sku`.
    pub os_sku: Tf<String>,
    /// `gpu_driver`.
    pub gpu_driver: Tf<String>,
    /// `zones`.
    pub zones: Tf<Vec<Tf<String>>>,
}

/// The `gcp` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GcpModel {
    /// `service_account`.
    pub service_account: Tf<String>,
    /// `image_type`.
    pub image_type: Tf<String>,
    /// `gpu_driver_version`.
    pub gpu_driver_version: Tf<String>,
    /// `reservation_affinity`.
    pub reservation_affinity: Tf<String>,
    /// `reservation_name`.
    pub reservation_name: Tf<String>,
    /// `node_locations`.
    pub node_locations: Tf<Vec<Tf<String>>>,
}

/// One element of `node_groups` (state).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GroupModel {
    /// `name`.
    pub name: Tf<String>,
    /// `id`.
    pub id: Tf<String>,
    /// `capacity`.
    pub capacity: Tf<String>,
    /// `image`.
    pub image: Tf<String>,
    /// `instance_types`.
    pub instance_types: Tf<Vec<Tf<String>>>,
}

impl PoolModel {
    /// Decodes `v` ([`crate::model_values::decoded`]).
    pub fn of(v: &Value) -> Self {
        crate::model_values::decoded(v, "gpu_node_pool")
    }
}

/// A number read as a whole number for validation, which reports what does not fit
/// without misquoting it: a fraction is [`NOT_A_WHOLE_NUMBER`], a huge value `i64::MAX`
/// and a hugely negative one `i64::MIN + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int(pub i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntVisitor)
    }
}

/// Reads any number as an [`Int`].
struct IntVisitor;

impl Visitor<'_> for IntVisitor {
    type Value = Int;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Int, E> {
        Ok(Int(i.max(NOT_A_WHOLE_NUMBER + 1)))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Int, E> {
        Ok(Int(i64::try_from(u).unwrap_or(i64::MAX)))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Int, E> {
        let lowest = NOT_A_WHOLE_NUMBER + 1;
        Ok(Int(if f.is_nan() || (f.is_finite() && f.fract() != 0.0) {
            NOT_A_WHOLE_NUMBER
        } else if f >= i64::MAX as f64 {
            i64::MAX
        } else if f <= lowest as f64 {
            lowest
        } else {
            f as i64
        }))
    }
}

/// The known whole number of `t`.
pub fn int(t: &Tf<Int>) -> Option<i64> {
    t.known().map(|i| i.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_validation_expects() {
        let v = Value::object([
            ("min_nodes", Value::number(2)),
            ("max_nodes", Value::number(2.5)),
            ("gpu_count", Value::number(1e30)),
            ("desired_nodes", Value::unknown()),
        ]);
        let m = PoolModel::of(&v);
        assert_eq!(int(&m.min_nodes), Some(2));
        assert_eq!(int(&m.max_nodes), Some(NOT_A_WHOLE_NUMBER));
        assert_eq!(int(&m.gpu_count), Some(i64::MAX));
        assert!(m.desired_nodes.is_unknown());
        assert_eq!(int(&m.desired_nodes), None);
    }

    #[test]
    fn blocks_lists_and_maps_keep_unknown_elements_apart() {
        let v = Value::object([
            (
                "labels",
                Value::map([("team", Value::string("ml")), ("x", Value::unknown())]),
            ),
            (
                "instance_types",
                Value::List(vec![Value::string("g5.xlarge"), Value::unknown()]),
            ),
            (
                "capacity",
                Value::object([
                    ("spot", Value::Bool(true)),
                    ("on_demand_min", Value::number(1)),
                ]),
            ),
            ("aws", Value::unknown()),
        ]);
        let m = PoolModel::of(&v);
        assert_eq!(string_map(&m.labels).len(), 1);
        assert_eq!(
            strings(&m.instance_types),
            Some(vec!["g5.xlarge".to_string()])
        );
        let c = m.capacity.known().unwrap();
        assert_eq!(
            (c.spot.known().copied(), int(&c.on_demand_min)),
            (Some(true), Some(1))
        );
        assert!(m.aws.is_unknown() && m.azure.is_null());
    }
}
