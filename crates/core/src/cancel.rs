//! A cancellation signal shared by everything one operation runs (an apply, a read, a
//! price refresh): Terraform's `StopProvider` (and so Ctrl-C) sets it; waits and retry
//! sleeps end early when it is set. In-flight cloud calls are never abandoned, so no
//! create is left half-known. A signal stays set: the next operation takes a fresh one.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

/// A cloneable flag with wake-ups; all clones see the same state.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    set: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

/// Returned by [`Cancel::run`] when the signal came first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled: Terraform asked the provider to stop")]
pub struct Cancelled;

/// Two handles are equal when they are clones of one signal.
impl PartialEq for Cancel {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cancel {}

impl Cancel {
    /// A signal that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the signal and wakes everything waiting on it. Idempotent.
    pub fn cancel(&self) {
        self.0.set.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut *self.0.wakers.lock().unwrap_or_else(|p| p.into_inner()));
        for w in wakers {
            w.wake();
        }
    }

    /// Whether the signal is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }

    /// Runs `fut` to completion unless the signal is set first (then `fut` is dropped).
    pub async fn run<F: Future>(&self, fut: F) -> Result<F::Output, Cancelled> {
        let mut fut = pin!(fut);
        std::future::poll_fn(|cx| {
            if self.is_cancelled() {
                return Poll::Ready(Err(Cancelled));
            }
            if let Poll::Ready(v) = fut.as_mut().poll(cx) {
                return Poll::Ready(Ok(v));
            }
            let mut wakers = self.0.wakers.lock().unwrap_or_else(|p| p.into_inner());
            if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                wakers.push(cx.waker().clone());
            }
            drop(wakers);
            // Set between the first check and the registration: do not sleep through it.
            if self.is_cancelled() {
                return Poll::Ready(Err(Cancelled));
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(all(test, feature = "live"))]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn finishes_when_not_cancelled() {
        let c = Cancel::new();
        assert_eq!(c.run(async { 7 }).await, Ok(7));
    }

    #[tokio::test]
    async fn a_cancel_from_another_task_ends_a_long_sleep() {
        let c = Cancel::new();
        let c2 = c.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            c2.cancel();
        });
        let start = std::time::Instant::now();
        let r = c.run(tokio::time::sleep(Duration::from_secs(30))).await;
        assert_eq!(r, Err(Cancelled));
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(c.is_cancelled());
        // Once set, later runs end at once.
        assert_eq!(c.run(std::future::pending::<()>()).await, Err(Cancelled));
    }
}
