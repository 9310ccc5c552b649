//! Reading a `gpu_node_pool` object (config, plan or state) into typed inputs, and
//! finding the inputs that must be known at plan time.

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

/// The `reservation` block of pool `v` with a kind that parses (its price left out).
pub fn pool_reservation(v: &Value) -> Option<gpu_core::pool::PoolReservation> {
    let r = reservation(v)?;
    Some(gpu_core::pool::PoolReservation {
        commitment_id: r.commitment_id,
        kind: r.kind.parse().ok()?,
        usd_per_gpu_hour: None,
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

/// The cloud of pool `v` (any spelling); `None` when it names none (validation refuses
/// that before any of these runs; a cloud without node groups is refused by
/// [`crate::clouds::Clouds::node_groups`]).
pub fn cloud_of(v: &Value) -> Option<gpu_core::offer::Cloud> {
    cloud_in(&PoolModel::of(v))
}

/// [`cloud_of`] a decoded pool.
pub fn cloud_in(m: &PoolModel) -> Option<gpu_core::offer::Cloud> {
    gpu_core::pool::spelling::cloud(&model::text(&m.cloud))
}

/// The error for a pool whose `cloud` names no cloud.
pub fn unknown_cloud(v: &Value) -> Diagnostics {
    let named = model::text(&PoolModel::of(v).cloud);
    let mut d = Diagnostics::new();
    d.attr_error(
        AttributePath::attr("cloud"),
        "Invalid cloud",
        format!("`cloud` is {named:?}; the clouds with node pools are aws, azure and gcp."),
    );
    d
}

/// The region of pool `v` as its cloud spells it (`US-EAST-1` → `us-east-1`): the AWS SDK
/// signs requests for the region it is given, so a re-spelled one must not reach it.
pub fn region_of(v: &Value) -> String {
    let m = PoolModel::of(v);
    gpu_core::pool::spelling::region(cloud_in(&m), &model::text(&m.region))
}

/// Connects to the node-pool API of pool `v`'s cloud with the provider's sessions; no
/// call is made here.
pub async fn connect(
    settings: &super::Settings,
    v: &Value,
) -> Result<Box<dyn gpu_core::seam::NodeGroups>, tfplugin::Diagnostics> {
    let Some(cloud) = cloud_of(v) else {
        return Err(unknown_cloud(v));
    };
    settings.clouds.node_groups(cloud, &region_of(v)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_core::pool::validate::NOT_A_WHOLE_NUMBER;

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
