//! [`LiveConfig`]: where live prices come from, how long they are cached, how hard to try.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::cancel::Cancel;
use crate::pace::{Pace, TimeScale};
use crate::retry::{Backoff, RetryPolicy};

/// Environment variable holding the Google Cloud Billing Catalog API key.
pub const GCP_API_KEY_ENV: &str = "GOOGLE_CLOUD_BILLING_API_KEY";

/// Default base URL of the Azure Retail Prices API.
pub const AZURE_DEFAULT_ENDPOINT: &str = "https://prices.azure.com";
/// Default base URL of the Google Cloud Billing Catalog API.
pub const GCP_DEFAULT_ENDPOINT: &str = "https://cloudbilling.googleapis.com";
/// Default base URL of the AWS bulk price list files.
pub const AWS_PRICE_LIST_DEFAULT_ENDPOINT: &str = "https://pricing.us-east-1.amazonaws.com";

/// A secret string (an API key) that never shows in `Debug` output, errors or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for building a request.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Base URLs of the price sources, overridable for tests and private mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// Azure Retail Prices API base (`/api/retail/prices` is appended).
    pub azure: String,
    /// Google Cloud Billing Catalog API base (`/v1/services/…/skus` is appended).
    pub gcp: String,
    /// AWS bulk price list base (`/offers/v1.0/aws/AmazonEC2/current/{region}/index.json`).
    pub aws_price_list: String,
    /// EC2 endpoint for spot price history; `None` uses the SDK's regional endpoint.
    pub aws_ec2: Option<String>,
}

impl Default for Endpoints {
    fn default() -> Self {
        Endpoints {
            azure: AZURE_DEFAULT_ENDPOINT.to_string(),
            gcp: GCP_DEFAULT_ENDPOINT.to_string(),
            aws_price_list: AWS_PRICE_LIST_DEFAULT_ENDPOINT.to_string(),
            aws_ec2: None,
        }
    }
}

/// Settings of a live refresh ([`super::refresh`]).
#[derive(Clone)]
pub struct LiveConfig {
    /// Directory of the on-disk price cache (one JSON file per source and scope).
    pub cache_dir: PathBuf,
    /// How long a cached answer is used without asking the network again.
    pub ttl: Duration,
    /// Base URLs of the sources.
    pub endpoints: Endpoints,
    /// Timeout of one HTTP request (connect plus the whole response).
    pub timeout: Duration,
    /// Retries after the first attempt on 429, 5xx and transport errors.
    pub max_retries: u32,
    /// First backoff delay; doubled per retry, with jitter, capped by `max_backoff`.
    pub initial_backoff: Duration,
    /// Upper bound of one backoff delay, including a server's `Retry-After`.
    pub max_backoff: Duration,
    /// Only refresh these regions (as each cloud spells them); empty: every catalog region.
    pub regions: Vec<String>,
    /// Google Cloud Billing Catalog API key; `None` falls back to [`GCP_API_KEY_ENV`].
    pub gcp_api_key: Option<ApiKey>,
    /// AWS SDK configuration (credentials, retry, …) for spot prices; `None` loads the usual
    /// chain (environment, profile, IMDS …) with `aws_profile` if set.
    pub aws_sdk_config: Option<aws_config::SdkConfig>,
    /// AWS shared-config profile to load when `aws_sdk_config` is `None`.
    pub aws_profile: Option<String>,
    /// Set when Terraform asks the provider to stop: pauses between retries end at once.
    pub cancel: Cancel,
    /// The test-only time scale asked for ([`crate::pace`]): it shrinks the retry pauses
    /// of a source whose endpoint is overridden, never of a public one.
    pub time_scale: TimeScale,
}

impl LiveConfig {
    /// Defaults, with the cache in [`default_cache_dir`].
    pub fn new() -> Self {
        LiveConfig {
            cache_dir: default_cache_dir(),
            ttl: Duration::from_secs(6 * 3600),
            endpoints: Endpoints::default(),
            timeout: Duration::from_secs(120),
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            regions: Vec::new(),
            gcp_api_key: None,
            aws_sdk_config: None,
            aws_profile: None,
            cancel: Cancel::new(),
            time_scale: TimeScale::REAL,
        }
    }

    /// The GCP API key: the explicit one, else the environment's, else `None`.
    pub fn resolved_gcp_api_key(&self) -> Option<ApiKey> {
        self.gcp_api_key.clone().or_else(|| {
            std::env::var(GCP_API_KEY_ENV)
                .ok()
                .filter(|k| !k.trim().is_empty())
                .map(ApiKey::new)
        })
    }

    /// The crate's retry policy with this config's retry count and backoff.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_attempts: self.max_retries + 1,
            max_throttled_attempts: self.max_retries + 1,
            backoff: Backoff {
                initial: self.initial_backoff,
                max: self.max_backoff,
            },
        }
    }

    /// Whether `region` is selected by [`LiveConfig::regions`].
    pub fn wants_region(&self, region: &str) -> bool {
        self.regions.is_empty() || self.regions.iter().any(|r| r == region)
    }
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig::new()
    }
}

impl fmt::Debug for LiveConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveConfig")
            .field("cache_dir", &self.cache_dir)
            .field("ttl", &self.ttl)
            .field("endpoints", &self.endpoints)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("regions", &self.regions)
            .field("gcp_api_key", &self.gcp_api_key)
            .field("aws_sdk_config", &self.aws_sdk_config.as_ref().map(|_| "…"))
            .field("aws_profile", &self.aws_profile)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("time_scale", &self.time_scale)
            .finish()
    }
}

/// The clock of the retry pauses of a call to `url` with `time_scale` asked: that scale
/// where `url` is not one of the public price endpoints, real time where it is.
pub fn pace_for(time_scale: TimeScale, url: &str) -> Pace {
    let public = [
        AZURE_DEFAULT_ENDPOINT,
        GCP_DEFAULT_ENDPOINT,
        AWS_PRICE_LIST_DEFAULT_ENDPOINT,
    ]
    .iter()
    .any(|base| url.starts_with(base));
    Pace::at(time_scale.at(!public))
}

/// `$XDG_CACHE_HOME/terraform-provider-gpu/prices`, else `~/.cache/…`, else a temp dir.
pub fn default_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("terraform-provider-gpu").join("prices")
}
