//! `ReadResource` for `gpu_node_pool`: the pool read from the cloud (after an import, its
//! groups found by name shape and ownership), drift included.

use gpu_core::catalog::Catalog;
use gpu_core::pool::{layout, reconcile};
use gpu_core::seam::NodeGroups;
use tfplugin::Diagnostics;
use tfplugin::Value;
use tfplugin::provider::ReadResourceResponse;

use super::apply::{all_names, cloud_error, cluster_of, split_ownership};
use super::desired::{self, Settings};
use super::floor::{FLOOR_UP, floor_up};
use super::inputs::connect;
use super::live_state::state_from_live;
use super::model::{self, PoolModel};
use super::places;
use super::plan::set;

/// Whether `prior` is a pool on a cloud this version reads live: aws, azure or gcp in any
/// spelling (`AWS`, `Azure`). A state naming another cloud is kept as it is.
pub fn reads_live(prior: &Value) -> bool {
    gpu_core::pool::spelling::cloud(&model::text(&PoolModel::of(prior).cloud)).is_some()
}

/// Reads the pool from its cloud; `Value::Null` in the response when no group exists any
/// more.
pub async fn read(prior: &Value, settings: &Settings, catalog: &Catalog) -> ReadResourceResponse {
    if !reads_live(prior) {
        return ReadResourceResponse {
            new_state: prior.clone(),
            ..Default::default()
        };
    }
    // A pool on a failover place is read there.
    let at = places::elsewhere(prior);
    let view = at
        .as_ref()
        .map_or_else(|| prior.clone(), |p| places::at(prior, p));
    match connect(settings, &view).await {
        Ok(api) => {
            let mut r = read_with(api.as_ref(), &view, settings, catalog).await;
            if at.is_some() {
                places::restore(&mut r.new_state, prior);
            }
            // A state from before a block existed holds it as null; Terraform as empty.
            if !r.new_state.is_null() {
                r.new_state = super::schema().block.with_empty_blocks(r.new_state);
            }
            r
        }
        Err(diagnostics) => ReadResourceResponse {
            new_state: prior.clone(),
            diagnostics,
            ..Default::default()
        },
    }
}

/// [`read`] against any [`NodeGroups`].
pub async fn read_with(
    api: &dyn NodeGroups,
    prior: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ReadResourceResponse {
    let pool = PoolModel::of(prior);
    let name = model::text(&pool.name);
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
    let cloud = cluster.cloud();
    let importing = pool.gpu.is_null();
    // An import knows only the pool's name: its groups are found by their name shape
    // (`<name>-od`, `<name>-spot`, with or without a generation suffix) and then their
    // ownership tag.
    let mut prior = prior.clone();
    if importing && model::text(&pool.region).is_empty() {
        // An AKS import id does not name the region: it is the cluster's location.
        match api.cluster_region(&cluster).await {
            Ok(Some(r)) => set(
                &mut prior,
                "region",
                Value::string(gpu_core::pool::spelling::region(Some(cloud), &r)),
            ),
            Ok(None) => {}
            Err(e) => {
                return ReadResourceResponse {
                    new_state: prior.clone(),
                    diagnostics: cloud_error(
                        api,
                        &format!("reading cluster `{cluster}`"),
                        Some(&e),
                    ),
                    ..Default::default()
                };
            }
        }
    }
    let prior = &prior;
    let names = if importing {
        match api.list_groups(&cluster).await {
            Ok(all) => all
                .into_iter()
                .filter(|n| layout::may_be_group_of(cloud, &name, n))
                .collect(),
            Err(e) => {
                return ReadResourceResponse {
                    new_state: prior.clone(),
                    diagnostics: cloud_error(
                        api,
                        &format!("listing the node groups of cluster `{cluster}`"),
                        Some(&e),
                    ),
                    ..Default::default()
                };
            }
        }
    } else {
        all_names(prior, cloud, &name, &[])
    };
    let live = match reconcile::read(api, &cluster, &names).await {
        Ok(l) => l,
        Err(e) => {
            return ReadResourceResponse {
                new_state: prior.clone(),
                diagnostics: cloud_error(
                    api,
                    &format!("reading the node groups of `{name}`"),
                    Some(&e),
                ),
                ..Default::default()
            };
        }
    };
    // AKS names are opaque hashes that cannot say whose a pool is: an import there adopts
    // only the pools carrying the pool's ownership tag.
    let adopt_all = importing && cloud != gpu_core::offer::Cloud::Azure;
    let (live, _) = split_ownership(api, prior, &name, live, adopt_all);
    let mut state = state_from_live(prior, &live, &settings.default_labels, catalog);
    placed_if_unrecorded(&mut state);
    let mut diagnostics = Diagnostics::new();
    if !state.is_null() {
        let (up, warning) = floor_up(api, &cluster, &name, &live).await;
        set(&mut state, FLOOR_UP, up);
        if let Some(w) = warning {
            diagnostics.push(w);
        }
    }
    if !state.is_null() && PoolModel::of(&state).monthly_usd.is_null() {
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

/// `placement` of a pool as read: a pool without one (imported, or made before the
/// attribute existed) is placed where its own values say, since a time the provider does
/// not know. The place's instance type follows the pool's `instance_types` as read.
fn placed_if_unrecorded(state: &mut Value) {
    if state.is_null() {
        return;
    }
    let first = places::first_type(state);
    let (at, since) = match places::placement(state) {
        Some(at) => (at, crate::resources::placing::since(state)),
        None => match places::own(state) {
            Some(own) => (own, Value::Null),
            None => return,
        },
    };
    set(state, "placement", at.placement(first, since));
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
