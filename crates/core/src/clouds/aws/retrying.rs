//! Every EKS call through the crate's one retry policy ([`crate::retry`]): the SDK's own
//! retries are off (see [`super::Eks::from_sdk_config`]), so backoff, jitter,
//! `Retry-After` and what counts as safe to repeat are decided here, once.

use std::future::Future;

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};

use super::errors::map_sdk_error;
use super::sdk::verdict;
use crate::cancel::Cancel;
use crate::pace::Pace;
use crate::retry::{self, RetryPolicy};
use crate::seam::CloudError;

/// Runs one EKS operation under `policy`, its pauses on `pace`: the typed error of the
/// last attempt, naming the operation and, when it was retried, how many attempts were
/// made.
pub(crate) async fn send<T, E, F, Fut>(
    policy: &RetryPolicy,
    pace: &Pace,
    cancel: &Cancel,
    operation: &str,
    call: F,
) -> Result<T, CloudError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    send_with(policy, pace, cancel, operation, call, verdict).await
}

/// [`send`] with the caller's own idea of what is safe to repeat (a call that is not
/// idempotent repeats only what the cloud refused before acting, such as throttling).
pub(crate) async fn send_with<T, E, F, Fut>(
    policy: &RetryPolicy,
    pace: &Pace,
    cancel: &Cancel,
    operation: &str,
    call: F,
    verdict: impl Fn(&SdkError<E>) -> retry::Verdict,
) -> Result<T, CloudError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match retry::run(policy, pace, cancel, call, verdict).await {
        Ok(v) => Ok(v),
        Err(f) => {
            let err = map_sdk_error(operation, f.error);
            if f.cancelled {
                return Err(CloudError::Cancelled(format!(
                    "Terraform asked the provider to stop while {operation} was being retried \
                     (last error: {err})"
                )));
            }
            let note = retry::attempts_note(f.attempts);
            Err(err.map_message(|m| m + &note))
        }
    }
}
