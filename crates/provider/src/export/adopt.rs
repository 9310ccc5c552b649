//! Each inventory item that has a resource form, taken through the provider's own
//! `ImportResourceState` and `ReadResource` (what `terraform import` runs) and turned into
//! the configuration that adopts it with an empty plan after. Read-only: import and read
//! never change anything in a cloud.

use std::collections::BTreeSet;
use std::sync::Arc;

use gpu_core::inventory::{Item, ItemKind};
use tfplugin::{Diagnostics, Provider as _, Router, Schema, Severity};

use super::config_body::{ConfigBody, config_body};
use crate::provider::GpuProvider;

/// A resource to write: its type, its label, the import id and its configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// `gpu_node_pool`, `gpu_instance` or `gpu_commitment`.
    pub type_name: String,
    /// The resource's label (unique within its type).
    pub label: String,
    /// The id its `import` block takes.
    pub import_id: String,
    /// `cloud/region` (and cluster) it was found at, for the reader.
    pub found_at: String,
    /// What the configuration writes.
    pub body: ConfigBody,
    /// What the user must still do: sensitive values to write, validation errors.
    pub notes: Vec<String>,
}

/// An item not written, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Left {
    /// What it is, e.g. `node_pool their-l4 in projects/p/locations/r/clusters/c`.
    pub what: String,
    /// Why it is not written.
    pub why: String,
}

/// The resource type an item kind is managed by.
pub fn type_name(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::NodePool => "gpu_node_pool",
        ItemKind::Instance => "gpu_instance",
        ItemKind::Commitment => "gpu_commitment",
    }
}

fn describe(item: &Item) -> String {
    let place = item.cluster.as_deref().unwrap_or(item.region.as_str());
    format!(
        "{} {} in {} {}",
        item.kind.as_str(),
        item.name,
        item.cloud.as_str(),
        place
    )
}

/// The diagnostics' errors on one line each, `summary: detail`.
fn errors(d: &Diagnostics) -> Option<String> {
    let lines: Vec<String> =
        d.0.iter()
            .filter(|x| x.severity == Severity::Error)
            .map(|x| format!("{}: {}", x.summary, x.detail))
            .collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// A Terraform label made of `name`: letters, digits, `_` and `-`, starting with a letter
/// or `_`; never empty.
pub fn label_of(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

/// Every item with an import id, adopted through `router`, one resource per import id
/// (a pool's node groups are one resource); the rest, and those the provider cannot
/// read, as [`Left`].
pub async fn adopt(
    router: &Router<Arc<GpuProvider>>,
    items: &[Item],
) -> (Vec<Exported>, Vec<Left>) {
    let schemas = router.schemas();
    let mut done: BTreeSet<(String, String)> = BTreeSet::new();
    let mut labels: BTreeSet<(String, String)> = BTreeSet::new();
    let mut exported = Vec::new();
    let mut left = Vec::new();
    for item in items {
        let type_name = type_name(item.kind);
        let Some(id) = &item.import_id else {
            let why = match item.kind {
                ItemKind::Instance => {
                    "a VM the provider did not make (it carries no `gpu.tf/instance` tag or `gpu-tf-instance` label); a `gpu_instance` adopts only its own VMs, so manage it where it was made"
                }
                _ => {
                    "not made by the provider, and no resource of it takes this shape (a `gpu_node_pool` is the node groups it names itself); manage it where it was made"
                }
            };
            left.push(Left {
                what: describe(item),
                why: why.into(),
            });
            continue;
        };
        if !done.insert((type_name.to_string(), id.clone())) {
            continue;
        }
        let Some(schema) = schemas.resources.get(type_name) else {
            continue;
        };
        match adopt_one(router, type_name, id, schema, item.cloud).await {
            Ok((body, notes)) => {
                // A pool is named by its import id's last part (its groups are
                // `<name>-od`, `<name>-spot`); the rest by the cloud's name.
                let name = match item.kind {
                    ItemKind::NodePool => id.rsplit('/').next().unwrap_or(&item.name),
                    _ => &item.name,
                };
                let base = label_of(name);
                let mut label = base.clone();
                let mut n = 2;
                while !labels.insert((type_name.to_string(), label.clone())) {
                    label = format!("{base}_{n}");
                    n += 1;
                }
                exported.push(Exported {
                    type_name: type_name.to_string(),
                    label,
                    import_id: id.clone(),
                    found_at: describe(item),
                    body,
                    notes,
                });
            }
            Err(why) => left.push(Left {
                what: describe(item),
                why,
            }),
        }
    }
    (exported, left)
}

/// Import and read `id` as `type_name`; the configuration body and its notes.
async fn adopt_one(
    router: &Router<Arc<GpuProvider>>,
    type_name: &str,
    id: &str,
    schema: &Schema,
    cloud: gpu_core::offer::Cloud,
) -> Result<(ConfigBody, Vec<String>), String> {
    let state = router.read_by_id(type_name, id).await.map_err(|d| {
        format!(
            "{id}: {}",
            errors(&d).unwrap_or_else(|| "nothing read".into())
        )
    })?;
    let generated = router.config_of_state(type_name, &state).await;
    let mut notes: Vec<String> = generated
        .withheld
        .iter()
        .map(|path| format!("`{path}` is sensitive and not written here: write it yourself"))
        .collect();
    if type_name == "gpu_instance" {
        notes.push(format!(
            "no cloud reports these back about a VM: {}. Write the ones the VM was made with; the first plan takes them as written without touching the VM",
            crate::resources::instance::import::NOT_READABLE
                .iter()
                .filter(|n| !["gpu", "gpu_count", "image"].contains(n))
                // Of the cloud blocks, only the VM's own cloud's applies.
                .filter(|n| !["aws", "azure", "gcp"].contains(n) || **n == cloud.as_str())
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(e) = errors(&generated.validation) {
        notes.push(format!("validate: {e}"));
    }
    let body = config_body(&generated.config, &schema.block);
    Ok((body, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_terraform_identifiers() {
        assert_eq!(label_of("train-od"), "train-od");
        assert_eq!(label_of("cr-0abc"), "cr-0abc");
        assert_eq!(label_of("9lives"), "_9lives");
        assert_eq!(label_of("My Pool/x"), "my_pool_x");
        assert_eq!(label_of(""), "_");
    }
}
