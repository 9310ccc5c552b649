//! The walk of a new pool over its places, in the order written: each place is asked to
//! create the pool ([`attempt::create_new`]); a place that answers with a capacity
//! outcome, or does not bring the groups up within `capacity_wait`, is cleaned up
//! completely (nothing of the pool is left there) and the next is tried. Any other error
//! stops the walk at once, with what exists at that place. Every place's answer is kept
//! as an [`Attempt`].
//!
//! This is the engine of `failover`; the resources do not use it yet (the provider builds
//! one place today and reports a refusal through [`attempt::create_new`]).

use std::time::{Duration, Instant};

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
    /// From the first request there to its answer (or to the groups up).
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

/// Tries `candidates` in order until one brings the pool's groups up within
/// `capacity_wait` (bounded by `timeouts.create`).
pub async fn walk(
    candidates: &[Candidate<'_>],
    timeouts: &Timeouts,
    capacity_wait: Duration,
    token_seed: &str,
) -> Walk {
    let mut attempts = Vec::new();
    let waiting = Timeouts {
        create: capacity_wait.min(timeouts.create),
        ..*timeouts
    };
    for (i, c) in candidates.iter().enumerate() {
        let started = Instant::now();
        let tried = attempt::create_new(c.api, &c.cluster, &c.groups, &waiting, token_seed).await;
        let mut record = |outcome: AttemptOutcome, detail: String| {
            attempts.push(Attempt {
                cloud: c.cloud,
                region: c.region.clone(),
                cluster: c.cluster.id(),
                outcome,
                detail,
                seconds: started.elapsed().as_secs_f64(),
            });
        };
        if let Some(refusal) = &tried.refusal {
            record(
                AttemptOutcome::Refused(refusal.outcome),
                format!("{} failed: {}", refusal.error.step, refusal.error.source),
            );
            if tried.outcome.error.is_some() {
                // The clean-up failed: stop here, with what exists.
                return Walk {
                    attempts,
                    placed: None,
                    outcome: Some((i, tried.outcome)),
                };
            }
            continue;
        }
        match &tried.outcome.error {
            None => {
                record(AttemptOutcome::Ready, String::new());
                return Walk {
                    attempts,
                    placed: Some(i),
                    outcome: Some((i, tried.outcome)),
                };
            }
            Some(e) if matches!(e.source, CloudError::Timeout { .. }) => {
                record(AttemptOutcome::Timeout, e.to_string());
                let names: Vec<String> = c.groups.iter().map(|g| g.name.clone()).collect();
                let cleaned = reconcile::destroy(c.api, &c.cluster, &names, timeouts.delete).await;
                if cleaned.error.is_some() {
                    return Walk {
                        attempts,
                        placed: None,
                        outcome: Some((i, cleaned)),
                    };
                }
            }
            Some(_) => {
                return Walk {
                    attempts,
                    placed: None,
                    outcome: Some((i, tried.outcome)),
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
