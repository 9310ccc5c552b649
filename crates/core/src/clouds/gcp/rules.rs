//! GKE node pools as data: names, one machine type per pool, one operation per cluster, per-zone autoscaling, the ownership label, the labels, taints and resource labels GKE adds itself.

use crate::model::{NodeClass, Reservation};
use crate::offer::Cloud;
use crate::seam::CloudTraits;
use crate::seam::cluster::{BadClusterRef, ClusterRef, is_zone_of};
use crate::seam::traits::{FixedField, GroupNaming, fixed_set};

/// GKE node pools.
pub static GKE: CloudTraits = CloudTraits {
    cloud: Cloud::Gcp,
    service: "GKE",
    noun: "node pool",
    name_rule: "1-40 lowercase letters, digits and '-', starting with a letter, not ending with '-'",
    max_name_len: 40,
    machine_types_per_group: 1,
    serial_operations: true,
    scaling_per_zone: true,
    stop_on_reclaim: false,
    ownership_tag: "gpu-tf-pool",
    system_label_prefixes: &["cloud.google.com/"],
    // GKE taints every GPU node `nvidia.com/gpu=present:NoSchedule` itself.
    system_taint_prefixes: &["nvidia.com/gpu"],
    system_tag_prefixes: &["goog-"],
    name_ok: gke_name_ok,
    marker_of: gcp_label_value,
    failed: super::codes::failed_group,
    naming: GroupNaming::Slugged {
        // 40 minus `-spot-` and a generation.
        len: 40 - 6 - 4,
    },
    images: &[],
    fixed: fixed_fields,
};

fn gke_name_ok(n: &str) -> bool {
    (1..=40).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && !n.ends_with('-')
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A pool name as a GCP label value: lowercase letters, digits, `-` and `_`, at most 63.
fn gcp_label_value(pool: &str) -> String {
    pool.to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(63)
        .collect()
}

/// What the GKE adapter does not change in place: GPU driver version, image type, node locations and reservation affinity when set, service account.
fn fixed_fields(class: &NodeClass) -> Vec<FixedField> {
    let NodeClass::Gcp(c) = class else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.push(("gpu driver", Some(c.driver_version.clone())));
    // The adapter changes neither in place: a new image or new zones is a new pool.
    out.push(("image", Some(c.image_type.clone())));
    out.push((
        "node locations",
        (!c.locations.is_empty()).then(|| fixed_set(c.locations.iter().cloned())),
    ));
    out.push((
        "reservation affinity",
        c.reservation.as_ref().map(|r| match r {
            Reservation::Specific(n) => format!("specific {n}"),
            other => consume_type(other).to_ascii_lowercase(),
        }),
    ));
    out.push((
        "service account",
        Some(
            c.service_account
                .clone()
                .unwrap_or_else(|| "default".into()),
        ),
    ));
    out
}

/// GKE's `consumeReservationType` of a reservation affinity.
pub fn consume_type(r: &Reservation) -> &'static str {
    match r {
        Reservation::Any => "ANY_RESERVATION",
        Reservation::None => "NO_RESERVATION",
        Reservation::Specific(_) => "SPECIFIC_RESERVATION",
    }
}

/// A reservation affinity from GKE's `consumeReservationType` and reservation names
/// (`values`).
pub fn reservation_from_gke(consume: &str, values: &[String]) -> Option<Reservation> {
    match consume {
        "ANY_RESERVATION" => Some(Reservation::Any),
        "NO_RESERVATION" => Some(Reservation::None),
        "SPECIFIC_RESERVATION" => values.first().cloned().map(Reservation::Specific),
        _ => None,
    }
}

/// Whether `id` is a Compute Engine name for a commitment of kind `gcp_commitment` (61 at
/// most: its reservation is `<name>-r`) or `gcp_reservation` (63): lower-case letters,
/// digits and `-`, starting with a letter, not ending with `-`.
pub fn is_commitment_id(kind: crate::seam::commitment_kind::CommitmentKind, id: &str) -> bool {
    use crate::seam::commitment_kind::CommitmentKind as K;
    let max = if kind == K::GcpCommitment { 61 } else { 63 };
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || *x == b'-')
        && !id.ends_with('-')
}

/// How a GKE cluster path looks, for messages.
pub const GKE_SHAPE: &str = "projects/<project>/locations/<region-or-zone>/clusters/<name>";

/// Reads `id` as a GKE cluster path whose location is `region` or one of its zones (any,
/// when `region` is empty).
pub fn parse_cluster(region: &str, id: &str) -> Result<ClusterRef, BadClusterRef> {
    let parts: Vec<&str> = id.split('/').collect();
    let [p, project, l, location, c, name] = parts.as_slice() else {
        return Err(BadClusterRef(format!(
            "{id:?} is not a GKE cluster id; it looks like \"{GKE_SHAPE}\""
        )));
    };
    if *p != "projects" || *l != "locations" || *c != "clusters" {
        return Err(BadClusterRef(format!(
            "{id:?} is not a GKE cluster id; it looks like \"{GKE_SHAPE}\""
        )));
    }
    if project.is_empty() || name.is_empty() || location.is_empty() {
        return Err(BadClusterRef(format!(
            "{id:?} has an empty part; it looks like \"{GKE_SHAPE}\""
        )));
    }
    let in_region = region.is_empty() || *location == region || is_zone_of(location, region);
    if !in_region {
        return Err(BadClusterRef(format!(
            "{id:?} is in location {location:?}, which is not region {region:?} or one of its zones; set `region` to the cluster's region"
        )));
    }
    Ok(ClusterRef::Gke {
        project: project.to_string(),
        location: location.to_string(),
        name: name.to_string(),
    })
}

/// A GKE cluster's path.
pub fn cluster_id(project: &str, location: &str, name: &str) -> String {
    format!("projects/{project}/locations/{location}/clusters/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gke_names_and_marker() {
        assert!(GKE.name_ok("train-floor-k3x9"));
        assert!(!GKE.name_ok("Train"));
        assert!(!GKE.name_ok("train-"));
        assert!(!GKE.name_ok(&format!("a{}", "b".repeat(40))));
        // GCP label keys only [a-z0-9_-].
        assert!(
            GKE.ownership_tag
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        );
        assert_eq!(GKE.marker_value("Train.A"), "train_a");
    }
}
