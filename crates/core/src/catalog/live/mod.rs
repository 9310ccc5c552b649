//! Live prices: refresh the prices of a [`Catalog`] (normally the embedded snapshot) from
//! the clouds' price APIs, cached on disk with a TTL, falling back to the catalog's own
//! prices with a warning whenever a source fails. A refresh never fails as a whole.
//!
//! Sources (one module each): [`aws_price_list`] (AWS on-demand, bulk price list files,
//! parsed streaming), [`aws_spot`] (AWS spot, EC2 `DescribeSpotPriceHistory`), [`azure`]
//! (Azure Retail Prices API, on-demand and spot), [`gcp`] (Google Cloud Billing Catalog,
//! on-demand and spot composed from per-vCPU, per-GiB and per-GPU SKUs). Plumbing:
//! [`config`], [`http`] + [`retry`] (backoff with jitter, `Retry-After`), [`cache`] (one
//! JSON file per source and scope, atomic writes), [`merge`] (quotes → rows).
//!
//! Live sources only update prices of rows the catalog already has; they never add
//! instance types, and never invent a price a source does not give.

pub mod aws_price_list;
pub mod aws_spot;
pub mod azure;
pub mod body_reader;
pub mod cache;
pub mod config;
pub mod error;
pub mod gcp;
pub mod gcp_parts;
pub mod http;
pub mod merge;
pub mod quote;
pub mod report;
pub use crate::retry;
pub mod scope;
pub use crate::time;
pub mod wanted;

use crate::catalog::{Catalog, CatalogOrigin, OriginKind};
use crate::offer::Cloud;

pub use config::{ApiKey, Endpoints, GCP_API_KEY_ENV, LiveConfig, default_cache_dir};
pub use error::LiveError;
pub use quote::{PriceKind, Quote};
pub use report::{ProgressEvent, SourceId, SourceStats};

use cache::DiskCache;
use http::Http;
use merge::Row;
use scope::{Ctx, SourceRun};
use wanted::Wanted;

/// The progress callback of [`refresh`]; `Send + Sync` so a refresh can run in a task.
pub type Progress<'a> = &'a (dyn Fn(ProgressEvent) + Send + Sync);

/// The result of [`refresh`]: the refreshed catalog, what went wrong, and per-source stats.
#[derive(Debug, Clone)]
pub struct LiveRefresh {
    /// The catalog with live prices where a source had them (origin kind
    /// [`OriginKind::Live`]), or the base catalog unchanged if no source updated a row.
    pub catalog: Catalog,
    /// One line per source or scope that failed or was skipped; those rows keep the base
    /// catalog's prices.
    pub warnings: Vec<String>,
    /// Stats of every source the refresh considered, in [`SourceId::ALL`] order.
    pub stats: Vec<SourceStats>,
}

impl LiveRefresh {
    /// The stats of `source`, if it was considered.
    pub fn stats_of(&self, source: SourceId) -> Option<&SourceStats> {
        self.stats.iter().find(|s| s.source == source)
    }
}

/// Refreshes the prices of `base` for `clouds` from the live sources.
///
/// Scopes cached less than `cfg.ttl` ago are not fetched again. Every failure (network,
/// HTTP status, bad response, missing credentials or API key) becomes a warning and
/// leaves the affected rows with `base`'s prices; the call itself always succeeds.
pub async fn refresh(
    base: &Catalog,
    cfg: &LiveConfig,
    clouds: &[Cloud],
    progress: Progress<'_>,
) -> LiveRefresh {
    let http = match Http::new(cfg) {
        Ok(h) => h,
        Err(e) => {
            return LiveRefresh {
                catalog: base.clone(),
                warnings: vec![format!("live prices unavailable: {e}")],
                stats: Vec::new(),
            };
        }
    };
    let ctx = Ctx {
        cfg,
        http: &http,
        cache: DiskCache::new(&cfg.cache_dir),
        progress,
    };
    let wanted = |cloud: Cloud| {
        clouds
            .contains(&cloud)
            .then(|| Wanted::of(base, cloud, cfg))
            .filter(|w| !w.is_empty())
    };
    let (aws, azure_rows, gcp_rows) =
        (wanted(Cloud::Aws), wanted(Cloud::Azure), wanted(Cloud::Gcp));

    let (price_list, spot, azure, gcp) = tokio::join!(
        run_if(aws.as_ref(), async |w| aws_price_list::run(&ctx, w).await),
        run_if(aws.as_ref(), async |w| aws_spot::run(&ctx, w).await),
        run_if(azure_rows.as_ref(), async |w| azure::run(&ctx, w).await),
        run_if(gcp_rows.as_ref(), async |w| gcp::run(&ctx, w).await),
    );

    let mut rows: Vec<Row> = base.offers().iter().cloned().map(Row::new).collect();
    let mut warnings = Vec::new();
    let mut stats = Vec::new();
    // AWS on-demand before AWS spot: new per-zone spot rows copy the on-demand price.
    for (source, run) in SourceId::ALL
        .into_iter()
        .zip([price_list, spot, azure, gcp])
    {
        let Some(mut run) = run else {
            let mut s = SourceStats::new(source);
            s.skipped = true;
            stats.push(s);
            continue;
        };
        run.stats.rows_updated = merge::apply(&mut rows, source, &run.scopes);
        if !run.stats.skipped {
            progress(ProgressEvent::SourceFinished {
                source,
                rows_updated: run.stats.rows_updated,
            });
        }
        warnings.append(&mut run.warnings);
        stats.push(run.stats);
    }

    let live: Vec<&str> = stats
        .iter()
        .filter(|s| s.rows_updated > 0)
        .map(|s| s.source.as_str())
        .collect();
    if live.is_empty() {
        return LiveRefresh {
            catalog: base.clone(),
            warnings,
            stats,
        };
    }
    let origin = CatalogOrigin {
        kind: OriginKind::Live,
        label: format!(
            "live prices ({}) over {}",
            live.join(", "),
            base.origin().label
        ),
    };
    let offers = rows.into_iter().map(Row::finish).collect();
    let catalog = match Catalog::new(offers, origin) {
        Ok(c) => c,
        Err(e) => {
            warnings.push(format!("live prices dropped: {e}"));
            base.clone()
        }
    };
    LiveRefresh {
        catalog,
        warnings,
        stats,
    }
}

/// Runs `f` on `wanted` if there is something to refresh.
async fn run_if<F>(wanted: Option<&Wanted>, f: F) -> Option<SourceRun>
where
    F: AsyncFnOnce(&Wanted) -> SourceRun,
{
    match wanted {
        Some(w) => Some(f(w).await),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn refresh_future_is_send() {
        let cfg = LiveConfig::new();
        let progress = |_: ProgressEvent| {};
        let fut = refresh(Catalog::embedded(), &cfg, &[], &progress);
        assert_send(&fut);
        drop(fut);
    }
}
