//! AKS agent pools as data: names, one VM size per pool, one operation per cluster, the ownership tag, the labels, taints and tags AKS adds itself.

use crate::model::NodeClass;
use crate::offer::Cloud;
use crate::seam::cluster::{BadClusterRef, ClusterRef, is_guid};
use crate::seam::traits::{FixedField, GroupNaming, fixed_set};
use crate::seam::{CloudError, CloudTraits};

/// AKS agent pools.
pub static AKS: CloudTraits = CloudTraits {
    cloud: Cloud::Azure,
    service: "AKS",
    noun: "agent pool",
    name_rule: "1-12 lowercase letters and digits, starting with a letter",
    max_name_len: 12,
    machine_types_per_group: 1,
    serial_operations: true,
    scaling_per_zone: false,
    stop_on_reclaim: true,
    ownership_tag: "gpu-tf-pool",
    system_label_prefixes: &["kubernetes.azure.com/"],
    system_taint_prefixes: &["kubernetes.azure.com/"],
    system_tag_prefixes: &["aks-managed-"],
    name_ok: aks_name_ok,
    marker_of: str::to_string,
    failed: CloudError::failed_group,
    naming: GroupNaming::Opaque { hash_len: 10 },
    images: &[],
    fixed: fixed_fields,
};

fn aks_name_ok(n: &str) -> bool {
    (1..=12).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// What an AKS agent pool cannot change in place: OS SKU, GPU driver, subnet, zones, capacity reservation group, spot eviction policy.
fn fixed_fields(class: &NodeClass) -> Vec<FixedField> {
    let NodeClass::Azure(c) = class else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.push(("os sku", Some(c.os_sku.clone())));
    out.push(("gpu driver", Some(c.gpu_driver.clone())));
    out.push(("subnet", c.subnet.clone()));
    out.push(("zones", Some(fixed_set(c.zones.iter().cloned()))));
    // Set when a pool is added; changing it makes a new pool, never an update.
    out.push((
        "capacity reservation group",
        c.capacity_reservation_group.clone(),
    ));
    out.push((
        "spot eviction",
        Some(
            if c.deallocate_evicted {
                "Deallocate"
            } else {
                "Delete"
            }
            .into(),
        ),
    ));
    out
}

/// Whether `id` is an Azure capacity reservation's ARM id (for a reservation order, any
/// id that is not empty).
pub fn is_commitment_id(kind: crate::seam::commitment_kind::CommitmentKind, id: &str) -> bool {
    use crate::seam::commitment_kind::CommitmentKind as K;
    if kind != K::AzureCapacityReservation {
        return !id.is_empty();
    }
    let lower = id.to_ascii_lowercase();
    lower.starts_with("/subscriptions/")
        && lower.contains("/providers/microsoft.compute/capacityreservationgroups/")
        && lower.contains("/capacityreservations/")
}

/// How an AKS cluster's ARM id looks, for messages.
pub const AKS_SHAPE: &str = "/subscriptions/<subscription>/resourceGroups/<resource-group>/providers/Microsoft.ContainerService/managedClusters/<name>";

/// Reads `id` as an AKS cluster's ARM id (path segment names in any letter case, as ARM
/// treats them).
pub fn parse_cluster(id: &str) -> Result<ClusterRef, BadClusterRef> {
    let bad = |why: &str| {
        BadClusterRef(format!(
            "{id:?} is not an AKS cluster id{why}; it looks like \"{AKS_SHAPE}\""
        ))
    };
    let parts: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    let [s, sub, rg_kw, rg, p, ns, mc, name] = parts.as_slice() else {
        return Err(bad(""));
    };
    let is = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if !(is(s, "subscriptions")
        && is(rg_kw, "resourceGroups")
        && is(p, "providers")
        && is(ns, "Microsoft.ContainerService")
        && is(mc, "managedClusters"))
    {
        return Err(bad(""));
    }
    if !is_guid(sub) {
        return Err(bad(" (the subscription must be a GUID)"));
    }
    if rg.is_empty() || name.is_empty() {
        return Err(bad(" (empty resource group or name)"));
    }
    Ok(ClusterRef::Aks {
        subscription: sub.to_ascii_lowercase(),
        resource_group: rg.to_string(),
        name: name.to_string(),
    })
}

/// An AKS cluster's ARM id, its segment names spelled as ARM does.
pub fn cluster_id(subscription: &str, resource_group: &str, name: &str) -> String {
    format!(
        "/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/Microsoft.ContainerService/managedClusters/{name}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aks_names_and_marker() {
        assert!(AKS.name_ok("gs0123456789"));
        assert!(!AKS.name_ok("gs01234567890"), "13 characters");
        assert!(!AKS.name_ok("train-od"), "no '-' in AKS pool names");
        assert!(!AKS.name_ok("1abc"));
        // Azure tag names may not hold '/'.
        assert!(!AKS.ownership_tag.contains('/'));
        assert_eq!(AKS.marker_value("Train.A"), "Train.A");
    }
}
