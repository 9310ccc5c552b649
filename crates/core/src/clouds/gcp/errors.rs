//! Google API errors to [`CloudError`]: the body `{"error": {"code", "message", "status",
//! "details"}}` ([AIP-193](https://google.aip.dev/193)) of a failed call, and the
//! `google.rpc.Status` (`{code, message}`, `code` a `google.rpc.Code` number) a failed
//! operation ends with. Only the status, reason and message are kept: never headers.

use serde::Deserialize;

use super::codes::{capacity_error, capacity_in};
use crate::seam::CloudError;

/// The `error` object of a Google API error body.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct GoogleError {
    /// Human message.
    #[serde(default)]
    pub message: String,
    /// Canonical status name, e.g. `FAILED_PRECONDITION`.
    #[serde(default)]
    pub status: String,
    /// `google.rpc` details; the `ErrorInfo` `reason` is read from them.
    #[serde(default)]
    pub details: Vec<serde_json::Value>,
    /// The older `errors[]` list (Compute Engine), whose first `reason` is read when no
    /// `ErrorInfo` detail gives one.
    #[serde(default)]
    pub errors: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Body {
    error: GoogleError,
}

impl GoogleError {
    /// The `reason` of an `ErrorInfo` detail, e.g. `CLUSTER_ALREADY_HAS_OPERATION`.
    fn reason(&self) -> Option<&str> {
        self.details
            .iter()
            .filter(|d| {
                d.get("@type").and_then(|t| t.as_str())
                    == Some("type.googleapis.com/google.rpc.ErrorInfo")
            })
            .find_map(|d| d.get("reason").and_then(|r| r.as_str()))
            .or_else(|| {
                self.errors
                    .first()
                    .and_then(|e| e.get("reason"))
                    .and_then(|r| r.as_str())
            })
    }
}

/// The typed error of a failed HTTP answer: `status` and its body (Google's error shape
/// when it parses, else the status alone).
pub(crate) fn from_response(status: u16, body: &[u8]) -> CloudError {
    let e = serde_json::from_slice::<Body>(body)
        .map(|b| b.error)
        .unwrap_or_default();
    classify(status, &e.status, e.reason(), &e.message)
}

/// `google.rpc.Code` numbers as canonical names (the ones an operation error carries).
fn code_name(code: i64) -> &'static str {
    match code {
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "",
    }
}

/// The typed error of an operation that ended `DONE` with `error {code, message}`: a
/// capacity answer as [`capacity_in`] reads it, else by its `google.rpc.Code`.
pub(crate) fn from_operation(what: &str, code: i64, message: &str) -> CloudError {
    let name = code_name(code);
    let text = format!("{what} failed: {}{message}", prefix(name));
    if let Some(outcome) = capacity_in("", message) {
        return capacity_error(outcome, text);
    }
    match name {
        "RESOURCE_EXHAUSTED" => CloudError::Quota(text),
        "NOT_FOUND" => CloudError::NotFound(text),
        "ALREADY_EXISTS" | "ABORTED" | "FAILED_PRECONDITION" => CloudError::Conflict(text),
        "PERMISSION_DENIED" | "UNAUTHENTICATED" => CloudError::Unauthorized(text),
        "INVALID_ARGUMENT" | "OUT_OF_RANGE" => CloudError::Invalid(text),
        _ => CloudError::Other(text),
    }
}

fn prefix(status: &str) -> String {
    if status.is_empty() {
        String::new()
    } else {
        format!("{status}: ")
    }
}

/// The kind of an error from its HTTP `status`, canonical `name`, `ErrorInfo` reason and
/// message:
/// - 429 (whatever the name): throttled (Google's rate limits answer 429
///   `RESOURCE_EXHAUSTED` "Quota exceeded for quota metric 'Requests' ...");
/// - other `RESOURCE_EXHAUSTED` or a `QUOTA_EXCEEDED`-like reason: quota;
/// - 5xx, `INTERNAL`, `UNAVAILABLE`, `DEADLINE_EXCEEDED`: transient;
/// - 404 / `NOT_FOUND`: not found;
/// - `FAILED_PRECONDITION` for another operation running on the cluster
///   (`CLUSTER_ALREADY_HAS_OPERATION`, "Cluster is running incompatible operation ..."):
///   busy, as AKS's `OperationNotAllowed` for an operation in progress is (nothing was
///   done; the reconcile sends it again once the cluster is free);
/// - 409 (`ALREADY_EXISTS`, `ABORTED`): conflict (the reconcile adopts a group that exists
///   already);
/// - 401/403: unauthorized; other 400s: invalid.
fn classify(status: u16, name: &str, reason: Option<&str>, message: &str) -> CloudError {
    let name = if name.is_empty() {
        match status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            409 => "ABORTED",
            429 => "RESOURCE_EXHAUSTED",
            500 => "INTERNAL",
            503 => "UNAVAILABLE",
            _ => "",
        }
    } else {
        name
    };
    let msg = if message.trim().is_empty() {
        format!("HTTP {status}")
    } else {
        message.trim().to_string()
    };
    let text = format!("{}{msg}", prefix(name));
    let reason = reason.unwrap_or("");
    let lower = msg.to_ascii_lowercase();
    // Compute Engine throttles with 403 `rateLimitExceeded` (and `userRateLimitExceeded`).
    let reason_word = reason.replace('_', "").to_ascii_lowercase();
    if status == 429 || reason_word.ends_with("ratelimitexceeded") {
        return CloudError::Throttled(text);
    }
    // A missing or conflicting object is never a capacity answer, whatever its name says.
    if !matches!(status, 404 | 409)
        && let Some(outcome) = capacity_in(reason, &msg)
    {
        return capacity_error(outcome, text);
    }
    if name == "RESOURCE_EXHAUSTED" {
        return CloudError::Quota(text);
    }
    match (status, name) {
        (500..=599, _) | (_, "INTERNAL" | "UNAVAILABLE" | "DEADLINE_EXCEEDED") => {
            CloudError::Transient(text)
        }
        (404, _) | (_, "NOT_FOUND") => CloudError::NotFound(text),
        (409, _) | (_, "ALREADY_EXISTS" | "ABORTED") => CloudError::Conflict(text),
        (_, "FAILED_PRECONDITION")
            if reason == "CLUSTER_ALREADY_HAS_OPERATION"
                || lower.contains("incompatible operation")
                || lower.contains("please wait and try again") =>
        {
            CloudError::Busy(text)
        }
        (401 | 403, _) | (_, "UNAUTHENTICATED" | "PERMISSION_DENIED") => {
            CloudError::Unauthorized(text)
        }
        (400..=499, _) => CloudError::Invalid(text),
        _ => CloudError::Other(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clouds::gcp::codes::failed_group;
    use crate::seam::{HealthIssue, NodeGroupStatus};

    fn body(code: u16, status: &str, message: &str, reason: Option<&str>) -> Vec<u8> {
        let details = reason.map_or_else(Vec::new, |r| {
            vec![serde_json::json!({
                "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": r})]
        });
        serde_json::to_vec(&serde_json::json!({"error": {
            "code": code, "message": message, "status": status, "details": details}}))
        .unwrap()
    }

    #[test]
    fn a_front_end_rate_limit_is_throttling() {
        let e = from_response(
            403,
            &body(
                403,
                "PERMISSION_DENIED",
                "Quota exceeded",
                Some("RATE_LIMIT_EXCEEDED"),
            ),
        );
        assert!(matches!(e, CloudError::Throttled(_)), "{e:?}");
    }

    #[test]
    fn compute_rate_limits_are_throttling_and_its_errors_list_gives_the_reason() {
        let body = serde_json::json!({"error": {"code": 403,
            "message": "Rate Limit Exceeded",
            "errors": [{"domain": "usageLimits", "reason": "rateLimitExceeded",
                        "message": "Rate Limit Exceeded"}]}});
        let e = from_response(403, &serde_json::to_vec(&body).unwrap());
        assert!(matches!(e, CloudError::Throttled(_)), "{e:?}");
        let denied = serde_json::json!({"error": {"code": 403, "message": "Required 'compute.reservations.create' permission",
            "errors": [{"domain": "global", "reason": "forbidden"}]}});
        let e = from_response(403, &serde_json::to_vec(&denied).unwrap());
        assert!(matches!(e, CloudError::Unauthorized(_)), "{e:?}");
    }

    #[test]
    fn google_error_bodies_map_to_kinds() {
        let kind =
            |code, status, msg, reason| from_response(code, &body(code, status, msg, reason));
        assert!(matches!(
            kind(404, "NOT_FOUND", "Not found: x.", None),
            CloudError::NotFound(_)
        ));
        assert!(matches!(
            kind(409, "ALREADY_EXISTS", "Already exists: x.", None),
            CloudError::Conflict(_)
        ));
        let busy = kind(
            400,
            "FAILED_PRECONDITION",
            "Cluster is running incompatible operation operation-1-a.",
            Some("CLUSTER_ALREADY_HAS_OPERATION"),
        );
        assert_eq!(
            busy,
            CloudError::Busy(
                "FAILED_PRECONDITION: Cluster is running incompatible operation operation-1-a."
                    .into()
            )
        );
        // The same answer without the ErrorInfo detail (older front ends).
        assert!(matches!(
            kind(
                400,
                "FAILED_PRECONDITION",
                "Cluster is running incompatible operation operation-1717-abc.",
                None
            ),
            CloudError::Busy(_)
        ));
        assert!(matches!(
            kind(400, "FAILED_PRECONDITION", "Node pool is not ready.", None),
            CloudError::Invalid(_)
        ));
        assert!(matches!(
            kind(
                429,
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for quota metric 'Requests'",
                None
            ),
            CloudError::Throttled(_)
        ));
        assert!(matches!(
            kind(
                403,
                "PERMISSION_DENIED",
                "Quota 'GPUS' exceeded",
                Some("QUOTA_EXCEEDED")
            ),
            CloudError::Quota(_)
        ));
        assert!(matches!(
            kind(503, "UNAVAILABLE", "x", None),
            CloudError::Transient(_)
        ));
        assert!(matches!(
            kind(500, "INTERNAL", "x", None),
            CloudError::Transient(_)
        ));
        assert!(matches!(
            kind(401, "UNAUTHENTICATED", "x", None),
            CloudError::Unauthorized(_)
        ));
        assert!(matches!(
            kind(403, "PERMISSION_DENIED", "x", None),
            CloudError::Unauthorized(_)
        ));
        assert!(matches!(
            kind(400, "INVALID_ARGUMENT", "x", None),
            CloudError::Invalid(_)
        ));
        // Not Google's shape (a proxy's HTML page): typed by the status alone.
        assert!(matches!(
            from_response(502, b"<html>"),
            CloudError::Transient(_)
        ));
        assert_eq!(
            from_response(404, b"").to_string(),
            "not found: NOT_FOUND: HTTP 404"
        );
    }

    #[test]
    fn failed_operations_are_typed_from_their_status() {
        let e = from_operation(
            "creating np",
            8,
            "ZONE_RESOURCE_POOL_EXHAUSTED in us-central1-a",
        );
        assert!(matches!(e, CloudError::InsufficientCapacity(_)), "{e}");
        assert!(matches!(
            from_operation("x", 8, "Quota 'NVIDIA_L4_GPUS' exceeded"),
            CloudError::Quota(_)
        ));
        let e = from_operation("x", 3, "bad");
        assert_eq!(
            e,
            CloudError::Invalid("x failed: INVALID_ARGUMENT: bad".into())
        );
        assert!(matches!(from_operation("x", 99, "?"), CloudError::Other(_)));
    }

    /// Google's capacity answers with their real texts: a GKE operation's error, a node
    /// pool's status message, a Compute operation's `errors[]`, an HTTP error body.
    #[test]
    fn google_capacity_answers_are_classified() {
        use crate::seam::CapacityOutcome::{NotOffered, Quota, Stockout};
        // GKE: the node pool operation ends with the IGM's stockout.
        let gke = from_operation(
            "creating node pool np-od",
            13,
            "Google Compute Engine: Not all instances running in IGM after 35m4.03s. Expected 1, running 0, transitioning 1. Current errors: [GCE_STOCKOUT]: Instance 'gke-c-np-od-97da88a9-8gmv' creation failed: The zone 'projects/p/zones/us-central1-c' does not have enough resources available to fulfill the request. '(resource type:compute)'.",
        );
        assert_eq!(gke.capacity_outcome(), Some(Stockout));
        let quota = from_operation(
            "creating node pool np-od",
            8,
            "Insufficient regional quota to satisfy request: resource \"NVIDIA_H100_GPUS\": request requires '8.0' and is short '8.0'. project has a quota of '0.0' with '0.0' available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=p.",
        );
        assert_eq!(quota.capacity_outcome(), Some(Quota));
        // A node pool whose status message says stockout.
        let failed = failed_group(
            "np-od",
            &NodeGroupStatus::CreateFailed,
            &[HealthIssue {
                code: "ERROR".into(),
                message: "ZONE_RESOURCE_POOL_EXHAUSTED".into(),
            }],
        );
        assert_eq!(failed.capacity_outcome(), Some(Stockout));
        let plain = failed_group(
            "np-od",
            &NodeGroupStatus::CreateFailed,
            &[HealthIssue {
                code: "ERROR".into(),
                message: "Deploy error: Not all instances running in IGM".into(),
            }],
        );
        assert_eq!(plain.capacity_outcome(), None);
        // Compute operation errors[] (the code, then the message).
        assert_eq!(
            capacity_in(
                "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
                "The zone 'projects/p/zones/us-central1-b' does not have enough resources available to fulfill the request.  'NULL:0/NULL:0/NULL:0 (state:STOCKOUT, sub-state:STOCKOUT, resource type:compute)'."
            ),
            Some(Stockout)
        );
        assert_eq!(
            capacity_in(
                "QUOTA_EXCEEDED",
                "Quota 'NVIDIA_A100_GPUS' exceeded.  Limit: 0.0 in region us-central1."
            ),
            Some(Quota)
        );
        // Compute's synchronous 400 for a machine type the zone lacks.
        let missing = from_response(
            400,
            &body(
                400,
                "INVALID_ARGUMENT",
                "Invalid value for field 'resource.machineType': 'zones/us-central1-f/machineTypes/a3-highgpu-8g'. Machine type with name 'a3-highgpu-8g' does not exist in zone 'us-central1-f'.",
                None,
            ),
        );
        assert_eq!(missing.capacity_outcome(), Some(NotOffered));
        // Rate limits stay throttling even though they say "Quota exceeded".
        let rate = from_response(
            429,
            &body(
                429,
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service 'container.googleapis.com'.",
                Some("RATE_LIMIT_EXCEEDED"),
            ),
        );
        assert!(matches!(rate, CloudError::Throttled(_)));
        // A pool whose name says "stockout" or "quota" is still just missing.
        let missing = from_response(
            404,
            &body(
                404,
                "NOT_FOUND",
                "Not found: projects/p/locations/us-central1/clusters/c/nodePools/stockout-quota-exceeded-od.",
                None,
            ),
        );
        assert!(matches!(missing, CloudError::NotFound(_)), "{missing:?}");
    }
}
