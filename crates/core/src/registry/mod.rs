//! The registry of cloud drivers: which driver serves a [`Cloud`] (its node-group rules,
//! its VM rules, its commitment ids, its cluster ids). The one place in core,
//! besides the drivers themselves (`crate::clouds`), that names them; a cloud without a
//! driver for something (a neocloud without managed Kubernetes) answers `None`, never
//! another cloud's. [`sessions`] makes each cloud's clients for the life of a process.

mod cluster;
#[cfg(all(feature = "aws", feature = "azure", feature = "gcp"))]
pub mod sessions;

use crate::clouds::{aws, azure, gcp};
use crate::model::NodeClass;
use crate::offer::Cloud;
use crate::seam::{CloudTraits, InstanceRules};

/// The rules of `cloud`'s managed Kubernetes node groups (EKS, AKS, GKE); `None` for a
/// cloud whose driver has none.
pub fn node_group_rules(cloud: Cloud) -> Option<&'static CloudTraits> {
    match cloud {
        Cloud::Aws => Some(&aws::rules::EKS),
        Cloud::Azure => Some(&azure::rules::AKS),
        Cloud::Gcp => Some(&gcp::rules::GKE),
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => None,
    }
}

/// The rules of the node groups a group of `class` belongs to (a class exists only for
/// clouds with node groups).
pub fn rules_of_class(class: &NodeClass) -> &'static CloudTraits {
    match class {
        NodeClass::Aws(_) => &aws::rules::EKS,
        NodeClass::Azure(_) => &azure::rules::AKS,
        NodeClass::Gcp(_) => &gcp::rules::GKE,
    }
}

/// Every cloud with managed Kubernetes node groups here, and their rules.
pub fn node_group_clouds() -> impl Iterator<Item = &'static CloudTraits> {
    Cloud::ALL.iter().filter_map(|c| node_group_rules(*c))
}

/// The rules of `cloud`'s single VMs (EC2, Azure VMs, Compute Engine); `None` for a cloud
/// whose driver has none.
pub fn instance_rules(cloud: Cloud) -> Option<&'static InstanceRules> {
    match cloud {
        Cloud::Aws => Some(&aws::instance_rules::EC2),
        Cloud::Azure => Some(&azure::instance_rules::AZURE_VMS),
        Cloud::Gcp => Some(&gcp::instance_rules::COMPUTE),
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => None,
    }
}

/// Every cloud with single VMs here, and their rules, in the clouds' order.
pub fn instance_clouds() -> impl Iterator<Item = &'static InstanceRules> {
    Cloud::ALL.iter().filter_map(|c| instance_rules(*c))
}

/// Whether `id` has the shape of the id of a commitment of `kind` in its cloud (the
/// `commitment_id` a `gpu_commitment` reports).
pub fn is_commitment_id(kind: crate::seam::commitment_kind::CommitmentKind, id: &str) -> bool {
    match kind.cloud() {
        Cloud::Aws => aws::rules::is_commitment_id(kind, id),
        Cloud::Azure => azure::rules::is_commitment_id(kind, id),
        Cloud::Gcp => gcp::rules::is_commitment_id(kind, id),
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => !id.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_driver_serves_its_own_cloud_and_neoclouds_have_none() {
        for c in [Cloud::Aws, Cloud::Azure, Cloud::Gcp] {
            assert_eq!(node_group_rules(c).map(|r| r.cloud), Some(c));
        }
        for c in [Cloud::Cudo, Cloud::Nebius, Cloud::Hyperbolic] {
            assert!(node_group_rules(c).is_none(), "{c}");
        }
        assert_eq!(node_group_clouds().count(), 3);
        for c in [Cloud::Aws, Cloud::Azure, Cloud::Gcp] {
            assert_eq!(instance_rules(c).map(|r| r.cloud), Some(c));
        }
        for c in [Cloud::Cudo, Cloud::Nebius, Cloud::Hyperbolic] {
            assert!(instance_rules(c).is_none(), "{c}");
        }
        assert_eq!(instance_clouds().count(), 3);
    }
}
