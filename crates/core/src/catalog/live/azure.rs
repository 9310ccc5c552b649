//! Azure Retail Prices API (public, no auth): on-demand and spot prices of the catalog's
//! GPU VM sizes, Linux only.
//!
//! `GET {endpoint}/api/retail/prices?api-version=2023-01-01-preview&$filter=…` with
//! `serviceName eq 'Virtual Machines' and priceType eq 'Consumption'` and the sizes as
//! `armSkuName eq '…'` clauses joined by `or`, [`BATCH`] sizes per query so URLs stay
//! short; each answer is paged through `NextPageLink`. Per item: `unitOfMeasure` must be
//! `1 Hour`; `productName` with `Windows` (or `Cloud Services`) is skipped;
//! `meterName`/`skuName` with `Low Priority` is skipped and with `Spot` is a spot price.
//! Where several items price the same (region, size, kind), the primary meter region
//! wins, then the latest `effectiveStartDate`, then the lower price.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Deserialize;

use super::cache::fingerprint;
use super::error::{LiveError, redact_url};
use super::quote::{Fetched, PriceKind, Quote};
use super::report::{ProgressEvent, SourceId};
use super::scope::{Ctx, SourceRun};
use super::wanted::Wanted;

/// API version sent with every query.
pub const API_VERSION: &str = "2023-01-01-preview";
/// VM sizes per query.
pub const BATCH: usize = 12;
/// Pages per query after which the listing is considered runaway.
const MAX_PAGES: usize = 500;

/// One page of the Retail Prices API.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Page {
    #[serde(default)]
    items: Vec<Item>,
    #[serde(default)]
    next_page_link: Option<String>,
}

/// One price item (only the fields used).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    #[serde(default)]
    currency_code: Option<String>,
    retail_price: f64,
    arm_region_name: String,
    arm_sku_name: String,
    #[serde(default)]
    effective_start_date: String,
    #[serde(default)]
    meter_name: String,
    #[serde(default)]
    sku_name: String,
    #[serde(default)]
    product_name: String,
    #[serde(default)]
    unit_of_measure: String,
    #[serde(default, rename = "type")]
    price_type: String,
    #[serde(default)]
    is_primary_meter_region: Option<bool>,
}

/// The best item so far for one (region, size, kind).
#[derive(Debug, Clone)]
struct Pick {
    primary: bool,
    start: String,
    price: f64,
}

impl Pick {
    fn better_than(&self, other: &Pick) -> bool {
        (self.primary, &self.start, -self.price) > (other.primary, &other.start, -other.price)
    }
}

/// Refreshes Azure prices of `wanted` (one cached scope, `all`).
pub async fn run(ctx: &Ctx<'_>, wanted: &Wanted) -> SourceRun {
    let mut run = SourceRun::new(SourceId::AzureRetail);
    (ctx.progress)(ProgressEvent::SourceStarted {
        source: SourceId::AzureRetail,
        scopes: 1,
    });
    let fp = fingerprint(
        wanted
            .types
            .iter()
            .chain(wanted.regions.iter())
            .map(String::as_str)
            .chain([ctx.cfg.endpoints.azure.as_str()]),
    );
    run.scope(ctx, "all", &fp, async || fetch(ctx, wanted).await)
        .await;
    run
}

/// The first URL of the query for `sizes`.
pub fn query_url(endpoint: &str, sizes: &[&str]) -> Result<String, LiveError> {
    let base = format!("{}/api/retail/prices", endpoint.trim_end_matches('/'));
    let mut url = reqwest::Url::parse(&base).map_err(|e| LiveError::Decode {
        url: redact_url(&base),
        message: format!("bad Azure endpoint: {e}"),
    })?;
    let skus: Vec<String> = sizes
        .iter()
        .map(|s| format!("armSkuName eq '{}'", s.replace('\'', "''")))
        .collect();
    let filter = format!(
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and ({})",
        skus.join(" or ")
    );
    url.query_pairs_mut()
        .append_pair("api-version", API_VERSION)
        .append_pair("$filter", &filter);
    Ok(url.into())
}

async fn fetch(ctx: &Ctx<'_>, wanted: &Wanted) -> Result<Fetched, LiveError> {
    let sizes: Vec<&str> = wanted.types.iter().map(String::as_str).collect();
    let mut best: HashMap<(String, String, PriceKind), Pick> = HashMap::new();
    let mut pages = 0usize;
    for batch in sizes.chunks(BATCH) {
        let first = query_url(&ctx.cfg.endpoints.azure, batch)?;
        let mut url = first.clone();
        let mut seen: HashSet<String> = HashSet::new();
        let mut batch_pages = 0usize;
        loop {
            let page: Page = ctx.http.get_json(&url).await?;
            pages += 1;
            batch_pages += 1;
            (ctx.progress)(ProgressEvent::PageFetched {
                source: SourceId::AzureRetail,
                scope: "all".to_string(),
                page: pages,
                of: None,
            });
            for item in page.items {
                consider(item, &mut best);
            }
            match page.next_page_link.filter(|l| !l.trim().is_empty()) {
                Some(next) if seen.insert(next.clone()) => url = next,
                _ => break,
            }
            if batch_pages >= MAX_PAGES {
                return Err(LiveError::TooManyPages {
                    url: redact_url(&first),
                    limit: MAX_PAGES,
                });
            }
        }
    }
    Ok(Fetched {
        quotes: to_quotes(best, &wanted.regions, &wanted.types),
        pages,
    })
}

/// Keeps `item` if it is a Linux pay-as-you-go or spot hourly price better than the last.
fn consider(item: Item, best: &mut HashMap<(String, String, PriceKind), Pick>) {
    let names = format!("{} {}", item.meter_name, item.sku_name);
    if item.unit_of_measure.trim() != "1 Hour"
        || item.product_name.contains("Windows")
        || item.product_name.contains("Cloud Services")
        || names.contains("Low Priority")
        || (!item.price_type.is_empty() && item.price_type != "Consumption")
        || item.currency_code.as_deref().is_some_and(|c| c != "USD")
        || !item.retail_price.is_finite()
        || item.retail_price <= 0.0
    {
        return;
    }
    let kind = if names.contains("Spot") {
        PriceKind::Spot
    } else {
        PriceKind::OnDemand
    };
    let pick = Pick {
        primary: item.is_primary_meter_region.unwrap_or(true),
        start: item.effective_start_date,
        price: item.retail_price,
    };
    let key = (item.arm_region_name, item.arm_sku_name, kind);
    match best.get(&key) {
        Some(old) if !pick.better_than(old) => {}
        _ => {
            best.insert(key, pick);
        }
    }
}

fn to_quotes(
    best: HashMap<(String, String, PriceKind), Pick>,
    regions: &BTreeSet<String>,
    types: &BTreeSet<String>,
) -> Vec<Quote> {
    let mut quotes: Vec<Quote> = best
        .into_iter()
        .filter(|((r, s, _), _)| regions.contains(r) && types.contains(s))
        .map(|((region, instance_type, kind), pick)| Quote {
            region,
            zone: None,
            instance_type,
            kind,
            usd_per_hour: pick.price,
        })
        .collect();
    quotes.sort_by(|a, b| {
        (&a.region, &a.instance_type, a.kind).cmp(&(&b.region, &b.instance_type, b.kind))
    });
    quotes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_is_encoded_and_batched() {
        let url = query_url("https://prices.azure.com/", &["Standard_A", "Standard_B"]).unwrap();
        assert!(url.starts_with("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&%24filter="), "{url}");
        assert!(
            url.contains("armSkuName+eq+%27Standard_A%27+or+armSkuName+eq+%27Standard_B%27"),
            "{url}"
        );
    }
}
