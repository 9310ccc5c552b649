//! A complete Terraform provider in one file, built on `tfplugin` alone: provider `hello`
//! with one data source, `hello_greeting`, that answers `"<greeting>, <name>!"`.
//!
//! Build it with `cargo build -p tfplugin --example terraform-provider-hello`, point a
//! `dev_overrides` entry for `registry.terraform.io/example/hello` at
//! `target/debug/examples`, and `terraform plan` a configuration that reads it
//! (`acceptance/tests/test_tfplugin_example.py` does exactly that). It is also the
//! start-up baseline of `make bench`: the least a Rust provider does before its handshake.

use async_trait::async_trait;
use std::collections::BTreeMap;
use tfplugin::provider::{ReadDataSourceRequest, ReadDataSourceResponse};
use tfplugin::{
    Attribute, AttributePath, Block, Diagnostic, Diagnostics, Provider, ProviderSchemas, Schema,
    Type, Value,
};

/// The provider: no settings, one data source.
struct Hello;

/// The schema of `hello_greeting`.
fn greeting_schema() -> Schema {
    Schema::new(
        Block::new("Greets someone.")
            .attribute(Attribute::required("name", Type::String).describe("Who to greet."))
            .attribute(
                Attribute::optional("greeting", Type::String)
                    .describe("The word of greeting (default `Hello`)."),
            )
            .attribute(Attribute::computed("text", Type::String).describe("The greeting.")),
    )
}

#[async_trait]
impl Provider for Hello {
    fn schemas(&self) -> ProviderSchemas {
        ProviderSchemas {
            provider: Schema::new(Block::new("A provider that greets.")),
            data_sources: BTreeMap::from([("hello_greeting".to_string(), greeting_schema())]),
            ..Default::default()
        }
    }

    async fn validate_data_resource_config(&self, _type_name: &str, config: &Value) -> Diagnostics {
        // Unknown values (known only after apply) are skipped; an empty name is refused
        // with the attribute's path, as Terraform users expect.
        match config.get_attr("name").and_then(Value::as_str) {
            Some("") => Diagnostic::error("Invalid name", "`name` must not be empty.")
                .at(AttributePath::attr("name"))
                .into(),
            _ => Diagnostics::new(),
        }
    }

    async fn read_data_source(&self, request: ReadDataSourceRequest) -> ReadDataSourceResponse {
        let c = &request.config;
        let name = c.get_attr("name").and_then(Value::as_str).unwrap_or("");
        let greeting = c
            .get_attr("greeting")
            .and_then(Value::as_str)
            .unwrap_or("Hello");
        let mut state = c.clone();
        if let Value::Object(m) = &mut state {
            m.insert("text".into(), Value::string(format!("{greeting}, {name}!")));
        }
        ReadDataSourceResponse {
            state,
            diagnostics: Diagnostics::new(),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match tfplugin::server::serve(Hello).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terraform-provider-hello: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
