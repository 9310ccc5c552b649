//! Typed cloud errors and their mapping from provider error codes.
//!
//! Messages carry the cloud's error code and message only: never credentials, request
//! signatures or headers.

use std::time::Duration;

use super::node_groups::{HealthIssue, NodeGroupStatus};

/// An error and its causes as one line of their messages (`dispatch failure: io error:
/// … Connection refused (os error 111)`), each said once: never the SDK's debug dump,
/// which `DisplayErrorContext` appends.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        // A wrapper often repeats its cause's message: keep what is new.
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// What went wrong in a cloud call, in terms a caller can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloudError {
    /// The cloud has no capacity for the requested instances right now.
    #[error("insufficient capacity: {0}")]
    InsufficientCapacity(String),
    /// An account quota or service limit would be exceeded.
    #[error("quota exceeded: {0}")]
    Quota(String),
    /// The place does not offer what was asked (the instance type in that zone, the VM
    /// size in that region): asking again there will not help.
    #[error("not offered here: {0}")]
    NotOffered(String),
    /// The resource (or its parent) does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The cloud asked us to slow down.
    #[error("throttled: {0}")]
    Throttled(String),
    /// Missing, expired or insufficient credentials.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// The request itself is wrong; retrying it unchanged will not help.
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The resource exists already, or is in a state that refuses the request.
    #[error("conflict: {0}")]
    Conflict(String),
    /// Refused because another operation is running on the object or its cluster (AKS's
    /// and GKE's one operation per cluster, an EKS node group mid-update): nothing was
    /// done, and the same request can be sent again once that operation ends.
    #[error("busy: {0}")]
    Busy(String),
    /// A network failure or server error that may pass.
    #[error("transient: {0}")]
    Transient(String),
    /// A wait did not reach its target in time.
    #[error("timed out after {waited:?} waiting for {what}")]
    Timeout {
        /// What was awaited, e.g. `node group c/g ACTIVE`.
        what: String,
        /// How long we waited.
        waited: Duration,
    },
    /// The provider was asked to stop (Terraform's `StopProvider`, Ctrl-C) during a wait
    /// or a retry pause; what was awaited may still be in progress in the cloud.
    #[error("cancelled: {0}")]
    Cancelled(String),
    /// Anything else, with the cloud's code and message.
    #[error("{0}")]
    Other(String),
}

impl CloudError {
    /// True for errors worth retrying unchanged after a backoff (throttling, transient).
    pub fn is_retryable(&self) -> bool {
        matches!(self, CloudError::Throttled(_) | CloudError::Transient(_))
    }

    /// The same kind with its message rewritten by `f` (a timeout keeps its fields).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        match self {
            CloudError::InsufficientCapacity(m) => CloudError::InsufficientCapacity(f(m)),
            CloudError::Quota(m) => CloudError::Quota(f(m)),
            CloudError::NotOffered(m) => CloudError::NotOffered(f(m)),
            CloudError::NotFound(m) => CloudError::NotFound(f(m)),
            CloudError::Throttled(m) => CloudError::Throttled(f(m)),
            CloudError::Unauthorized(m) => CloudError::Unauthorized(f(m)),
            CloudError::Invalid(m) => CloudError::Invalid(f(m)),
            CloudError::Conflict(m) => CloudError::Conflict(f(m)),
            CloudError::Busy(m) => CloudError::Busy(f(m)),
            CloudError::Transient(m) => CloudError::Transient(f(m)),
            CloudError::Cancelled(m) => CloudError::Cancelled(f(m)),
            CloudError::Other(m) => CloudError::Other(f(m)),
            t @ CloudError::Timeout { .. } => t,
        }
    }

    /// The neutral error for a group that settled in a failed state (a driver whose cloud
    /// reports health codes types them first: [`crate::seam::CloudTraits::failed_group`]):
    /// the state and every health issue as the cloud gave them.
    pub fn failed_group(what: &str, status: &NodeGroupStatus, issues: &[HealthIssue]) -> Self {
        CloudError::Other(failed_group_text(what, status, issues))
    }
}

/// `<what> is <status>: <code>: <message>; ...` (or "no health issues reported").
pub fn failed_group_text(what: &str, status: &NodeGroupStatus, issues: &[HealthIssue]) -> String {
    let detail = if issues.is_empty() {
        "no health issues reported".to_string()
    } else {
        issues
            .iter()
            .map(|i| format!("{}: {}", i.code, i.message))
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!("{what} is {status}: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("dispatch failure")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("io error: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn an_error_chain_is_its_messages_once_and_never_a_debug_dump() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let text = error_chain(&Outer(Middle(io)));
        // The middle message already holds the io error's: it is not said twice.
        assert_eq!(text, "dispatch failure: io error: refused");
        assert!(!text.contains("Outer") && !text.contains('{'), "{text}");
    }

    #[test]
    fn retryable_only_throttled_and_transient() {
        assert!(CloudError::Throttled("x".into()).is_retryable());
        assert!(CloudError::Transient("x".into()).is_retryable());
        assert!(!CloudError::Busy("x".into()).is_retryable());
        assert!(!CloudError::Conflict("x".into()).is_retryable());
        assert!(
            !CloudError::Timeout {
                what: "x".into(),
                waited: Duration::from_secs(1)
            }
            .is_retryable()
        );
    }

    #[test]
    fn a_failed_group_says_its_state_and_every_issue() {
        let st = NodeGroupStatus::CreateFailed;
        assert_eq!(
            CloudError::failed_group("g", &st, &[]),
            CloudError::Other("g is create failed: no health issues reported".into())
        );
        let issues = [HealthIssue {
            code: "ERROR".into(),
            message: "ZONE_RESOURCE_POOL_EXHAUSTED".into(),
        }];
        assert_eq!(
            CloudError::failed_group("g", &st, &issues).to_string(),
            "g is create failed: ERROR: ZONE_RESOURCE_POOL_EXHAUSTED"
        );
    }

    #[test]
    fn map_message_keeps_the_kind() {
        let e = CloudError::Busy("a".into()).map_message(|m| format!("x: {m}"));
        assert_eq!(e, CloudError::Busy("x: a".into()));
    }
}
