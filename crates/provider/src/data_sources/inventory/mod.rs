//! `gpu_inventory`: the GPU node groups of the clusters named, the GPU VMs (ours or not) and
//! every commitment in the regions asked, read live from the clouds (nothing kept
//! anywhere else), priced from the catalog, and totalled by cloud and by label.
//! `args` (checked arguments), `listing` (the clouds' listing calls), this file (schema,
//! values, glue).

mod args;
mod listing;

use std::sync::Arc;

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use gpu_core::inventory::{Item, Total, totals};
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::resource::{ReadDataRequest, ValidateRequest};
use tfplugin::schema::{Attribute, Block};
use tfplugin::{DataSource, Diagnostic, Diagnostics, Schema, Type, Value};

use crate::clouds::Clouds;
use crate::resources::commitment::resource::CommitmentProvider;

use args::check;

/// What an inventory found: the items, the places it could not read, and the label keys
/// to total by.
pub struct Found {
    /// Everything listed.
    pub items: Vec<Item>,
    /// Places not read, each a warning.
    pub unread: Vec<gpu_core::inventory::Unread>,
    /// `group_by`.
    pub group_by: Vec<String>,
}

/// Lists what `config` (the data source's arguments) asks through `clouds`: the data
/// source and `report spend` share it. Without `clouds`, a cloud whose account the
/// provider settings do not name is left out.
pub async fn list(
    config: &Value,
    clouds: &Clouds,
    catalog: &Catalog,
) -> Result<Found, Diagnostics> {
    list_as(config, clouds, catalog, false).await
}

/// [`list`] of only what the provider made (the VMs it did not make are not read): what
/// its list resources can adopt. Node groups and commitments are listed as by [`list`].
pub async fn list_ours(
    config: &Value,
    clouds: &Clouds,
    catalog: &Catalog,
) -> Result<Found, Diagnostics> {
    list_as(config, clouds, catalog, true).await
}

async fn list_as(
    config: &Value,
    clouds: &Clouds,
    catalog: &Catalog,
    ours_only: bool,
) -> Result<Found, Diagnostics> {
    let mut listing = check(config, catalog)?;
    listing.ours_only = ours_only;
    if config.get_attr("clouds").is_none_or(Value::is_null) {
        listing.clouds.retain(|c| match c {
            gpu_core::offer::Cloud::Azure => clouds.azure_subscription().is_some(),
            gpu_core::offer::Cloud::Gcp => clouds.gcp_project().is_some(),
            _ => true,
        });
        listing.regions.retain(|(c, _)| listing.clouds.contains(c));
    }
    let (items, unread) = listing::read(&listing, clouds, catalog).await;
    Ok(Found {
        items,
        unread,
        group_by: listing.group_by,
    })
}

/// The problems with inventory arguments `config` (wholly known), each on its attribute.
pub fn check_arguments(config: &Value, catalog: &Catalog) -> Diagnostics {
    check(config, catalog).err().unwrap_or_default()
}

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_inventory";

fn item_type() -> Type {
    Type::object([
        ("kind", Type::String),
        ("cloud", Type::String),
        ("region", Type::String),
        ("cluster", Type::String),
        ("name", Type::String),
        ("managed", Type::Bool),
        ("gpu", Type::String),
        ("gpu_count", Type::Number),
        ("nodes", Type::Number),
        ("capacity", Type::String),
        ("hourly_usd", Type::Number),
        ("monthly_usd", Type::Number),
        ("labels", Type::map(Type::String)),
        ("import_id", Type::String),
        ("price_source", Type::String),
        ("used_instances", Type::Number),
        ("utilization", Type::Number),
        ("idle_monthly_usd", Type::Number),
    ])
}

fn total_type() -> Type {
    Type::object([
        ("cloud", Type::String),
        ("group", Type::map(Type::String)),
        ("monthly_usd", Type::Number),
        ("idle_commitment_monthly_usd", Type::Number),
        ("unpriced", Type::Number),
    ])
}

/// The schema of `gpu_inventory`.
pub fn schema() -> Schema {
    let list = || Type::list(Type::String);
    Schema::new(
        Block::new("What runs on GPUs across the clouds, read live: the GPU node groups of the clusters in `clusters` (the provider's and others with GPU machine types), the VMs with a GPU machine type (the provider's and others), and every commitment (capacity blocks and reservations, committed use, Azure reservations and capacity reservations) in the regions asked, priced from the catalog and totalled by cloud and by the labels in `group_by`. Read-only. A place the credentials cannot read is a warning naming it; the rest is listed. Money never counts a GPU-hour twice: node groups and VMs are priced as they run, and a commitment counts only its idle share.")
            .attribute(Attribute::optional("clouds", list()).describe("Clouds to read: `aws`, `azure`, `gcp`. Default: AWS, plus Azure when the provider block sets `azure.subscription_id` and Google Cloud when it sets `gcp.project`."))
            .attribute(Attribute::optional("regions", list()).describe("Regions to list VMs and commitments in: globs (`us-*`) or region groups (`europe`, `us`, `asia`), matched against the catalog's GPU regions. Default: every one (one listing call per region on AWS). After a cloud's first failure its later regions are not asked (the warning says how many)."))
            .attribute(Attribute::optional("clusters", list()).describe("Clusters whose node groups are listed, by the cloud's id: an EKS cluster ARN, an AKS cluster's ARM id, a GKE cluster path (`projects/<p>/locations/<l>/clusters/<n>`). Default: none (no node groups)."))
            .attribute(Attribute::optional("kinds", list()).describe("What to list: `node_pool`, `instance`, `commitment` (default all)."))
            .attribute(Attribute::optional("group_by", list()).describe("Label (tag) keys `totals` are grouped by, default `[\"team\", \"project\"]`."))
            .attribute(Attribute::computed("items", Type::list(item_type())).describe("Each thing found: `kind`, `cloud`, `region`, `cluster` (node groups), `name` (the cloud's name; a commitment's id), `managed` (made by this provider), `gpu`, `gpu_count` (per node), `nodes` (running; a commitment's reserved instances), `capacity` (`on_demand`, `spot`, `reserved`), `hourly_usd` and `monthly_usd` (as it runs; a commitment's idle share; null when unpriced), `labels`, `import_id` (for `terraform import`, where the provider has a resource for it), `price_source`, and for commitments `used_instances`, `utilization`, `idle_monthly_usd` (null where the cloud cannot say)."))
            .attribute(Attribute::computed("totals", Type::list(total_type())).describe("Money per cloud and `group_by` values: `cloud`, `group` (each key and its value, `\"\"` where an item lacks the label), `monthly_usd`, `idle_commitment_monthly_usd` (part of `monthly_usd`), `unpriced` (items without a price, not counted).")),
    )
}

fn num(x: Option<f64>) -> Value {
    x.map_or(Value::Null, |v| {
        Value::number((v * 10_000.0).round() / 10_000.0)
    })
}

fn text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, Value::string)
}

fn item_value(i: &Item) -> Value {
    Value::object([
        ("kind", Value::string(i.kind.as_str())),
        ("cloud", Value::string(i.cloud.as_str())),
        ("region", Value::string(&i.region)),
        ("cluster", text(i.cluster.as_deref())),
        ("name", Value::string(&i.name)),
        ("managed", Value::Bool(i.managed)),
        ("gpu", text(i.gpu.as_deref())),
        ("gpu_count", i.gpu_count.map_or(Value::Null, Value::number)),
        ("nodes", Value::number(i.nodes)),
        ("capacity", Value::string(&i.capacity)),
        ("hourly_usd", num(i.hourly_usd)),
        (
            "monthly_usd",
            num(i.monthly_usd.map(|m| (m * 100.0).round() / 100.0)),
        ),
        (
            "labels",
            Value::map(i.labels.iter().map(|(k, v)| (k.as_str(), Value::string(v)))),
        ),
        ("import_id", text(i.import_id.as_deref())),
        ("price_source", Value::string(&i.price_source)),
        (
            "used_instances",
            i.used_instances.map_or(Value::Null, Value::number),
        ),
        ("utilization", num(i.utilization)),
        (
            "idle_monthly_usd",
            num(i.idle_monthly_usd.map(|m| (m * 100.0).round() / 100.0)),
        ),
    ])
}

fn total_value(t: &Total) -> Value {
    let cents = |x: f64| Value::number((x * 100.0).round() / 100.0);
    Value::object([
        ("cloud", Value::string(t.cloud.as_str())),
        (
            "group",
            Value::map(t.group.iter().map(|(k, v)| (k.as_str(), Value::string(v)))),
        ),
        ("monthly_usd", cents(t.monthly_usd)),
        (
            "idle_commitment_monthly_usd",
            cents(t.idle_commitment_monthly_usd),
        ),
        ("unpriced", Value::number(t.unpriced)),
    ])
}

/// The data source, configured through the provider block.
#[derive(Debug, Clone)]
pub struct Inventory {
    provider: Arc<dyn CommitmentProvider>,
}

impl Inventory {
    /// The data source, configured through `provider`.
    pub fn new(provider: Arc<dyn CommitmentProvider>) -> Self {
        Inventory { provider }
    }
}

#[async_trait]
impl DataSource for Inventory {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        let config = request.config();
        if !config.is_wholly_known() {
            return Diagnostics::new();
        }
        check(config, Catalog::embedded()).err().unwrap_or_default()
    }

    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse {
        let config = request.config();
        let settings = self.provider.commitment_settings();
        let found = match list(config, &settings.clouds, Catalog::embedded()).await {
            Ok(f) => f,
            Err(d) => {
                return ReadDataSourceResponse {
                    state: Value::Null,
                    diagnostics: d,
                };
            }
        };
        let mut d = Diagnostics::new();
        for u in &found.unread {
            d.push(Diagnostic::warning(
                format!("Cannot read {}", u.what),
                format!("{}. The inventory lists the rest without it.", u.why),
            ));
        }
        let mut state = config.clone();
        if let Value::Object(m) = &mut state {
            m.insert(
                "items".into(),
                Value::List(found.items.iter().map(item_value).collect()),
            );
            m.insert(
                "totals".into(),
                Value::List(
                    totals(&found.items, &found.group_by)
                        .iter()
                        .map(total_value)
                        .collect(),
                ),
            );
        }
        ReadDataSourceResponse {
            state,
            diagnostics: d,
        }
    }
}
