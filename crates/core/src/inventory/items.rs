//! A node group, a VM or a commitment as an inventory [`Item`], priced as it runs.

use std::collections::BTreeMap;

use super::price::{InstancePrice, instance_price};
use super::{Item, ItemKind};
use crate::catalog::Catalog;
use crate::commitment::usage::{idle_monthly_usd, monthly_equivalent_usd};
use crate::commitment::{CommitmentKind, LiveCommitment, MARKER_TAG, rates};
use crate::cost::HOURS_PER_MONTH;
use crate::model::CapacityType;
use crate::offer::Cloud;
use crate::seam::NodeGroup;
use crate::seam::instances::{LiveInstance, PowerState};

/// Where a node group is: its cloud, region and cluster id.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupPlace {
    /// The cloud.
    pub cloud: Cloud,
    /// The cluster's region.
    pub region: String,
    /// The cluster's id as the configuration wrote it.
    pub cluster: String,
}

fn capacity_word(c: CapacityType) -> &'static str {
    match c {
        CapacityType::OnDemand => "on_demand",
        CapacityType::Spot => "spot",
        CapacityType::Reserved => "reserved",
    }
}

/// Labels without the provider's markers (`gpu.tf/…` and the cloud's ownership tag).
fn own_labels<'a>(
    maps: impl IntoIterator<Item = &'a BTreeMap<String, String>>,
    ownership_tag: &str,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            if k != ownership_tag && !k.starts_with("gpu.tf/") {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Per hour for `nodes` at `capacity` (reserved nodes at the on-demand rate: the rate of
/// the commitment they run on is the commitment's, which the group does not name).
fn hourly(price: &InstancePrice, capacity: CapacityType, nodes: u32) -> Option<f64> {
    let per = match capacity {
        CapacityType::Spot => price.spot.or(price.on_demand),
        CapacityType::OnDemand | CapacityType::Reserved => price.on_demand,
    }?;
    Some(per * f64::from(nodes))
}

/// A node group as an item; `None` when none of its machine types has GPUs (the
/// catalog's GPU types are the test). `ownership_tag` is its cloud's marker key.
pub fn node_group_item(
    group: &NodeGroup,
    place: &GroupPlace,
    ownership_tag: &str,
    import_id: Option<String>,
    catalog: &Catalog,
) -> Option<Item> {
    let spec = &group.spec;
    let price = spec
        .machine_types
        .iter()
        .find_map(|t| instance_price(catalog, place.cloud, &place.region, t))?;
    let nodes = spec.scaling.desired.unwrap_or(spec.scaling.min);
    let hourly_usd = hourly(&price, spec.capacity, nodes);
    Some(Item {
        kind: ItemKind::NodePool,
        cloud: place.cloud,
        region: place.region.clone(),
        cluster: Some(place.cluster.clone()),
        name: spec.name.clone(),
        managed: spec.tags.contains_key(ownership_tag),
        gpu: Some(price.gpu.to_string()),
        gpu_count: Some(price.gpus),
        nodes,
        capacity: capacity_word(spec.capacity).to_string(),
        hourly_usd,
        monthly_usd: hourly_usd.map(|h| h * HOURS_PER_MONTH),
        labels: own_labels([&spec.tags, &spec.labels], ownership_tag),
        import_id,
        price_source: price.source,
        used_instances: None,
        utilization: None,
        idle_monthly_usd: None,
    })
}

/// A VM as an item: a running one is priced at its capacity's rate, a stopped one costs
/// nothing per hour (its disks are not GPU money).
pub fn instance_item(
    vm: &LiveInstance,
    cloud: Cloud,
    ownership_tag: &str,
    import_id: Option<String>,
    catalog: &Catalog,
) -> Item {
    let price = instance_price(catalog, cloud, &vm.region, &vm.machine_type);
    let running = matches!(vm.power, PowerState::Running);
    let capacity = if vm.spot {
        CapacityType::Spot
    } else {
        CapacityType::OnDemand
    };
    let hourly_usd = price
        .as_ref()
        .and_then(|p| hourly(p, capacity, u32::from(running)));
    Item {
        kind: ItemKind::Instance,
        cloud,
        region: vm.region.clone(),
        cluster: None,
        name: vm.name.clone(),
        managed: vm.labels.contains_key(ownership_tag),
        gpu: price.as_ref().map(|p| p.gpu.to_string()),
        gpu_count: price.as_ref().map(|p| p.gpus),
        nodes: u32::from(running),
        capacity: capacity_word(capacity).to_string(),
        hourly_usd,
        monthly_usd: hourly_usd.map(|h| h * HOURS_PER_MONTH),
        labels: own_labels([&vm.labels], ownership_tag),
        import_id,
        price_source: price.map(|p| p.source).unwrap_or_default(),
        used_instances: None,
        utilization: None,
        idle_monthly_usd: None,
    }
}

/// What a commitment costs a month when nothing is known but the cloud's listing: the
/// catalog's on-demand rate for reservations billed at it, the published rate for a
/// committed use discount; `None` for prices the cloud set at purchase (capacity blocks,
/// Azure reservations), with the reason.
fn listed_monthly(
    c: &LiveCommitment,
    cloud: Cloud,
    region: &str,
    price: Option<&InstancePrice>,
) -> (Option<f64>, String) {
    let count = f64::from(c.instance_count);
    match c.kind {
        CommitmentKind::AwsCapacityReservation
        | CommitmentKind::GcpReservation
        | CommitmentKind::AzureCapacityReservation => match price.and_then(|p| p.on_demand) {
            Some(od) => (
                Some(od * count * HOURS_PER_MONTH),
                format!(
                    "billed at the on-demand rate: {}",
                    price.map_or("", |p| &p.source)
                ),
            ),
            None => (None, "no on-demand price in the catalog".into()),
        },
        CommitmentKind::GcpCommitment => {
            let term = c.term_years.map(|y| format!("{y}y")).unwrap_or_default();
            let rate = rates::lookup(cloud, region, &c.instance_type, &term, "monthly");
            match rate.and_then(|r| r.usd_per_hour(price.and_then(|p| p.on_demand))) {
                Some(h) => (
                    Some(h * count * HOURS_PER_MONTH),
                    format!(
                        "committed use rate: {}",
                        rate.map_or(String::new(), |r| r.source.clone())
                    ),
                ),
                None => (None, "no published committed use rate".into()),
            }
        }
        CommitmentKind::AwsCapacityBlock => {
            (None, "the upfront fee EC2 charged is not read back".into())
        }
        CommitmentKind::AzureReservation => {
            (None, "the price Azure charged is not read back".into())
        }
    }
}

/// The import id of `gpu_commitment` for `c` in `region`.
fn commitment_import_id(c: &LiveCommitment, region: &str) -> String {
    commitment_import_id_of(c.kind, c.zone.as_deref(), region, &c.id)
}

/// The import id (`<kind>/<location>/<key>`) of the commitment of `kind` with cloud id
/// `id` in `region` (`zone` for a Compute Engine reservation): what `gpu_commitment`'s
/// import takes, from a listing or from its own state.
pub fn commitment_import_id_of(
    kind: CommitmentKind,
    zone: Option<&str>,
    region: &str,
    id: &str,
) -> String {
    let location = match (kind, zone) {
        (CommitmentKind::GcpReservation, Some(zone)) => zone,
        _ => region,
    };
    let key = match kind {
        CommitmentKind::AzureCapacityReservation => {
            // …/resourceGroups/<rg>/providers/…/capacityReservationGroups/<g>/capacityReservations/<n>
            let parts: Vec<&str> = id.split('/').collect();
            let after = |word: &str| {
                parts
                    .iter()
                    .position(|p| p.eq_ignore_ascii_case(word))
                    .and_then(|i| parts.get(i + 1))
                    .copied()
                    .unwrap_or_default()
            };
            format!(
                "{}/{}/{}",
                after("resourceGroups"),
                after("capacityReservationGroups"),
                after("capacityReservations")
            )
        }
        _ => id.to_string(),
    };
    format!("{}/{location}/{key}", kind.as_str())
}

/// A commitment as an item: `nodes` is what it reserves, and its money is its idle share
/// (what runs in it is priced with the node groups and VMs that run there).
pub fn commitment_item(c: &LiveCommitment, cloud: Cloud, region: &str, catalog: &Catalog) -> Item {
    let price = instance_price(catalog, cloud, region, &c.instance_type);
    let (monthly, source) = listed_monthly(c, cloud, region, price.as_ref());
    let equivalent = monthly_equivalent_usd(monthly, None, None, None);
    let idle = c
        .in_use
        .as_ref()
        .zip(equivalent)
        .map(|(u, m)| idle_monthly_usd(m, u));
    Item {
        kind: ItemKind::Commitment,
        cloud,
        region: region.to_string(),
        cluster: None,
        name: c.id.clone(),
        managed: c.tags.contains_key(MARKER_TAG),
        gpu: price.as_ref().map(|p| p.gpu.to_string()),
        gpu_count: price.as_ref().map(|p| p.gpus),
        nodes: c.instance_count,
        capacity: "reserved".into(),
        hourly_usd: idle.map(|m| m / HOURS_PER_MONTH),
        monthly_usd: idle,
        labels: own_labels([&c.tags], MARKER_TAG),
        import_id: Some(commitment_import_id(c, region)),
        price_source: source,
        used_instances: c.in_use.map(|u| u.used_instances),
        utilization: c.in_use.map(|u| u.utilization),
        idle_monthly_usd: idle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commitment::{CommitmentStatus, CommitmentUse};

    fn reservation(kind: CommitmentKind, id: &str) -> LiveCommitment {
        LiveCommitment {
            id: id.into(),
            kind,
            status: CommitmentStatus::Active,
            cloud_state: "READY".into(),
            zone: Some("us-central1-b".into()),
            instance_type: "a3-highgpu-8g".into(),
            instance_count: 4,
            start: None,
            end: None,
            tags: [(MARKER_TAG, "gpu-tf-1"), ("team", "ml")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            in_use: CommitmentUse::counted(1, 4),
            term_years: Some(1),
            billing_plan: None,
            platform: None,
            match_criteria: None,
        }
    }

    #[test]
    fn a_reservation_bills_only_its_idle_share_at_the_on_demand_rate() {
        let c = reservation(CommitmentKind::GcpReservation, "gpu-tf-1");
        let item = commitment_item(&c, Cloud::Gcp, "us-central1", Catalog::embedded());
        let od = instance_price(
            Catalog::embedded(),
            Cloud::Gcp,
            "us-central1",
            "a3-highgpu-8g",
        )
        .unwrap()
        .on_demand
        .unwrap();
        let idle = od * 4.0 * HOURS_PER_MONTH * 0.75;
        assert!((item.monthly_usd.unwrap() - idle).abs() < 1e-6, "{item:?}");
        assert_eq!(item.monthly_usd, item.idle_monthly_usd);
        assert_eq!((item.nodes, item.used_instances), (4, Some(1)));
        assert!(item.managed);
        assert_eq!(item.labels.get("team").map(String::as_str), Some("ml"));
        assert!(!item.labels.contains_key(MARKER_TAG));
        assert_eq!(
            item.import_id.as_deref(),
            Some("gcp_reservation/us-central1-b/gpu-tf-1")
        );
    }

    #[test]
    fn use_unknown_or_price_unknown_is_null_money_never_zero() {
        let mut c = reservation(CommitmentKind::GcpReservation, "r");
        c.in_use = None;
        let item = commitment_item(&c, Cloud::Gcp, "us-central1", Catalog::embedded());
        assert_eq!((item.monthly_usd, item.idle_monthly_usd), (None, None));
        let mut block = reservation(CommitmentKind::AwsCapacityBlock, "cr-1");
        block.instance_type = "p5.48xlarge".into();
        let item = commitment_item(&block, Cloud::Aws, "us-east-1", Catalog::embedded());
        assert_eq!(item.monthly_usd, None);
        assert!(item.price_source.contains("not read back"));
        assert_eq!(
            item.import_id.as_deref(),
            Some("aws_capacity_block/us-east-1/cr-1")
        );
    }

    #[test]
    fn an_azure_capacity_reservation_imports_by_group_path() {
        let mut c = reservation(
            CommitmentKind::AzureCapacityReservation,
            "/subscriptions/s/resourceGroups/rg-gpu/providers/Microsoft.Compute/capacityReservationGroups/g1/capacityReservations/r1",
        );
        c.zone = Some("1".into());
        let item = commitment_item(&c, Cloud::Azure, "eastus", Catalog::embedded());
        assert_eq!(
            item.import_id.as_deref(),
            Some("azure_capacity_reservation/eastus/rg-gpu/g1/r1")
        );
    }
}
