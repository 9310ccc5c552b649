//! Compute Engine instances as data: zones (`<region>-<letter>`, required), the largest
//! boot disk, labels, metadata size, image paths, the `gcp {}` block (project, network,
//! service account), and the instance path an import names.

use crate::offer::Cloud;
use crate::seam::cluster::is_zone_of;
use crate::seam::instance_rules::{InstanceBlocks, InstanceRules, RuleProblems};
use crate::seam::instances::{InstanceClass, MARKER_LABEL};

/// Compute Engine instances.
pub static COMPUTE: InstanceRules = InstanceRules {
    cloud: Cloud::Gcp,
    max_disk_gb: 65536,
    labels_are_pool_tags: false,
    user_data_limit: 256 * 1024,
    user_data_rule: "Compute Engine metadata values are at most 256 KB",
    image_shapes: "an image path `projects/<project>/global/images/<image>` or `projects/<project>/global/images/family/<family>`",
    marker: MARKER_LABEL,
    name_tag: None,
    zone_problem,
    label_problem,
    image_ok: |i| i.contains("/global/images/"),
    class,
};

/// A VM is placed in a zone of its region, `<region>-<letter>`.
fn zone_problem(region: &str, zone: Option<&str>) -> Option<String> {
    match zone {
        None => Some(format!(
            "Compute Engine places a VM in a zone: set it, e.g. \"{region}-a\""
        )),
        Some(z) if !is_zone_of(z, region) => Some(format!(
            "{z:?} is not a zone of region {region:?}; e.g. \"{region}-a\""
        )),
        Some(_) => None,
    }
}

/// Label keys and values: lower-case letters, digits, `_` and `-`, at most 63; keys start
/// with a letter.
fn label_problem(k: &str, v: &str) -> Option<&'static str> {
    let key_ok = (1..=63).contains(&k.len())
        && k.starts_with(|c: char| c.is_ascii_lowercase())
        && k.chars().all(label_char);
    let value_ok = v.len() <= 63 && v.chars().all(label_char);
    (!key_ok || !value_ok).then_some(
        "Compute Engine labels are lower-case letters, digits, `_` and `-`, at most 63 each, and keys start with a letter",
    )
}

/// A character Compute Engine labels take.
fn label_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
}

/// The `gcp` block: a project (here or the provider's) and a service account e-mail.
fn class(b: &InstanceBlocks<'_>, p: &mut RuleProblems) -> InstanceClass {
    let g = b.gcp.cloned().unwrap_or_default();
    let project = g
        .project
        .clone()
        .or_else(|| b.default_gcp_project.map(str::to_string))
        .map(|s| s.trim().to_string());
    if project.as_deref().is_none_or(str::is_empty) {
        p.push((
            "gcp.project".into(),
            "no project: set `gcp.project` here or `gcp.project` in the provider block".into(),
        ));
    }
    if let Some(sa) = &g.service_account
        && !sa.contains('@')
    {
        p.push((
            "gcp.service_account".into(),
            format!(
                "{sa:?} is not a service account e-mail (`name@project.iam.gserviceaccount.com`)"
            ),
        ));
    }
    InstanceClass::Gcp {
        project: project.unwrap_or_default(),
        network: g.network,
        subnetwork: g.subnetwork,
        service_account: g.service_account,
    }
}

/// How a Compute Engine instance path looks, for messages.
pub const INSTANCE_PATH_SHAPE: &str = "projects/<project>/zones/<zone>/instances/<name>";

/// A Compute Engine instance path read as (project, zone, region, name); `None` for any
/// other shape (the zone must look like `<region>-<letter>`).
pub fn parse_instance_path(id: &str) -> Option<(&str, &str, &str, &str)> {
    let parts: Vec<&str> = id.split('/').collect();
    match parts.as_slice() {
        ["projects", project, "zones", zone, "instances", name]
            if !project.is_empty() && !name.is_empty() && zone.matches('-').count() >= 2 =>
        {
            let region = zone.rsplit_once('-').map_or("", |(r, _)| r);
            Some((project, zone, region, name))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_labels_images_and_instance_paths() {
        assert!(COMPUTE.zone_problem("us-central1", None).is_some());
        assert_eq!(
            COMPUTE.zone_problem("us-central1", Some("us-central1-a")),
            None
        );
        assert!(
            COMPUTE
                .zone_problem("us-central1", Some("us-central1a"))
                .is_some()
        );
        assert!(COMPUTE.label_problem("Team", "ml").is_some());
        assert!(COMPUTE.label_problem("team", "ml-1_x").is_none());
        assert!(COMPUTE.image_ok("projects/p/global/images/family/f"));
        assert_eq!(
            parse_instance_path("projects/p/zones/us-central1-a/instances/n"),
            Some(("p", "us-central1-a", "us-central1", "n"))
        );
        assert_eq!(parse_instance_path("projects/p/instances/n"), None);
    }
}
