//! `gpu_offers`: the ranked list of GPU offers that pass the filters.

use super::Answering;
use super::offer_query::{self, OfferRecord};
use crate::checks;
use gpu_core::query::{self, Capacity};
use serde::Deserialize;
use tfplugin::Tf;
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Diagnostics, Schema, Type, Value};

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_offers";

/// How many offers are returned when `limit` is unset.
pub const DEFAULT_LIMIT: usize = 10;

/// The schema of `gpu_offers`.
pub fn schema() -> Schema {
    let mut block = Block::new(
        "GPU offers that pass the filters, cheapest per GPU-hour first (then price per hour, cloud in the order aws, azure, gcp, cudo, nebius, hyperbolic, region, zone, instance type), from the embedded price catalog (or live prices with `live = true`). Spot and on-demand offers unless `capacity` says otherwise: an instance type with both prices appears once for each, spot once per zone where prices are per zone, on-demand once per region.",
    );
    for a in offer_query::filter_attributes() {
        block = block.attribute(a);
    }
    for b in offer_query::filter_blocks() {
        block = block.block(b);
    }
    block = block
        .attribute(Attribute::optional("limit", Type::Number).describe("How many offers to return (default 10).").validate(checks::whole_at_least(1.0)))
        .attribute(Attribute::computed("offers", Type::list(offer_query::offer_type())).describe("The ranked offers: `cloud`, `region`, `zone`, `instance_type`, `gpu`, `gpu_count`, `gpu_memory_gib`, `vcpus`, `memory_gib`, `spot`, `price_per_hour`, `price_per_gpu_hour`, `source`, `as_of`, `price_age_days`, `availability`, `availability_source`, `availability_as_of` (the same fields as `gpu_spot_offer`; `source`, `as_of` and `price_age_days` are those of the offer's own price, spot or on-demand; the availability fields are read with `live = true`)."))
        .attribute(Attribute::computed("matched", Type::Number).describe("How many offers passed the filters before `limit`."))
        .attribute(Attribute::computed("catalog", Type::String).describe("Which catalog answered: the embedded snapshot, or live prices over it (naming the live sources)."));
    Schema::new(block)
}

/// `limit`, the one argument besides the filters.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Limit {
    limit: Tf<f64>,
}

/// The known `limit` of `config`.
fn limit(config: &Value) -> Option<f64> {
    let l: Limit = tfplugin::tf::decode(config).unwrap_or_default();
    l.limit.known().copied()
}

/// Checks the filters and `limit`.
pub fn validate(config: &Value) -> Diagnostics {
    offer_query::validate(config)
}

/// Ranks the offers of `answering` (its catalog, the provider's `max_price_age`, and
/// availability when read).
pub fn read(config: &Value, answering: Answering<'_>) -> ReadDataSourceResponse {
    let (catalog, prices, scores) = answering.parts();
    let fail = |diagnostics| ReadDataSourceResponse {
        state: Value::Null,
        diagnostics,
    };
    let d = super::all_checks(schema(), config, validate);
    if d.has_errors() {
        return fail(d);
    }
    let mut q = match offer_query::build(config, Capacity::Either, prices) {
        Ok(q) => q,
        Err(d) => return fail(d),
    };
    q.limit = Some(limit(config).map_or(DEFAULT_LIMIT, |n| n as usize));
    let result = match query::run_with(catalog, &q, scores) {
        Ok(r) => r,
        Err(e) => return fail(offer_query::query_error(e)),
    };
    if let Some(empty) = &result.empty {
        return fail(offer_query::no_match(empty, config).into());
    }
    let offers = Value::List(
        result
            .items
            .iter()
            .map(|p| {
                OfferRecord::of(p, q.freshness.today)
                    .scored(p, scores)
                    .to_value()
            })
            .collect(),
    );
    let mut state = config.clone();
    if let Value::Object(attrs) = &mut state {
        attrs.insert("offers".into(), offers);
        attrs.insert("matched".into(), Value::number(result.matched as i64));
        attrs.insert(
            "catalog".into(),
            Value::string(catalog.origin().label.clone()),
        );
    }
    ReadDataSourceResponse {
        state,
        diagnostics: Diagnostics::new(),
    }
}
