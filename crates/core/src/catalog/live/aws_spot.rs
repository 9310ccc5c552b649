//! AWS spot prices from EC2 `DescribeSpotPriceHistory` (aws-sdk-ec2), per region:
//! the catalog's GPU types of the region, product description `Linux/UNIX`, start time
//! now (so each zone's current price comes back), all pages.
//!
//! Credentials and settings come from [`super::LiveConfig::aws_sdk_config`], else from
//! the usual chain (environment, shared config with `aws_profile`, SSO cache, container
//! and instance metadata); the EC2 endpoint can be overridden
//! ([`super::Endpoints::aws_ec2`]). The latest price per (zone, type) wins. Each page is
//! one call under the crate's retry policy ([`crate::retry`]) with the config's retry
//! count and backoff; the SDK's own retries are off.
//!
//! Zones: a quote's zone is the AZ *id* (`use1-az4`) when EC2 reports one, which is what
//! the snapshot's zone column holds, so such rows are updated in place; otherwise it is
//! the AZ *name* (`us-east-1a`, which maps to different ids in different accounts). For
//! a (region, type) with live quotes, rows of unquoted zones are replaced by the quoted
//! zones (see [`super::merge`]), so a name never sits beside a stale id for one zone.

use std::collections::{BTreeSet, HashMap};

use crate::seam::error::error_chain;
use aws_sdk_ec2::config::retry::RetryConfig;
use aws_sdk_ec2::config::timeout::TimeoutConfig;
use aws_sdk_ec2::config::{BehaviorVersion, ProvideCredentials, Region};
use aws_sdk_ec2::types::InstanceType;

use super::cache::fingerprint;
use super::error::LiveError;
use super::quote::{Fetched, PriceKind, Quote};
use super::report::{ProgressEvent, SourceId};
use super::scope::{Ctx, SourceRun};
use super::time::unix_now;
use super::wanted::Wanted;
use crate::clouds::aws::sdk::verdict;
use crate::retry;

/// The product description asked for.
pub const PRODUCT: &str = "Linux/UNIX";
const OPERATION: &str = "DescribeSpotPriceHistory";

/// Refreshes AWS spot prices of `wanted`, one cached scope per region.
pub async fn run(ctx: &Ctx<'_>, wanted: &Wanted) -> SourceRun {
    let source = SourceId::AwsSpot;
    let mut run = SourceRun::new(source);
    (ctx.progress)(ProgressEvent::SourceStarted {
        source,
        scopes: wanted.regions.len(),
    });
    let mut sdk: Option<Result<aws_config::SdkConfig, String>> = None;
    for region in &wanted.regions {
        let types = wanted.types_in(region);
        let fp = fingerprint(
            types.iter().map(String::as_str).chain([ctx
                .cfg
                .endpoints
                .aws_ec2
                .as_deref()
                .unwrap_or("-")]),
        );
        let sdk_ref = &mut sdk;
        run.scope(ctx, region, &fp, async || {
            if sdk_ref.is_none() {
                *sdk_ref = Some(load_sdk_config(ctx, region).await);
            }
            match sdk_ref.as_ref() {
                Some(Ok(conf)) => fetch_region(ctx, conf, region, &types).await,
                Some(Err(e)) => Err(LiveError::Aws {
                    operation: OPERATION,
                    region: region.clone(),
                    message: e.clone(),
                }),
                None => unreachable!("set above"),
            }
        })
        .await;
    }
    run
}

/// The SDK configuration to use, with credentials checked once up front.
async fn load_sdk_config(ctx: &Ctx<'_>, region: &str) -> Result<aws_config::SdkConfig, String> {
    let conf = match &ctx.cfg.aws_sdk_config {
        Some(c) => c.clone(),
        None => {
            let mut loader = aws_config::defaults(BehaviorVersion::latest())
                .region(Region::new(region.to_string()));
            if let Some(p) = &ctx.cfg.aws_profile {
                loader = loader.profile_name(p);
            }
            loader.load().await
        }
    };
    let provider = conf
        .credentials_provider()
        .ok_or_else(|| "no AWS credentials provider configured".to_string())?;
    provider
        .provide_credentials()
        .await
        .map_err(|e| format!("no AWS credentials: {}", error_chain(&e)))?;
    Ok(conf)
}

async fn fetch_region(
    ctx: &Ctx<'_>,
    sdk: &aws_config::SdkConfig,
    region: &str,
    types: &BTreeSet<String>,
) -> Result<Fetched, LiveError> {
    let cfg = ctx.cfg;
    let mut conf = aws_sdk_ec2::config::Builder::from(sdk)
        .region(Region::new(region.to_string()))
        // Retries are the crate's policy (below), not the SDK's.
        .retry_config(RetryConfig::disabled())
        .timeout_config(
            TimeoutConfig::builder()
                .operation_attempt_timeout(cfg.timeout)
                .build(),
        );
    if let Some(ep) = &cfg.endpoints.aws_ec2 {
        conf = conf.endpoint_url(ep);
    }
    let client = aws_sdk_ec2::Client::from_conf(conf.build());
    let request = client
        .describe_spot_price_history()
        .set_instance_types(Some(
            types
                .iter()
                .map(|t| InstanceType::from(t.as_str()))
                .collect(),
        ))
        .product_descriptions(PRODUCT)
        .start_time(aws_sdk_ec2::primitives::DateTime::from_secs(
            unix_now() as i64
        ))
        .max_results(1000);
    let policy = cfg.retry_policy();
    // The scale only where EC2 is not AWS's own (an emulator named by the config).
    let pace = crate::pace::Pace::at(cfg.time_scale.at(
        crate::clouds::aws::endpoints::overridden_here("EC2", cfg.endpoints.aws_ec2.as_deref()),
    ));
    // (zone, type) → (timestamp, price)
    let mut latest: HashMap<(String, String), (i64, f64)> = HashMap::new();
    let mut n = 0usize;
    let mut next_token: Option<String> = None;
    let mut previous_token: Option<String> = None;
    loop {
        let call = request.clone().set_next_token(next_token.take());
        let page = retry::run(&policy, &pace, &cfg.cancel, || call.clone().send(), verdict)
            .await
            .map_err(|f| LiveError::Aws {
                operation: OPERATION,
                region: region.to_string(),
                message: f.describe(error_chain(&f.error)),
            })?;
        n += 1;
        (ctx.progress)(ProgressEvent::PageFetched {
            source: SourceId::AwsSpot,
            scope: region.to_string(),
            page: n,
            of: None,
        });
        for sp in page.spot_price_history() {
            let zone = sp.availability_zone_id().or(sp.availability_zone());
            let (Some(zone), Some(t), Some(price)) = (zone, sp.instance_type(), sp.spot_price())
            else {
                continue;
            };
            if sp
                .product_description()
                .is_some_and(|d| d.as_str() != PRODUCT)
            {
                continue;
            }
            let Some(price) = price.trim().parse::<f64>().ok().filter(|p| *p > 0.0) else {
                continue;
            };
            let at = sp.timestamp().map_or(i64::MIN, |t| t.secs());
            let key = (zone.to_string(), t.as_str().to_string());
            match latest.get(&key) {
                Some(&(old, _)) if old > at => {}
                _ => {
                    latest.insert(key, (at, price));
                }
            }
        }
        // The last page has no token; a token repeated would loop forever.
        match page.next_token().filter(|t| !t.is_empty()) {
            Some(t) if Some(t) != previous_token.as_deref() => {
                previous_token = Some(t.to_string());
                next_token = previous_token.clone();
            }
            _ => break,
        }
    }
    let mut quotes: Vec<Quote> = latest
        .into_iter()
        .filter(|((_, t), _)| types.contains(t))
        .map(|((zone, instance_type), (_, price))| Quote {
            region: region.to_string(),
            zone: Some(zone),
            instance_type,
            kind: PriceKind::Spot,
            usd_per_hour: price,
        })
        .collect();
    quotes.sort_by(|a, b| (&a.instance_type, &a.zone).cmp(&(&b.instance_type, &b.zone)));
    Ok(Fetched { quotes, pages: n })
}
