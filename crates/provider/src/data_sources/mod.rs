//! Data sources of the `gpu` provider, one module each.

pub mod gpu_models;
pub mod offer_query;
pub mod offers;
pub mod spot_offer;

use gpu_core::catalog::Catalog;
use std::collections::BTreeMap;
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::{Diagnostic, Diagnostics, Schema, Value};

/// Every data source schema by type name.
pub fn schemas() -> BTreeMap<String, Schema> {
    BTreeMap::from([
        (gpu_models::TYPE_NAME.to_string(), gpu_models::schema()),
        (spot_offer::TYPE_NAME.to_string(), spot_offer::schema()),
        (offers::TYPE_NAME.to_string(), offers::schema()),
    ])
}

/// Whether `type_name` answers from the offer catalog (and so can use live prices).
pub fn is_offer_query(type_name: &str) -> bool {
    type_name == spot_offer::TYPE_NAME || type_name == offers::TYPE_NAME
}

/// Static checks of a data block.
pub fn validate(type_name: &str, config: &Value) -> Diagnostics {
    match type_name {
        gpu_models::TYPE_NAME => gpu_models::validate(config),
        spot_offer::TYPE_NAME => spot_offer::validate(config),
        offers::TYPE_NAME => offers::validate(config),
        other => unknown_type(other).into(),
    }
}

/// Reads the data source `type_name`, answering offer queries from `catalog`.
pub fn read(type_name: &str, config: &Value, catalog: &Catalog) -> ReadDataSourceResponse {
    match type_name {
        gpu_models::TYPE_NAME => gpu_models::read(config),
        spot_offer::TYPE_NAME => spot_offer::read(config, catalog),
        offers::TYPE_NAME => offers::read(config, catalog),
        other => ReadDataSourceResponse {
            state: Value::Null,
            diagnostics: unknown_type(other).into(),
        },
    }
}

fn unknown_type(name: &str) -> Diagnostic {
    Diagnostic::error(
        "Unknown data source",
        format!("The gpu provider has no data source `{name}`."),
    )
}
