//! When to try starting a reclaimed VM again: after an insufficient-capacity answer (or
//! throttling, a transient error, or another operation still running on the VM), a pause
//! that doubles with jitter ([`crate::retry::Backoff`]); after the configured
//! time, give up and say so. Other errors give up at once: retrying them would not help.

use std::time::Duration;

use crate::retry::Backoff;
use crate::seam::CloudError;

/// The start retry schedule of a watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartSchedule {
    /// Pauses between attempts after a capacity shortage.
    pub backoff: Backoff,
    /// How long after the reclaim the watcher stops trying.
    pub give_up_after: Duration,
}

impl Default for StartSchedule {
    /// 30 s doubling to 10 min, for 6 hours: capacity often returns within hours.
    fn default() -> Self {
        StartSchedule {
            backoff: Backoff {
                initial: Duration::from_secs(30),
                max: Duration::from_secs(600),
            },
            give_up_after: Duration::from_secs(6 * 3600),
        }
    }
}

/// What to do after a failed start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Try again after this pause.
    RetryIn(Duration),
    /// Stop trying, for this reason (said in the `gave_up` event).
    GiveUp(String),
}

impl StartSchedule {
    /// After attempt number `attempt` (1-based) failed with `error`, `stopped_for` after
    /// the reclaim: a pause, or giving up (the time is up, or the error is not one that
    /// waiting cures).
    pub fn after_failure(&self, attempt: u32, stopped_for: Duration, error: &CloudError) -> Next {
        let waits = matches!(
            error,
            CloudError::InsufficientCapacity(_)
                // ARM's SkuNotAvailable for a size the VM ran on before: a capacity
                // restriction of the region, which lifts as a stockout does.
                | CloudError::NotOffered(_)
                | CloudError::Throttled(_)
                | CloudError::Transient(_)
                | CloudError::Busy(_)
        );
        if !waits {
            return Next::GiveUp(format!("start failed and waiting will not help: {error}"));
        }
        let pause = self.backoff.delay(attempt.saturating_sub(1), None);
        if stopped_for + pause > self.give_up_after {
            return Next::GiveUp(format!(
                "no capacity after {attempt} attempts over {} minutes (give up after {} minutes): {error}",
                stopped_for.as_secs() / 60,
                self.give_up_after.as_secs() / 60
            ));
        }
        Next::RetryIn(pause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shortage() -> CloudError {
        CloudError::InsufficientCapacity("InsufficientInstanceCapacity".into())
    }

    #[test]
    fn a_shortage_waits_longer_each_time_within_the_cap() {
        let s = StartSchedule::default();
        let mut last = Duration::ZERO;
        for attempt in 1..=12 {
            let Next::RetryIn(p) = s.after_failure(attempt, Duration::from_secs(60), &shortage())
            else {
                panic!("attempt {attempt} gave up");
            };
            // Jitter in [0.5, 1) of initial × 2^(attempt-1), capped at max.
            let full = s
                .backoff
                .initial
                .saturating_mul(2u32.pow(attempt - 1))
                .min(s.backoff.max);
            assert!(
                p >= full / 2 && p <= full,
                "attempt {attempt}: {p:?} vs {full:?}"
            );
            if full < s.backoff.max {
                assert!(p * 2 > last, "pauses grow: {p:?} after {last:?}");
            }
            last = p;
        }
    }

    #[test]
    fn it_gives_up_when_the_time_is_up_or_waiting_cannot_help() {
        let s = StartSchedule::default();
        match s.after_failure(40, Duration::from_secs(6 * 3600 - 10), &shortage()) {
            Next::GiveUp(why) => {
                assert!(why.contains("40 attempts") && why.contains("360 minutes"))
            }
            other => panic!("{other:?}"),
        }
        match s.after_failure(
            1,
            Duration::ZERO,
            &CloudError::Unauthorized("denied".into()),
        ) {
            Next::GiveUp(why) => assert!(why.contains("waiting will not help")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            s.after_failure(
                1,
                Duration::ZERO,
                &CloudError::Throttled("slow down".into())
            ),
            Next::RetryIn(_)
        ));
        // Another operation on the VM (Azure's OperationNotAllowed ... in progress) ends.
        assert!(matches!(
            s.after_failure(1, Duration::ZERO, &CloudError::Busy("in progress".into())),
            Next::RetryIn(_)
        ));
    }
}
