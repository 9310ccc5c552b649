//! List resources (`terraform query`, Terraform 1.14 and later) for the three managed
//! types: a `list "gpu_node_pool" "x" { provider = gpu  config { … } }` block lists what
//! the inventory finds of that kind (the same filters as `gpu_inventory`), each object
//! by its identity (its import id). Only objects a resource of this provider can adopt
//! are listed (node groups and VMs the provider did not make are not, and those VMs are
//! not even read: `inventory::list_ours`); reading each object's
//! state and writing configuration for it is the router's (tfplugin).

use std::sync::Arc;

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use gpu_core::inventory::{Item, ItemKind};
use tfplugin::list::{Found, ListRequest, Listing};
use tfplugin::resource::ValidateRequest;
use tfplugin::schema::{Attribute, Block};
use tfplugin::{Diagnostic, Diagnostics, ListResource, Schema, Type, Value};

use crate::data_sources::inventory;
use crate::resources::commitment::resource::CommitmentProvider;

/// The list resource of one managed type, over the inventory.
#[derive(Debug, Clone)]
pub struct EstateList {
    kind: ItemKind,
    provider: Arc<dyn CommitmentProvider>,
}

impl EstateList {
    /// The list resource of the managed type of `kind`, configured through `provider`.
    pub fn new(kind: ItemKind, provider: Arc<dyn CommitmentProvider>) -> Self {
        EstateList { kind, provider }
    }

    /// The inventory arguments a `config` block stands for: its filters and this kind.
    fn inventory_config(&self, config: &Value) -> Value {
        let attr = |name: &str| config.get_attr(name).cloned().unwrap_or(Value::Null);
        Value::object([
            ("clouds", attr("clouds")),
            ("regions", attr("regions")),
            ("clusters", attr("clusters")),
            (
                "kinds",
                Value::List(vec![Value::string(self.kind.as_str())]),
            ),
            ("group_by", Value::Null),
        ])
    }
}

fn strings(name: &str, what: &str) -> Attribute {
    Attribute::optional(name, Type::list(Type::String)).describe(what)
}

/// A short name a person knows the object by.
fn display_name(item: &Item, import_id: &str) -> String {
    match item.kind {
        ItemKind::NodePool => {
            let pool = import_id.rsplit('/').next().unwrap_or(&item.name);
            let cluster = item.cluster.as_deref().unwrap_or_default();
            format!("{pool} in {cluster}")
        }
        // An Azure capacity reservation's name is its ARM id: its own name is the last part.
        _ => {
            let name = item.name.rsplit('/').next().unwrap_or(&item.name);
            format!("{name} in {} {}", item.cloud.as_str(), item.region)
        }
    }
}

#[async_trait]
impl ListResource for EstateList {
    fn type_name(&self) -> &str {
        crate::export::adopt::type_name(self.kind)
    }

    fn schema(&self) -> Schema {
        let clusters = "Cluster cloud ids whose node groups are listed: EKS cluster ARNs, AKS clusters' ARM ids, GKE `projects/<p>/locations/<l>/clusters/<name>`.";
        let mut block = Block::new(format!(
            "What to list: the same filters as the `gpu_inventory` data source. Lists what a `{}` can adopt, each by its identity (`import_id`).",
            self.type_name()
        ))
        .attribute(strings(
            "clouds",
            "Clouds to read: `aws`, `azure`, `gcp` (default: every cloud the provider block names an account for).",
        ))
        .attribute(strings(
            "regions",
            "Region globs (`us-*`) or groups (`europe`, `us`, `asia`); default every region with GPUs in the catalog.",
        ));
        block = match self.kind {
            ItemKind::NodePool => block.attribute(
                Attribute::required("clusters", Type::list(Type::String)).describe(clusters),
            ),
            _ => block,
        };
        Schema::new(block)
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        let config = request.config();
        if !config.is_wholly_known() {
            return Diagnostics::new();
        }
        inventory::check_arguments(&self.inventory_config(config), Catalog::embedded())
    }

    async fn list(&self, request: ListRequest) -> Listing {
        let settings = self.provider.commitment_settings();
        let config = self.inventory_config(&request.config);
        let found = match inventory::list_ours(&config, &settings.clouds, Catalog::embedded()).await
        {
            Ok(found) => found,
            Err(diagnostics) => {
                return Listing {
                    found: Vec::new(),
                    diagnostics,
                };
            }
        };
        let mut listing = Listing::default();
        for u in &found.unread {
            listing.diagnostics.push(Diagnostic::warning(
                format!("Cannot read {}", u.what),
                format!("{}. The listing goes on without it.", u.why),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for item in &found.items {
            // A pool's node groups share one import id: one object.
            let Some(id) = &item.import_id else { continue };
            if !seen.insert(id.clone()) {
                continue;
            }
            let Some(identity) = crate::resources::identity::of(Some(id.clone())) else {
                continue;
            };
            listing.found.push(Found {
                identity,
                display_name: display_name(item, id),
            });
            if listing.found.len() >= request.limit {
                break;
            }
        }
        listing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_core::offer::Cloud;

    fn item(kind: ItemKind, name: &str, cluster: Option<&str>) -> Item {
        Item {
            kind,
            cloud: Cloud::Azure,
            region: "eastus".into(),
            cluster: cluster.map(str::to_string),
            name: name.into(),
            managed: true,
            gpu: None,
            gpu_count: None,
            nodes: 1,
            capacity: "on_demand".into(),
            hourly_usd: None,
            monthly_usd: None,
            labels: Default::default(),
            import_id: None,
            price_source: String::new(),
            used_instances: None,
            utilization: None,
            idle_monthly_usd: None,
        }
    }

    #[test]
    fn display_names_are_the_names_people_know() {
        let arm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/capacityReservationGroups/g/capacityReservations/hold";
        let c = item(ItemKind::Commitment, arm, None);
        assert_eq!(
            display_name(&c, "azure_capacity_reservation/eastus/rg/g/hold"),
            "hold in azure eastus"
        );
        let p = item(
            ItemKind::NodePool,
            "train-od",
            Some("/subscriptions/s/…/managedClusters/aks"),
        );
        assert_eq!(
            display_name(&p, "azure/s/rg/aks/train"),
            "train in /subscriptions/s/…/managedClusters/aks",
            "a pool by its own name, not its node group's"
        );
    }
}
