//! The HTTP client of the price sources: reqwest with a timeout, retries on 429, 5xx and
//! transport errors (see [`super::retry`]), and URLs redacted in every error.

use std::time::Duration;

use serde::de::DeserializeOwned;

use super::config::LiveConfig;
use super::error::{LiveError, redact_url};
use super::retry::{Backoff, retry_after, retryable_status};

/// A retrying GET client.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    max_retries: u32,
    backoff: Backoff,
    timeout: std::time::Duration,
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
            max_retries: cfg.max_retries,
            timeout: cfg.timeout,
            backoff: Backoff {
                initial: cfg.initial_backoff,
                max: cfg.max_backoff,
            },
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
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut req = self.client.get(url);
            if total_timeout {
                req = req.timeout(self.timeout);
            }
            let (error, wish) = match req.send().await {
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let wish = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(retry_after);
                    let err = LiveError::Status {
                        url: redact_url(url),
                        status,
                        attempts: attempt,
                    };
                    if !retryable_status(status) {
                        return Err(err);
                    }
                    (err, wish)
                }
                Err(e) => (transport(url, &e, attempt), None),
            };
            if attempt > self.max_retries {
                return Err(error);
            }
            tokio::time::sleep(self.backoff.delay(attempt - 1, wish)).await;
        }
    }

    /// GETs `url` and decodes its JSON body; a body cut short is retried like a failed GET.
    pub async fn get_json<T: DeserializeOwned>(&self, url: &str) -> Result<T, LiveError> {
        let mut attempt = 0u32;
        let bytes = loop {
            attempt += 1;
            let resp = self.get(url).await?;
            match resp.bytes().await {
                Ok(b) => break b,
                Err(e) if attempt > self.max_retries => return Err(transport(url, &e, attempt)),
                Err(_) => tokio::time::sleep(self.backoff.delay(attempt - 1, None)).await,
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| LiveError::Decode {
            url: redact_url(url),
            message: e.to_string(),
        })
    }
}

fn transport(url: &str, e: &reqwest::Error, attempts: u32) -> LiveError {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let mut message = kind.to_string();
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(s) = src {
        message.push_str(": ");
        message.push_str(&s.to_string());
        src = s.source();
    }
    LiveError::Transport {
        url: redact_url(url),
        message,
        attempts,
    }
}
