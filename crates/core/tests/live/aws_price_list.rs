//! AWS bulk price list, parsed streaming.

use std::collections::BTreeSet;

use gpu_core::catalog::live::SourceId;
use gpu_core::catalog::live::aws_price_list::parse;
use gpu_core::offer::Cloud;

use crate::server::{Request, Response, Server, fixture};
use crate::{catalog, close, config, find, run};

pub const ROWS: &str = "
aws,us-east-1,,p5.48xlarge,H100,8,80,192,2048,98.32,40.5,snapshot-aws,2026-07-20
aws,us-east-1,,g6.xlarge,L4,1,22.35,4,16,0.9,,snapshot-aws,2026-07-20
aws,us-east-1,,g5.xlarge,A10G,1,22.35,4,16,1.006,,snapshot-aws,2026-07-20
";

pub fn price_list_handler(req: &Request, base: &str) -> Response {
    match req.path() {
        "/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json" => {
            Response::json(fixture("aws_price_list_us-east-1.json", base))
        }
        _ => Response::status(404),
    }
}

#[tokio::test]
async fn streams_only_the_right_products() {
    let server = Server::start(price_list_handler);
    let mut cfg = config("aws-pl", &server.base);
    cfg.endpoints.aws_ec2 = Some(crate::server::dead_base());
    cfg.max_retries = 0;
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Aws]).await;
    let s = r.stats_of(SourceId::AwsPriceList).unwrap();
    assert_eq!(
        (s.rows_updated, s.quotes, s.scopes_from_network),
        (2, 2, 1),
        "{:?}",
        r.warnings
    );
    // Linux, shared, no software, capacity used: not Windows (60), dedicated (70) …
    let p5 = find(&r.catalog, Cloud::Aws, "us-east-1", None, "p5.48xlarge");
    close(p5.on_demand_usd_per_hour, 55.04);
    assert!(
        p5.source.starts_with("on-demand: aws-price-list (live"),
        "{}",
        p5.source
    );
    // Only the on-demand price is re-dated; the spot price keeps the snapshot's origin.
    assert_eq!(
        p5.on_demand_origin.as_of.as_deref(),
        Some(crate::today().as_str())
    );
    assert!(
        p5.on_demand_origin
            .source
            .starts_with("aws-price-list (live, fetched"),
        "{}",
        p5.on_demand_origin.source
    );
    close(p5.spot_usd_per_hour, 40.5);
    assert_eq!(
        p5.spot_origin,
        gpu_core::offer::PriceOrigin::new("snapshot-aws", Some("2026-07-20".into()))
    );
    // … nor SQL Web (1.5).
    close(
        find(&r.catalog, Cloud::Aws, "us-east-1", None, "g6.xlarge").on_demand_usd_per_hour,
        0.8048,
    );
    // Not in the file: unchanged.
    close(
        find(&r.catalog, Cloud::Aws, "us-east-1", None, "g5.xlarge").on_demand_usd_per_hour,
        1.006,
    );
    // The spot source pointed at a dead port: one warning, nothing else lost.
    assert!(
        r.warnings
            .iter()
            .all(|w| w.contains("aws-spot-price-history")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn parser_keeps_gpu_linux_shared_only_in_either_order() {
    let text = fixture("aws_price_list_us-east-1.json", "");
    let types: BTreeSet<String> = ["p5.48xlarge", "g6.xlarge"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let expect = vec![
        ("g6.xlarge".to_string(), 0.8048),
        ("p5.48xlarge".to_string(), 55.04),
    ];
    assert_eq!(parse(text.as_bytes(), &types, "us-east-1").unwrap(), expect);
    // Terms before products (not how AWS writes them, but valid JSON): same answer.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let swapped = format!(
        "{{\"terms\":{},\"publicationDate\":\"2026-12-01T00:00:00Z\",\"products\":{}}}",
        v["terms"], v["products"]
    );
    assert_eq!(
        parse(swapped.as_bytes(), &types, "us-east-1").unwrap(),
        expect
    );
    // Another region's file does not price us-east-1 rows.
    assert!(
        parse(text.as_bytes(), &types, "eu-west-1")
            .unwrap()
            .is_empty()
    );
    // Truncated input is an error, not a partial answer.
    assert!(parse(&text.as_bytes()[..text.len() / 2], &types, "us-east-1").is_err());
}
