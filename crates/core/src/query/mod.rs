//! Filtering and ranking offers: cheapest price per GPU-hour first, with stable tie-breaks,
//! optional hysteresis towards a preferred offer, and an explanation when nothing matches.
//!
//! ```
//! use gpu_core::catalog::Catalog;
//! use gpu_core::query::{self, Capacity, GpuCount, OfferQuery};
//!
//! let q = OfferQuery {
//!     gpu_count: Some(GpuCount::Exact(8.0)),
//!     capacity: Capacity::OnDemand,
//!     ..OfferQuery::default()
//! }
//! .with_gpu_names(["H100"])
//! .unwrap();
//! let result = query::run(Catalog::embedded(), &q).unwrap();
//! let best = result.best().unwrap();
//! assert_eq!(best.offer.gpu.name, "H100");
//! ```

mod explain;
mod filter;
mod rank;
mod validate;

use std::fmt;

use crate::availability::{self, Scores};
use crate::freshness::Freshness;
use crate::gpu::{self, GpuLookupError, GpuModel};
use crate::offer::{Cloud, Offer, OfferKey};

pub use explain::{EmptyResult, NearOffer};
pub use filter::Filter;
pub use rank::{Hysteresis, ranking_order};
pub use validate::{FieldError, validate};

/// GPUs per instance wanted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GpuCount {
    /// Exactly this many (fractions select partial-GPU sizes, e.g. 0.5).
    Exact(f64),
    /// This many or more.
    AtLeast(f64),
}

/// Which kind of capacity to price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Capacity {
    /// Spot / preemptible prices only.
    Spot,
    /// On-demand prices only.
    OnDemand,
    /// Both: an offer with both prices gives two candidates.
    #[default]
    Either,
}

impl Capacity {
    /// The name used in configuration: `spot`, `on_demand`, `either`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capacity::Spot => "spot",
            Capacity::OnDemand => "on_demand",
            Capacity::Either => "either",
        }
    }

    /// Whether an item bought as spot (`true`) or on-demand is this capacity.
    pub fn allows(self, spot: bool) -> bool {
        match self {
            Capacity::Spot => spot,
            Capacity::OnDemand => !spot,
            Capacity::Either => true,
        }
    }
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to look for. Empty lists and `None` mean "any"; see [`Filter`] for the order the
/// filters apply in.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferQuery {
    /// GPU models (any of them); empty = any model.
    pub gpus: Vec<&'static GpuModel>,
    /// GPUs per instance; offers with an unknown GPU count never match (they cannot be
    /// priced per GPU-hour).
    pub gpu_count: Option<GpuCount>,
    /// Minimum memory per GPU in GiB (see [`Offer::vram_per_gpu_gib`]).
    pub min_vram_gib: Option<f64>,
    /// Clouds; empty = any.
    pub clouds: Vec<Cloud>,
    /// Region globs (`us-*`), case-insensitive; empty = any.
    pub regions: Vec<String>,
    /// Zone globs, case-insensitive; offers without a zone never match a zone filter.
    pub zones: Vec<String>,
    /// Capacity type to price.
    pub capacity: Capacity,
    /// Maximum price per GPU-hour in USD.
    pub max_price_per_gpu_hour: Option<f64>,
    /// Minimum vCPUs per instance (offers with unknown vCPUs do not match).
    pub min_vcpus: Option<f64>,
    /// Minimum instance memory in GiB (offers with unknown memory do not match).
    pub min_memory_gib: Option<f64>,
    /// Instance type globs to leave out (`p3*`), case-insensitive.
    pub exclude_instance_types: Vec<String>,
    /// The item currently in use; kept first unless the best is cheaper enough.
    pub prefer: Option<OfferKey>,
    /// How much cheaper per GPU-hour (percent of the preferred price) the best item must be
    /// to displace `prefer`; 0 means any saving does.
    pub min_saving_percent: f64,
    /// Keep at most this many items (after ranking).
    pub limit: Option<usize>,
    /// How old a price may be to count (undated prices never pass a limit).
    pub freshness: Freshness,
    /// Rank places at or above this availability (0 to 1) first, then places without a
    /// score, then places below it; by price within each (see [`run_with`]). `None`:
    /// by price alone.
    pub prefer_available: Option<f64>,
}

impl Default for OfferQuery {
    fn default() -> Self {
        OfferQuery {
            gpus: Vec::new(),
            gpu_count: None,
            min_vram_gib: None,
            clouds: Vec::new(),
            regions: Vec::new(),
            zones: Vec::new(),
            capacity: Capacity::Either,
            max_price_per_gpu_hour: None,
            min_vcpus: None,
            min_memory_gib: None,
            exclude_instance_types: Vec::new(),
            prefer: None,
            min_saving_percent: 0.0,
            limit: None,
            freshness: Freshness::any(),
            prefer_available: None,
        }
    }
}

impl OfferQuery {
    /// Adds GPU models by name, resolved with [`gpu::lookup`].
    pub fn with_gpu_names<I, S>(mut self, names: I) -> Result<Self, QueryError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for (index, name) in names.into_iter().enumerate() {
            let m =
                gpu::lookup(name.as_ref()).map_err(|source| QueryError::Gpu { index, source })?;
            if !self.gpus.contains(&m) {
                self.gpus.push(m);
            }
        }
        Ok(self)
    }
}

/// One buyable item: an offer bought as spot or on-demand, with its price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PricedOffer<'a> {
    /// The offer.
    pub offer: &'a Offer,
    /// Spot (`true`) or on-demand.
    pub spot: bool,
    /// USD per instance-hour.
    pub price_per_hour: f64,
    /// USD per GPU-hour (`price_per_hour / gpu_count`).
    pub price_per_gpu_hour: f64,
}

impl<'a> PricedOffer<'a> {
    /// The item for `offer` bought as `spot` or on-demand, if it has that price and a known
    /// GPU count above 0.
    pub fn new(offer: &'a Offer, spot: bool) -> Option<Self> {
        let price = offer.price(spot)?;
        let count = offer.gpu_count.filter(|c| *c > 0.0)?;
        Some(PricedOffer {
            offer,
            spot,
            price_per_hour: price,
            price_per_gpu_hour: price / count,
        })
    }

    /// The item's key.
    pub fn key(&self) -> OfferKey {
        self.offer.key(self.spot)
    }

    /// Whether this item has `key`.
    pub fn has_key(&self, key: &OfferKey) -> bool {
        self.spot == key.spot && self.offer.has_key(key)
    }
}

/// What [`run`] found.
#[derive(Debug, Clone)]
pub struct QueryResult<'a> {
    /// Ranked items, best first (at most `limit`).
    pub items: Vec<PricedOffer<'a>>,
    /// How many items passed the filters (before `limit`).
    pub matched: usize,
    /// Why nothing matched, when `items` is empty.
    pub empty: Option<EmptyResult<'a>>,
    /// What the preference did, when the query had `prefer`.
    pub hysteresis: Option<Hysteresis>,
}

impl<'a> QueryResult<'a> {
    /// The first-ranked item.
    pub fn best(&self) -> Option<&PricedOffer<'a>> {
        self.items.first()
    }
}

/// Why a query could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryError {
    /// One or more fields have invalid values.
    #[error("invalid offer query: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<FieldError>),
    /// A GPU name did not resolve.
    #[error("gpus[{index}]: {source}")]
    Gpu {
        /// Position in the list of names.
        index: usize,
        /// The lookup failure.
        source: GpuLookupError,
    },
}

/// Filters and ranks `catalog`'s offers for `query`. Errors only for an invalid query; an
/// empty result is `Ok` with [`QueryResult::empty`] explaining it.
pub fn run<'a>(
    catalog: &'a crate::catalog::Catalog,
    query: &OfferQuery,
) -> Result<QueryResult<'a>, QueryError> {
    run_with(catalog, query, None)
}

/// [`run`] with availability: when the query has `prefer_available` and `scores` are
/// given, items rank by [`availability::tier`] first and by price within a tier; the
/// preferred item (hysteresis) stays first only within the best tier. Without scores,
/// the ranking is [`run`]'s.
pub fn run_with<'a>(
    catalog: &'a crate::catalog::Catalog,
    query: &OfferQuery,
    scores: Option<&Scores>,
) -> Result<QueryResult<'a>, QueryError> {
    validate(query)?;
    let matcher = filter::Matcher::new(query)?;
    let mut items = matcher.items(catalog.offers());
    rank::sort(&mut items);
    let mut best_tier = items.len();
    if let (Some(min), Some(scores)) = (query.prefer_available, scores) {
        best_tier =
            availability::rank_by_tier(&mut items, |i| availability::tier(scores.of_item(i), min));
    }
    let hysteresis = query
        .prefer
        .as_ref()
        .map(|p| rank::apply_preference(&mut items[..best_tier], p, query.min_saving_percent));
    rank::dedupe_on_demand_zones(&mut items);
    let matched = items.len();
    let empty = items
        .is_empty()
        .then(|| explain::explain(&matcher, catalog.offers()));
    if let Some(limit) = query.limit {
        items.truncate(limit);
    }
    Ok(QueryResult {
        items,
        matched,
        empty,
        hysteresis,
    })
}

#[cfg(test)]
mod tests;
