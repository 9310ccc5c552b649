//! What AWS's answers mean, as [`CloudError`]s: the error codes of EKS, EC2 and the
//! generic AWS ones ([`error_from_code`]), and an EKS node group's health codes when it
//! settles in a failed state ([`failed_group`]). Pure functions over the codes, built with
//! or without the SDK (the live price sources read EC2's answers too).

use crate::seam::error::failed_group_text;
use crate::seam::{CloudError, HealthIssue, NodeGroupStatus};

/// Maps an AWS-style error code (with its message and HTTP status) to a typed error.
///
/// Covers EKS codes (`ResourceNotFoundException`, `InvalidParameterException`,
/// `ResourceInUseException`, `ResourceLimitExceededException`, `ClientException`,
/// `ServerException`, ...) and the generic AWS ones (`ThrottlingException`,
/// `AccessDenied`, `ExpiredToken`, ...). Unknown codes fall back on the status.
pub fn error_from_code(
    code: Option<&str>,
    message: Option<&str>,
    status: Option<u16>,
) -> CloudError {
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
pub fn failed_group(what: &str, status: &NodeGroupStatus, issues: &[HealthIssue]) -> CloudError {
    let text = failed_group_text(what, status, issues);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn code(c: &str) -> CloudError {
        error_from_code(Some(c), Some("m"), Some(400))
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
        let e = error_from_code(
            Some("ClientException"),
            Some("User is not authorized to perform eks:CreateNodegroup"),
            Some(400),
        );
        assert!(matches!(e, CloudError::Unauthorized(_)));
    }

    #[test]
    fn unknown_codes_fall_back_on_status() {
        let f = |s| error_from_code(Some("Weird"), None, Some(s));
        assert!(matches!(f(404), CloudError::NotFound(_)));
        assert!(matches!(f(403), CloudError::Unauthorized(_)));
        assert!(matches!(f(429), CloudError::Throttled(_)));
        assert!(matches!(f(503), CloudError::Transient(_)));
        assert!(matches!(f(418), CloudError::Invalid(_)));
        assert!(matches!(
            error_from_code(None, None, None),
            CloudError::Other(_)
        ));
    }

    #[test]
    fn message_keeps_code_and_text() {
        let e = error_from_code(Some("InvalidParameterException"), Some("bad"), None);
        assert_eq!(
            e.to_string(),
            "invalid request: InvalidParameterException: bad"
        );
    }

    #[test]
    fn only_throttling_and_server_codes_are_retryable() {
        assert!(code("ThrottlingException").is_retryable());
        assert!(code("ServerException").is_retryable());
        assert!(!code("InvalidParameterException").is_retryable());
        assert!(!code("ResourceInUseException").is_retryable());
    }

    #[test]
    fn failed_state_is_typed_from_health() {
        let issue = |c: &str, m: &str| HealthIssue {
            code: c.into(),
            message: m.into(),
        };
        let st = NodeGroupStatus::CreateFailed;
        let e = failed_group(
            "g",
            &st,
            &[issue(
                "AsgInstanceLaunchFailures",
                "Could not launch Spot Instances. InsufficientInstanceCapacity - ...",
            )],
        );
        assert!(matches!(e, CloudError::InsufficientCapacity(_)), "{e}");
        let e = failed_group("g", &st, &[issue("InstanceLimitExceeded", "x")]);
        assert!(matches!(e, CloudError::Quota(_)));
        let e = failed_group("g", &st, &[]);
        assert_eq!(
            e,
            CloudError::Other("g is create failed: no health issues reported".into())
        );
    }
}
