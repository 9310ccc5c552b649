//! Google Cloud Billing Catalog API: on-demand and spot prices of the catalog's GPU
//! machine types, composed from per-vCPU, per-GiB and per-GPU SKUs ([`super::gcp_parts`]).
//!
//! `GET {endpoint}/v1/services/6F81-5844-456A/skus?key=API_KEY&currencyCode=USD`
//! (Compute Engine), paged with `pageToken` / `nextPageToken`. Each SKU has
//! `description`, `category.usageType` (`OnDemand` → on-demand, `Preemptible` → spot,
//! others skipped), `serviceRegions`, and `pricingInfo[].pricingExpression` with
//! `usageUnit` (`h`; RAM `GiBy.h`, or `GBy.h` converted to GiB) and
//! `tieredRates[].unitPrice {units, nanos}` (the tier starting at 0 is used). Where SKUs
//! overlap for a region, the one naming fewer regions wins, then the higher price (so a
//! broad SKU never understates a regional one). The API key comes from
//! [`super::LiveConfig::gcp_api_key`] or `GOOGLE_CLOUD_BILLING_API_KEY`; without one the
//! source is skipped with a warning. The key is never written to the cache or messages.

use std::collections::HashMap;

use serde::Deserialize;

use super::cache::fingerprint;
use super::config::{ApiKey, GCP_API_KEY_ENV};
use super::error::{LiveError, redact_url};
use super::gcp_parts::{Part, UnitPrices, compose, match_description};
use super::quote::{Fetched, PriceKind, Quote};
use super::report::{ProgressEvent, SourceId};
use super::scope::{Ctx, SourceRun};
use super::wanted::Wanted;

/// The Billing Catalog service id of Compute Engine.
pub const COMPUTE_ENGINE_SERVICE: &str = "6F81-5844-456A";
/// GiB per GB, for RAM SKUs priced per decimal gigabyte.
const GIB_PER_GB: f64 = 1.073_741_824;
/// Pages after which the listing is considered runaway.
const MAX_PAGES: usize = 200;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    #[serde(default)]
    skus: Vec<Sku>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sku {
    #[serde(default)]
    description: String,
    #[serde(default)]
    category: Category,
    #[serde(default)]
    service_regions: Vec<String>,
    #[serde(default)]
    pricing_info: Vec<PricingInfo>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Category {
    #[serde(default)]
    usage_type: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PricingInfo {
    pricing_expression: PricingExpression,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PricingExpression {
    #[serde(default)]
    usage_unit: String,
    #[serde(default)]
    tiered_rates: Vec<TierRate>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TierRate {
    #[serde(default)]
    start_usage_amount: f64,
    unit_price: Money,
}

/// `google.type.Money`: `units` is an int64, which JSON carries as a string.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Money {
    #[serde(default)]
    currency_code: Option<String>,
    #[serde(default)]
    units: Int64,
    #[serde(default)]
    nanos: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
enum Int64 {
    Num(i64),
    Str(String),
    #[default]
    Missing,
}

impl Int64 {
    fn value(&self) -> Option<i64> {
        match self {
            Int64::Num(n) => Some(*n),
            Int64::Str(s) => s.trim().parse().ok(),
            Int64::Missing => Some(0),
        }
    }
}

impl Sku {
    /// USD per unit-hour of the base tier, RAM normalised to GiB; `None` if unusable.
    fn hourly_price(&self, part: Part) -> Option<f64> {
        let expr = &self.pricing_info.last()?.pricing_expression;
        let factor = match (part, expr.usage_unit.as_str()) {
            (Part::Core | Part::Gpu, "h") => 1.0,
            (Part::Ram, "GiBy.h") => 1.0,
            (Part::Ram, "GBy.h") => GIB_PER_GB,
            _ => return None,
        };
        let tier = expr
            .tiered_rates
            .iter()
            .find(|t| t.start_usage_amount == 0.0)
            .or_else(|| expr.tiered_rates.first())?;
        let money = &tier.unit_price;
        if money.currency_code.as_deref().is_some_and(|c| c != "USD") {
            return None;
        }
        let price = (money.units.value()? as f64 + money.nanos as f64 * 1e-9) * factor;
        (price > 0.0 && price.is_finite()).then_some(price)
    }
}

/// The chosen unit price of one (region, prefix, kind): SKU breadth and price.
#[derive(Debug, Clone, Copy)]
struct Unit {
    regions: usize,
    price: f64,
}

/// Unit prices of every region and kind, by SKU prefix.
#[derive(Debug, Default)]
struct Units(HashMap<(String, PriceKind), HashMap<&'static str, Unit>>);

impl Units {
    fn add(&mut self, sku: &Sku) {
        let Some((prefix, part)) = match_description(&sku.description) else {
            return;
        };
        let kind = match sku.category.usage_type.as_str() {
            "OnDemand" => PriceKind::OnDemand,
            "Preemptible" => PriceKind::Spot,
            _ => return,
        };
        let Some(price) = sku.hourly_price(part) else {
            return;
        };
        let new = Unit {
            regions: sku.service_regions.len(),
            price,
        };
        for region in &sku.service_regions {
            let slot = self
                .0
                .entry((region.clone(), kind))
                .or_default()
                .entry(prefix)
                .or_insert(new);
            if (new.regions, -new.price) < (slot.regions, -slot.price) {
                *slot = new;
            }
        }
    }
}

/// The unit prices of one region and kind, as [`UnitPrices`].
struct View<'a>(Option<&'a HashMap<&'static str, Unit>>);

impl UnitPrices for View<'_> {
    fn unit(&self, prefix: &str) -> Option<f64> {
        self.0?.get(prefix).map(|u| u.price)
    }
}

/// Refreshes Google Cloud prices of `wanted` (one cached scope, `all`).
pub async fn run(ctx: &Ctx<'_>, wanted: &Wanted) -> SourceRun {
    let Some(key) = ctx.cfg.resolved_gcp_api_key() else {
        return SourceRun::skipped(
            SourceId::GcpBillingCatalog,
            format!(
                "{}: no API key (set the provider's GCP billing API key or {GCP_API_KEY_ENV}); keeping the snapshot's prices",
                SourceId::GcpBillingCatalog
            ),
        );
    };
    let mut run = SourceRun::new(SourceId::GcpBillingCatalog);
    (ctx.progress)(ProgressEvent::SourceStarted {
        source: SourceId::GcpBillingCatalog,
        scopes: 1,
    });
    let specs: Vec<String> = wanted
        .rows
        .iter()
        .map(|o| {
            format!(
                "{} {} {:?} {:?} {:?}",
                o.region, o.instance_type, o.vcpus, o.memory_gib, o.gpu_count
            )
        })
        .collect();
    let fp = fingerprint(
        specs
            .iter()
            .map(String::as_str)
            .chain([ctx.cfg.endpoints.gcp.as_str()]),
    );
    run.scope(ctx, "all", &fp, async || fetch(ctx, wanted, &key).await)
        .await;
    run
}

/// The URL of one page of Compute Engine SKUs.
fn page_url(endpoint: &str, key: &ApiKey, token: Option<&str>) -> Result<String, LiveError> {
    let base = format!(
        "{}/v1/services/{COMPUTE_ENGINE_SERVICE}/skus",
        endpoint.trim_end_matches('/')
    );
    let mut url = reqwest::Url::parse(&base).map_err(|e| LiveError::Decode {
        url: redact_url(&base),
        message: format!("bad Google Cloud billing endpoint: {e}"),
    })?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("key", key.expose())
            .append_pair("currencyCode", "USD");
        if let Some(t) = token {
            q.append_pair("pageToken", t);
        }
    }
    Ok(url.into())
}

async fn fetch(ctx: &Ctx<'_>, wanted: &Wanted, key: &ApiKey) -> Result<Fetched, LiveError> {
    let mut units = Units::default();
    let mut token: Option<String> = None;
    let mut pages = 0usize;
    loop {
        let url = page_url(&ctx.cfg.endpoints.gcp, key, token.as_deref())?;
        let page: Page = ctx.http.get_json(&url).await?;
        pages += 1;
        (ctx.progress)(ProgressEvent::PageFetched {
            source: SourceId::GcpBillingCatalog,
            scope: "all".to_string(),
            page: pages,
            of: None,
        });
        for sku in &page.skus {
            units.add(sku);
        }
        match page.next_page_token.filter(|t| !t.is_empty()) {
            Some(next) if Some(&next) != token.as_ref() => token = Some(next),
            _ => break,
        }
        if pages >= MAX_PAGES {
            return Err(LiveError::TooManyPages {
                url: redact_url(&url),
                limit: MAX_PAGES,
            });
        }
    }
    let mut quotes = Vec::new();
    for o in &wanted.rows {
        for kind in [PriceKind::OnDemand, PriceKind::Spot] {
            let view = View(units.0.get(&(o.region.clone(), kind)));
            if let Some(price) =
                compose(&o.instance_type, o.vcpus, o.memory_gib, o.gpu_count, &view)
            {
                quotes.push(Quote {
                    region: o.region.clone(),
                    zone: None,
                    instance_type: o.instance_type.clone(),
                    kind,
                    usd_per_hour: price,
                });
            }
        }
    }
    Ok(Fetched { quotes, pages })
}
