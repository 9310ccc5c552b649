//! The one retry policy of every cloud call: exponential backoff with jitter, the server's
//! `Retry-After` when it gives one, a bounded number of attempts, and only for failures
//! that are safe to repeat (throttling, 5xx, connection resets and timeouts). Callers
//! decide what is retryable; mutating calls carry idempotency tokens so a repeat after a
//! lost response does not act twice.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use crate::time::{parse_http_date, unix_now};

#[cfg(feature = "live")]
mod run;
#[cfg(feature = "live")]
pub use run::{Failure, run};

/// A transport failure in words, its causes included: `timed out`, `could not connect` or
/// `request failed`, then each cause (reqwest's own text names the URL, never a header).
#[cfg(feature = "live")]
pub fn transport_text(e: &reqwest::Error) -> String {
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
    message
}

/// ` (after N attempts)` when a call was made more than once, else nothing: how every
/// retried error ends.
pub fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

/// Whether a response status is worth retrying (429 and 5xx).
pub fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait a `Retry-After` header asks for: delta-seconds or an HTTP date.
pub fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = parse_http_date(value)?;
    Some(Duration::from_secs(at.saturating_sub(unix_now())))
}

/// Backoff schedule: `initial × 2^retry`, times a random factor in [0.5, 1), at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// First delay.
    pub initial: Duration,
    /// Upper bound of any delay, `Retry-After` included.
    pub max: Duration,
}

impl Backoff {
    /// The delay before retry number `retry` (0-based), or the server's wish if it gave one.
    pub fn delay(&self, retry: u32, server_wish: Option<Duration>) -> Duration {
        if let Some(wish) = server_wish {
            return wish.min(self.max);
        }
        let exp = self
            .initial
            .saturating_mul(2u32.saturating_pow(retry.min(20)));
        let capped = exp.min(self.max);
        capped.mul_f64(0.5 + 0.5 * jitter())
    }
}

/// How many times to try a call and how long to wait between tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1), while the failures are server
    /// errors, resets or timeouts ([`Verdict::Retry`]).
    pub max_attempts: u32,
    /// Attempts in all while the last failure was throttling ([`Verdict::Throttled`]):
    /// the service refused before acting and asked to slow down, so it is worth more
    /// patience (never fewer than `max_attempts`).
    pub max_throttled_attempts: u32,
    /// Waits between attempts.
    pub backoff: Backoff,
}

impl Default for RetryPolicy {
    /// 8 attempts, 1 s doubling to 20 s (about 70 s of waiting at most), so a real outage
    /// surfaces; 25 while throttled (about 7 minutes, less with the server's
    /// `Retry-After`), so an account throttling a third of its requests never fails a call
    /// (8 throttled answers in a row happen once in 15,000 calls at that rate).
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            max_throttled_attempts: 25,
            backoff: Backoff {
                initial: Duration::from_secs(1),
                max: Duration::from_secs(20),
            },
        }
    }
}

impl RetryPolicy {
    /// The default pauses with `retries` repeats after the first attempt, whatever the
    /// failure (the provider's `aws.max_retries`).
    pub fn with_retries(retries: u32) -> Self {
        RetryPolicy {
            max_attempts: retries + 1,
            max_throttled_attempts: retries + 1,
            ..RetryPolicy::default()
        }
    }

    /// The attempts allowed when the last failure had verdict `v` (0 for `Stop`).
    pub fn attempts_for(&self, v: Verdict) -> u32 {
        match v {
            Verdict::Stop => 0,
            Verdict::Retry(_) => self.max_attempts.max(1),
            Verdict::Throttled(_) => self.max_throttled_attempts.max(self.max_attempts).max(1),
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not safe or not useful to repeat: give up now.
    Stop,
    /// Try again (a server error, a reset, a timeout), after the server's wish if it
    /// expressed one, within [`RetryPolicy::max_attempts`].
    Retry(Option<Duration>),
    /// The service asked to slow down (429, a rate limit): try again after its wish,
    /// within [`RetryPolicy::max_throttled_attempts`].
    Throttled(Option<Duration>),
}

/// A fresh token for one logical call, reused by all its retries (idempotency).
pub fn fresh_token(prefix: &str) -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(unix_now());
    h.write(prefix.as_bytes());
    format!("{prefix}-{:016x}", h.finish())
}

/// A pseudo-random number in [0, 1) from the std hasher's random keys.
fn jitter() -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(unix_now());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert!(retryable_status(429));
        assert!(retryable_status(503));
        assert!(!retryable_status(404));
        assert!(!retryable_status(200));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon"), None);
    }

    #[test]
    fn backoff_grows_and_caps() {
        let b = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        for retry in 0..8 {
            let d = b.delay(retry, None);
            let full = Duration::from_millis(100 * 2u64.pow(retry)).min(b.max);
            assert!(d >= full / 2 && d <= full, "{retry}: {d:?}");
        }
        assert_eq!(
            b.delay(0, Some(Duration::from_secs(9))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn tokens_differ_per_call() {
        let a = fresh_token("gputf");
        let b = fresh_token("gputf");
        assert!(
            a.starts_with("gputf-") && a.len() == "gputf-".len() + 16,
            "{a}"
        );
        assert_ne!(a, b);
    }
}
