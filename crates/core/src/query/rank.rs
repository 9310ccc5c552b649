//! Ranking priced items, and hysteresis towards a preferred item.

use std::cmp::Ordering;

use super::PricedOffer;
use crate::offer::OfferKey;

/// The ranking order: price per GPU-hour, then price per hour, then cloud, region, zone
/// (none first), instance type, on-demand before spot. Total: no two items compare equal
/// unless they are the same item.
pub fn ranking_order(a: &PricedOffer<'_>, b: &PricedOffer<'_>) -> Ordering {
    a.price_per_gpu_hour
        .total_cmp(&b.price_per_gpu_hour)
        .then(a.price_per_hour.total_cmp(&b.price_per_hour))
        .then(a.offer.cloud.cmp(&b.offer.cloud))
        .then_with(|| a.offer.region.cmp(&b.offer.region))
        .then_with(|| a.offer.zone.cmp(&b.offer.zone))
        .then_with(|| a.offer.instance_type.cmp(&b.offer.instance_type))
        .then(a.spot.cmp(&b.spot))
}

/// Sorts `items` best first.
pub(super) fn sort(items: &mut [PricedOffer<'_>]) {
    items.sort_by(ranking_order);
}

/// Keeps one on-demand item per (cloud, region, instance type): on-demand prices are
/// regional, and catalog rows that are split per zone (for their zonal spot prices) would
/// otherwise list the same on-demand capacity once per zone. The first item of each key
/// (the best ranked, or the preferred one) stays. Spot items are per zone and all stay.
pub(super) fn dedupe_on_demand_zones(items: &mut Vec<PricedOffer<'_>>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| {
        i.spot
            || seen.insert((
                i.offer.cloud,
                i.offer.region.clone(),
                i.offer.instance_type.clone(),
            ))
    });
}

/// What a query's `prefer` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Hysteresis {
    /// The preferred item's key.
    pub preferred: OfferKey,
    /// Whether it passed the filters.
    pub found: bool,
    /// Whether it was ranked first (because the best was not cheaper enough, or it is the best).
    pub kept: bool,
    /// How much cheaper per GPU-hour the best other item is, in percent of the preferred
    /// item's price (0 when the preferred is the best or was not found).
    pub saving_percent: f64,
}

/// Moves the preferred item first unless the cheapest is cheaper per GPU-hour by at least
/// `min_saving_percent` (and by more than nothing). `items` must be ranked.
pub(super) fn apply_preference(
    items: &mut [PricedOffer<'_>],
    preferred: &OfferKey,
    min_saving_percent: f64,
) -> Hysteresis {
    let mut out = Hysteresis {
        preferred: preferred.clone(),
        found: false,
        kept: false,
        saving_percent: 0.0,
    };
    let Some(idx) = items.iter().position(|i| i.has_key(preferred)) else {
        return out;
    };
    out.found = true;
    let pref = items[idx].price_per_gpu_hour;
    let best = items[0].price_per_gpu_hour;
    out.saving_percent = if pref > 0.0 {
        (pref - best) / pref * 100.0
    } else {
        0.0
    };
    out.kept = idx == 0 || out.saving_percent <= 0.0 || out.saving_percent < min_saving_percent;
    if out.kept && idx > 0 {
        items[..=idx].rotate_right(1);
    }
    out
}
