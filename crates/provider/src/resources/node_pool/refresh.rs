//! `ReadResource` for `gpu_node_pool`: the pool read from the cloud (after an import, its
//! groups found by name shape and ownership), drift included.

use gpu_core::catalog::Catalog;
use gpu_core::cloud::NodeGroups;
use gpu_core::offer::Cloud;
use gpu_core::pool::{layout, reconcile};
use tfplugin::Diagnostics;
use tfplugin::Value;
use tfplugin::provider::ReadResourceResponse;

use super::apply::{all_names, cloud_error, cluster_of, connect, region_of, split_ownership};
use super::desired::{self, Settings};
use super::inputs::text;
use super::live_state::state_from_live;
use super::plan::set;

/// Whether `prior` is a pool on a cloud this version reads live: any spelling of aws
/// (`AWS`, `Aws`). Other clouds keep the prior state (they cannot be created yet).
pub fn reads_live(prior: &Value) -> bool {
    gpu_core::pool::spelling::cloud(&text(prior, "cloud")) == Some(Cloud::Aws)
}

/// Reads the pool from EKS; `Value::Null` in the response when no group exists any more.
pub async fn read(prior: &Value, settings: &Settings, catalog: &Catalog) -> ReadResourceResponse {
    if !reads_live(prior) {
        return ReadResourceResponse {
            new_state: prior.clone(),
            ..Default::default()
        };
    }
    let api = connect(settings, &region_of(prior)).await;
    read_with(&api, prior, settings, catalog).await
}

/// [`read`] against any [`NodeGroups`].
pub async fn read_with(
    api: &dyn NodeGroups,
    prior: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ReadResourceResponse {
    let name = text(prior, "name");
    let cluster = match cluster_of(prior) {
        Ok(c) => c,
        Err(diagnostics) => {
            return ReadResourceResponse {
                new_state: prior.clone(),
                diagnostics,
                ..Default::default()
            };
        }
    };
    let importing = prior.get_attr("gpu").is_none_or(Value::is_null);
    // An import knows only the pool's name: its groups are found by their name shape
    // (`<name>-od`, `<name>-spot`, with or without a generation suffix) and then their
    // ownership tag.
    let names = if importing {
        match api.list_groups(&cluster).await {
            Ok(all) => all
                .into_iter()
                .filter(|n| layout::may_be_group_of(Cloud::Aws, &name, n))
                .collect(),
            Err(e) => {
                return ReadResourceResponse {
                    new_state: prior.clone(),
                    diagnostics: cloud_error(
                        &format!("listing the node groups of cluster `{cluster}`"),
                        Some(&e),
                    ),
                    ..Default::default()
                };
            }
        }
    } else {
        all_names(prior, Cloud::Aws, &name, &[])
    };
    let live = match reconcile::read(api, &cluster, &names).await {
        Ok(l) => l,
        Err(e) => {
            return ReadResourceResponse {
                new_state: prior.clone(),
                diagnostics: cloud_error(
                    &format!("reading the node groups of `{}`", text(prior, "name")),
                    Some(&e),
                ),
                ..Default::default()
            };
        }
    };
    let (live, _) = split_ownership(api, prior, &name, live, importing);
    let mut state = state_from_live(prior, &live, &settings.default_labels, catalog);
    let mut diagnostics = Diagnostics::new();
    if !state.is_null() && state.get_attr("monthly_usd").is_none_or(Value::is_null) {
        // Imported: price what is live, with no change to report.
        match price_imported(&state, settings, catalog) {
            Ok(values) => {
                for (k, v) in values {
                    set(&mut state, k, v);
                }
            }
            Err(d) => diagnostics.extend(d),
        }
    }
    ReadResourceResponse {
        new_state: state,
        diagnostics,
        ..Default::default()
    }
}

/// Cost attributes of an imported pool (delta 0: importing changes nothing).
fn price_imported(
    state: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> Result<Vec<(&'static str, Value)>, Diagnostics> {
    let spec = desired::validate(state, catalog)?;
    let want = desired::with_types(spec, None, catalog, settings, state);
    let p = desired::price(&want, None)?;
    let prior = gpu_core::cost::PriorCost::from(&p);
    let p = desired::price(&want, Some(prior))?;
    Ok(desired::cost_values(&p))
}
