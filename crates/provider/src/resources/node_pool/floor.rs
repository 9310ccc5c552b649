//! `floor_nodes_up`: how many nodes of the pool's floor (its on-demand or reserved groups)
//! are up, by the cloud's own count ([`NodeGroups::nodes_up`]), read at every refresh and
//! at the end of every apply that changed the pool.

use gpu_core::seam::{CapacityType, ClusterRef, NodeGroup, NodeGroups};
use tfplugin::{Diagnostic, Value};

use super::groups;

/// The attribute's name.
pub const FLOOR_UP: &str = "floor_nodes_up";

/// The floor's nodes up among `live` (null for a pool without a floor group, or where the
/// cloud gives no count), and a warning when the cloud could not be asked.
pub async fn floor_up(
    api: &dyn NodeGroups,
    cluster: &ClusterRef,
    pool: &str,
    live: &[NodeGroup],
) -> (Value, Option<Diagnostic>) {
    let floor: Vec<&NodeGroup> = live
        .iter()
        .filter(|g| groups::capacity_of(g) == CapacityType::OnDemand)
        .collect();
    if floor.is_empty() {
        return (Value::Null, None);
    }
    let mut up = 0u32;
    for g in floor {
        match api.nodes_up(cluster, g).await {
            Ok(Some(n)) => up = up.saturating_add(n),
            Ok(None) => return (Value::Null, None),
            Err(e) => {
                let warning = Diagnostic::warning(
                    format!("Cannot count the floor nodes of gpu_node_pool `{pool}`"),
                    format!(
                        "Reading how many nodes of {} {} are up failed: {e}. `floor_nodes_up` is null until a refresh can read it; nothing else is affected.",
                        api.traits().noun,
                        g.name()
                    ),
                );
                return (Value::Null, Some(warning));
            }
        }
    }
    (Value::number(i64::from(up)), None)
}
