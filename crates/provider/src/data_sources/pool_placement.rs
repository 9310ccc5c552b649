//! `gpu_pool_placement`: the (cloud, region, instance type) where a pool's whole expected
//! bill is lowest, on-demand floor plus spot above it, with every price's provenance.

use super::{Answering, availability_args};
use crate::checks;
use gpu_core::freshness::Freshness;
use gpu_core::offer::Cloud;
use gpu_core::pool::placement::{
    self, BillLine, Candidate, Place, Placement, PlacementError, PlacementQuery,
};
use gpu_core::query::{Capacity, GpuCount, OfferQuery};
use serde::Deserialize;
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::validators::Validator;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Schema, Tf, Type, Value};

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_pool_placement";

/// The cty type of one line of a bill.
fn line_type() -> Type {
    Type::object([
        ("kind", Type::String),
        ("nodes", Type::Number),
        ("usd_per_node_hour", Type::Number),
        ("monthly_usd", Type::Number),
        ("source", Type::String),
        ("as_of", Type::String),
        ("price_age_days", Type::Number),
        ("spot_priced_at_on_demand", Type::Bool),
    ])
}

/// The cty type of one ranked candidate.
fn candidate_type() -> Type {
    Type::object(
        [
            ("cloud", Type::String),
            ("region", Type::String),
            ("instance_type", Type::String),
            ("monthly_usd", Type::Number),
            ("on_demand_usd_per_hour", Type::Number),
            ("spot_usd_per_hour", Type::Number),
            ("spot_priced_at_on_demand", Type::Bool),
            ("on_demand_as_of", Type::String),
            ("spot_as_of", Type::String),
        ]
        .into_iter()
        .chain(availability_args::output_fields().map(|(n, t, _)| (n, t))),
    )
}

/// The schema of `gpu_pool_placement`.
pub fn schema() -> Schema {
    Schema::new(
        Block::new("Where a node pool's whole expected bill is lowest: every (cloud, region, instance type) with the pool's GPUs, priced as the pool runs there (the on-demand floor, or a reserved floor, plus spot for the rest of `expected_nodes`; 730 hours a month) and ranked by that monthly total, then cloud, region and instance type. Ranking by the spot price alone misplaces a pool with an on-demand floor. Each line of the bill says where its price came from and how old it is. From the embedded catalog, or live prices with `live = true`.")
            .attribute(Attribute::required("gpu", Type::String).describe("GPU model of every node, e.g. `H100` (case-insensitive; aliases work; see `gpu_models`).").validate(checks::gpu_model()))
            .attribute(Attribute::required("gpu_count", Type::Number).describe("GPUs per node.").validate(checks::whole_at_least(1.0)))
            .attribute(Attribute::required("min_nodes", Type::Number).describe("Fewest nodes of the pool.").validate(checks::whole_at_least(0.0)))
            .attribute(Attribute::required("max_nodes", Type::Number).describe("Most nodes of the pool (at least `min_nodes`).").validate(checks::whole_at_least(1.0)))
            .attribute(Attribute::optional("on_demand_min", Type::Number).describe("On-demand nodes always running: the floor (default 0, at most `max_nodes`), as `capacity.on_demand_min` of `gpu_node_pool`.").validate(checks::whole_at_least(0.0)))
            .attribute(Attribute::optional("expected_nodes", Type::Number).describe("Nodes running on average, from `min_nodes` to `max_nodes` (default `min_nodes`). Those above the floor are priced as spot.").validate(checks::whole_at_least(0.0)))
            .attribute(Attribute::optional("clouds", Type::list(Type::String)).describe("Clouds to consider (the clouds with managed Kubernetes node pools). Default: all three.").validate(pool_cloud().each()))
            .attribute(Attribute::optional("regions", Type::list(Type::String)).describe("Region globs, e.g. `[\"us-*\"]`, or the region groups `europe`, `us` and `asia` (every region of each cloud there). Default: all."))
            .attribute(Attribute::optional("max_price_age", Type::String).describe("Only prices at most this old, such as `\"365d\"` or `\"52w\"`; undated prices are left out too. Default: the provider's `max_price_age`, else every price.").validate(checks::price_age()))
            .attribute(Attribute::optional("include_stale_prices", Type::Bool).describe("Rank prices on the vendored stale list too (AWS P4/P5 prices from before the 2025 price cut); a bill line priced with one says `STALE` and why in its `source`. Default: the provider's `include_stale_prices`, else `false` (left out)."))
            .attribute(Attribute::optional("reserved_usd_per_gpu_hour", Type::Number).describe("The floor runs on a commitment at this price per GPU-hour (USD) instead of on-demand: its line is `reserved`.").validate(checks::non_negative()))
            .attribute(Attribute::optional("min_saving_percent", Type::Number).describe("With `prefer`: the saving, in percent of the current place's monthly bill, needed to move away from it. Default 0.").validate(checks::non_negative()))
            .attribute(Attribute::optional("live", Type::Bool).describe("Refresh prices from the clouds' price APIs first, as in `gpu_spot_offer`, and read each place's availability. Default false."))
            .attribute(Attribute::optional("prefer_available", Type::Bool).describe("With `live = true`: rank places whose availability is at least `min_availability` first, then places without a score, then places below it; by the monthly bill within each. A pool with spot nodes takes its cloud's spot signal for the region (its best zone), else the provider's record of recent answers (`events_file`, the last 7 days); a pool without spot nodes, the record only. Without any score the ranking is by the bill, with a warning. Default false."))
            .attribute(Attribute::optional("min_availability", Type::Number).describe("With `prefer_available`: the availability, from 0 to 1, a place needs to rank first. Default 0.5.").validate(checks::fraction()))
            .attribute(Attribute::computed("cloud", Type::String).describe("Cloud of the chosen place."))
            .attribute(Attribute::computed("region", Type::String).describe("Region of the chosen place."))
            .attribute(Attribute::computed("instance_type", Type::String).describe("Instance type of the chosen place."))
            .attribute(Attribute::computed("monthly_usd", Type::Number).describe("Expected USD per month (730 h) at the chosen place: the sum of `lines`."))
            .attribute(Attribute::computed("hourly_usd", Type::Number).describe("`monthly_usd` / 730."))
            .attribute(Attribute::computed("lines", Type::list(line_type())).describe("The chosen place's bill, one line per kind with nodes: `kind` (`on_demand` or `reserved` for the floor, then `spot`), `nodes`, `usd_per_node_hour`, `monthly_usd`, and the price's provenance: `source`, `as_of` (null when undated), `price_age_days`, `spot_priced_at_on_demand` (no usable spot price there: an upper bound)."))
            .attribute(Attribute::computed("candidates", Type::list(candidate_type())).describe("Every place, ranked (the preferred one first when kept): `cloud`, `region`, `instance_type`, `monthly_usd`, `on_demand_usd_per_hour` and `spot_usd_per_hour` (null where none is usable), `spot_priced_at_on_demand`, `on_demand_as_of`, `spot_as_of`, and `availability`, `availability_source`, `availability_as_of` (null without a score or without `live = true`)."))
            .attribute(Attribute::computed("availability", Type::Number).describe("The chosen place's availability, from 0 to 1, as in `candidates`; null without a score."))
            .attribute(Attribute::computed("matched", Type::Number).describe("How many places were priced."))
            .attribute(Attribute::computed("kept_preferred", Type::Bool).describe("True when `prefer` names a candidate and it stays first."))
            .attribute(Attribute::computed("saving_percent", Type::Number).describe("With `prefer`: how much cheaper the best other place is, in percent of the preferred place's bill (0 without `prefer`)."))
            .attribute(Attribute::computed("catalog", Type::String).describe("Which catalog answered: the embedded snapshot, or live prices over it."))
            .block(NestedBlock::single(
                "prefer",
                Block::new("The pool's current place (hysteresis): it stays first unless another place's monthly bill is lower by at least `min_saving_percent`, so a price move never rolls a running pool for a small saving.")
                    .attribute(Attribute::required("cloud", Type::String).describe("Cloud of the current place.").validate(checks::one_of(&pool_cloud_words())))
                    .attribute(Attribute::required("region", Type::String).describe("Region of the current place."))
                    .attribute(Attribute::required("instance_type", Type::String).describe("Instance type of the current place.")),
            )),
    )
}

/// The arguments as typed values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Args {
    gpu: Tf<String>,
    gpu_count: Tf<f64>,
    min_nodes: Tf<f64>,
    max_nodes: Tf<f64>,
    on_demand_min: Tf<f64>,
    expected_nodes: Tf<f64>,
    clouds: Tf<Vec<Tf<String>>>,
    regions: Tf<Vec<Tf<String>>>,
    max_price_age: Tf<String>,
    /// `include_stale_prices`.
    include_stale_prices: Tf<bool>,
    reserved_usd_per_gpu_hour: Tf<f64>,
    min_saving_percent: Tf<f64>,
    prefer: Tf<PreferArgs>,
}

/// The `prefer` block.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct PreferArgs {
    cloud: Tf<String>,
    region: Tf<String>,
    instance_type: Tf<String>,
}

impl Args {
    /// Decodes `config`; a value off the schema reads as no arguments.
    fn of(config: &Value) -> Self {
        tfplugin::tf::decode(config).unwrap_or_default()
    }
}

/// Checks the arguments that are known; the core's own checks follow at read.
pub fn validate(config: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    if schema().block.check(config).has_errors() {
        return d;
    }
    // Relations between known numbers, by the core's rules.
    if let Some(q) = query(config, Freshness::any()) {
        for e in q.check() {
            d.attr_error(
                AttributePath::attr(e.field),
                format!("Invalid {}", e.field),
                e.to_string(),
            );
        }
    }
    d
}

/// The clouds a pool can be placed on, as written.
fn pool_cloud_words() -> Vec<&'static str> {
    placement::POOL_CLOUDS.iter().map(|c| c.as_str()).collect()
}

/// A cloud with managed Kubernetes node pools (an element of `clouds`).
fn pool_cloud() -> Validator {
    Validator::with_detail(|name, v| {
        let c = v.as_str().unwrap_or_default();
        if pool_cloud_words().contains(&c) {
            return Ok(());
        }
        let why = if c.parse::<Cloud>().is_ok() {
            "has no managed Kubernetes node pools to place a pool in"
        } else {
            "is not a cloud"
        };
        Err(format!(
            "`{name}` is {c:?}, which {why}; valid values are: \"aws\", \"azure\", \"gcp\"."
        ))
    })
    .describe("Must be `aws`, `azure` or `gcp`.")
}

/// The core query, when every argument it needs is known and valid.
fn query(config: &Value, prices: Freshness) -> Option<PlacementQuery> {
    let args = Args::of(config);
    let whole = |n: &Tf<f64>| n.known().map(|x| *x as u32);
    let age = args.max_price_age.known().and_then(|s| s.parse().ok());
    let prefer = args.prefer.known().and_then(|p| {
        Some(Place {
            cloud: p.cloud.known()?.parse().ok()?,
            region: p.region.known()?.clone(),
            instance_type: p.instance_type.known()?.clone(),
        })
    });
    Some(PlacementQuery {
        gpu: gpu_core::gpu::lookup(args.gpu.known()?).ok()?,
        gpu_count: whole(&args.gpu_count)?,
        min_nodes: whole(&args.min_nodes)?,
        max_nodes: whole(&args.max_nodes)?,
        on_demand_min: whole(&args.on_demand_min).unwrap_or(0),
        expected_nodes: whole(&args.expected_nodes),
        clouds: crate::model_values::strings(&args.clouds)
            .unwrap_or_default()
            .iter()
            .filter_map(|c| c.parse::<Cloud>().ok())
            .collect(),
        regions: crate::model_values::strings(&args.regions).unwrap_or_default(),
        freshness: prices.overridden(age, args.include_stale_prices.known().copied()),
        reserved_usd_per_gpu_hour: args.reserved_usd_per_gpu_hour.known().copied(),
        prefer,
        min_saving_percent: args.min_saving_percent.known().copied().unwrap_or(0.0),
        prefer_available: availability_args::threshold(config),
    })
}

/// The offer query whose clouds and regions a live refresh must cover.
pub fn live_scope(config: &Value) -> Option<OfferQuery> {
    let q = query(config, Freshness::any())?;
    let mut o = OfferQuery {
        gpus: vec![q.gpu],
        gpu_count: Some(GpuCount::Exact(f64::from(q.gpu_count))),
        capacity: Capacity::Either,
        regions: q.regions,
        ..OfferQuery::default()
    };
    o.clouds = if q.clouds.is_empty() {
        placement::POOL_CLOUDS.to_vec()
    } else {
        q.clouds
    };
    Some(o)
}

/// Places the pool with `answering` (its catalog, the provider's `max_price_age`, and
/// availability when read).
pub fn read(config: &Value, answering: Answering<'_>) -> ReadDataSourceResponse {
    let (catalog, prices, scores) = answering.parts();
    let d = super::all_checks(schema(), config, validate);
    if d.has_errors() {
        return d.into();
    }
    let Some(q) = query(config, prices) else {
        return Diagnostics::from(Diagnostic::error(
            "Cannot place the pool",
            "`gpu`, `gpu_count`, `min_nodes` and `max_nodes` must be known to place a pool.",
        ))
        .into();
    };
    let placed = match placement::place_with(catalog, &q, scores) {
        Ok(p) => p,
        Err(e) => return error(e).into(),
    };
    let mut state = config.clone();
    if let Value::Object(attrs) = &mut state {
        for (name, value) in outputs(&placed, q.freshness.today) {
            attrs.insert(name.to_string(), value);
        }
        attrs.insert(
            "catalog".into(),
            Value::string(catalog.origin().label.clone()),
        );
    }
    ReadDataSourceResponse {
        state,
        diagnostics: Diagnostics::new(),
    }
}

/// A placement error as a diagnostic on the attribute it concerns.
fn error(e: PlacementError) -> Diagnostics {
    match e {
        PlacementError::Invalid(fields) => Diagnostics(
            fields
                .into_iter()
                .map(|f| {
                    Diagnostic::error(format!("Invalid {}", f.field), f.to_string())
                        .at(AttributePath::attr(f.field))
                })
                .collect(),
        ),
        e @ PlacementError::NoInstanceType { .. } => {
            Diagnostic::error("No place for the pool", format!("{e}."))
                .at(AttributePath::attr("gpu"))
                .into()
        }
        e @ PlacementError::Unpriced { .. } => {
            let attr = if e.to_string().contains("max_price_age") {
                "max_price_age"
            } else {
                "on_demand_min"
            };
            Diagnostic::error("No place for the pool", format!("{e}."))
                .at(AttributePath::attr(attr))
                .into()
        }
    }
}

/// A number, or null.
fn num(x: Option<f64>) -> Value {
    x.map_or(Value::Null, Value::number)
}

/// A string, or null.
fn text(x: Option<&str>) -> Value {
    x.map_or(Value::Null, Value::string)
}

/// One line as a cty object.
fn line_value(l: &BillLine, today: i64) -> Value {
    Value::object([
        ("kind", Value::string(l.kind.as_str())),
        ("nodes", Value::number(i64::from(l.nodes))),
        ("usd_per_node_hour", Value::number(l.usd_per_node_hour)),
        ("monthly_usd", Value::number(l.monthly_usd())),
        ("source", Value::string(l.origin.labelled_source())),
        ("as_of", text(l.origin.as_of.as_deref())),
        (
            "price_age_days",
            num(l.origin.age_days(today).map(|d| d as f64)),
        ),
        (
            "spot_priced_at_on_demand",
            Value::Bool(l.spot_priced_at_on_demand),
        ),
    ])
}

/// One candidate as a cty object.
fn candidate_value(c: &Candidate) -> Value {
    Value::object(
        [
            ("cloud", Value::string(c.place.cloud.as_str())),
            ("region", Value::string(c.place.region.clone())),
            (
                "instance_type",
                Value::string(c.place.instance_type.clone()),
            ),
            ("monthly_usd", Value::number(c.monthly_usd)),
            (
                "on_demand_usd_per_hour",
                num(c.on_demand.as_ref().map(|p| p.usd_per_hour)),
            ),
            (
                "spot_usd_per_hour",
                num(c.spot.as_ref().map(|p| p.usd_per_hour)),
            ),
            (
                "spot_priced_at_on_demand",
                Value::Bool(c.spot_priced_at_on_demand()),
            ),
            (
                "on_demand_as_of",
                text(c.on_demand.as_ref().and_then(|p| p.origin.as_of.as_deref())),
            ),
            (
                "spot_as_of",
                text(c.spot.as_ref().and_then(|p| p.origin.as_of.as_deref())),
            ),
        ]
        .into_iter()
        .chain(availability_args::output_values(c.availability.as_ref())),
    )
}

/// The computed attributes of a placement.
fn outputs(p: &Placement, today: i64) -> Vec<(&'static str, Value)> {
    let best = p.best();
    let h = p.hysteresis.as_ref();
    vec![
        ("cloud", Value::string(best.place.cloud.as_str())),
        ("region", Value::string(best.place.region.clone())),
        (
            "instance_type",
            Value::string(best.place.instance_type.clone()),
        ),
        ("monthly_usd", Value::number(best.monthly_usd)),
        (
            "hourly_usd",
            Value::number(best.monthly_usd / gpu_core::cost::HOURS_PER_MONTH),
        ),
        (
            "lines",
            Value::List(best.lines.iter().map(|l| line_value(l, today)).collect()),
        ),
        (
            "candidates",
            Value::List(p.candidates.iter().map(candidate_value).collect()),
        ),
        ("matched", Value::number(p.candidates.len() as i64)),
        (
            "availability",
            best.availability
                .as_ref()
                .map_or(Value::Null, |a| Value::number(a.score)),
        ),
        (
            "kept_preferred",
            Value::Bool(h.is_some_and(|h| h.found && h.kept)),
        ),
        (
            "saving_percent",
            Value::number(h.map_or(0.0, |h| h.saving_percent)),
        ),
    ]
}
