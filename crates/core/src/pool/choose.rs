//! Choosing a pool's instance types from a catalog, cheapest first, with the rows that
//! priced them.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::freshness::Freshness;
use crate::gpu::GpuModel;
use crate::offer::{Cloud, Offer, PriceOrigin};

/// The cheapest catalog row for one instance type and capacity type.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceRow {
    /// USD per instance-hour.
    pub usd_per_hour: f64,
    /// The zone of the row (spot prices are per zone; on-demand usually regional).
    pub zone: Option<String>,
    /// Source and date of this price.
    pub origin: PriceOrigin,
}

impl PriceRow {
    /// Takes the price `spot` (or on-demand) from `o`, if it has one that `fresh` allows.
    fn from_offer(o: &Offer, spot: bool, fresh: &Freshness) -> Option<Self> {
        let origin = o.origin(spot);
        if !fresh.allows(origin) {
            return None;
        }
        o.price(spot).map(|usd_per_hour| PriceRow {
            usd_per_hour,
            zone: o.zone.clone(),
            origin: origin.clone(),
        })
    }
}

/// One instance type of a pool, with its cheapest on-demand and spot rows in the region.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenType {
    /// The instance type.
    pub instance_type: String,
    /// Cheapest on-demand row, if the catalog prices it.
    pub on_demand: Option<PriceRow>,
    /// Cheapest spot row (over zones), if the catalog prices it.
    pub spot: Option<PriceRow>,
}

impl ChosenType {
    /// The cheapest row of `spot` or on-demand capacity.
    pub fn price(&self, spot: bool) -> Option<&PriceRow> {
        if spot {
            self.spot.as_ref()
        } else {
            self.on_demand.as_ref()
        }
    }

    /// Folds `o` in, keeping the cheapest row per capacity type (the first on ties) among
    /// the prices `fresh` allows.
    fn absorb(&mut self, o: &Offer, fresh: &Freshness) {
        for spot in [false, true] {
            let Some(row) = PriceRow::from_offer(o, spot, fresh) else {
                continue;
            };
            let slot = if spot {
                &mut self.spot
            } else {
                &mut self.on_demand
            };
            if slot
                .as_ref()
                .is_none_or(|r| row.usd_per_hour < r.usd_per_hour)
            {
                *slot = Some(row);
            }
        }
    }
}

/// What a pool needs of an instance type.
#[derive(Debug, Clone, Copy)]
pub struct TypeQuery<'a> {
    /// The cloud.
    pub cloud: Cloud,
    /// The region.
    pub region: &'a str,
    /// The GPU model.
    pub gpu: &'static GpuModel,
    /// GPUs per instance.
    pub gpu_count: u32,
    /// Rank by spot price (`true`) or on-demand.
    pub spot: bool,
    /// Which prices count.
    pub freshness: Freshness,
}

impl TypeQuery<'_> {
    /// Whether `o` is in the place and has exactly the GPUs asked for.
    pub fn matches(&self, o: &Offer) -> bool {
        o.cloud == self.cloud
            && o.region == self.region
            && o.gpu.name == self.gpu.name
            && o.gpu_count == Some(f64::from(self.gpu_count))
    }
}

/// Up to `limit` instance types for `q`, cheapest first: by spot price when `q.spot`
/// (types without one after, by on-demand), else by on-demand; unpriced types last; ties by name.
pub fn choose(catalog: &Catalog, q: &TypeQuery<'_>, limit: usize) -> Vec<ChosenType> {
    let mut by_type: BTreeMap<&str, ChosenType> = BTreeMap::new();
    for o in catalog.offers().iter().filter(|o| q.matches(o)) {
        by_type
            .entry(o.instance_type.as_str())
            .or_insert_with(|| unpriced(&o.instance_type))
            .absorb(o, &q.freshness);
    }
    let mut types: Vec<ChosenType> = by_type.into_values().collect();
    types.sort_by(|a, b| rank(a, b, q.spot));
    types.truncate(limit);
    types
}

/// Prices the instance types a user pinned, in their order, with the prices `fresh`
/// allows (the same rules as a choice, so that plan and apply price alike); a type the
/// catalog does not have in `region` comes back with no prices.
pub fn price_types(
    catalog: &Catalog,
    cloud: Cloud,
    region: &str,
    types: &[String],
    fresh: &Freshness,
) -> Vec<ChosenType> {
    types
        .iter()
        .map(|t| {
            let mut c = unpriced(t);
            catalog
                .offers()
                .iter()
                .filter(|o| o.cloud == cloud && o.region == region && o.instance_type == *t)
                .for_each(|o| c.absorb(o, fresh));
            c
        })
        .collect()
}

/// `types` ordered by on-demand price (unpriced last, stable): the priority an on-demand
/// group launches them in.
pub fn by_on_demand_price(types: &[ChosenType]) -> Vec<ChosenType> {
    let mut v = types.to_vec();
    v.sort_by(|a, b| cmp_price(a.price(false), b.price(false)));
    v
}

/// `types` ordered by spot price (unpriced last, stable): on a cloud with one machine
/// type per group, the spot group runs the first, the one the cost preview prices spot at.
pub fn by_spot_price(types: &[ChosenType]) -> Vec<ChosenType> {
    let mut v = types.to_vec();
    v.sort_by(|a, b| cmp_price(a.price(true), b.price(true)));
    v
}

/// A type with no rows yet.
fn unpriced(instance_type: &str) -> ChosenType {
    ChosenType {
        instance_type: instance_type.to_string(),
        on_demand: None,
        spot: None,
    }
}

/// The choice order described at [`choose`].
fn rank(a: &ChosenType, b: &ChosenType, spot: bool) -> Ordering {
    let primary = if spot {
        cmp_price(a.price(true), b.price(true))
    } else {
        Ordering::Equal
    };
    primary
        .then_with(|| cmp_price(a.price(false), b.price(false)))
        .then_with(|| a.instance_type.cmp(&b.instance_type))
}

/// Cheaper first; a missing price after any price.
fn cmp_price(a: Option<&PriceRow>, b: Option<&PriceRow>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.usd_per_hour.total_cmp(&b.usd_per_hour),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}
