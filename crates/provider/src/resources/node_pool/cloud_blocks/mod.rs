//! The pool's cloud blocks, one module per cloud (`aws {}`, `azure {}`, `gcp {}`): their
//! schema, their checks at plan (only on the pool's own cloud: the other blocks are
//! ignored, so one module can carry every cloud's settings), the node class they make and
//! their values read back from a live pool. Values are read in any letter case and always
//! compared in the cloud's own spelling, so `ubuntu` and `Ubuntu` are one value.

pub mod aws;
pub mod azure;
pub mod gcp;
mod spelling;

use gpu_core::model::NodeClass;
use gpu_core::offer::Cloud;
use tfplugin::{Diagnostics, Value};

/// The node class of pool `v` on `cloud`: its cloud block with that cloud's defaults;
/// `None` for a cloud without node groups (validation refuses those first).
pub fn node_class(v: &Value, cloud: Cloud) -> Option<NodeClass> {
    Some(match cloud {
        Cloud::Aws => NodeClass::Aws(aws::class(v)),
        Cloud::Azure => NodeClass::Azure(azure::azure_class(v)),
        Cloud::Gcp => NodeClass::Gcp(gcp::gcp_class(v)),
        Cloud::Cudo | Cloud::Nebius | Cloud::Hyperbolic => return None,
    })
}

/// Checks the block of the pool's own `cloud` (`aws`, `azure` or `gcp`; the others are
/// ignored) in `config`, at validate (`region` unknown: `None`) and again at plan.
pub fn check_own(config: &Value, cloud: Cloud, region: Option<&str>, d: &mut Diagnostics) {
    match cloud {
        Cloud::Aws => aws::check(config, d),
        Cloud::Azure => azure::check_azure(config, d),
        Cloud::Gcp => gcp::check_gcp(config, region, d),
        _ => {}
    }
}

/// One attribute of cloud block `block` in its canonical form (the cloud's spelling, sets
/// sorted), so that two spellings of one value compare equal.
fn canonical_attr(block: &str, attr: &str, v: &Value) -> Option<Vec<String>> {
    match block {
        "azure" => azure::canonical_attr(attr, v),
        "gcp" => gcp::canonical_attr(attr, v),
        _ => None,
    }
}

/// `proposed` with each `azure {}` / `gcp {}` attribute whose new spelling means the same
/// as the prior's (`ubuntu` for `Ubuntu`, zones in another order) set back to the prior's,
/// so the plan shows no change (rule 1: a spelling is never a change).
pub fn keep_prior_spelling(prior: &Value, proposed: &mut Value) {
    for name in ["azure", "gcp"] {
        let (Some(Value::Object(p)), Some(Value::Object(n))) =
            (prior.get_attr(name), proposed.get_attr(name))
        else {
            continue;
        };
        let mut kept = n.clone();
        for (attr, new) in n {
            let Some(old) = p.get(attr) else { continue };
            if old == new || old.is_null() || new.is_null() || !new.is_wholly_known() {
                continue;
            }
            let (a, b) = (
                canonical_attr(name, attr, old),
                canonical_attr(name, attr, new),
            );
            if a.is_some() && a == b {
                kept.insert(attr.clone(), old.clone());
            }
        }
        if let Value::Object(m) = proposed {
            m.insert(name.to_string(), Value::Object(kept));
        }
    }
}

/// The `azure {}` or `gcp {}` block of state `s` after reading `live` (the class of the
/// pool's first group): each attribute the state sets that no longer describes what is
/// live takes the live value (drift shows in the next plan); on import (no block yet) the
/// block holds what differs from the defaults, so a configuration that leaves the
/// defaults out plans no change.
pub fn block_from_live(s: &mut Value, live: &NodeClass, floor: Option<&NodeClass>) {
    let (name, pairs): (&str, Vec<(&str, Value)>) = match live {
        NodeClass::Azure(c) => ("azure", azure::live_pairs(c)),
        NodeClass::Gcp(c) => ("gcp", gcp::live_pairs(c, floor)),
        NodeClass::Aws(_) => return,
    };
    let prior = s.get_attr(name).filter(|b| !b.is_null()).cloned();
    let mut block = match &prior {
        Some(Value::Object(m)) => m.clone(),
        _ => Default::default(),
    };
    for (attr, live_value) in pairs {
        let old = block.get(attr).cloned().unwrap_or(Value::Null);
        let live_canon = canonical_attr(name, attr, &live_value);
        let is_default = match name {
            "azure" => azure::is_default(attr, live_canon.as_ref()),
            _ => gcp::is_default(attr, live_canon.as_ref()),
        };
        let new = if old.is_null() {
            if is_default { Value::Null } else { live_value }
        } else if canonical_attr(name, attr, &old) == live_canon
            || (live_value.is_null() && is_default)
        {
            old
        } else {
            live_value
        };
        block.insert(attr.to_string(), new);
    }
    let all_null = block.values().all(Value::is_null);
    let value = if prior.is_none() && all_null {
        Value::Null
    } else {
        Value::Object(block)
    };
    if let Value::Object(m) = s {
        m.insert(name.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::azure::*;
    use super::gcp::*;
    use super::*;
    use gpu_core::model::{AzureClass, GcpClass, Reservation};
    use gpu_core::seam::is_guid;

    fn pool_with(name: &str, block: Value) -> Value {
        Value::object([(name, block)])
    }

    fn errors(d: &Diagnostics) -> Vec<String> {
        d.0.iter()
            .map(|x| {
                let at = x.attribute.as_ref().map(ToString::to_string);
                format!("{} | {}", at.unwrap_or_default(), x.detail)
            })
            .collect()
    }

    #[test]
    fn azure_class_defaults_and_canonical_spellings() {
        assert_eq!(
            azure_class(&Value::object([("azure", Value::Null)])),
            AzureClass {
                subnet: None,
                zones: vec![],
                os_sku: "Ubuntu".into(),
                gpu_driver: "Install".into(),
                deallocate_evicted: false,
                capacity_reservation_group: None,
            }
        );
        let v = pool_with(
            "azure",
            Value::object([
                ("os_sku", Value::string("azurelinux")),
                ("gpu_driver", Value::string("NONE")),
                (
                    "zones",
                    Value::Set(vec![Value::string("3"), Value::string("1")]),
                ),
            ]),
        );
        let c = azure_class(&v);
        assert_eq!(
            (c.os_sku.as_str(), c.gpu_driver.as_str(), c.zones),
            ("AzureLinux", "None", vec!["1".to_string(), "3".to_string()])
        );
    }

    #[test]
    fn gcp_class_defaults_and_canonical_spellings() {
        let c = gcp_class(&Value::object([("gcp", Value::Null)]));
        assert_eq!(
            (
                c.image_type.as_str(),
                c.driver_version.as_str(),
                c.service_account
            ),
            ("COS_CONTAINERD", "DEFAULT", None)
        );
        let v = pool_with(
            "gcp",
            Value::object([
                ("image_type", Value::string("ubuntu_containerd")),
                ("gpu_driver_version", Value::string("Disabled")),
                (
                    "node_locations",
                    Value::Set(vec![
                        Value::string("us-central1-B"),
                        Value::string("us-central1-a"),
                    ]),
                ),
            ]),
        );
        let c = gcp_class(&v);
        assert_eq!(
            (c.image_type.as_str(), c.driver_version.as_str()),
            ("UBUNTU_CONTAINERD", "INSTALLATION_DISABLED")
        );
        assert_eq!(c.locations, ["us-central1-a", "us-central1-b"]);
    }

    #[test]
    fn bad_azure_values_name_their_attribute() {
        let v = pool_with(
            "azure",
            Value::object([
                ("subnet_id", Value::string("subnet-0123abcd")),
                ("zones", Value::Set(vec![Value::string("4")])),
                ("os_sku", Value::string("Windows2022")),
                ("gpu_driver", Value::string("cuda")),
            ]),
        );
        let mut d = Diagnostics::default();
        check_azure(&v, &mut d);
        let e = errors(&d);
        assert_eq!(e.len(), 4, "{e:#?}");
        for (path, word) in [
            ("azure.subnet_id", "ARM id"),
            ("azure.zones", "\"4\""),
            ("azure.os_sku", "`AzureLinux`"),
            ("azure.gpu_driver", "`install`"),
        ] {
            assert!(
                e.iter().any(|x| x.starts_with(path) && x.contains(word)),
                "{path}: {e:#?}"
            );
        }
    }

    #[test]
    fn good_azure_values_pass() {
        let v = pool_with(
            "azure",
            Value::object([
                (
                    "subnet_id",
                    Value::string(
                        "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/net/providers/microsoft.network/virtualNetworks/vnet/subnets/gpu",
                    ),
                ),
                (
                    "zones",
                    Value::Set(vec![Value::string("1"), Value::string("2")]),
                ),
                ("os_sku", Value::string("ubuntu2204")),
                ("gpu_driver", Value::string("Install")),
            ]),
        );
        let mut d = Diagnostics::default();
        check_azure(&v, &mut d);
        assert!(errors(&d).is_empty(), "{:#?}", errors(&d));
    }

    #[test]
    fn bad_gcp_values_name_their_attribute() {
        let v = pool_with(
            "gcp",
            Value::object([
                ("service_account", Value::string("gpu-nodes")),
                (
                    "node_locations",
                    Value::Set(vec![
                        Value::string("us-central1-a"),
                        Value::string("europe-west4-a"),
                    ]),
                ),
                ("image_type", Value::string("WINDOWS_LTSC_CONTAINERD")),
                ("gpu_driver_version", Value::string("550.54")),
            ]),
        );
        let mut d = Diagnostics::default();
        check_gcp(&v, Some("us-central1"), &mut d);
        let e = errors(&d);
        assert_eq!(e.len(), 4, "{e:#?}");
        for (path, word) in [
            ("gcp.service_account", "e-mail"),
            ("gcp.node_locations", "europe-west4-a"),
            ("gcp.image_type", "COS_CONTAINERD"),
            ("gcp.gpu_driver_version", "`latest`"),
        ] {
            assert!(
                e.iter().any(|x| x.starts_with(path) && x.contains(word)),
                "{path}: {e:#?}"
            );
        }
        // While the region is unknown (validate), zones wait; the rest is still checked.
        let mut d = Diagnostics::default();
        check_gcp(&v, None, &mut d);
        let e = errors(&d);
        assert_eq!(e.len(), 3, "{e:#?}");
        assert!(
            !e.iter().any(|x| x.starts_with("gcp.node_locations")),
            "{e:#?}"
        );
    }

    #[test]
    fn shapes() {
        assert!(is_email("gpu@p.iam.gserviceaccount.com"));
        assert!(!is_email("gpu@localhost"));
        assert!(!is_email("a b@c.d"));
        assert!(is_zone_in("US-CENTRAL1-F", "us-central1"));
        assert!(!is_zone_in("us-central1", "us-central1"));
        assert!(!is_zone_in("us-central10-a", "us-central1"));
        assert!(is_guid("00000000-0000-0000-0000-00000000abcd"));
        assert!(!is_guid("0000-0000"));
    }

    #[test]
    fn another_spelling_of_a_block_value_keeps_the_prior_one() {
        let prior = pool_with(
            "azure",
            Value::object([
                ("os_sku", Value::string("Ubuntu")),
                (
                    "zones",
                    Value::Set(vec![Value::string("1"), Value::string("2")]),
                ),
                ("gpu_driver", Value::string("install")),
                ("subnet_id", Value::Null),
            ]),
        );
        let mut proposed = pool_with(
            "azure",
            Value::object([
                ("os_sku", Value::string("ubuntu")),
                (
                    "zones",
                    Value::Set(vec![Value::string("2"), Value::string("1")]),
                ),
                ("gpu_driver", Value::string("None")),
                ("subnet_id", Value::Null),
            ]),
        );
        keep_prior_spelling(&prior, &mut proposed);
        let b = proposed.get_attr("azure").unwrap();
        assert_eq!(b.get_attr("os_sku").and_then(Value::as_str), Some("Ubuntu"));
        assert_eq!(
            b.get_attr("zones"),
            prior.get_attr("azure").unwrap().get_attr("zones")
        );
        // A real change stays a change.
        assert_eq!(
            b.get_attr("gpu_driver").and_then(Value::as_str),
            Some("None")
        );
    }

    #[test]
    fn live_block_keeps_the_users_spelling_shows_drift_and_imports_only_non_defaults() {
        let live = NodeClass::Gcp(GcpClass {
            image_type: "UBUNTU_CONTAINERD".into(),
            driver_version: "DEFAULT".into(),
            locations: vec!["us-central1-a".into()],
            ..Default::default()
        });
        // Import: no block yet; only what differs from the defaults is written.
        let mut s = Value::object([("gcp", Value::Null)]);
        block_from_live(&mut s, &live, None);
        let b = s.get_attr("gcp").unwrap();
        assert_eq!(
            b.get_attr("image_type").and_then(Value::as_str),
            Some("UBUNTU_CONTAINERD")
        );
        assert!(b.get_attr("gpu_driver_version").unwrap().is_null());
        assert!(
            b.get_attr("node_locations").unwrap().is_null(),
            "the cluster's"
        );
        // The user's spelling stays while it means what is live; drift shows.
        let mut s = pool_with(
            "gcp",
            Value::object([
                ("image_type", Value::string("ubuntu_containerd")),
                ("gpu_driver_version", Value::string("latest")),
                ("node_locations", Value::Null),
                ("service_account", Value::Null),
            ]),
        );
        block_from_live(&mut s, &live, None);
        let b = s.get_attr("gcp").unwrap();
        assert_eq!(
            b.get_attr("image_type").and_then(Value::as_str),
            Some("ubuntu_containerd")
        );
        assert_eq!(
            b.get_attr("gpu_driver_version").and_then(Value::as_str),
            Some("default")
        );
        // All defaults on import: no block at all.
        let mut s = Value::object([("azure", Value::Null)]);
        block_from_live(&mut s, &NodeClass::Azure(azure_class(&Value::Null)), None);
        assert!(s.get_attr("azure").unwrap().is_null());
    }

    #[test]
    fn reservation_affinity_is_checked_and_read_into_the_gke_class() {
        let gcp = |pairs: Vec<(&str, &str)>| {
            pool_with(
                "gcp",
                Value::object(pairs.into_iter().map(|(k, v)| (k, Value::string(v)))),
            )
        };
        let check = |v: &Value| {
            let mut d = Diagnostics::new();
            check_own(v, Cloud::Gcp, Some("us-central1"), &mut d);
            errors(&d)
        };
        let ok = gcp(vec![
            ("reservation_affinity", "Specific"),
            ("reservation_name", "h100-floor"),
        ]);
        assert!(check(&ok).is_empty(), "{:?}", check(&ok));
        assert_eq!(
            gcp_class(&ok).reservation,
            Some(Reservation::Specific("h100-floor".into()))
        );
        assert_eq!(
            gcp_class(&gcp(vec![("reservation_affinity", "none")])).reservation,
            Some(Reservation::None)
        );
        assert_eq!(gcp_class(&gcp(vec![])).reservation, None);
        for (pairs, says) in [
            (
                vec![("reservation_affinity", "specific")],
                "gcp.reservation_affinity | `gcp.reservation_affinity = \"specific\"` needs",
            ),
            (
                vec![("reservation_name", "h100-floor")],
                "gcp.reservation_name | `gcp.reservation_name` is used only",
            ),
            (
                vec![("reservation_affinity", "all")],
                "gcp.reservation_affinity | `gcp.reservation_affinity` is \"all\"",
            ),
            (
                vec![
                    ("reservation_affinity", "specific"),
                    ("reservation_name", "H100_Floor"),
                ],
                "gcp.reservation_name | `gcp.reservation_name` is \"H100_Floor\"",
            ),
        ] {
            let errs = check(&gcp(pairs));
            assert!(errs.iter().any(|e| e.starts_with(says)), "{says}: {errs:?}");
        }
    }
}
