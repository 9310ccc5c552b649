//! SDK errors to [`CloudError`], through the error metadata (`code`, `message`).

use aws_sdk_eks::error::{ProvideErrorMetadata, SdkError};

use super::codes::error_from_code;
use crate::seam::CloudError;
use crate::seam::error::error_chain;

/// Maps any EKS operation error to a typed error, naming the operation.
///
/// Service errors are typed by their code; a response the SDK cannot parse (e.g. an
/// emulator's HTML 500 for an unimplemented action) is `Other`, so it is not retried
/// forever. Only the cloud's code and message and the connection error are kept.
pub(crate) fn map_sdk_error<E>(operation: &str, err: SdkError<E>) -> CloudError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let status = err.raw_response().map(|r| r.status().as_u16());
    let with_op = |e: CloudError| prefix(operation, e);
    match &err {
        SdkError::ServiceError(ctx) => {
            let e = ctx.err();
            with_op(error_from_code(e.code(), e.message(), status))
        }
        SdkError::TimeoutError(_) => with_op(CloudError::Transient("request timed out".into())),
        SdkError::DispatchFailure(d) => {
            let text = error_chain(&err);
            if text.contains("credentials") || text.contains("identity") {
                with_op(CloudError::Unauthorized(text))
            } else if d.is_io() || d.is_timeout() {
                with_op(CloudError::Transient(text))
            } else if d.is_user() {
                with_op(CloudError::Invalid(text))
            } else {
                with_op(CloudError::Other(text))
            }
        }
        SdkError::ConstructionFailure(_) => with_op(CloudError::Invalid(error_chain(&err))),
        SdkError::ResponseError(_) => with_op(CloudError::Other(format!(
            "unreadable response (HTTP {}): {}",
            status.map_or_else(|| "?".to_string(), |s| s.to_string()),
            error_chain(&err)
        ))),
        _ => with_op(CloudError::Other(error_chain(&err))),
    }
}

/// Puts `operation: ` in front of the message, keeping the kind.
fn prefix(operation: &str, e: CloudError) -> CloudError {
    e.map_message(|m| format!("{operation}: {m}"))
}
