//! `ImportResourceState` for `gpu_instance`: the import id parsed into a minimal state the
//! read that follows fills from the cloud. One id per cloud, each the resource's own `id`
//! (AWS with its region in front, as an instance id does not name one):
//! - `aws/<region>/<i-…>`;
//! - an Azure VM's ARM id `/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>`;
//! - a Compute Engine instance `projects/<p>/zones/<z>/instances/<name>`.
//!
//! What no cloud reports back (`gpu`, `user_data`, the SSH key, subnets, the service
//! account) is taken from the configuration at the first plan after the import, without a
//! roll ([`IMPORTED`] in private state says so); everything the cloud does report is read.

use gpu_core::catalog::Catalog;
use gpu_core::clouds::aws::instance_rules as aws_rules;
use gpu_core::clouds::azure::instance_rules as azure_rules;
use gpu_core::clouds::gcp::instance_rules as gcp_rules;
use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use tfplugin::{Type, Value};

use super::model::InstanceModel;

/// Private state of an instance just imported: the next plan takes what the cloud does
/// not report from the configuration instead of rolling the VM.
pub const IMPORTED: &[u8] = b"gpu_instance:imported";

/// Inputs no cloud reports back about a VM: taken from the configuration after import.
pub const NOT_READABLE: &[&str] = &[
    "gpu",
    "gpu_count",
    "image",
    "user_data",
    "aws",
    "azure",
    "gcp",
];

fn unset(v: Option<&Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.as_str().is_some_and(str::is_empty))
}

/// `prior` (an imported instance's state) with what the cloud does not report taken from
/// `planned`, and the names taken. `gpu` and `gpu_count` are taken only when the VM's
/// instance type has those GPUs in the catalog (otherwise they are a real change); a
/// block's fields one by one, so a resource group or project the id named still counts.
pub fn adopt(prior: &Value, planned: &Value, catalog: &Catalog) -> (Value, Vec<String>) {
    let mut out = prior.clone();
    let mut taken = Vec::new();
    let Value::Object(m) = &mut out else {
        return (out, taken);
    };
    let (prior_m, planned_m) = (InstanceModel::of(prior), InstanceModel::of(planned));
    for n in NOT_READABLE {
        let (p, new) = (prior.get_attr(n), planned.get_attr(n));
        if unset(new) {
            continue;
        }
        if matches!(*n, "gpu" | "gpu_count") && !gpus_match(&prior_m, &planned_m, catalog) {
            continue;
        }
        match (p, new) {
            (Some(Value::Object(pb)), Some(Value::Object(nb))) => {
                let mut merged = pb.clone();
                for (k, v) in nb {
                    if unset(pb.get(k)) && !unset(Some(v)) {
                        merged.insert(k.clone(), v.clone());
                        taken.push(format!("{n}.{k}"));
                    }
                }
                m.insert(n.to_string(), Value::Object(merged));
            }
            (p, Some(v)) if unset(p) => {
                m.insert(n.to_string(), v.clone());
                taken.push(n.to_string());
            }
            _ => {}
        }
    }
    (out, taken)
}

/// Whether the catalog has `prior`'s instance type (in its cloud, and its region when
/// known) with the GPUs `planned` writes (`gpu_count` 1 when unset).
fn gpus_match(prior: &InstanceModel, planned: &InstanceModel, catalog: &Catalog) -> bool {
    let cloud = prior.cloud.known().and_then(|c| spelling::cloud(c));
    let region = prior.region.known().map_or("", String::as_str);
    let ty = prior.instance_type.known();
    let gpu = planned.gpu.known().and_then(|g| spelling::gpu(g));
    let count = planned.gpu_count.known().map_or(1, |n| *n as u32);
    catalog.offers().iter().any(|o| {
        Some(o.cloud) == cloud
            && ty.is_some_and(|t| o.instance_type.eq_ignore_ascii_case(t))
            && (region.is_empty() || o.region.eq_ignore_ascii_case(region))
            && gpu == Some(o.gpu.name)
            && o.gpu_count == Some(f64::from(count))
    })
}

/// The shapes of import ids, for messages.
fn shapes() -> String {
    format!(
        "\"aws/<region>/<instance-id>\", an Azure VM's ARM id (\"{}\") or \"{}\"",
        azure_rules::VM_ID_SHAPE,
        gcp_rules::INSTANCE_PATH_SHAPE
    )
}

/// Where an import id points.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    cloud: Cloud,
    id: String,
    region: String,
    zone: Option<String>,
    /// `(block, attribute, value)` to write into the cloud's block.
    block: Option<(&'static str, &'static str, String)>,
}

fn parse(id: &str, azure_subscription: Option<&str>) -> Result<Target, String> {
    let id = id.trim();
    let bad = |why: &str| format!("{id:?} {why}; write {}", shapes());
    if let Some(rest) = id.strip_prefix("aws/") {
        let (region, instance) = rest
            .split_once('/')
            .ok_or_else(|| bad("names no instance"))?;
        if !aws_rules::is_instance_id(instance) {
            return Err(bad(&format!(
                "does not end in {}",
                aws_rules::INSTANCE_ID_TEXT
            )));
        }
        let region = spelling::region(Some(Cloud::Aws), region);
        if region.is_empty() || region.contains('/') {
            return Err(bad("names no region"));
        }
        return Ok(Target {
            cloud: Cloud::Aws,
            id: instance.to_string(),
            region,
            zone: None,
            block: None,
        });
    }
    if id.starts_with('/') {
        return match azure_rules::parse_vm_id(id) {
            Some((sub, rg, _)) => {
                match azure_subscription {
                    Some(mine) if mine.eq_ignore_ascii_case(sub) => {}
                    Some(mine) => {
                        return Err(format!(
                            "{id:?} is in subscription {sub}; the provider's `azure.subscription_id` is {mine}: import it with a provider configured for {sub}"
                        ));
                    }
                    None => {
                        return Err(format!(
                            "{id:?} is an Azure VM: set the provider's `azure.subscription_id` ({sub})"
                        ));
                    }
                }
                Ok(Target {
                    cloud: Cloud::Azure,
                    id: id.to_string(),
                    region: String::new(), // read from the VM's location
                    zone: None,
                    block: Some(("azure", "resource_group", rg.to_string())),
                })
            }
            None => Err(bad("is not an Azure VM's ARM id")),
        };
    }
    match gcp_rules::parse_instance_path(id) {
        Some((project, zone, region, _)) => Ok(Target {
            cloud: Cloud::Gcp,
            id: id.to_string(),
            region: region.to_string(),
            zone: Some(zone.to_string()),
            block: Some(("gcp", "project", project.to_string())),
        }),
        None => Err(bad("is not an import id of gpu_instance")),
    }
}

/// The state an import starts from: every attribute of `object` null but the cloud,
/// region, id (and zone and the project or resource group the id names; a project only
/// when it is not the provider's `gcp_project`).
pub fn import_state(
    id: &str,
    object: &Type,
    azure_subscription: Option<&str>,
    gcp_project: Option<&str>,
) -> Result<Value, String> {
    let mut t = parse(id, azure_subscription)?;
    // The provider's own project is what an unset `gcp.project` means: no block needed.
    if matches!(&t.block, Some(("gcp", "project", p)) if Some(p.as_str()) == gcp_project) {
        t.block = None;
    }
    let Type::Object(o) = object else {
        return Err("gpu_instance's schema is not an object".into());
    };
    let mut state = std::collections::BTreeMap::new();
    for name in o.attributes.keys() {
        state.insert(name.clone(), Value::Null);
    }
    state.insert("cloud".into(), Value::string(t.cloud.as_str()));
    state.insert("region".into(), Value::string(t.region));
    state.insert("id".into(), Value::string(t.id));
    state.insert("reclaims".into(), Value::number(0));
    if let Some(z) = t.zone {
        state.insert("zone".into(), Value::string(z));
    }
    if let Some((block, attr, value)) = t.block
        && let Some(Type::Object(b)) = o.attributes.get(block)
    {
        let mut fields = std::collections::BTreeMap::new();
        for name in b.attributes.keys() {
            fields.insert(name.clone(), Value::Null);
        }
        fields.insert(attr.to_string(), Value::string(value));
        state.insert(block.to_string(), Value::Object(fields));
    }
    Ok(Value::Object(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cloud_s_id_parses_and_a_wrong_one_says_the_shapes() {
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
}
