//! GKE `NodePool` JSON (Container API v1) to and from our [`GroupSpec`]: serde types for
//! the fields used, the capacity, scaling, taint and status mappings.
//!
//! Counts: our [`Scaling`] is per group, GKE's `initialNodeCount` and `setSize` are per
//! zone. Autoscaling is sent as `totalMinNodeCount`/`totalMaxNodeCount` (whole-pool
//! bounds), `locationPolicy` `ANY` for spot (take capacity wherever it is) and `BALANCED`
//! for on-demand. The NodePool resource does not report its current size, so a read's
//! `desired` is `initialNodeCount` × zones, clamped into the bounds.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::seam::{
    CapacityType, CloudError, GcpClass, GroupSpec, HealthIssue, NodeClass, NodeGroup,
    NodeGroupStatus, Scaling, Taint, TaintEffect,
};

/// A GKE `NodePool`, the fields this crate reads and writes (others are ignored on read).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodePool {
    /// Pool name.
    pub name: String,
    /// Node configuration.
    #[serde(default)]
    pub config: NodeConfig,
    /// Nodes per zone at creation.
    #[serde(
        default,
        deserialize_with = "int",
        skip_serializing_if = "Option::is_none"
    )]
    pub initial_node_count: Option<i64>,
    /// Autoscaler bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,
    /// Zones of the nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<String>,
    /// Output only: `PROVISIONING`, `RUNNING`, ...
    #[serde(default, skip_serializing)]
    pub status: Option<String>,
    /// Output only: why the status is what it is.
    #[serde(default, skip_serializing)]
    pub status_message: Option<String>,
    /// Output only: the pool's URL.
    #[serde(default, skip_serializing)]
    pub self_link: Option<String>,
    /// Output only: Kubernetes version of the nodes.
    #[serde(default, skip_serializing)]
    pub version: Option<String>,
    /// Output only: the URLs of the pool's managed instance groups (one per zone).
    #[serde(default, skip_serializing)]
    pub instance_group_urls: Vec<String>,
}

/// A GKE `NodeConfig` (the fields used).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeConfig {
    /// Machine type, e.g. `g2-standard-8`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub machine_type: String,
    /// GPUs attached to each node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerators: Vec<Accelerator>,
    /// Kubernetes node labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Kubernetes node taints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<NodeTaint>,
    /// GCP resource labels of the VMs (our tags).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_labels: BTreeMap<String, String>,
    /// Spot VMs.
    #[serde(default, skip_serializing_if = "is_false")]
    pub spot: bool,
    /// Legacy preemptible VMs (read as spot).
    #[serde(default, skip_serializing_if = "is_false")]
    pub preemptible: bool,
    /// Service account e-mail of the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<String>,
    /// Node image, e.g. `COS_CONTAINERD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_type: Option<String>,
    /// Which reservations the nodes consume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation_affinity: Option<ReservationAffinity>,
}

/// The key that names a reservation in a `SPECIFIC_RESERVATION` affinity.
pub(crate) const RESERVATION_NAME_KEY: &str = "compute.googleapis.com/reservation-name";

/// A GKE `ReservationAffinity`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReservationAffinity {
    /// `ANY_RESERVATION`, `NO_RESERVATION` or `SPECIFIC_RESERVATION`.
    #[serde(default)]
    pub consume_reservation_type: String,
    /// For a specific reservation: `compute.googleapis.com/reservation-name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// For a specific reservation: its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl ReservationAffinity {
    fn of(r: &crate::model::Reservation) -> Self {
        match r {
            crate::model::Reservation::Specific(name) => ReservationAffinity {
                consume_reservation_type: super::rules::consume_type(r).into(),
                key: RESERVATION_NAME_KEY.into(),
                values: vec![name.clone()],
            },
            other => ReservationAffinity {
                consume_reservation_type: super::rules::consume_type(other).into(),
                ..Default::default()
            },
        }
    }
}

/// A GKE `AcceleratorConfig`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Accelerator {
    /// GPUs per node: an int64, so a JSON string in proto3 JSON (read as either).
    #[serde(
        default,
        deserialize_with = "int",
        serialize_with = "int_as_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub accelerator_count: Option<i64>,
    /// e.g. `nvidia-l4`.
    #[serde(default)]
    pub accelerator_type: String,
    /// Who installs the NVIDIA driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_driver_installation_config: Option<DriverConfig>,
}

/// A GKE `GPUDriverInstallationConfig`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DriverConfig {
    /// `DEFAULT`, `LATEST` or `INSTALLATION_DISABLED`.
    #[serde(default)]
    pub gpu_driver_version: String,
}

/// A GKE `NodeTaint`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeTaint {
    /// Key.
    pub key: String,
    /// Value (may be empty).
    #[serde(default)]
    pub value: String,
    /// `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`.
    #[serde(default)]
    pub effect: String,
}

/// A GKE `NodePoolAutoscaling`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Autoscaling {
    /// Whether the autoscaler runs.
    #[serde(default)]
    pub enabled: bool,
    /// Whole-pool lower bound.
    #[serde(
        default,
        deserialize_with = "int",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_min_node_count: Option<i64>,
    /// Whole-pool upper bound.
    #[serde(
        default,
        deserialize_with = "int",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_max_node_count: Option<i64>,
    /// Per-zone lower bound (pools made elsewhere; never sent).
    #[serde(default, deserialize_with = "int", skip_serializing)]
    pub min_node_count: Option<i64>,
    /// Per-zone upper bound (pools made elsewhere; never sent).
    #[serde(default, deserialize_with = "int", skip_serializing)]
    pub max_node_count: Option<i64>,
    /// `ANY` or `BALANCED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location_policy: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// An integer written as a JSON number or string (proto3 JSON writes int64 as strings).
fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum N {
        I(i64),
        S(String),
    }
    match Option::<N>::deserialize(d)? {
        None => Ok(None),
        Some(N::I(i)) => Ok(Some(i)),
        Some(N::S(s)) => s.trim().parse().map(Some).map_err(serde::de::Error::custom),
    }
}

fn int_as_string<S: serde::Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(i) => s.serialize_str(&i.to_string()),
        None => s.serialize_none(),
    }
}

/// GKE's spelling of a taint effect.
fn effect_to_gke(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NO_SCHEDULE",
        TaintEffect::PreferNoSchedule => "PREFER_NO_SCHEDULE",
        TaintEffect::NoExecute => "NO_EXECUTE",
    }
}

/// Our taints as GKE's.
pub(crate) fn taints_to_gke(ts: &[Taint]) -> Vec<NodeTaint> {
    ts.iter()
        .map(|t| NodeTaint {
            key: t.key.clone(),
            value: t.value.clone(),
            effect: effect_to_gke(t.effect).into(),
        })
        .collect()
}

/// Our status of a GKE node pool `status`.
pub(crate) fn status_from_gke(s: &str) -> NodeGroupStatus {
    match s {
        "PROVISIONING" => NodeGroupStatus::Creating,
        "RUNNING" => NodeGroupStatus::Active,
        "RECONCILING" => NodeGroupStatus::Updating,
        "STOPPING" => NodeGroupStatus::Deleting,
        // "The node pool may be unusable": what a failed create leaves.
        "ERROR" => NodeGroupStatus::CreateFailed,
        "RUNNING_WITH_ERROR" => NodeGroupStatus::Degraded,
        other => NodeGroupStatus::Other(other.to_string()),
    }
}

/// The per-zone count of `total` nodes over `zones` zones: rounded up, but never more
/// than `max` nodes in all (the autoscaler then brings the pool up to its minimum).
pub(crate) fn per_zone(total: u32, max: u32, zones: usize) -> i64 {
    let z = u32::try_from(zones.max(1)).unwrap_or(u32::MAX);
    i64::from(total.div_ceil(z).min(max / z))
}

/// The zones a pool of `total` nodes (its fewest `min`) should span when the cluster's
/// `zones` cannot hold them evenly: `initialNodeCount` is per zone, and without pending
/// pods GKE's autoscaler does not raise a pool to its minimum, so a floor of 1 node over 3
/// zones would start with none. `Some(k zones)`: the first `k` of `zones`, `k` the largest
/// divisor of `total` not above their number, so `total / k` nodes per zone make the floor
/// exactly; `None` when the cluster's zones already hold at least `min` nodes.
pub(crate) fn floor_zones(total: u32, min: u32, max: u32, zones: &[String]) -> Option<Vec<String>> {
    let z = zones.len().max(1);
    let nodes = per_zone(total, max, z) * z as i64;
    if min == 0 || total == 0 || nodes >= i64::from(min) || zones.is_empty() {
        return None;
    }
    let k = (1..=z.min(total as usize))
        .rev()
        .find(|k| (total as usize).is_multiple_of(*k))
        .unwrap_or(1);
    Some(zones[..k].to_vec())
}

/// The autoscaling GKE takes for `s`: whole-pool bounds, `ANY` for spot, `BALANCED`
/// otherwise.
pub(crate) fn autoscaling_to_gke(s: Scaling, capacity: CapacityType) -> Autoscaling {
    Autoscaling {
        enabled: true,
        total_min_node_count: Some(i64::from(s.min)),
        total_max_node_count: Some(i64::from(s.max)),
        location_policy: Some(
            if capacity == CapacityType::Spot {
                "ANY"
            } else {
                "BALANCED"
            }
            .into(),
        ),
        ..Default::default()
    }
}

/// The `nodePool` of a create request for `spec` in a cluster whose pools span
/// `cluster_zones` by default; a pool whose nodes those zones cannot hold evenly is
/// placed in fewer ([`floor_zones`]).
pub(crate) fn pool_to_gke(
    spec: &GroupSpec,
    cluster_zones: &[String],
) -> Result<NodePool, CloudError> {
    let NodeClass::Gcp(class) = &spec.class else {
        return Err(CloudError::Invalid(
            "a GKE node pool needs a GCP node class".into(),
        ));
    };
    let s = spec.scaling.resolved_against(None);
    let total = s.desired.unwrap_or(s.min);
    let locations = if class.locations.is_empty() {
        floor_zones(total, s.min, s.max, cluster_zones).unwrap_or_default()
    } else {
        class.locations.clone()
    };
    let zones = match locations.len() {
        0 => cluster_zones.len().max(1),
        n => n,
    };
    let accelerators = match &class.accelerator_type {
        Some(t) if class.accelerator_count > 0 => vec![Accelerator {
            accelerator_count: Some(i64::from(class.accelerator_count)),
            accelerator_type: t.clone(),
            gpu_driver_installation_config: (!class.driver_version.is_empty()).then(|| {
                DriverConfig {
                    gpu_driver_version: class.driver_version.clone(),
                }
            }),
        }],
        _ => Vec::new(),
    };
    Ok(NodePool {
        name: spec.name.clone(),
        config: NodeConfig {
            machine_type: spec.machine_types.first().cloned().unwrap_or_default(),
            accelerators,
            labels: spec.labels.clone(),
            taints: taints_to_gke(&spec.taints),
            resource_labels: spec.tags.clone(),
            spot: spec.capacity == CapacityType::Spot,
            preemptible: false,
            service_account: class.service_account.clone(),
            image_type: (!class.image_type.is_empty()).then(|| class.image_type.clone()),
            reservation_affinity: class.reservation.as_ref().map(ReservationAffinity::of),
        },
        initial_node_count: Some(per_zone(total, s.max, zones)),
        autoscaling: Some(autoscaling_to_gke(s, spec.capacity)),
        locations,
        ..Default::default()
    })
}

fn count(v: Option<i64>) -> u32 {
    v.and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

/// A pool read from GKE as ours, GKE's own labels, taints and tags stripped. `id` is the
/// pool's path (`projects/p/locations/l/clusters/c/nodePools/np`).
pub(crate) fn pool_from_gke(p: &NodePool, id: String) -> Result<NodeGroup, CloudError> {
    let zones = u32::try_from(p.locations.len().max(1)).unwrap_or(1);
    let initial = count(p.initial_node_count).saturating_mul(zones);
    let (min, max) = match &p.autoscaling {
        Some(a) if a.enabled => match (a.total_min_node_count, a.total_max_node_count) {
            (None, None) => (
                count(a.min_node_count).saturating_mul(zones),
                count(a.max_node_count).saturating_mul(zones),
            ),
            (lo, hi) => (count(lo), count(hi)),
        },
        _ => (initial, initial),
    };
    let taints = p
        .config
        .taints
        .iter()
        .map(|t| {
            Ok(Taint {
                key: t.key.clone(),
                value: t.value.clone(),
                effect: TaintEffect::parse(&t.effect).ok_or_else(|| {
                    CloudError::Other(format!("unknown taint effect {:?}", t.effect))
                })?,
            })
        })
        .collect::<Result<Vec<_>, CloudError>>()?;
    let acc = p.config.accelerators.first();
    let mut spec = GroupSpec {
        name: p.name.clone(),
        capacity: if p.config.spot || p.config.preemptible {
            CapacityType::Spot
        } else {
            CapacityType::OnDemand
        },
        machine_types: vec![p.config.machine_type.clone()],
        scaling: Scaling {
            min,
            max,
            desired: Some(initial.clamp(min, max.max(min))),
        },
        labels: p.config.labels.clone(),
        taints,
        tags: p.config.resource_labels.clone(),
        class: NodeClass::Gcp(GcpClass {
            // GKE reports the project's default account as `default`.
            service_account: p
                .config
                .service_account
                .clone()
                .filter(|s| !s.is_empty() && s != "default"),
            locations: p.locations.clone(),
            image_type: p.config.image_type.clone().unwrap_or_default(),
            driver_version: acc
                .and_then(|a| a.gpu_driver_installation_config.as_ref())
                .map(|d| d.gpu_driver_version.clone())
                .unwrap_or_default(),
            accelerator_type: acc.map(|a| a.accelerator_type.clone()),
            accelerator_count: acc.map_or(0, |a| count(a.accelerator_count)),
            reservation: p.config.reservation_affinity.as_ref().and_then(|r| {
                super::rules::reservation_from_gke(&r.consume_reservation_type, &r.values)
            }),
        }),
    };
    spec.taints.sort();
    super::rules::GKE.strip_system(&mut spec);
    let status = p.status.as_deref().unwrap_or("");
    let health = match (status, &p.status_message) {
        ("ERROR" | "RUNNING_WITH_ERROR", Some(m)) if !m.is_empty() => vec![HealthIssue {
            code: status.into(),
            message: m.clone(),
        }],
        _ => Vec::new(),
    };
    Ok(NodeGroup {
        id,
        status: status_from_gke(status),
        spec,
        kubernetes_version: p.version.clone(),
        health,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(capacity: CapacityType) -> GroupSpec {
        GroupSpec {
            name: "train-spot".into(),
            capacity,
            machine_types: vec!["g2-standard-8".into()],
            scaling: Scaling {
                min: 0,
                max: 6,
                desired: Some(2),
            },
            labels: [("gpu.tf/pool".to_string(), "train".to_string())].into(),
            taints: vec![Taint {
                key: "team".into(),
                value: "ml".into(),
                effect: TaintEffect::PreferNoSchedule,
            }],
            tags: [("gpu-tf-pool".to_string(), "train".to_string())].into(),
            class: NodeClass::Gcp(GcpClass {
                image_type: "COS_CONTAINERD".into(),
                driver_version: "LATEST".into(),
                accelerator_type: Some("nvidia-l4".into()),
                accelerator_count: 1,
                ..Default::default()
            }),
        }
    }

    #[test]
    fn create_body_has_googles_shape() {
        let p = pool_to_gke(&spec(CapacityType::Spot), &zones(3)).unwrap();
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "train-spot",
                "config": {
                    "machineType": "g2-standard-8",
                    "accelerators": [{"acceleratorCount": "1", "acceleratorType": "nvidia-l4",
                        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}],
                    "labels": {"gpu.tf/pool": "train"},
                    "taints": [{"key": "team", "value": "ml", "effect": "PREFER_NO_SCHEDULE"}],
                    "resourceLabels": {"gpu-tf-pool": "train"},
                    "spot": true,
                    "imageType": "COS_CONTAINERD"
                },
                "initialNodeCount": 1,
                "autoscaling": {"enabled": true, "totalMinNodeCount": 0, "totalMaxNodeCount": 6,
                    "locationPolicy": "ANY"}
            })
        );
        let od = pool_to_gke(&spec(CapacityType::OnDemand), &zones(1)).unwrap();
        assert!(!od.config.spot);
        assert_eq!(od.initial_node_count, Some(2));
        assert_eq!(
            od.autoscaling.unwrap().location_policy.as_deref(),
            Some("BALANCED")
        );
    }

    /// A cluster's node zones, `n` of them.
    fn zones(n: usize) -> Vec<String> {
        ["us-central1-a", "us-central1-b", "us-central1-c"][..n]
            .iter()
            .map(|z| z.to_string())
            .collect()
    }

    #[test]
    fn a_floor_the_clusters_zones_cannot_hold_evenly_is_placed_in_fewer_zones() {
        let three = zones(3);
        // 1 node over 3 zones: 0 per zone would start none, so one zone with 1.
        assert_eq!(floor_zones(1, 1, 1, &three), Some(zones(1)));
        // 4 over 3 zones at most 4: 2 zones of 2 make exactly 4.
        assert_eq!(floor_zones(4, 4, 4, &three), Some(zones(2)));
        // 3 over 3 zones: one each, as GKE would anyway.
        assert_eq!(floor_zones(3, 3, 3, &three), None);
        // A pool that may grow (max 6) starts with 1 per zone: at least its minimum.
        assert_eq!(floor_zones(1, 1, 6, &three), None);
        // No floor: nothing to hold.
        assert_eq!(floor_zones(0, 0, 2, &three), None);
        // A fixed 1-node floor is created in one zone with one node.
        let mut od = spec(CapacityType::OnDemand);
        od.scaling = Scaling {
            min: 1,
            max: 1,
            desired: Some(1),
        };
        let p = pool_to_gke(&od, &three).unwrap();
        assert_eq!(p.locations, zones(1));
        assert_eq!(p.initial_node_count, Some(1));
        let back = pool_from_gke(&p, "id".into()).unwrap();
        assert_eq!(back.spec.scaling.desired, Some(1), "read back: 1 node up");
        // The zones the user set are kept as they are.
        if let NodeClass::Gcp(c) = &mut od.class {
            c.locations = zones(3);
        }
        assert_eq!(pool_to_gke(&od, &three).unwrap().locations, zones(3));
    }

    #[test]
    fn per_zone_counts_never_exceed_the_whole_pool_maximum() {
        assert_eq!(per_zone(2, 6, 3), 1);
        assert_eq!(per_zone(4, 6, 3), 2);
        assert_eq!(per_zone(1, 1, 3), 0, "the autoscaler brings it to min");
        assert_eq!(per_zone(5, 5, 1), 5);
        assert_eq!(per_zone(0, 4, 0), 0);
    }

    #[test]
    fn read_back_strips_gkes_own_entries_and_reads_int64_strings() {
        let raw = serde_json::json!({
            "name": "train-spot", "status": "RUNNING", "version": "1.31.6-gke.1020000",
            "initialNodeCount": 1, "locations": ["us-central1-a", "us-central1-b"],
            "etag": "ab", "management": {"autoUpgrade": true},
            "autoscaling": {"enabled": true, "totalMinNodeCount": 0, "totalMaxNodeCount": 6,
                "locationPolicy": "ANY"},
            "config": {"machineType": "g2-standard-8", "spot": true, "serviceAccount": "default",
                "imageType": "COS_CONTAINERD",
                "labels": {"gpu.tf/pool": "train", "cloud.google.com/gke-spot": "true"},
                "resourceLabels": {"gpu-tf-pool": "train", "goog-gke-node": ""},
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
                           {"key": "team", "value": "ml", "effect": "PREFER_NO_SCHEDULE"}],
                "accelerators": [{"acceleratorCount": "1", "acceleratorType": "nvidia-l4",
                    "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]}
        });
        let p: NodePool = serde_json::from_value(raw).unwrap();
        let g = pool_from_gke(
            &p,
            "projects/p/locations/l/clusters/c/nodePools/train-spot".into(),
        )
        .unwrap();
        assert_eq!(g.status, NodeGroupStatus::Active);
        let mut want = spec(CapacityType::Spot);
        want.scaling.desired = Some(2);
        if let NodeClass::Gcp(c) = &mut want.class {
            c.locations = vec!["us-central1-a".into(), "us-central1-b".into()];
        }
        assert_eq!(g.spec, want);
        assert_eq!(g.kubernetes_version.as_deref(), Some("1.31.6-gke.1020000"));
    }

    #[test]
    fn statuses_and_failures() {
        assert_eq!(status_from_gke("PROVISIONING"), NodeGroupStatus::Creating);
        assert_eq!(status_from_gke("RECONCILING"), NodeGroupStatus::Updating);
        assert_eq!(status_from_gke("STOPPING"), NodeGroupStatus::Deleting);
        assert_eq!(status_from_gke("ERROR"), NodeGroupStatus::CreateFailed);
        assert_eq!(
            status_from_gke("RUNNING_WITH_ERROR"),
            NodeGroupStatus::Degraded
        );
        let p = NodePool {
            name: "x".into(),
            status: Some("ERROR".into()),
            status_message: Some("ZONE_RESOURCE_POOL_EXHAUSTED".into()),
            config: NodeConfig {
                taints: vec![NodeTaint {
                    key: "k".into(),
                    value: String::new(),
                    effect: "SOMETIMES".into(),
                }],
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(matches!(
            pool_from_gke(&p, String::new()),
            Err(CloudError::Other(_))
        ));
        let mut ok = p.clone();
        ok.config.taints.clear();
        let g = pool_from_gke(&ok, String::new()).unwrap();
        assert_eq!(g.health[0].message, "ZONE_RESOURCE_POOL_EXHAUSTED");
        // No autoscaling: the fixed size, per zone times zones.
        ok.initial_node_count = Some(2);
        ok.locations = vec!["a".into(), "b".into()];
        let g = pool_from_gke(&ok, String::new()).unwrap();
        assert_eq!(
            g.spec.scaling,
            Scaling {
                min: 4,
                max: 4,
                desired: Some(4)
            }
        );
    }

    #[test]
    fn a_specific_reservation_is_sent_keyed_by_name_and_read_back() {
        let mut od = spec(CapacityType::OnDemand);
        if let NodeClass::Gcp(c) = &mut od.class {
            c.reservation = Some(crate::model::Reservation::Specific("h100-floor".into()));
        }
        let p = pool_to_gke(&od, &zones(3)).unwrap();
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json["config"]["reservationAffinity"],
            serde_json::json!({
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": ["h100-floor"]
            })
        );
        let back = pool_from_gke(&p, "id".into()).unwrap();
        assert_eq!(back.spec.class, od.class);
        // No affinity asked: none sent, GKE's default applies.
        let p = pool_to_gke(&spec(CapacityType::Spot), &zones(3)).unwrap();
        assert!(
            serde_json::to_value(&p).unwrap()["config"]
                .get("reservationAffinity")
                .is_none()
        );
    }
}
