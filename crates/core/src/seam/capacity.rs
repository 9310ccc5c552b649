//! The capacity vocabulary: every cloud's "no capacity here" as one of three neutral
//! outcomes. Each driver classifies its own codes into [`CloudError::InsufficientCapacity`]
//! (a stockout), [`CloudError::Quota`] or [`CloudError::NotOffered`], keeping the cloud's
//! code and message in the error's text; a caller that knows where it asked (the place)
//! turns the error into a [`CapacityAnswer`].

use serde::Serialize;

use super::CloudError;
use crate::offer::Cloud;

/// What a cloud's refusal of capacity means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityOutcome {
    /// The place has none of the asked capacity right now (EC2 InsufficientInstanceCapacity,
    /// Compute ZONE_RESOURCE_POOL_EXHAUSTED, GKE GCE_STOCKOUT, ARM AllocationFailed, ...).
    Stockout,
    /// The account's limit in that place would be exceeded (EC2 VcpuLimitExceeded, Compute
    /// QUOTA_EXCEEDED, ARM QuotaExceeded, ...).
    Quota,
    /// The place does not offer what was asked (EC2 Unsupported, ARM SkuNotAvailable, a
    /// Compute machine type that does not exist in the zone).
    NotOffered,
}

impl CapacityOutcome {
    /// The outcome as users and event lines read it: `stockout`, `quota`, `not_offered`.
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityOutcome::Stockout => "stockout",
            CapacityOutcome::Quota => "quota",
            CapacityOutcome::NotOffered => "not_offered",
        }
    }

    /// Whether waiting in the same place may cure it (a stockout may pass; a quota or a
    /// type the place lacks will not, without someone acting).
    pub fn may_pass(self) -> bool {
        self == CapacityOutcome::Stockout
    }
}

impl std::fmt::Display for CapacityOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CloudError {
    /// The capacity outcome this error is, if it is one.
    pub fn capacity_outcome(&self) -> Option<CapacityOutcome> {
        match self {
            CloudError::InsufficientCapacity(_) => Some(CapacityOutcome::Stockout),
            CloudError::Quota(_) => Some(CapacityOutcome::Quota),
            CloudError::NotOffered(_) => Some(CapacityOutcome::NotOffered),
            _ => None,
        }
    }
}

/// Where capacity was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapacityPlace {
    /// The cloud.
    pub cloud: Cloud,
    /// Its region (for AKS and GKE, the cluster's location).
    pub region: String,
    /// The zone, when the request named one.
    pub zone: Option<String>,
    /// The instance type (machine type, VM size) asked for, when one was.
    pub instance_type: Option<String>,
}

/// One capacity refusal: the outcome, where, and the cloud's own code and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapacityAnswer {
    /// What the refusal means.
    pub outcome: CapacityOutcome,
    /// Where capacity was asked for.
    pub place: CapacityPlace,
    /// The cloud's code and message, as the driver wrote them (no secrets: error text only).
    pub detail: String,
}

impl CapacityAnswer {
    /// The answer `error` gives at `place`, when it is a capacity refusal.
    pub fn of(error: &CloudError, place: CapacityPlace) -> Option<Self> {
        let outcome = error.capacity_outcome()?;
        let detail = match error {
            CloudError::InsufficientCapacity(m)
            | CloudError::Quota(m)
            | CloudError::NotOffered(m) => m.clone(),
            other => other.to_string(),
        };
        Some(CapacityAnswer {
            outcome,
            place,
            detail,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_outcomes_and_other_errors_are_none() {
        let cases = [
            (
                CloudError::InsufficientCapacity("x".into()),
                Some("stockout"),
            ),
            (CloudError::Quota("x".into()), Some("quota")),
            (CloudError::NotOffered("x".into()), Some("not_offered")),
            (CloudError::Invalid("x".into()), None),
            (CloudError::Unauthorized("x".into()), None),
            (CloudError::Busy("x".into()), None),
        ];
        for (e, want) in cases {
            assert_eq!(
                e.capacity_outcome().map(CapacityOutcome::as_str),
                want,
                "{e}"
            );
        }
        assert!(CapacityOutcome::Stockout.may_pass());
        assert!(!CapacityOutcome::Quota.may_pass() && !CapacityOutcome::NotOffered.may_pass());
    }

    #[test]
    fn an_answer_keeps_the_place_and_the_clouds_words() {
        let place = CapacityPlace {
            cloud: Cloud::Gcp,
            region: "us-central1".into(),
            zone: Some("us-central1-b".into()),
            instance_type: Some("a2-highgpu-8g".into()),
        };
        let e = CloudError::InsufficientCapacity("ZONE_RESOURCE_POOL_EXHAUSTED: no".into());
        let a = CapacityAnswer::of(&e, place.clone()).unwrap();
        assert_eq!(a.outcome, CapacityOutcome::Stockout);
        assert_eq!(a.detail, "ZONE_RESOURCE_POOL_EXHAUSTED: no");
        assert_eq!(a.place, place);
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["outcome"], "stockout");
        assert!(CapacityAnswer::of(&CloudError::Invalid("bad".into()), place).is_none());
    }
}
