//! The leader-election decision over a `coordination.k8s.io/v1` Lease, as client-go's
//! `leaderelection` makes it (`tryAcquireOrRenew`), as a pure function of the Lease read,
//! the clock and our identity: no I/O here, so every case is a unit test.
//!
//! - no Lease, a Lease with no holder, or one whose `renewTime + leaseDurationSeconds` is
//!   past: acquire it (holder changes: `acquireTime` now, `leaseTransitions` + 1);
//! - a Lease we hold: renew it (`renewTime` now, `acquireTime` and transitions kept);
//! - a Lease another holds and has renewed recently enough: stand by.
//!
//! The write that follows carries the `resourceVersion` read, so of two replicas that both
//! decided to acquire only one write succeeds; the other gets 409 Conflict (see
//! [`crate::kube`]). Unlike client-go, expiry is judged on the Lease's own `renewTime`
//! (the rule), not on the local time the record was last seen to change: replicas'
//! clocks are assumed close (NTP), and [`hold_for`] keeps a fifth of the duration back.

use std::time::Duration;

/// What the Lease says, the fields the decision reads (times in unix microseconds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaseRecord {
    /// `spec.holderIdentity`; empty when nobody holds it (released).
    pub holder: String,
    /// `spec.leaseDurationSeconds`.
    pub duration_secs: i64,
    /// `spec.acquireTime`.
    pub acquire_us: Option<i64>,
    /// `spec.renewTime`.
    pub renew_us: Option<i64>,
    /// `spec.leaseTransitions`.
    pub transitions: i64,
}

/// What to do with the Lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write `record`: we take the Lease (it is absent, free or expired).
    Acquire(LeaseRecord),
    /// Write `record`: we hold it and renew it.
    Renew(LeaseRecord),
    /// Another replica holds it until `until_us` (unix microseconds): do nothing.
    Standby {
        /// The holder's identity.
        holder: String,
        /// When its lease runs out unless renewed.
        until_us: i64,
    },
}

impl LeaseRecord {
    /// When the lease runs out, unless renewed; `None` when it was never renewed.
    pub fn expires_us(&self) -> Option<i64> {
        self.renew_us
            .map(|r| r.saturating_add(self.duration_secs.saturating_mul(1_000_000)))
    }
}

/// The decision for `me` at `now_us`, given the Lease read (`None`: absent), writing
/// `duration` into a Lease we take or renew.
pub fn decide(
    current: Option<&LeaseRecord>,
    me: &str,
    now_us: i64,
    duration: Duration,
) -> Decision {
    let secs = duration.as_secs().max(1) as i64;
    let Some(cur) = current else {
        return Decision::Acquire(LeaseRecord {
            holder: me.to_string(),
            duration_secs: secs,
            acquire_us: Some(now_us),
            renew_us: Some(now_us),
            transitions: 0,
        });
    };
    if cur.holder == me {
        return Decision::Renew(LeaseRecord {
            holder: me.to_string(),
            duration_secs: secs,
            acquire_us: cur.acquire_us.or(Some(now_us)),
            renew_us: Some(now_us),
            transitions: cur.transitions,
        });
    }
    let free = cur.holder.is_empty();
    let expired = cur.expires_us().is_none_or(|until| until < now_us);
    if free || expired {
        return Decision::Acquire(LeaseRecord {
            holder: me.to_string(),
            duration_secs: secs,
            acquire_us: Some(now_us),
            renew_us: Some(now_us),
            transitions: cur.transitions + 1,
        });
    }
    Decision::Standby {
        holder: cur.holder.clone(),
        until_us: cur.expires_us().unwrap_or(now_us),
    }
}

/// The Lease given up by its holder at `now_us`: no holder, a 1-second duration, the
/// transitions kept (client-go's release; the next holder counts one more).
pub fn released(current: &LeaseRecord, now_us: i64) -> LeaseRecord {
    LeaseRecord {
        holder: String::new(),
        duration_secs: 1,
        acquire_us: Some(now_us),
        renew_us: Some(now_us),
        transitions: current.transitions,
    }
}

/// How long after sending a successful acquire or renew this replica may still act as
/// leader: the duration less a fifth, kept back for clock skew between replicas and for
/// the time a cloud call takes.
pub fn hold_for(duration: Duration) -> Duration {
    duration - duration / 5
}

/// A Kubernetes `MicroTime` (`2006-01-02T15:04:05.000000Z`) of unix microseconds.
pub fn format_micro_time(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000);
    let whole = gpu_core::time::format_rfc3339(secs);
    format!("{}.{micros:06}Z", whole.trim_end_matches('Z'))
}

/// Unix microseconds of a `MicroTime` (or any RFC 3339 time; fractions beyond
/// microseconds are cut); `None` when it is not one.
pub fn parse_micro_time(s: &str) -> Option<i64> {
    let secs = gpu_core::time::parse_rfc3339(s)?;
    let micros = match s.trim().get(19..).and_then(|r| r.strip_prefix('.')) {
        Some(frac) => {
            let digits: String = frac.chars().take_while(char::is_ascii_digit).collect();
            let six: String = digits
                .chars()
                .chain(std::iter::repeat('0'))
                .take(6)
                .collect();
            six.parse::<i64>().ok()?
        }
        None => 0,
    };
    Some(secs * 1_000_000 + micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;
    const NOW: i64 = 1_764_900_000 * S;
    const D: Duration = Duration::from_secs(30);

    fn held_by(holder: &str, renewed_secs_ago: i64) -> LeaseRecord {
        LeaseRecord {
            holder: holder.into(),
            duration_secs: 30,
            acquire_us: Some(NOW - 600 * S),
            renew_us: Some(NOW - renewed_secs_ago * S),
            transitions: 4,
        }
    }

    #[test]
    fn an_absent_lease_is_acquired_with_no_transition() {
        let Decision::Acquire(r) = decide(None, "a", NOW, D) else {
            panic!("acquire")
        };
        assert_eq!(
            r,
            LeaseRecord {
                holder: "a".into(),
                duration_secs: 30,
                acquire_us: Some(NOW),
                renew_us: Some(NOW),
                transitions: 0
            }
        );
    }

    #[test]
    fn our_own_lease_is_renewed_keeping_acquire_time_and_transitions() {
        // Even when it ran out meanwhile: nobody took it, so it is still ours to renew.
        for ago in [1, 29, 31, 3600] {
            let Decision::Renew(r) = decide(Some(&held_by("a", ago)), "a", NOW, D) else {
                panic!("renew")
            };
            assert_eq!(r.renew_us, Some(NOW));
            assert_eq!(r.acquire_us, Some(NOW - 600 * S));
            assert_eq!(r.transitions, 4);
        }
    }

    #[test]
    fn another_holders_live_lease_means_standby_until_it_runs_out() {
        let d = decide(Some(&held_by("b", 10)), "a", NOW, D);
        assert_eq!(
            d,
            Decision::Standby {
                holder: "b".into(),
                until_us: NOW + 20 * S
            }
        );
        // Exactly at the end it is still valid (expired means renewTime + duration < now).
        assert!(matches!(
            decide(Some(&held_by("b", 30)), "a", NOW, D),
            Decision::Standby { .. }
        ));
    }

    #[test]
    fn an_expired_or_released_lease_is_taken_over_with_one_more_transition() {
        for lease in [
            held_by("b", 31),
            held_by("", 1),
            LeaseRecord {
                renew_us: None,
                ..held_by("b", 0)
            },
        ] {
            let Decision::Acquire(r) = decide(Some(&lease), "a", NOW, D) else {
                panic!("acquire {lease:?}")
            };
            assert_eq!((r.holder.as_str(), r.transitions), ("a", 5));
            assert_eq!((r.acquire_us, r.renew_us), (Some(NOW), Some(NOW)));
        }
    }

    #[test]
    fn a_released_lease_is_free_for_the_next_replica_at_once() {
        let given_up = released(&held_by("a", 1), NOW);
        assert_eq!((given_up.holder.as_str(), given_up.duration_secs), ("", 1));
        let Decision::Acquire(r) = decide(Some(&given_up), "b", NOW + 1, D) else {
            panic!("acquire")
        };
        assert_eq!((r.holder.as_str(), r.transitions), ("b", 5));
    }

    #[test]
    fn the_holders_own_duration_counts_not_ours() {
        let long = LeaseRecord {
            duration_secs: 120,
            ..held_by("b", 100)
        };
        assert!(matches!(
            decide(Some(&long), "a", NOW, D),
            Decision::Standby { .. }
        ));
    }

    #[test]
    fn micro_time_round_trips_in_the_api_form() {
        let us = NOW + 123_456;
        let s = format_micro_time(us);
        assert_eq!(s, "2025-12-05T02:00:00.123456Z");
        assert_eq!(parse_micro_time(&s), Some(us));
        assert_eq!(parse_micro_time("2025-12-05T02:00:00Z"), Some(NOW));
        assert_eq!(
            parse_micro_time("2025-12-05T02:00:00.5Z"),
            Some(NOW + 500_000)
        );
        assert_eq!(parse_micro_time("yesterday"), None);
        assert_eq!(hold_for(D), Duration::from_secs(24));
    }
}
