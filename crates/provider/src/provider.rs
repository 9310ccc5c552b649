//! `GpuProvider`: the `gpu` provider block (its configuration, the stop signal, the
//! caches operations share), and [`new`], the provider Terraform talks to: a
//! `tfplugin::Router` of the provider block and every resource and data source, which
//! dispatches each request by type name.

use crate::config::{self, ProviderConfig};
use crate::data_sources;
use crate::live::Refreshed;
use crate::resources::list::EstateList;
use crate::resources::{commitment, instance, node_pool};
use async_trait::async_trait;
use gpu_core::availability::{Asks, Scores};
use gpu_core::cancel::Cancel;
use gpu_core::inventory::ItemKind;
use gpu_core::query::OfferQuery;
use gpu_core::registry::sessions::Sessions;
use std::sync::{Arc, Mutex, RwLock};
use tfplugin::provider::ConfigureProviderRequest;
use tfplugin::{Diagnostic, Diagnostics, ProviderBlock, Router, Schema};

/// The `gpu` provider.
#[derive(Debug, Default)]
pub struct GpuProvider {
    config: RwLock<Option<ProviderConfig>>,
    live: crate::live::LiveCache,
    scores: crate::live::ScoreCache,
    /// The stop signal of the operations in flight. `StopProvider` sets it (their waits
    /// and retry pauses end, state is returned) and puts a fresh one in its place, so in a
    /// long-lived `--debug` server one Ctrl-C does not cancel every later apply.
    stop: Mutex<Cancel>,
    /// Every cloud's session (credentials, SDK configurations, HTTP clients), made at
    /// `ConfigureProvider` and shared by every operation until the next one.
    sessions: RwLock<Sessions>,
    /// The `audit` block's OpenTelemetry sink, made at `ConfigureProvider`.
    otlp: RwLock<Option<Arc<dyn gpu_core::audit::AuditSink>>>,
}

impl GpuProvider {
    /// The configuration given by `ConfigureProvider`, if it ran.
    pub fn configured(&self) -> Option<ProviderConfig> {
        self.config.read().ok().and_then(|c| c.clone())
    }

    /// Takes `parsed` as the provider block's settings, with the sessions and the audit
    /// sink they give (an OTLP exporter is made only when an event is sent).
    fn set_config(&self, parsed: ProviderConfig) {
        if let Ok(mut slot) = self.otlp.write() {
            *slot = parsed.audit.as_ref().and_then(|a| a.otlp_sink());
        }
        if let Ok(mut slot) = self.sessions.write() {
            *slot = crate::clouds::sessions_of(&parsed);
        }
        if let Ok(mut slot) = self.config.write() {
            *slot = Some(parsed);
        }
    }

    /// The stop signal for an operation starting now.
    fn operation_cancel(&self) -> Cancel {
        self.stop.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The events file: the provider's `events_file`, else `GPU_TF_EVENTS_FILE`.
    fn events_file(&self) -> Option<String> {
        self.configured()
            .and_then(|c| c.events_file)
            .or_else(|| std::env::var(gpu_core::record::EVENTS_FILE_ENV).ok())
            .filter(|p| !p.trim().is_empty())
    }

    /// Every cloud's session.
    fn sessions(&self) -> Sessions {
        self.sessions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The clouds for an operation starting now: the sessions, its stop signal, the
    /// events file and the audit's sinks (that file and the `audit` block's collector).
    pub(crate) fn clouds(&self) -> crate::clouds::Clouds {
        let sessions = self.sessions();
        let record = self.events_file().map(gpu_core::record::EventLog::at);
        let mut sinks: Vec<Arc<dyn gpu_core::audit::AuditSink>> = Vec::new();
        if let Some(log) = &record {
            sinks.push(Arc::new(gpu_core::audit::JsonLinesSink(log.clone())));
        }
        if let Some(otlp) = self.otlp.read().ok().and_then(|s| s.clone()) {
            sinks.push(otlp);
        }
        crate::clouds::Clouds::new(sessions, self.operation_cancel())
            .with_record(record)
            .with_audit(sinks)
    }

    /// The catalog with live prices for `query` (refreshed once per clouds and regions
    /// for the process's life), and the warnings of sources that did not answer.
    pub async fn live_catalog(&self, query: &OfferQuery) -> Refreshed {
        self.live
            .get(
                self.configured().as_ref(),
                query,
                &|_| {},
                &self.operation_cancel(),
            )
            .await
    }

    /// What commitments need of the provider block.
    pub fn commitment_settings(&self) -> commitment::Settings {
        let c = self.configured().unwrap_or_default();
        let clouds = self.clouds();
        commitment::Settings {
            allow_purchase: c.allow_commitment_purchase.unwrap_or(false),
            default_labels: c.default_labels.unwrap_or_default(),
            clouds,
        }
    }

    /// What instances need of the provider block.
    pub fn instance_settings(&self) -> instance::Settings {
        instance::Settings {
            base: self.commitment_settings(),
            prices: self.configured().unwrap_or_default().prices(),
        }
    }

    /// What node pools need of the provider block.
    pub fn pool_settings(&self) -> node_pool::Settings {
        let c = self.configured().unwrap_or_default();
        let prices = c.prices();
        let clouds = self.clouds();
        node_pool::Settings {
            default_labels: c.default_labels.unwrap_or_default(),
            max_monthly_usd: c.budget.and_then(|b| b.max_monthly_usd),
            clouds,
            prices,
        }
    }
}

impl node_pool::resource::PoolProvider for GpuProvider {
    fn pool_settings(&self) -> node_pool::Settings {
        GpuProvider::pool_settings(self)
    }
}

impl commitment::resource::CommitmentProvider for GpuProvider {
    fn commitment_settings(&self) -> commitment::Settings {
        GpuProvider::commitment_settings(self)
    }
}

impl instance::resource::InstanceProvider for GpuProvider {
    fn instance_settings(&self) -> instance::Settings {
        GpuProvider::instance_settings(self)
    }
}

#[async_trait]
impl data_sources::OfferProvider for GpuProvider {
    fn prices(&self) -> gpu_core::freshness::Freshness {
        self.configured().unwrap_or_default().prices()
    }

    async fn live_catalog(&self, query: &OfferQuery) -> Refreshed {
        GpuProvider::live_catalog(self, query).await
    }

    async fn availability(&self, asks: &Asks) -> (Scores, Vec<(String, String)>) {
        let mut scores = Scores::new();
        let (places, failed) = self
            .scores
            .get(&self.sessions(), asks, &self.operation_cancel())
            .await;
        for p in places {
            scores.add(p);
        }
        let mut warnings: Vec<(String, String)> = failed
            .into_iter()
            .map(|(cloud, w)| {
                let name = match cloud {
                    gpu_core::offer::Cloud::Aws => "AWS",
                    gpu_core::offer::Cloud::Azure => "Azure",
                    other => other.as_str(),
                };
                (format!("{name} spot placement scores are unavailable"), w)
            })
            .collect();
        if let Some(path) = self.events_file() {
            match self.scores.record(std::path::Path::new(&path)).await {
                Ok(record) => scores.add_record(record),
                Err(w) => warnings.push(("The record of capacity answers is unread".into(), w)),
            }
        }
        (scores, warnings)
    }
}

/// The `gpu` provider as served: the provider block, the three resources with their list
/// resources, and the data sources, sharing one [`GpuProvider`].
pub fn new() -> Router<Arc<GpuProvider>> {
    let provider = Arc::new(GpuProvider::default());
    Router::new(provider.clone())
        .resource(node_pool::resource::NodePool::new(provider.clone()))
        .resource(commitment::resource::CommitmentResource::new(
            provider.clone(),
        ))
        .resource(instance::resource::InstanceResource::new(provider.clone()))
        .list(EstateList::new(ItemKind::NodePool, provider.clone()))
        .list(EstateList::new(ItemKind::Instance, provider.clone()))
        .list(EstateList::new(ItemKind::Commitment, provider.clone()))
        .data_source(data_sources::GpuModels)
        .data_source(
            data_sources::capacity_block_offers::CapacityBlockOffers::new(provider.clone()),
        )
        .data_source(data_sources::inventory::Inventory::new(provider.clone()))
        .data_source(data_sources::OfferSource::spot_offer(provider.clone()))
        .data_source(data_sources::OfferSource::offers(provider.clone()))
        .data_source(data_sources::OfferSource::commitment_sizing(
            provider.clone(),
        ))
        .data_source(data_sources::OfferSource::pool_placement(provider))
        .function(crate::functions::CommitmentSize)
}

/// The provider as [`new`] serves it, already configured with `config` (checked by the
/// caller): the CLI's way to run the resources' own import and read, as Terraform would.
pub fn configured_with(config: ProviderConfig) -> Router<Arc<GpuProvider>> {
    let router = new();
    router.provider().set_config(config);
    router
}

#[async_trait]
impl ProviderBlock for GpuProvider {
    fn schema(&self) -> Schema {
        config::schema()
    }

    /// Terraform sends this on Ctrl-C: waits and retry pauses end now, and each apply in
    /// flight returns the state of what exists with an error saying it was interrupted.
    async fn stop(&self) -> Result<(), String> {
        tracing::info!("StopProvider: cancelling in-flight waits");
        let mut slot = self.stop.lock().unwrap_or_else(|p| p.into_inner());
        slot.cancel();
        *slot = Cancel::new();
        Ok(())
    }

    async fn configure(&self, request: ConfigureProviderRequest) -> Diagnostics {
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
                diags.extend(crate::clouds::time_scale_warnings(&parsed));
                self.set_config(parsed)
            }
            Err(e) => diags.push(Diagnostic::error(
                "Invalid provider configuration",
                e.to_string(),
            )),
        }
        diags
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfplugin::Value;

    #[tokio::test]
    async fn stop_cancels_operations_in_flight_but_not_later_ones() {
        let p = GpuProvider::default();
        let in_flight = p.pool_settings().clouds.cancel().clone();
        assert!(!in_flight.is_cancelled());
        p.stop().await.unwrap();
        assert!(in_flight.is_cancelled(), "the running apply must stop");
        let later = p.pool_settings().clouds.cancel().clone();
        assert!(
            !later.is_cancelled(),
            "an apply after the stop (reattach/--debug) must run"
        );
        assert_ne!(later, in_flight);
    }

    #[tokio::test]
    async fn operations_share_one_session_per_cloud() {
        let p = GpuProvider::default();
        let (a, b) = (p.pool_settings(), p.commitment_settings());
        a.clouds.sessions().aws.sdk_config(Some("eu-west-1")).await;
        b.clouds.sessions().aws.sdk_config(Some("eu-west-1")).await;
        let shared = p.sessions.read().unwrap().aws.loaded();
        assert_eq!(shared, 1, "one credential chain load for both operations");
    }

    #[test]
    fn the_router_serves_every_type() {
        use tfplugin::Provider;
        let s = new().schemas();
        assert_eq!(
            s.resources.keys().collect::<Vec<_>>(),
            ["gpu_commitment", "gpu_instance", "gpu_node_pool"]
        );
        assert_eq!(s.resources["gpu_node_pool"].version, 1);
        assert_eq!(
            s.data_sources.keys().collect::<Vec<_>>(),
            [
                "gpu_capacity_block_offers",
                "gpu_commitment_sizing",
                "gpu_inventory",
                "gpu_models",
                "gpu_offers",
                "gpu_pool_placement",
                "gpu_spot_offer"
            ]
        );
        assert_eq!(s.provider, config::schema());
    }

    #[tokio::test]
    async fn requests_reach_the_node_pool_by_type_name() {
        use tfplugin::Provider;
        use tfplugin::provider::{ImportResourceStateRequest, UpgradeResourceStateRequest};
        let p = new();
        let config = Value::object([(
            "timeouts",
            Value::object([("create", Value::string("soon"))]),
        )]);
        let d = p.validate_resource_config("gpu_node_pool", &config).await;
        assert!(
            d.0.iter().any(|d| d.summary == "Invalid timeouts.create"),
            "{d:?}"
        );
        let out = p
            .import_resource_state(ImportResourceStateRequest {
                type_name: "gpu_node_pool".into(),
                id: "aws/us-east-1".into(),
            })
            .await;
        assert_eq!(out.diagnostics.0[0].summary, "Invalid import id");
        let out = p
            .import_resource_state(ImportResourceStateRequest {
                type_name: "gpu_node_pool".into(),
                id: "aws/us-east-1/train-east/train".into(),
            })
            .await;
        assert!(!out.diagnostics.has_errors(), "{:?}", out.diagnostics);
        assert_eq!(out.imported[0].type_name, "gpu_node_pool");
        assert_eq!(
            out.imported[0].state.get_attr("cluster"),
            Some(&Value::string("train-east"))
        );
        let schema = &p.schemas().resources["gpu_node_pool"];
        let e = p
            .upgrade_resource_state(
                UpgradeResourceStateRequest {
                    type_name: "gpu_node_pool".into(),
                    version: 2,
                    raw_json: Some(b"{}".to_vec()),
                    raw_flatmap: Default::default(),
                },
                schema,
            )
            .await
            .unwrap_err();
        assert_eq!(e.0[0].summary, "Unsupported state version");
        let d = p
            .validate_resource_config("gpu_cluster", &Value::Null)
            .await;
        assert!(
            d.0[0].detail.contains("`gpu_cluster`") && d.0[0].detail.contains("`gpu_node_pool`")
        );
    }

    #[tokio::test]
    async fn data_sources_read_through_the_router() {
        use tfplugin::Provider;
        use tfplugin::provider::ReadDataSourceRequest;
        let p = new();
        let d = p
            .validate_data_resource_config(
                "gpu_offers",
                &Value::object([("gpu", Value::string("no-such-gpu"))]),
            )
            .await;
        assert!(d.has_errors(), "{d:?}");
        let schema = &p.schemas().data_sources["gpu_models"];
        let config = crate::model_values::object_of(schema, []);
        let out = p
            .read_data_source(ReadDataSourceRequest {
                type_name: "gpu_models".into(),
                config,
                provider_meta: None,
            })
            .await;
        assert!(!out.diagnostics.has_errors(), "{:?}", out.diagnostics);
        assert!(!out.state.is_null());
    }
}
