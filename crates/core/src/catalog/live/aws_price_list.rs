//! AWS on-demand prices from the public bulk price list, one file per region:
//! `GET {endpoint}/offers/v1.0/aws/AmazonEC2/current/{region}/index.json`.
//!
//! The file holds `products.{sku}.attributes` (`instanceType`, `operatingSystem`,
//! `tenancy`, `preInstalledSw`, `capacitystatus`, `licenseModel`, `operation`,
//! `regionCode` …) and `terms.OnDemand.{sku}.{offerTermCode}.priceDimensions.{rateCode}`
//! with `unit` and `pricePerUnit.USD`. A product counts if its type is a catalog GPU type
//! of the region, Linux, `Shared` tenancy, no pre-installed software (`NA`), capacity
//! status `Used`, and (where given) license `No License required` and operation
//! `RunInstances`.
//!
//! Memory stays bounded although the files are gigabytes: the body is parsed as it
//! downloads (serde `DeserializeSeed` visitors over a blocking reader fed through a
//! bounded channel of [`CHANNEL_CHUNKS`] chunks, see [`super::body_reader`]); every
//! product and term not kept is skipped with `IgnoredAny` without being built. What is
//! kept is one entry per matching product SKU and one price per type. AWS writes
//! `products` before `terms`; should a file have them the other way round, the parser
//! keeps one `(sku, price)` pair per on-demand term until products arrive — still far
//! smaller than the file, but not constant.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::BufReader;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::body_reader::{self, Chunk};
use super::cache::fingerprint;
use super::error::{LiveError, redact_url};
use super::quote::{Fetched, PriceKind, Quote};
use super::report::{ProgressEvent, SourceId};
use super::scope::{Ctx, SourceRun};
use super::wanted::Wanted;

/// Body chunks buffered between download and parser.
pub const CHANNEL_CHUNKS: usize = 16;
/// Progress is reported once per this many bytes downloaded.
const PROGRESS_STEP: u64 = 8 << 20;

/// The URL of `region`'s EC2 price list file.
pub fn region_url(endpoint: &str, region: &str) -> String {
    format!(
        "{}/offers/v1.0/aws/AmazonEC2/current/{region}/index.json",
        endpoint.trim_end_matches('/')
    )
}

/// Refreshes AWS on-demand prices of `wanted`, one cached scope per region.
pub async fn run(ctx: &Ctx<'_>, wanted: &Wanted) -> SourceRun {
    let source = SourceId::AwsPriceList;
    let mut run = SourceRun::new(source);
    (ctx.progress)(ProgressEvent::SourceStarted {
        source,
        scopes: wanted.regions.len(),
    });
    for region in &wanted.regions {
        let types = wanted.types_in(region);
        let fp = fingerprint(
            types
                .iter()
                .map(String::as_str)
                .chain([ctx.cfg.endpoints.aws_price_list.as_str()]),
        );
        run.scope(ctx, region, &fp, async || {
            fetch_region(ctx, region, types.clone()).await
        })
        .await;
    }
    run
}

async fn fetch_region(
    ctx: &Ctx<'_>,
    region: &str,
    types: BTreeSet<String>,
) -> Result<Fetched, LiveError> {
    let url = region_url(&ctx.cfg.endpoints.aws_price_list, region);
    let mut resp = ctx.http.get_stream(&url).await?;
    let of = resp
        .content_length()
        .map(|n| n.div_ceil(PROGRESS_STEP) as usize);
    let (tx, reader) = body_reader::channel(CHANNEL_CHUNKS);
    let want_region = region.to_string();
    let parser =
        tokio::task::spawn_blocking(move || parse(BufReader::new(reader), &types, &want_region));
    let (mut seen, mut step) = (0u64, 0usize);
    loop {
        let chunk: Chunk = match resp.chunk().await {
            Ok(Some(bytes)) => Ok(Vec::from(bytes)),
            Ok(None) => break,
            Err(e) => Err(std::io::Error::other(format!(
                "body cut short: {}",
                e.without_url()
            ))),
        };
        let failed = chunk.is_err();
        seen += chunk.as_ref().map_or(0, |c| c.len() as u64);
        // The parser hung up: it has failed (or finished) and will say why.
        if tx.send(chunk).await.is_err() || failed {
            break;
        }
        if seen / PROGRESS_STEP > step as u64 {
            step = (seen / PROGRESS_STEP) as usize;
            (ctx.progress)(ProgressEvent::PageFetched {
                source: SourceId::AwsPriceList,
                scope: region.to_string(),
                page: step,
                of,
            });
        }
    }
    drop(tx);
    let prices = parser
        .await
        .map_err(|e| LiveError::Task(e.to_string()))?
        .map_err(|e| LiveError::Decode {
            url: redact_url(&url),
            message: e.to_string(),
        })?;
    let quotes = prices
        .into_iter()
        .map(|(instance_type, usd_per_hour)| Quote {
            region: region.to_string(),
            zone: None,
            instance_type,
            kind: PriceKind::OnDemand,
            usd_per_hour,
        })
        .collect();
    Ok(Fetched { quotes, pages: 1 })
}

/// Parses a price list file from `reader`: on-demand USD/hour per kept instance type.
pub fn parse<R: std::io::Read>(
    reader: R,
    types: &BTreeSet<String>,
    region: &str,
) -> Result<Vec<(String, f64)>, serde_json::Error> {
    let mut state = State {
        types,
        region,
        products_seen: false,
        skus: HashMap::new(),
        early: HashMap::new(),
        prices: HashMap::new(),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    FileSeed(&mut state).deserialize(&mut de)?;
    de.end()?;
    if !state.early.is_empty() {
        let early = std::mem::take(&mut state.early);
        for (sku, price) in early {
            state.record(&sku, price);
        }
    }
    let mut out: Vec<(String, f64)> = state.prices.into_iter().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// What the visitors accumulate.
struct State<'a> {
    types: &'a BTreeSet<String>,
    region: &'a str,
    products_seen: bool,
    /// Kept product SKU → instance type.
    skus: HashMap<String, String>,
    /// On-demand prices met before `products` (unusual order), by SKU.
    early: HashMap<String, f64>,
    /// Instance type → price.
    prices: HashMap<String, f64>,
}

impl State<'_> {
    fn record(&mut self, sku: &str, price: f64) {
        if let Some(t) = self.skus.get(sku) {
            let slot = self.prices.entry(t.clone()).or_insert(price);
            *slot = slot.min(price);
        }
    }
}

/// The attributes a product is judged by.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Attributes {
    instance_type: Option<String>,
    operating_system: Option<String>,
    tenancy: Option<String>,
    pre_installed_sw: Option<String>,
    #[serde(rename = "capacitystatus")]
    capacity_status: Option<String>,
    license_model: Option<String>,
    operation: Option<String>,
    region_code: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Product {
    #[serde(default)]
    attributes: Option<Attributes>,
}

impl Attributes {
    /// The instance type if this is a plain Linux, shared, on-demand product we want.
    fn kept(self, types: &BTreeSet<String>, region: &str) -> Option<String> {
        let is = |v: &Option<String>, want: &str| v.as_deref() == Some(want);
        let absent_or = |v: &Option<String>, want: &str| v.as_deref().is_none_or(|x| x == want);
        let t = self.instance_type?;
        (types.contains(&t)
            && is(&self.operating_system, "Linux")
            && is(&self.tenancy, "Shared")
            && is(&self.pre_installed_sw, "NA")
            && is(&self.capacity_status, "Used")
            && absent_or(&self.license_model, "No License required")
            && absent_or(&self.operation, "RunInstances")
            && absent_or(&self.region_code, region))
        .then_some(t)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Term {
    #[serde(default)]
    price_dimensions: HashMap<String, Dimension>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Dimension {
    #[serde(default)]
    unit: String,
    #[serde(default)]
    price_per_unit: HashMap<String, String>,
}

impl Term {
    /// The lowest positive hourly USD price of the term's dimensions.
    fn hourly_usd(&self) -> Option<f64> {
        self.price_dimensions
            .values()
            .filter(|d| d.unit == "Hrs")
            .filter_map(|d| d.price_per_unit.get("USD")?.trim().parse::<f64>().ok())
            .filter(|p| *p > 0.0 && p.is_finite())
            .min_by(f64::total_cmp)
    }
}

/// Defines a map-visiting seed over `State` with one body per entry.
macro_rules! map_seed {
    ($name:ident, $expect:literal, |$state:ident, $map:ident, $key:ident| $body:block) => {
        struct $name<'s, 'a>(&'s mut State<'a>);

        impl<'de> DeserializeSeed<'de> for $name<'_, '_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_map(self)
            }
        }

        impl<'de> Visitor<'de> for $name<'_, '_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($expect)
            }
            fn visit_map<M: MapAccess<'de>>(self, mut $map: M) -> Result<(), M::Error> {
                let $state = self.0;
                while let Some($key) = $map.next_key::<String>()? $body
                Ok(())
            }
        }
    };
}

map_seed!(FileSeed, "an AWS price list file", |state, map, key| {
    match key.as_str() {
        "products" => {
            map.next_value_seed(ProductsSeed(state))?;
            state.products_seen = true;
        }
        "terms" => map.next_value_seed(TermsSeed(state))?,
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

map_seed!(ProductsSeed, "the products map", |state, map, sku| {
    let product: Product = map.next_value()?;
    if let Some(t) = product
        .attributes
        .and_then(|a| a.kept(state.types, state.region))
    {
        state.skus.insert(sku, t);
    }
});

map_seed!(TermsSeed, "the terms map", |state, map, key| {
    if key == "OnDemand" {
        map.next_value_seed(OnDemandSeed(state))?;
    } else {
        map.next_value::<IgnoredAny>()?;
    }
});

map_seed!(OnDemandSeed, "the on-demand terms", |state, map, sku| {
    if state.products_seen && !state.skus.contains_key(&sku) {
        map.next_value::<IgnoredAny>()?;
        continue;
    }
    let terms: HashMap<String, Term> = map.next_value()?;
    if let Some(price) = terms
        .values()
        .filter_map(Term::hourly_usd)
        .min_by(f64::total_cmp)
    {
        if state.products_seen {
            state.record(&sku, price);
        } else {
            state.early.insert(sku, price);
        }
    }
});
