//! The one decision of what a cloud can change in a live group and what it cannot: the
//! fixed fields (a change of any rolls the group to a new generation), the common ones and
//! each cloud driver's own. Plan, apply
//! and reconcile's guards all ask here, and the generation suffix is derived from the same
//! fields, so a name changes exactly when the group must be replaced.

use crate::model::GroupSpec;

pub use crate::seam::traits::FixedField;

/// What `g` cannot change in place on its cloud, sets sorted (values compare without
/// regard to letter case, which none of these carry meaning in): on every cloud the
/// capacity type and the set of machine types, then what its driver says of its class
/// (`crate::clouds::<cloud>::rules`: EKS AMI type, node role, subnets; AKS OS SKU, GPU
/// driver, subnet, zones, spot eviction; GKE driver version, service account, image type,
/// node locations and reservation affinity when set).
pub fn fixed_fields(g: &GroupSpec) -> Vec<FixedField> {
    let mut out = vec![
        ("capacity", Some(g.capacity.label_value().to_string())),
        (
            "machine types",
            Some(crate::seam::traits::fixed_set(
                g.machine_types
                    .iter()
                    .map(|t| t.trim().to_ascii_lowercase()),
            )),
        ),
    ];
    out.extend((crate::registry::rules_of_class(&g.class).fixed)(&g.class));
    out
}

/// Why a live group `have` cannot become `want` in place: one `field a → b` per fixed
/// field that differs; empty when it can be changed in place.
pub fn roll_reasons(have: &GroupSpec, want: &GroupSpec) -> Vec<String> {
    if std::mem::discriminant(&have.class) != std::mem::discriminant(&want.class) {
        return vec!["cloud differs".into()];
    }
    fixed_fields(have)
        .into_iter()
        .zip(fixed_fields(want))
        .filter_map(|((name, a), (_, b))| match (a, b) {
            (Some(a), Some(b)) if !a.eq_ignore_ascii_case(&b) => {
                Some(format!("{name} {} → {}", shown(&a), shown(&b)))
            }
            _ => None,
        })
        .collect()
}

/// A stable text of `g`'s fixed fields: the input of its generation suffix.
pub fn fingerprint(g: &GroupSpec) -> String {
    fixed_fields(g)
        .into_iter()
        .map(|(_, v)| v.map_or_else(|| "~".into(), |v| v.to_ascii_lowercase()))
        .collect::<Vec<_>>()
        .join("|")
}

/// A set value as `[a, b]` in messages; other values as they are.
fn shown(v: &str) -> String {
    if v.contains(',') || v.is_empty() {
        format!("[{}]", v.replace(',', ", "))
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AwsClass, AzureClass, CapacityType, GcpClass, NodeClass, Scaling};

    fn group(class: NodeClass, types: &[&str]) -> GroupSpec {
        GroupSpec {
            name: "g".into(),
            capacity: CapacityType::Spot,
            machine_types: types.iter().map(|t| t.to_string()).collect(),
            scaling: Scaling {
                min: 0,
                max: 3,
                desired: None,
            },
            labels: Default::default(),
            taints: Vec::new(),
            tags: Default::default(),
            class,
        }
    }

    fn aws(ami: &str, subnets: Option<&[&str]>) -> NodeClass {
        NodeClass::Aws(AwsClass {
            node_role: "arn:aws:iam::1:role/n".into(),
            subnets: subnets.map(|s| s.iter().map(|x| x.to_string()).collect()),
            ami_type: ami.into(),
            capacity_reservation: None,
        })
    }

    #[test]
    fn eks_rolls_on_types_image_and_subnets_but_not_on_spelling_or_order() {
        let a = group(
            aws("AL2023_x86_64_NVIDIA", Some(&["s-1", "s-2"])),
            &["g6.xlarge", "g6.2xlarge"],
        );
        let same = group(
            aws("al2023_x86_64_nvidia", Some(&["s-2", "s-1"])),
            &["G6.2XLARGE", "g6.xlarge"],
        );
        assert!(roll_reasons(&a, &same).is_empty());
        assert_eq!(fingerprint(&a), fingerprint(&same));
        let unknown_subnets = group(
            aws("AL2023_x86_64_NVIDIA", None),
            &["g6.xlarge", "g6.2xlarge"],
        );
        assert!(
            roll_reasons(&a, &unknown_subnets).is_empty(),
            "the cluster's subnets are never a reason"
        );
        let other = group(
            aws("BOTTLEROCKET_x86_64_NVIDIA", Some(&["s-1"])),
            &["g6.xlarge"],
        );
        let why = roll_reasons(&a, &other);
        assert_eq!(why.len(), 3, "{why:?}");
        assert!(
            why[0].starts_with("machine types [g6.2xlarge, g6.xlarge] → g6.xlarge"),
            "{why:?}"
        );
        assert!(
            why[1].starts_with("image AL2023_x86_64_NVIDIA → BOTTLEROCKET"),
            "{why:?}"
        );
        assert_ne!(fingerprint(&a), fingerprint(&other));
    }

    #[test]
    fn scaling_labels_and_taints_never_roll() {
        let a = group(aws("x", None), &["t"]);
        let mut b = a.clone();
        b.scaling.max = 9;
        b.labels.insert("k".into(), "v".into());
        b.tags.insert("team".into(), "ml".into());
        assert!(roll_reasons(&a, &b).is_empty());
    }

    #[test]
    fn aks_rolls_on_driver_and_zones_gke_on_driver_image_and_set_zones() {
        let az = |driver: &str, zones: &[&str]| {
            group(
                NodeClass::Azure(AzureClass {
                    subnet: None,
                    zones: zones.iter().map(|z| z.to_string()).collect(),
                    os_sku: "Ubuntu".into(),
                    gpu_driver: driver.into(),
                    deallocate_evicted: false,
                    capacity_reservation_group: None,
                }),
                &["Standard_NC24ads_A100_v4"],
            )
        };
        assert!(roll_reasons(&az("Install", &["1", "2"]), &az("install", &["2", "1"])).is_empty());
        assert_eq!(
            roll_reasons(&az("Install", &["1"]), &az("None", &["1", "2"])).len(),
            2
        );
        let gc = |image: &str, driver: &str| {
            group(
                NodeClass::Gcp(GcpClass {
                    service_account: None,
                    locations: vec!["us-central1-a".into()],
                    image_type: image.into(),
                    driver_version: driver.into(),
                    ..Default::default()
                }),
                &["g2-standard-8"],
            )
        };
        assert_eq!(
            roll_reasons(
                &gc("COS_CONTAINERD", "DEFAULT"),
                &gc("UBUNTU_CONTAINERD", "DEFAULT")
            ),
            vec!["image COS_CONTAINERD → UBUNTU_CONTAINERD".to_string()]
        );
        // Unset node locations mean the cluster's: whatever is live, nothing rolls.
        let mut cluster_zones = gc("COS_CONTAINERD", "DEFAULT");
        if let NodeClass::Gcp(c) = &mut cluster_zones.class {
            c.locations.clear();
        }
        assert!(roll_reasons(&gc("COS_CONTAINERD", "DEFAULT"), &cluster_zones).is_empty());
        assert_eq!(
            roll_reasons(
                &gc("COS_CONTAINERD", "DEFAULT"),
                &gc("COS_CONTAINERD", "LATEST")
            )
            .len(),
            1
        );
        assert_eq!(
            roll_reasons(&az("Install", &[]), &gc("x", "y")),
            vec!["cloud differs".to_string()]
        );
    }
}
