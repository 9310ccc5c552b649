//! Every EKS call through the crate's one retry policy ([`crate::retry`]): the SDK's own
//! retries are off (see [`super::Eks::from_sdk_config`]), so backoff, jitter,
//! `Retry-After` and what counts as safe to repeat are decided here, once.

use std::future::Future;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};

use super::errors::map_sdk_error;
use crate::cancel::Cancel;
use crate::cloud::CloudError;
use crate::retry::{self, RetryPolicy, Verdict, retry_after, retryable_status};

/// Whether an SDK error is worth repeating unchanged: throttling and server errors by
/// code or status, timeouts, and connection failures. `Retry-After` is honoured.
pub(crate) fn verdict<E: ProvideErrorMetadata>(err: &SdkError<E>) -> Verdict {
    let status = err.raw_response().map(|r| r.status().as_u16());
    let wish = err
        .raw_response()
        .and_then(|r| r.headers().get("retry-after"))
        .and_then(retry_after);
    let again = match err {
        SdkError::ServiceError(ctx) => {
            let e = ctx.err();
            CloudError::from_code(e.code(), e.message(), status).is_retryable()
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

/// Runs one EKS operation under `policy`: the typed error of the last attempt, naming the
/// operation and, when it was retried, how many attempts were made.
pub(crate) async fn send<T, E, F, Fut>(
    policy: &RetryPolicy,
    cancel: &Cancel,
    operation: &str,
    call: F,
) -> Result<T, CloudError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match retry::run(policy, cancel, call, verdict).await {
        Ok(v) => Ok(v),
        Err(f) => {
            let err = map_sdk_error(operation, f.error);
            if f.cancelled {
                return Err(CloudError::Cancelled(format!(
                    "Terraform asked the provider to stop while {operation} was being retried \
                     (last error: {err})"
                )));
            }
            if f.attempts > 1 {
                let n = f.attempts;
                Err(err.map_message(|m| format!("{m} (after {n} attempts)")))
            } else {
                Err(err)
            }
        }
    }
}
