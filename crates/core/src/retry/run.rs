//! [`run`]: one logical call under a [`RetryPolicy`], with cancellable sleeps.

use std::future::Future;

use super::{RetryPolicy, Verdict};
use crate::cancel::Cancel;
use crate::pace::Pace;

/// A call that did not succeed: its last error, how many attempts were made, and whether
/// the retries stopped because the provider was asked to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure<E> {
    /// The last attempt's error.
    pub error: E,
    /// Attempts made, the first included.
    pub attempts: u32,
    /// True when a sleep before a retry was cut short by `cancel`.
    pub cancelled: bool,
}

impl<E> Failure<E> {
    /// `last` (the last error, rendered) as a message: saying that a stop ended the
    /// retries, or with how many attempts were made.
    pub fn describe(&self, last: impl std::fmt::Display) -> String {
        if self.cancelled {
            format!(
                "stopped while retrying (Terraform asked the provider to stop); last error: {last}"
            )
        } else {
            format!("{last}{}", super::attempts_note(self.attempts))
        }
    }
}

/// Calls `call` until it succeeds, `verdict` says [`Verdict::Stop`], the policy's attempts
/// are used up, or `cancel` is set during a wait; the pauses run on `pace`. The call
/// itself is never abandoned.
pub async fn run<T, E, F, Fut>(
    policy: &RetryPolicy,
    pace: &Pace,
    cancel: &Cancel,
    mut call: F,
    verdict: impl Fn(&E) -> Verdict,
) -> Result<T, Failure<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        let error = match call().await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let v = verdict(&error);
        let wish = match v {
            Verdict::Retry(wish) | Verdict::Throttled(wish)
                if attempts < policy.attempts_for(v) =>
            {
                wish
            }
            _ => {
                return Err(Failure {
                    error,
                    attempts,
                    cancelled: false,
                });
            }
        };
        let pause = policy.backoff.delay(attempts - 1, wish);
        if cancel.run(pace.sleep(pause)).await.is_err() {
            return Err(Failure {
                error,
                attempts,
                cancelled: true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retry::Backoff;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::{Duration, Instant};

    fn quick(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            max_throttled_attempts: max_attempts,
            backoff: Backoff {
                initial: Duration::from_millis(1),
                max: Duration::from_millis(5),
            },
        }
    }

    /// Fails with `errs` in order, then succeeds with the attempt number.
    async fn scripted(
        policy: RetryPolicy,
        cancel: &Cancel,
        errs: &[&'static str],
    ) -> (Result<u32, Failure<&'static str>>, u32) {
        scripted_at(policy, &Pace::real(), cancel, errs).await
    }

    /// [`scripted`] with its pauses on `pace`.
    async fn scripted_at(
        policy: RetryPolicy,
        pace: &Pace,
        cancel: &Cancel,
        errs: &[&'static str],
    ) -> (Result<u32, Failure<&'static str>>, u32) {
        let n = AtomicU32::new(0);
        let r = run(
            &policy,
            pace,
            cancel,
            || {
                let i = n.fetch_add(1, Ordering::SeqCst);
                let e = errs.get(i as usize).copied();
                async move { e.map_or(Ok(i + 1), Err) }
            },
            |e| match *e {
                "throttled" => Verdict::Retry(None),
                "slow-down" => Verdict::Throttled(None),
                "wait-long" => Verdict::Retry(Some(Duration::from_secs(60))),
                _ => Verdict::Stop,
            },
        )
        .await;
        (r, n.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn retries_what_is_retryable_until_success() {
        let (r, calls) = scripted(quick(5), &Cancel::new(), &["throttled", "throttled"]).await;
        assert_eq!(r, Ok(3));
        assert_eq!(calls, 3);
    }

    #[tokio::test]
    async fn stops_at_once_on_what_is_not_retryable() {
        let (r, calls) = scripted(quick(5), &Cancel::new(), &["throttled", "invalid"]).await;
        assert_eq!(
            r,
            Err(Failure {
                error: "invalid",
                attempts: 2,
                cancelled: false
            })
        );
        assert_eq!(calls, 2);
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts() {
        let (r, calls) = scripted(quick(3), &Cancel::new(), &["throttled"; 10]).await;
        assert_eq!(r.unwrap_err().attempts, 3);
        assert_eq!(calls, 3);
    }

    #[tokio::test]
    async fn throttling_gets_its_own_longer_budget() {
        let policy = RetryPolicy {
            max_throttled_attempts: 6,
            ..quick(3)
        };
        // Five refusals to slow down, then success: within the throttling budget.
        let (r, calls) = scripted(policy, &Cancel::new(), &["slow-down"; 5]).await;
        assert_eq!((r, calls), (Ok(6), 6));
        // The same number of server errors exhausts the ordinary budget.
        let (r, calls) = scripted(policy, &Cancel::new(), &["throttled"; 5]).await;
        assert_eq!((r.unwrap_err().attempts, calls), (3, 3));
        // Throttled past its own budget fails too, naming the attempts.
        let (r, calls) = scripted(policy, &Cancel::new(), &["slow-down"; 10]).await;
        assert_eq!((r.unwrap_err().attempts, calls), (6, 6));
        // `with_retries` (the provider's max_retries) caps both.
        let capped = RetryPolicy::with_retries(1);
        assert_eq!(capped.attempts_for(Verdict::Throttled(None)), 2);
        assert_eq!(capped.attempts_for(Verdict::Retry(None)), 2);
        assert_eq!(
            RetryPolicy::default().attempts_for(Verdict::Throttled(None)),
            25
        );
    }

    #[tokio::test]
    async fn retry_after_is_honoured_up_to_the_cap() {
        let p = RetryPolicy {
            max_attempts: 2,
            max_throttled_attempts: 2,
            backoff: Backoff {
                initial: Duration::from_millis(1),
                max: Duration::from_millis(150),
            },
        };
        let start = Instant::now();
        let (r, _) = scripted(p, &Cancel::new(), &["wait-long"]).await;
        assert_eq!(r, Ok(2));
        let took = start.elapsed();
        // The server asked for 60 s; the cap is 150 ms, and it was waited in full.
        assert!(took >= Duration::from_millis(150), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    #[tokio::test]
    async fn a_time_scale_shrinks_every_pause_the_server_wish_included() {
        let p = RetryPolicy {
            max_attempts: 3,
            max_throttled_attempts: 3,
            backoff: Backoff {
                initial: Duration::from_secs(20),
                max: Duration::from_secs(20),
            },
        };
        let pace = Pace::at(crate::pace::TimeScale::parse("0.005").unwrap());
        let start = Instant::now();
        // Two pauses of 20 s of cloud time (the server's 60 s capped, then the backoff's
        // 10 to 20 s with jitter): 100 to 200 ms at this scale, never 30 s.
        let (r, calls) = scripted_at(p, &pace, &Cancel::new(), &["wait-long", "throttled"]).await;
        assert_eq!((r, calls), (Ok(3), 3));
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(140), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    #[tokio::test]
    async fn cancel_cuts_the_sleep_short() {
        let p = RetryPolicy {
            max_attempts: 5,
            max_throttled_attempts: 5,
            backoff: Backoff {
                initial: Duration::from_secs(30),
                max: Duration::from_secs(30),
            },
        };
        let cancel = Cancel::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            c2.cancel();
        });
        let start = Instant::now();
        let (r, calls) = scripted(p, &cancel, &["throttled"; 10]).await;
        let f = r.unwrap_err();
        assert!(f.cancelled);
        assert_eq!((f.attempts, calls), (1, 1));
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
