//! EC2 capacity blocks and on-demand capacity reservations through aws-sdk-ec2:
//! [`Ec2Commitments`] implements [`Commitments`].
//!
//! Calls: `DescribeCapacityBlockOfferings` (all pages), `PurchaseCapacityBlock` (no client
//! token exists for it, so it is repeated only when EC2 throttled it; anything else is
//! looked up by tag through [`crate::commitment::purchase_once`]), `CreateCapacityReservation`
//! (a fresh `ClientToken` per purchase, so a repeat after a lost answer does not reserve
//! twice), `DescribeCapacityReservations` (by id, or by the `tag:gpu.tf/commitment`
//! filter) and `CancelCapacityReservation`. Every call goes through the crate's retry
//! policy; the SDK's own retries are off.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_ec2::primitives::DateTime;
use aws_sdk_ec2::types::{
    CapacityReservation, CapacityReservationInstancePlatform, CapacityReservationState,
    EndDateType, Filter, InstanceMatchCriteria, ResourceType, Tag, TagSpecification,
};

use super::retrying::{send, send_with};
use super::sdk::verdict_if_refused;
use crate::cancel::Cancel;
use crate::pace::Pace;
use crate::retry::{RetryPolicy, fresh_token};
use crate::seam::CloudError;
use crate::seam::commitment_kind::CommitmentKind;
use crate::seam::commitments::{
    CapacityBlockOffering, CapacityBlocks, CommitmentStatus, CommitmentUse, Commitments,
    LiveCommitment, MARKER_TAG, OfferingQuery, Order,
};

/// How EC2 calls are made (from [`super::AwsSettings`] and an operation's stop signal).
#[derive(Debug, Clone, Default)]
pub(super) struct Ec2Tuning {
    /// Endpoint override (an emulator).
    pub endpoint_url: Option<String>,
    /// Retries of each call.
    pub retry: Option<RetryPolicy>,
    /// Longest one HTTP attempt may take (default 30 s).
    pub attempt_timeout: Option<Duration>,
    /// Ends retry pauses early (Terraform's `StopProvider`).
    pub cancel: Cancel,
    /// The clock of retry pauses and waits (the time scale where EC2 is overridden).
    pub pace: Pace,
}

/// EC2 commitments in any region, one client per region.
#[derive(Debug)]
pub struct Ec2Commitments {
    sdk: aws_config::SdkConfig,
    opts: Ec2Tuning,
    clients: Mutex<HashMap<String, aws_sdk_ec2::Client>>,
}

impl Ec2Commitments {
    /// Builds from a loaded SDK config (credentials, profile) and the overrides in `opts`
    /// (made by [`super::AwsSession::ec2_commitments`]).
    pub(super) fn new(sdk: aws_config::SdkConfig, opts: Ec2Tuning) -> Self {
        Ec2Commitments {
            sdk,
            opts,
            clients: Mutex::default(),
        }
    }

    fn client(&self, region: &str) -> aws_sdk_ec2::Client {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        clients
            .entry(region.to_string())
            .or_insert_with(|| {
                super::clients::ec2_client(
                    &self.sdk,
                    Some(region),
                    self.opts.endpoint_url.as_deref(),
                    self.opts.attempt_timeout,
                )
            })
            .clone()
    }

    fn policy(&self) -> RetryPolicy {
        self.opts.retry.unwrap_or_default()
    }

    async fn describe(
        &self,
        region: &str,
        ids: Option<Vec<String>>,
        filter: Option<Filter>,
    ) -> Result<Vec<LiveCommitment>, CloudError> {
        let client = self.client(region);
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let page = send(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "DescribeCapacityReservations",
                || {
                    client
                        .describe_capacity_reservations()
                        .set_capacity_reservation_ids(ids.clone())
                        .set_filters(filter.clone().map(|f| vec![f]))
                        .set_next_token(next.clone())
                        .send()
                },
            )
            .await?;
            out.extend(page.capacity_reservations().iter().map(to_live));
            match page.next_token() {
                Some(t) if !t.is_empty() && next.as_deref() != Some(t) => next = Some(t.into()),
                _ => return Ok(out),
            }
        }
    }
}

fn secs(t: Option<&DateTime>) -> Option<i64> {
    t.map(DateTime::secs)
}

fn tag_specs(tags: &BTreeMap<String, String>) -> TagSpecification {
    TagSpecification::builder()
        .resource_type(ResourceType::CapacityReservation)
        .set_tags(Some(
            tags.iter()
                .map(|(k, v)| Tag::builder().key(k).value(v).build())
                .collect(),
        ))
        .build()
}

/// What the resource reports for EC2's state.
fn status(state: Option<&CapacityReservationState>) -> CommitmentStatus {
    match state.map(CapacityReservationState::as_str) {
        Some("active") => CommitmentStatus::Active,
        Some("expired") => CommitmentStatus::Expired,
        Some("cancelled" | "cancelling") => CommitmentStatus::Cancelled,
        Some("failed" | "payment-failed" | "unsupported" | "unavailable") => {
            CommitmentStatus::Failed
        }
        // scheduled, payment-pending, pending, assessing, delayed, and states EC2 adds later
        _ => CommitmentStatus::Scheduled,
    }
}

fn to_live(r: &CapacityReservation) -> LiveCommitment {
    let kind = match r.reservation_type().map(|t| t.as_str()) {
        Some("capacity-block") => CommitmentKind::AwsCapacityBlock,
        _ => CommitmentKind::AwsCapacityReservation,
    };
    LiveCommitment {
        id: r.capacity_reservation_id().unwrap_or_default().to_string(),
        kind,
        status: status(r.state()),
        cloud_state: r
            .state()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        zone: r.availability_zone().map(str::to_string),
        instance_type: r.instance_type().unwrap_or_default().to_string(),
        instance_count: r.total_instance_count().unwrap_or(0).max(0) as u32,
        start: secs(r.start_date()),
        end: secs(r.end_date()),
        tags: r
            .tags()
            .iter()
            .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or("").to_string())))
            .collect(),
        in_use: in_use(r),
        term_years: None,
        billing_plan: None,
        platform: r.instance_platform().map(|p| p.as_str().to_string()),
        match_criteria: r.instance_match_criteria().map(|c| c.as_str().to_string()),
    }
}

/// EC2 counts what a reservation (a capacity block too) holds and what is still free in
/// it: the rest runs in it.
fn in_use(r: &CapacityReservation) -> Option<CommitmentUse> {
    let total = u32::try_from(r.total_instance_count()?).ok()?;
    let available = u32::try_from(r.available_instance_count()?).ok()?;
    CommitmentUse::counted(total.saturating_sub(available), total)
}

#[async_trait]
impl CapacityBlocks for Ec2Commitments {
    async fn capacity_block_offerings(
        &self,
        q: &OfferingQuery,
    ) -> Result<Vec<CapacityBlockOffering>, CloudError> {
        let client = self.client(&q.region);
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let page = send(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "DescribeCapacityBlockOfferings",
                || {
                    client
                        .describe_capacity_block_offerings()
                        .instance_type(&q.instance_type)
                        .instance_count(q.instance_count as i32)
                        .capacity_duration_hours(q.duration_hours as i32)
                        .start_date_range(DateTime::from_secs(q.start_after))
                        .end_date_range(DateTime::from_secs(
                            q.start_before + i64::from(q.duration_hours) * 3600,
                        ))
                        .set_next_token(next.clone())
                        .send()
                },
            )
            .await?;
            for o in page.capacity_block_offerings() {
                let (Some(id), Some(start), Some(end)) = (
                    o.capacity_block_offering_id(),
                    secs(o.start_date()),
                    secs(o.end_date()),
                ) else {
                    continue;
                };
                let Some(fee) = o.upfront_fee().and_then(|f| f.trim().parse::<f64>().ok()) else {
                    continue; // unpriced: never a $0 offer
                };
                out.push(CapacityBlockOffering {
                    id: id.to_string(),
                    region: q.region.clone(),
                    zone: o.availability_zone().unwrap_or_default().to_string(),
                    instance_type: o.instance_type().unwrap_or(&q.instance_type).to_string(),
                    instance_count: o.instance_count().unwrap_or(0).max(0) as u32,
                    start,
                    end,
                    duration_hours: o
                        .capacity_block_duration_hours()
                        .map_or(q.duration_hours, |h| h.max(0) as u32),
                    upfront_fee: fee,
                    currency: o.currency_code().unwrap_or("USD").to_string(),
                    tenancy: o
                        .tenancy()
                        .map_or_else(|| "default".to_string(), |t| t.as_str().to_string()),
                });
            }
            match page.next_token() {
                Some(t) if !t.is_empty() && next.as_deref() != Some(t) => next = Some(t.into()),
                _ => return Ok(out),
            }
        }
    }
}

#[async_trait]
impl Commitments for Ec2Commitments {
    fn capacity_blocks(&self) -> Option<&dyn CapacityBlocks> {
        Some(self)
    }

    async fn purchase(
        &self,
        order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError> {
        let client = self.client(order.location());
        let reservation = match order {
            Order::CapacityBlock {
                offering_id,
                platform,
                ..
            } => send_with(
                &self.policy(),
                &self.opts.pace,
                &self.opts.cancel,
                "PurchaseCapacityBlock",
                || {
                    client
                        .purchase_capacity_block()
                        .capacity_block_offering_id(offering_id)
                        .instance_platform(CapacityReservationInstancePlatform::from(
                            platform.as_str(),
                        ))
                        .tag_specifications(tag_specs(tags))
                        .send()
                },
                verdict_if_refused,
            )
            .await?
            .capacity_reservation()
            .cloned(),
            Order::CapacityReservation {
                zone,
                instance_type,
                instance_count,
                platform,
                match_criteria,
                end,
                ..
            } => {
                // One token for every repeat of this purchase: EC2 answers a repeat with
                // the reservation the first attempt made.
                let token = fresh_token(tags.get(MARKER_TAG).map_or("gc", String::as_str));
                send(
                    &self.policy(),
                    &self.opts.pace,
                    &self.opts.cancel,
                    "CreateCapacityReservation",
                    || {
                        client
                            .create_capacity_reservation()
                            .client_token(&token)
                            .instance_type(instance_type)
                            .instance_platform(CapacityReservationInstancePlatform::from(
                                platform.as_str(),
                            ))
                            .availability_zone(zone)
                            .instance_count(*instance_count as i32)
                            .instance_match_criteria(InstanceMatchCriteria::from(
                                match_criteria.as_str(),
                            ))
                            .end_date_type(if end.is_some() {
                                EndDateType::Limited
                            } else {
                                EndDateType::Unlimited
                            })
                            .set_end_date(end.map(DateTime::from_secs))
                            .tag_specifications(tag_specs(tags))
                            .send()
                    },
                )
                .await?
                .capacity_reservation()
                .cloned()
            }
            _ => {
                return Err(CloudError::Invalid(
                    "only EC2 orders can be placed on EC2".into(),
                ));
            }
        };
        reservation.as_ref().map(to_live).ok_or_else(|| {
            CloudError::Other("EC2 answered the purchase without the capacity reservation".into())
        })
    }

    async fn get(&self, region: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError> {
        match self
            .describe(region, Some(vec![id.to_string()]), None)
            .await
        {
            Ok(list) => Ok(list.into_iter().find(|c| c.id == id)),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn find_by_marker(
        &self,
        region: &str,
        key: &str,
    ) -> Result<Vec<LiveCommitment>, CloudError> {
        let filter = Filter::builder()
            .name(format!("tag:{MARKER_TAG}"))
            .values(key)
            .build();
        self.describe(region, None, Some(filter)).await
    }

    async fn list(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        // Capacity blocks are capacity reservations too (`ReservationType`).
        self.describe(region, None, None).await
    }

    async fn cancel(&self, region: &str, id: &str) -> Result<(), CloudError> {
        let client = self.client(region);
        send(
            &self.policy(),
            &self.opts.pace,
            &self.opts.cancel,
            "CancelCapacityReservation",
            || {
                client
                    .cancel_capacity_reservation()
                    .capacity_reservation_id(id)
                    .send()
            },
        )
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_is_total_minus_available_and_unknown_without_counts() {
        let r = CapacityReservation::builder()
            .total_instance_count(4)
            .available_instance_count(1)
            .build();
        let u = in_use(&r).unwrap();
        assert_eq!((u.used_instances, u.utilization), (3, 0.75));
        let unread = CapacityReservation::builder()
            .total_instance_count(4)
            .build();
        assert_eq!(in_use(&unread), None);
    }
}
