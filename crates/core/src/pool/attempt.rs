//! A new pool's create in one place, where a cloud's "no capacity" (a stockout, a quota,
//! a type the place does not offer) is an expected answer: everything the create made
//! there is deleted again, so the place is left as it was, and the answer is kept with
//! its outcome for the caller to report (or, later, to try the next place).

use super::reconcile::{self, Outcome, ReconcileError, Timeouts};
use crate::model::GroupSpec;
use crate::seam::{CapacityOutcome, ClusterRef, NodeGroups};

/// What a create in one place came to.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateAttempt {
    /// The pool's groups as they exist in the place now (empty after a clean refusal),
    /// and the run's error: the create's own when it was not refused for capacity (its
    /// groups then stay, as the state records them), else the clean-up's, if it failed.
    pub outcome: Outcome,
    /// The capacity refusal, when the cloud gave one.
    pub refusal: Option<Refusal>,
    /// How long the create ran until it succeeded or was refused, on the cloud's clock
    /// ([`NodeGroups::now`]).
    pub seconds: f64,
}

/// A capacity refusal and the clean-up after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// What the refusal means.
    pub outcome: CapacityOutcome,
    /// The failed step and the cloud's answer (its code and message).
    pub error: ReconcileError,
    /// The groups the create had made (or left failed) and the clean-up deleted.
    pub deleted: Vec<String>,
}

/// Creates `desired` in `cluster`, where none of the pool's groups exist yet. When the
/// cloud refuses for capacity, deletes every group of `desired` that exists (those made
/// before the refusal, and a group the cloud left in a failed state) and waits until
/// they are gone, within `timeouts.delete`.
pub async fn create_new(
    api: &dyn NodeGroups,
    cluster: &ClusterRef,
    desired: &[GroupSpec],
    timeouts: &Timeouts,
    token_seed: &str,
) -> CreateAttempt {
    let started = api.now();
    let created = reconcile::apply(api, cluster, desired, &[], timeouts, token_seed).await;
    let seconds = api.now().saturating_sub(started).as_secs_f64();
    let Some(error) = created.error.clone() else {
        return CreateAttempt {
            outcome: created,
            refusal: None,
            seconds,
        };
    };
    let Some(outcome) = error.source.capacity_outcome() else {
        return CreateAttempt {
            outcome: created,
            refusal: None,
            seconds,
        };
    };
    let names: Vec<String> = desired.iter().map(|g| g.name.clone()).collect();
    let mut cleaned = reconcile::destroy(api, cluster, &names, timeouts.delete).await;
    let mut deleted = error.existing.clone();
    // A group the cloud left failed is not "existing" in the create's account, but the
    // clean-up deleted it too: name every group the clean-up's journal touched.
    for m in cleaned.mutations.iter().filter(|m| m.error.is_none()) {
        if let Some(name) = m.target.rsplit('/').next()
            && !deleted.iter().any(|d| d == name)
        {
            deleted.push(name.to_string());
        }
    }
    deleted.sort();
    cleaned.mutations = [created.mutations, cleaned.mutations].concat();
    cleaned.waits = created.waits;
    CreateAttempt {
        outcome: cleaned,
        refusal: Some(Refusal {
            outcome,
            error,
            deleted,
        }),
        seconds,
    }
}

#[cfg(test)]
mod tests;
