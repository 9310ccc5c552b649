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
        // EC2 RunInstances, CreateFleet: "Your requested instance type (p5.48xlarge) is not
        // supported in your requested Availability Zone (us-east-1e). ..." The same code
        // also refuses other unsupported requests, which are bad requests.
        "Unsupported" => {
            let lower = msg.to_ascii_lowercase();
            if lower.contains("instance type") && lower.contains("not supported") {
                CloudError::NotOffered(text)
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
            "AsgInstanceLaunchFailures" | "NodeCreationFailure"
                if m.contains("unsupported")
                    || (m.contains("instance type") && m.contains("not supported")) =>
            {
                return CloudError::NotOffered(text);
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

    /// EC2's capacity answers, with their real messages (EC2 API error codes reference:
    /// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html).
    #[test]
    fn ec2_capacity_answers_are_classified() {
        let ec2 =
            |c: &str, m: &str| error_from_code(Some(c), Some(m), Some(500)).capacity_outcome();
        use crate::seam::CapacityOutcome::{NotOffered, Quota, Stockout};
        assert_eq!(
            ec2(
                "InsufficientInstanceCapacity",
                "We currently do not have sufficient p4d.24xlarge capacity in the Availability Zone you requested (us-east-1a). Our system will be working on provisioning additional capacity. You can currently get p4d.24xlarge capacity by not specifying an Availability Zone in your request or choosing us-east-1b, us-east-1c."
            ),
            Some(Stockout)
        );
        assert_eq!(
            ec2(
                "InsufficientInstanceCapacity",
                "There is no Spot capacity available that matches your request."
            ),
            Some(Stockout)
        );
        assert_eq!(
            ec2(
                "VcpuLimitExceeded",
                "You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit."
            ),
            Some(Quota)
        );
        assert_eq!(
            ec2(
                "MaxSpotInstanceCountExceeded",
                "Max spot instance count exceeded"
            ),
            Some(Quota)
        );
        assert_eq!(
            ec2(
                "Unsupported",
                "Your requested instance type (p5.48xlarge) is not supported in your requested Availability Zone (us-east-1e). Please retry your request by not specifying an Availability Zone or choosing us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1f."
            ),
            Some(NotOffered)
        );
        // The same code for a request that is wrong everywhere is not a capacity answer.
        let other = error_from_code(
            Some("Unsupported"),
            Some(
                "The requested configuration is currently not supported. Please check the documentation for supported configurations.",
            ),
            Some(400),
        );
        assert!(matches!(other, CloudError::Invalid(_)));
    }

    /// An EKS node group's health when its Auto Scaling group cannot launch GPU instances
    /// (EKS `Issue` codes: https://docs.aws.amazon.com/eks/latest/APIReference/API_Issue.html).
    #[test]
    fn eks_launch_failures_are_classified_by_their_cause() {
        use crate::seam::CapacityOutcome::{NotOffered, Quota, Stockout};
        let health = |m: &str| {
            failed_group(
                "g",
                &NodeGroupStatus::CreateFailed,
                &[HealthIssue {
                    code: "AsgInstanceLaunchFailures".into(),
                    message: m.into(),
                }],
            )
            .capacity_outcome()
        };
        assert_eq!(
            health(
                "Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient g5.48xlarge capacity in the Availability Zone you requested (us-east-1e). Our system will be working on provisioning additional capacity. Launching EC2 instance failed."
            ),
            Some(Stockout)
        );
        assert_eq!(
            health(
                "Could not launch Spot Instances. UnfulfillableCapacity - Unable to fulfill capacity due to your request configuration. Please adjust your request and try again. Launching EC2 instance failed."
            ),
            Some(Stockout)
        );
        assert_eq!(
            health(
                "Could not launch On-Demand Instances. VcpuLimitExceeded - You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to. Launching EC2 instance failed."
            ),
            Some(Quota)
        );
        assert_eq!(
            health(
                "Could not launch On-Demand Instances. Unsupported - Your requested instance type (p4d.24xlarge) is not supported in your requested Availability Zone (us-east-1e). Launching EC2 instance failed."
            ),
            Some(NotOffered)
        );
        assert_eq!(
            health("Instances failed to join the kubernetes cluster"),
            None
        );
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
