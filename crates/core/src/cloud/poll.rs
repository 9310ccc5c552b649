//! Polling schedule for waits: exponential backoff with a cap, bounded by a deadline.

use std::time::Duration;

use super::{CloudError, NodeGroup, NodeGroupStatus, WaitTarget};

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

/// What a wait is for, as named in its timeout error.
pub(crate) fn wait_what(cluster: &str, name: &str, target: WaitTarget) -> String {
    let t = match target {
        WaitTarget::Active => "ACTIVE",
        WaitTarget::Deleted => "deleted",
    };
    format!("node group {cluster}/{name} {t}")
}

/// One poll's verdict: `Ok(Some(result))` done, `Ok(None)` keep polling, `Err` failed.
pub(crate) fn wait_step(
    cluster: &str,
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
            | NodeGroupStatus::Degraded => {
                Err(CloudError::from_failed_state(&what, &g.status, &g.health))
            }
            NodeGroupStatus::Deleting => Err(CloudError::Conflict(format!(
                "{what} is DELETING and will not become ACTIVE"
            ))),
            _ => Ok(None),
        },
        (WaitTarget::Deleted, Some(g)) => match g.status {
            NodeGroupStatus::DeleteFailed => {
                Err(CloudError::from_failed_state(&what, &g.status, &g.health))
            }
            _ => Ok(None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
