//! [`LiveError`]: why one live price source (or one scope of it) gave no prices.
//!
//! URLs in errors pass through [`redact_url`] first, so API keys never show.

/// Why a live source failed. Never fatal: [`super::refresh`] turns it into a warning.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The server answered with a non-success status (after retries where retryable).
    #[error("GET {url}: HTTP {status}{attempts}", attempts = crate::retry::attempts_note(*.attempts))]
    Status {
        /// The URL, redacted.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// Attempts made.
        attempts: u32,
    },
    /// The request never got an answer: DNS, connection refused, TLS, timeout.
    #[error("GET {url}: {message}{attempts}", attempts = crate::retry::attempts_note(*.attempts))]
    Transport {
        /// The URL, redacted.
        url: String,
        /// What went wrong (without the URL).
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The answer did not have the documented shape.
    #[error("{url}: unexpected response: {message}")]
    Decode {
        /// The URL, redacted.
        url: String,
        /// What did not parse.
        message: String,
    },
    /// A paged listing went on for longer than any real one does.
    #[error("{url}: more than {limit} pages; giving up")]
    TooManyPages {
        /// The first URL, redacted.
        url: String,
        /// The page limit.
        limit: usize,
    },
    /// An AWS SDK call failed.
    #[error("AWS {operation} in {region}: {message}")]
    Aws {
        /// The operation.
        operation: &'static str,
        /// The region.
        region: String,
        /// The SDK's error with its context chain.
        message: String,
    },
    /// A background task panicked or was cancelled.
    #[error("internal task failed: {0}")]
    Task(String),
}

impl LiveError {
    /// The error with its attempt count raised to at least `n` (HTTP errors only).
    pub fn with_attempts(mut self, n: u32) -> Self {
        if let LiveError::Status { attempts, .. } | LiveError::Transport { attempts, .. } =
            &mut self
        {
            *attempts = (*attempts).max(n);
        }
        self
    }
}

/// Query parameters whose values are secrets and are replaced by `***` in messages.
const SECRET_PARAMS: [&str; 4] = ["key", "api_key", "apikey", "access_token"];

/// `url` with the values of secret query parameters (`key=…`) replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((head, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if SECRET_PARAMS.contains(&k.to_ascii_lowercase().as_str()) => {
                format!("{k}=***")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}?{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_key() {
        assert_eq!(
            redact_url("https://x/v1/skus?key=SECRET&pageToken=abc"),
            "https://x/v1/skus?key=***&pageToken=abc"
        );
        assert_eq!(redact_url("https://x/a"), "https://x/a");
        let e = LiveError::Status {
            url: redact_url("http://h/p?KEY=s3cr3t"),
            status: 500,
            attempts: 3,
        };
        let msg = e.to_string();
        assert!(!msg.contains("s3cr3t"), "{msg}");
        assert!(msg.contains("after 3 attempts"), "{msg}");
    }
}
