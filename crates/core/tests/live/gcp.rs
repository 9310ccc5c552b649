//! Google Cloud Billing Catalog: paging, composition, missing parts, no key.

use gpu_core::catalog::live::{GCP_API_KEY_ENV, SourceId};
use gpu_core::offer::Cloud;

use crate::server::{Request, Response, Server, fixture};
use crate::{catalog, close, config, find, run};

pub const ROWS: &str = "
gcp,us-central1,,a2-highgpu-1g,A100-40GB,1,40,12,85,9.99,8.88,snapshot-gcp,2026-08-03
gcp,us-central1,,g2-standard-4,L4,1,24,4,16,,,snapshot-gcp,
gcp,europe-west4,,a2-highgpu-1g,A100-40GB,1,40,12,85,5.5,2.2,snapshot-gcp,2026-08-03
";

pub fn gcp_handler(req: &Request, base: &str) -> Response {
    assert_eq!(req.path(), "/v1/services/6F81-5844-456A/skus");
    if req.query("key").as_deref() != Some("test-key-123") {
        return Response::status(403);
    }
    match req.query("pageToken").as_deref() {
        None => Response::json(fixture("gcp_skus_page1.json", base)),
        Some("page-2-token") => Response::json(fixture("gcp_skus_page2.json", base)),
        Some(_) => Response::status(400),
    }
}

#[tokio::test]
async fn pages_and_composes_prices() {
    let server = Server::start(gcp_handler);
    let cfg = config("gcp", &server.base);
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Gcp]).await;
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].query("currencyCode").as_deref(), Some("USD"));
    assert_eq!(reqs[1].query("pageToken").as_deref(), Some("page-2-token"));

    let a2 = find(&r.catalog, Cloud::Gcp, "us-central1", None, "a2-highgpu-1g");
    // 12 vCPU × $0.031611 (the 2-region SKU beats the broader $0.04 one)
    // + 85 GiB × $0.004237 + 1 A100 × $2.933908.
    let on_demand = 12.0 * 0.031611 + 85.0 * 0.004237 + 2.933908;
    close(a2.on_demand_usd_per_hour, on_demand);
    close(a2.on_demand_usd_per_hour, 3.673385);
    // Spot RAM is priced per GB-hour in the fixture: × 1.073741824 per GiB.
    let spot = 12.0 * 0.0126 + 85.0 * 0.0016 * 1.073741824 + 1.1732;
    close(a2.spot_usd_per_hour, spot);
    assert!(
        a2.source.contains("spot: gcp-billing-catalog (live"),
        "{}",
        a2.source
    );

    // G2 has core and RAM SKUs but no L4 SKU: no composed price; the row keeps none.
    let g2 = find(&r.catalog, Cloud::Gcp, "us-central1", None, "g2-standard-4");
    assert_eq!(g2.on_demand_usd_per_hour, None);
    assert_eq!(g2.spot_usd_per_hour, None);
    assert_eq!(g2.source, "snapshot-gcp");
    // europe-west4 has only a GPU SKU: the snapshot's prices stay.
    let eu = find(
        &r.catalog,
        Cloud::Gcp,
        "europe-west4",
        None,
        "a2-highgpu-1g",
    );
    close(eu.on_demand_usd_per_hour, 5.5);
    close(eu.spot_usd_per_hour, 2.2);

    let s = r.stats_of(SourceId::GcpBillingCatalog).unwrap();
    assert_eq!((s.rows_updated, s.quotes, s.pages_fetched), (1, 2, 2));
    // The key is never written to the cache.
    for entry in std::fs::read_dir(&cfg.cache_dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("test-key-123"));
    }
}

#[tokio::test]
async fn without_key_is_skipped_with_warning() {
    if std::env::var_os(GCP_API_KEY_ENV).is_some() {
        eprintln!("{GCP_API_KEY_ENV} is set here; skipping");
        return;
    }
    let server = Server::start(gcp_handler);
    let mut cfg = config("gcp-nokey", &server.base);
    cfg.gcp_api_key = None;
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Gcp]).await;
    assert_eq!(server.count(), 0);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("no API key"), "{}", r.warnings[0]);
    assert!(r.stats_of(SourceId::GcpBillingCatalog).unwrap().skipped);
    assert_eq!(r.catalog.offers(), base.offers());
    assert_eq!(r.catalog.origin(), base.origin());
}

#[tokio::test]
async fn bad_key_is_a_warning_without_the_key() {
    let server = Server::start(gcp_handler);
    let mut cfg = config("gcp-badkey", &server.base);
    cfg.gcp_api_key = Some(gpu_core::catalog::live::ApiKey::new("wrong-secret"));
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Gcp]).await;
    assert_eq!(server.count(), 1, "403 is not retried");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("HTTP 403"), "{}", r.warnings[0]);
    assert!(!r.warnings[0].contains("wrong-secret"), "{}", r.warnings[0]);
    assert!(r.warnings[0].contains("key=***"), "{}", r.warnings[0]);
    assert_eq!(r.catalog.offers(), base.offers());
}
