//! The one place that makes a purchase safe to repeat ([`purchase_once`]: a purchase whose
//! answer was lost is found again by its marker, never bought twice), and the ranking of
//! capacity-block offerings.

use std::collections::BTreeMap;

use crate::seam::CloudError;
use crate::seam::commitments::{
    CapacityBlockOffering, Commitments, LiveCommitment, MARKER_TAG, Order,
};

/// How [`purchase_once`] got its commitment.
#[derive(Debug, Clone, PartialEq)]
pub enum Purchased {
    /// Bought now.
    Bought(LiveCommitment),
    /// Already there with our marker (an earlier attempt whose answer was lost, or an
    /// interrupted apply): adopted, not bought again.
    Found(LiveCommitment),
}

impl Purchased {
    /// The commitment, however it came.
    pub fn commitment(&self) -> &LiveCommitment {
        match self {
            Purchased::Bought(c) | Purchased::Found(c) => c,
        }
    }
}

/// Buys `order` at most once for `key`: first looks for a live commitment marked `key`
/// (adopting it), then buys with the marker, and when the purchase fails in a way that
/// may hide a success (a lost answer, a timeout, a server error) looks again before
/// reporting the error. A refusal (invalid, quota, capacity, unauthorized) is reported as
/// it is.
pub async fn purchase_once(
    store: &dyn Commitments,
    order: &Order,
    key: &str,
    tags: &BTreeMap<String, String>,
) -> Result<Purchased, CloudError> {
    let region = order.location();
    if let Some(found) = live_marked(store, region, key).await? {
        return Ok(Purchased::Found(found));
    }
    let mut marked = tags.clone();
    marked.insert(MARKER_TAG.to_string(), key.to_string());
    match store.purchase(order, &marked).await {
        Ok(c) => Ok(Purchased::Bought(c)),
        Err(e) if may_have_acted(&e) => match live_marked(store, region, key).await {
            Ok(Some(found)) => Ok(Purchased::Found(found)),
            Ok(None) => Err(e),
            Err(lookup) => Err(e.map_message(|m| {
                format!(
                    "{m}; the purchase may or may not have happened, and looking for it failed \
                     too ({lookup}): check the cloud for a commitment tagged {MARKER_TAG} = {key} \
                     before applying again"
                )
            })),
        },
        Err(e) => Err(e),
    }
}

/// Whether a failed call may have acted before its answer was lost.
fn may_have_acted(e: &CloudError) -> bool {
    matches!(e, CloudError::Transient(_) | CloudError::Other(_))
}

async fn live_marked(
    store: &dyn Commitments,
    region: &str,
    key: &str,
) -> Result<Option<LiveCommitment>, CloudError> {
    Ok(store
        .find_by_marker(region, key)
        .await?
        .into_iter()
        .find(|c| c.status.live()))
}

/// Offerings ranked by price per GPU-hour (then earliest start, then id), given the GPUs
/// per instance of each type.
pub fn rank_offerings(
    offerings: &mut [CapacityBlockOffering],
    gpus_per_instance: impl Fn(&str) -> Option<u32>,
) {
    let per_gpu_hour = |o: &CapacityBlockOffering| {
        gpus_per_instance(&o.instance_type).map(|g| {
            o.upfront_fee / (f64::from(o.duration_hours) * f64::from(o.instance_count * g)).max(1.0)
        })
    };
    offerings.sort_by(|a, b| {
        let (x, y) = (per_gpu_hour(a), per_gpu_hour(b));
        match (x, y) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then(a.start.cmp(&b.start))
        .then_with(|| a.id.cmp(&b.id))
    });
}
