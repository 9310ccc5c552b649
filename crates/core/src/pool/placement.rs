//! Placing a pool where its whole bill is lowest: every (cloud, region, instance type)
//! that has the pool's GPUs, priced as the pool would run there (an on-demand or reserved
//! floor plus spot above it, for the nodes expected on average), ranked by the monthly
//! total, with hysteresis towards the current place.
//!
//! Bills are summed by the one pricing function ([`crate::cost::lines`]), as pools are.
//! Ranking by the spot price alone misplaces any pool with an on-demand floor: the floor
//! is often most of the bill, and on-demand prices differ by region far more than spot.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use glob::{MatchOptions, Pattern};

use crate::availability::{self, Availability, Scores};
use crate::catalog::Catalog;
use crate::cost::{PriceLine, PricedAs, total};
use crate::freshness::Freshness;
use crate::gpu::GpuModel;
use crate::model::CapacityType;
use crate::offer::{Cloud, Offer, PriceOrigin};
use crate::pool::PriceRow;

/// The clouds a pool can be placed on: those with managed Kubernetes node pools.
pub const POOL_CLOUDS: [Cloud; 3] = [Cloud::Aws, Cloud::Azure, Cloud::Gcp];

/// The `source` of a reserved line: the price is the caller's, not the catalog's.
pub const RESERVED_SOURCE: &str = "reserved_usd_per_gpu_hour";

/// Case-insensitive glob matching, `*` crossing any character (as offer queries).
const GLOB: MatchOptions = MatchOptions {
    case_sensitive: false,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

/// Where a pool runs: cloud, region and instance type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The cloud.
    pub cloud: Cloud,
    /// The region.
    pub region: String,
    /// The instance type (VM size, machine type).
    pub instance_type: String,
}

/// The pool to place and where it may go.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementQuery {
    /// The GPU model of every node.
    pub gpu: &'static GpuModel,
    /// GPUs per node.
    pub gpu_count: u32,
    /// Fewest nodes.
    pub min_nodes: u32,
    /// Most nodes.
    pub max_nodes: u32,
    /// On-demand (or reserved) nodes always running.
    pub on_demand_min: u32,
    /// Nodes running on average; `None` means `min_nodes`.
    pub expected_nodes: Option<u32>,
    /// Clouds to consider; empty means [`POOL_CLOUDS`].
    pub clouds: Vec<Cloud>,
    /// Region globs; empty means any region.
    pub regions: Vec<String>,
    /// Which prices count.
    pub freshness: Freshness,
    /// Floor nodes run on a commitment at this USD per GPU-hour.
    pub reserved_usd_per_gpu_hour: Option<f64>,
    /// The current place, kept first unless the best saves `min_saving_percent`.
    pub prefer: Option<Place>,
    /// The saving, in percent of the preferred place's monthly bill, needed to move.
    pub min_saving_percent: f64,
    /// Rank places at or above this availability (0 to 1) first, then places without a
    /// score, then places below it; by the bill within each (see [`place_with`]).
    pub prefer_available: Option<f64>,
}

/// A field of a [`PlacementQuery`] with a value that cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {problem}")]
pub struct PlacementFieldError {
    /// The field (the data source attribute of the same name).
    pub field: &'static str,
    /// What is wrong, and what would be valid.
    pub problem: String,
}

impl PlacementQuery {
    /// On-demand (or reserved) nodes: `on_demand_min`, at most `max_nodes`.
    pub fn floor_nodes(&self) -> u32 {
        self.on_demand_min.min(self.max_nodes)
    }

    /// Spot nodes running on average: the expected nodes above the floor.
    pub fn spot_nodes(&self) -> u32 {
        let running = self
            .expected_nodes
            .unwrap_or(self.min_nodes)
            .max(self.floor_nodes());
        running - self.floor_nodes()
    }

    /// Every problem with the query's values, before any pricing.
    pub fn check(&self) -> Vec<PlacementFieldError> {
        let mut out = Vec::new();
        let mut bad = |field, problem: String| out.push(PlacementFieldError { field, problem });
        if self.gpu_count == 0 {
            bad("gpu_count", "must be a whole number of 1 or more".into());
        }
        if self.max_nodes == 0 {
            bad("max_nodes", "must be 1 or more".into());
        }
        if self.min_nodes > self.max_nodes {
            bad(
                "min_nodes",
                format!(
                    "is {}, more than `max_nodes` ({})",
                    self.min_nodes, self.max_nodes
                ),
            );
        }
        if let Some(v) = self.prefer_available
            && !(0.0..=1.0).contains(&v)
        {
            bad(
                "min_availability",
                format!("is {v}; it must be from 0 to 1 (e.g. 0.5)"),
            );
        }
        if self.on_demand_min > self.max_nodes {
            bad(
                "on_demand_min",
                format!(
                    "is {}, more than `max_nodes` ({})",
                    self.on_demand_min, self.max_nodes
                ),
            );
        }
        if let Some(e) = self.expected_nodes
            && !(self.min_nodes..=self.max_nodes).contains(&e)
        {
            bad(
                "expected_nodes",
                format!(
                    "is {e}; it must be from `min_nodes` ({}) to `max_nodes` ({})",
                    self.min_nodes, self.max_nodes
                ),
            );
        }
        for c in &self.clouds {
            if !POOL_CLOUDS.contains(c) {
                bad(
                    "clouds",
                    format!(
                        "has `{c}`, which has no managed Kubernetes node pools; valid: aws, azure, gcp"
                    ),
                );
            }
        }
        for r in &self.regions {
            if let Err(e) = Pattern::new(r) {
                bad("regions", format!("has `{r}`, not a valid glob: {e}"));
            }
        }
        if let Some(r) = self.reserved_usd_per_gpu_hour
            && !(r.is_finite() && r >= 0.0)
        {
            bad(
                "reserved_usd_per_gpu_hour",
                format!("is {r}; it must be 0 or more"),
            );
        }
        if !(self.min_saving_percent.is_finite() && self.min_saving_percent >= 0.0) {
            bad(
                "min_saving_percent",
                format!("is {}; it must be 0 or more", self.min_saving_percent),
            );
        }
        out
    }
}

/// What a line of the bill pays for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// The floor at on-demand prices.
    OnDemand,
    /// Nodes above the floor, at spot prices (or on-demand, where there is no spot price).
    Spot,
    /// The floor on a commitment, at the caller's price.
    Reserved,
}

impl LineKind {
    /// `on_demand`, `spot`, `reserved`: the names the data source uses.
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::OnDemand => "on_demand",
            LineKind::Spot => "spot",
            LineKind::Reserved => "reserved",
        }
    }
}

/// One catalog price: per instance-hour, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    /// USD per instance-hour.
    pub usd_per_hour: f64,
    /// Source and date.
    pub origin: PriceOrigin,
}

/// One line of a place's expected bill.
#[derive(Debug, Clone, PartialEq)]
pub struct BillLine {
    /// What it pays for.
    pub kind: LineKind,
    /// Nodes on this line, on average.
    pub nodes: u32,
    /// USD per node-hour.
    pub usd_per_node_hour: f64,
    /// Where the price came from (`source` [`RESERVED_SOURCE`] for a reserved line).
    pub origin: PriceOrigin,
    /// A spot line priced at on-demand because the place has no (usable) spot price.
    pub spot_priced_at_on_demand: bool,
}

impl BillLine {
    /// The line in the one pricing function's terms ([`crate::cost::lines`]).
    pub fn price_line(&self, instance_type: &str) -> PriceLine {
        PriceLine {
            priced: PricedAs {
                instance_type: instance_type.to_string(),
                spot_price: self.kind == LineKind::Spot && !self.spot_priced_at_on_demand,
                row: PriceRow {
                    usd_per_hour: self.usd_per_node_hour,
                    zone: None,
                    origin: self.origin.clone(),
                },
            },
            count_min: self.nodes,
            count_max: self.nodes,
            capacity: match self.kind {
                LineKind::OnDemand => CapacityType::OnDemand,
                LineKind::Spot => CapacityType::Spot,
                LineKind::Reserved => CapacityType::Reserved,
            },
        }
    }

    /// USD per month (730 h) of this line.
    pub fn monthly_usd(&self) -> f64 {
        total(&[self.price_line("")]).monthly_min()
    }
}

/// One place, priced.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Where.
    pub place: Place,
    /// Its cheapest usable on-demand price.
    pub on_demand: Option<Priced>,
    /// Its cheapest usable spot price (over zones).
    pub spot: Option<Priced>,
    /// The lines of the expected bill with nodes on them: the floor, then spot.
    pub lines: Vec<BillLine>,
    /// The expected monthly bill: the sum of the lines.
    pub monthly_usd: f64,
    /// How likely the place is to give the nodes (its spot score when the pool has spot
    /// nodes, else our record's), when scores were read.
    pub availability: Option<Availability>,
}

impl Candidate {
    /// Whether the spot line (if any) is priced at on-demand.
    pub fn spot_priced_at_on_demand(&self) -> bool {
        self.lines.iter().any(|l| l.spot_priced_at_on_demand)
    }
}

/// What the preference did.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementHysteresis {
    /// Whether the preferred place is a candidate.
    pub found: bool,
    /// Whether it is first.
    pub kept: bool,
    /// How much cheaper the best other place is, in percent of the preferred's bill.
    pub saving_percent: f64,
}

/// The ranked places.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Every candidate, cheapest first (the preferred first when it is kept).
    pub candidates: Vec<Candidate>,
    /// What `prefer` did, when the query had one.
    pub hysteresis: Option<PlacementHysteresis>,
}

impl Placement {
    /// The chosen place.
    pub fn best(&self) -> &Candidate {
        &self.candidates[0]
    }
}

/// Why nothing could be placed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlacementError {
    /// The query has invalid values.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<PlacementFieldError>),
    /// No catalog row has the GPUs in the clouds and regions asked for.
    #[error("no instance type with {count}x {gpu} in {where_}")]
    NoInstanceType {
        /// GPUs per node.
        count: u32,
        /// GPU model.
        gpu: &'static str,
        /// The clouds and regions searched.
        where_: String,
    },
    /// Instance types exist, but none has the prices the bill needs.
    #[error(
        "{types} instance type(s) with {count}x {gpu} in {where_}, but none has the prices the pool's bill needs ({needs}){age}"
    )]
    Unpriced {
        /// How many (cloud, region, type) were found.
        types: usize,
        /// GPUs per node.
        count: u32,
        /// GPU model.
        gpu: &'static str,
        /// The clouds and regions searched.
        where_: String,
        /// Which prices the bill needs.
        needs: String,
        /// `; max_price_age …` when a limit left prices out.
        age: String,
    },
}

/// Ranks every place of `catalog` for `q` by the expected monthly bill.
pub fn place(catalog: &Catalog, q: &PlacementQuery) -> Result<Placement, PlacementError> {
    place_with(catalog, q, None)
}

/// [`place`] with availability: each candidate gets its score from `scores`, and with
/// `prefer_available` candidates rank by [`availability::tier`] first, by the bill within
/// a tier; the preferred place stays first only within the best tier.
pub fn place_with(
    catalog: &Catalog,
    q: &PlacementQuery,
    scores: Option<&Scores>,
) -> Result<Placement, PlacementError> {
    let problems = q.check();
    if !problems.is_empty() {
        return Err(PlacementError::Invalid(problems));
    }
    let clouds: &[Cloud] = if q.clouds.is_empty() {
        &POOL_CLOUDS
    } else {
        &q.clouds
    };
    let globs: Vec<Pattern> = q
        .regions
        .iter()
        .filter_map(|r| Pattern::new(r).ok())
        .collect();
    let wanted = |o: &Offer| {
        clouds.contains(&o.cloud)
            && o.gpu.name == q.gpu.name
            && o.gpu_count == Some(f64::from(q.gpu_count))
            && (globs.is_empty()
                || globs.iter().any(|g| g.matches_with(&o.region, GLOB))
                || crate::region_group::in_any_group(&q.regions, o.cloud, &o.region))
    };
    // (place) → (cheapest usable on-demand, cheapest usable spot), first row on ties.
    let mut places: BTreeMap<Place, (Option<Priced>, Option<Priced>)> = BTreeMap::new();
    for o in catalog.offers().iter().filter(|o| wanted(o)) {
        let entry = places
            .entry(Place {
                cloud: o.cloud,
                region: o.region.clone(),
                instance_type: o.instance_type.clone(),
            })
            .or_default();
        for (spot, slot) in [(false, &mut entry.0), (true, &mut entry.1)] {
            let origin = o.origin(spot);
            let Some(usd) = o.price(spot).filter(|_| q.freshness.allows(origin)) else {
                continue;
            };
            if slot.as_ref().is_none_or(|p| usd < p.usd_per_hour) {
                *slot = Some(Priced {
                    usd_per_hour: usd,
                    origin: origin.clone(),
                });
            }
        }
    }
    let found = places.len();
    let mut candidates: Vec<Candidate> = places
        .into_iter()
        .filter_map(|(place, (od, spot))| bill(q, place, od, spot))
        .collect();
    if candidates.is_empty() {
        return Err(empty(q, clouds, found));
    }
    candidates.sort_by(ranking_order);
    let mut best_tier = candidates.len();
    if let Some(scores) = scores {
        for c in &mut candidates {
            c.availability = if q.spot_nodes() > 0 {
                scores.spot(
                    c.place.cloud,
                    &c.place.region,
                    None,
                    &c.place.instance_type,
                    q.gpu.name,
                )
            } else {
                scores.recorded(c.place.cloud, &c.place.region, q.gpu.name)
            }
            .cloned();
        }
        if let Some(min) = q.prefer_available {
            best_tier = availability::rank_by_tier(&mut candidates, |c| {
                availability::tier(c.availability.as_ref(), min)
            });
        }
    }
    let hysteresis = q
        .prefer
        .as_ref()
        .map(|p| prefer(&mut candidates[..best_tier], p, q.min_saving_percent));
    Ok(Placement {
        candidates,
        hysteresis,
    })
}

/// The expected bill of one place, or `None` when a line with nodes has no price (or the
/// place has no usable price at all).
fn bill(
    q: &PlacementQuery,
    place: Place,
    on_demand: Option<Priced>,
    spot: Option<Priced>,
) -> Option<Candidate> {
    if on_demand.is_none() && spot.is_none() {
        return None;
    }
    let mut lines = Vec::new();
    let floor = q.floor_nodes();
    if floor > 0 {
        lines.push(match q.reserved_usd_per_gpu_hour {
            Some(r) => BillLine {
                kind: LineKind::Reserved,
                nodes: floor,
                usd_per_node_hour: r * f64::from(q.gpu_count),
                origin: PriceOrigin::new(RESERVED_SOURCE, None),
                spot_priced_at_on_demand: false,
            },
            None => {
                let od = on_demand.as_ref()?;
                BillLine {
                    kind: LineKind::OnDemand,
                    nodes: floor,
                    usd_per_node_hour: od.usd_per_hour,
                    origin: od.origin.clone(),
                    spot_priced_at_on_demand: false,
                }
            }
        });
    }
    let above = q.spot_nodes();
    if above > 0 {
        let (price, at_on_demand) = match (&spot, &on_demand) {
            (Some(s), _) => (s, false),
            (None, Some(od)) => (od, true),
            (None, None) => return None,
        };
        lines.push(BillLine {
            kind: LineKind::Spot,
            nodes: above,
            usd_per_node_hour: price.usd_per_hour,
            origin: price.origin.clone(),
            spot_priced_at_on_demand: at_on_demand,
        });
    }
    let priced: Vec<PriceLine> = lines
        .iter()
        .map(|l| l.price_line(&place.instance_type))
        .collect();
    let monthly_usd = total(&priced).monthly_min();
    Some(Candidate {
        place,
        on_demand,
        spot,
        lines,
        monthly_usd,
        availability: None,
    })
}

/// Monthly bill, then cloud, region, instance type.
fn ranking_order(a: &Candidate, b: &Candidate) -> Ordering {
    a.monthly_usd
        .total_cmp(&b.monthly_usd)
        .then_with(|| a.place.cmp(&b.place))
}

/// Moves the preferred place first unless the best saves at least `min_saving_percent`
/// of its bill (and more than nothing).
fn prefer(candidates: &mut [Candidate], p: &Place, min_saving_percent: f64) -> PlacementHysteresis {
    let Some(idx) = candidates.iter().position(|c| &c.place == p) else {
        return PlacementHysteresis {
            found: false,
            kept: false,
            saving_percent: 0.0,
        };
    };
    let preferred = candidates[idx].monthly_usd;
    let saving_percent = if preferred > 0.0 {
        (preferred - candidates[0].monthly_usd) / preferred * 100.0
    } else {
        0.0
    };
    let kept = idx == 0 || saving_percent <= 0.0 || saving_percent < min_saving_percent;
    if kept && idx > 0 {
        candidates[..=idx].rotate_right(1);
    }
    PlacementHysteresis {
        found: true,
        kept,
        saving_percent,
    }
}

/// Why `q` has no candidate, `found` places having had its GPUs.
fn empty(q: &PlacementQuery, clouds: &[Cloud], found: usize) -> PlacementError {
    let names: Vec<&str> = clouds.iter().map(|c| c.as_str()).collect();
    let mut where_ = format!("clouds [{}]", names.join(", "));
    if !q.regions.is_empty() {
        where_.push_str(&format!(", regions [{}]", q.regions.join(", ")));
    }
    if found == 0 {
        return PlacementError::NoInstanceType {
            count: q.gpu_count,
            gpu: q.gpu.name,
            where_,
        };
    }
    let mut needs = Vec::new();
    if q.floor_nodes() > 0 && q.reserved_usd_per_gpu_hour.is_none() {
        needs.push("an on-demand price for the floor");
    }
    if q.spot_nodes() > 0 {
        needs.push("a spot or on-demand price for the nodes above it");
    }
    if needs.is_empty() {
        needs.push("any price");
    }
    PlacementError::Unpriced {
        types: found,
        count: q.gpu_count,
        gpu: q.gpu.name,
        where_,
        needs: needs.join(", "),
        age: q
            .freshness
            .max_age
            .map(|a| format!("; `max_price_age = {a}` leaves out older and undated prices"))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::freshness::MaxPriceAge;

    /// Two regions: the spot-cheapest one has the dearer floor.
    const CSV: &str = "\
cloud,region,zone,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour,source,on_demand_source,on_demand_as_of,spot_source,spot_as_of
aws,us-east-1,use1-az1,p5.48xlarge,H100,8,80,192,2048,55.0,30.0,row,od-e,2026-07-20,sp-e1,
aws,us-east-1,use1-az2,p5.48xlarge,H100,8,80,192,2048,55.0,25.0,row,od-e,2026-07-20,sp-e2,
aws,ap-south-1,,p5.48xlarge,H100,8,80,192,2048,118.0,12.0,row,od-a,,sp-a,
gcp,us-central1,,a3-highgpu-8g,H100,8,80,208,1872,88.0,,row,od-g,2026-08-03,,
aws,us-east-1,,p5.4xlarge,H100,1,80,16,256,6.88,,row,od-1,2026-07-20,,
";

    fn catalog() -> Catalog {
        Catalog::from_csv(CSV.as_bytes()).unwrap()
    }

    fn query(floor: u32, expected: u32) -> PlacementQuery {
        PlacementQuery {
            gpu: crate::gpu::lookup("H100").unwrap(),
            gpu_count: 8,
            min_nodes: 1,
            max_nodes: 4,
            on_demand_min: floor,
            expected_nodes: Some(expected),
            clouds: vec![],
            regions: vec![],
            freshness: Freshness::any(),
            reserved_usd_per_gpu_hour: None,
            prefer: None,
            min_saving_percent: 0.0,
            prefer_available: None,
        }
    }

    fn order(p: &Placement) -> Vec<(&str, f64)> {
        p.candidates
            .iter()
            .map(|c| (c.place.region.as_str(), c.monthly_usd))
            .collect()
    }

    #[test]
    fn a_floor_moves_the_pool_to_the_cheaper_whole_bill() {
        // Spot only: ap-south-1's $12 spot wins.
        let spot_only = place(&catalog(), &query(0, 2)).unwrap();
        assert_eq!(spot_only.best().place.region, "ap-south-1");
        assert_eq!(spot_only.best().monthly_usd, 730.0 * 2.0 * 12.0);
        // One on-demand node: us-east-1 (55 + 25) beats ap-south-1 (118 + 12).
        let floor = place(&catalog(), &query(1, 2)).unwrap();
        assert_eq!(
            order(&floor),
            [
                ("us-east-1", 730.0 * 80.0),
                ("ap-south-1", 730.0 * 130.0),
                ("us-central1", 730.0 * 176.0)
            ]
        );
        let best = floor.best();
        assert_eq!(best.place.region, "us-east-1");
        assert_eq!(best.lines.len(), 2);
        assert_eq!(best.lines[0].kind, LineKind::OnDemand);
        assert_eq!(best.lines[0].origin.source, "od-e");
        assert_eq!(best.lines[1].origin.source, "sp-e2", "the cheaper zone");
        // GCP has no spot price: its spot node is priced at on-demand, and says so.
        let gcp = floor
            .candidates
            .iter()
            .find(|c| c.place.cloud == Cloud::Gcp)
            .unwrap();
        assert!(gcp.spot_priced_at_on_demand());
        assert_eq!(gcp.monthly_usd, 730.0 * 176.0);
    }

    #[test]
    fn prefer_available_moves_a_short_place_down_and_scores_each_candidate() {
        let mut scores = Scores::new();
        let at = |score: f64| Availability {
            score,
            source: "aws spot placement score".into(),
            as_of: "2026-12-06".into(),
        };
        // us-east-1's best zone scores 0.2; ap-south-1 has no score; gcp only our record.
        scores.add(crate::availability::PlaceScore {
            cloud: Cloud::Aws,
            region: "us-east-1".into(),
            zone: Some("use1-az2".into()),
            instance_type: "p5.48xlarge".into(),
            availability: at(0.2),
        });
        scores.add_record([(("gcp".into(), "us-central1".into(), "H100".into()), at(0.8))].into());
        let q = query(1, 2);
        let scored = place_with(&catalog(), &q, Some(&scores)).unwrap();
        assert_eq!(
            order(&scored),
            order(&place(&catalog(), &q).unwrap()),
            "by the bill when off"
        );
        let east = &scored.candidates[0];
        assert_eq!(east.availability.as_ref().unwrap().score, 0.2);
        assert!(scored.candidates[1].availability.is_none());
        let preferring = PlacementQuery {
            prefer_available: Some(0.5),
            ..q.clone()
        };
        let p = place_with(&catalog(), &preferring, Some(&scores)).unwrap();
        let regions: Vec<&str> = p
            .candidates
            .iter()
            .map(|c| c.place.region.as_str())
            .collect();
        assert_eq!(regions, ["us-central1", "ap-south-1", "us-east-1"]);
        // A pool with no spot nodes takes our record only: the spot score does not count.
        let floor_only = PlacementQuery {
            prefer_available: Some(0.5),
            expected_nodes: Some(1),
            ..q.clone()
        };
        let p = place_with(&catalog(), &floor_only, Some(&scores)).unwrap();
        let east = p
            .candidates
            .iter()
            .find(|c| c.place.region == "us-east-1")
            .unwrap();
        assert!(east.availability.is_none());
        assert_eq!(p.best().place.region, "us-central1");
        let bad = PlacementQuery {
            prefer_available: Some(-0.1),
            ..q
        };
        let err = place_with(&catalog(), &bad, Some(&scores))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`min_availability`") && err.contains("from 0 to 1"),
            "{err}"
        );
    }

    #[test]
    fn ranking_is_by_the_monthly_bill() {
        let p = place(&catalog(), &query(1, 2)).unwrap();
        let bills: Vec<f64> = p.candidates.iter().map(|c| c.monthly_usd).collect();
        assert!(bills.windows(2).all(|w| w[0] <= w[1]), "{bills:?}");
        assert_eq!(p.candidates.len(), 3, "the 1-GPU type is not a candidate");
    }

    #[test]
    fn a_reserved_floor_is_priced_at_the_commitment() {
        let mut q = query(2, 2);
        q.reserved_usd_per_gpu_hour = Some(2.5);
        let p = place(&catalog(), &q).unwrap();
        let line = &p.best().lines[0];
        assert_eq!(line.kind, LineKind::Reserved);
        assert_eq!(line.usd_per_node_hour, 20.0);
        assert_eq!(line.origin.source, RESERVED_SOURCE);
        assert_eq!(p.best().monthly_usd, 730.0 * 40.0);
    }

    #[test]
    fn max_price_age_leaves_undated_prices_out() {
        let mut q = query(1, 2);
        q.freshness = Freshness {
            max_age: Some(MaxPriceAge { days: 3650 }),
            today: crate::time::days_of_date("2026-12-03").unwrap(),
            include_stale: false,
        };
        let p = place(&catalog(), &q).unwrap();
        // ap-south-1's on-demand price is undated: it cannot price the floor.
        assert!(p.candidates.iter().all(|c| c.place.region != "ap-south-1"));
        // us-east-1's spot prices are undated: spot is priced at on-demand there.
        let east = p
            .candidates
            .iter()
            .find(|c| c.place.region == "us-east-1")
            .unwrap();
        assert!(east.spot.is_none() && east.spot_priced_at_on_demand());
        q.freshness.max_age = Some(MaxPriceAge { days: 100 });
        let e = place(&catalog(), &q).unwrap_err();
        assert!(
            matches!(e, PlacementError::Unpriced { types: 3, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("max_price_age = 100d"), "{e}");
    }

    #[test]
    fn hysteresis_keeps_the_current_place_below_the_threshold() {
        let mut q = query(1, 2);
        q.prefer = Some(Place {
            cloud: Cloud::Aws,
            region: "ap-south-1".into(),
            instance_type: "p5.48xlarge".into(),
        });
        // us-east-1 saves (130 - 80) / 130 = 38.5 %.
        q.min_saving_percent = 40.0;
        let kept = place(&catalog(), &q).unwrap();
        assert_eq!(kept.best().place.region, "ap-south-1");
        let h = kept.hysteresis.as_ref().unwrap();
        assert!(h.found && h.kept);
        assert!((h.saving_percent - 50.0 / 130.0 * 100.0).abs() < 1e-9);
        q.min_saving_percent = 30.0;
        let moved = place(&catalog(), &q).unwrap();
        assert_eq!(moved.best().place.region, "us-east-1");
        assert!(!moved.hysteresis.unwrap().kept);
    }

    #[test]
    fn bad_values_and_empty_answers_are_errors() {
        let mut q = query(5, 2);
        q.clouds = vec![Cloud::Cudo];
        q.gpu_count = 0;
        let PlacementError::Invalid(errs) = place(&catalog(), &q).unwrap_err() else {
            panic!("not invalid")
        };
        let fields: Vec<&str> = errs.iter().map(|e| e.field).collect();
        assert_eq!(fields, ["gpu_count", "on_demand_min", "clouds"]);
        let mut q = query(1, 2);
        q.regions = vec!["eu-*".into()];
        let e = place(&catalog(), &q).unwrap_err();
        assert!(matches!(e, PlacementError::NoInstanceType { .. }), "{e}");
        assert!(e.to_string().contains("regions [eu-*]"), "{e}");
    }
}
