//! The pool's `aws {}` block (EKS node groups): its settings (node role, subnets), its
//! checks on an aws pool, and the EKS node class it makes with the `reservation` block's
//! capacity reservation or capacity block.

use gpu_core::model::AwsClass;
use tfplugin::{AttributePath, Diagnostics, Tf, Value};

use crate::resources::node_pool::inputs::pool_reservation;
use crate::resources::node_pool::model::{self, PoolModel};

/// The `aws` block's settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AwsBlock {
    /// The node role, when known.
    pub node_role_arn: Option<String>,
    /// Subnets, when known and set.
    pub subnet_ids: Option<Vec<String>>,
}

/// Reads the `aws` block.
pub fn settings(v: &Value) -> AwsBlock {
    match PoolModel::of(v).aws.known() {
        None => AwsBlock::default(),
        Some(a) => AwsBlock {
            node_role_arn: model::opt(&a.node_role_arn),
            subnet_ids: model::strings(&a.subnet_ids),
        },
    }
}

/// Checks the `aws` block on an aws pool: a node role that looks like an IAM role ARN and
/// subnet ids that look like subnet ids (unknown values pass).
pub fn check(config: &Value, d: &mut Diagnostics) {
    let block = match PoolModel::of(config).aws {
        Tf::Null => {
            d.attr_error(
                AttributePath::attr("aws"),
                "Missing aws block",
                "A pool with `cloud = \"aws\"` needs `aws { node_role_arn = \"arn:aws:iam::<account>:role/<name>\" }`: EKS node groups run as an IAM role.",
            );
            return;
        }
        Tf::Unknown => return,
        Tf::Known(b) => b,
    };
    let role_path = AttributePath::attr("aws").then_attr("node_role_arn");
    match &block.node_role_arn {
        Tf::Null => d.attr_error(
            role_path,
            "Missing aws.node_role_arn",
            "`aws.node_role_arn` is required on aws: the IAM role EKS nodes run as, e.g. \"arn:aws:iam::123456789012:role/eks-node\".",
        ),
        Tf::Known(s) if !is_role_arn(s) => d.attr_error(
            role_path,
            "Invalid aws.node_role_arn",
            format!("`aws.node_role_arn` is {s:?}; it must be an IAM role ARN such as \"arn:aws:iam::123456789012:role/eks-node\"."),
        ),
        _ => {}
    }
    if let Some(ids) = block.subnet_ids.known() {
        if ids.is_empty() {
            d.attr_error(
                AttributePath::attr("aws").then_attr("subnet_ids"),
                "Empty aws.subnet_ids",
                "`aws.subnet_ids` is empty; list at least one subnet id, or leave it unset to use the cluster's subnets.",
            );
        }
        for (i, id) in ids.iter().enumerate() {
            if let Some(s) = id.known()
                && !is_subnet_id(s)
            {
                d.attr_error(
                    AttributePath::attr("aws").then_attr("subnet_ids").then_index(i as i64),
                    "Invalid subnet id",
                    format!("`aws.subnet_ids[{i}]` is {s:?}; a subnet id looks like \"subnet-0123456789abcdef0\"."),
                );
            }
        }
    }
}

/// `arn:<partition>:iam::<12 digits>:role/<path/name>`.
fn is_role_arn(s: &str) -> bool {
    let parts: Vec<&str> = s.splitn(6, ':').collect();
    parts.len() == 6
        && parts[0] == "arn"
        && parts[1].starts_with("aws")
        && parts[2] == "iam"
        && parts[3].is_empty()
        && parts[4].len() == 12
        && parts[4].chars().all(|c| c.is_ascii_digit())
        && parts[5]
            .strip_prefix("role/")
            .is_some_and(|n| !n.is_empty())
}

/// `subnet-` and 8 or 17 hex digits.
fn is_subnet_id(s: &str) -> bool {
    s.strip_prefix("subnet-")
        .is_some_and(|h| matches!(h.len(), 8 | 17) && h.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The EKS node class of pool `v`: its node role; its subnets, or the cluster's when unset;
/// the AMI type is the layout's, from `driver`.
pub fn class(v: &Value) -> AwsClass {
    let aws = settings(v);
    AwsClass {
        node_role: aws.node_role_arn.unwrap_or_default(),
        subnets: aws.subnet_ids.filter(|s| !s.is_empty()),
        ami_type: String::new(),
        capacity_reservation: capacity_reservation(v),
    }
}

/// The EC2 capacity reservation or capacity block the `reservation` block of pool `v`
/// names, when its kind is one and its id is known.
pub fn capacity_reservation(v: &Value) -> Option<gpu_core::model::Ec2Reservation> {
    use gpu_core::commitment::CommitmentKind as K;
    let r = pool_reservation(v)?;
    let capacity_block = match r.kind {
        K::AwsCapacityReservation => false,
        K::AwsCapacityBlock => true,
        _ => return None,
    };
    Some(gpu_core::model::Ec2Reservation {
        id: r.commitment_id?,
        capacity_block,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arn_and_subnet_shapes() {
        assert!(is_role_arn("arn:aws:iam::123456789012:role/eks-node"));
        assert!(is_role_arn("arn:aws-us-gov:iam::123456789012:role/a/b"));
        assert!(!is_role_arn("arn:aws:iam::123456789012:user/eks-node"));
        assert!(!is_role_arn("arn:aws:iam::1234:role/x"));
        assert!(!is_role_arn("eks-node"));
        assert!(is_subnet_id("subnet-0123456789abcdef0"));
        assert!(is_subnet_id("subnet-12345678"));
        assert!(!is_subnet_id("subnet-xyz"));
        assert!(!is_subnet_id("sg-12345678"));
    }
}
