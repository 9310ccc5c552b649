//! EKS managed node groups as data: names, types per group, the ownership tag, the tags AWS adds itself.

use crate::model::{DriverPolicy, NodeClass};
use crate::offer::Cloud;
use crate::seam::CloudTraits;
use crate::seam::cluster::{BadClusterRef, ClusterRef};
use crate::seam::traits::{FixedField, GroupNaming, fixed_set};

/// EKS managed node groups.
pub static EKS: CloudTraits = CloudTraits {
    cloud: Cloud::Aws,
    service: "EKS",
    noun: "node group",
    name_rule: "1-63 letters, digits, '-' and '_', starting with a letter or digit",
    max_name_len: 63,
    machine_types_per_group: 20,
    serial_operations: false,
    scaling_per_zone: false,
    stop_on_reclaim: false,
    ownership_tag: "gpu.tf/pool",
    system_label_prefixes: &[],
    system_taint_prefixes: &[],
    system_tag_prefixes: &["aws:"],
    name_ok: eks_name_ok,
    marker_of: str::to_string,
    failed: super::codes::failed_group,
    naming: GroupNaming::Suffixed,
    images: &[
        (DriverPolicy::Al2023Nvidia, "AL2023_x86_64_NVIDIA"),
        (
            DriverPolicy::BottlerocketNvidia,
            "BOTTLEROCKET_x86_64_NVIDIA",
        ),
    ],
    fixed: fixed_fields,
};

fn eks_name_ok(n: &str) -> bool {
    (1..=63).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_alphanumeric())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What an EKS node group cannot change in place: AMI type, node role, the capacity reservation of its launch template, subnets.
fn fixed_fields(class: &NodeClass) -> Vec<FixedField> {
    let NodeClass::Aws(c) = class else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.push(("image", Some(c.ami_type.clone())));
    out.push(("node role", Some(c.node_role.clone())));
    // A launch template is fixed when the group is created.
    out.push((
        "capacity reservation",
        c.capacity_reservation.as_ref().map(|r| {
            let kind = if r.capacity_block { "block" } else { "odcr" };
            format!("{kind} {}", r.id)
        }),
    ));
    out.push((
        "subnets",
        c.subnets.as_ref().map(|s| fixed_set(s.iter().cloned())),
    ));
    out
}

/// Whether `id` is an EC2 capacity reservation id (`cr-` and hex digits), which capacity
/// blocks have too.
pub fn is_commitment_id(_kind: crate::seam::commitment_kind::CommitmentKind, id: &str) -> bool {
    id.len() > 3 && id.starts_with("cr-") && id[3..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads `id` as an EKS cluster name for a pool in `region`.
pub fn parse_cluster(region: &str, id: &str) -> Result<ClusterRef, BadClusterRef> {
    let ok = id.len() <= 100
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        let hint = if id.starts_with("arn:") {
            " (give the cluster's name, not its ARN)"
        } else if id.contains('/') {
            " (that looks like another cloud's cluster id)"
        } else {
            ""
        };
        return Err(BadClusterRef(format!(
            "{id:?} is not an EKS cluster name: 1–100 letters, digits, `-` or `_`, starting with a letter or digit{hint}"
        )));
    }
    Ok(ClusterRef::Eks {
        region: region.to_string(),
        name: id.to_string(),
    })
}

/// An EKS cluster's own id: its name.
pub fn cluster_id(name: &str) -> String {
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eks_names() {
        assert!(EKS.name_ok("train-spot-k3x9"));
        assert!(EKS.name_ok("Train_1"));
        assert!(!EKS.name_ok(&"a".repeat(64)));
        assert!(!EKS.name_ok("-x"));
        assert_eq!(EKS.marker_value("Train.A"), "Train.A");
    }
}
