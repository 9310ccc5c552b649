//! EKS managed node groups as data: names, types per group, the ownership tag, the tags AWS adds itself.

use crate::offer::Cloud;
use crate::seam::CloudTraits;

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
};

fn eks_name_ok(n: &str) -> bool {
    (1..=63).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_alphanumeric())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
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
