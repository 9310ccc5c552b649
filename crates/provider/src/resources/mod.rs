//! Managed resources of the `gpu` provider, one module each.

pub mod node_pool;

use std::collections::BTreeMap;
use tfplugin::{Diagnostic, Schema};

/// Every resource schema by type name.
pub fn schemas() -> BTreeMap<String, Schema> {
    BTreeMap::from([(node_pool::TYPE_NAME.to_string(), node_pool::schema())])
}

/// The error for a resource type this provider does not have.
pub fn unknown_type(name: &str) -> Diagnostic {
    Diagnostic::error(
        "Unknown resource type",
        format!("The gpu provider has no resource `{name}`."),
    )
}
