//! `gpu_commitment_sizing`: how many GPUs to commit to, from a demand history (no cloud
//! call): the floor, the optimum, their money against all-on-demand and all-spot, the
//! break-even utilisation and the cost curve. Prices are given, or the on-demand, spot and
//! burst prices are looked up in the catalog for `cloud`, `region` and `gpu`.

use crate::checks;
use gpu_core::catalog::Catalog;
use gpu_core::commitment::{self, Commitment, Sizing, SizingInput};
use gpu_core::freshness::Freshness;
use gpu_core::offer::Cloud;
use gpu_core::query::{self, Capacity, GpuCount, OfferQuery};
use serde::Deserialize;
use tfplugin::Tf;
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::schema::{Attribute, Block};
use tfplugin::validators::Validator;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Schema, Type, Value};

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_commitment_sizing";

/// `burst_capacity` values.
const BURST_CAPACITIES: &[&str] = &["on_demand", "spot"];

/// The type of one sized commitment (`floor`, `optimal`).
pub fn commitment_type() -> Type {
    Type::object([
        ("gpus", Type::Number),
        ("commit_usd", Type::Number),
        ("burst_usd", Type::Number),
        ("total_usd", Type::Number),
        ("utilization", Type::Number),
        ("savings_vs_on_demand_usd", Type::Number),
        ("savings_vs_spot_usd", Type::Number),
    ])
}

/// The schema of `gpu_commitment_sizing`.
pub fn schema() -> Schema {
    let price = |name: &str, what: &str| {
        Attribute::optional_computed(name, Type::Number)
            .describe(what)
            .validate(checks::non_negative())
    };
    Schema::new(
        Block::new("Sizes a commitment (capacity block, reservation, committed use) to a demand history, with no cloud call: the floor of demand (`floor_percentile`, default the minimum), the count that minimises the total (`N × commit × hours + the GPU-hours above N at the burst price`), their cost against running everything on demand or on spot, the utilisation a commitment needs to pay (`break_even_utilization`), and the whole cost curve. Commit only to the floor; burst above it on spot or on demand.")
            .attribute(Attribute::optional("hourly_gpus", Type::list(Type::Number)).describe("The demand history: concurrent GPUs in use, one number per hour (0 or more). Set this or `hourly_gpus_csv`."))
            .attribute(Attribute::optional("hourly_gpus_csv", Type::String).describe("The demand history as CSV text (e.g. `file(\"demand.csv\")`): one hour per line, the GPUs in its last column; a first line that is not a number is a header. Set this or `hourly_gpus`."))
            .attribute(price("commit_usd_per_gpu_hour", "Price of one committed GPU-hour in USD, paid whether used or not (for an upfront purchase: its total divided by the term's GPU-hours). Default: the published commitment rate of `gpu` in `cloud`/`region` for `term`, from the provider's vendored rates (Google Cloud committed use today; see the data's SOURCE.md), the cheapest per GPU-hour among the machine types with that GPU (and `gpu_count`); where no rate is published, give it."))
            .attribute(Attribute::optional("term", Type::String).describe("The commitment's term when its rate is looked up.").validate(term()))
            .attribute(price("burst_usd_per_gpu_hour", "Price of one GPU-hour above the commitment. Default: the catalog's cheapest price per GPU-hour of `gpu` in `cloud`/`region` at `burst_capacity`."))
            .attribute(price("on_demand_usd_per_gpu_hour", "On-demand price per GPU-hour for the all-on-demand comparison. Default: the catalog's, when `cloud`, `region` and `gpu` are set; else unknown (null savings)."))
            .attribute(price("spot_usd_per_gpu_hour", "Spot price per GPU-hour for the all-spot comparison. Default: the catalog's, when `cloud`, `region` and `gpu` are set and it has one; else unknown (null savings)."))
            .attribute(Attribute::optional("cloud", Type::String).describe("Cloud whose catalog prices fill the prices not given.").validate(cloud()))
            .attribute(Attribute::optional("region", Type::String).describe("Region of the catalog prices, e.g. `us-east-1`."))
            .attribute(Attribute::optional("gpu", Type::String).describe("GPU model of the catalog prices, e.g. `H100` (any alias).").validate(gpu()))
            .attribute(Attribute::optional("gpu_count", Type::Number).describe("Only instance types with this many GPUs count for the catalog prices (default any).").validate(checks::non_negative()))
            .attribute(Attribute::optional("burst_capacity", Type::String).describe("What runs above the commitment when `burst_usd_per_gpu_hour` is looked up (default `on_demand`).").validate(checks::capacity_word(BURST_CAPACITIES)))
            .attribute(Attribute::optional("floor_percentile", Type::Number).describe("The floor is this percentile of hourly demand, rounded down to whole GPUs: 0 (default) is the minimum, the GPUs in use every hour.").validate(percentile()))
            .attribute(Attribute::computed("hours", Type::Number).describe("Hours in the history."))
            .attribute(Attribute::computed("demand_gpu_hours", Type::Number).describe("GPU-hours of demand in the history."))
            .attribute(Attribute::computed("floor_gpus", Type::Number).describe("GPUs at the floor."))
            .attribute(Attribute::computed("optimal_gpus", Type::Number).describe("The count with the lowest total over the history (the smallest of equals)."))
            .attribute(Attribute::computed("floor", commitment_type()).describe("Committing to `floor_gpus`: `gpus`, `commit_usd`, `burst_usd`, `total_usd` (over the history), `utilization` (share of committed GPU-hours used; null at 0 GPUs), `savings_vs_on_demand_usd` and `savings_vs_spot_usd` (null when that price is unknown)."))
            .attribute(Attribute::computed("optimal", commitment_type()).describe("Committing to `optimal_gpus`, in the same shape as `floor`."))
            .attribute(Attribute::computed("all_on_demand_usd", Type::Number).describe("The history run entirely on demand; null when that price is unknown."))
            .attribute(Attribute::computed("all_spot_usd", Type::Number).describe("The history run entirely on spot; null when that price is unknown."))
            .attribute(Attribute::computed("break_even_utilization", Type::Number).describe("`commit / burst`: the share of its hours a committed GPU must be used to cost less than bursting."))
            .attribute(Attribute::computed("curve", curve_type()).describe("Total cost over the history for every whole count from 0 to the peak, to plot."))
            .attribute(Attribute::computed("price_source", Type::String).describe("Where looked-up prices came from (catalog source and date of each); null when every price was given.")),
    )
}

/// The arguments as typed values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Args {
    hourly_gpus: Tf<Vec<Tf<f64>>>,
    hourly_gpus_csv: Tf<String>,
    commit_usd_per_gpu_hour: Tf<f64>,
    burst_usd_per_gpu_hour: Tf<f64>,
    on_demand_usd_per_gpu_hour: Tf<f64>,
    spot_usd_per_gpu_hour: Tf<f64>,
    gpu_count: Tf<f64>,
    floor_percentile: Tf<f64>,
    burst_capacity: Tf<String>,
    cloud: Tf<String>,
    region: Tf<String>,
    gpu: Tf<String>,
    term: Tf<String>,
}

impl Args {
    /// Decodes `config`; a value off the schema reads as no arguments.
    fn of(config: &Value) -> Self {
        tfplugin::tf::decode(config).unwrap_or_default()
    }
}

/// `floor_percentile`: from 0 to 100.
fn percentile() -> Validator {
    Validator::with_detail(|name, v| {
        let p = v.as_number().map_or(f64::NAN, |n| n.as_f64());
        if (0.0..=100.0).contains(&p) {
            Ok(())
        } else {
            Err(format!(
                "`{name}` is {p}: a percentile from 0 (the minimum) to 100 (the peak)."
            ))
        }
    })
    .describe("Must be from 0 to 100.")
}

/// `cloud`: a cloud the catalog knows.
fn cloud() -> Validator {
    Validator::with_detail(|name, v| {
        let c = v.as_str().unwrap_or_default();
        match c.parse::<Cloud>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!(
                "`{name}` is {c:?}; valid: \"aws\", \"azure\", \"gcp\"."
            )),
        }
    })
    .describe("Must be `aws`, `azure` or `gcp`.")
}

/// `gpu`: a GPU model the catalog knows.
fn gpu() -> Validator {
    Validator::diagnosing(
        |path, v| match gpu_core::gpu::lookup(v.as_str().unwrap_or_default()) {
            Ok(_) => Vec::new(),
            Err(e) => {
                vec![Diagnostic::error("Unknown GPU", format!("`{path}`: {e}")).at(path.clone())]
            }
        },
    )
    .describe("Must be a GPU model the `gpu_models` data source lists (or one of its aliases).")
}

/// `term`: one or three years.
fn term() -> Validator {
    Validator::with_detail(|name, v| {
        let t = v.as_str().unwrap_or_default();
        if matches!(t.trim().to_ascii_lowercase().as_str(), "1y" | "3y") {
            Ok(())
        } else {
            Err(format!("`{name}` is {t:?}: write \"1y\" or \"3y\"."))
        }
    })
    .describe("Must be `1y` or `3y`.")
}

/// Checks what can be checked before the history is read.
pub fn validate(config: &Value) -> Diagnostics {
    let args = Args::of(config);
    let mut d = Diagnostics::new();
    if args.hourly_gpus.is_null() == args.hourly_gpus_csv.is_null() {
        d.push(
            Diagnostic::error(
                "Give one demand history",
                "Set exactly one of `hourly_gpus` (a list of numbers) and `hourly_gpus_csv` (CSV text).",
            )
            .at(AttributePath::attr("hourly_gpus")),
        );
    }
    let lookup = [&args.cloud, &args.region, &args.gpu].map(|t| !t.is_null());
    let can_look_up_rate = lookup.iter().all(|x| *x) && !args.term.is_null();
    if args.commit_usd_per_gpu_hour.is_null() && !can_look_up_rate {
        d.push(
            Diagnostic::error(
                "No commitment price",
                "Set `commit_usd_per_gpu_hour`, or `cloud`, `region`, `gpu` and `term` to look up the published commitment rate.",
            )
            .at(AttributePath::attr("commit_usd_per_gpu_hour")),
        );
    }
    if args.burst_usd_per_gpu_hour.is_null() && !lookup.iter().all(|x| *x) {
        d.push(
            Diagnostic::error(
                "No burst price",
                "Set `burst_usd_per_gpu_hour`, or `cloud`, `region` and `gpu` to look it up in the catalog.",
            )
            .at(AttributePath::attr("burst_usd_per_gpu_hour")),
        );
    }
    d
}

/// A catalog price per GPU-hour and where it came from.
struct Looked {
    usd: f64,
    source: String,
}

/// The cheapest price per GPU-hour of the configured GPU in the configured place.
fn look_up(args: &Args, catalog: &Catalog, spot: bool, fresh: &Freshness) -> Option<Looked> {
    let gpu = gpu_core::gpu::lookup(args.gpu.known()?).ok()?;
    let cloud: Cloud = args.cloud.known()?.parse().ok()?;
    let region = args.region.known()?;
    let q = OfferQuery {
        gpus: vec![gpu],
        gpu_count: args.gpu_count.known().map(|n| GpuCount::Exact(*n)),
        clouds: vec![cloud],
        regions: vec![region.to_string()],
        capacity: if spot {
            Capacity::Spot
        } else {
            Capacity::OnDemand
        },
        freshness: *fresh,
        ..OfferQuery::default()
    };
    let r = query::run(catalog, &q).ok()?;
    let best = r.items.first()?;
    let o = best.offer.origin(spot);
    Some(Looked {
        usd: best.price_per_gpu_hour,
        source: format!(
            "{} {} {} of {}: {}{}",
            if spot { "spot" } else { "on-demand" },
            cloud,
            region,
            best.offer.instance_type,
            o.source,
            o.as_of
                .as_deref()
                .map_or_else(|| " (undated)".to_string(), |d| format!(" ({d})"))
        ),
    })
}

/// The cheapest published commitment rate per GPU-hour of the configured GPU (and
/// `gpu_count`) in the configured cloud, region and term.
fn commit_rate(args: &Args, catalog: &Catalog) -> Option<Looked> {
    let gpu = gpu_core::gpu::lookup(args.gpu.known()?).ok()?;
    let cloud: Cloud = args.cloud.known()?.parse().ok()?;
    let region = args.region.known()?.trim().to_ascii_lowercase();
    let term = args.term.known()?.trim().to_ascii_lowercase();
    let count = args.gpu_count.known().copied();
    catalog
        .offers()
        .iter()
        .filter(|o| o.cloud == cloud && o.region == region && o.gpu.name == gpu.name)
        .filter(|o| count.is_none_or(|c| o.gpu_count == Some(c)))
        .filter_map(|o| {
            let gpus = o.gpu_count.filter(|g| *g >= 1.0)?;
            let rate = gpu_core::commitment::rates::lookup(
                cloud,
                &region,
                &o.instance_type,
                &term,
                "monthly",
            )?;
            let per_hour = rate.usd_per_hour(o.on_demand_usd_per_hour)?;
            Some(Looked {
                usd: per_hour / gpus,
                source: format!(
                    "{term} commitment {cloud} {region} of {}: {}{}",
                    o.instance_type,
                    rate.source,
                    rate.as_of
                        .as_deref()
                        .map_or_else(|| " (undated)".to_string(), |d| format!(" ({d})"))
                ),
            })
        })
        .min_by(|a, b| a.usd.total_cmp(&b.usd))
}

/// Computes the data source's result.
pub fn read(config: &Value, catalog: &Catalog, prices: Freshness) -> ReadDataSourceResponse {
    let diagnostics = super::all_checks(schema(), config, validate);
    if diagnostics.has_errors() {
        return diagnostics.into();
    }
    let fail = |attr: &str, summary: &str, detail: String| -> ReadDataSourceResponse {
        Diagnostics::from(Diagnostic::error(summary, detail).at(AttributePath::attr(attr))).into()
    };
    let args = Args::of(config);
    let hourly = match (&args.hourly_gpus, &args.hourly_gpus_csv) {
        (list, _) if !list.is_null() => list
            .known()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|v| v.known().copied().unwrap_or(f64::NAN))
            .collect(),
        (_, csv) if !csv.is_null() => {
            match commitment::parse_csv(csv.known().map(String::as_str).unwrap_or_default()) {
                Ok(v) => v,
                Err(e) => return fail("hourly_gpus_csv", "Invalid hourly_gpus_csv", e),
            }
        }
        _ => Vec::new(),
    };
    let fresh = prices;
    let given = |t: &Tf<f64>| t.known().copied();
    let mut sources = Vec::new();
    let mut price = |t: &Tf<f64>, spot: bool| {
        given(t).or_else(|| {
            let l = look_up(&args, catalog, spot, &fresh)?;
            sources.push(l.source);
            Some(l.usd)
        })
    };
    let on_demand = price(&args.on_demand_usd_per_gpu_hour, false);
    let spot = price(&args.spot_usd_per_gpu_hour, true);
    let burst_spot = args
        .burst_capacity
        .known()
        .is_some_and(|c| checks::canonical_capacity(c) == "spot");
    let burst = given(&args.burst_usd_per_gpu_hour).or(if burst_spot { spot } else { on_demand });
    let Some(burst) = burst else {
        return fail(
            "burst_usd_per_gpu_hour",
            "No burst price",
            format!(
                "the catalog has no {} price for this GPU in this cloud and region; set `burst_usd_per_gpu_hour`",
                if burst_spot { "spot" } else { "on-demand" }
            ),
        );
    };
    let commit = match given(&args.commit_usd_per_gpu_hour) {
        Some(c) => c,
        None => match commit_rate(&args, catalog) {
            Some(l) => {
                sources.push(l.source);
                l.usd
            }
            None => {
                return fail(
                    "commit_usd_per_gpu_hour",
                    "No commitment price",
                    "no published commitment rate for this GPU, cloud, region and term is vendored with the provider; set `commit_usd_per_gpu_hour` to the rate you were quoted".into(),
                );
            }
        },
    };
    let input = SizingInput {
        hourly_gpus: hourly,
        commit_usd_per_gpu_hour: commit,
        burst_usd_per_gpu_hour: burst,
        floor_percentile: given(&args.floor_percentile).unwrap_or(0.0),
        on_demand_usd_per_gpu_hour: on_demand,
        spot_usd_per_gpu_hour: spot,
    };
    let sizing = match commitment::size(&input) {
        Ok(s) => s,
        Err(e) => {
            let attr = match &e {
                commitment::SizingError::BadPrice { name, .. } => name,
                commitment::SizingError::BadPercentile(_) => "floor_percentile",
                _ if !args.hourly_gpus.is_null() => "hourly_gpus",
                _ => "hourly_gpus_csv",
            };
            return fail(attr, "Cannot size the commitment", e.to_string());
        }
    };
    let mut state = config.clone();
    if let Value::Object(m) = &mut state {
        m.insert(
            "commit_usd_per_gpu_hour".to_string(),
            Value::number(input.commit_usd_per_gpu_hour),
        );
    }
    for (k, v) in outputs(&sizing, &input, &sources) {
        if let Value::Object(m) = &mut state {
            m.insert(k.to_string(), v);
        }
    }
    ReadDataSourceResponse {
        state,
        diagnostics: Diagnostics::new(),
    }
}

/// A rounded number, or null.
pub fn num(x: Option<f64>) -> Value {
    x.map_or(Value::Null, |x| Value::number((x * 1e6).round() / 1e6))
}

/// The type of the cost curve: `(gpus, total_usd)` for every whole count.
pub fn curve_type() -> Type {
    Type::list(Type::object([
        ("gpus", Type::Number),
        ("total_usd", Type::Number),
    ]))
}

/// The cost curve of `s` as a value of [`curve_type`].
pub fn curve_value(s: &Sizing) -> Value {
    Value::List(
        s.curve
            .iter()
            .map(|(n, usd)| {
                Value::object([
                    ("gpus", Value::number(i64::from(*n))),
                    ("total_usd", num(Some(*usd))),
                ])
            })
            .collect(),
    )
}

/// One sized commitment as a value of [`commitment_type`].
pub fn commitment_value(c: &Commitment) -> Value {
    Value::object([
        ("gpus", Value::number(i64::from(c.gpus))),
        ("commit_usd", num(Some(c.commit_usd))),
        ("burst_usd", num(Some(c.burst_usd))),
        ("total_usd", num(Some(c.total_usd))),
        ("utilization", num(c.utilization)),
        ("savings_vs_on_demand_usd", num(c.savings_vs_on_demand_usd)),
        ("savings_vs_spot_usd", num(c.savings_vs_spot_usd)),
    ])
}

fn outputs(s: &Sizing, input: &SizingInput, sources: &[String]) -> Vec<(&'static str, Value)> {
    vec![
        ("hours", Value::number(s.hours as i64)),
        ("demand_gpu_hours", num(Some(s.demand_gpu_hours))),
        ("floor_gpus", Value::number(i64::from(s.floor.gpus))),
        ("optimal_gpus", Value::number(i64::from(s.optimal.gpus))),
        ("floor", commitment_value(&s.floor)),
        ("optimal", commitment_value(&s.optimal)),
        ("all_on_demand_usd", num(s.all_on_demand_usd)),
        ("all_spot_usd", num(s.all_spot_usd)),
        (
            "break_even_utilization",
            num(Some(s.break_even_utilization)),
        ),
        ("curve", curve_value(s)),
        (
            "burst_usd_per_gpu_hour",
            num(Some(input.burst_usd_per_gpu_hour)),
        ),
        (
            "on_demand_usd_per_gpu_hour",
            num(input.on_demand_usd_per_gpu_hour),
        ),
        ("spot_usd_per_gpu_hour", num(input.spot_usd_per_gpu_hour)),
        (
            "price_source",
            if sources.is_empty() {
                Value::Null
            } else {
                Value::string(sources.join("; "))
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: Vec<(&str, Value)>) -> Value {
        crate::model_values::object_of(&schema(), pairs)
    }

    fn nums(v: &[f64]) -> Value {
        Value::List(v.iter().map(|x| Value::number(*x)).collect())
    }

    #[test]
    fn sizes_a_given_history_and_prices() {
        let mut hourly = vec![4.0; 75];
        hourly.extend([10.0; 25]);
        let c = config(vec![
            ("hourly_gpus", nums(&hourly)),
            ("commit_usd_per_gpu_hour", Value::number(1.0)),
            ("burst_usd_per_gpu_hour", Value::number(2.0)),
        ]);
        let r = read(&c, Catalog::embedded(), Freshness::any());
        assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
        let s = &r.state;
        let n = |v: &Value, k: &str| v.get_attr(k).and_then(Value::as_number).map(|n| n.as_f64());
        assert_eq!(n(s, "optimal_gpus"), Some(4.0));
        assert_eq!(n(s, "break_even_utilization"), Some(0.5));
        assert_eq!(n(s.get_attr("optimal").unwrap(), "total_usd"), Some(700.0));
        assert!(
            s.get_attr("all_on_demand_usd").unwrap().is_null(),
            "unknown stays unknown"
        );
        assert!(s.get_attr("price_source").unwrap().is_null());
        assert_eq!(
            s.get_attr("curve")
                .and_then(Value::as_elements)
                .map(|c| c.len()),
            Some(11)
        );
    }

    #[test]
    fn looks_up_the_published_commitment_rate_for_a_term() {
        let base = vec![
            (
                "hourly_gpus",
                Value::List(vec![Value::number(8.0), Value::number(16.0)]),
            ),
            ("cloud", Value::string("gcp")),
            ("region", Value::string("us-central1")),
            ("gpu", Value::string("H100")),
            ("gpu_count", Value::number(8.0)),
        ];
        let mut one = base.clone();
        one.push(("term", Value::string("1y")));
        let mut three = base.clone();
        three.push(("term", Value::string("3y")));
        let rate = |c| {
            let r = read(&config(c), Catalog::embedded(), Freshness::any());
            assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
            let src = r
                .state
                .get_attr("price_source")
                .and_then(Value::as_str)
                .unwrap()
                .to_string();
            (
                r.state
                    .get_attr("commit_usd_per_gpu_hour")
                    .and_then(Value::as_number)
                    .unwrap()
                    .as_f64(),
                src,
            )
        };
        let (y1, src) = rate(one);
        let (y3, _) = rate(three);
        // commitment_rates.csv: a3-highgpu-8g us-central1 is $61.38 (1y), $38.86 (3y) an hour.
        assert!((y1 - 61.38 / 8.0).abs() < 0.01, "{y1}");
        assert!((y3 - 38.86 / 8.0).abs() < 0.01, "{y3}");
        assert!(
            src.contains("1y commitment gcp us-central1 of a3-highgpu-8g"),
            "{src}"
        );
        // No term and no price: named on commit_usd_per_gpu_hour.
        let d = validate(&config(base));
        assert!(
            format!("{d:?}").contains("commit_usd_per_gpu_hour"),
            "{d:?}"
        );
    }

    #[test]
    fn looks_up_burst_on_demand_and_spot_prices_in_the_catalog() {
        let c = config(vec![
            (
                "hourly_gpus_csv",
                Value::string("hour,gpus\n1,16\n2,24\n3,8\n"),
            ),
            ("commit_usd_per_gpu_hour", Value::number(2.0)),
            ("cloud", Value::string("aws")),
            ("region", Value::string("us-east-1")),
            ("gpu", Value::string("h100")),
            ("gpu_count", Value::number(8.0)),
        ]);
        let r = read(&c, Catalog::embedded(), Freshness::any());
        assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
        let s = &r.state;
        let od = s
            .get_attr("on_demand_usd_per_gpu_hour")
            .and_then(Value::as_number)
            .unwrap();
        let burst = s
            .get_attr("burst_usd_per_gpu_hour")
            .and_then(Value::as_number)
            .unwrap();
        assert_eq!(od.as_f64(), burst.as_f64(), "burst defaults to on-demand");
        assert!(od.as_f64() > 2.0);
        let src = s.get_attr("price_source").and_then(Value::as_str).unwrap();
        assert!(src.contains("on-demand aws us-east-1 of p5"), "{src}");
        assert_eq!(
            s.get_attr("hours")
                .and_then(Value::as_number)
                .map(|n| n.as_f64()),
            Some(3.0)
        );
    }

    #[test]
    fn bad_input_names_the_attribute() {
        let errs = |c: &Value| -> Vec<String> {
            let r = read(c, Catalog::embedded(), Freshness::any());
            r.diagnostics
                .0
                .iter()
                .filter(|d| d.is_error())
                .map(|d| {
                    d.attribute
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default()
                })
                .collect()
        };
        let base = |extra: Vec<(&str, Value)>| {
            let mut pairs = vec![
                ("hourly_gpus", nums(&[1.0, 2.0])),
                ("commit_usd_per_gpu_hour", Value::number(1.0)),
                ("burst_usd_per_gpu_hour", Value::number(2.0)),
            ];
            pairs.extend(extra);
            config(pairs)
        };
        assert_eq!(
            errs(&base(vec![("hourly_gpus_csv", Value::string("1"))])),
            ["hourly_gpus"]
        );
        assert_eq!(
            errs(&base(vec![("floor_percentile", Value::number(150.0))])),
            ["floor_percentile"]
        );
        assert_eq!(
            errs(&base(vec![("hourly_gpus", nums(&[1.0, -1.0]))])),
            ["hourly_gpus"]
        );
        assert_eq!(
            errs(&base(vec![("burst_capacity", Value::string("reserved"))])),
            ["burst_capacity"]
        );
        let no_burst = config(vec![
            ("hourly_gpus", nums(&[1.0])),
            ("commit_usd_per_gpu_hour", Value::number(1.0)),
        ]);
        assert_eq!(errs(&no_burst), ["burst_usd_per_gpu_hour"]);
        let csv = config(vec![
            ("hourly_gpus_csv", Value::string("1\nlots\n")),
            ("commit_usd_per_gpu_hour", Value::number(1.0)),
            ("burst_usd_per_gpu_hour", Value::number(2.0)),
        ]);
        assert_eq!(errs(&csv), ["hourly_gpus_csv"]);
    }
}
