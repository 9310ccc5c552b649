//! Explaining an empty result: which filter removed the last candidates, and the nearest
//! offers that almost matched.

use std::fmt;

use super::PricedOffer;
use super::filter::{Filter, Matcher};
use super::rank::ranking_order;
use crate::offer::Offer;

/// How many near offers an explanation lists.
const NEAREST: usize = 5;

/// Why a query matched nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct EmptyResult<'a> {
    /// The filter that removed the last candidates (`None`: the catalog is empty).
    pub filter: Option<Filter>,
    /// How many candidates were left before that filter: offers, or priced items for the
    /// `capacity`-and-later filters.
    pub matched_before: usize,
    /// Whether `matched_before` counts the whole catalog (the first filter removed all).
    pub first_filter: bool,
    /// The nearest items: cheapest first among those failing the fewest filters (same GPU
    /// model where any offer has it).
    pub nearest: Vec<NearOffer<'a>>,
}

/// An item that failed some filters.
#[derive(Debug, Clone, PartialEq)]
pub struct NearOffer<'a> {
    /// The item, priced with whichever capacity it has.
    pub item: PricedOffer<'a>,
    /// The filters it fails, in filter order.
    pub failed: Vec<Filter>,
}

impl fmt::Display for NearOffer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed: Vec<String> = self.failed.iter().map(|x| format!("`{x}`")).collect();
        write!(
            f,
            "{} {}x{} ${:.4}/GPU-hour (fails {})",
            self.item.key(),
            self.item.offer.gpu_count.unwrap_or(0.0),
            self.item.offer.gpu.name,
            self.item.price_per_gpu_hour,
            failed.join(", ")
        )
    }
}

impl fmt::Display for EmptyResult<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(filter) = &self.filter else {
            return f.write_str("the catalog has no offers");
        };
        let n = self.matched_before;
        let what = if self.first_filter {
            format!("the catalog has {n} offers")
        } else {
            let unit = if filter.on_items() && !matches!(filter, Filter::Capacity(_)) {
                "priced candidates"
            } else {
                "candidates"
            };
            format!("{n} {unit} matched the earlier filters")
        };
        write!(f, "no offer left after filter `{filter}`: {what}")?;
        if !self.nearest.is_empty() {
            let near: Vec<String> = self.nearest.iter().map(ToString::to_string).collect();
            write!(f, "; nearest: {}", near.join("; "))?;
        }
        Ok(())
    }
}

/// Applies `matcher`'s filters one at a time to `offers` and reports where nothing was left.
pub(super) fn explain<'a>(matcher: &Matcher, offers: &'a [Offer]) -> EmptyResult<'a> {
    let nothing = EmptyResult {
        filter: None,
        matched_before: 0,
        first_filter: false,
        nearest: Vec::new(),
    };
    if offers.is_empty() {
        return nothing;
    }
    let filters: Vec<&Filter> = matcher.filters().collect();
    let mut left: Vec<&'a Offer> = offers.iter().collect();
    let mut items: Option<Vec<PricedOffer<'a>>> = None;
    let mut blocking = None;
    for (i, filter) in filters.iter().enumerate() {
        let before;
        let now_empty = match (&mut items, filter.on_items()) {
            (None, false) => {
                before = left.len();
                left.retain(|o| matcher.offer_passes(i, o));
                left.is_empty()
            }
            (None, true) => {
                // the first item filter (capacity): price what is left
                before = left.len();
                let priced: Vec<PricedOffer<'a>> =
                    left.iter().flat_map(|o| matcher.priced(o)).collect();
                let empty = priced.is_empty();
                items = Some(priced);
                empty
            }
            (Some(list), _) => {
                before = list.len();
                list.retain(|item| matcher.item_passes(i, item));
                list.is_empty()
            }
        };
        if now_empty {
            blocking = Some((i, before));
            break;
        }
    }
    let Some((step, before)) = blocking else {
        return nothing;
    };
    EmptyResult {
        filter: Some(filters[step].clone()),
        matched_before: before,
        first_filter: step == 0,
        nearest: nearest(matcher, &filters, step, offers),
    }
}

/// The nearest items: of the queried GPU models (or of any model, when no offer has them),
/// priced with either capacity, fewest failed filters first, then by ranking.
fn nearest<'a>(
    matcher: &Matcher,
    filters: &[&Filter],
    blocking: usize,
    offers: &'a [Offer],
) -> Vec<NearOffer<'a>> {
    let gpu_step = filters.iter().position(|f| matches!(f, Filter::Gpus(_)));
    let same_model = |o: &Offer| match gpu_step {
        Some(i) if i != blocking => matcher.offer_passes(i, o),
        _ => true,
    };
    let mut near: Vec<NearOffer<'a>> = offers
        .iter()
        .filter(|o| same_model(o))
        .flat_map(|o| [false, true].map(|spot| PricedOffer::new(o, spot)))
        .flatten()
        .map(|item| NearOffer {
            failed: (0..filters.len())
                .filter(|i| !matcher.item_passes(*i, &item))
                .map(|i| filters[i].clone())
                .collect(),
            item,
        })
        .collect();
    near.sort_by(|a, b| {
        a.failed
            .len()
            .cmp(&b.failed.len())
            .then_with(|| ranking_order(&a.item, &b.item))
    });
    near.truncate(NEAREST);
    near
}
