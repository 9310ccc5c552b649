//! The commitment's face per cloud, one module each: `aws` (the `aws {}` block: platform
//! and match criteria; capacity blocks and reservations), `azure` (the `azure {}` block:
//! resource group; reserved VM instances and capacity reservations), `gcp` (no block;
//! reservations and committed use). Each holds its block's schema and typed values, where
//! its commitments are addressed, and the orders a planned commitment of its kinds
//! places. This module dispatches by the kind's cloud.

pub mod aws;
pub mod azure;
pub mod gcp;

use std::collections::BTreeMap;

use gpu_core::catalog::Catalog;
use gpu_core::commitment::{CommitmentKind, Order, stable_name};
use gpu_core::offer::Cloud;
use tfplugin::Value;

use super::model::CommitmentModel;
use crate::model_values::{text, whole};

/// A planned commitment, read once for the order it places.
#[derive(Debug)]
pub struct Planned<'a> {
    /// It decoded.
    pub model: CommitmentModel,
    /// Its kind.
    pub kind: CommitmentKind,
    /// Its region as the kind's cloud spells it.
    pub region: String,
    /// `instance_type`.
    pub instance_type: String,
    /// `instance_count`.
    pub count: u32,
    /// `tags` over `default_labels` (they name Compute Engine and Azure orders, so two
    /// commitments that differ only in tags get different names).
    pub tags: &'a BTreeMap<String, String>,
}

impl<'a> Planned<'a> {
    /// Reads `planned` with its `tags`; an unknown kind is an error.
    pub fn of(planned: &'a Value, tags: &'a BTreeMap<String, String>) -> Result<Self, String> {
        let model = CommitmentModel::of(planned);
        let kind = text(&model.kind)
            .parse::<CommitmentKind>()
            .map_err(|e| e.to_string())?;
        Ok(Planned {
            region: gpu_core::pool::spelling::region(Some(kind.cloud()), &text(&model.region)),
            instance_type: text(&model.instance_type),
            count: whole(&model.instance_count).unwrap_or(0) as u32,
            model,
            kind,
            tags,
        })
    }

    /// A stable name of the order at `place` for `term` (kind, place, type, term, count,
    /// tags).
    pub fn name(&self, place: &str, term: &str) -> String {
        let n = self.count.to_string();
        let tag_words: Vec<String> = self.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut parts = vec![self.kind.as_str(), place, self.instance_type.as_str(), term];
        parts.push(&n);
        parts.extend(tag_words.iter().map(String::as_str));
        stable_name(&parts)
    }
}

/// The order `p` places, made by its kind's cloud.
pub fn order(p: &Planned<'_>, catalog: &Catalog) -> Result<Order, String> {
    match p.kind.cloud() {
        Cloud::Aws => aws::order(p),
        Cloud::Azure => azure::order(p),
        Cloud::Gcp => gcp::order(p, catalog),
        other @ (Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic) => Err(format!(
            "{other} has no commitments here; valid clouds: aws, azure, gcp"
        )),
    }
}

/// Where commitment `v` is addressed in its cloud (a Compute Engine reservation: its zone;
/// otherwise its region), lower case.
pub fn location(v: &Value) -> String {
    let m = CommitmentModel::of(v);
    let kind = text(&m.kind).parse::<CommitmentKind>().ok();
    match kind {
        Some(k) if k.cloud() == Cloud::Gcp => gcp::location(&m, k),
        Some(_) | None => region_of(&m),
    }
}

/// The commitment's region, trimmed and lower case.
fn region_of(m: &CommitmentModel) -> String {
    text(&m.region).trim().to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commitment(pairs: &[(&str, &str)]) -> Value {
        Value::object(pairs.iter().map(|(k, v)| (*k, Value::string(*v))))
    }

    #[test]
    fn each_kind_is_ordered_and_addressed_by_its_own_cloud() {
        let tags = BTreeMap::new();
        let v = commitment(&[
            ("kind", "gcp_reservation"),
            ("region", "US-CENTRAL1"),
            ("zone", " us-central1-A "),
            ("instance_type", "a3-highgpu-8g"),
        ]);
        assert_eq!(location(&v), "us-central1-a");
        let p = Planned::of(&v, &tags).unwrap();
        assert!(matches!(
            order(&p, Catalog::embedded()),
            Ok(Order::GcpReservation { zone, .. }) if zone == "us-central1-a"
        ));
        let v = commitment(&[
            ("kind", "aws_capacity_reservation"),
            ("region", "us-east-1"),
            ("zone", "us-east-1a"),
        ]);
        assert_eq!(location(&v), "us-east-1");
        let p = Planned::of(&v, &tags).unwrap();
        assert!(matches!(
            order(&p, Catalog::embedded()),
            Ok(Order::CapacityReservation { platform, match_criteria, .. })
                if platform == "Linux/UNIX" && match_criteria == "open"
        ));
        let v = commitment(&[("kind", "azure_capacity_reservation"), ("region", "eastus")]);
        let p = Planned::of(&v, &tags).unwrap();
        assert_eq!(
            order(&p, Catalog::embedded()).unwrap_err(),
            "`azure.resource_group` is required"
        );
        assert!(Planned::of(&commitment(&[("kind", "oracle")]), &tags).is_err());
    }

    #[test]
    fn aws_blocks_compare_by_meaning_and_gcp_families_have_types() {
        let block = |p: &str, c: &str| {
            Value::object([
                ("instance_platform", Value::string(p)),
                ("instance_match_criteria", Value::string(c)),
            ])
        };
        assert!(aws::same_block(&block("linux/unix", "OPEN"), &Value::Null));
        assert!(!aws::same_block(&block("Windows", "open"), &Value::Null));
        assert_eq!(
            gcp::commitment_type("A3-MEGAGPU-8G"),
            Some("ACCELERATOR_OPTIMIZED_A3_MEGA")
        );
        assert_eq!(gcp::commitment_type("n1-standard-8"), None);
    }
}
