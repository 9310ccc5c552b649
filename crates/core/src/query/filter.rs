//! The filters of an [`OfferQuery`], in the fixed order they apply, and matching offers and
//! priced items against them.

use std::fmt;

use glob::{MatchOptions, Pattern};

use super::validate::compile_globs;
use super::{Capacity, GpuCount, OfferQuery, PricedOffer, QueryError};
use crate::freshness::Freshness;
use crate::gpu::GpuModel;
use crate::offer::{Cloud, Offer};

/// Tolerance for comparing GPU counts (the data rounds 1/6 to 0.167).
const COUNT_EPSILON: f64 = 1e-9;

/// Case-insensitive glob matching, `*` crossing any character.
const GLOB: MatchOptions = MatchOptions {
    case_sensitive: false,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

/// One active filter of a query, as a person would write it. They apply in the order of
/// this enum's variants; the GPU-count and capacity filters always apply.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `gpus = [...]`: the offer's model is one of these.
    Gpus(Vec<&'static GpuModel>),
    /// `gpu_count = n` / `gpu_count >= n`; `None`: the count is known (needed to price per GPU).
    GpuCount(Option<GpuCount>),
    /// `min_vram_gib = n`.
    MinVram(f64),
    /// `clouds = [...]`.
    Clouds(Vec<Cloud>),
    /// `regions = [...]` (globs).
    Regions(Vec<String>),
    /// `zones = [...]` (globs).
    Zones(Vec<String>),
    /// `exclude_instance_types = [...]` (globs).
    ExcludeInstanceTypes(Vec<String>),
    /// `min_vcpus = n`.
    MinVcpus(f64),
    /// `min_memory_gib = n`.
    MinMemory(f64),
    /// `capacity = ...`: the offer has a price for this capacity type.
    Capacity(Capacity),
    /// `max_price_per_gpu_hour = n`.
    MaxPricePerGpuHour(f64),
    /// `max_price_age = 365d`: the item's price is dated and no older.
    MaxPriceAge(Freshness),
    /// `include_stale_prices = false`: the item's price is not on the stale list.
    NotStale,
}

impl Filter {
    /// The [`OfferQuery`] field this filter comes from.
    pub fn field(&self) -> &'static str {
        match self {
            Filter::Gpus(_) => "gpus",
            Filter::GpuCount(_) => "gpu_count",
            Filter::MinVram(_) => "min_vram_gib",
            Filter::Clouds(_) => "clouds",
            Filter::Regions(_) => "regions",
            Filter::Zones(_) => "zones",
            Filter::ExcludeInstanceTypes(_) => "exclude_instance_types",
            Filter::MinVcpus(_) => "min_vcpus",
            Filter::MinMemory(_) => "min_memory_gib",
            Filter::Capacity(_) => "capacity",
            Filter::MaxPricePerGpuHour(_) => "max_price_per_gpu_hour",
            Filter::MaxPriceAge(_) => "max_price_age",
            Filter::NotStale => "include_stale_prices",
        }
    }

    /// Whether the filter looks at priced items rather than offers.
    pub fn on_items(&self) -> bool {
        matches!(
            self,
            Filter::Capacity(_)
                | Filter::MaxPricePerGpuHour(_)
                | Filter::MaxPriceAge(_)
                | Filter::NotStale
        )
    }
}

/// `["a", "b"]` with quotes.
fn quoted<T: fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", parts.join(", "))
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = self.field();
        match self {
            Filter::Gpus(g) => write!(f, "{field} = {}", quoted(g)),
            Filter::GpuCount(Some(GpuCount::Exact(n))) => write!(f, "{field} = {n}"),
            Filter::GpuCount(Some(GpuCount::AtLeast(n))) => write!(f, "{field} >= {n}"),
            Filter::GpuCount(None) => write!(f, "{field} known"),
            Filter::MinVram(n)
            | Filter::MinVcpus(n)
            | Filter::MinMemory(n)
            | Filter::MaxPricePerGpuHour(n) => write!(f, "{field} = {n}"),
            Filter::Clouds(c) => write!(f, "{field} = {}", quoted(c)),
            Filter::Regions(g) | Filter::Zones(g) | Filter::ExcludeInstanceTypes(g) => {
                write!(f, "{field} = {}", quoted(g))
            }
            Filter::Capacity(c) => write!(f, "{field} = {c}"),
            Filter::MaxPriceAge(fresh) => match fresh.max_age {
                Some(age) => write!(f, "{field} = {age}"),
                None => write!(f, "{field} unset"),
            },
            Filter::NotStale => write!(f, "{field} = false"),
        }
    }
}

/// A query's filters, compiled, in order.
#[derive(Debug)]
pub(super) struct Matcher {
    /// (what the user wrote, compiled patterns where it has globs)
    steps: Vec<(Filter, Vec<Pattern>)>,
    capacity: Capacity,
}

impl Matcher {
    /// Compiles the active filters of `q` (globs are checked by [`super::validate`] too).
    pub(super) fn new(q: &OfferQuery) -> Result<Self, QueryError> {
        let globs = |field: &'static str, g: &[String]| {
            compile_globs(field, g).map_err(QueryError::Invalid)
        };
        let mut steps: Vec<(Filter, Vec<Pattern>)> = Vec::new();
        if !q.gpus.is_empty() {
            steps.push((Filter::Gpus(q.gpus.clone()), vec![]));
        }
        steps.push((Filter::GpuCount(q.gpu_count), vec![]));
        if let Some(v) = q.min_vram_gib {
            steps.push((Filter::MinVram(v), vec![]));
        }
        if !q.clouds.is_empty() {
            steps.push((Filter::Clouds(q.clouds.clone()), vec![]));
        }
        if !q.regions.is_empty() {
            let p = globs("regions", &q.regions)?;
            steps.push((Filter::Regions(q.regions.clone()), p));
        }
        if !q.zones.is_empty() {
            let p = globs("zones", &q.zones)?;
            steps.push((Filter::Zones(q.zones.clone()), p));
        }
        if !q.exclude_instance_types.is_empty() {
            let p = globs("exclude_instance_types", &q.exclude_instance_types)?;
            steps.push((
                Filter::ExcludeInstanceTypes(q.exclude_instance_types.clone()),
                p,
            ));
        }
        if let Some(v) = q.min_vcpus {
            steps.push((Filter::MinVcpus(v), vec![]));
        }
        if let Some(v) = q.min_memory_gib {
            steps.push((Filter::MinMemory(v), vec![]));
        }
        steps.push((Filter::Capacity(q.capacity), vec![]));
        if let Some(v) = q.max_price_per_gpu_hour {
            steps.push((Filter::MaxPricePerGpuHour(v), vec![]));
        }
        if q.freshness.max_age.is_some() {
            steps.push((Filter::MaxPriceAge(q.freshness), vec![]));
        }
        if !q.freshness.include_stale {
            steps.push((Filter::NotStale, vec![]));
        }
        Ok(Matcher {
            steps,
            capacity: q.capacity,
        })
    }

    /// The active filters, in the order they apply.
    pub(super) fn filters(&self) -> impl Iterator<Item = &Filter> {
        self.steps.iter().map(|(f, _)| f)
    }

    /// How many steps there are.
    pub(super) fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether `offer` passes step `i` (item steps pass every offer).
    pub(super) fn offer_passes(&self, i: usize, offer: &Offer) -> bool {
        let (filter, patterns) = &self.steps[i];
        let any = |s: &str| patterns.iter().any(|p| p.matches_with(s, GLOB));
        let at_least = |v: Option<f64>, min: f64| v.is_some_and(|v| v >= min);
        match filter {
            Filter::Gpus(g) => g.iter().any(|m| m.name == offer.gpu.name),
            Filter::GpuCount(want) => match (offer.gpu_count, want) {
                (None, _) => false,
                (Some(c), None) => c > 0.0,
                (Some(c), Some(GpuCount::Exact(n))) => (c - n).abs() < COUNT_EPSILON,
                (Some(c), Some(GpuCount::AtLeast(n))) => c >= n - COUNT_EPSILON,
            },
            Filter::MinVram(min) => at_least(offer.vram_per_gpu_gib(), *min),
            Filter::Clouds(c) => c.contains(&offer.cloud),
            Filter::Regions(words) => {
                any(&offer.region)
                    || crate::region_group::in_any_group(words, offer.cloud, &offer.region)
            }
            Filter::Zones(_) => offer.zone.as_deref().is_some_and(any),
            Filter::ExcludeInstanceTypes(_) => !any(&offer.instance_type),
            Filter::MinVcpus(min) => at_least(offer.vcpus, *min),
            Filter::MinMemory(min) => at_least(offer.memory_gib, *min),
            Filter::Capacity(_)
            | Filter::MaxPricePerGpuHour(_)
            | Filter::MaxPriceAge(_)
            | Filter::NotStale => true,
        }
    }

    /// Whether `item` passes step `i` (offer steps look at the item's offer).
    pub(super) fn item_passes(&self, i: usize, item: &PricedOffer<'_>) -> bool {
        match &self.steps[i].0 {
            Filter::Capacity(c) => c.allows(item.spot),
            Filter::MaxPricePerGpuHour(max) => item.price_per_gpu_hour <= *max,
            // The age alone: the stale list is the next step's, so that an empty answer
            // names the filter that emptied it.
            Filter::MaxPriceAge(fresh) => fresh
                .including_stale(true)
                .allows(item.offer.origin(item.spot)),
            Filter::NotStale => item.offer.origin(item.spot).stale.is_none(),
            _ => self.offer_passes(i, item.offer),
        }
    }

    /// The items of `offer` its capacity filter can price: on-demand first, then spot.
    pub(super) fn priced<'a>(&self, offer: &'a Offer) -> impl Iterator<Item = PricedOffer<'a>> {
        let capacity = self.capacity;
        [false, true]
            .into_iter()
            .filter(move |spot| capacity.allows(*spot))
            .filter_map(move |spot| PricedOffer::new(offer, spot))
    }

    /// Every item of `offers` that passes every step, unranked.
    pub(super) fn items<'a>(&self, offers: &'a [Offer]) -> Vec<PricedOffer<'a>> {
        let offer_steps: Vec<usize> = (0..self.len())
            .filter(|i| !self.steps[*i].0.on_items())
            .collect();
        let item_steps: Vec<usize> = (0..self.len())
            .filter(|i| self.steps[*i].0.on_items())
            .collect();
        offers
            .iter()
            .filter(|o| offer_steps.iter().all(|i| self.offer_passes(*i, o)))
            .flat_map(|o| self.priced(o))
            .filter(|item| item_steps.iter().all(|i| self.item_passes(*i, item)))
            .collect()
    }
}
