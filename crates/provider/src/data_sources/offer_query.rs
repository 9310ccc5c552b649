//! The filter arguments shared by `gpu_spot_offer` and `gpu_offers`, their checks, and the
//! mapping onto `gpu_core::query::OfferQuery`; plus the offer record both data sources
//! (and the CLI) return, so that every surface uses the same field names.

use crate::checks;
use gpu_core::availability::Scores;
use gpu_core::freshness::Freshness;
use gpu_core::offer::{Cloud, OfferKey};
use gpu_core::query::{
    Capacity, EmptyResult, Filter, GpuCount, OfferQuery, PricedOffer, QueryError,
};
use gpu_core::time::today_days;
use serde::{Deserialize, Serialize};
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::validators::Validator;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Tf, Type, Value};

/// Valid `capacity` values.
pub const CAPACITIES: &[&str] = &["spot", "on_demand", "either"];

/// The filter attributes (all optional).
pub fn filter_attributes() -> Vec<Attribute> {
    vec![
        Attribute::optional("gpu", Type::String).describe("GPU model, e.g. `H100`, `A100-80GB`, `L4` (case-insensitive; cloud aliases such as `nvidia-h100-80gb` work too). See the `gpu_models` data source for the names.").validate(checks::gpu_model()),
        Attribute::optional("gpus", Type::list(Type::String)).describe("Several acceptable GPU models (instead of `gpu`).").validate(checks::gpu_model().each()),
        Attribute::optional("gpu_count", Type::Number).describe("Exactly this many GPUs per instance (conflicts with `min_gpu_count`).").validate(checks::positive()),
        Attribute::optional("min_gpu_count", Type::Number).describe("At least this many GPUs per instance.").validate(checks::positive()),
        Attribute::optional("min_gpu_memory_gib", Type::Number).describe("At least this much memory per GPU, in GiB.").validate(checks::non_negative()),
        Attribute::optional("clouds", Type::list(Type::String)).describe("Clouds to search. Default: all.").validate(checks::one_of(&cloud_words()).each()),
        Attribute::optional("regions", Type::list(Type::String)).describe("Region globs, e.g. `[\"us-*\", \"europe-west4\"]`, or the region groups `europe`, `us` and `asia`, which stand for every region of each cloud there (Azure's by name; `asia` is India to Japan, without Australia). Default: all.").validate(glob("regions").each()),
        Attribute::optional("zones", Type::list(Type::String)).describe("Zone globs. Offers without a zone only match when this is unset.").validate(glob("zones").each()),
        Attribute::optional("capacity", Type::String).describe("Spot capacity, on-demand, or either.").validate(checks::capacity_word(CAPACITIES)),
        Attribute::optional("max_price_per_gpu_hour", Type::Number).describe("Only offers at or below this price per GPU-hour, in USD.").validate(checks::non_negative()),
        Attribute::optional("min_vcpus", Type::Number).describe("At least this many vCPUs per instance.").validate(checks::non_negative()),
        Attribute::optional("min_memory_gib", Type::Number).describe("At least this much instance memory, in GiB.").validate(checks::non_negative()),
        Attribute::optional("exclude_instance_types", Type::list(Type::String)).describe("Instance type globs to leave out, e.g. `[\"g4dn.*\"]`.").validate(glob("exclude_instance_types").each()),
        Attribute::optional("live", Type::Bool).describe("Refresh prices from the clouds' price APIs before answering: Azure Retail Prices (public), Google Cloud Billing Catalog (API key in `GOOGLE_CLOUD_BILLING_API_KEY`), AWS bulk price list (public; one large file per region, so set `regions`) and AWS spot price history (the usual AWS credentials). Answers are cached on disk for 6 hours. A source that fails or is skipped leaves the embedded snapshot's prices, with a warning. Default false: offline, embedded snapshot only."),
        Attribute::optional("min_saving_percent", Type::Number).describe("With `prefer`: the saving, in percent per GPU-hour, needed to move away from the current choice. Default 0.").validate(checks::non_negative()),
        Attribute::optional("max_price_age", Type::String).describe("Only prices at most this old, such as `\"365d\"` or `\"52w\"`; undated prices are left out too. Default: the provider's `max_price_age`, else every price (each answer says how old its price is).").validate(checks::price_age()),
        Attribute::optional("include_stale_prices", Type::Bool).describe("Rank prices on the vendored stale list too (AWS P4/P5 prices from before the 2025 price cut); each such offer's `stale_reason` says why. Default: the provider's `include_stale_prices`, else `false` (left out)."),
    ]
    .into_iter()
    .chain(super::availability_args::input_attributes())
    .collect()
}

/// The filter blocks: `prefer` (a block, not a nested attribute: Terraform 1.0 crashes on
/// null nested attributes in data source state).
pub fn filter_blocks() -> Vec<NestedBlock> {
    vec![NestedBlock::single(
        "prefer",
        Block::new("The current choice (hysteresis): it stays first unless another offer is cheaper per GPU-hour by at least `min_saving_percent`, so pools fed by this data source do not flap between clouds on small price moves.")
            .attribute(Attribute::required("cloud", Type::String).describe("Cloud of the current choice.").validate(prefer_cloud()))
            .attribute(Attribute::required("region", Type::String).describe("Region of the current choice."))
            .attribute(Attribute::optional("zone", Type::String).describe("Zone of the current choice, if it has one."))
            .attribute(Attribute::required("instance_type", Type::String).describe("Instance type of the current choice."))
            .attribute(Attribute::required("spot", Type::Bool).describe("Whether the current choice is spot capacity.")),
    )]
}

/// The attributes of one offer, as returned by both data sources.
pub fn offer_attributes() -> Vec<(&'static str, Type, &'static str)> {
    vec![
        ("cloud", Type::String, "Cloud of the offer."),
        ("region", Type::String, "Region of the offer."),
        (
            "zone",
            Type::String,
            "Zone of the offer (null when the price is for the whole region).",
        ),
        (
            "instance_type",
            Type::String,
            "Instance type (VM size, machine type).",
        ),
        ("gpu", Type::String, "Canonical GPU model name."),
        (
            "gpu_count",
            Type::Number,
            "GPUs per instance (fractional for partial-GPU sizes).",
        ),
        (
            "gpu_memory_gib",
            Type::Number,
            "Memory per GPU in GiB, as the cloud reports it (null if unknown).",
        ),
        (
            "vcpus",
            Type::Number,
            "vCPUs per instance (null if unknown).",
        ),
        (
            "memory_gib",
            Type::Number,
            "Instance memory in GiB (null if unknown).",
        ),
        (
            "spot",
            Type::Bool,
            "True for spot capacity, false for on-demand.",
        ),
        ("price_per_hour", Type::Number, "USD per instance-hour."),
        ("price_per_gpu_hour", Type::Number, "USD per GPU-hour."),
        (
            "source",
            Type::String,
            "Where this price (spot or on-demand, whichever the offer is) comes from: repository and file of the catalog source, or the live API and its fetch date.",
        ),
        (
            "as_of",
            Type::String,
            "Date of this price (null when its source is undated).",
        ),
        (
            "price_age_days",
            Type::Number,
            "Whole days from `as_of` to today (UTC); null when the price is undated.",
        ),
        (
            "stale_reason",
            Type::String,
            "Why this price is on the vendored stale list (null when it is not): such a price is ranked only with `include_stale_prices = true`.",
        ),
    ]
    .into_iter()
    .chain(super::availability_args::output_fields())
    .collect()
}

/// The cty object type of one offer.
pub fn offer_type() -> Type {
    Type::object(offer_attributes().into_iter().map(|(n, t, _)| (n, t)))
}

/// One offer, with the field names of the data sources and the CLI's JSON.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OfferRecord {
    /// Cloud.
    pub cloud: String,
    /// Region.
    pub region: String,
    /// Zone, if the price is per zone.
    pub zone: Option<String>,
    /// Instance type.
    pub instance_type: String,
    /// GPU model.
    pub gpu: String,
    /// GPUs per instance.
    #[serde(serialize_with = "crate::json_numbers::whole")]
    pub gpu_count: f64,
    /// Memory per GPU.
    #[serde(serialize_with = "crate::json_numbers::whole_opt")]
    pub gpu_memory_gib: Option<f64>,
    /// vCPUs.
    #[serde(serialize_with = "crate::json_numbers::whole_opt")]
    pub vcpus: Option<f64>,
    /// Instance memory.
    #[serde(serialize_with = "crate::json_numbers::whole_opt")]
    pub memory_gib: Option<f64>,
    /// Spot or on-demand.
    pub spot: bool,
    /// USD per instance-hour.
    pub price_per_hour: f64,
    /// USD per GPU-hour.
    pub price_per_gpu_hour: f64,
    /// Price source.
    pub source: String,
    /// Price date.
    pub as_of: Option<String>,
    /// Days since `as_of`.
    pub price_age_days: Option<i64>,
    /// Why the price is on the stale list, if it is.
    pub stale_reason: Option<String>,
    /// How likely the place is to give the capacity, 0 to 1 (read with `live`).
    pub availability: Option<f64>,
    /// Where `availability` comes from.
    pub availability_source: Option<String>,
    /// The date of `availability`.
    pub availability_as_of: Option<String>,
}

impl OfferRecord {
    /// The record of a ranked offer, its price's age counted to `today` (days since 1970).
    pub fn of(p: &PricedOffer<'_>, today: i64) -> Self {
        let o = p.offer;
        let origin = o.origin(p.spot);
        OfferRecord {
            cloud: o.cloud.as_str().to_string(),
            region: o.region.clone(),
            zone: o.zone.clone(),
            instance_type: o.instance_type.clone(),
            gpu: o.gpu.name.to_string(),
            gpu_count: o.gpu_count.unwrap_or_default(),
            gpu_memory_gib: o.gpu_memory_gib,
            vcpus: o.vcpus,
            memory_gib: o.memory_gib,
            spot: p.spot,
            price_per_hour: p.price_per_hour,
            price_per_gpu_hour: p.price_per_gpu_hour,
            source: origin.source.clone(),
            as_of: origin.as_of.clone(),
            price_age_days: origin.age_days(today),
            stale_reason: origin.stale.clone(),
            availability: None,
            availability_source: None,
            availability_as_of: None,
        }
    }

    /// The record with the item's score from `scores`, if any.
    pub fn scored(mut self, p: &PricedOffer<'_>, scores: Option<&Scores>) -> Self {
        if let Some(a) = scores.and_then(|s| s.of_item(p)) {
            self.availability = Some(a.score);
            self.availability_source = Some(a.source.clone());
            self.availability_as_of = Some(a.as_of.clone());
        }
        self
    }

    /// The record as a cty value of [`offer_type`].
    pub fn to_value(&self) -> Value {
        tfplugin::value::to_value(self, &offer_type()).unwrap_or(Value::Null)
    }
}

/// The filter arguments as typed values (any data source's configuration that has them).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Filters {
    /// `gpu`.
    pub gpu: Tf<String>,
    /// `gpus`.
    pub gpus: Tf<Vec<Tf<String>>>,
    /// `gpu_count`.
    pub gpu_count: Tf<f64>,
    /// `min_gpu_count`.
    pub min_gpu_count: Tf<f64>,
    /// `min_gpu_memory_gib`.
    pub min_gpu_memory_gib: Tf<f64>,
    /// `clouds`.
    pub clouds: Tf<Vec<Tf<String>>>,
    /// `regions`.
    pub regions: Tf<Vec<Tf<String>>>,
    /// `zones`.
    pub zones: Tf<Vec<Tf<String>>>,
    /// `capacity`.
    pub capacity: Tf<String>,
    /// `max_price_per_gpu_hour`.
    pub max_price_per_gpu_hour: Tf<f64>,
    /// `min_vcpus`.
    pub min_vcpus: Tf<f64>,
    /// `min_memory_gib`.
    pub min_memory_gib: Tf<f64>,
    /// `exclude_instance_types`.
    pub exclude_instance_types: Tf<Vec<Tf<String>>>,
    /// `min_saving_percent`.
    pub min_saving_percent: Tf<f64>,
    /// `max_price_age`.
    pub max_price_age: Tf<String>,
    /// `include_stale_prices`.
    pub include_stale_prices: Tf<bool>,
    /// `live`.
    pub live: Tf<bool>,
    /// The `prefer` block.
    pub prefer: Tf<Prefer>,
}

/// The `prefer` block: the current choice.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Prefer {
    /// `cloud`.
    pub cloud: Tf<String>,
    /// `region`.
    pub region: Tf<String>,
    /// `zone`.
    pub zone: Tf<String>,
    /// `instance_type`.
    pub instance_type: Tf<String>,
    /// `spot`.
    pub spot: Tf<bool>,
}

impl Filters {
    /// Decodes the filter arguments of `config`; a value off the schema reads as none.
    pub fn of(config: &Value) -> Self {
        tfplugin::tf::decode(config).unwrap_or_default()
    }
}

/// Static checks of the filter arguments; unknown values are skipped.
pub fn validate(config: &Value) -> Diagnostics {
    let f = Filters::of(config);
    let mut d = Diagnostics::new();
    if !f.gpu.is_null() && !f.gpus.is_null() {
        d.attr_error(
            AttributePath::attr("gpus"),
            "Conflicting arguments",
            "Set either `gpu` (one model) or `gpus` (several), not both.",
        );
    }
    if !f.gpu_count.is_null() && !f.min_gpu_count.is_null() {
        d.attr_error(
            AttributePath::attr("min_gpu_count"),
            "Conflicting arguments",
            "Set either `gpu_count` (exact) or `min_gpu_count` (at least), not both.",
        );
    }
    d
}

/// The filter attributes and blocks as one block, for their attached checks.
fn filter_block() -> Block {
    let mut block = Block::new("");
    block.attributes = filter_attributes();
    block.blocks = filter_blocks();
    block
}

/// The clouds the catalog knows, as written.
fn cloud_words() -> Vec<&'static str> {
    Cloud::ALL.iter().map(|c| c.as_str()).collect()
}

/// A glob pattern (an element of the list attribute `attr`).
fn glob(attr: &'static str) -> Validator {
    Validator::diagnosing(move |path, v| {
        let pattern = v.as_str().unwrap_or_default();
        match glob::Pattern::new(pattern) {
            Ok(_) => Vec::new(),
            Err(err) => vec![Diagnostic::error(format!("Invalid {attr} pattern"), format!("{pattern:?} is not a valid glob: {err}. Use `*` for any text and `?` for one character.")).at(path.clone())],
        }
    })
    .describe("Each must be a glob: `*` for any text, `?` for one character.")
}

/// `prefer.cloud` is a cloud the catalog knows.
fn prefer_cloud() -> Validator {
    Validator::with_detail(|_, v| {
        let cloud = v.as_str().unwrap_or_default();
        if cloud.parse::<Cloud>().is_ok() {
            Ok(())
        } else {
            Err(format!(
                "{cloud:?} is not a cloud; valid values are: {}.",
                cloud_words().join(", ")
            ))
        }
    })
    .describe(format!(
        "Must be one of {}.",
        cloud_words()
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Builds the core query from a wholly known configuration, with `default_capacity` for an
/// unset `capacity`, and `prices` (the provider's) for an unset `max_price_age` or
/// `include_stale_prices`.
/// Errors name the attribute.
pub fn build(
    config: &Value,
    default_capacity: Capacity,
    prices: Freshness,
) -> Result<OfferQuery, Diagnostics> {
    let mut d = filter_block().check(config);
    d.extend(validate(config));
    if d.has_errors() {
        return Err(d);
    }
    let f = Filters::of(config);
    let mut names = crate::model_values::strings(&f.gpus).unwrap_or_default();
    if let Some(g) = f.gpu.known() {
        names.push(g.clone());
    }
    let mut query = OfferQuery::default()
        .with_gpu_names(&names)
        .map_err(query_error)?;
    query.gpu_count = f
        .gpu_count
        .known()
        .map(|n| GpuCount::Exact(*n))
        .or_else(|| f.min_gpu_count.known().map(|n| GpuCount::AtLeast(*n)));
    query.min_vram_gib = f.min_gpu_memory_gib.known().copied();
    query.clouds = crate::model_values::strings(&f.clouds)
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c.parse().ok())
        .collect();
    query.regions = crate::model_values::strings(&f.regions).unwrap_or_default();
    query.zones = crate::model_values::strings(&f.zones).unwrap_or_default();
    let capacity = f.capacity.known().map(|c| checks::canonical_capacity(c));
    query.capacity = match capacity.as_deref() {
        Some("spot") => Capacity::Spot,
        Some("on_demand") => Capacity::OnDemand,
        Some(_) => Capacity::Either,
        None => default_capacity,
    };
    query.max_price_per_gpu_hour = f.max_price_per_gpu_hour.known().copied();
    query.min_vcpus = f.min_vcpus.known().copied();
    query.min_memory_gib = f.min_memory_gib.known().copied();
    query.exclude_instance_types =
        crate::model_values::strings(&f.exclude_instance_types).unwrap_or_default();
    query.min_saving_percent = f.min_saving_percent.known().copied().unwrap_or(0.0);
    let age = f.max_price_age.known().and_then(|s| s.parse().ok());
    query.freshness = prices.overridden(age, f.include_stale_prices.known().copied());
    query.prefer_available = super::availability_args::threshold(config);
    if let Some(p) = f.prefer.known()
        && let Some(cloud) = p.cloud.known().and_then(|c| c.parse().ok())
    {
        query.prefer = Some(OfferKey {
            cloud,
            region: p.region.known().cloned().unwrap_or_default(),
            zone: p.zone.known().cloned(),
            instance_type: p.instance_type.known().cloned().unwrap_or_default(),
            spot: p.spot.known().copied().unwrap_or(false),
        });
    }
    Ok(query)
}

/// The data source attribute a core query field comes from.
fn attribute_of(field: &str, config: &Value) -> String {
    let f = Filters::of(config);
    match field {
        "gpus" if !f.gpu.is_null() => "gpu".into(),
        "gpu_count" if !f.min_gpu_count.is_null() => "min_gpu_count".into(),
        "min_vram_gib" => "min_gpu_memory_gib".into(),
        other => other.into(),
    }
}

/// Core query errors as diagnostics on the attributes they concern.
pub fn query_error(e: QueryError) -> Diagnostics {
    match e {
        QueryError::Invalid(fields) => Diagnostics(
            fields
                .into_iter()
                .map(|f| {
                    Diagnostic::error(format!("Invalid {}", f.field), f.to_string())
                        .at(AttributePath::attr(f.field.clone()))
                })
                .collect(),
        ),
        QueryError::Gpu { index, source } => {
            Diagnostic::error("Unknown GPU model", source.to_string())
                .at(AttributePath::attr("gpus").then_index(index as i64))
                .into()
        }
    }
}

/// The error for a query that matched nothing: which filter emptied it, and the nearest
/// offers.
pub fn no_match(empty: &EmptyResult<'_>, config: &Value) -> Diagnostic {
    let Some(filter) = &empty.filter else {
        return Diagnostic::error("No GPU offer matches", "The catalog has no offers.");
    };
    let attr = attribute_of(filter.field(), config);
    let before = if empty.first_filter {
        format!(
            "the catalog has {} offers, and none passes it",
            empty.matched_before
        )
    } else {
        format!(
            "{} offers passed the filters before it",
            empty.matched_before
        )
    };
    let mut detail = format!("No offer is left after the `{attr}` filter: {before}.");
    if !empty.nearest.is_empty() {
        detail.push_str("\n\nNearest offers:");
        for n in &empty.nearest {
            let failed: Vec<String> = n
                .failed
                .iter()
                .map(|f: &Filter| attribute_of(f.field(), config))
                .collect();
            let r = OfferRecord::of(&n.item, today_days());
            detail.push_str(&format!(
                "\n  - {} {} {}{} {}x{} {} at ${:.4}/GPU-hour (fails: {})",
                r.cloud,
                r.region,
                r.zone.map(|z| format!("{z} ")).unwrap_or_default(),
                r.instance_type,
                r.gpu_count,
                r.gpu,
                if r.spot { "spot" } else { "on-demand" },
                r.price_per_gpu_hour,
                failed.join(", ")
            ));
        }
    }
    Diagnostic::error("No GPU offer matches", detail).at(AttributePath::attr(attr))
}
