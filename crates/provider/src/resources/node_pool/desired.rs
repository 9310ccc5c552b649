//! From a planned `gpu_node_pool` object to what it means: the validated spec, its
//! instance types with prices, the cost preview and the cloud node groups.

use std::collections::BTreeMap;

use gpu_core::catalog::Catalog;
use gpu_core::cost::{self, CostPreview, PriorCost};
use gpu_core::freshness::Freshness;
use gpu_core::pool::generation::{Roll, name_generations};
use gpu_core::pool::{self, ChosenType, GroupSpec, NodePoolSpec, layout};
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Value};

use super::inputs::pool_config;
use super::{groups, paths};

/// Settings from the provider block that pools use.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `default_labels`: tags on every node group.
    pub default_labels: BTreeMap<String, String>,
    /// `budget.max_monthly_usd`.
    pub max_monthly_usd: Option<f64>,
    /// The clouds' sessions (credentials, endpoints, retries) with this operation's stop
    /// signal.
    pub clouds: crate::clouds::Clouds,
    /// `max_price_age` and `include_stale_prices`: which catalog prices count when
    /// instance types are chosen.
    pub prices: Freshness,
}

/// A pool, understood.
#[derive(Debug, Clone)]
pub struct Desired {
    /// The validated spec, with the instance types decided.
    pub spec: NodePoolSpec,
    /// The instance types with their catalog rows.
    pub types: Vec<ChosenType>,
    /// The cloud's groups, laid out by [`layout::groups`].
    pub groups: Vec<GroupSpec>,
}

/// Validates `v` against the catalog, every problem as an error on its attribute.
pub fn validate(v: &Value, catalog: &Catalog) -> Result<NodePoolSpec, Diagnostics> {
    pool_config(v).validate(catalog).map_err(|errors| {
        let mut d = Diagnostics::new();
        for e in errors.0 {
            d.push(
                Diagnostic::error(
                    format!("Invalid {}", e.attribute),
                    format!("`{}` {}", e.attribute, e.problem),
                )
                .at(paths::parse(&e.attribute)),
            );
        }
        d
    })
}

/// The spec with the instance types `names` (pinned, chosen or kept), priced, laid out as
/// groups of the node class of `pool` (its cloud block, see [`inputs::node_class`]).
pub fn with_types(
    mut spec: NodePoolSpec,
    names: Option<Vec<String>>,
    catalog: &Catalog,
    settings: &Settings,
    pool: &Value,
) -> Desired {
    if let Some(names) = names {
        spec.instance_types = names;
    }
    let fresh = settings.prices;
    let types = pool::instance_types(&spec, catalog, pool::DEFAULT_INSTANCE_TYPE_COUNT, &fresh);
    spec.instance_types = types.iter().map(|t| t.instance_type.clone()).collect();
    let groups = match super::cloud_blocks::node_class(pool, spec.cloud) {
        Some(class) => layout::groups(&spec, &types, &class, &settings.default_labels),
        None => Vec::new(),
    };
    Desired {
        spec,
        types,
        groups,
    }
}

/// Names `d`'s groups against the groups recorded in `prior` state: a group the cloud
/// can change in place keeps its name, one it cannot rolls to a new generation (see
/// [`gpu_core::pool::generation`]). Plan and apply both call it with the same prior, so
/// they agree on every name.
pub fn name_groups(d: &mut Desired, prior: &Value) -> Vec<Roll> {
    name_generations(
        d.spec.cloud,
        &d.spec.name,
        &mut d.groups,
        &groups::prior(prior, d.spec.cloud),
    )
}

/// Prices `d` against `prior`; an unpriceable pool is an error on `instance_types`.
pub fn price(d: &Desired, prior: Option<PriorCost>) -> Result<CostPreview, Diagnostics> {
    cost::preview(&d.spec, &d.types, prior).map_err(|e| {
        Diagnostics::from(
            Diagnostic::error("Cannot price the pool", e.to_string())
                .at(AttributePath::attr("instance_types")),
        )
    })
}

/// The computed cost attributes of `p`.
pub fn cost_values(p: &CostPreview) -> Vec<(&'static str, Value)> {
    let per_node = |x: &Option<cost::PricedAs>| {
        x.as_ref()
            .map_or(Value::Null, |p| Value::number(round6(p.row.usd_per_hour)))
    };
    let origin_of = |x: &Option<cost::PricedAs>, date: bool| {
        x.as_ref().map_or(Value::Null, |p| {
            let o = &p.row.origin;
            match (date, &o.as_of) {
                (false, _) => Value::string(o.source.clone()),
                (true, Some(d)) => Value::string(d.clone()),
                (true, None) => Value::Null,
            }
        })
    };
    let rows: Vec<&cost::PricedAs> = p.on_demand.iter().chain(p.spot.iter()).collect();
    // The commitment's price (`reservation`) is named among the sources, but it is not a
    // catalog price and has no date of its own.
    let mut sources: Vec<&str> = rows
        .iter()
        .copied()
        .chain(p.reserved.iter())
        .map(|r| r.row.origin.source.as_str())
        .collect();
    sources.sort_unstable();
    sources.dedup();
    // The oldest date of the prices used; none when any of them is undated.
    let as_of = if rows.iter().all(|r| r.row.origin.as_of.is_some()) {
        rows.iter()
            .filter_map(|r| r.row.origin.as_of.as_deref())
            .min()
    } else {
        None
    };
    vec![
        ("hourly_usd", Value::number(round6(p.hourly_usd))),
        ("hourly_usd_max", Value::number(round6(p.hourly_usd_max))),
        ("monthly_usd", Value::number(round2(p.monthly_usd))),
        ("monthly_usd_max", Value::number(round2(p.monthly_usd_max))),
        (
            "monthly_delta_usd",
            Value::number(round2(p.monthly_delta_usd)),
        ),
        ("on_demand_usd_per_node_hour", per_node(&p.on_demand)),
        ("spot_usd_per_node_hour", per_node(&p.spot)),
        ("spot_priced_at_on_demand", Value::Bool(p.spot_upper_bound)),
        (
            "price_source",
            if sources.is_empty() {
                Value::Null
            } else {
                Value::string(sources.join(", "))
            },
        ),
        ("price_as_of", as_of.map_or(Value::Null, Value::string)),
        ("on_demand_price_source", origin_of(&p.on_demand, false)),
        ("on_demand_price_as_of", origin_of(&p.on_demand, true)),
        ("spot_price_source", origin_of(&p.spot, false)),
        ("spot_price_as_of", origin_of(&p.spot, true)),
        ("cost_summary", Value::string(p.summary())),
    ]
}

/// The prior cost kept in state, if any.
pub fn prior_cost(prior: &Value) -> Option<PriorCost> {
    let num = |n: &str| {
        prior
            .get_attr(n)
            .and_then(Value::as_number)
            .map(|x| x.as_f64())
    };
    Some(PriorCost {
        monthly_usd: num("monthly_usd")?,
        monthly_usd_max: num("monthly_usd_max").unwrap_or(0.0),
    })
}

/// Cents: the monthly figures people read.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Micro-dollars: hourly figures keep the catalog's precision.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
