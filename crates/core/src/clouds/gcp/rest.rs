//! The JSON-over-HTTPS client of a Google API (the Container API, Compute Engine): a bearer
//! token on every request, every
//! call under the crate's one retry policy ([`crate::retry::run`]: 429 and 5xx with the
//! server's `Retry-After`, connection failures), Google error bodies typed by
//! [`super::errors`]. Requests go to the configured endpoint only (never to a URL a
//! response names), so the token is not sent anywhere else.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::auth::TokenSource;
use super::errors;
use crate::cancel::Cancel;
use crate::pace::Pace;
use crate::retry::{self, RetryPolicy, Verdict, retry_after, retryable_status};
use crate::seam::CloudError;

/// The Container API's public endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://container.googleapis.com";

/// Compute Engine's public endpoint.
pub const COMPUTE_ENDPOINT: &str = "https://compute.googleapis.com";

/// Which Google API a client speaks: its name in messages and its path prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Service {
    /// `GKE`, `Compute Engine`.
    pub name: &'static str,
    /// `v1`, `compute/v1`.
    pub prefix: &'static str,
}

/// The Container API v1.
pub(crate) const GKE: Service = Service {
    name: "GKE",
    prefix: "v1",
};

/// Compute Engine v1.
pub(crate) const COMPUTE: Service = Service {
    name: "Compute Engine",
    prefix: "compute/v1",
};

/// A retrying, authenticated JSON client of one endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Rest {
    service: Service,
    client: reqwest::Client,
    endpoint: String,
    tokens: TokenSource,
    retry: RetryPolicy,
    pace: Pace,
    cancel: Cancel,
}

/// One failed attempt and whether to repeat it.
struct Attempt {
    error: CloudError,
    verdict: Verdict,
}

/// The HTTP client of Google calls: `attempt_timeout` per attempt, our user agent.
pub(crate) fn http_client(attempt_timeout: Duration) -> Result<reqwest::Client, CloudError> {
    reqwest::Client::builder()
        .timeout(attempt_timeout)
        .connect_timeout(attempt_timeout.min(Duration::from_secs(10)))
        .user_agent(concat!(
            "terraform-provider-gpu/",
            env!("CARGO_PKG_VERSION")
        ))
        .build()
        .map_err(|e| CloudError::Other(format!("building the Google Cloud HTTP client: {e}")))
}

impl Rest {
    /// A client of `service` at `endpoint` over `client` (shared by a session's clients).
    pub(crate) fn with_client(
        service: Service,
        endpoint: &str,
        tokens: TokenSource,
        client: reqwest::Client,
        retry: RetryPolicy,
        pace: Pace,
        cancel: Cancel,
    ) -> Self {
        Rest {
            service,
            client,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            tokens,
            retry,
            pace,
            cancel,
        }
    }

    /// The clock of this client's retry pauses and of the waits built on it.
    pub(crate) fn pace(&self) -> &Pace {
        &self.pace
    }

    /// `GET {endpoint}/{prefix}/{path}`.
    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        what: &str,
        path: &str,
    ) -> Result<T, CloudError> {
        self.call(what, reqwest::Method::GET, path, None::<&()>)
            .await
    }

    /// `{method} {endpoint}/{prefix}/{path}` with `body` as JSON (when given), decoded as `T`;
    /// errors name `what` (e.g. `nodePools.create`) and the attempts made.
    pub(crate) async fn call<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        what: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, CloudError> {
        let url = format!("{}/{}/{path}", self.endpoint, self.service.prefix);
        let service = self.service.name;
        let body = body.map(serde_json::to_vec).transpose().map_err(|e| {
            CloudError::Invalid(format!("{service} {what}: encoding the body: {e}"))
        })?;
        let attempt = || {
            let (url, method, body) = (&url, method.clone(), body.clone());
            async move {
                let token = self.tokens.token().await.map_err(|error| Attempt {
                    verdict: if error.is_retryable() {
                        Verdict::Retry(None)
                    } else {
                        Verdict::Stop
                    },
                    error,
                })?;
                let mut req = self.client.request(method, url).bearer_auth(token.expose());
                if let Some(b) = body {
                    req = req
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(b);
                }
                let resp = req.send().await.map_err(|e| Attempt {
                    error: CloudError::Transient(transport(&e)),
                    verdict: Verdict::Retry(None),
                })?;
                let status = resp.status().as_u16();
                let wish = resp
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(retry_after);
                let bytes = resp.bytes().await.map_err(|e| Attempt {
                    error: CloudError::Transient(transport(&e)),
                    verdict: Verdict::Retry(None),
                })?;
                if (200..300).contains(&status) {
                    let bytes = if bytes.is_empty() { &b"{}"[..] } else { &bytes };
                    return serde_json::from_slice(bytes).map_err(|e| Attempt {
                        error: CloudError::Other(format!("unreadable answer: {e}")),
                        verdict: Verdict::Stop,
                    });
                }
                let error = errors::from_response(status, &bytes);
                // A 403 rate limit (Compute Engine) is throttling too.
                let verdict = if matches!(error, CloudError::Throttled(_)) {
                    Verdict::Throttled(wish)
                } else if retryable_status(status) {
                    Verdict::Retry(wish)
                } else {
                    Verdict::Stop
                };
                Err(Attempt { error, verdict })
            }
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
            Ok(v) => Ok(v),
            Err(f) => {
                let err = f
                    .error
                    .error
                    .map_message(|m| format!("{service} {what}: {m}"));
                if f.cancelled {
                    return Err(CloudError::Cancelled(format!(
                        "Terraform asked the provider to stop while {service} {what} was \
                         being retried (last error: {err})"
                    )));
                }
                let note = retry::attempts_note(f.attempts);
                Err(err.map_message(|m| m + &note))
            }
        }
    }
}

/// A transport failure in words, its causes included (reqwest's own text names the URL,
/// which carries no secret; the token is in a header only).
fn transport(e: &reqwest::Error) -> String {
    crate::retry::transport_text(e)
}
