//! GKE long-running operations: every node pool mutation answers an `Operation`, which is
//! polled (`projects.locations.operations.get`) through [`poll::until`] until `DONE`; an
//! operation that ends with an `error` (a `google.rpc.Status`) becomes its typed error.

use std::time::Duration;

use serde::Deserialize;

use super::errors;
use super::rest::Rest;
use crate::cancel::Cancel;
use crate::seam::CloudError;
use crate::seam::poll::{self, Backoff};

/// A GKE `Operation` (the fields used).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Operation {
    /// `operation-<ms>-<id>`.
    pub name: String,
    /// `PENDING`, `RUNNING`, `DONE` or `ABORTING`.
    #[serde(default)]
    pub status: String,
    /// Set when the operation failed.
    #[serde(default)]
    pub error: Option<Status>,
    /// Human detail of a failure (older API versions).
    #[serde(default)]
    pub status_message: Option<String>,
}

/// A `google.rpc.Status`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Status {
    /// A `google.rpc.Code` number.
    #[serde(default)]
    pub code: i64,
    /// Human message.
    #[serde(default)]
    pub message: String,
}

/// An operation to wait for: where it runs and what it does (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    /// `projects/{p}/locations/{l}`.
    pub parent: String,
    /// The operation's name.
    pub name: String,
    /// e.g. `creating node pool c/np`.
    pub what: String,
}

impl Operation {
    /// `Ok(true)` when done, `Ok(false)` while running, the typed error when it failed.
    fn settled(&self, what: &str) -> Result<bool, CloudError> {
        if self.status != "DONE" {
            return Ok(false);
        }
        match &self.error {
            Some(e) if e.code != 0 => Err(errors::from_operation(what, e.code, &e.message)),
            _ => match &self.status_message {
                // Older answers report a failure only in statusMessage.
                Some(m) if !m.is_empty() && self.error.is_some() => {
                    Err(errors::from_operation(what, 2, m))
                }
                _ => Ok(true),
            },
        }
    }
}

/// Polls `op` until `DONE` (on `backoff`, at most `timeout`), failing with the
/// operation's own error when it ended with one.
pub(crate) async fn wait(
    rest: &Rest,
    backoff: Backoff,
    timeout: Duration,
    cancel: &Cancel,
    op: &Pending,
) -> Result<(), CloudError> {
    let path = format!("{}/operations/{}", op.parent, op.name);
    let what = format!("{} (operation {})", op.what, op.name);
    poll::until(rest.pace(), backoff, timeout, cancel, &what, || async {
        let o: Operation = rest.get("operations.get", &path).await?;
        Ok(o.settled(&op.what)?.then_some(()))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_with_an_error_is_that_error() {
        let op = |v: serde_json::Value| serde_json::from_value::<Operation>(v).unwrap();
        let running = op(serde_json::json!({"name": "o", "status": "RUNNING"}));
        assert_eq!(running.settled("x"), Ok(false));
        let done = op(serde_json::json!({"name": "o", "status": "DONE",
            "operationType": "CREATE_NODE_POOL"}));
        assert_eq!(done.settled("x"), Ok(true));
        let failed = op(serde_json::json!({"name": "o", "status": "DONE",
            "error": {"code": 8, "message": "Quota 'GPUS_ALL_REGIONS' exceeded."},
            "statusMessage": "Quota 'GPUS_ALL_REGIONS' exceeded."}));
        assert!(
            matches!(failed.settled("creating np"), Err(CloudError::Quota(m)) if m.contains("creating np"))
        );
    }
}
