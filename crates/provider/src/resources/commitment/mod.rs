//! `gpu_commitment`: buys a capacity block or a capacity reservation (AWS today), shows
//! its money and break-even in the plan, reads its status live, and never buys or gives one
//! up by accident. `schema` and the raw config here; `cloud_blocks` (each cloud's block and
//! orders), `plan`, `apply` (apply and read), `model` (the typed values) and `resource`
//! beside.

pub mod apply;
pub mod cloud_blocks;
pub mod import;
pub mod model;
pub mod plan;
pub mod resource;
#[cfg(test)]
mod tests;
pub mod usage;

use std::collections::BTreeMap;

use crate::model_values::{opt, text, whole};
use gpu_core::commitment::CommitmentConfig;
use model::CommitmentModel;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Schema, Type, Value};

/// The resource's type name.
pub const TYPE_NAME: &str = "gpu_commitment";

/// What commitments need of the provider block.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `allow_commitment_purchase`.
    pub allow_purchase: bool,
    /// `default_labels`: tags on every commitment, under its own `tags`.
    pub default_labels: BTreeMap<String, String>,
    /// The clouds' sessions (credentials, endpoints, retries) with this operation's stop
    /// signal.
    pub clouds: crate::clouds::Clouds,
}

/// Attributes whose change would need a new purchase (compared by meaning).
pub const FIXED: &[&str] = &[
    "kind",
    "region",
    "zone",
    "gpu",
    "gpu_count",
    "instance_type",
    "instance_count",
    "duration_hours",
    "start_after",
    "start_before",
    "term",
    "billing",
    "end",
    "tags",
    "aws",
    "azure",
];

/// The schema of `gpu_commitment`.
pub fn schema() -> Schema {
    let money = |n: &str, d: &str| Attribute::computed(n, Type::Number).describe(d);
    Schema::new(
        Block::new(include_str!("description.md"))
            .attribute(Attribute::computed("id", Type::String).describe("The commitment's id in its cloud (EC2: the capacity reservation id `cr-…`; Compute Engine: the reservation's or commitment's name), known after apply."))
            .attribute(Attribute::required("kind", Type::String).describe("What to buy: `aws_capacity_block` (EC2 Capacity Blocks for ML, paid up front, cannot be cancelled), `aws_capacity_reservation` (an EC2 On-Demand Capacity Reservation, billed at the on-demand rate until cancelled), `gcp_reservation` (a Compute Engine zonal reservation, billed at the on-demand rate until deleted), `gcp_commitment` (a Compute Engine committed use discount, 1 or 3 years, cannot be cancelled). `azure_reservation` (Azure reserved VM instances, 1 or 3 years, cannot be cancelled), `azure_capacity_reservation` (an Azure capacity reservation, at the pay-as-you-go rate until deleted)."))
            .attribute(Attribute::required("region", Type::String).describe("Region to commit in, e.g. `us-east-1`."))
            .attribute(Attribute::optional_computed("zone", Type::String).describe("Zone: required for `aws_capacity_reservation` and `gcp_reservation`, optional for `azure_capacity_reservation` (`1`, `2` or `3`); for `aws_capacity_block` it limits the offerings to one zone, and is otherwise the zone of the offering chosen."))
            .attribute(Attribute::optional("gpu", Type::String).describe("GPU model (any alias: `h100`, `NVIDIA H100`). The catalog's instance types with it in `region` are candidates; set this or `instance_type`."))
            .attribute(Attribute::optional("gpu_count", Type::Number).describe("GPUs per instance, with `gpu` (default: any)."))
            .attribute(Attribute::optional_computed("instance_type", Type::String).describe("Instance type, e.g. `p5.48xlarge`; when `gpu` is set instead, the type chosen (for a capacity block the type of the cheapest offering per GPU-hour, for a reservation the cheapest on-demand type per GPU-hour)."))
            .attribute(Attribute::required("instance_count", Type::Number).describe("Instances to commit to, 1 to 64. (Named `instance_count` because `count` is a Terraform meta-argument.)"))
            .attribute(Attribute::optional("duration_hours", Type::Number).describe("`aws_capacity_block`: its length, 24 to 336 hours in whole days, or up to 4368 hours (182 days) in whole weeks."))
            .attribute(Attribute::optional("start_after", Type::String).describe("`aws_capacity_block`: the earliest start (RFC 3339 or a date); default now."))
            .attribute(Attribute::optional("start_before", Type::String).describe("`aws_capacity_block`: the latest start (RFC 3339 or a date), at most 8 weeks ahead; default 8 weeks from now."))
            .attribute(Attribute::optional("term", Type::String).describe("`gcp_commitment` and `azure_reservation`: `1y` or `3y`."))
            .attribute(Attribute::optional("billing", Type::String).describe("`azure_reservation`: `upfront` or `monthly` (default). `gcp_commitment` is billed monthly: `monthly` or unset."))
            .attribute(Attribute::optional_computed("end", Type::String).describe("`aws_capacity_reservation`: an end date (RFC 3339 or a date), default none (until cancelled). `aws_capacity_block`: the end of the offering chosen."))
            .attribute(Attribute::optional("on_destroy", Type::String).describe("What `terraform destroy` does: `cancel` (the default for cancellable kinds: `aws_capacity_reservation`) or `forget` (leave it in the cloud, where it keeps billing, and drop it from state). A non-cancellable kind (`aws_capacity_block`) refuses to be destroyed unless this is `forget`. Changing it is an update of state only."))
            .attribute(Attribute::optional("tags", Type::map(Type::String)).describe("Cloud tags, over the provider's `default_labels`. The provider adds `gpu.tf/commitment`, the key that finds a purchase again after a lost answer."))
            .attribute(Attribute::computed("offering_id", Type::String).describe("`aws_capacity_block`: the offering bought (chosen at plan: the cheapest per GPU-hour in the window). Apply buys exactly this offering or fails."))
            .attribute(Attribute::computed("start", Type::String).describe("When the commitment starts (capacity blocks: the offering's start; reservations: when bought, after apply)."))
            .attribute(Attribute::computed("gpus", Type::Number).describe("GPUs committed: instances × GPUs per instance."))
            .attribute(money("upfront_usd", "Paid at purchase, USD."))
            .attribute(money("hourly_usd", "Recurring charge per hour, USD (0 for a capacity block, paid up front; null when the catalog has no on-demand price)."))
            .attribute(money("monthly_usd", "Recurring charge per month (730 hours), USD."))
            .attribute(money("total_usd", "The whole term, USD: up front plus the recurring charge to the end; null for an open-ended reservation."))
            .attribute(money("effective_usd_per_gpu_hour", "What one committed GPU-hour costs, USD."))
            .attribute(money("on_demand_usd_per_gpu_hour", "The same GPUs on demand in the same region, USD per GPU-hour (the catalog's; null when it has none)."))
            .attribute(money("break_even_utilization", "Share of committed hours that must be used for the commitment to cost less than on demand: effective ÷ on-demand (1 for a reservation at the on-demand rate)."))
            .attribute(Attribute::computed("price_source", Type::String).describe("Where the prices came from: the offering (EC2 `DescribeCapacityBlockOfferings`) and the catalog row of the on-demand price, with its date."))
            .attribute(Attribute::computed("commitment_id", Type::String).describe("The commitment's id in its cloud, after apply."))
            .attribute(Attribute::computed("used_instances", Type::Number).describe("Read live: instances running in the commitment (EC2: total minus available instances; Compute Engine: the reservations' `inUseCount`; Azure capacity reservation: VMs allocated; Azure reservation: its utilization share of `instance_count`, rounded). Null where the cloud cannot say (a Compute Engine commitment without a reservation, an Azure reservation not measured yet)."))
            .attribute(money("utilization", "Read live: share of the commitment in use, 0 to 1 (Azure reservations: the shortest-grain utilization Azure reports, a daily figure). Null where the cloud cannot say. A plan warns when an active commitment was under 0.5 at the last refresh."))
            .attribute(money("idle_monthly_usd", "What the unused share costs a month, USD: `(1 - utilization)` × the monthly equivalent (`monthly_usd` when nothing is paid up front, else `effective_usd_per_gpu_hour × gpus × 730`). Null when `utilization` is."))
            .attribute(Attribute::computed("status", Type::String).describe("Read live: `scheduled` (bought, not started, or being paid), `active`, `expired`, `cancelled`, `failed`. A commitment the cloud no longer lists is `expired` when its end has passed, else `cancelled`."))
            .block(cloud_blocks::aws::block())
            .block(cloud_blocks::azure::block()),
    )
}

/// The core's raw config from a resource value (config, plan or state).
pub fn core_config(v: &Value) -> CommitmentConfig {
    let m = CommitmentModel::of(v);
    CommitmentConfig {
        kind: text(&m.kind),
        region: text(&m.region),
        zone: opt(&m.zone),
        gpu: opt(&m.gpu),
        gpu_count: whole(&m.gpu_count),
        instance_type: opt(&m.instance_type),
        instance_count: whole(&m.instance_count).unwrap_or(0),
        duration_hours: whole(&m.duration_hours),
        start_after: opt(&m.start_after),
        start_before: opt(&m.start_before),
        term: opt(&m.term),
        billing: opt(&m.billing),
        end: opt(&m.end),
        on_destroy: opt(&m.on_destroy),
    }
}

/// `tags` over `default_labels`.
pub fn tags(v: &Value, settings: &Settings) -> BTreeMap<String, String> {
    let mut all = settings.default_labels.clone();
    if let Some(m) = CommitmentModel::of(v).tags.into_known() {
        for (k, val) in m {
            if let Some(s) = val.into_known() {
                all.insert(k, s);
            }
        }
    }
    all
}
