//! GPU node pools, cloud-neutral: the spec and its validation, instance type choice from
//! the catalog, the layout onto one cloud's groups, which groups keep their names and
//! which roll, and the reconcile that brings the cloud there.
//!
//! Flow: [`NodePoolConfig::validate`] → [`NodePoolSpec`] → [`instance_types`] →
//! [`layout::groups`] → [`generation::name_generations`] against the groups in state →
//! [`reconcile::apply`].

pub mod attempt;
pub mod choose;
pub mod config;
pub mod drift;
pub mod failover;
pub mod generation;
pub mod kube;
pub mod layout;
pub mod placement;
pub mod reconcile;
pub mod spec;
pub mod spelling;
pub(crate) mod stable_hash;
pub mod validate;

pub use crate::model::{CapacityType, GroupSpec, NodeClass, Scaling};
pub use choose::{ChosenType, PriceRow, TypeQuery};
pub use config::{NodePoolConfig, ReservationConfig, TaintConfig};
pub use spec::{
    CapacitySpec, DEFAULT_INSTANCE_TYPE_COUNT, DriverPolicy, NodeCounts, NodePoolSpec,
    PoolReservation, Reclaim, Taint, TaintEffect,
};
pub use validate::{FieldError, ValidationErrors};

use crate::catalog::Catalog;
use crate::freshness::Freshness;

/// The pool's instance types with their prices (those `fresh` allows): the pinned ones in
/// their order, or up to `limit` chosen from `catalog`, cheapest first (by spot price when
/// the pool uses spot).
pub fn instance_types(
    spec: &NodePoolSpec,
    catalog: &Catalog,
    limit: usize,
    fresh: &Freshness,
) -> Vec<ChosenType> {
    if spec.instance_types.is_empty() {
        let q = TypeQuery {
            cloud: spec.cloud,
            region: &spec.region,
            gpu: spec.gpu,
            gpu_count: spec.gpu_count,
            spot: spec.capacity.spot,
            freshness: *fresh,
        };
        choose::choose(catalog, &q, limit)
    } else {
        choose::price_types(
            catalog,
            spec.cloud,
            &spec.region,
            &spec.instance_types,
            fresh,
        )
    }
}

#[cfg(test)]
pub(crate) mod tests;
