//! `GpuProvider`: the `gpu` provider's implementation of the plugin protocol, dispatching
//! each request to the resource or data source it names.

use crate::config::{self, ProviderConfig};
use crate::data_sources;
use async_trait::async_trait;
use std::sync::RwLock;
use tfplugin::provider::{
    ConfigureProviderRequest, ProviderSchemas, ReadDataSourceRequest, ReadDataSourceResponse,
};
use tfplugin::{Diagnostic, Diagnostics, Provider, Value};

/// The `gpu` provider.
#[derive(Debug, Default)]
pub struct GpuProvider {
    config: RwLock<Option<ProviderConfig>>,
    live: crate::live::LiveCache,
}

impl GpuProvider {
    /// The configuration given by `ConfigureProvider`, if it ran.
    pub fn configured(&self) -> Option<ProviderConfig> {
        self.config.read().ok().and_then(|c| c.clone())
    }
}

#[async_trait]
impl Provider for GpuProvider {
    fn schemas(&self) -> ProviderSchemas {
        ProviderSchemas {
            provider: config::schema(),
            data_sources: data_sources::schemas(),
            ..Default::default()
        }
    }

    async fn validate_provider_config(&self, config: &Value) -> Diagnostics {
        config::validate(config)
    }

    async fn validate_data_resource_config(&self, type_name: &str, config: &Value) -> Diagnostics {
        data_sources::validate(type_name, config)
    }

    async fn configure_provider(&self, request: ConfigureProviderRequest) -> Diagnostics {
        let mut diags = config::validate(&request.config);
        if diags.has_errors() {
            return diags;
        }
        if !request.config.is_wholly_known() {
            // Terraform only sends unknowns here when the provider block depends on
            // resources not created yet; plan with what is known, and say so.
            diags.push(Diagnostic::warning(
                "Provider configuration not yet known",
                "Part of the `gpu` provider block depends on values known only after apply; the plan uses the embedded defaults for them.",
            ));
            return diags;
        }
        match tfplugin::value::from_value::<ProviderConfig>(&request.config) {
            Ok(parsed) => {
                if let Ok(mut slot) = self.config.write() {
                    *slot = Some(parsed);
                }
            }
            Err(e) => diags.push(Diagnostic::error(
                "Invalid provider configuration",
                e.to_string(),
            )),
        }
        diags
    }

    async fn read_data_source(&self, request: ReadDataSourceRequest) -> ReadDataSourceResponse {
        let embedded = gpu_core::catalog::Catalog::embedded();
        let wants_live = request.config.get_attr("live").and_then(Value::as_bool) == Some(true);
        if !(wants_live && data_sources::is_offer_query(&request.type_name)) {
            return data_sources::read(&request.type_name, &request.config, embedded);
        }
        let query = match data_sources::offer_query::build(
            &request.config,
            gpu_core::query::Capacity::Either,
        ) {
            Ok(q) => q,
            Err(diagnostics) => {
                return ReadDataSourceResponse {
                    state: Value::Null,
                    diagnostics,
                };
            }
        };
        let refreshed = self
            .live
            .get(self.configured().as_ref(), &query, &|_| {})
            .await;
        let mut response =
            data_sources::read(&request.type_name, &request.config, &refreshed.catalog);
        for warning in refreshed.warnings {
            response.diagnostics.push(Diagnostic::warning(
                "Some live prices are unavailable",
                warning,
            ));
        }
        response
    }
}
