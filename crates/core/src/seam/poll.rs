//! Waits, written once for every adapter and every kind of cloud object (node groups
//! today; VMs and reservations next): [`until`] polls on a [`Backoff`] schedule against a
//! [`Clock`] until a step says done, fails, the deadline passes or the stop signal comes.
//! Adapters supply the read (`group` waits for node groups); the fake runs the
//! same loop on a virtual clock.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{CloudError, CloudTraits, ClusterRef, NodeGroup, NodeGroupStatus, WaitTarget};
use crate::cancel::Cancel;
#[cfg(feature = "live")]
use crate::pace::Pace;

/// Delays between status polls: `initial`, doubling up to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// First delay.
    pub initial: Duration,
    /// Largest delay.
    pub max: Duration,
}

impl Default for Backoff {
    /// 5 s doubling to 30 s: node groups take minutes, DescribeNodegroup is rate limited.
    fn default() -> Self {
        Backoff {
            initial: Duration::from_secs(5),
            max: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The delay before poll number `attempt` (0-based), capped at `max`.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX);
        self.initial.saturating_mul(factor).min(self.max)
    }

    /// The next sleep given the time `left` before the deadline: never past it.
    pub fn next_sleep(&self, attempt: u32, left: Duration) -> Duration {
        self.delay(attempt).min(left)
    }
}

/// Time as a wait sees it: [`Pace`](crate::pace::Pace) in the real adapters (real time,
/// or the test-only time scale), [`VirtualClock`] in the fake (sleeps advance it at once,
/// so tests of long waits take no time).
pub trait Clock: Send + Sync {
    /// Time since the clock's own origin.
    fn now(&self) -> Duration;
    /// Sleeps for `d` (a virtual clock only advances).
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send;
}

#[cfg(feature = "live")]
impl Clock for Pace {
    fn now(&self) -> Duration {
        Pace::now(self)
    }
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        Pace::sleep(self, d)
    }
}

/// Sleeps `d` on `pace` unless `cancel` is set first: the pause of a live adapter
/// before a refused change is sent again ([`super::NodeGroups::pause`]).
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
pub(crate) async fn pause(pace: &Pace, cancel: &Cancel, d: Duration) -> Result<(), CloudError> {
    cancel.run(pace.sleep(d)).await.map_err(|_| {
        CloudError::Cancelled(
            "Terraform asked the provider to stop while a change waited for the cluster".into(),
        )
    })
}

/// A clock that only moves when slept on.
#[derive(Debug, Default)]
pub struct VirtualClock(AtomicU64);

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::SeqCst))
    }
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::SeqCst);
        std::future::ready(())
    }
}

/// Polls `poll` until it returns `Ok(Some(done))`, on `backoff`'s schedule, for at most
/// `timeout` of `clock`'s time (nothing left: one look). A retryable error of a poll
/// (throttling, a blip) is kept and polling goes on; any other error ends the wait. The
/// pauses end at once when `cancel` is set ([`CloudError::Cancelled`]); at the deadline the
/// last retryable error, or [`CloudError::Timeout`] naming `what`, is returned.
pub async fn until<T, C, F, Fut>(
    clock: &C,
    backoff: Backoff,
    timeout: Duration,
    cancel: &Cancel,
    what: &str,
    mut poll: F,
) -> Result<T, CloudError>
where
    C: Clock,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>, CloudError>>,
{
    let start = clock.now();
    let deadline = start + timeout;
    let mut last_retryable = None;
    for attempt in 0u32.. {
        match poll().await {
            Ok(Some(done)) => return Ok(done),
            Ok(None) => last_retryable = None,
            Err(e) if e.is_retryable() => last_retryable = Some(e),
            Err(e) => return Err(e),
        }
        let now = clock.now();
        if now >= deadline {
            break;
        }
        let pause = clock.sleep(backoff.next_sleep(attempt, deadline - now));
        if cancel.run(pause).await.is_err() {
            return Err(CloudError::Cancelled(format!(
                "Terraform asked the provider to stop while waiting for {what}"
            )));
        }
    }
    Err(last_retryable.unwrap_or_else(|| CloudError::Timeout {
        what: what.to_string(),
        waited: clock.now().saturating_sub(start),
    }))
}

/// Polls group `name` of `cluster` with `get` (the adapter's read) through [`until`] until
/// it reaches `target`: the one wait loop of every group adapter and the fake.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn group<C, F, Fut>(
    clock: &C,
    backoff: Backoff,
    timeout: Duration,
    cancel: &Cancel,
    rules: &CloudTraits,
    cluster: &ClusterRef,
    name: &str,
    target: WaitTarget,
    mut get: F,
) -> Result<Option<NodeGroup>, CloudError>
where
    C: Clock,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<NodeGroup>, CloudError>>,
{
    let what = wait_what(cluster, name, target);
    until(clock, backoff, timeout, cancel, &what, || {
        let read = get();
        async move { wait_step(rules, cluster, name, target, read.await?) }
    })
    .await
}

/// What a wait is for, as named in its timeout error.
fn wait_what(cluster: &impl std::fmt::Display, name: &str, target: WaitTarget) -> String {
    let t = match target {
        WaitTarget::Active => "ready",
        WaitTarget::Deleted => "deleted",
    };
    format!("node group {cluster}/{name} {t}")
}

/// One poll's verdict: `Ok(Some(result))` done, `Ok(None)` keep polling, `Err` failed.
fn wait_step(
    rules: &CloudTraits,
    cluster: &impl std::fmt::Display,
    name: &str,
    target: WaitTarget,
    got: Option<NodeGroup>,
) -> Result<Option<Option<NodeGroup>>, CloudError> {
    let what = format!("node group {cluster}/{name}");
    match (target, got) {
        (WaitTarget::Deleted, None) => Ok(Some(None)),
        (WaitTarget::Active, None) => Err(CloudError::NotFound(what)),
        (WaitTarget::Active, Some(g)) => match g.status {
            NodeGroupStatus::Active => Ok(Some(Some(g))),
            NodeGroupStatus::CreateFailed
            | NodeGroupStatus::DeleteFailed
            | NodeGroupStatus::Degraded => Err(rules.failed_group(&what, &g.status, &g.health)),
            NodeGroupStatus::Deleting => Err(CloudError::Conflict(format!(
                "{what} is being deleted and will not become ready"
            ))),
            _ => Ok(None),
        },
        (WaitTarget::Deleted, Some(g)) => match g.status {
            NodeGroupStatus::DeleteFailed => Err(rules.failed_group(&what, &g.status, &g.health)),
            _ => Ok(None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::block_on as block;
    use std::cell::Cell;

    fn backoff() -> Backoff {
        Backoff {
            initial: Duration::from_secs(5),
            max: Duration::from_secs(30),
        }
    }

    #[test]
    fn polls_until_done_on_the_schedule() {
        let clock = VirtualClock::default();
        let n = Cell::new(0);
        let got = block(until(
            &clock,
            backoff(),
            Duration::from_secs(600),
            &Cancel::new(),
            "x",
            || {
                n.set(n.get() + 1);
                let v = n.get();
                async move { Ok((v == 4).then_some(v)) }
            },
        ));
        assert_eq!(got.unwrap(), 4);
        // Slept 5 + 10 + 20 s between the four looks.
        assert_eq!(clock.now(), Duration::from_secs(35));
    }

    #[test]
    fn the_deadline_ends_it_with_a_timeout_or_the_last_retryable_error() {
        let clock = VirtualClock::default();
        let r: Result<(), _> = block(until(
            &clock,
            backoff(),
            Duration::from_secs(60),
            &Cancel::new(),
            "g ready",
            || async { Ok(None) },
        ));
        match r {
            Err(CloudError::Timeout { what, waited }) => {
                assert_eq!(what, "g ready");
                assert_eq!(
                    waited,
                    Duration::from_secs(60),
                    "never sleeps past the deadline"
                );
            }
            other => panic!("{other:?}"),
        }
        let r: Result<(), _> = block(until(
            &VirtualClock::default(),
            backoff(),
            Duration::from_secs(60),
            &Cancel::new(),
            "g",
            || async { Err(CloudError::Throttled("slow down".into())) },
        ));
        assert!(matches!(r, Err(CloudError::Throttled(_))), "{r:?}");
        // A non-retryable error ends the wait at once.
        let looks = Cell::new(0);
        let r: Result<(), _> = block(until(
            &VirtualClock::default(),
            backoff(),
            Duration::from_secs(60),
            &Cancel::new(),
            "g",
            || {
                looks.set(looks.get() + 1);
                async { Err(CloudError::Invalid("no".into())) }
            },
        ));
        assert!(matches!(r, Err(CloudError::Invalid(_))) && looks.get() == 1);
    }

    #[test]
    fn no_time_left_looks_once_and_a_stop_ends_the_pause() {
        let looks = Cell::new(0);
        let r: Result<(), _> = block(until(
            &VirtualClock::default(),
            backoff(),
            Duration::ZERO,
            &Cancel::new(),
            "g",
            || {
                looks.set(looks.get() + 1);
                async { Ok(None) }
            },
        ));
        assert!(matches!(r, Err(CloudError::Timeout { .. })) && looks.get() == 1);
        let stop = Cancel::new();
        stop.cancel();
        let r: Result<(), _> = block(until(
            &VirtualClock::default(),
            backoff(),
            Duration::from_secs(60),
            &stop,
            "g",
            || async { Ok(None) },
        ));
        assert!(matches!(r, Err(CloudError::Cancelled(_))), "{r:?}");
    }

    #[test]
    fn doubles_then_caps() {
        let b = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(500),
        };
        let d: Vec<_> = (0..5).map(|a| b.delay(a).as_millis()).collect();
        assert_eq!(d, vec![100, 200, 400, 500, 500]);
        assert_eq!(b.delay(u32::MAX), Duration::from_millis(500));
        assert_eq!(
            b.next_sleep(3, Duration::from_millis(50)),
            Duration::from_millis(50)
        );
    }
}
