//! `ImportResourceState` for `gpu_instance`: the import id parsed (by the cloud whose shape
//! it has, `cloud_blocks`) into a minimal state the read that follows fills from the cloud.
//! One id per cloud, each the resource's own `id` (AWS with its region in front, as an
//! instance id does not name one):
//! - `aws/<region>/<i-…>`;
//! - an Azure VM's ARM id `/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>`;
//! - a Compute Engine instance `projects/<p>/zones/<z>/instances/<name>`.
//!
//! What no cloud reports back (`gpu`, `user_data`, the SSH key, subnets, the service
//! account) is taken from the configuration at the first plan after the import, without a
//! roll ([`IMPORTED`] in private state says so); everything the cloud does report is read.

use gpu_core::catalog::Catalog;
use gpu_core::pool::spelling;
use tfplugin::{Type, Value};

use super::cloud_blocks::{self, ImportContext};
use super::model::InstanceModel;

/// The shapes of import ids, for the identity's description.
pub const ID_SHAPES: &str =
    "`aws/<region>/<i-…>`, an Azure VM's ARM id, or `projects/<p>/zones/<z>/instances/<name>`";

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

/// The state an import starts from: every attribute of `object` null but the cloud,
/// region, id (and zone and the project or resource group the id names; a project only
/// when it is not the provider's `gcp_project`).
pub fn import_state(
    id: &str,
    object: &Type,
    azure_subscription: Option<&str>,
    gcp_project: Option<&str>,
) -> Result<Value, String> {
    let t = cloud_blocks::parse_import(
        id,
        ImportContext {
            azure_subscription,
            gcp_project,
        },
    )?;
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
