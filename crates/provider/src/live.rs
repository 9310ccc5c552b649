//! Live prices for the offer data sources and the `offers --live` command: builds the core
//! `LiveConfig` from the provider configuration and environment, and keeps refreshed
//! catalogs for the life of the process so many data blocks cost one refresh.

use crate::config::ProviderConfig;
use gpu_core::availability::{Asks, Availability, PlaceScore};
use gpu_core::cancel::Cancel;
use gpu_core::catalog::Catalog;
use gpu_core::catalog::live::{self, LiveConfig, Progress};
use gpu_core::offer::Cloud;
use gpu_core::query::OfferQuery;
use gpu_core::record::availability::RecordKey;
use gpu_core::registry::sessions::Sessions;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Environment variables that override the price API base URLs (mirrors, tests).
pub const ENDPOINT_ENV: [(&str, &str); 4] = [
    ("azure", "GPU_PRICES_AZURE_ENDPOINT"),
    ("gcp", "GPU_PRICES_GCP_ENDPOINT"),
    ("aws", "GPU_PRICES_AWS_ENDPOINT"),
    ("aws_ec2", "GPU_PRICES_AWS_EC2_ENDPOINT"),
];

/// Environment variable naming the price cache directory.
pub const CACHE_DIR_ENV: &str = "GPU_PRICES_CACHE_DIR";

/// The clouds a query refreshes: those it asks for that have live sources.
pub fn clouds_of(query: &OfferQuery) -> Vec<Cloud> {
    let with_sources = [Cloud::Aws, Cloud::Azure, Cloud::Gcp];
    with_sources
        .into_iter()
        .filter(|c| query.clouds.is_empty() || query.clouds.contains(c))
        .collect()
}

/// The catalog regions a query can match (all, when it has no region filter).
fn regions_of(query: &OfferQuery, base: &Catalog, clouds: &[Cloud]) -> Vec<String> {
    if query.regions.is_empty() {
        return Vec::new();
    }
    let patterns: Vec<glob::Pattern> = query
        .regions
        .iter()
        .filter_map(|r| glob::Pattern::new(&r.to_ascii_lowercase()).ok())
        .collect();
    let regions: BTreeSet<String> = base
        .offers()
        .iter()
        .filter(|o| clouds.contains(&o.cloud))
        .filter(|o| {
            patterns
                .iter()
                .any(|p| p.matches(&o.region.to_ascii_lowercase()))
        })
        .map(|o| o.region.clone())
        .collect();
    regions.into_iter().collect()
}

/// The live-source settings for `query`, from the provider block and the environment.
pub fn config_for(
    provider: Option<&ProviderConfig>,
    query: &OfferQuery,
    base: &Catalog,
) -> LiveConfig {
    let mut cfg = LiveConfig::new();
    if let Ok(dir) = std::env::var(CACHE_DIR_ENV)
        && !dir.is_empty()
    {
        cfg.cache_dir = dir.into();
    }
    for (cloud, var) in ENDPOINT_ENV {
        if let Ok(url) = std::env::var(var)
            && !url.is_empty()
        {
            match cloud {
                "azure" => cfg.endpoints.azure = url,
                "gcp" => cfg.endpoints.gcp = url,
                "aws_ec2" => cfg.endpoints.aws_ec2 = Some(url),
                _ => cfg.endpoints.aws_price_list = url,
            }
        }
    }
    if let Some(aws) = provider.and_then(|p| p.aws.as_ref()) {
        cfg.aws_profile = aws.profile.clone();
        if let Some(pricing) = aws.endpoints.as_ref().and_then(|e| e.get("pricing")) {
            cfg.endpoints.aws_price_list = pricing.clone();
        }
        if let Some(ec2) = aws.endpoints.as_ref().and_then(|e| e.get("ec2")) {
            cfg.endpoints.aws_ec2 = Some(ec2.clone());
        }
    }
    cfg.regions = regions_of(query, base, &clouds_of(query));
    cfg.time_scale = crate::clouds::requested_time_scale();
    cfg
}

/// A refreshed catalog and the warnings of the refresh.
#[derive(Debug, Clone)]
pub struct Refreshed {
    /// The catalog with live prices where sources answered.
    pub catalog: Arc<Catalog>,
    /// One line per source that failed or was skipped.
    pub warnings: Vec<String>,
}

/// What one refresh covered: its clouds and regions.
type RefreshKey = (Vec<Cloud>, Vec<String>);

/// Refreshed catalogs by (clouds, regions), for the life of the process.
#[derive(Debug, Default)]
pub struct LiveCache {
    done: Mutex<HashMap<RefreshKey, Refreshed>>,
}

impl LiveCache {
    /// The live catalog for `query`, refreshing at most once per clouds and regions;
    /// `cancel` (Terraform's StopProvider) ends the retry pauses of the sources.
    pub async fn get(
        &self,
        provider: Option<&ProviderConfig>,
        query: &OfferQuery,
        progress: Progress<'_>,
        cancel: &Cancel,
    ) -> Refreshed {
        let base = Catalog::embedded();
        let mut cfg = config_for(provider, query, base);
        cfg.cancel = cancel.clone();
        let clouds = clouds_of(query);
        let key = (clouds.clone(), cfg.regions.clone());
        let mut done = self.done.lock().await;
        if let Some(r) = done.get(&key) {
            return r.clone();
        }
        let result = live::refresh(base, &cfg, &clouds, progress).await;
        let refreshed = Refreshed {
            catalog: Arc::new(result.catalog),
            warnings: result.warnings,
        };
        if !cancel.is_cancelled() {
            // A refresh cut short is not remembered as the answer for these regions.
            done.insert(key, refreshed.clone());
        }
        refreshed
    }
}

/// What the clouds' spot signals answered: the scores, and a warning per cloud that did
/// not answer.
type Answered = (Vec<PlaceScore>, Vec<(Cloud, String)>);

/// Our record's scores, or why the events file could not be read.
type Recorded = Result<std::collections::BTreeMap<RecordKey, Availability>, String>;

/// The clouds' spot scores by what was asked, and the record's by events file, for the
/// life of the process, so many data blocks cost one round of requests and one read.
#[derive(Debug, Default)]
pub struct ScoreCache {
    done: Mutex<HashMap<Asks, Answered>>,
    recorded: Mutex<HashMap<std::path::PathBuf, Recorded>>,
}

impl ScoreCache {
    /// The scores for `asks`, asking `sessions` at most once per process.
    pub async fn get(&self, sessions: &Sessions, asks: &Asks, cancel: &Cancel) -> Answered {
        let mut done = self.done.lock().await;
        if let Some(a) = done.get(asks) {
            return a.clone();
        }
        let answered = sessions.spot_scores(asks, cancel).await;
        if !cancel.is_cancelled() {
            done.insert(asks.clone(), answered.clone());
        }
        answered
    }

    /// The record's scores from the events file at `path`, read at most once per process.
    pub async fn record(&self, path: &std::path::Path) -> Recorded {
        let mut recorded = self.recorded.lock().await;
        recorded
            .entry(path.to_path_buf())
            .or_insert_with(|| record_scores(path))
            .clone()
    }
}

/// How many days of the record count towards a place's availability.
pub const RECORD_DAYS: u32 = 7;

/// Our record's availability from the events file at `path` (a file not there yet is an
/// empty record), or the warning why it could not be read.
fn record_scores(path: &std::path::Path) -> Recorded {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(format!("the events file {}: {e}", path.display())),
    };
    let events = gpu_core::record::report::parse(&path.display().to_string(), &text)
        .map_err(|e| format!("the events file: {e}; the record is not used"))?;
    let now = gpu_core::time::unix_now() as i64;
    Ok(gpu_core::record::availability::from_record(
        &events,
        now,
        RECORD_DAYS,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_follow_the_query_globs() {
        let q = OfferQuery {
            regions: vec!["us-east-*".into()],
            clouds: vec![Cloud::Aws],
            ..Default::default()
        };
        let r = regions_of(&q, Catalog::embedded(), &clouds_of(&q));
        assert!(r.contains(&"us-east-1".to_string()) && r.contains(&"us-east-2".to_string()));
        assert!(r.iter().all(|x| x.starts_with("us-east-")));
        assert!(regions_of(&OfferQuery::default(), Catalog::embedded(), &[Cloud::Aws]).is_empty());
        assert_eq!(
            clouds_of(&OfferQuery::default()),
            vec![Cloud::Aws, Cloud::Azure, Cloud::Gcp]
        );
    }

    #[test]
    fn the_pricing_and_ec2_endpoints_reach_the_live_sources() {
        let provider = ProviderConfig {
            aws: Some(crate::config::AwsConfig {
                endpoints: Some(
                    [
                        ("pricing".to_string(), "http://127.0.0.1:1/p".to_string()),
                        ("ec2".to_string(), "http://127.0.0.1:1/e".to_string()),
                    ]
                    .into(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        };
        let cfg = config_for(Some(&provider), &OfferQuery::default(), Catalog::embedded());
        assert_eq!(cfg.endpoints.aws_price_list, "http://127.0.0.1:1/p");
        assert_eq!(
            cfg.endpoints.aws_ec2.as_deref(),
            Some("http://127.0.0.1:1/e")
        );
        let plain = config_for(None, &OfferQuery::default(), Catalog::embedded());
        assert_ne!(plain.endpoints.aws_price_list, "http://127.0.0.1:1/p");
    }
}
