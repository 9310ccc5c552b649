//! [`Quote`]: one live price of one instance type in one region (or zone), and what a
//! source hands back after fetching one scope.

use serde::{Deserialize, Serialize};

/// Which of an offer's two prices a quote is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriceKind {
    /// The on-demand (pay-as-you-go) price.
    OnDemand,
    /// The spot (preemptible) price.
    Spot,
}

/// One live price: USD per instance-hour of `instance_type` in `region` (and `zone`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quote {
    /// Region as the cloud spells it.
    pub region: String,
    /// Zone, for per-zone prices (AWS spot); `None` for a price of the whole region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Instance type / VM size / machine type.
    pub instance_type: String,
    /// On-demand or spot.
    pub kind: PriceKind,
    /// USD per instance-hour.
    pub usd_per_hour: f64,
}

/// What one scope of a source produced (and what the disk cache keeps of it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fetched {
    /// The prices.
    pub quotes: Vec<Quote>,
    /// Pages (HTTP requests or API calls) it took.
    pub pages: usize,
}
