//! Pricing a pool from its instance types' catalog rows: the rows chosen per capacity
//! type, summed as [`super::lines`] of (offer, count, capacity).

use super::lines::{PriceLine, PricedAs, total};
use crate::model::CapacityType;
use crate::offer::{Cloud, PriceOrigin};
use crate::pool::{ChosenType, NodeCounts, NodePoolSpec, PriceRow};

use super::money::{format_delta, format_usd};

/// The cost of a pool, from catalog prices.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPreview {
    /// The pool's name.
    pub pool: String,
    /// Its cloud.
    pub cloud: Cloud,
    /// Its region.
    pub region: String,
    /// Node counts by capacity type at min and max.
    pub nodes: NodeCounts,
    /// Price of on-demand nodes (cheapest on-demand type), when any are needed.
    pub on_demand: Option<PricedAs>,
    /// Price of spot nodes (cheapest spot type, or on-demand as upper bound), when any are needed.
    pub spot: Option<PricedAs>,
    /// Price of the on-demand floor's nodes when they run on a commitment (`reservation`):
    /// its price per GPU-hour × GPUs per node. The rest of the on-demand nodes, if any,
    /// stay at `on_demand`.
    pub reserved: Option<PricedAs>,
    /// USD per hour at `min_nodes`.
    pub hourly_usd: f64,
    /// USD per hour at `max_nodes`.
    pub hourly_usd_max: f64,
    /// USD per month at `min_nodes` (`hourly_usd` × 730).
    pub monthly_usd: f64,
    /// USD per month at `max_nodes`.
    pub monthly_usd_max: f64,
    /// `monthly_usd` minus the prior's (all of it when there is none: a new pool).
    pub monthly_delta_usd: f64,
    /// `monthly_usd_max` minus the prior's.
    pub monthly_delta_usd_max: f64,
    /// Spot capacity is priced at on-demand because the catalog has no spot price: an upper bound.
    pub spot_upper_bound: bool,
    /// Caveats for people, one sentence each.
    pub notes: Vec<String>,
    /// The instance type named in the summary, and how many others the pool may use.
    lead_type: (String, usize),
}

/// What a pool cost before the change, as kept in state: the deltas are against it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PriorCost {
    /// USD per month at `min_nodes` before.
    pub monthly_usd: f64,
    /// USD per month at `max_nodes` before.
    pub monthly_usd_max: f64,
}

impl From<&CostPreview> for PriorCost {
    fn from(p: &CostPreview) -> Self {
        PriorCost {
            monthly_usd: p.monthly_usd,
            monthly_usd_max: p.monthly_usd_max,
        }
    }
}

/// Why a pool could not be priced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    /// The pool needs capacity the catalog has no price for.
    #[error(
        "cannot price pool `{pool}`: the catalog has no {capacity} price for {} in {region} that counts (the provider's `max_price_age` leaves out older and undated prices; prices on the stale list count only with `include_stale_prices = true`)",
        .instance_types.join(", ")
    )]
    Unpriced {
        /// The pool.
        pool: String,
        /// `on-demand` or `spot`.
        capacity: &'static str,
        /// The pool's instance types.
        instance_types: Vec<String>,
        /// The region.
        region: String,
    },
}

/// Prices `spec` over `types` (from [`crate::pool::instance_types`]), compared with `prior`.
///
/// On-demand nodes cost the cheapest on-demand row; spot nodes the cheapest spot row over
/// types and zones, or, when no type has one, the cheapest on-demand row (flagged upper bound).
pub fn preview(
    spec: &NodePoolSpec,
    types: &[ChosenType],
    prior: Option<PriorCost>,
) -> Result<CostPreview, CostError> {
    let nodes = spec.node_counts();
    let unpriced = |capacity| CostError::Unpriced {
        pool: spec.name.clone(),
        capacity,
        instance_types: types.iter().map(|t| t.instance_type.clone()).collect(),
        region: spec.region.clone(),
    };
    let cheapest_od = cheapest(types, false);
    let mut notes = Vec::new();
    let on_demand = if nodes.on_demand_max > 0 {
        Some(cheapest_od.clone().ok_or_else(|| unpriced("on-demand"))?)
    } else {
        None
    };
    let mut spot_upper_bound = false;
    let spot = if nodes.spot_max > 0 {
        match cheapest(types, true) {
            Some(p) => {
                notes.push(format!(
                    "spot priced at the cheapest zone's price ({} in {}); other zones may cost more",
                    p.instance_type,
                    p.row.zone.as_deref().unwrap_or(&spec.region)
                ));
                Some(p)
            }
            None => {
                spot_upper_bound = true;
                notes.push(
                    "the catalog has no spot price for these instance types; spot capacity is priced \
                     at on-demand, an upper bound"
                        .to_string(),
                );
                Some(
                    cheapest_od
                        .clone()
                        .ok_or_else(|| unpriced("spot or on-demand"))?,
                )
            }
        }
    } else {
        None
    };
    // The floor: on-demand nodes kept at `min_nodes` (what `reserved_nodes` counts).
    let floor = nodes.on_demand_min;
    let reserved = match &spec.reservation {
        Some(r) if floor > 0 => {
            let usd = r.usd_per_gpu_hour.ok_or_else(|| unpriced("reserved"))?;
            Some(PricedAs {
                instance_type: type_of(cheapest_od.as_ref(), types),
                spot_price: false,
                row: PriceRow {
                    usd_per_hour: usd * f64::from(spec.gpu_count),
                    zone: None,
                    origin: PriceOrigin::new(reserved_source(r), None),
                },
            })
        }
        _ => None,
    };
    // Reserved nodes leave the on-demand line: its counts are what remains above the floor.
    let taken = if reserved.is_some() { floor } else { 0 };
    let (od_min, od_max) = (
        nodes.on_demand_min.saturating_sub(taken),
        nodes.on_demand_max.saturating_sub(taken),
    );
    let on_demand = if od_max > 0 { on_demand } else { None };
    let line = |p: &Option<PricedAs>, min, max, capacity| {
        p.clone().map(|priced| PriceLine {
            priced,
            count_min: min,
            count_max: max,
            capacity,
        })
    };
    let lines: Vec<PriceLine> = [
        line(&reserved, taken, taken, CapacityType::Reserved),
        line(&on_demand, od_min, od_max, CapacityType::OnDemand),
        line(&spot, nodes.spot_min, nodes.spot_max, CapacityType::Spot),
    ]
    .into_iter()
    .flatten()
    .collect();
    let totals = total(&lines);
    let (hourly_usd, hourly_usd_max) = (totals.hourly_min, totals.hourly_max);
    let (monthly_usd, monthly_usd_max) = (totals.monthly_min(), totals.monthly_max());
    let lead = type_of(
        spot.as_ref().or(on_demand.as_ref()).or(reserved.as_ref()),
        types,
    );
    // Where a group runs one type (AKS, GKE), the pool runs at most the two priced ones.
    let one_type = crate::registry::node_group_rules(spec.cloud)
        .is_some_and(|t| t.machine_types_per_group == 1);
    let others = if one_type {
        let used: std::collections::BTreeSet<&str> = [&on_demand, &spot]
            .into_iter()
            .flatten()
            .map(|p| p.instance_type.as_str())
            .collect();
        used.len().saturating_sub(1)
    } else {
        types.len().saturating_sub(1)
    };
    Ok(CostPreview {
        pool: spec.name.clone(),
        cloud: spec.cloud,
        region: spec.region.clone(),
        nodes,
        on_demand,
        spot,
        reserved,
        hourly_usd,
        hourly_usd_max,
        monthly_usd,
        monthly_usd_max,
        monthly_delta_usd: monthly_usd - prior.map_or(0.0, |p| p.monthly_usd),
        monthly_delta_usd_max: monthly_usd_max - prior.map_or(0.0, |p| p.monthly_usd_max),
        spot_upper_bound,
        notes,
        lead_type: (lead, others),
    })
}

impl CostPreview {
    /// Nodes of the on-demand floor that run on the commitment (0 without one).
    pub fn reserved_nodes(&self) -> u32 {
        if self.reserved.is_some() {
            self.nodes.on_demand_min
        } else {
            0
        }
    }

    /// One line for a plan warning: `+$X/month, 1 on-demand + up to 3 spot p5.48xlarge in
    /// us-east-1` (the delta at `min_nodes`; the ceiling's monthly cost follows).
    pub fn summary(&self) -> String {
        let (what, bound) = self.what_and_bound();
        format!(
            "{}/month, {what} (up to {}/month at max_nodes){bound}",
            format_delta(self.monthly_delta_usd),
            format_usd(self.monthly_usd_max),
        )
    }

    /// The money of a plan warning's title: `+$40,179.20/month (up to $86,154.75)`, the
    /// change at `min_nodes` and the monthly cost at `max_nodes`.
    pub fn headline(&self) -> String {
        self.headline_with_change(self.monthly_delta_usd)
    }

    /// [`CostPreview::headline`] with another change than `monthly_delta_usd` (a
    /// replacement, priced as a new pool, changes the bill by its difference to the old).
    pub fn headline_with_change(&self, change_usd: f64) -> String {
        format!(
            "{}/month (up to {})",
            format_delta(change_usd),
            format_usd(self.monthly_usd_max)
        )
    }

    /// What the nodes are, without the money: `1 on-demand + up to 3 spot p5.48xlarge in
    /// us-east-1` (and the upper-bound caveat when spot is priced at on-demand).
    pub fn what(&self) -> String {
        let (what, bound) = self.what_and_bound();
        format!("{what}{bound}")
    }

    /// The node counts, type and region; and the upper-bound caveat (or nothing).
    fn what_and_bound(&self) -> (String, &'static str) {
        let n = &self.nodes;
        let mut parts = Vec::new();
        let taken = self.reserved_nodes();
        if taken > 0 {
            parts.push(format!("{taken} reserved"));
        }
        if n.on_demand_max > taken {
            parts.push(format!(
                "{} on-demand",
                range(
                    n.on_demand_min.saturating_sub(taken),
                    n.on_demand_max - taken
                )
            ));
        }
        if n.spot_max > 0 {
            parts.push(format!("{} spot", range(n.spot_min, n.spot_max)));
        }
        let (lead, others) = &self.lead_type;
        let more = match others {
            0 => String::new(),
            1 => " (+1 other type)".to_string(),
            k => format!(" (+{k} other types)"),
        };
        let bound = if self.spot_upper_bound {
            "; spot at on-demand price (upper bound)"
        } else {
            ""
        };
        (
            format!("{} {lead}{more} in {}", parts.join(" + "), self.region),
            bound,
        )
    }

    /// Every price the preview rests on in one line, with its date and age (`today` in days
    /// since 1970-01-01): `Prices: on-demand of 2026-07-20 (139 days old); spot UNDATED, at
    /// use1-az3 (the cheapest zone; others may cost more). …`. The sources are in the
    /// resource's `*_price_source` attributes.
    pub fn price_line(&self, today: i64) -> String {
        let mut parts = Vec::new();
        let mut undated = false;
        for (what, priced) in [
            ("reserved", &self.reserved),
            ("on-demand", &self.on_demand),
            ("spot", &self.spot),
        ] {
            let Some(p) = priced else { continue };
            let origin = &p.row.origin;
            let mut part = what.to_string();
            if what == "spot" && !p.spot_price {
                part.push_str(" at the on-demand price");
            }
            match (what, origin.age_days(today)) {
                ("reserved", _) => part.push_str(" at the commitment's price"),
                (_, Some(age)) => part.push_str(&format!(
                    " of {} ({age} days old)",
                    origin.as_of.as_deref().unwrap_or_default()
                )),
                (_, None) => {
                    undated = true;
                    part.push_str(" UNDATED");
                }
            }
            if let Some(why) = &origin.stale {
                part.push_str(&format!(" STALE ({why})"));
            }
            if what == "spot"
                && p.spot_price
                && let Some(zone) = &p.row.zone
            {
                part.push_str(&format!(
                    ", at {zone} (the cheapest zone; others may cost more)"
                ));
            }
            parts.push(part);
        }
        let mut line = format!("Prices: {}.", parts.join("; "));
        if undated {
            line.push_str(
                " An undated price may be years old: `live = true` refreshes it, `max_price_age` leaves it out.",
            );
        }
        line
    }
}

/// The instance type of `priced`, or else the first of `types` (empty when none).
fn type_of(priced: Option<&PricedAs>, types: &[ChosenType]) -> String {
    priced.map_or_else(
        || {
            types
                .first()
                .map(|t| t.instance_type.clone())
                .unwrap_or_default()
        },
        |p| p.instance_type.clone(),
    )
}

/// The source named for a reserved price: the commitment's kind and where the figure came
/// from (not its id, which is unknown at plan when it is bought in the same apply).
fn reserved_source(r: &crate::pool::PoolReservation) -> String {
    format!("{} (reservation.usd_per_gpu_hour)", r.kind)
}

/// `n`, `up to n`, or `a–b`.
fn range(min: u32, max: u32) -> String {
    match (min, max) {
        (a, b) if a == b => a.to_string(),
        (0, b) => format!("up to {b}"),
        (a, b) => format!("{a}–{b}"),
    }
}

/// The row nodes of `capacity` are priced at, as [`preview`] prices them: spot nodes at the
/// cheapest spot row, or the cheapest on-demand one when no type has a spot price; other
/// nodes at the cheapest on-demand row.
pub fn priced_as(types: &[ChosenType], capacity: CapacityType) -> Option<PricedAs> {
    match capacity {
        CapacityType::Spot => cheapest(types, true).or_else(|| cheapest(types, false)),
        _ => cheapest(types, false),
    }
}

/// The cheapest row of `spot` (or on-demand) capacity among `types`; the first on ties.
fn cheapest(types: &[ChosenType], spot: bool) -> Option<PricedAs> {
    types
        .iter()
        .filter_map(|t| t.price(spot).map(|row| (t, row)))
        .fold(
            None::<(&ChosenType, &PriceRow)>,
            |best, (t, row)| match best {
                Some((_, b)) if b.usd_per_hour <= row.usd_per_hour => best,
                _ => Some((t, row)),
            },
        )
        .map(|(t, row)| PricedAs {
            instance_type: t.instance_type.clone(),
            spot_price: spot,
            row: row.clone(),
        })
}
