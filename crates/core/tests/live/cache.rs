//! The disk cache: fresh entries answer without the network; expired ones refetch;
//! stale ones beat the snapshot when the network fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gpu_core::catalog::live::SourceId;
use gpu_core::offer::Cloud;

use crate::azure::{ROWS, azure_handler};
use crate::server::{Response, Server};
use crate::{catalog, close, config, find, run};

#[tokio::test]
async fn fresh_cache_makes_no_requests() {
    let server = Server::start(azure_handler);
    let cfg = config("cache-hit", &server.base);
    let base = catalog(ROWS);
    let (first, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert_eq!(server.count(), 2);
    let (second, events) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert_eq!(server.count(), 2, "no request within the TTL");
    assert!(second.warnings.is_empty(), "{:?}", second.warnings);
    assert_eq!(first.catalog.offers(), second.catalog.offers());
    let s = second.stats_of(SourceId::AzureRetail).unwrap();
    assert_eq!(
        (s.scopes_from_cache, s.scopes_from_network, s.pages_fetched),
        (1, 0, 0)
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, gpu_core::catalog::live::ProgressEvent::CacheHit { .. }))
    );
    let files: Vec<_> = std::fs::read_dir(&cfg.cache_dir).unwrap().collect();
    assert_eq!(
        files.len(),
        1,
        "one file per source and scope, no temp files left"
    );
}

#[tokio::test]
async fn expired_cache_refetches() {
    let server = Server::start(azure_handler);
    let mut cfg = config("cache-expired", &server.base);
    cfg.ttl = Duration::ZERO;
    let base = catalog(ROWS);
    run(&base, &cfg, &[Cloud::Azure]).await;
    assert_eq!(server.count(), 2);
    let (r, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert_eq!(server.count(), 4);
    assert_eq!(
        r.stats_of(SourceId::AzureRetail)
            .unwrap()
            .scopes_from_network,
        1
    );
}

#[tokio::test]
async fn stale_cache_beats_the_snapshot_when_offline() {
    let failing = Arc::new(AtomicBool::new(false));
    let flag = failing.clone();
    let server = Server::start(move |req, base| {
        if flag.load(Ordering::SeqCst) {
            Response::status(503)
        } else {
            azure_handler(req, base)
        }
    });
    let mut cfg = config("cache-stale", &server.base);
    let base = catalog(ROWS);
    run(&base, &cfg, &[Cloud::Azure]).await;
    failing.store(true, Ordering::SeqCst);
    cfg.ttl = Duration::ZERO;
    let (r, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert_eq!(server.count(), 2 + 3);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("using cached prices fetched"),
        "{}",
        r.warnings[0]
    );
    let a100 = find(
        &r.catalog,
        Cloud::Azure,
        "eastus",
        None,
        "Standard_NC24ads_A100_v4",
    );
    close(a100.on_demand_usd_per_hour, 3.4);
}
