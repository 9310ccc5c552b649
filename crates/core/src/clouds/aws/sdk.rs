//! What the AWS SDK's errors mean for [`crate::retry::run`]: one verdict for every AWS service
//! (EKS node groups, EC2 spot prices). The SDK's own retries are turned off by the callers,
//! so backoff, jitter and `Retry-After` are decided by the crate's policy alone.
//!
//! `SdkError` and `ProvideErrorMetadata` are the smithy runtime's types, which every
//! `aws-sdk-*` crate re-exports; they are named here through aws-sdk-ec2.

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};

use super::codes::error_from_code;
use crate::retry::{Verdict, retry_after, retryable_status};
use crate::seam::CloudError;

/// Whether an SDK error is worth repeating unchanged: throttling and server errors by
/// code or status, timeouts, and connection failures; with the server's `Retry-After`.
pub fn verdict<E: ProvideErrorMetadata>(err: &SdkError<E>) -> Verdict {
    let status = err.raw_response().map(|r| r.status().as_u16());
    let wish = err
        .raw_response()
        .and_then(|r| r.headers().get("retry-after"))
        .and_then(retry_after);
    let again = match err {
        SdkError::ServiceError(ctx) => {
            let e = ctx.err();
            match error_from_code(e.code(), e.message(), status) {
                CloudError::Throttled(_) => return Verdict::Throttled(wish),
                other => other.is_retryable(),
            }
        }
        SdkError::TimeoutError(_) => true,
        SdkError::DispatchFailure(d) => d.is_io() || d.is_timeout(),
        SdkError::ResponseError(_) => status.is_some_and(retryable_status),
        _ => false,
    };
    if again {
        Verdict::Retry(wish)
    } else {
        Verdict::Stop
    }
}

/// For a call that is not idempotent (a purchase): repeat only what the service refused
/// before acting (throttling, with its `Retry-After`); anything that may hide a success
/// (a 5xx, a timeout, a reset) stops, so the caller can look before trying again.
pub fn verdict_if_refused<E: ProvideErrorMetadata>(err: &SdkError<E>) -> Verdict {
    let status = err.raw_response().map(|r| r.status().as_u16());
    match err {
        SdkError::ServiceError(ctx)
            if matches!(
                error_from_code(ctx.err().code(), ctx.err().message(), status),
                CloudError::Throttled(_)
            ) =>
        {
            Verdict::Throttled(
                err.raw_response()
                    .and_then(|r| r.headers().get("retry-after"))
                    .and_then(retry_after),
            )
        }
        _ => Verdict::Stop,
    }
}
