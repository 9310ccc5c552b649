//! The Azure Resource Manager client every Azure adapter shares (AKS agent pools,
//! reservations, capacity reservations): a token from Azure's usual chain on every call,
//! sent only to the configured endpoint; the crate's one retry policy (429 and 5xx,
//! `Retry-After`); ARM error bodies typed; long-running operations
//! (`Azure-AsyncOperation`) polled to a terminal status at the interval ARM asks for.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::auth::AzureCredentials;
use super::errors;
use crate::cancel::Cancel;
use crate::pace::Pace;
use crate::retry::{self, RetryPolicy, Verdict, retry_after, retryable_status};
use crate::seam::CloudError;
use crate::seam::poll::{self, Backoff};

/// A retrying, authenticated client of one Resource Manager endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Arm {
    http: reqwest::Client,
    endpoint: String,
    credentials: Arc<AzureCredentials>,
    /// Poll schedule of waits.
    pub backoff: Backoff,
    retry: RetryPolicy,
    /// The clock of polls, retry pauses and busy pauses.
    pub pace: Pace,
    /// The stop signal of the operation in flight.
    pub cancel: Cancel,
}

/// A successful ARM answer.
pub(crate) struct Answer {
    /// HTTP status.
    pub status: u16,
    /// The `Azure-AsyncOperation` the answer started, if any.
    pub operation: Option<Operation>,
    /// The JSON body (`Null` when empty).
    pub body: Value,
}

/// A long-running ARM operation: its `Azure-AsyncOperation` URL and the `Retry-After` the
/// answer that started it gave (the interval ARM asks clients to poll at).
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    /// The status URL.
    pub url: String,
    /// The interval ARM asked for.
    pub poll_after: Option<Duration>,
}

/// One failed attempt: its error and whether to try again.
struct Attempt {
    error: CloudError,
    verdict: Verdict,
}

/// The HTTP client: timeouts, and the extra CA (PEM) if any.
pub(crate) fn http_client(
    ca_pem: Option<&str>,
    attempt_timeout: Option<Duration>,
) -> Result<reqwest::Client, CloudError> {
    let mut b = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(attempt_timeout.unwrap_or(Duration::from_secs(30)));
    if let Some(pem) = ca_pem {
        let cert = reqwest::Certificate::from_pem(pem.as_bytes())
            .map_err(|e| CloudError::Invalid(format!("the extra CA certificate: {e}")))?;
        b = b.add_root_certificate(cert);
    }
    b.build()
        .map_err(|e| CloudError::Other(format!("cannot build the HTTP client: {e}")))
}

impl Arm {
    /// A client of `endpoint` (no trailing slash needed) with `credentials`.
    pub(crate) fn new(
        http: reqwest::Client,
        endpoint: &str,
        credentials: Arc<AzureCredentials>,
        backoff: Backoff,
        retry: RetryPolicy,
        pace: Pace,
        cancel: Cancel,
    ) -> Self {
        Arm {
            http,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            credentials,
            backoff,
            retry,
            pace,
            cancel,
        }
    }

    /// The URL of ARM path `path` at `api_version`.
    pub(crate) fn url(&self, path: &str, api_version: &str) -> String {
        format!("{}{path}?api-version={api_version}", self.endpoint)
    }

    /// One ARM call under the retry policy: 2xx answers, every other status as a typed
    /// error named `what`.
    pub(crate) async fn call(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
        what: &str,
    ) -> Result<Answer, CloudError> {
        // The token goes only to the endpoint the user configured.
        if !url.starts_with(&format!("{}/", self.endpoint)) {
            return Err(CloudError::Other(format!(
                "{what}: refusing to send credentials to a URL outside {}",
                self.endpoint
            )));
        }
        let attempt = || async {
            let bearer = self.credentials.bearer().await.map_err(|error| Attempt {
                error,
                verdict: Verdict::Stop,
            })?;
            let mut req = self
                .http
                .request(method.clone(), url)
                .header("Authorization", bearer.header());
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            if let Some(b) = body {
                req = req
                    .header("Content-Type", "application/json")
                    .body(b.to_string());
            }
            let resp = req.send().await.map_err(|e| Attempt {
                error: CloudError::Transient(format!("{what}: {}", transport(e))),
                verdict: Verdict::Retry(None),
            })?;
            let status = resp.status().as_u16();
            let header = |n: &str| {
                resp.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let wish = header("Retry-After").and_then(|v| retry_after(&v));
            let operation = header("Azure-AsyncOperation").map(|url| Operation {
                url,
                poll_after: wish,
            });
            let bytes = resp.bytes().await.map_err(|e| Attempt {
                error: CloudError::Transient(format!("{what}: {}", transport(e))),
                verdict: Verdict::Retry(None),
            })?;
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if (200..300).contains(&status) {
                return Ok(Answer {
                    status,
                    operation,
                    body,
                });
            }
            Err(Attempt {
                error: errors::from_arm(what, status, &body),
                verdict: if status == 429 {
                    Verdict::Throttled(wish)
                } else if retryable_status(status) {
                    Verdict::Retry(wish)
                } else {
                    Verdict::Stop
                },
            })
        };
        match retry::run(
            &self.retry,
            &self.pace,
            &self.cancel,
            attempt,
            |a: &Attempt| a.verdict,
        )
        .await
        {
            Ok(a) => Ok(a),
            Err(f) if f.cancelled => Err(CloudError::Cancelled(format!(
                "Terraform asked the provider to stop while {what} was being retried (last error: {})",
                f.error.error
            ))),
            Err(f) => {
                let note = retry::attempts_note(f.attempts);
                Err(f.error.error.map_message(|m| m + &note))
            }
        }
    }

    /// Polls `op` to a terminal status (at ARM's `Retry-After`, else the backoff); a
    /// failed or cancelled operation is its typed error, naming `what`.
    pub(crate) async fn wait(
        &self,
        op: &Operation,
        what: &str,
        timeout: Duration,
    ) -> Result<(), CloudError> {
        let waiting = format!("the Azure operation on {what}");
        let backoff = op.poll_after.map_or(self.backoff, |d| {
            let d = d.min(self.backoff.max).max(Duration::from_millis(50));
            Backoff { initial: d, max: d }
        });
        poll::until(
            &self.pace,
            backoff,
            timeout,
            &self.cancel,
            &waiting,
            || async {
                let a = self
                    .call(Method::GET, &op.url, None, &[], "GET operation status")
                    .await?;
                match a.body.get("status").and_then(Value::as_str).unwrap_or("") {
                    "Succeeded" => Ok(Some(Ok(()))),
                    "Failed" | "Canceled" => {
                        let e = a.body.get("error").cloned().unwrap_or(Value::Null);
                        let err = errors::from_arm(&format!("operation on {what}"), 400, &e);
                        Ok(Some(Err(match err {
                            CloudError::Invalid(m) | CloudError::Other(m) => CloudError::Other(m),
                            other => other,
                        })))
                    }
                    _ => Ok(None),
                }
            },
        )
        .await?
    }
}

/// A transport error without the URL (which may carry secrets in other APIs).
fn transport(e: reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    format!("{kind}: {}", e.without_url())
}
