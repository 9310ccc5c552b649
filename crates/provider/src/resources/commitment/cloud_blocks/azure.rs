//! The commitment's `azure {}` block: its schema, its typed values (the resource group of a
//! capacity reservation), and the Azure orders: a reserved VM instance and a capacity
//! reservation.

use std::collections::BTreeMap;

use gpu_core::commitment::{CommitmentKind, Order, stable_name};
use serde::Deserialize;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::{Tf, Type};

use super::Planned;
use crate::model_values::{opt, text};

/// The `azure` block of `gpu_commitment`.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "azure",
        Block::new("Azure settings.")
            .attribute(Attribute::optional("resource_group", Type::String).describe("`azure_capacity_reservation`: the resource group (in the provider's `azure.subscription_id`) the capacity reservation group is created in. Required for that kind."))
    )
}

/// The `azure` block's values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AzureBlock {
    /// `resource_group`.
    pub resource_group: Tf<String>,
}

/// `resource_group` of an `azure` block, when set.
pub fn resource_group(block: &Tf<AzureBlock>) -> Option<String> {
    block
        .known()
        .and_then(|a| opt(&a.resource_group))
        .map(|s| s.trim().to_string())
}

/// The order an Azure reservation places; `order_id` is empty until it is priced. Its
/// display name is a stable hash of what it commits to and its tags.
pub fn reservation_order(
    region: &str,
    instance_type: &str,
    instances: u32,
    years: u32,
    upfront: bool,
    tags: &BTreeMap<String, String>,
    order_id: String,
) -> Order {
    let mut parts: Vec<String> = vec![
        CommitmentKind::AzureReservation.to_string(),
        region.to_string(),
        instance_type.to_string(),
        instances.to_string(),
        format!("{years}y"),
    ];
    parts.extend(tags.iter().map(|(k, v)| format!("{k}={v}")));
    let words: Vec<&str> = parts.iter().map(String::as_str).collect();
    Order::AzureReservation {
        location: region.to_string(),
        sku: instance_type.to_string(),
        term: format!("P{years}Y"),
        billing_plan: if upfront { "Upfront" } else { "Monthly" }.to_string(),
        quantity: instances,
        display_name: stable_name(&words),
        order_id,
    }
}

/// The Azure order of `p`: a reserved VM instance under the quote the plan read, or a
/// capacity reservation (in a group of the same name) in its resource group.
pub(super) fn order(p: &Planned<'_>) -> Result<Order, String> {
    let m = &p.model;
    match p.kind {
        CommitmentKind::AzureReservation => {
            let years = if text(&m.term).trim().eq_ignore_ascii_case("3y") {
                3
            } else {
                1
            };
            let upfront = text(&m.billing).trim().eq_ignore_ascii_case("upfront");
            Ok(reservation_order(
                &p.region,
                &p.instance_type,
                p.count,
                years,
                upfront,
                p.tags,
                text(&m.offering_id),
            ))
        }
        CommitmentKind::AzureCapacityReservation => {
            let name = p.name(&p.region, "");
            let zone = text(&m.zone).trim().to_string();
            Ok(Order::AzureCapacityReservation {
                location: p.region.clone(),
                resource_group: resource_group(&p.model.azure)
                    .ok_or("`azure.resource_group` is required")?,
                group: name.clone(),
                name,
                sku: p.instance_type.clone(),
                capacity: p.count,
                zone: (!zone.is_empty()).then_some(zone),
            })
        }
        other => Err(format!("{other} is not an Azure commitment")),
    }
}
