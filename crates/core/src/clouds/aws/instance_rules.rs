//! EC2 instances as data: zones (`<region><letter>`), the largest gp3 boot disk, user
//! data, AMI ids, the `Name` tag, the `aws {}` block (subnet, security groups, key pair),
//! and the instance id an import names.

use crate::offer::Cloud;
use crate::seam::instance_rules::{InstanceBlocks, InstanceRules, RuleProblems};
use crate::seam::instances::{InstanceClass, MARKER_TAG};

/// EC2 instances.
pub static EC2: InstanceRules = InstanceRules {
    cloud: Cloud::Aws,
    max_disk_gb: 16384,
    labels_are_pool_tags: true,
    user_data_limit: 16 * 1024,
    user_data_rule: "EC2 takes at most 16 KB of user data",
    image_shapes: "an AMI id, `ami-` and 8 or 17 hex digits",
    marker: MARKER_TAG,
    name_tag: Some("Name"),
    zone_problem,
    label_problem: |_, _| None, // AWS tags: the node pool's tag rules
    image_ok: is_ami_id,
    class,
};

/// An availability zone is the region and one letter: `us-east-1a`.
fn zone_problem(region: &str, zone: Option<&str>) -> Option<String> {
    let z = zone?;
    let suffix = z.strip_prefix(region);
    (!suffix.is_some_and(|s| s.len() == 1 && s.chars().all(|c| c.is_ascii_lowercase())))
        .then(|| format!("{z:?} is not a zone of region {region:?}; e.g. \"{region}a\""))
}

/// `ami-` and 8 to 17 hex digits.
fn is_ami_id(i: &str) -> bool {
    i.strip_prefix("ami-")
        .is_some_and(|h| (8..=17).contains(&h.len()) && h.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The `aws` block: a subnet id and security group ids of their shapes.
fn class(b: &InstanceBlocks<'_>, p: &mut RuleProblems) -> InstanceClass {
    let a = b.aws.cloned().unwrap_or_default();
    if let Some(s) = &a.subnet_id
        && !s.trim().starts_with("subnet-")
    {
        p.push((
            "aws.subnet_id".into(),
            format!("{s:?} is not a subnet id (`subnet-…`)"),
        ));
    }
    for (i, g) in a.security_group_ids.iter().enumerate() {
        if !g.trim().starts_with("sg-") {
            p.push((
                format!("aws.security_group_ids[{i}]"),
                format!("{g:?} is not a security group id (`sg-…`)"),
            ));
        }
    }
    InstanceClass::Aws {
        subnet_id: a.subnet_id.map(|s| s.trim().to_string()),
        security_group_ids: a
            .security_group_ids
            .iter()
            .map(|s| s.trim().to_string())
            .collect(),
        key_name: a.key_name,
    }
}

/// How an EC2 instance id looks, for messages.
pub const INSTANCE_ID_TEXT: &str = "an EC2 instance id (`i-` and hex digits)";

/// Whether `s` is an EC2 instance id: `i-` and hex digits.
pub fn is_instance_id(s: &str) -> bool {
    let hex = s.strip_prefix("i-").unwrap_or("");
    !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_images_and_instance_ids() {
        assert_eq!(EC2.zone_problem("us-east-1", Some("us-east-1a")), None);
        assert_eq!(EC2.zone_problem("us-east-1", None), None);
        assert!(
            EC2.zone_problem("us-east-1", Some("us-east-1-a"))
                .is_some_and(|p| p.contains("\"us-east-1a\""))
        );
        assert!(EC2.image_ok("ami-0123456789abcdef0"));
        assert!(!EC2.image_ok("ami-xyz"));
        assert!(is_instance_id("i-0123abcd"));
        assert!(!is_instance_id("i-"));
        assert!(!is_instance_id("vol-0123"));
    }
}
