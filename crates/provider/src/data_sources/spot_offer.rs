//! `gpu_spot_offer`: the single cheapest GPU offer (per GPU-hour) that passes the filters.

use super::offer_query::{self, OfferRecord};
use gpu_core::catalog::Catalog;
use gpu_core::query::{self, Capacity};
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Diagnostics, Schema, Type, Value};

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_spot_offer";

/// The schema of `gpu_spot_offer`.
pub fn schema() -> Schema {
    let mut block = Block::new(
        "The cheapest GPU offer, per GPU-hour, across clouds and regions, from the embedded price catalog (offline, no credentials). Spot capacity unless `capacity` says otherwise. Ties are broken by price per hour, then cloud, region, zone and instance type, so the same inputs always give the same answer.",
    );
    for a in offer_query::filter_attributes() {
        block = block.attribute(a);
    }
    for (name, ty, description) in offer_query::offer_attributes() {
        block = block.attribute(Attribute::computed(name, ty).describe(description));
    }
    block = block.attribute(
        Attribute::computed("catalog", Type::String)
            .describe("Which catalog answered (the embedded snapshot, with its row counts)."),
    );
    Schema::new(block)
}

/// Checks the filters.
pub fn validate(config: &Value) -> Diagnostics {
    offer_query::validate(config)
}

/// Finds the best offer in `catalog`.
pub fn read(config: &Value, catalog: &Catalog) -> ReadDataSourceResponse {
    let fail = |diagnostics| ReadDataSourceResponse {
        state: Value::Null,
        diagnostics,
    };
    let q = match offer_query::build(config, Capacity::Spot) {
        Ok(q) => q,
        Err(d) => return fail(d),
    };
    let result = match query::run(catalog, &q) {
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
    let record = OfferRecord::of(best).to_value();
    let mut state = config.clone();
    if let (Value::Object(attrs), Value::Object(fields)) = (&mut state, record) {
        attrs.extend(fields);
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
