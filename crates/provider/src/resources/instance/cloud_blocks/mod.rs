//! The instance's cloud blocks, one module per cloud (`aws {}`, `azure {}`, `gcp {}`):
//! each block's schema, its typed values and the core block config it becomes, the
//! account scope a VM of that cloud lives in, and the import id of a VM there. This module
//! dispatches by cloud; a cloud without VMs has none of these.

pub mod aws;
pub mod azure;
pub mod gcp;

use gpu_core::instance::InstanceSpec;
use gpu_core::offer::Cloud;
use tfplugin::{Diagnostic, Tf};

use super::model::InstanceModel;
use crate::clouds::Clouds;

/// A block as written: none when null; an unknown block reads as one with nothing known.
pub fn written<T: Clone + Default>(block: &Tf<T>) -> Option<T> {
    match block {
        Tf::Null => None,
        Tf::Unknown => Some(T::default()),
        Tf::Known(b) => Some(b.clone()),
    }
}

/// The account scope the VM `m` (checked as `spec`, when it is) lives in on `cloud`: the
/// Google Cloud project, the provider's Azure subscription, none on AWS. A cloud without
/// VMs has none (the connector refuses it, naming the clouds that have VMs).
pub fn scope(
    cloud: Cloud,
    m: Option<&InstanceModel>,
    spec: Option<&InstanceSpec>,
    clouds: &Clouds,
) -> Option<String> {
    match cloud {
        Cloud::Aws => None,
        Cloud::Azure => azure::scope(clouds),
        Cloud::Gcp => gcp::scope(m.and_then(|m| m.gcp.known()), spec, clouds),
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => None,
    }
}

/// The error of a VM on `cloud` that the provider block lacks a setting for (Azure: the
/// subscription to create it in); none when nothing is missing.
pub fn missing_setting(cloud: Cloud, clouds: &Clouds) -> Option<Diagnostic> {
    match cloud {
        Cloud::Aws | Cloud::Gcp => None,
        Cloud::Azure => azure::missing_subscription(clouds),
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => None,
    }
}

/// Whether an unset `zone` on `cloud` is known at plan to stay null (Azure: no zone),
/// rather than filled at apply (AWS: the subnet's zone).
pub fn unset_zone_stays_null(cloud: Cloud) -> bool {
    match cloud {
        Cloud::Azure => true,
        Cloud::Aws | Cloud::Gcp => false,
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => false,
    }
}

/// Where an import id points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportTarget {
    /// The VM's cloud.
    pub cloud: Cloud,
    /// The resource's `id`.
    pub id: String,
    /// Region (empty: read from the VM).
    pub region: String,
    /// Zone, when the id names one.
    pub zone: Option<String>,
    /// `(block, attribute, value)` to write into the cloud's block.
    pub block: Option<(&'static str, &'static str, String)>,
}

/// What an import id is read against: the provider's Azure subscription and Google Cloud
/// project.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportContext<'a> {
    /// The provider's `azure.subscription_id`.
    pub azure_subscription: Option<&'a str>,
    /// The provider's `gcp.project`.
    pub gcp_project: Option<&'a str>,
}

/// The shapes of import ids, for messages.
fn shapes() -> String {
    format!(
        "{}, {} or {}",
        aws::ID_SHAPE,
        azure::id_shape(),
        gcp::id_shape()
    )
}

/// The error of import id `id` (trimmed), saying `why` and every valid shape.
pub(super) fn bad_id(id: &str, why: &str) -> String {
    format!("{id:?} {why}; write {}", shapes())
}

/// Reads import id `id` as the id of a VM on the cloud whose shape it has.
pub fn parse_import(id: &str, ctx: ImportContext<'_>) -> Result<ImportTarget, String> {
    let id = id.trim();
    aws::parse_import(id)
        .or_else(|| azure::parse_import(id, ctx))
        .or_else(|| gcp::parse_import(id, ctx))
        .unwrap_or_else(|| Err(bad_id(id, "is not an import id of gpu_instance")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cloud_s_id_parses_and_a_wrong_one_says_the_shapes() {
        let parse = |id: &str, sub: Option<&str>| {
            parse_import(
                id,
                ImportContext {
                    azure_subscription: sub,
                    gcp_project: None,
                },
            )
        };
        let aws = parse("aws/US-EAST-1/i-0123456789abcdef0", None).unwrap();
        assert_eq!(
            (aws.cloud, aws.region.as_str(), aws.id.as_str()),
            (Cloud::Aws, "us-east-1", "i-0123456789abcdef0")
        );
        let arm = "/subscriptions/0000/resourceGroups/rg-gpu/providers/Microsoft.Compute/virtualMachines/train";
        let az = parse(arm, Some("0000")).unwrap();
        assert_eq!(az.cloud, Cloud::Azure);
        assert_eq!(
            az.block,
            Some(("azure", "resource_group", "rg-gpu".to_string()))
        );
        assert!(parse(arm, Some("1111")).unwrap_err().contains("1111"));
        assert!(
            parse(arm, None)
                .unwrap_err()
                .contains("azure.subscription_id")
        );
        let g = parse("projects/p/zones/us-central1-a/instances/train", None).unwrap();
        assert_eq!(
            (g.region.as_str(), g.zone.as_deref()),
            ("us-central1", Some("us-central1-a"))
        );
        for wrong in [
            "i-0123",
            "aws/us-east-1/vol-1",
            "projects/p/instances/x",
            "train",
        ] {
            let e = parse(wrong, None).unwrap_err();
            assert!(e.contains("aws/<region>/<instance-id>"), "{wrong}: {e}");
        }
    }

    #[test]
    fn the_provider_s_own_project_needs_no_block() {
        let ctx = ImportContext {
            azure_subscription: None,
            gcp_project: Some("p"),
        };
        let id = "projects/p/zones/us-central1-a/instances/train";
        assert_eq!(parse_import(id, ctx).unwrap().block, None);
        let other = "projects/q/zones/us-central1-a/instances/train";
        assert_eq!(
            parse_import(other, ctx).unwrap().block,
            Some(("gcp", "project", "q".to_string()))
        );
    }
}
