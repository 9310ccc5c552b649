//! The walk of a new pool over its places, in the order written: each place is asked to
//! create the pool ([`attempt::create_new`]); a place that answers with a capacity
//! outcome, or does not bring the groups up within `capacity_wait`, is cleaned up
//! completely (nothing of the pool is left there) and the next is tried. Any other error
//! stops the walk at once, with what exists at that place. Every place's answer is kept
//! as an [`Attempt`].
//!
//! [`walk`] tries a list of places; [`try_place`] is one step of it, for callers that
//! prepare each place only when its turn comes (`gpu_node_pool` connects to a place's
//! cloud and reads what is there first).

use std::time::Duration;

use super::attempt;
use super::reconcile::{self, Outcome, ReconcileError, Timeouts};
use crate::model::GroupSpec;
use crate::offer::Cloud;
use crate::seam::{CapacityOutcome, CloudError, ClusterRef, NodeGroups};

/// One place a pool may run: the cloud's node-group API, the cluster, and the pool laid
/// out on that cloud's groups.
pub struct Candidate<'a> {
    /// The cloud.
    pub cloud: Cloud,
    /// The cluster's region.
    pub region: String,
    /// The cluster.
    pub cluster: ClusterRef,
    /// That cloud's node-group API.
    pub api: &'a dyn NodeGroups,
    /// The pool's groups as that cloud lays them out.
    pub groups: Vec<GroupSpec>,
}

/// How one place answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The pool's groups are up there.
    Ready,
    /// The cloud refused for capacity.
    Refused(CapacityOutcome),
    /// The groups did not come up within `capacity_wait`.
    Timeout,
}

impl AttemptOutcome {
    /// `ready`, `stockout`, `quota`, `not_offered` or `timeout`.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Ready => "ready",
            AttemptOutcome::Refused(o) => o.as_str(),
            AttemptOutcome::Timeout => "timeout",
        }
    }
}

/// One place tried.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// The place's cloud.
    pub cloud: Cloud,
    /// Its region.
    pub region: String,
    /// Its cluster's id.
    pub cluster: String,
    /// How it answered.
    pub outcome: AttemptOutcome,
    /// The cloud's words (empty when ready).
    pub detail: String,
    /// From the first request there to its answer (or to the groups up), on the cloud's
    /// clock (what `capacity_wait` counts).
    pub seconds: f64,
}

/// Where the walk ended.
#[derive(Debug)]
pub struct Walk {
    /// Every place tried, in order.
    pub attempts: Vec<Attempt>,
    /// The place the pool runs at (an index into the candidates), if one took it.
    pub placed: Option<usize>,
    /// What exists at the last place tried: the pool's groups there after success, or
    /// after an error that stopped the walk (its error in `outcome.error`).
    pub outcome: Option<(usize, Outcome)>,
}

impl Walk {
    /// The error that stopped the walk at a place (not a capacity answer), if any.
    pub fn stopped_by(&self) -> Option<&ReconcileError> {
        self.outcome.as_ref().and_then(|(_, o)| o.error.as_ref())
    }
}

/// How one place's try ended.
#[derive(Debug)]
pub enum PlaceEnd {
    /// The pool's groups are up there (the run's outcome).
    Placed(Outcome),
    /// A capacity answer or a timeout, and the place was cleaned up: try the next.
    Next,
    /// An error that stops the walk (not a capacity answer, or a clean-up that failed),
    /// with what exists at the place.
    Stopped(Outcome),
}

/// One place tried: its [`Attempt`], how it ended, and the cloud's capacity refusal
/// when there was one.
#[derive(Debug)]
pub struct Tried {
    /// The attempt as reported; none when an error that is not about capacity stopped
    /// the try (that is not an outcome of the vocabulary: it is the apply's error).
    pub attempt: Option<Attempt>,
    /// How the try ended.
    pub end: PlaceEnd,
    /// The capacity refusal and its clean-up, when the cloud refused.
    pub refusal: Option<attempt::Refusal>,
}

/// Tries one place: creates the pool's groups there and waits up to `capacity_wait`
/// (bounded by `timeouts.create`); a capacity refusal or a timeout is cleaned up.
pub async fn try_place(
    c: &Candidate<'_>,
    timeouts: &Timeouts,
    capacity_wait: Duration,
    token_seed: &str,
) -> Tried {
    let waiting = Timeouts {
        create: capacity_wait.min(timeouts.create),
        ..*timeouts
    };
    // On the cloud's clock, as `capacity_wait` counts.
    let started = c.api.now();
    let tried = attempt::create_new(c.api, &c.cluster, &c.groups, &waiting, token_seed).await;
    let attempt = |outcome: AttemptOutcome, detail: String| Attempt {
        cloud: c.cloud,
        region: c.region.clone(),
        cluster: c.cluster.id(),
        outcome,
        detail,
        seconds: c.api.now().saturating_sub(started).as_secs_f64(),
    };
    if let Some(refusal) = tried.refusal {
        let a = attempt(
            AttemptOutcome::Refused(refusal.outcome),
            format!("{} failed: {}", refusal.error.step, refusal.error.source),
        );
        // A failed clean-up stops the walk here, with what exists.
        let end = match tried.outcome.error {
            Some(_) => PlaceEnd::Stopped(tried.outcome),
            None => PlaceEnd::Next,
        };
        return Tried {
            attempt: Some(a),
            end,
            refusal: Some(refusal),
        };
    }
    match &tried.outcome.error {
        None => Tried {
            attempt: Some(attempt(AttemptOutcome::Ready, String::new())),
            end: PlaceEnd::Placed(tried.outcome),
            refusal: None,
        },
        Some(e) if matches!(e.source, CloudError::Timeout { .. }) => {
            let a = attempt(AttemptOutcome::Timeout, e.to_string());
            let names: Vec<String> = c.groups.iter().map(|g| g.name.clone()).collect();
            let cleaned = reconcile::destroy(c.api, &c.cluster, &names, timeouts.delete).await;
            let end = match cleaned.error {
                Some(_) => PlaceEnd::Stopped(cleaned),
                None => PlaceEnd::Next,
            };
            Tried {
                attempt: Some(a),
                end,
                refusal: None,
            }
        }
        Some(_) => Tried {
            attempt: None,
            end: PlaceEnd::Stopped(tried.outcome),
            refusal: None,
        },
    }
}

/// Tries `candidates` in order until one brings the pool's groups up within
/// `capacity_wait` (bounded by `timeouts.create`).
pub async fn walk(
    candidates: &[Candidate<'_>],
    timeouts: &Timeouts,
    capacity_wait: Duration,
    token_seed: &str,
) -> Walk {
    let mut attempts = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let tried = try_place(c, timeouts, capacity_wait, token_seed).await;
        attempts.extend(tried.attempt);
        match tried.end {
            PlaceEnd::Next => {}
            PlaceEnd::Placed(outcome) => {
                return Walk {
                    attempts,
                    placed: Some(i),
                    outcome: Some((i, outcome)),
                };
            }
            PlaceEnd::Stopped(outcome) => {
                return Walk {
                    attempts,
                    placed: None,
                    outcome: Some((i, outcome)),
                };
            }
        }
    }
    Walk {
        attempts,
        placed: None,
        outcome: None,
    }
}

#[cfg(test)]
mod tests;
