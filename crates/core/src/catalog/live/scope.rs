//! Running one scope of a source through the disk cache: fresh entry → no network;
//! otherwise fetch and store; on failure, a stale entry beats nothing (with a warning).

use std::time::Duration;

use super::cache::{CacheEntry, DiskCache, FORMAT};
use super::config::LiveConfig;
use super::error::LiveError;
use super::http::Http;
use super::quote::Fetched;
use super::report::{ProgressEvent, SourceId, SourceStats};
use super::time::{date_of, unix_now};

/// What sources share during one refresh.
pub struct Ctx<'a> {
    /// The configuration.
    pub cfg: &'a LiveConfig,
    /// The HTTP client.
    pub http: &'a Http,
    /// The disk cache.
    pub cache: DiskCache,
    /// The progress callback.
    pub progress: super::Progress<'a>,
}

/// Prices of one scope with the time they were fetched.
#[derive(Debug, Clone)]
pub struct ScopeResult {
    /// The prices.
    pub fetched: Fetched,
    /// When fetched, unix seconds.
    pub fetched_at: u64,
}

/// Everything one source produced: prices per scope, warnings, stats.
#[derive(Debug)]
pub struct SourceRun {
    /// Prices, one entry per scope that produced any.
    pub scopes: Vec<ScopeResult>,
    /// Human warnings (failed or skipped scopes).
    pub warnings: Vec<String>,
    /// Counters.
    pub stats: SourceStats,
}

impl SourceRun {
    /// An empty run of `source`.
    pub fn new(source: SourceId) -> Self {
        SourceRun {
            scopes: Vec::new(),
            warnings: Vec::new(),
            stats: SourceStats::new(source),
        }
    }

    /// A run that did nothing, with why.
    pub fn skipped(source: SourceId, why: String) -> Self {
        let mut run = SourceRun::new(source);
        run.stats.skipped = true;
        run.warnings.push(why);
        run
    }

    /// Answers `scope` from a fresh cache entry, or by `fetch` (then cached), or from a
    /// stale entry if `fetch` fails; records stats and warnings either way.
    pub async fn scope<F>(&mut self, ctx: &Ctx<'_>, scope: &str, fingerprint: &str, fetch: F)
    where
        F: AsyncFnOnce() -> Result<Fetched, LiveError>,
    {
        let source = self.stats.source;
        let cached = ctx.cache.load(source.as_str(), scope, fingerprint);
        let now = unix_now();
        if let Some(entry) = &cached
            && Duration::from_secs(now.saturating_sub(entry.fetched_at)) < ctx.cfg.ttl
        {
            self.stats.scopes_from_cache += 1;
            (ctx.progress)(ProgressEvent::CacheHit {
                source,
                scope: scope.to_string(),
            });
            self.push(entry.fetched.clone(), entry.fetched_at);
            return;
        }
        match fetch().await {
            Ok(fetched) => {
                self.stats.scopes_from_network += 1;
                self.stats.pages_fetched += fetched.pages;
                let entry = CacheEntry {
                    format: FORMAT,
                    source: source.as_str().to_string(),
                    scope: scope.to_string(),
                    fingerprint: fingerprint.to_string(),
                    fetched_at: now,
                    fetched,
                };
                if let Err(e) = ctx.cache.store(&entry) {
                    self.warnings.push(format!(
                        "{source} {scope}: could not write the price cache in {}: {e}",
                        ctx.cfg.cache_dir.display()
                    ));
                }
                self.push(entry.fetched, now);
            }
            Err(e) => {
                self.stats.scopes_failed += 1;
                match cached {
                    Some(entry) => {
                        self.warnings.push(format!(
                            "{source} {scope}: {e}; using cached prices fetched {}",
                            date_of(entry.fetched_at)
                        ));
                        self.push(entry.fetched, entry.fetched_at);
                    }
                    None => self.warnings.push(format!(
                        "{source} {scope}: {e}; keeping the snapshot's prices"
                    )),
                }
            }
        }
    }

    fn push(&mut self, fetched: Fetched, fetched_at: u64) {
        self.stats.quotes += fetched.quotes.len();
        self.scopes.push(ScopeResult {
            fetched,
            fetched_at,
        });
    }
}
