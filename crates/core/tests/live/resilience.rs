//! Throttling, server errors and a dead network never fail a refresh.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gpu_core::catalog::live::SourceId;
use gpu_core::offer::Cloud;

use crate::azure::{ROWS, azure_handler};
use crate::server::{Response, Server, dead_base};
use crate::{catalog, close, config, find, run};

#[tokio::test]
async fn honours_retry_after_then_succeeds() {
    let calls = AtomicUsize::new(0);
    let server = Server::start(move |req, base| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Response::status(429).header("Retry-After", "1")
        } else {
            azure_handler(req, base)
        }
    });
    let cfg = config("retry-after", &server.base);
    let base = catalog(ROWS);
    let started = Instant::now();
    let (r, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(server.count(), 3); // 429, page 1, page 2
    close(
        find(
            &r.catalog,
            Cloud::Azure,
            "eastus",
            None,
            "Standard_NC24ads_A100_v4",
        )
        .on_demand_usd_per_hour,
        3.4,
    );
}

#[tokio::test]
async fn server_errors_become_a_warning_and_the_snapshot_stays() {
    let server = Server::start(|_, _| Response::status(500));
    let cfg = config("http-500", &server.base);
    assert_eq!(cfg.max_retries, 2, "default: three attempts");
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert_eq!(server.count(), 3);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(
        w.contains("azure-retail-prices")
            && w.contains("HTTP 500")
            && w.contains("after 3 attempts"),
        "{w}"
    );
    assert!(w.contains("keeping the snapshot's prices"), "{w}");
    assert_eq!(r.catalog.offers(), base.offers());
    assert_eq!(r.catalog.origin(), base.origin());
    assert_eq!(r.stats_of(SourceId::AzureRetail).unwrap().scopes_failed, 1);
}

#[tokio::test]
async fn dead_network_warns_for_every_source_and_changes_nothing() {
    let rows = format!(
        "{}\n{}\n{}",
        ROWS.trim(),
        crate::gcp::ROWS.trim(),
        crate::aws_price_list::ROWS.trim()
    );
    let base = catalog(&rows);
    let cfg = config("dead", &dead_base());
    let (r, _) = run(&base, &cfg, &[Cloud::Aws, Cloud::Azure, Cloud::Gcp]).await;
    assert_eq!(r.catalog.offers(), base.offers());
    assert_eq!(r.catalog.origin(), base.origin());
    for source in SourceId::ALL {
        assert!(
            r.warnings.iter().any(|w| w.starts_with(source.as_str())),
            "no warning for {source}: {:?}",
            r.warnings
        );
        let s = r.stats_of(source).unwrap();
        assert_eq!((s.rows_updated, s.scopes_failed), (0, 1), "{source}");
    }
    assert_eq!(r.warnings.len(), 4, "{:?}", r.warnings);
    assert!(
        r.warnings.iter().any(|w| w.contains("could not connect")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_stop_ends_the_retry_pauses_of_http_sources() {
    let server = Server::start(|_, _| Response::status(503).header("Retry-After", "30"));
    let mut cfg = config("http-stopped", &server.base);
    cfg.max_backoff = Duration::from_secs(60);
    cfg.cancel.cancel(); // Terraform's StopProvider came before the refresh
    let base = catalog(ROWS);
    let started = Instant::now();
    let (r, _) = run(&base, &cfg, &[Cloud::Azure]).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited for Retry-After: {:?}",
        started.elapsed()
    );
    assert_eq!(server.count(), 1, "no retry after the stop");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("stopped while retrying") && r.warnings[0].contains("HTTP 503"),
        "{}",
        r.warnings[0]
    );
    assert_eq!(r.catalog.offers(), base.offers());
}
