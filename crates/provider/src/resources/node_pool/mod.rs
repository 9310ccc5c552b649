//! `gpu_node_pool`: GPU node groups in a managed Kubernetes cluster (EKS, AKS or GKE), with the
//! cost of every change in the plan and state read from the cloud.

pub mod apis;
pub mod apply;
pub mod cloud_blocks;
pub mod desired;
pub mod failover;
pub mod floor;
pub mod groups;
pub mod import;
pub mod inputs;
pub mod live_state;
pub mod model;
pub mod paths;
pub mod places;
pub mod plan;
pub mod plan_places;
pub mod record;
pub mod refresh;
pub mod resource;
pub mod schema;
pub mod upgrade;

pub use desired::Settings;
pub use schema::schema;

use gpu_core::catalog::Catalog;
use tfplugin::{Diagnostics, Value};

/// The resource's type name.
pub const TYPE_NAME: &str = "gpu_node_pool";

/// Static checks of a `gpu_node_pool` block (`terraform validate`): shapes of the
/// values that are known; the catalog checks run when every cost input is known.
pub fn validate(config: &Value, catalog: &Catalog) -> Diagnostics {
    let mut d = Diagnostics::new();
    inputs::timeouts(config, &mut d);
    places::check(config, &mut d);
    let pool = model::PoolModel::of(config);
    if let Some(cloud) = pool
        .cloud
        .known()
        .and_then(|c| gpu_core::pool::spelling::cloud(c))
    {
        let region = model::opt(&pool.region);
        cloud_blocks::check_own(config, cloud, region.as_deref(), &mut d);
    }
    let known = inputs::COST_INPUTS
        .iter()
        .chain(
            [
                "capacity",
                "instance_types",
                "desired_nodes",
                "taint",
                "labels",
                "tags",
                "name",
                "cluster",
                "reclaim",
                "driver",
            ]
            .iter(),
        )
        .all(|a| config.get_attr(a).is_none_or(Value::is_wholly_known))
        && inputs::reservation_known(config);
    if known && let Err(errors) = desired::validate(config, catalog) {
        d.extend(errors);
    }
    d
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_failover;
