//! AKS agent pools as data: names, one VM size per pool, one operation per cluster, the ownership tag, the labels, taints and tags AKS adds itself.

use crate::offer::Cloud;
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
};

fn aks_name_ok(n: &str) -> bool {
    (1..=12).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
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
