//! Plain node group types to and from aws-sdk-eks types.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_eks::types as eks;

use crate::model::Ec2Reservation;

use crate::seam::{
    AwsClass, CapacityType, CloudError, GroupSpec, HealthIssue, NodeClass, NodeGroup,
    NodeGroupStatus, Scaling, Taint, TaintEffect,
};

/// Our scaling as the SDK's (`check` has verified the sizes fit an `i32`); an unset
/// desired count is sent as `min`.
pub(crate) fn scaling_to_sdk(s: Scaling) -> Result<eks::NodegroupScalingConfig, CloudError> {
    s.check().map_err(CloudError::Invalid)?;
    let i = |v: u32| i32::try_from(v).map_err(|_| CloudError::Invalid("size too large".into()));
    Ok(eks::NodegroupScalingConfig::builder()
        .min_size(i(s.min)?)
        .max_size(i(s.max)?)
        .desired_size(i(s.desired.unwrap_or(s.min))?)
        .build())
}

/// The EKS `capacityType`: `ON_DEMAND`, `SPOT`, or `CAPACITY_BLOCK` for reserved capacity.
pub(crate) fn capacity_to_eks(c: CapacityType) -> &'static str {
    match c {
        CapacityType::OnDemand => "ON_DEMAND",
        CapacityType::Spot => "SPOT",
        CapacityType::Reserved => "CAPACITY_BLOCK",
    }
}

/// The node group tag naming the capacity reservation its launch template targets: how a
/// read knows it (the launch template itself is not read back).
pub const RESERVATION_TAG: &str = "gpu.tf/capacity-reservation";

/// Our capacity type of an EKS `capacityType`.
fn capacity_from_eks(s: &str) -> Option<CapacityType> {
    match s {
        "ON_DEMAND" => Some(CapacityType::OnDemand),
        "SPOT" => Some(CapacityType::Spot),
        "CAPACITY_BLOCK" => Some(CapacityType::Reserved),
        _ => None,
    }
}

/// The EKS taint effect: `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`.
fn effect_to_eks(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NO_SCHEDULE",
        TaintEffect::PreferNoSchedule => "PREFER_NO_SCHEDULE",
        TaintEffect::NoExecute => "NO_EXECUTE",
    }
}

/// Our status of an EKS node group `status`.
pub(crate) fn status_from_eks(s: &str) -> NodeGroupStatus {
    match s {
        "CREATING" => NodeGroupStatus::Creating,
        "ACTIVE" => NodeGroupStatus::Active,
        "UPDATING" => NodeGroupStatus::Updating,
        "DELETING" => NodeGroupStatus::Deleting,
        "CREATE_FAILED" => NodeGroupStatus::CreateFailed,
        "DELETE_FAILED" => NodeGroupStatus::DeleteFailed,
        "DEGRADED" => NodeGroupStatus::Degraded,
        other => NodeGroupStatus::Other(other.to_string()),
    }
}

/// Our taint as the SDK's (an empty value is sent as none).
pub(crate) fn taint_to_sdk(t: &Taint) -> eks::Taint {
    eks::Taint::builder()
        .key(&t.key)
        .set_value((!t.value.is_empty()).then(|| t.value.clone()))
        .effect(eks::TaintEffect::from(effect_to_eks(t.effect)))
        .build()
}

/// `None` for an empty map, so nothing is sent for it.
pub(crate) fn map_or_none(m: &BTreeMap<String, String>) -> Option<HashMap<String, String>> {
    (!m.is_empty()).then(|| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

/// `None` for an empty list, so nothing is sent for it.
pub(crate) fn vec_or_none<T: Clone>(v: &[T]) -> Option<Vec<T>> {
    (!v.is_empty()).then(|| v.to_vec())
}

fn to_btree(m: Option<&HashMap<String, String>>) -> BTreeMap<String, String> {
    m.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn size(v: Option<i32>) -> u32 {
    v.and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

fn taint_from_sdk(t: &eks::Taint) -> Result<Taint, CloudError> {
    let effect = t.effect().map(|e| e.as_str()).unwrap_or("");
    Ok(Taint {
        key: t.key().unwrap_or_default().to_string(),
        value: t.value().unwrap_or_default().to_string(),
        effect: TaintEffect::parse(effect)
            .ok_or_else(|| CloudError::Other(format!("unknown taint effect {effect:?}")))?,
    })
}

/// A described node group as ours (`aws:` tags stripped, taints sorted). An unknown
/// capacity type or taint effect is an error rather than a silent guess.
pub(crate) fn node_group_from_sdk(g: &eks::Nodegroup) -> Result<NodeGroup, CloudError> {
    // EKS omits capacityType only for groups that predate it: those are on-demand.
    let cap = g.capacity_type().map_or("ON_DEMAND", |c| c.as_str());
    // A group on a reservation of ours (its tag) is the pool's floor, on-demand to the
    // pool even on a capacity block; without the tag a capacity block is a stranger's.
    let ours = g
        .tags()
        .and_then(|t| t.get(RESERVATION_TAG))
        .map(|id| Ec2Reservation {
            id: id.clone(),
            capacity_block: cap == "CAPACITY_BLOCK",
        });
    let cap = if ours.is_some() && cap == "CAPACITY_BLOCK" {
        "ON_DEMAND"
    } else {
        cap
    };
    let sc = g.scaling_config();
    let mut spec = GroupSpec {
        name: g.nodegroup_name().unwrap_or_default().to_string(),
        capacity: capacity_from_eks(cap)
            .ok_or_else(|| CloudError::Other(format!("unknown capacity type {cap:?}")))?,
        machine_types: g.instance_types().to_vec(),
        scaling: Scaling {
            min: size(sc.and_then(|s| s.min_size())),
            max: size(sc.and_then(|s| s.max_size())),
            desired: Some(size(sc.and_then(|s| s.desired_size()))),
        },
        labels: to_btree(g.labels()),
        taints: g
            .taints()
            .iter()
            .map(taint_from_sdk)
            .collect::<Result<_, _>>()?,
        tags: to_btree(g.tags()),
        class: NodeClass::Aws(AwsClass {
            node_role: g.node_role().unwrap_or_default().to_string(),
            subnets: Some(g.subnets().to_vec()),
            ami_type: g.ami_type().map_or("", |a| a.as_str()).to_string(),
            capacity_reservation: ours,
        }),
    };
    // The reservation tag is the class's, not a user tag.
    spec.tags.remove(RESERVATION_TAG);
    spec.taints.sort();
    super::rules::EKS.strip_system(&mut spec);
    Ok(NodeGroup {
        id: g.nodegroup_arn().unwrap_or_default().to_string(),
        status: status_from_eks(g.status().map_or("", |s| s.as_str())),
        spec,
        kubernetes_version: g.version().map(str::to_string),
        health: g
            .health()
            .map(|h| {
                h.issues()
                    .iter()
                    .map(|i| HealthIssue {
                        code: i.code().map_or("", |c| c.as_str()).to_string(),
                        message: i.message().unwrap_or_default().to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_and_scaling_round_trip() {
        let t = Taint {
            key: "nvidia.com/gpu".into(),
            value: String::new(),
            effect: TaintEffect::PreferNoSchedule,
        };
        let s = taint_to_sdk(&t);
        assert_eq!(s.effect().unwrap().as_str(), "PREFER_NO_SCHEDULE");
        assert_eq!(taint_from_sdk(&s).unwrap(), t);
        let sc = scaling_to_sdk(Scaling {
            min: 0,
            max: 4,
            desired: Some(2),
        })
        .unwrap();
        assert_eq!(
            (sc.min_size(), sc.max_size(), sc.desired_size()),
            (Some(0), Some(4), Some(2))
        );
        assert!(
            scaling_to_sdk(Scaling {
                min: 3,
                max: 2,
                desired: Some(2)
            })
            .is_err()
        );
    }

    #[test]
    fn described_group_maps_and_rejects_unknown_enums() {
        let g = eks::Nodegroup::builder()
            .nodegroup_name("g")
            .cluster_name("c")
            .status(eks::NodegroupStatus::Degraded)
            .capacity_type(eks::CapacityTypes::Spot)
            .tags("aws:cloudformation:stack-name", "x")
            .tags("team", "ml")
            .health(
                eks::NodegroupHealth::builder()
                    .issues(
                        eks::Issue::builder()
                            .code(eks::NodegroupIssueCode::AsgInstanceLaunchFailures)
                            .message("InsufficientInstanceCapacity")
                            .build(),
                    )
                    .build(),
            )
            .build();
        let n = node_group_from_sdk(&g).unwrap();
        assert_eq!(n.status, NodeGroupStatus::Degraded);
        assert_eq!(n.spec.capacity, CapacityType::Spot);
        assert_eq!(n.health[0].code, "AsgInstanceLaunchFailures");
        let tags: Vec<&str> = n.spec.tags.keys().map(String::as_str).collect();
        assert_eq!(tags, ["team"], "AWS's own tags are stripped on read");
        let bad = eks::Nodegroup::builder()
            .capacity_type(eks::CapacityTypes::from("HYBRID"))
            .build();
        assert!(matches!(
            node_group_from_sdk(&bad),
            Err(CloudError::Other(_))
        ));
    }
}
