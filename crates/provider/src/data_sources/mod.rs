//! Data sources of the `gpu` provider, one module each, and their `tfplugin::DataSource`
//! glue: [`GpuModels`], and [`OfferSource`] for the two offer queries (which can read
//! live prices).

pub mod availability_args;
pub mod capacity_block_offers;
pub mod commitment_sizing;
pub mod gpu_models;
pub mod inventory;
pub mod offer_query;
pub mod offers;
pub mod pool_placement;
pub mod spot_offer;

use crate::live::Refreshed;
use async_trait::async_trait;
use gpu_core::availability::{Asks, Scores};
use gpu_core::catalog::Catalog;
use gpu_core::freshness::Freshness;
use gpu_core::query::OfferQuery;
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

    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse {
        gpu_models::read(request.config())
    }
}

/// Every check of a data source's configuration: the validators attached to its schema's
/// attributes, then its own (`own`). A read runs them all, since validate saw unknowns.
pub fn all_checks(schema: Schema, config: &Value, own: fn(&Value) -> Diagnostics) -> Diagnostics {
    let mut d = schema.block.check(config);
    d.extend(own(config));
    d
}

/// What an offer data source answers from: the catalog, the provider's price rules,
/// and the availability read (with `live = true`).
#[derive(Debug, Clone, Copy)]
pub struct Answering<'a> {
    /// The embedded catalog, or the one with live prices.
    pub catalog: &'a Catalog,
    /// The provider's `max_price_age` and `include_stale_prices`.
    pub prices: Freshness,
    /// The clouds' and the record's scores, when read.
    pub scores: Option<&'a Scores>,
}

impl<'a> Answering<'a> {
    /// An answer from `catalog` without availability.
    pub fn from(catalog: &'a Catalog, prices: Freshness) -> Self {
        Answering {
            catalog,
            prices,
            scores: None,
        }
    }

    /// The catalog, the provider's price rules and the scores.
    pub fn parts(self) -> (&'a Catalog, Freshness, Option<&'a Scores>) {
        (self.catalog, self.prices, self.scores)
    }
}

/// A data source answered from the offer catalog: the embedded one, or with
/// `live = true` the one refreshed with live prices (warnings for sources that fail) and
/// the places' availability.
#[derive(Debug, Clone)]
pub struct OfferSource {
    type_name: &'static str,
    schema: fn() -> Schema,
    validate: fn(&Value) -> Diagnostics,
    read: fn(&Value, Answering<'_>) -> ReadDataSourceResponse,
    /// The offers whose clouds and regions a live refresh must cover.
    live_scope: fn(&Value) -> Option<OfferQuery>,
    /// Whether the data source reads availability with `live = true`.
    scored: bool,
    provider: Arc<dyn OfferProvider>,
}

/// What the offer data sources need of the configured provider block: which prices count
/// and live prices.
#[async_trait]
pub trait OfferProvider: Send + Sync + std::fmt::Debug {
    /// The provider's `max_price_age` and `include_stale_prices`.
    fn prices(&self) -> Freshness;
    /// The catalog with live prices for `query`, and the warnings of sources that did not
    /// answer.
    async fn live_catalog(&self, query: &OfferQuery) -> Refreshed;
    /// The availability of the places `asks` names (the clouds' spot signals) and of every
    /// place in the provider's record, with a warning (summary, detail) per source that
    /// did not answer.
    async fn availability(&self, asks: &Asks) -> (Scores, Vec<(String, String)>);
}

/// The live scope of the offer queries: their own filters.
fn query_scope(config: &Value) -> Option<OfferQuery> {
    offer_query::build(config, gpu_core::query::Capacity::Either, Freshness::any()).ok()
}

impl OfferSource {
    /// `gpu_spot_offer`: the cheapest matching offer.
    pub fn spot_offer(provider: Arc<dyn OfferProvider>) -> Self {
        OfferSource {
            type_name: spot_offer::TYPE_NAME,
            schema: spot_offer::schema,
            validate: spot_offer::validate,
            read: spot_offer::read,
            live_scope: query_scope,
            scored: true,
            provider,
        }
    }

    /// `gpu_offers`: every matching offer, ranked.
    pub fn offers(provider: Arc<dyn OfferProvider>) -> Self {
        OfferSource {
            type_name: offers::TYPE_NAME,
            schema: offers::schema,
            validate: offers::validate,
            read: offers::read,
            live_scope: query_scope,
            scored: true,
            provider,
        }
    }

    /// `gpu_commitment_sizing`: how many GPUs to commit to (catalog prices fill the
    /// prices not given; never live).
    pub fn commitment_sizing(provider: Arc<dyn OfferProvider>) -> Self {
        OfferSource {
            type_name: commitment_sizing::TYPE_NAME,
            schema: commitment_sizing::schema,
            validate: commitment_sizing::validate,
            read: |config, a| commitment_sizing::read(config, a.catalog, a.prices),
            live_scope: |_| None,
            scored: false,
            provider,
        }
    }

    /// `gpu_pool_placement`: where a pool's whole bill is lowest.
    pub fn pool_placement(provider: Arc<dyn OfferProvider>) -> Self {
        OfferSource {
            type_name: pool_placement::TYPE_NAME,
            schema: pool_placement::schema,
            validate: pool_placement::validate,
            read: pool_placement::read,
            live_scope: pool_placement::live_scope,
            scored: true,
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
        let prices = self.provider.prices();
        let offline = Answering::from(Catalog::embedded(), prices);
        if offer_query::Filters::of(config).live.known() != Some(&true) {
            let mut response = (self.read)(config, offline);
            if self.scored && !response.diagnostics.has_errors() {
                response
                    .diagnostics
                    .extend(availability_args::warnings(config, None));
            }
            return response;
        }
        let validation = all_checks((self.schema)(), config, self.validate);
        if validation.has_errors() {
            return validation.into();
        }
        let Some(query) = (self.live_scope)(config) else {
            return (self.read)(config, offline);
        };
        let refreshed = self.provider.live_catalog(&query).await;
        let (scores, score_warnings) = match self.scored {
            true => {
                // The spot places the query can answer with, asked of their clouds.
                let items = gpu_core::query::run(&refreshed.catalog, &query)
                    .map(|r| r.items)
                    .unwrap_or_default();
                let (scores, w) = self.provider.availability(&Asks::of(&items)).await;
                (Some(scores), w)
            }
            false => (None, Vec::new()),
        };
        let answering = Answering {
            catalog: &refreshed.catalog,
            prices,
            scores: scores.as_ref(),
        };
        let mut response = (self.read)(config, answering);
        for warning in refreshed.warnings {
            response.diagnostics.push(Diagnostic::warning(
                "Some live prices are unavailable",
                warning,
            ));
        }
        for (summary, detail) in score_warnings {
            response
                .diagnostics
                .push(Diagnostic::warning(summary, detail));
        }
        if self.scored && !response.diagnostics.has_errors() {
            response
                .diagnostics
                .extend(availability_args::warnings(config, scores.as_ref()));
        }
        response
    }
}
