//! `gpu_models`: the GPU models the provider knows, with memory per GPU, architecture and
//! the names clouds use for them.

use crate::checks;
use gpu_core::gpu::{self, GpuModel};
use serde::Deserialize;
use tfplugin::Tf;
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Diagnostics, Schema, Type, Value};

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_models";

const VENDORS: &[&str] = &["nvidia", "amd"];

fn model_type() -> Type {
    Type::object([
        ("name", Type::String),
        ("vendor", Type::String),
        ("memory_gib", Type::Number),
        ("architecture", Type::String),
        ("aliases", Type::list(Type::String)),
    ])
}

/// The schema of `gpu_models`.
pub fn schema() -> Schema {
    Schema::new(
        Block::new("Lists the GPU models the provider knows (the names accepted by every `gpu` argument), optionally filtered.")
            .attribute(Attribute::optional("min_memory_gib", Type::Number).describe("Only models with at least this much memory per GPU, in GiB.").validate(checks::non_negative()))
            .attribute(Attribute::optional("vendor", Type::String).describe("Only models of this vendor.").validate(checks::one_of(VENDORS)))
            .attribute(Attribute::computed("names", Type::list(Type::String)).describe("Canonical names of the matching models, sorted."))
            .attribute(Attribute::computed("models", Type::list(model_type())).describe("The matching models, sorted by name: `name`, `vendor`, `memory_gib` (per GPU), `architecture` and `aliases` (the names clouds and catalogs use).")),
    )
}

/// The filters as typed values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ModelFilters {
    min_memory_gib: Tf<f64>,
    vendor: Tf<String>,
}

impl ModelFilters {
    /// Decodes `config`; a value off the schema reads as no filter.
    fn of(config: &Value) -> Self {
        tfplugin::tf::decode(config).unwrap_or_default()
    }
}

/// Checks the filters: the validators attached to their attributes.
pub fn validate(config: &Value) -> Diagnostics {
    schema().block.check(config)
}

/// The models matching the filters, sorted by name.
pub fn matching(min_memory_gib: Option<f64>, vendor: Option<&str>) -> Vec<&'static GpuModel> {
    let mut models: Vec<&GpuModel> = gpu::all()
        .iter()
        .filter(|m| min_memory_gib.is_none_or(|min| m.vram_gib >= min))
        .filter(|m| vendor.is_none_or(|v| m.vendor.as_str() == v))
        .collect();
    models.sort_by_key(|m| m.name);
    models
}

/// Computes the data source's result.
pub fn read(config: &Value) -> ReadDataSourceResponse {
    let diagnostics = validate(config);
    if diagnostics.has_errors() {
        return ReadDataSourceResponse {
            state: Value::Null,
            diagnostics,
        };
    }
    let f = ModelFilters::of(config);
    let models = matching(
        f.min_memory_gib.known().copied(),
        f.vendor.known().map(String::as_str),
    );
    let names = Value::List(models.iter().map(|m| Value::string(m.name)).collect());
    let objects = Value::List(
        models
            .iter()
            .map(|m| {
                Value::object([
                    ("name", Value::string(m.name)),
                    ("vendor", Value::string(m.vendor.as_str())),
                    ("memory_gib", Value::number(m.vram_gib)),
                    ("architecture", Value::string(m.architecture.as_str())),
                    (
                        "aliases",
                        Value::List(m.aliases.iter().map(|a| Value::string(*a)).collect()),
                    ),
                ])
            })
            .collect(),
    );
    let mut state = config.clone();
    if let Value::Object(attrs) = &mut state {
        attrs.insert("names".into(), names);
        attrs.insert("models".into(), objects);
    }
    ReadDataSourceResponse { state, diagnostics }
}

/// Prints the models as an aligned table (the `models` CLI command).
pub fn print_table(min_memory_gib: Option<f64>) {
    outln!(
        "{:<14} {:<7} {:>10}  {:<14}",
        "MODEL",
        "VENDOR",
        "MEMORY",
        "ARCHITECTURE"
    );
    for m in matching(min_memory_gib, None) {
        outln!(
            "{:<14} {:<7} {:>6} GiB  {:<14}",
            m.name,
            m.vendor.as_str(),
            m.vram_gib,
            m.architecture.as_str()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(min: Value, vendor: Value) -> Value {
        Value::object([
            ("min_memory_gib", min),
            ("vendor", vendor),
            ("names", Value::Null),
            ("models", Value::Null),
        ])
    }

    #[test]
    fn filters_by_memory_and_vendor() {
        let r = read(&config(Value::number(80), Value::Null));
        let names: Vec<&str> = r
            .state
            .get_attr("names")
            .unwrap()
            .as_elements()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(names.contains(&"H100") && names.contains(&"A100-80GB"));
        assert!(!names.contains(&"T4"));
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        let amd = read(&config(Value::Null, Value::string("amd")));
        let amd_names = amd
            .state
            .get_attr("names")
            .unwrap()
            .as_elements()
            .unwrap()
            .to_vec();
        assert!(amd_names.contains(&Value::string("MI300X")));
        assert!(!amd_names.contains(&Value::string("H100")));
    }

    #[test]
    fn result_encodes_against_schema() {
        let r = read(&config(Value::Null, Value::Null));
        let bytes = tfplugin::value::encode_msgpack(&r.state, &schema().value_type()).unwrap();
        let back = tfplugin::value::decode_msgpack(&bytes, &schema().value_type()).unwrap();
        assert_eq!(back.get_attr("names"), r.state.get_attr("names"));
    }

    #[test]
    fn bad_filters_name_the_attribute() {
        let d = validate(&config(Value::number(-1), Value::string("intel")));
        let paths: Vec<String> =
            d.0.iter()
                .map(|x| x.attribute.as_ref().unwrap().to_string())
                .collect();
        assert_eq!(paths, vec!["min_memory_gib", "vendor"]);
        assert!(d.0[1].detail.contains("\"nvidia\", \"amd\""));
    }
}
