//! Data sources of the `gpu` provider, one module each, and their `tfplugin::DataSource`
//! glue: [`GpuModels`], and [`OfferSource`] for the two offer queries (which can read
//! live prices).

pub mod gpu_models;
pub mod offer_query;
pub mod offers;
pub mod spot_offer;

use crate::provider::GpuProvider;
use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use std::sync::Arc;
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::resource::{ReadDataRequest, ValidateRequest};
use tfplugin::{DataSource, Diagnostic, Diagnostics, Schema, Value};

/// `gpu_models`: the GPU registry.
#[derive(Debug, Clone, Copy)]
pub struct GpuModels;

#[async_trait]
impl DataSource for GpuModels {
    fn type_name(&self) -> &str {
        gpu_models::TYPE_NAME
    }

    fn schema(&self) -> Schema {
        gpu_models::schema()
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        gpu_models::validate(request.config())
    }

    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse {
        gpu_models::read(request.config())
    }
}

/// A data source answered from the offer catalog: the embedded one, or with
/// `live = true` the one refreshed with live prices (warnings for sources that fail).
#[derive(Debug, Clone)]
pub struct OfferSource {
    type_name: &'static str,
    schema: fn() -> Schema,
    validate: fn(&Value) -> Diagnostics,
    read: fn(&Value, &Catalog) -> ReadDataSourceResponse,
    provider: Arc<GpuProvider>,
}

impl OfferSource {
    /// `gpu_spot_offer`: the cheapest matching offer.
    pub fn spot_offer(provider: Arc<GpuProvider>) -> Self {
        OfferSource {
            type_name: spot_offer::TYPE_NAME,
            schema: spot_offer::schema,
            validate: spot_offer::validate,
            read: spot_offer::read,
            provider,
        }
    }

    /// `gpu_offers`: every matching offer, ranked.
    pub fn offers(provider: Arc<GpuProvider>) -> Self {
        OfferSource {
            type_name: offers::TYPE_NAME,
            schema: offers::schema,
            validate: offers::validate,
            read: offers::read,
            provider,
        }
    }
}

#[async_trait]
impl DataSource for OfferSource {
    fn type_name(&self) -> &str {
        self.type_name
    }

    fn schema(&self) -> Schema {
        (self.schema)()
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        (self.validate)(request.config())
    }

    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse {
        let config = request.config();
        if config.get_attr("live").and_then(Value::as_bool) != Some(true) {
            return (self.read)(config, Catalog::embedded());
        }
        let query = match offer_query::build(config, gpu_core::query::Capacity::Either) {
            Ok(q) => q,
            Err(diagnostics) => return diagnostics.into(),
        };
        let refreshed = self.provider.live_catalog(&query).await;
        let mut response = (self.read)(config, &refreshed.catalog);
        for warning in refreshed.warnings {
            response.diagnostics.push(Diagnostic::warning(
                "Some live prices are unavailable",
                warning,
            ));
        }
        response
    }
}
