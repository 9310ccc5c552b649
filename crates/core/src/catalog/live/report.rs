//! What a refresh tells its caller: which source ([`SourceId`]), how it went
//! ([`SourceStats`]), and progress as it happens ([`ProgressEvent`]).

use std::fmt;

use crate::offer::Cloud;

/// A live price source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceId {
    /// AWS on-demand prices from the public bulk price list files.
    AwsPriceList,
    /// AWS spot prices from EC2 `DescribeSpotPriceHistory`.
    AwsSpot,
    /// Azure Retail Prices API (on-demand and spot).
    AzureRetail,
    /// Google Cloud Billing Catalog API (composed on-demand and spot).
    GcpBillingCatalog,
}

impl SourceId {
    /// Every source, in refresh order.
    pub const ALL: [SourceId; 4] = [
        SourceId::AwsPriceList,
        SourceId::AwsSpot,
        SourceId::AzureRetail,
        SourceId::GcpBillingCatalog,
    ];

    /// Stable id used in cache file names, labels and `source` columns.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceId::AwsPriceList => "aws-price-list",
            SourceId::AwsSpot => "aws-spot-price-history",
            SourceId::AzureRetail => "azure-retail-prices",
            SourceId::GcpBillingCatalog => "gcp-billing-catalog",
        }
    }

    /// The cloud whose prices it has.
    pub fn cloud(self) -> Cloud {
        match self {
            SourceId::AwsPriceList | SourceId::AwsSpot => Cloud::Aws,
            SourceId::AzureRetail => Cloud::Azure,
            SourceId::GcpBillingCatalog => Cloud::Gcp,
        }
    }
}

impl fmt::Display for SourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How one source's refresh went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStats {
    /// The source.
    pub source: SourceId,
    /// Catalog rows whose price this source replaced.
    pub rows_updated: usize,
    /// Prices the source returned (before matching them to rows).
    pub quotes: usize,
    /// Pages fetched over the network in this refresh.
    pub pages_fetched: usize,
    /// Scopes (regions, or `all`) answered from the disk cache.
    pub scopes_from_cache: usize,
    /// Scopes answered by the network.
    pub scopes_from_network: usize,
    /// Scopes that failed (their rows keep the snapshot's prices).
    pub scopes_failed: usize,
    /// Whether the source was skipped altogether (no API key, cloud not asked for …).
    pub skipped: bool,
}

impl SourceStats {
    /// Empty stats of `source`.
    pub fn new(source: SourceId) -> Self {
        SourceStats {
            source,
            rows_updated: 0,
            quotes: 0,
            pages_fetched: 0,
            scopes_from_cache: 0,
            scopes_from_network: 0,
            scopes_failed: 0,
            skipped: false,
        }
    }
}

/// Progress of a refresh, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A source begins; it will go through `scopes` scopes (regions, or 1 for `all`).
    SourceStarted {
        /// The source.
        source: SourceId,
        /// Number of scopes.
        scopes: usize,
    },
    /// A scope was answered from the disk cache.
    CacheHit {
        /// The source.
        source: SourceId,
        /// The scope.
        scope: String,
    },
    /// A page arrived: page `page` (1-based) of `of` where the API says how many.
    PageFetched {
        /// The source.
        source: SourceId,
        /// The scope.
        scope: String,
        /// 1-based page number.
        page: usize,
        /// Total pages, when known.
        of: Option<usize>,
    },
    /// A source is done (successfully or not; see its stats and the warnings).
    SourceFinished {
        /// The source.
        source: SourceId,
        /// Rows it updated.
        rows_updated: usize,
    },
}
