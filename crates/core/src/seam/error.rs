//! Typed cloud errors and their mapping from provider error codes.
//!
//! Messages carry the cloud's error code and message only: never credentials, request
//! signatures or headers.

use std::time::Duration;

use super::node_groups::{HealthIssue, NodeGroupStatus};

/// What went wrong in a cloud call, in terms a caller can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloudError {
    /// The cloud has no capacity for the requested instances right now.
    #[error("insufficient capacity: {0}")]
    InsufficientCapacity(String),
    /// An account quota or service limit would be exceeded.
    #[error("quota exceeded: {0}")]
    Quota(String),
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

    /// Maps an AWS-style error code (with its message and HTTP status) to a typed error.
    ///
    /// Covers EKS codes (`ResourceNotFoundException`, `InvalidParameterException`,
    /// `ResourceInUseException`, `ResourceLimitExceededException`, `ClientException`,
    /// `ServerException`, ...) and the generic AWS ones (`ThrottlingException`,
    /// `AccessDenied`, `ExpiredToken`, ...). Unknown codes fall back on the status.
    pub fn from_code(code: Option<&str>, message: Option<&str>, status: Option<u16>) -> Self {
        let msg = message.unwrap_or("").trim();
        let text = match (code, msg.is_empty()) {
            (Some(c), false) => format!("{c}: {msg}"),
            (Some(c), true) => c.to_string(),
            (None, false) => msg.to_string(),
            (None, true) => match status {
                Some(s) => format!("HTTP {s}"),
                None => "unknown error".to_string(),
            },
        };
        match code.unwrap_or("") {
            "ResourceNotFoundException" | "NotFoundException" | "NoSuchEntity" => {
                CloudError::NotFound(text)
            }
            "InvalidParameterException"
            | "InvalidRequestException"
            | "InvalidParameterValue"
            | "InvalidParameterCombination"
            | "ValidationException"
            | "ValidationError"
            | "UnsupportedAvailabilityZoneException"
            | "BadRequestException" => CloudError::Invalid(text),
            "ResourceInUseException" | "ResourceAlreadyExistsException" | "ConflictException" => {
                CloudError::Conflict(text)
            }
            "ResourceLimitExceededException"
            | "ServiceQuotaExceededException"
            | "LimitExceededException"
            | "LimitExceeded"
            | "InstanceLimitExceeded"
            | "VcpuLimitExceeded"
            | "MaxSpotInstanceCountExceeded" => CloudError::Quota(text),
            "InsufficientCapacityException"
            | "InsufficientInstanceCapacity"
            | "InsufficientHostCapacity"
            | "InsufficientReservedInstanceCapacity"
            | "InsufficientFreeAddresses" => CloudError::InsufficientCapacity(text),
            "ThrottlingException"
            | "Throttling"
            | "TooManyRequestsException"
            | "RequestLimitExceeded"
            | "RequestThrottled"
            | "SlowDown" => CloudError::Throttled(text),
            "AccessDenied"
            | "AccessDeniedException"
            | "UnauthorizedOperation"
            | "UnauthorizedException"
            | "UnrecognizedClientException"
            | "InvalidClientTokenId"
            | "InvalidAccessKeyId"
            | "ExpiredToken"
            | "ExpiredTokenException"
            | "SignatureDoesNotMatch"
            | "AuthFailure"
            | "MissingAuthenticationToken" => CloudError::Unauthorized(text),
            // EKS: "usually caused by a client action", most often missing IAM permissions.
            "ClientException" => {
                let lower = msg.to_ascii_lowercase();
                if lower.contains("not authorized") || lower.contains("access denied") {
                    CloudError::Unauthorized(text)
                } else {
                    CloudError::Invalid(text)
                }
            }
            "ServerException"
            | "ServiceUnavailableException"
            | "ServiceUnavailable"
            | "InternalFailure"
            | "InternalError"
            | "InternalServerError"
            | "Unavailable" => CloudError::Transient(text),
            // EC2: `InvalidCapacityReservationId.NotFound`, `InvalidVpcID.NotFound`, ...
            c if c.ends_with(".NotFound") || c.ends_with(".NotFoundException") => {
                CloudError::NotFound(text)
            }
            // EC2: `InvalidLaunchTemplateName.AlreadyExistsException`.
            c if c.ends_with(".AlreadyExistsException") => CloudError::Conflict(text),
            c if c.ends_with(".Malformed")
                || c == "MissingParameter"
                || c == "IdempotentParameterMismatch" =>
            {
                CloudError::Invalid(text)
            }
            _ => match status {
                Some(404) => CloudError::NotFound(text),
                Some(401 | 403) => CloudError::Unauthorized(text),
                Some(409) => CloudError::Conflict(text),
                Some(429) => CloudError::Throttled(text),
                Some(s) if s >= 500 => CloudError::Transient(text),
                Some(400..=499) => CloudError::Invalid(text),
                _ => CloudError::Other(text),
            },
        }
    }

    /// The error for a group that settled in a failed state, typed from its health issues
    /// (e.g. `InstanceLimitExceeded` is a quota, an ASG launch failure for lack of
    /// `InsufficientInstanceCapacity` is insufficient capacity).
    pub fn from_failed_state(what: &str, status: &NodeGroupStatus, issues: &[HealthIssue]) -> Self {
        let detail = if issues.is_empty() {
            "no health issues reported".to_string()
        } else {
            issues
                .iter()
                .map(|i| format!("{}: {}", i.code, i.message))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let text = format!("{what} is {status}: {detail}");
        for issue in issues {
            let m = issue.message.to_ascii_lowercase();
            match issue.code.as_str() {
                "InstanceLimitExceeded" | "LimitExceeded" | "IamLimitExceeded" => {
                    return CloudError::Quota(text);
                }
                "InsufficientFreeAddresses" => return CloudError::InsufficientCapacity(text),
                "AccessDenied" => return CloudError::Unauthorized(text),
                "AsgInstanceLaunchFailures" | "NodeCreationFailure"
                    if m.contains("insufficientinstancecapacity")
                        || m.contains("insufficient capacity")
                        || m.contains("unfulfillable") =>
                {
                    return CloudError::InsufficientCapacity(text);
                }
                "AsgInstanceLaunchFailures"
                    if m.contains("vcpulimitexceeded") || m.contains("limitexceeded") =>
                {
                    return CloudError::Quota(text);
                }
                _ => {}
            }
        }
        CloudError::Other(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(c: &str) -> CloudError {
        CloudError::from_code(Some(c), Some("m"), Some(400))
    }

    #[test]
    fn eks_codes_map_to_kinds() {
        assert!(matches!(
            code("ResourceNotFoundException"),
            CloudError::NotFound(_)
        ));
        assert!(matches!(
            code("InvalidParameterException"),
            CloudError::Invalid(_)
        ));
        assert!(matches!(
            code("InvalidRequestException"),
            CloudError::Invalid(_)
        ));
        assert!(matches!(
            code("ResourceInUseException"),
            CloudError::Conflict(_)
        ));
        assert!(matches!(
            code("ResourceLimitExceededException"),
            CloudError::Quota(_)
        ));
        assert!(matches!(
            code("ThrottlingException"),
            CloudError::Throttled(_)
        ));
        assert!(matches!(code("ServerException"), CloudError::Transient(_)));
        assert!(matches!(
            code("AccessDeniedException"),
            CloudError::Unauthorized(_)
        ));
        assert!(matches!(code("AccessDenied"), CloudError::Unauthorized(_)));
        assert!(matches!(code("ExpiredToken"), CloudError::Unauthorized(_)));
        assert!(matches!(code("ClientException"), CloudError::Invalid(_)));
        assert!(matches!(
            code("InsufficientInstanceCapacity"),
            CloudError::InsufficientCapacity(_)
        ));
        let e = CloudError::from_code(
            Some("ClientException"),
            Some("User is not authorized to perform eks:CreateNodegroup"),
            Some(400),
        );
        assert!(matches!(e, CloudError::Unauthorized(_)));
    }

    #[test]
    fn unknown_codes_fall_back_on_status() {
        let f = |s| CloudError::from_code(Some("Weird"), None, Some(s));
        assert!(matches!(f(404), CloudError::NotFound(_)));
        assert!(matches!(f(403), CloudError::Unauthorized(_)));
        assert!(matches!(f(429), CloudError::Throttled(_)));
        assert!(matches!(f(503), CloudError::Transient(_)));
        assert!(matches!(f(418), CloudError::Invalid(_)));
        assert!(matches!(
            CloudError::from_code(None, None, None),
            CloudError::Other(_)
        ));
    }

    #[test]
    fn message_keeps_code_and_text() {
        let e = CloudError::from_code(Some("InvalidParameterException"), Some("bad"), None);
        assert_eq!(
            e.to_string(),
            "invalid request: InvalidParameterException: bad"
        );
    }

    #[test]
    fn retryable_only_throttled_and_transient() {
        assert!(code("ThrottlingException").is_retryable());
        assert!(code("ServerException").is_retryable());
        assert!(!code("InvalidParameterException").is_retryable());
        assert!(!code("ResourceInUseException").is_retryable());
        assert!(
            !CloudError::Timeout {
                what: "x".into(),
                waited: Duration::from_secs(1)
            }
            .is_retryable()
        );
    }

    #[test]
    fn failed_state_is_typed_from_health() {
        let issue = |c: &str, m: &str| HealthIssue {
            code: c.into(),
            message: m.into(),
        };
        let st = NodeGroupStatus::CreateFailed;
        let e = CloudError::from_failed_state(
            "g",
            &st,
            &[issue(
                "AsgInstanceLaunchFailures",
                "Could not launch Spot Instances. InsufficientInstanceCapacity - ...",
            )],
        );
        assert!(matches!(e, CloudError::InsufficientCapacity(_)), "{e}");
        let e = CloudError::from_failed_state("g", &st, &[issue("InstanceLimitExceeded", "x")]);
        assert!(matches!(e, CloudError::Quota(_)));
        let e = CloudError::from_failed_state("g", &st, &[]);
        assert_eq!(
            e,
            CloudError::Other("g is create failed: no health issues reported".into())
        );
    }
}
