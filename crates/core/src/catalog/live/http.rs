//! The HTTP client of the price sources: reqwest with a timeout, retries on 429, 5xx and
//! transport errors under the crate's one policy ([`crate::retry::run`]), and URLs
//! redacted in every error.

use std::time::Duration;

use serde::de::DeserializeOwned;

use super::config::LiveConfig;
use super::error::{LiveError, redact_url};
use crate::cancel::Cancel;
use crate::pace::TimeScale;
use crate::retry::{self, RetryPolicy, Verdict, retry_after, retryable_status};

/// A retrying GET client.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    policy: RetryPolicy,
    cancel: Cancel,
    timeout: std::time::Duration,
    time_scale: TimeScale,
}

/// One failed attempt: its error (attempts not yet counted) and whether to repeat it.
struct Attempt {
    error: LiveError,
    verdict: Verdict,
}

impl Http {
    /// A client with the config's timeout, retry count and backoff.
    pub fn new(cfg: &LiveConfig) -> Result<Self, LiveError> {
        let client = reqwest::Client::builder()
            .read_timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(15)))
            .user_agent(concat!(
                "terraform-provider-gpu/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .map_err(|e| LiveError::Transport {
                url: String::new(),
                message: format!("building HTTP client: {}", e.without_url()),
                attempts: 0,
            })?;
        Ok(Http {
            client,
            policy: cfg.retry_policy(),
            cancel: cfg.cancel.clone(),
            timeout: cfg.timeout,
            time_scale: cfg.time_scale,
        })
    }

    /// GETs `url` until a success status: the response with its body unread. The whole
    /// exchange must finish within the configured timeout.
    pub async fn get(&self, url: &str) -> Result<reqwest::Response, LiveError> {
        self.send(url, true).await
    }

    /// Like [`Http::get`] for a large body read as a stream: the timeout bounds each read
    /// (and the connect), not the whole download.
    pub async fn get_stream(&self, url: &str) -> Result<reqwest::Response, LiveError> {
        self.send(url, false).await
    }

    async fn send(&self, url: &str, total_timeout: bool) -> Result<reqwest::Response, LiveError> {
        self.retrying(url, || async {
            let mut req = self.client.get(url);
            if total_timeout {
                req = req.timeout(self.timeout);
            }
            match req.send().await {
                Ok(resp) if resp.status().is_success() => Ok(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let wish = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(retry_after);
                    Err(Attempt {
                        error: LiveError::Status {
                            url: redact_url(url),
                            status,
                            attempts: 1,
                        },
                        verdict: if status == 429 {
                            Verdict::Throttled(wish)
                        } else if retryable_status(status) {
                            Verdict::Retry(wish)
                        } else {
                            Verdict::Stop
                        },
                    })
                }
                Err(e) => Err(Attempt {
                    error: transport(url, &e, 1),
                    verdict: Verdict::Retry(None),
                }),
            }
        })
        .await
    }

    /// GETs `url` and decodes its JSON body; a body cut short is retried like a failed GET.
    pub async fn get_json<T: DeserializeOwned>(&self, url: &str) -> Result<T, LiveError> {
        let bytes = self
            .retrying(url, || async {
                let resp = self.get(url).await.map_err(|error| Attempt {
                    error,
                    verdict: Verdict::Stop, // `get` has used up its own retries
                })?;
                resp.bytes().await.map_err(|e| Attempt {
                    error: transport(url, &e, 1),
                    verdict: Verdict::Retry(None),
                })
            })
            .await?;
        serde_json::from_slice(&bytes).map_err(|e| LiveError::Decode {
            url: redact_url(url),
            message: e.to_string(),
        })
    }

    /// Runs `call` under the policy; the error of the last attempt, with the attempts made.
    async fn retrying<T, F, Fut>(&self, url: &str, call: F) -> Result<T, LiveError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, Attempt>>,
    {
        let pace = super::config::pace_for(self.time_scale, url);
        retry::run(&self.policy, &pace, &self.cancel, call, |a: &Attempt| {
            a.verdict
        })
        .await
        .map_err(|f| {
            if f.cancelled {
                return LiveError::Transport {
                    url: redact_url(url),
                    message: f.describe(&f.error.error),
                    attempts: f.attempts,
                };
            }
            f.error.error.with_attempts(f.attempts)
        })
    }
}

fn transport(url: &str, e: &reqwest::Error, attempts: u32) -> LiveError {
    let message = crate::retry::transport_text(e);
    LiveError::Transport {
        url: redact_url(url),
        message,
        attempts,
    }
}
