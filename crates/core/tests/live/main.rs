//! Live price sources against local fake servers that answer like the real APIs.

mod aws_price_list;
mod aws_spot;
mod azure;
mod big_file;
mod cache;
mod gcp;
mod resilience;
mod server;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gpu_core::catalog::Catalog;
use gpu_core::catalog::live::{ApiKey, Endpoints, LiveConfig, LiveRefresh, ProgressEvent, refresh};
use gpu_core::offer::{Cloud, Offer};

/// A small catalog from CSV rows (without the header).
pub fn catalog(rows: &str) -> Catalog {
    let csv = format!(
        "cloud,region,zone,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour,source,as_of\n{}",
        rows.trim()
    );
    Catalog::from_csv(csv.as_bytes()).expect("test catalog")
}

/// A fresh, empty cache directory for one test.
pub fn cache_dir(test: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "gpu-core-live-{test}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A config pointing every source at `base`, fast backoff, static AWS test credentials.
pub fn config(test: &str, base: &str) -> LiveConfig {
    let mut cfg = LiveConfig::new();
    cfg.cache_dir = cache_dir(test);
    cfg.endpoints = Endpoints {
        azure: base.to_string(),
        gcp: base.to_string(),
        aws_price_list: base.to_string(),
        aws_ec2: Some(base.to_string()),
    };
    cfg.timeout = Duration::from_secs(10);
    cfg.initial_backoff = Duration::from_millis(10);
    cfg.max_backoff = Duration::from_secs(3);
    cfg.gcp_api_key = Some(ApiKey::new("test-key-123"));
    cfg.aws_sdk_config = Some(aws_sdk_config());
    cfg
}

/// An SDK config with static credentials (nothing from the environment).
pub fn aws_sdk_config() -> aws_config::SdkConfig {
    use aws_sdk_ec2::config::{BehaviorVersion, Credentials, Region, SharedCredentialsProvider};
    aws_config::SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(SharedCredentialsProvider::new(Credentials::new(
            "AKIDTEST",
            "secret-test",
            None,
            None,
            "test",
        )))
        .build()
}

/// Runs a refresh of `clouds`, collecting progress events.
pub async fn run(
    base: &Catalog,
    cfg: &LiveConfig,
    clouds: &[Cloud],
) -> (LiveRefresh, Vec<ProgressEvent>) {
    let events = Mutex::new(Vec::new());
    let progress = |e: ProgressEvent| events.lock().unwrap().push(e);
    let r = refresh(base, cfg, clouds, &progress).await;
    (r, events.into_inner().unwrap())
}

/// The offer of (cloud, region, zone, type) in `c`.
pub fn find<'a>(
    c: &'a Catalog,
    cloud: Cloud,
    region: &str,
    zone: Option<&str>,
    t: &str,
) -> &'a Offer {
    c.offers()
        .iter()
        .find(|o| {
            o.cloud == cloud
                && o.region == region
                && o.zone.as_deref() == zone
                && o.instance_type == t
        })
        .unwrap_or_else(|| panic!("no {cloud}/{region}/{zone:?} {t} in {:#?}", c.offers()))
}

/// Asserts `a ≈ b`.
pub fn close(a: Option<f64>, b: f64) {
    let a = a.unwrap_or_else(|| panic!("expected a price ≈ {b}, got none"));
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// Today as `YYYY-MM-DD`, like the refresh stamps `as_of`.
pub fn today() -> String {
    gpu_core::catalog::live::time::date_of(gpu_core::catalog::live::time::unix_now())
}
