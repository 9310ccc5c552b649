//! AWS spot prices through the real aws-sdk-ec2 against a fake EC2 endpoint.

use gpu_core::catalog::live::SourceId;
use gpu_core::offer::Cloud;

use crate::aws_price_list::price_list_handler;
use crate::server::{Request, Response, Server, decode, fixture};
use crate::{catalog, close, config, find, run, today};

const ROWS: &str = "
aws,us-east-1,use1-az4,g6.xlarge,L4,1,22.35,4,16,0.8,0.5,snapshot-zoned,
aws,us-east-1,use1-az1,g6.xlarge,L4,1,22.35,4,16,0.8,0.45,snapshot-zoned,
aws,us-east-1,,p5.48xlarge,H100,8,80,192,2048,98.32,,snapshot-aws,2026-07-20
aws,us-east-1,,g5.xlarge,A10G,1,22.35,4,16,1.006,,snapshot-aws,2026-07-20
aws,us-west-2,,g6.xlarge,L4,1,22.35,4,16,0.9,,snapshot-aws,2026-07-20
";

/// The region of a SigV4-signed request (from the credential scope).
fn signed_region(req: &Request) -> String {
    let auth = req.header("authorization").unwrap_or("");
    let scope = auth.split("Credential=").nth(1).unwrap_or("");
    scope.split('/').nth(2).unwrap_or("").to_string()
}

fn handler(req: &Request, base: &str) -> Response {
    if req.method == "GET" {
        return price_list_handler(req, base);
    }
    let form: Vec<(String, String)> = req
        .body
        .split('&')
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("Action"), Some("DescribeSpotPriceHistory"));
    assert_eq!(get("ProductDescription.1"), Some("Linux/UNIX"));
    assert!(get("StartTime").is_some());
    match (signed_region(req).as_str(), get("NextToken")) {
        ("us-east-1", None) => {
            let types: Vec<&str> = form
                .iter()
                .filter(|(k, _)| k.starts_with("InstanceType."))
                .map(|(_, v)| v.as_str())
                .collect();
            assert_eq!(types, ["g5.xlarge", "g6.xlarge", "p5.48xlarge"]);
            Response::xml(fixture("aws_spot_us-east-1_page1.xml", base))
        }
        ("us-east-1", Some("page-2")) => {
            Response::xml(fixture("aws_spot_us-east-1_page2.xml", base))
        }
        ("us-west-2", None) => Response::xml(fixture("aws_spot_us-west-2.xml", base)),
        other => panic!("unexpected spot request {other:?}"),
    }
}

#[tokio::test]
async fn spot_history_through_the_sdk() {
    let server = Server::start(handler);
    let cfg = config("aws-spot", &server.base);
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Aws]).await;
    // us-west-2 has no price list file on the fake server: the only warning.
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("aws-price-list us-west-2") && r.warnings[0].contains("HTTP 404"),
        "{}",
        r.warnings[0]
    );

    let c = &r.catalog;
    // Zone id reported: the snapshot row is updated in place; the newest price wins.
    let az4 = find(c, Cloud::Aws, "us-east-1", Some("use1-az4"), "g6.xlarge");
    close(az4.spot_usd_per_hour, 0.35);
    close(az4.on_demand_usd_per_hour, 0.8048); // from the price list
    assert_eq!(az4.spot_origin.as_of.as_deref(), Some(today().as_str()));
    assert!(
        az4.spot_origin
            .source
            .starts_with("aws-spot-price-history (live, fetched"),
        "{}",
        az4.spot_origin.source
    );
    assert!(
        az4.source.contains("spot: aws-spot-price-history (live"),
        "{}",
        az4.source
    );
    // A quoted zone without a row gets one; the unquoted zone's row is gone.
    let az6 = find(c, Cloud::Aws, "us-east-1", Some("use1-az6"), "g6.xlarge");
    close(az6.spot_usd_per_hour, 0.31);
    close(az6.on_demand_usd_per_hour, 0.8048);
    assert!(
        !c.offers()
            .iter()
            .any(|o| o.zone.as_deref() == Some("use1-az1"))
    );
    // The zone-less p5 row becomes a per-zone row with both live prices.
    let p5 = find(c, Cloud::Aws, "us-east-1", Some("use1-az4"), "p5.48xlarge");
    close(p5.spot_usd_per_hour, 20.0);
    close(p5.on_demand_usd_per_hour, 55.04);
    assert_eq!(p5.vcpus, Some(192.0));
    // No zone id reported: the AZ name is the zone.
    let w2 = find(c, Cloud::Aws, "us-west-2", Some("us-west-2b"), "g6.xlarge");
    close(w2.spot_usd_per_hour, 0.4);
    close(w2.on_demand_usd_per_hour, 0.9);
    // No spot quote: unchanged, still zone-less.
    close(
        find(c, Cloud::Aws, "us-east-1", None, "g5.xlarge").on_demand_usd_per_hour,
        1.006,
    );
    assert_eq!(c.len(), 5);

    let s = r.stats_of(SourceId::AwsSpot).unwrap();
    assert_eq!(
        (
            s.pages_fetched,
            s.scopes_from_network,
            s.quotes,
            s.rows_updated
        ),
        (3, 2, 4, 4)
    );
    let posts = server
        .requests()
        .iter()
        .filter(|q| q.method == "POST")
        .count();
    assert_eq!(posts, 3);
}

/// EC2's own error document (the query protocol's shape).
fn ec2_error(status: u16, code: &str, message: &str) -> Response {
    Response::with_type(
        status,
        "text/xml",
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{code}</Code>\
             <Message>{message}</Message></Error></Errors><RequestID>req-1</RequestID></Response>"
        ),
    )
}

/// Spot POSTs seen by the server for `region` (price-list GETs left out).
fn spot_posts(server: &Server, region: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|q| q.method == "POST" && signed_region(q) == region)
        .count()
}

#[tokio::test]
async fn a_throttled_page_is_retried_by_the_crate_policy() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The second page is throttled twice (EC2's RequestLimitExceeded, 503), then served.
    let throttled = AtomicUsize::new(0);
    let server = Server::start(move |req, base| {
        if req.method == "POST"
            && req.body.contains("NextToken=page-2")
            && throttled.fetch_add(1, Ordering::SeqCst) < 2
        {
            return ec2_error(503, "RequestLimitExceeded", "Request limit exceeded.");
        }
        handler(req, base)
    });
    let cfg = config("aws-spot-throttled", &server.base);
    let base = catalog(ROWS);
    let (r, _) = run(&base, &cfg, &[Cloud::Aws]).await;
    assert_eq!(
        r.warnings.len(),
        1,
        "only us-west-2's price list: {:?}",
        r.warnings
    );
    // us-east-1: page 1, page 2 twice throttled then served; the SDK added no retries.
    assert_eq!(spot_posts(&server, "us-east-1"), 4);
    close(
        find(
            &r.catalog,
            Cloud::Aws,
            "us-east-1",
            Some("use1-az6"),
            "g6.xlarge",
        )
        .spot_usd_per_hour,
        0.31,
    );
    assert_eq!(r.stats_of(SourceId::AwsSpot).unwrap().pages_fetched, 3);
}

#[tokio::test]
async fn throttling_that_never_ends_stops_after_the_configured_attempts() {
    let server = Server::start(|req, base| {
        if req.method == "POST" {
            return ec2_error(503, "RequestLimitExceeded", "Request limit exceeded.");
        }
        handler(req, base)
    });
    let cfg = config("aws-spot-always-throttled", &server.base);
    assert_eq!(cfg.max_retries, 2);
    let (r, _) = run(&catalog(ROWS), &cfg, &[Cloud::Aws]).await;
    assert_eq!(spot_posts(&server, "us-east-1"), 3, "1 + max_retries");
    let w = r
        .warnings
        .iter()
        .find(|w| w.contains("aws-spot") && w.contains("us-east-1"))
        .unwrap_or_else(|| panic!("no spot warning: {:?}", r.warnings));
    assert!(
        w.contains("RequestLimitExceeded") && w.contains("after 3 attempts"),
        "{w}"
    );
}

#[tokio::test]
async fn an_auth_failure_is_not_retried() {
    let server = Server::start(|req, base| {
        if req.method == "POST" {
            return ec2_error(
                401,
                "AuthFailure",
                "AWS was not able to validate the provided access credentials",
            );
        }
        handler(req, base)
    });
    let cfg = config("aws-spot-auth", &server.base);
    let (r, _) = run(&catalog(ROWS), &cfg, &[Cloud::Aws]).await;
    assert_eq!(spot_posts(&server, "us-east-1"), 1);
    let w = r
        .warnings
        .iter()
        .find(|w| w.contains("aws-spot") && w.contains("us-east-1"))
        .unwrap_or_else(|| panic!("no spot warning: {:?}", r.warnings));
    assert!(w.contains("AuthFailure") && !w.contains("attempts"), "{w}");
}

#[tokio::test]
async fn a_stop_ends_the_retries() {
    let server = Server::start(|req, base| {
        if req.method == "POST" {
            return ec2_error(503, "RequestLimitExceeded", "Request limit exceeded.");
        }
        handler(req, base)
    });
    let mut cfg = config("aws-spot-stopped", &server.base);
    cfg.initial_backoff = std::time::Duration::from_secs(30); // a stop must not wait for it
    cfg.cancel.cancel();
    let started = std::time::Instant::now();
    let (r, _) = run(&catalog(ROWS), &cfg, &[Cloud::Aws]).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(spot_posts(&server, "us-east-1"), 1);
    let w = r
        .warnings
        .iter()
        .find(|w| w.contains("aws-spot") && w.contains("us-east-1"))
        .unwrap_or_else(|| panic!("no spot warning: {:?}", r.warnings));
    assert!(w.contains("stopped while retrying"), "{w}");
}
