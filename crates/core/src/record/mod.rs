//! The record of capacity events: one JSON object per line, appended by the provider (a
//! request for GPUs, a capacity answer, GPUs ready; `audit` lines for every mutating
//! cloud call, written by [`crate::audit`]) and read back by `report`. The
//! watcher's events have the same base fields (`at`, `event`, `cloud`, `region`), so one
//! report reads both.
//!
//! A line carries the place, the GPU, the outcome, how long and the cloud's words: never a
//! credential, a header or a user's data.

pub mod availability;
pub mod log;
pub mod report;

pub use log::EventLog;

use serde::{Deserialize, Serialize};

/// The environment variable naming the events file when the provider block does not.
pub const EVENTS_FILE_ENV: &str = "GPU_TF_EVENTS_FILE";

/// One line of the record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EventLine {
    /// When, RFC 3339 (UTC).
    pub at: String,
    /// What happened: `request`, `capacity`, `ready` (and the watcher's own words:
    /// `reclaimed`, `start_attempt`, `started`, ...).
    pub event: String,
    /// `aws`, `azure` or `gcp`.
    pub cloud: String,
    /// The region (for a pool, its cluster's).
    #[serde(default)]
    pub region: String,
    /// The resource: its type and name (`gpu_node_pool.train`; Terraform does not tell a
    /// provider the resource's address, so this is the name the user gave the pool or VM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The zone, where the request named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// The GPU model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// A capacity answer's outcome: `stockout`, `quota`, `not_offered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Seconds from the first request to this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// The cloud's words, or what was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// An audit event's caller, as the cloud knows it (an ARN, an Entra object id, a
    /// Google service account e-mail), or `unknown` when the cloud cannot say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// An audit event's call, e.g. `create_node_group`, `purchase_commitment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// An audit event's object, by its cloud id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The Terraform address, when Terraform gives it (plugin protocol 5 and 6 do not:
    /// `resource` holds the name instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_address: Option<String>,
    /// An audit event's outcome: `ok`, or the kind of error (`quota`, `insufficient_capacity`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The monthly cost change of the apply the call belongs to, USD (the same on each
    /// call of one apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_delta_usd: Option<f64>,
}

impl EventLine {
    /// An event of kind `event` at `cloud` `region`, now.
    pub fn now(event: &str, cloud: &str, region: &str) -> Self {
        EventLine {
            at: crate::time::format_rfc3339(crate::time::unix_now() as i64),
            event: event.to_string(),
            cloud: cloud.to_string(),
            region: region.to_string(),
            ..EventLine::default()
        }
    }

    /// A line of kind `event`, now, about the same request as this one (place, resource,
    /// zone, GPU); outcome, seconds and detail left for the caller.
    pub fn next(&self, event: &str) -> Self {
        EventLine {
            resource: self.resource.clone(),
            zone: self.zone.clone(),
            gpu: self.gpu.clone(),
            ..EventLine::now(event, &self.cloud, &self.region)
        }
    }

    /// The line as JSON (no newline).
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}
