//! `gpu_spot_offer`: the single cheapest GPU offer (per GPU-hour) that passes the filters.

use super::Answering;
use super::offer_query::{self, OfferRecord};
use crate::checks;
use gpu_core::query::{self, Capacity};
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Diagnostics, Schema, Type, Value};

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_spot_offer";

/// Attributes that are both a filter and a result.
const BOTH_WAYS: [&str; 2] = ["gpu", "gpu_count"];

/// The schema of `gpu_spot_offer`.
pub fn schema() -> Schema {
    let mut block = Block::new(
        "The cheapest GPU offer, per GPU-hour, across clouds and regions, from the price catalog embedded in the provider (offline, no credentials), or with `live = true` from the clouds' price APIs. Spot capacity unless `capacity` says otherwise. Ties are broken by price per hour, then cloud, region, zone and instance type, so the same inputs always give the same answer.",
    );
    // `gpu` and `gpu_count` are both filters and results: optional and computed, set by
    // the user or filled in from the chosen offer.
    for a in offer_query::filter_attributes() {
        if !BOTH_WAYS.contains(&a.name.as_str()) {
            block = block.attribute(a);
        }
    }
    for b in offer_query::filter_blocks() {
        block = block.block(b);
    }
    for (name, ty, description) in offer_query::offer_attributes() {
        let attribute = match name {
            "gpu" => Attribute::optional_computed(name, ty).describe("GPU model to look for, e.g. `H100`, `A100-80GB`, `L4` (case-insensitive; cloud aliases such as `nvidia-h100-80gb` work too; see `gpu_models`). When unset (or with `gpus`), the chosen offer's canonical model name.").validate(checks::gpu_model()),
            "gpu_count" => Attribute::optional_computed(name, ty).describe("Exactly this many GPUs per instance (conflicts with `min_gpu_count`). When unset, the chosen offer's GPU count (fractional for partial-GPU sizes).").validate(checks::positive()),
            _ => Attribute::computed(name, ty).describe(description),
        };
        block = block.attribute(attribute);
    }
    block = block.attribute(
        Attribute::computed("catalog", Type::String)
            .describe("Which catalog answered: the embedded snapshot, or live prices over it (naming the live sources)."),
    );
    Schema::new(block)
}

/// Checks the filters.
pub fn validate(config: &Value) -> Diagnostics {
    offer_query::validate(config)
}

/// Finds the best offer of `answering` (its catalog, the provider's `max_price_age`, and
/// availability when read).
pub fn read(config: &Value, answering: Answering<'_>) -> ReadDataSourceResponse {
    let (catalog, prices, scores) = answering.parts();
    let fail = |diagnostics| ReadDataSourceResponse {
        state: Value::Null,
        diagnostics,
    };
    let q = match offer_query::build(config, Capacity::Spot, prices) {
        Ok(q) => q,
        Err(d) => return fail(d),
    };
    let result = match query::run_with(catalog, &q, scores) {
        Ok(r) => r,
        Err(e) => return fail(offer_query::query_error(e)),
    };
    let Some(best) = result.best() else {
        let d = result
            .empty
            .as_ref()
            .map(|e| offer_query::no_match(e, config));
        return fail(d.map(Diagnostics::from).unwrap_or_default());
    };
    let record = OfferRecord::of(best, q.freshness.today)
        .scored(best, scores)
        .to_value();
    let mut state = config.clone();
    if let (Value::Object(attrs), Value::Object(fields)) = (&mut state, record) {
        for (name, value) in fields {
            let set_by_user = BOTH_WAYS.contains(&name.as_str())
                && attrs.get(&name).is_some_and(|v| !v.is_null());
            if !set_by_user {
                attrs.insert(name, value);
            }
        }
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
