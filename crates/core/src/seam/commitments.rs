//! The seam for commitments: the [`Commitments`] trait each cloud's driver implements
//! (offerings, purchase, read, find by marker, cancel) and the neutral types it speaks.
//! Buying safely through it (never twice) is `commitment::purchase_once`.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::CloudError;
use super::commitment_kind::CommitmentKind;

/// The tag (label) key every commitment we buy carries; its value is the purchase's key.
pub const MARKER_TAG: &str = "gpu.tf/commitment";

/// What to look for in capacity-block offerings.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferingQuery {
    /// Region.
    pub region: String,
    /// Instance type.
    pub instance_type: String,
    /// Instances.
    pub instance_count: u32,
    /// Length in hours.
    pub duration_hours: u32,
    /// Earliest start, unix seconds.
    pub start_after: i64,
    /// Latest start, unix seconds.
    pub start_before: i64,
}

/// One capacity block a cloud offers.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityBlockOffering {
    /// The offering's id (what a purchase names).
    pub id: String,
    /// Region asked.
    pub region: String,
    /// Zone.
    pub zone: String,
    /// Instance type.
    pub instance_type: String,
    /// Instances.
    pub instance_count: u32,
    /// Start, unix seconds.
    pub start: i64,
    /// End, unix seconds.
    pub end: i64,
    /// Length in hours.
    pub duration_hours: u32,
    /// Price of the whole block.
    pub upfront_fee: f64,
    /// Currency of the fee (`USD`).
    pub currency: String,
    /// `default` or `dedicated`.
    pub tenancy: String,
}

/// What to buy.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    /// A capacity block offering, by id.
    CapacityBlock {
        /// Region of the offering.
        region: String,
        /// The offering.
        offering_id: String,
        /// Platform of the instances (`Linux/UNIX`).
        platform: String,
    },
    /// An on-demand capacity reservation.
    CapacityReservation {
        /// Region.
        region: String,
        /// Zone.
        zone: String,
        /// Instance type.
        instance_type: String,
        /// Instances.
        instance_count: u32,
        /// Platform of the instances (`Linux/UNIX`).
        platform: String,
        /// `open` (any matching instance uses it) or `targeted`.
        match_criteria: String,
        /// End, unix seconds (none: until cancelled).
        end: Option<i64>,
    },
    /// A Compute Engine zonal reservation (named: the name is the purchase's marker).
    GcpReservation {
        /// Zone.
        zone: String,
        /// Reservation name.
        name: String,
        /// Machine type.
        machine_type: String,
        /// Instances.
        count: u32,
        /// Attached accelerators (GKE/Compute type, count), none for machine types that
        /// carry theirs (A3, A2, G2).
        accelerator: Option<(String, u32)>,
    },
    /// A Compute Engine regional committed use discount (named likewise).
    GcpCommitment {
        /// Region.
        region: String,
        /// Commitment name.
        name: String,
        /// `TWELVE_MONTH` or `THIRTY_SIX_MONTH`.
        plan: String,
        /// Commitment type, e.g. `ACCELERATOR_OPTIMIZED_A3`.
        commitment_type: String,
        /// vCPUs committed.
        vcpus: u32,
        /// Memory committed, MB.
        memory_mb: u64,
        /// Accelerators committed (type, count).
        accelerator: Option<(String, u32)>,
        /// The reservation a GPU commitment attaches (Compute requires one): zone,
        /// machine type, instances.
        reservation: Option<(String, String, u32)>,
    },
    /// An Azure reserved VM instance order, priced first (`calculatePrice` hands out the
    /// order id, which is the purchase's marker).
    AzureReservation {
        /// Region.
        location: String,
        /// VM size.
        sku: String,
        /// `P1Y` or `P3Y`.
        term: String,
        /// `Upfront` or `Monthly`.
        billing_plan: String,
        /// Instances.
        quantity: u32,
        /// Display name.
        display_name: String,
        /// The order id the price quote gave (empty before it is priced).
        order_id: String,
    },
    /// An Azure capacity reservation: a group holding one reservation, both named.
    AzureCapacityReservation {
        /// Region.
        location: String,
        /// Resource group of the group.
        resource_group: String,
        /// Capacity reservation group name.
        group: String,
        /// Capacity reservation name.
        name: String,
        /// VM size.
        sku: String,
        /// Instances.
        capacity: u32,
        /// Availability zone (`1`, `2`, `3`), if zonal.
        zone: Option<String>,
    },
}

/// A price a cloud quoted for an order before it is placed.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceQuote {
    /// The quote's id (Azure: the reservation order id to buy with).
    pub id: String,
    /// The whole term's price.
    pub total: f64,
    /// Its currency (`USD`).
    pub currency: String,
}

impl Order {
    /// Where the order is placed and found again: the region, or the zone of a zonal
    /// reservation on clouds that address reservations by zone.
    pub fn location(&self) -> &str {
        match self {
            Order::CapacityBlock { region, .. }
            | Order::CapacityReservation { region, .. }
            | Order::GcpCommitment { region, .. } => region,
            Order::GcpReservation { zone, .. } => zone,
            Order::AzureReservation { location, .. }
            | Order::AzureCapacityReservation { location, .. } => location,
        }
    }
}

/// A commitment's state, as the resource reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitmentStatus {
    /// Bought, not started yet (or being paid for / assessed).
    Scheduled,
    /// In force.
    Active,
    /// Its term ended.
    Expired,
    /// Cancelled.
    Cancelled,
    /// The cloud failed it (payment, capacity).
    Failed,
}

impl CommitmentStatus {
    /// The word the resource's `status` holds.
    pub fn as_str(self) -> &'static str {
        match self {
            CommitmentStatus::Scheduled => "scheduled",
            CommitmentStatus::Active => "active",
            CommitmentStatus::Expired => "expired",
            CommitmentStatus::Cancelled => "cancelled",
            CommitmentStatus::Failed => "failed",
        }
    }

    /// Whether it still holds (or will hold) capacity.
    pub fn live(self) -> bool {
        matches!(self, CommitmentStatus::Scheduled | CommitmentStatus::Active)
    }
}

/// A commitment as the cloud reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveCommitment {
    /// The cloud's id (`cr-…`).
    pub id: String,
    /// Its kind.
    pub kind: CommitmentKind,
    /// Status.
    pub status: CommitmentStatus,
    /// The cloud's own word for the state (`payment-pending`, …).
    pub cloud_state: String,
    /// Zone, if zonal.
    pub zone: Option<String>,
    /// Instance type.
    pub instance_type: String,
    /// Instances.
    pub instance_count: u32,
    /// Start, unix seconds, if known.
    pub start: Option<i64>,
    /// End, unix seconds, if it has one.
    pub end: Option<i64>,
    /// Tags / labels.
    pub tags: BTreeMap<String, String>,
    /// How much of it is in use, as the cloud reports it; `None` where the cloud cannot
    /// say (never a zero it did not measure).
    pub in_use: Option<CommitmentUse>,
    /// Its term in years, for kinds bought for a term (committed use, Azure reservations).
    pub term_years: Option<u32>,
    /// How it is paid, lower-case (`upfront`, `monthly`), where the cloud says.
    pub billing_plan: Option<String>,
    /// The platform of the instances it holds (EC2 `Linux/UNIX`, …), where the cloud says.
    pub platform: Option<String>,
    /// Which instances may use it (EC2 `open` or `targeted`), where the cloud says.
    pub match_criteria: Option<String>,
}

/// How much of a commitment runs: the instances in it and their share of what it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommitmentUse {
    /// Instances running in it.
    pub used_instances: u32,
    /// Share of it in use, 0 to 1.
    pub utilization: f64,
}

impl CommitmentUse {
    /// `used` of `held` instances in use; `None` when it holds none (no share to give).
    pub fn counted(used: u32, held: u32) -> Option<Self> {
        (held > 0).then(|| CommitmentUse {
            used_instances: used.min(held),
            utilization: f64::from(used.min(held)) / f64::from(held),
        })
    }

    /// A share the cloud measured as a percentage (Azure reservations) of `held`
    /// instances; the instance count is that share of them, rounded.
    pub fn from_percent(percent: f64, held: u32) -> Option<Self> {
        if !percent.is_finite() || percent < 0.0 {
            return None;
        }
        let utilization = (percent / 100.0).min(1.0);
        Some(CommitmentUse {
            used_instances: (utilization * f64::from(held)).round() as u32,
            utilization,
        })
    }
}

/// Capacity blocks on offer: a capability only some clouds have (EC2 Capacity Blocks for
/// ML). A driver without it does not implement it ([`Commitments::capacity_blocks`]).
#[async_trait]
pub trait CapacityBlocks: Send + Sync {
    /// Capacity-block offerings matching `q` (read-only; a price call).
    async fn capacity_block_offerings(
        &self,
        q: &OfferingQuery,
    ) -> Result<Vec<CapacityBlockOffering>, CloudError>;
}

/// The capacity-block offerings of `store`'s cloud matching `q`; invalid where the cloud
/// sells no capacity blocks.
pub async fn capacity_block_offerings(
    store: &dyn Commitments,
    q: &OfferingQuery,
) -> Result<Vec<CapacityBlockOffering>, CloudError> {
    match store.capacity_blocks() {
        Some(blocks) => blocks.capacity_block_offerings(q).await,
        None => Err(CloudError::Invalid(
            "this cloud sells no capacity blocks (an EC2 product)".into(),
        )),
    }
}

/// One cloud's commitments: the seam each cloud's driver implements.
#[async_trait]
pub trait Commitments: Send + Sync {
    /// Capacity blocks on offer, where the cloud sells them (EC2); `None` elsewhere.
    fn capacity_blocks(&self) -> Option<&dyn CapacityBlocks> {
        None
    }

    /// The cloud's own price of `order` before it is placed, where it has a read-only
    /// price call (Azure `calculatePrice`); `None` where it has none.
    async fn quote(&self, _order: &Order) -> Result<Option<PriceQuote>, CloudError> {
        Ok(None)
    }

    /// Places `order`, marked with `tags` (which include [`MARKER_TAG`]). Not idempotent
    /// by itself: call it through `commitment::purchase_once`.
    async fn purchase(
        &self,
        order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError>;

    /// The commitment `id` at `location` (a region, or a zone where the cloud addresses
    /// the kind by zone), `None` when the cloud no longer knows it.
    async fn get(&self, location: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError>;

    /// Every commitment at `location` marked `key` ([`MARKER_TAG`], or the name on clouds
    /// without tags on commitments), in any state.
    async fn find_by_marker(
        &self,
        region: &str,
        key: &str,
    ) -> Result<Vec<LiveCommitment>, CloudError>;

    /// Cancels `id` (a cancellable kind).
    async fn cancel(&self, region: &str, id: &str) -> Result<(), CloudError>;

    /// Every commitment in `region` (its zones included) that the credentials can read,
    /// bought by anyone, in any state. Read-only: what an inventory lists.
    async fn list(&self, region: &str) -> Result<Vec<LiveCommitment>, CloudError>;
}
