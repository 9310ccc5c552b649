//! `GpuProvider`: the `gpu` provider's implementation of the plugin protocol, dispatching
//! each request to the resource or data source it names.

use crate::config::{self, ProviderConfig};
use crate::data_sources;
use crate::resources::{self, node_pool};
use async_trait::async_trait;
use gpu_core::cancel::Cancel;
use gpu_core::cloud::aws::ConfigCache;
use std::sync::{Mutex, RwLock};
use tfplugin::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, ConfigureProviderRequest,
    ImportResourceStateRequest, ImportResourceStateResponse, ImportedResource,
    PlanResourceChangeRequest, PlanResourceChangeResponse, ProviderSchemas, ReadDataSourceRequest,
    ReadDataSourceResponse, ReadResourceRequest, ReadResourceResponse, UpgradeResourceStateRequest,
};
use tfplugin::{Diagnostic, Diagnostics, Provider, Value};

/// The `gpu` provider.
#[derive(Debug, Default)]
pub struct GpuProvider {
    config: RwLock<Option<ProviderConfig>>,
    live: crate::live::LiveCache,
    /// The stop signal of the operations in flight. `StopProvider` sets it (their waits
    /// and retry pauses end, state is returned) and puts a fresh one in its place, so in a
    /// long-lived `--debug` server one Ctrl-C does not cancel every later apply.
    stop: Mutex<Cancel>,
    /// AWS credential chains, loaded once per (region, profile) for the process's life.
    aws_configs: ConfigCache,
}

impl GpuProvider {
    /// The configuration given by `ConfigureProvider`, if it ran.
    pub fn configured(&self) -> Option<ProviderConfig> {
        self.config.read().ok().and_then(|c| c.clone())
    }

    /// The stop signal for an operation starting now.
    fn operation_cancel(&self) -> Cancel {
        self.stop.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What node pools need of the provider block.
    fn pool_settings(&self) -> node_pool::Settings {
        let c = self.configured().unwrap_or_default();
        let aws = c.aws.unwrap_or_default();
        node_pool::Settings {
            default_labels: c.default_labels.unwrap_or_default(),
            max_monthly_usd: c.budget.and_then(|b| b.max_monthly_usd),
            aws_profile: aws.profile,
            eks_endpoint: aws.endpoints.and_then(|e| e.get("eks").cloned()),
            aws_max_retries: aws.max_retries,
            cancel: self.operation_cancel(),
            aws_configs: self.aws_configs.clone(),
        }
    }
}

/// A response for a resource type the provider does not have.
fn unknown_resource<T: Default>(name: &str, set: impl FnOnce(&mut T, Diagnostics)) -> T {
    let mut r = T::default();
    set(&mut r, resources::unknown_type(name).into());
    r
}

#[async_trait]
impl Provider for GpuProvider {
    /// Terraform sends this on Ctrl-C: waits and retry pauses end now, and each apply in
    /// flight returns the state of what exists with an error saying it was interrupted.
    async fn stop_provider(&self) -> Result<(), String> {
        tracing::info!("StopProvider: cancelling in-flight waits");
        let mut slot = self.stop.lock().unwrap_or_else(|p| p.into_inner());
        slot.cancel();
        *slot = Cancel::new();
        Ok(())
    }

    fn schemas(&self) -> ProviderSchemas {
        ProviderSchemas {
            provider: config::schema(),
            data_sources: data_sources::schemas(),
            resources: resources::schemas(),
            ..Default::default()
        }
    }

    async fn validate_provider_config(&self, config: &Value) -> Diagnostics {
        config::validate(config)
    }

    async fn validate_data_resource_config(&self, type_name: &str, config: &Value) -> Diagnostics {
        data_sources::validate(type_name, config)
    }

    async fn validate_resource_config(&self, type_name: &str, config: &Value) -> Diagnostics {
        match type_name {
            node_pool::TYPE_NAME => {
                node_pool::validate(config, gpu_core::catalog::Catalog::embedded())
            }
            other => resources::unknown_type(other).into(),
        }
    }

    async fn plan_resource_change(
        &self,
        request: PlanResourceChangeRequest,
    ) -> PlanResourceChangeResponse {
        match request.type_name.as_str() {
            node_pool::TYPE_NAME => node_pool::plan::plan(
                &request,
                &self.pool_settings(),
                gpu_core::catalog::Catalog::embedded(),
            ),
            other => unknown_resource(other, |r: &mut PlanResourceChangeResponse, d| {
                r.diagnostics = d
            }),
        }
    }

    async fn apply_resource_change(
        &self,
        request: ApplyResourceChangeRequest,
    ) -> ApplyResourceChangeResponse {
        match request.type_name.as_str() {
            node_pool::TYPE_NAME => {
                node_pool::apply::apply(
                    &request.prior_state,
                    &request.planned_state,
                    &self.pool_settings(),
                    gpu_core::catalog::Catalog::embedded(),
                )
                .await
            }
            other => unknown_resource(other, |r: &mut ApplyResourceChangeResponse, d| {
                r.new_state = request.prior_state.clone();
                r.diagnostics = d;
            }),
        }
    }

    async fn read_resource(&self, request: ReadResourceRequest) -> ReadResourceResponse {
        match request.type_name.as_str() {
            node_pool::TYPE_NAME => {
                let mut r = node_pool::apply::read(
                    &request.current_state,
                    &self.pool_settings(),
                    gpu_core::catalog::Catalog::embedded(),
                )
                .await;
                r.private = request.private;
                r
            }
            other => unknown_resource(other, |r: &mut ReadResourceResponse, d| {
                r.new_state = request.current_state.clone();
                r.diagnostics = d;
            }),
        }
    }

    async fn import_resource_state(
        &self,
        request: ImportResourceStateRequest,
    ) -> ImportResourceStateResponse {
        if request.type_name != node_pool::TYPE_NAME {
            return unknown_resource(
                &request.type_name,
                |r: &mut ImportResourceStateResponse, d| r.diagnostics = d,
            );
        }
        let keys: Vec<String> = match node_pool::schema().value_type() {
            tfplugin::Type::Object(o) => o.attributes.keys().cloned().collect(),
            _ => Vec::new(),
        };
        match node_pool::read::import_state(
            &request.id,
            &keys,
            gpu_core::catalog::Catalog::embedded(),
        ) {
            Ok(state) => ImportResourceStateResponse {
                imported: vec![ImportedResource {
                    type_name: request.type_name,
                    state,
                    private: Vec::new(),
                }],
                diagnostics: Diagnostics::new(),
            },
            Err(why) => ImportResourceStateResponse {
                imported: Vec::new(),
                diagnostics: Diagnostic::error("Invalid import id", why).into(),
            },
        }
    }

    /// `gpu_node_pool` state of version 0 (EKS-shaped `node_groups`) is rewritten to
    /// version 1; any other type or version goes through tfplugin's default.
    async fn upgrade_resource_state(
        &self,
        request: UpgradeResourceStateRequest,
        schema: &tfplugin::Schema,
    ) -> Result<Value, Diagnostics> {
        if request.type_name == node_pool::TYPE_NAME
            && request.version == 0
            && let Some(json) = &request.raw_json
        {
            return node_pool::upgrade::v0_to_current(json, schema);
        }
        tfplugin::provider::decode_stored_state(&request, schema)
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
            .get(
                self.configured().as_ref(),
                &query,
                &|_| {},
                &self.operation_cancel(),
            )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stop_cancels_operations_in_flight_but_not_later_ones() {
        let p = GpuProvider::default();
        let in_flight = p.pool_settings().cancel;
        assert!(!in_flight.is_cancelled());
        p.stop_provider().await.unwrap();
        assert!(in_flight.is_cancelled(), "the running apply must stop");
        let later = p.pool_settings().cancel;
        assert!(
            !later.is_cancelled(),
            "an apply after the stop (reattach/--debug) must run"
        );
        assert_ne!(later, in_flight);
    }

    #[tokio::test]
    async fn operations_share_one_aws_config_cache() {
        let p = GpuProvider::default();
        let (a, b) = (p.pool_settings(), p.pool_settings());
        let key = gpu_core::cloud::aws::ConfigKey {
            region: Some("eu-west-1".into()),
            profile: None,
        };
        a.aws_configs.get(&key).await;
        b.aws_configs.get(&key).await;
        assert_eq!(p.aws_configs.loaded(), 1);
    }
}
