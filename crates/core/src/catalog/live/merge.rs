//! Applying live quotes to a catalog's offers.
//!
//! - A quote without a zone sets its price on every row of (cloud, region, instance type),
//!   whatever the row's zone (on-demand prices are regional).
//! - Quotes with zones (AWS spot, per availability zone) replace the zoned picture of
//!   their (region, instance type): rows of a quoted zone are updated in place; a quoted
//!   zone without a row gets one, copied from the group's first row (specs and on-demand
//!   price) with the quoted spot price; the group's other rows (unquoted zones, the
//!   zone-less row) are dropped, as the live answer lists every zone that sells the type.
//!   Groups without any row in the catalog are ignored: live sources update, never add
//!   instance types.
//! - Every updated price gets its own origin: the live source and its fetch date. A price
//!   not refreshed keeps the snapshot's origin (refreshing one price never re-dates
//!   another). The row's `source` names the live source(s) and keeps the snapshot's text
//!   after `base:`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::offer::{Offer, PriceOrigin};

use super::quote::PriceKind;
use super::report::SourceId;
use super::scope::ScopeResult;
use super::time::date_of;

/// An offer plus which of its prices came from where.
#[derive(Debug, Clone)]
pub struct Row {
    /// The offer.
    pub offer: Offer,
    /// Live source and fetch time of the on-demand price, if live.
    pub on_demand: Option<(SourceId, u64)>,
    /// Live source and fetch time of the spot price, if live.
    pub spot: Option<(SourceId, u64)>,
}

impl Row {
    /// A row of the snapshot, nothing live yet.
    pub fn new(offer: Offer) -> Self {
        Row {
            offer,
            on_demand: None,
            spot: None,
        }
    }

    fn set(&mut self, kind: PriceKind, price: f64, source: SourceId, at: u64) {
        let date = date_of(at);
        let origin = PriceOrigin::new(format!("{source} (live, fetched {date})"), Some(date));
        match kind {
            PriceKind::OnDemand => {
                self.offer.on_demand_usd_per_hour = Some(price);
                self.offer.on_demand_origin = origin;
                self.on_demand = Some((source, at));
            }
            PriceKind::Spot => {
                self.offer.spot_usd_per_hour = Some(price);
                self.offer.spot_origin = origin;
                self.spot = Some((source, at));
            }
        }
    }

    /// The offer with `source` naming its live prices (each price's origin is already set).
    pub fn finish(mut self) -> Offer {
        let live: Vec<(&str, SourceId, u64)> = [("on-demand", self.on_demand), ("spot", self.spot)]
            .into_iter()
            .filter_map(|(what, l)| l.map(|(s, at)| (what, s, at)))
            .collect();
        if !live.is_empty() {
            let mut parts: Vec<String> = live
                .iter()
                .map(|(what, s, at)| format!("{what}: {s} (live, fetched {})", date_of(*at)))
                .collect();
            if !self.offer.source.is_empty() {
                parts.push(format!("base: {}", self.offer.source));
            }
            self.offer.source = parts.join("; ");
        }
        self.offer
    }
}

/// (region, instance type).
type Key = (String, String);
/// Zone → its (kind, price, fetched at) quotes.
type ZoneQuotes = BTreeMap<String, Vec<(PriceKind, f64, u64)>>;

/// Applies `scopes` of `source` to the rows of `source.cloud()`; returns rows updated.
pub fn apply(rows: &mut Vec<Row>, source: SourceId, scopes: &[ScopeResult]) -> usize {
    let cloud = source.cloud();
    // Later scopes win over earlier ones for the same key.
    let mut regional: HashMap<(Key, PriceKind), (f64, u64)> = HashMap::new();
    let mut zoned: BTreeMap<Key, ZoneQuotes> = BTreeMap::new();
    for s in scopes {
        for q in &s.fetched.quotes {
            let key = (q.region.clone(), q.instance_type.clone());
            match &q.zone {
                None => {
                    regional.insert((key, q.kind), (q.usd_per_hour, s.fetched_at));
                }
                Some(z) => zoned
                    .entry(key)
                    .or_default()
                    .entry(z.clone())
                    .or_default()
                    .push((q.kind, q.usd_per_hour, s.fetched_at)),
            }
        }
    }

    let mut updated = 0;
    if !regional.is_empty() {
        for row in rows.iter_mut().filter(|r| r.offer.cloud == cloud) {
            let key = (row.offer.region.clone(), row.offer.instance_type.clone());
            let mut hit = false;
            for kind in [PriceKind::OnDemand, PriceKind::Spot] {
                if let Some(&(price, at)) = regional.get(&(key.clone(), kind)) {
                    row.set(kind, price, source, at);
                    hit = true;
                }
            }
            updated += usize::from(hit);
        }
    }
    if zoned.is_empty() {
        return updated;
    }

    let mut out = Vec::with_capacity(rows.len());
    let mut done: BTreeSet<Key> = BTreeSet::new();
    let mut groups: HashMap<Key, Vec<Row>> = HashMap::new();
    for row in rows.iter().filter(|r| r.offer.cloud == cloud) {
        let key = (row.offer.region.clone(), row.offer.instance_type.clone());
        if zoned.contains_key(&key) {
            groups.entry(key).or_default().push(row.clone());
        }
    }
    for row in rows.drain(..) {
        let key = (row.offer.region.clone(), row.offer.instance_type.clone());
        if row.offer.cloud != cloud || !zoned.contains_key(&key) {
            out.push(row);
            continue;
        }
        if !done.insert(key.clone()) {
            continue;
        }
        let group = groups.remove(&key).unwrap_or_default();
        let replaced = replace_zones(&group, &zoned[&key], source);
        updated += replaced.len();
        out.extend(replaced);
    }
    *rows = out;
    updated
}

/// The rows of one (region, type) group after its per-zone quotes.
fn replace_zones(group: &[Row], zones: &ZoneQuotes, source: SourceId) -> Vec<Row> {
    let Some(template) = group.first() else {
        return Vec::new();
    };
    zones
        .iter()
        .map(|(zone, quotes)| {
            let mut row = match group.iter().find(|r| r.offer.zone.as_deref() == Some(zone)) {
                Some(existing) => existing.clone(),
                None => {
                    let mut fresh = template.clone();
                    fresh.offer.zone = Some(zone.clone());
                    fresh.offer.spot_usd_per_hour = None;
                    fresh.offer.spot_origin = PriceOrigin::default();
                    fresh.spot = None;
                    fresh
                }
            };
            for &(kind, price, at) in quotes {
                row.set(kind, price, source, at);
            }
            row
        })
        .collect()
}
