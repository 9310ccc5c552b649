//! What Google's answers mean about capacity, as pure functions over codes and messages
//! (built with or without the HTTP client, like the node-group rules that use them): the
//! capacity vocabulary of Compute Engine and GKE, and a failed GKE node pool's error.

use crate::seam::error::failed_group_text;
use crate::seam::{CapacityOutcome, CloudError, HealthIssue, NodeGroupStatus};

/// What a Google answer says about capacity, from its code (a Compute `errors[].code`, an
/// `ErrorInfo` reason, or a GKE status code) and message:
/// - a stockout: `ZONE_RESOURCE_POOL_EXHAUSTED[_WITH_DETAILS]`, GKE's `GCE_STOCKOUT`, "The
///   zone '...' does not have enough resources available to fulfill the request";
/// - a quota: `QUOTA_EXCEEDED` ("Quota 'NVIDIA_H100_GPUS' exceeded. Limit: 0.0 in region
///   us-central1."), GKE's "Insufficient regional (or project) quota to satisfy request";
/// - not offered: a machine or accelerator type that "does not exist in zone" or "is not
///   available in zone".
///
/// References: https://cloud.google.com/compute/docs/troubleshooting/troubleshooting-resource-availability
/// and https://cloud.google.com/kubernetes-engine/docs/troubleshooting/node-pools.
pub fn capacity_in(code: &str, message: &str) -> Option<CapacityOutcome> {
    let code = code.to_ascii_uppercase();
    let lower = message.to_ascii_lowercase();
    if code.starts_with("ZONE_RESOURCE_POOL_EXHAUSTED")
        || code == "GCE_STOCKOUT"
        || lower.contains("zone_resource_pool_exhausted")
        || lower.contains("gce_stockout")
        || lower.contains("does not have enough resources")
        || lower.contains("state:stockout")
    {
        Some(CapacityOutcome::Stockout)
    } else if code.contains("QUOTA")
        || lower.contains("quota_exceeded")
        || (lower.contains("insufficient") && lower.contains("quota"))
        || (lower.contains("quota") && lower.contains("exceeded"))
    {
        Some(CapacityOutcome::Quota)
    } else if lower.contains("does not exist in zone")
        || lower.contains("not available in zone")
        || lower.contains("is not supported in zone")
    {
        Some(CapacityOutcome::NotOffered)
    } else {
        None
    }
}

/// The error of capacity `outcome` with `text`.
pub fn capacity_error(outcome: CapacityOutcome, text: String) -> CloudError {
    match outcome {
        CapacityOutcome::Stockout => CloudError::InsufficientCapacity(text),
        CapacityOutcome::Quota => CloudError::Quota(text),
        CapacityOutcome::NotOffered => CloudError::NotOffered(text),
    }
}

/// The error for a GKE node pool that settled in a failed state: typed from its status
/// message when that says capacity (`[GCE_STOCKOUT]`, `ZONE_RESOURCE_POOL_EXHAUSTED`, a
/// regional quota), else the neutral error.
pub fn failed_group(what: &str, status: &NodeGroupStatus, issues: &[HealthIssue]) -> CloudError {
    let text = failed_group_text(what, status, issues);
    match issues.iter().find_map(|i| capacity_in(&i.code, &i.message)) {
        Some(outcome) => capacity_error(outcome, text),
        None => CloudError::Other(text),
    }
}
