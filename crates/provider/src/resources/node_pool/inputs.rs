//! Reading a `gpu_node_pool` object (config, plan or state) into typed inputs, and
//! finding the inputs that must be known at plan time.

use gpu_core::model::{AwsClass, NodeClass};
use gpu_core::offer::Cloud;
use gpu_core::pool::{NodePoolConfig, ReservationConfig, TaintConfig, reconcile::Timeouts};
use tfplugin::{AttributePath, Diagnostics, Tf, Value};

use super::model::{self, PoolModel};

/// Inputs the cost preview needs, which therefore must be known when planning.
pub const COST_INPUTS: [&str; 6] = [
    "cloud",
    "region",
    "gpu",
    "gpu_count",
    "min_nodes",
    "max_nodes",
];

/// The string at `name`, or `""` when null or unknown.
pub fn text(v: &Value, name: &str) -> String {
    v.get_attr(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The `capacity` block's (spot, on_demand_min): all on-demand when the block is absent.
pub fn capacity(v: &Value) -> (bool, i64) {
    capacity_of(&PoolModel::of(v))
}

/// [`capacity`] of a decoded pool.
fn capacity_of(m: &PoolModel) -> (bool, i64) {
    match &m.capacity {
        Tf::Null => (false, 0),
        Tf::Unknown => (true, 0),
        Tf::Known(c) => (
            c.spot.known().copied().unwrap_or(true),
            model::int(&c.on_demand_min).unwrap_or(0),
        ),
    }
}

/// The pool configuration as the core validates it.
pub fn pool_config(v: &Value) -> NodePoolConfig {
    let m = PoolModel::of(v);
    let (spot, on_demand_min) = capacity_of(&m);
    let taints = m
        .taint
        .known()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|t| match t.known() {
            Some(t) => TaintConfig {
                key: model::text(&t.key),
                value: model::text(&t.value),
                effect: model::text(&t.effect),
            },
            None => TaintConfig {
                key: String::new(),
                value: String::new(),
                effect: String::new(),
            },
        })
        .collect();
    NodePoolConfig {
        cloud: model::text(&m.cloud),
        region: model::text(&m.region),
        cluster: model::text(&m.cluster),
        name: model::text(&m.name),
        gpu: model::text(&m.gpu),
        gpu_count: model::int(&m.gpu_count).unwrap_or(0),
        instance_types: model::strings(&m.instance_types).unwrap_or_default(),
        min_nodes: model::int(&m.min_nodes).unwrap_or(0),
        max_nodes: model::int(&m.max_nodes).unwrap_or(0),
        desired_nodes: model::int(&m.desired_nodes),
        spot,
        on_demand_min,
        reclaim: model::opt(&m.reclaim),
        driver: model::opt(&m.driver),
        labels: model::string_map(&m.labels),
        taints,
        tags: model::string_map(&m.tags),
        reservation: reservation_of(&m),
    }
}

/// The `reservation` block, unknown values as `None`.
pub fn reservation(v: &Value) -> Option<ReservationConfig> {
    reservation_of(&PoolModel::of(v))
}

/// [`reservation`] of a decoded pool.
fn reservation_of(m: &PoolModel) -> Option<ReservationConfig> {
    let r = match &m.reservation {
        Tf::Null => return None,
        Tf::Unknown => return Some(ReservationConfig::default()),
        Tf::Known(r) => r,
    };
    Some(ReservationConfig {
        commitment_id: model::opt(&r.commitment_id),
        kind: model::text(&r.kind),
        usd_per_gpu_hour: r.usd_per_gpu_hour.known().copied(),
    })
}

/// Whether the `reservation` block is absent or its kind and price are known: the
/// commitment's id may stay unknown (it is bought in the same apply).
pub fn reservation_known(v: &Value) -> bool {
    match &PoolModel::of(v).reservation {
        Tf::Null => true,
        Tf::Unknown => false,
        Tf::Known(r) => !r.kind.is_unknown() && !r.usd_per_gpu_hour.is_unknown(),
    }
}

/// Attributes besides [`COST_INPUTS`] that must be known at plan: the types priced and
/// the node count the preview starts from.
const ALSO_KNOWN_AT_PLAN: [&str; 2] = ["instance_types", "desired_nodes"];

/// Blocks whose listed attributes must be known at plan (the block itself too).
const BLOCKS_KNOWN_AT_PLAN: [(&str, [&str; 2]); 2] = [
    ("reservation", ["kind", "usd_per_gpu_hour"]),
    ("capacity", ["spot", "on_demand_min"]),
];

/// Errors for cost inputs that are not known yet: the plan must show the money.
pub fn require_known(config: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    let mut check = |path: AttributePath, v: Option<&Value>| {
        if v.is_some_and(|v| !v.is_wholly_known()) {
            let name = path.to_string();
            d.attr_error(
                path,
                format!("{name} must be known at plan time"),
                format!(
                    "`{name}` depends on a value known only after apply, but the cost preview in the plan needs it. Set it from variables, locals or data sources (e.g. `gpu_spot_offer`), or create what it depends on first with `-target`."
                ),
            );
        }
    };
    for name in COST_INPUTS.iter().chain(&ALSO_KNOWN_AT_PLAN) {
        check(AttributePath::attr(*name), config.get_attr(name));
    }
    for (block, attrs) in BLOCKS_KNOWN_AT_PLAN {
        let Some(b) = config.get_attr(block) else {
            continue;
        };
        if !b.is_known() {
            check(AttributePath::attr(block), Some(b));
        } else {
            for a in attrs {
                check(AttributePath::attr(block).then_attr(a), b.get_attr(a));
            }
        }
    }
    d
}

/// The `aws` block's settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AwsSettings {
    /// The node role, when known.
    pub node_role_arn: Option<String>,
    /// Subnets, when known and set.
    pub subnet_ids: Option<Vec<String>>,
}

/// Reads the `aws` block.
pub fn aws_settings(v: &Value) -> AwsSettings {
    match PoolModel::of(v).aws.known() {
        None => AwsSettings::default(),
        Some(a) => AwsSettings {
            node_role_arn: model::opt(&a.node_role_arn),
            subnet_ids: model::strings(&a.subnet_ids),
        },
    }
}

/// The node class of pool `v` on `cloud`: on AWS its `aws` block (node role; subnets, or
/// the cluster's when unset; the AMI type is the layout's, from `driver`); on Azure and
/// GCP their `azure` and `gcp` blocks, with the defaults of [`super::cloud_blocks`].
pub fn node_class(v: &Value, cloud: Cloud) -> NodeClass {
    match cloud {
        Cloud::Azure => NodeClass::Azure(super::cloud_blocks::azure_class(v)),
        Cloud::Gcp => NodeClass::Gcp(super::cloud_blocks::gcp_class(v)),
        _ => {
            let aws = aws_settings(v);
            NodeClass::Aws(AwsClass {
                node_role: aws.node_role_arn.unwrap_or_default(),
                subnets: aws.subnet_ids.filter(|s| !s.is_empty()),
                ami_type: String::new(),
                capacity_reservation: super::cloud_blocks::aws_capacity_reservation(v),
            })
        }
    }
}

/// Checks the `aws` block on an aws pool: a node role that looks like an IAM role ARN and
/// subnet ids that look like subnet ids (unknown values pass).
pub fn check_aws(config: &Value, d: &mut Diagnostics) {
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

/// The `timeouts` block, with defaults; errors name `timeouts.<op>` (read by
/// `tfplugin::timeouts`).
pub fn timeouts(v: &Value, d: &mut Diagnostics) -> Timeouts {
    let set = tfplugin::timeouts::Timeouts::read(v, d);
    let defaults = Timeouts::default();
    Timeouts {
        create: set.create.unwrap_or(defaults.create),
        update: set.update.unwrap_or(defaults.update),
        delete: set.delete.unwrap_or(defaults.delete),
    }
}

/// The cloud of pool `v` (any spelling); aws when it names none (validation refuses that
/// before any of these runs; a cloud without node groups is refused by
/// [`crate::clouds::Clouds::node_groups`]).
pub fn cloud_of(v: &Value) -> gpu_core::offer::Cloud {
    cloud_in(&PoolModel::of(v))
}

/// [`cloud_of`] a decoded pool.
pub fn cloud_in(m: &PoolModel) -> gpu_core::offer::Cloud {
    gpu_core::pool::spelling::cloud(&model::text(&m.cloud)).unwrap_or(gpu_core::offer::Cloud::Aws)
}

/// The region of pool `v` as its cloud spells it (`US-EAST-1` → `us-east-1`): the AWS SDK
/// signs requests for the region it is given, so a re-spelled one must not reach it.
pub fn region_of(v: &Value) -> String {
    let m = PoolModel::of(v);
    gpu_core::pool::spelling::region(Some(cloud_in(&m)), &model::text(&m.region))
}

/// Connects to the node-pool API of pool `v`'s cloud with the provider's sessions; no
/// call is made here.
pub async fn connect(
    settings: &super::Settings,
    v: &Value,
) -> Result<Box<dyn gpu_core::seam::NodeGroups>, tfplugin::Diagnostics> {
    settings
        .clouds
        .node_groups(cloud_of(v), &region_of(v))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_core::pool::validate::NOT_A_WHOLE_NUMBER;

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

    #[test]
    fn absent_capacity_is_all_on_demand_and_block_defaults_to_spot() {
        let v = Value::object([("capacity", Value::Null)]);
        assert_eq!(capacity(&v), (false, 0));
        let v = Value::object([(
            "capacity",
            Value::object([("spot", Value::Null), ("on_demand_min", Value::number(2))]),
        )]);
        assert_eq!(capacity(&v), (true, 2));
    }

    #[test]
    fn fractional_counts_are_reported_not_truncated() {
        let v = Value::object([("gpu_count", Value::number(1.5))]);
        assert_eq!(
            model::int(&PoolModel::of(&v).gpu_count),
            Some(NOT_A_WHOLE_NUMBER)
        );
        let v = Value::object([("gpu_count", Value::number(8.0))]);
        assert_eq!(model::int(&PoolModel::of(&v).gpu_count), Some(8));
        let v = Value::object([("gpu_count", Value::number(-3))]);
        assert_eq!(model::int(&PoolModel::of(&v).gpu_count), Some(-3));
        let v = Value::object([("gpu_count", Value::number(1e30))]);
        assert_eq!(model::int(&PoolModel::of(&v).gpu_count), Some(i64::MAX));
        let v = Value::object([("gpu_count", Value::number(-1e30))]);
        assert_eq!(
            model::int(&PoolModel::of(&v).gpu_count),
            Some(NOT_A_WHOLE_NUMBER + 1)
        );
    }
}
