//! A [`GroupSpec`] as an AKS agent pool (ARM JSON, api-version
//! [`super::API_VERSION`]) and back.
//!
//! - capacity: `scaleSetPriority` `Regular` or `Spot` (`scaleSetEvictionPolicy` `Delete`,
//!   or `Deallocate` for a pool that keeps reclaimed VMs; `spotMaxPrice` -1: up to the
//!   on-demand price);
//! - scaling: a fixed group (min = max) is `count` without autoscaling; otherwise
//!   `enableAutoScaling` with `minCount`/`maxCount` and `count` the desired nodes;
//! - `vmSize` is the one machine type; `mode` `User`, `osType` `Linux`;
//! - labels, taints (`key=value:Effect`) and tags as `nodeLabels`, `nodeTaints`, `tags`;
//! - the Azure class: `vnetSubnetID`, `availabilityZones`, `osSKU`, `gpuProfile.driver`,
//!   and on the on-demand pool `capacityReservationGroupID`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::rules::AKS;
use crate::seam::{
    AzureClass, CapacityType, CloudError, GroupSpec, NodeClass, NodeGroup, NodeGroupStatus,
    Scaling, Taint, TaintEffect,
};

/// The PUT body of `spec` (its `desired` count, or `live_count` when unset).
pub fn to_arm(spec: &GroupSpec, live: Option<Scaling>) -> Result<Value, CloudError> {
    let NodeClass::Azure(class) = &spec.class else {
        return Err(CloudError::Invalid(format!(
            "agent pool {} needs an Azure class",
            spec.name
        )));
    };
    let [vm_size] = spec.machine_types.as_slice() else {
        return Err(CloudError::Invalid(format!(
            "an agent pool has one VM size, not {}",
            spec.machine_types.len()
        )));
    };
    let s = spec.scaling.resolved_against(live);
    let mut p = Map::new();
    p.insert("vmSize".into(), json!(vm_size));
    p.insert("mode".into(), json!("User"));
    p.insert("osType".into(), json!("Linux"));
    p.insert("osSKU".into(), json!(class.os_sku));
    p.insert("type".into(), json!("VirtualMachineScaleSets"));
    p.insert("count".into(), json!(s.desired.unwrap_or(s.min)));
    if s.min == s.max {
        p.insert("enableAutoScaling".into(), json!(false));
    } else {
        p.insert("enableAutoScaling".into(), json!(true));
        p.insert("minCount".into(), json!(s.min));
        p.insert("maxCount".into(), json!(s.max));
    }
    if spec.capacity == CapacityType::Spot {
        p.insert("scaleSetPriority".into(), json!("Spot"));
        let policy = if class.deallocate_evicted {
            "Deallocate"
        } else {
            "Delete"
        };
        p.insert("scaleSetEvictionPolicy".into(), json!(policy));
        p.insert("spotMaxPrice".into(), json!(-1));
    } else {
        p.insert("scaleSetPriority".into(), json!("Regular"));
    }
    p.insert("nodeLabels".into(), json!(spec.labels));
    let taints: Vec<String> = spec.taints.iter().map(ToString::to_string).collect();
    p.insert("nodeTaints".into(), json!(taints));
    p.insert("tags".into(), json!(spec.tags));
    if let Some(subnet) = &class.subnet {
        p.insert("vnetSubnetID".into(), json!(subnet));
    }
    if !class.zones.is_empty() {
        p.insert("availabilityZones".into(), json!(class.zones));
    }
    p.insert("gpuProfile".into(), json!({ "driver": class.gpu_driver }));
    if let Some(group) = &class.capacity_reservation_group
        && spec.capacity != CapacityType::Spot
    {
        p.insert("capacityReservationGroupID".into(), json!(group));
    }
    Ok(json!({ "properties": Value::Object(p) }))
}

/// A pool as ARM answers it, the AKS system labels, taints and tags stripped.
pub fn from_arm(body: &Value) -> Result<NodeGroup, CloudError> {
    let bad = |what: &str| CloudError::Other(format!("agent pool answer without {what}"));
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("name"))?;
    let id = body.get("id").and_then(Value::as_str).unwrap_or_default();
    let p = body.get("properties").ok_or_else(|| bad("properties"))?;
    let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let num = |k: &str| p.get(k).and_then(Value::as_u64).map(|n| n as u32);
    let count = num("count").unwrap_or(0);
    let scaling = if p.get("enableAutoScaling").and_then(Value::as_bool) == Some(true) {
        Scaling {
            min: num("minCount").unwrap_or(0),
            max: num("maxCount").unwrap_or(count),
            desired: Some(count),
        }
    } else {
        Scaling {
            min: count,
            max: count,
            desired: Some(count),
        }
    };
    let capacity = match text("scaleSetPriority").as_deref() {
        Some("Spot") => CapacityType::Spot,
        _ => CapacityType::OnDemand,
    };
    let strings = |k: &str| -> BTreeMap<String, String> {
        p.get(k)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let taints = p
        .get("nodeTaints")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter_map(parse_taint)
                .collect()
        })
        .unwrap_or_default();
    let zones = p
        .get("availabilityZones")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut spec = GroupSpec {
        name: name.to_string(),
        capacity,
        machine_types: text("vmSize").into_iter().collect(),
        scaling,
        labels: strings("nodeLabels"),
        taints,
        tags: strings("tags"),
        class: NodeClass::Azure(AzureClass {
            subnet: text("vnetSubnetID"),
            zones,
            os_sku: text("osSKU").unwrap_or_default(),
            gpu_driver: p
                .get("gpuProfile")
                .and_then(|g| g.get("driver"))
                .and_then(Value::as_str)
                .unwrap_or("Install")
                .to_string(),
            deallocate_evicted: capacity == CapacityType::Spot
                && text("scaleSetEvictionPolicy").as_deref() == Some("Deallocate"),
            capacity_reservation_group: text("capacityReservationGroupID")
                .filter(|g| !g.is_empty())
                .map(|g| g.to_ascii_lowercase()),
        }),
    };
    AKS.strip_system(&mut spec);
    Ok(NodeGroup {
        id: id.to_string(),
        status: status(text("provisioningState").as_deref().unwrap_or("")),
        spec,
        kubernetes_version: text("currentOrchestratorVersion")
            .or_else(|| text("orchestratorVersion")),
        health: Vec::new(),
    })
}

/// `provisioningState` as a neutral status.
pub fn status(state: &str) -> NodeGroupStatus {
    match state {
        "Succeeded" => NodeGroupStatus::Active,
        "Creating" => NodeGroupStatus::Creating,
        "Updating" | "Scaling" | "Upgrading" | "Starting" | "Stopping" => NodeGroupStatus::Updating,
        "Deleting" => NodeGroupStatus::Deleting,
        "Failed" => NodeGroupStatus::Degraded,
        other => NodeGroupStatus::Other(other.to_string()),
    }
}

/// `key=value:Effect` (or `key:Effect`) as a taint.
fn parse_taint(s: &str) -> Option<Taint> {
    let (kv, effect) = s.rsplit_once(':')?;
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    Some(Taint {
        key: key.to_string(),
        value: value.to_string(),
        effect: TaintEffect::parse(effect)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(capacity: CapacityType, min: u32, max: u32) -> GroupSpec {
        GroupSpec {
            name: "gs1".into(),
            capacity,
            machine_types: vec!["Standard_NC24ads_A100_v4".into()],
            scaling: Scaling {
                min,
                max,
                desired: None,
            },
            labels: BTreeMap::from([("gpu.tf/pool".into(), "train".into())]),
            taints: vec![Taint {
                key: "nvidia.com/gpu".into(),
                value: "present".into(),
                effect: TaintEffect::NoSchedule,
            }],
            tags: BTreeMap::from([("gpu-tf-pool".into(), "train".into())]),
            class: NodeClass::Azure(AzureClass {
                subnet: None,
                zones: vec!["1".into()],
                os_sku: "Ubuntu".into(),
                gpu_driver: "Install".into(),
                deallocate_evicted: false,
                capacity_reservation_group: None,
            }),
        }
    }

    #[test]
    fn a_spot_pool_that_keeps_reclaimed_vms_deallocates_them_and_reads_back() {
        let mut s = spec(CapacityType::Spot, 0, 3);
        if let NodeClass::Azure(c) = &mut s.class {
            c.deallocate_evicted = true;
        }
        let mut body = to_arm(&s, None).unwrap();
        assert_eq!(body["properties"]["scaleSetEvictionPolicy"], "Deallocate");
        body["name"] = json!(s.name);
        body["properties"]["provisioningState"] = json!("Succeeded");
        let back = from_arm(&body).unwrap();
        assert_eq!(back.spec.class, s.class);
        // A Regular pool has no eviction policy, whatever the class says.
        let mut od = spec(CapacityType::OnDemand, 1, 1);
        if let NodeClass::Azure(c) = &mut od.class {
            c.deallocate_evicted = true;
        }
        assert!(
            to_arm(&od, None).unwrap()["properties"]
                .get("scaleSetEvictionPolicy")
                .is_none()
        );
    }

    #[test]
    fn the_floor_is_placed_in_its_capacity_reservation_group_and_reads_back() {
        let group = "/subscriptions/0a1b/resourcegroups/ml/providers/microsoft.compute/capacityreservationgroups/g1";
        let mut od = spec(CapacityType::OnDemand, 1, 1);
        if let NodeClass::Azure(c) = &mut od.class {
            c.capacity_reservation_group = Some(group.into());
        }
        let mut body = to_arm(&od, None).unwrap();
        assert_eq!(body["properties"]["capacityReservationGroupID"], group);
        // ARM may answer the id in its own letter case: the same group.
        body["properties"]["capacityReservationGroupID"] = json!(
            "/subscriptions/0a1b/resourceGroups/ml/providers/Microsoft.Compute/capacityReservationGroups/g1"
        );
        body["name"] = json!(od.name);
        body["properties"]["provisioningState"] = json!("Succeeded");
        assert_eq!(from_arm(&body).unwrap().spec.class, od.class);
        // Spot VMs cannot use a capacity reservation.
        let mut spot = spec(CapacityType::Spot, 0, 3);
        spot.class = od.class.clone();
        assert!(
            to_arm(&spot, None).unwrap()["properties"]
                .get("capacityReservationGroupID")
                .is_none()
        );
    }

    #[test]
    fn a_spot_pool_round_trips_through_what_aks_answers() {
        let s = spec(CapacityType::Spot, 0, 3);
        let mut body = to_arm(&s, None).unwrap();
        let p = &body["properties"];
        assert_eq!(p["scaleSetPriority"], "Spot");
        assert_eq!(p["scaleSetEvictionPolicy"], "Delete");
        assert_eq!(p["spotMaxPrice"], -1);
        assert_eq!(
            (
                p["enableAutoScaling"].clone(),
                p["minCount"].clone(),
                p["maxCount"].clone(),
                p["count"].clone()
            ),
            (json!(true), json!(0), json!(3), json!(0))
        );
        assert_eq!(
            p["nodeTaints"],
            json!(["nvidia.com/gpu=present:NoSchedule"])
        );
        assert!(
            p.get("vnetSubnetID").is_none(),
            "None: the cluster's subnet"
        );
        // What AKS adds on read: its spot label and taint, a provisioning state.
        body["name"] = json!("gs1");
        body["properties"]["nodeLabels"]["kubernetes.azure.com/scalesetpriority"] = json!("spot");
        body["properties"]["nodeTaints"]
            .as_array_mut()
            .unwrap()
            .push(json!(
                "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
            ));
        body["properties"]["provisioningState"] = json!("Succeeded");
        let g = from_arm(&body).unwrap();
        assert_eq!(g.status, NodeGroupStatus::Active);
        let mut want = s.clone();
        want.scaling.desired = Some(0);
        assert_eq!(g.spec, want, "the system label and taint are not drift");
    }

    #[test]
    fn a_fixed_floor_is_a_count_without_autoscaling() {
        let body = to_arm(&spec(CapacityType::OnDemand, 2, 2), None).unwrap();
        let p = &body["properties"];
        assert_eq!(p["enableAutoScaling"], false);
        assert_eq!(p["count"], 2);
        assert_eq!(p["scaleSetPriority"], "Regular");
        assert!(p.get("minCount").is_none() && p.get("scaleSetEvictionPolicy").is_none());
        // An autoscaled group keeps its live count when the spec leaves it open.
        let live = Some(Scaling {
            min: 0,
            max: 5,
            desired: Some(4),
        });
        let body = to_arm(&spec(CapacityType::Spot, 1, 5), live).unwrap();
        assert_eq!(body["properties"]["count"], 4);
    }

    #[test]
    fn two_vm_sizes_or_another_cloud_are_refused() {
        let mut s = spec(CapacityType::Spot, 0, 3);
        s.machine_types.push("Standard_NC48ads_A100_v4".into());
        assert!(matches!(to_arm(&s, None), Err(CloudError::Invalid(_))));
        assert_eq!(status("Failed"), NodeGroupStatus::Degraded);
        assert_eq!(parse_taint("a:NoExecute").unwrap().value, "");
    }
}
