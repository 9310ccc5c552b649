//! A `gpu_instance` that may land on another place: the plan of a create, roll or failback
//! with `failover` blocks (each place checked and priced, where it lands known only after
//! the apply), and the apply that walks the places in order. A place that answers with
//! no capacity, or whose VM does not run within `capacity_wait`, is cleaned up (the VM
//! and its disks deleted) before the next is tried; any other error stops the walk. A
//! roll or failback deletes the old VM only once the new one runs, and keeps it when no
//! place has capacity.

use std::time::Instant;

use gpu_core::catalog::Catalog;
use gpu_core::cost::{self, PriorCost};
use gpu_core::instance::InstanceSpec;
use gpu_core::pool::ChosenType;
use gpu_core::pool::failover::{Attempt, AttemptOutcome};
use gpu_core::seam::{CapacityOutcome, ConnectInstances as Connector};
use tfplugin::provider::{ApplyResourceChangeResponse, PlanResourceChangeResponse};
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Value};

use super::apply::{Launch, Launched, launch};
use super::model::InstanceModel;
use super::places::{self, VmPlace};
use super::plan::{COST, FILLED, PER_VM, TIME_TO_READY, place_of, set};
use super::{Settings, cloud_blocks, core_config};
use crate::model_values::text;
use crate::resources::placing::{self, attempt_lines};

/// One place checked and priced.
struct Priced {
    place: VmPlace,
    spec: InstanceSpec,
    chosen: ChosenType,
    preview: cost::CostPreview,
}

/// `v` at `place` (its own place: as it is).
fn view_at(v: &Value, place: &VmPlace, own: bool) -> Value {
    if own { v.clone() } else { places::at(v, place) }
}

/// Checks and prices the VM of `v` at `place`; problems of a failover place name its
/// block (`path`).
fn price_at(
    v: &Value,
    place: &VmPlace,
    path: Option<AttributePath>,
    prior: Option<PriorCost>,
    settings: &Settings,
    catalog: &Catalog,
) -> Result<Priced, Diagnostics> {
    let label = place.label();
    let here = |d: Diagnostics| match &path {
        Some(path) => placing::at_place(d, &label, Some(path)),
        None => d,
    };
    let mut want = v.clone();
    let m = InstanceModel::of(v);
    let pinned = m.instance_type.known().cloned();
    if !m.gpu.is_null() || !m.instance_type.is_known() {
        set(&mut want, "instance_type", Value::Null);
    }
    let spec = core_config(&want, settings)
        .validate(catalog)
        .map_err(|e| here(crate::resources::commitment::plan::field_diagnostics(&e)))?;
    if let Some(missing) = cloud_blocks::missing_setting(spec.cloud, &settings.base.clouds) {
        return Err(here(missing.into()));
    }
    let fresh = settings.prices;
    let chosen = match pinned {
        Some(t) => {
            gpu_core::pool::choose::price_types(catalog, spec.cloud, &spec.region, &[t], &fresh)
                .into_iter()
                .next()
        }
        None => spec.chosen_type(catalog, &fresh),
    };
    let Some(chosen) = chosen else {
        return Err(here(super::plan::no_instance_type(&spec).into()));
    };
    let preview =
        cost::preview(&spec.as_pool(), std::slice::from_ref(&chosen), prior).map_err(|e| {
            here(
                Diagnostic::error("Cannot price the instance", e.to_string())
                    .at(AttributePath::attr("instance_type"))
                    .into(),
            )
        })?;
    Ok(Priced {
        place: place.clone(),
        spec,
        chosen,
        preview,
    })
}

/// The places a walk tries: all of them, or (a failback from `current`) those before it.
fn tries(v: &Value, current: Option<&VmPlace>) -> Vec<(Option<usize>, VmPlace)> {
    let own = places::own(v).map(|p| (None, p));
    let all: Vec<(Option<usize>, VmPlace)> = own
        .into_iter()
        .chain(places::failovers(v).into_iter().map(|(i, p)| (Some(i), p)))
        .collect();
    match current {
        None => all,
        Some(c) => all.into_iter().take_while(|(_, p)| !p.same(c)).collect(),
    }
}

/// Plans a create, roll or failback that walks the places (`current`: the failover place
/// a failback leaves).
/// `unknown_input`: an input is known only at apply, so the places are checked and priced
/// then (as a create without failover does).
pub fn plan_walk(
    prior: &Value,
    proposed: &Value,
    config: &Value,
    current: Option<&VmPlace>,
    unknown_input: bool,
    settings: &Settings,
    catalog: &Catalog,
) -> PlanResourceChangeResponse {
    let mut planned = proposed.clone();
    for n in PER_VM.iter().chain(COST).chain(
        [
            "last_reclaimed_at",
            "image_description",
            "placement",
            "attempts",
        ]
        .iter(),
    ) {
        set(&mut planned, n, Value::unknown());
    }
    for n in FILLED {
        let keep_name = *n == "name" && !prior.is_null();
        if !keep_name && config.get_attr(n).is_none_or(Value::is_null) {
            set(&mut planned, n, Value::unknown());
        }
    }
    set(&mut planned, "reclaims", Value::number(0));
    if unknown_input {
        return PlanResourceChangeResponse {
            planned_state: planned,
            ..Default::default()
        };
    }
    let prior_cost = InstanceModel::of(prior)
        .monthly_usd
        .known()
        .map(|m| PriorCost {
            monthly_usd: *m,
            monthly_usd_max: *m,
        });
    let mut d = Diagnostics::new();
    let mut priced = Vec::new();
    for (i, place) in tries(config, current) {
        let path = i.map(|i| AttributePath::attr("failover").then_index(i as i64));
        let v = view_at(config, &place, i.is_none());
        match price_at(&v, &place, path, prior_cost, settings, catalog) {
            Ok(p) => priced.push(p),
            Err(e) => d.extend(e),
        }
    }
    if d.has_errors() || priced.is_empty() {
        return PlanResourceChangeResponse {
            planned_state: planned,
            diagnostics: d,
            ..Default::default()
        };
    }
    let first = &priced[0];
    let dearest = priced[1..]
        .iter()
        .max_by(|a, b| a.preview.monthly_usd.total_cmp(&b.preview.monthly_usd));
    let lead = placing::walk_lead(
        first.preview.monthly_usd,
        &first.place.label(),
        dearest.map(|x| (x.preview.monthly_usd, x.place.label())),
    );
    let order: Vec<String> = priced.iter().map(|p| p.place.label()).collect();
    let mut detail = match current {
        None => format!(
            "Places, tried in this order until one runs the VM within `capacity_wait`: {}. A place that answers with no capacity (stockout, quota, not offered) or is too slow is cleaned up (its VM and disks deleted) before the next is tried.{}",
            order.join(" → "),
            if prior.is_null() {
                String::new()
            } else {
                format!(
                    " The VM {} is deleted once the new one runs.",
                    text(&InstanceModel::of(prior).vm_name)
                )
            }
        ),
        Some(at) => format!(
            "It runs on its failover place {} since {}. This apply creates a VM at the places before it ({}), first {lead}; once it runs, the VM {} on {} is deleted with its disks. If those places still say no, it stays where it is and the apply says so in a warning.",
            at.label(),
            placing::since_text(prior),
            order.join(" → "),
            text(&InstanceModel::of(prior).vm_name),
            at.label()
        ),
    };
    for p in &priced {
        detail.push_str(&format!(
            "\nAt {}: {}",
            p.place.label(),
            p.preview.summary()
        ));
    }
    let title = match current {
        None => format!("{}: {lead}", super::plan::warning_subject(&planned)),
        Some(_) => format!("gpu_instance tries to return to {}", first.place.label()),
    };
    d.push(Diagnostic::warning(title, detail));
    PlanResourceChangeResponse {
        planned_state: planned,
        diagnostics: d,
        ..Default::default()
    }
}

/// The warning of a plan that keeps the VM on failover place `at`.
pub fn staying(prior: &Value, at: &VmPlace, proposed: &Value) -> Diagnostic {
    let answers = placing::earlier_answers(prior);
    let why = if answers.is_empty() {
        String::new()
    } else {
        format!(", because {}", answers.join("; "))
    };
    let own = places::own(proposed).map_or_else(|| "the earlier places".to_string(), |p| p.label());
    Diagnostic::warning(
        format!("gpu_instance runs on its failover place {}", at.label()),
        format!(
            "VM {} runs on {} since {}{why}. It stays there while the place holds it (`failback = \"never\"`); set `failback = \"on_apply\"` to try {own} again at the next apply (a new VM is created there before this one is deleted).",
            text(&InstanceModel::of(prior).vm_name),
            at.label(),
            placing::since_text(prior),
        ),
    )
}

/// `placement` of a VM state (built at its place, before the user's words are put back)
/// since `since`.
pub fn placement_of(state: &Value, since: Value) -> Value {
    let m = InstanceModel::of(state);
    let Some(p) = place_of(state, None, &Settings::default()) else {
        return Value::Null;
    };
    VmPlace {
        cloud: p.cloud,
        region: p.region,
        zone: m.zone.known().cloned(),
        instance_type: m.instance_type.known().cloned(),
    }
    .placement(since)
}

/// Applies a create, roll or failback that walks the places.
pub async fn apply_walk(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
    connector: &dyn Connector,
) -> ApplyResourceChangeResponse {
    let current = if prior.is_null() {
        None
    } else {
        places::elsewhere(prior)
    };
    let wait = placing::capacity_wait(planned);
    let prior_cost = InstanceModel::of(prior)
        .monthly_usd
        .known()
        .map(|m| PriorCost {
            monthly_usd: *m,
            monthly_usd_max: *m,
        });
    let rolling_from = (!prior.is_null()).then_some(prior);
    let started = Instant::now();
    let mut diags = Diagnostics::new();
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut previous: Option<(String, &'static str)> = None;
    for (i, place) in tries(planned, current.as_ref()) {
        let mut view = view_at(planned, &place, i.is_none());
        let priced = match price_at(&view, &place, None, prior_cost, settings, catalog) {
            Ok(p) => p,
            Err(d) => {
                diags.extend(d);
                return stopped(prior, &attempts, diags);
            }
        };
        fill_at(&mut view, &priced);
        let Some(at) = place_of(&view, Some(&priced.spec), settings) else {
            return stopped(prior, &attempts, diags);
        };
        let cloud = match connector.instances(&at).await {
            Ok(c) => c,
            Err(e) => {
                diags.push(Diagnostic::error(
                    format!("Cannot connect to {}", place.label()),
                    e.to_string(),
                ));
                return stopped(prior, &attempts, diags);
            }
        };
        if !view.get_attr("image").is_some_and(Value::is_wholly_known) {
            match cloud.default_image(&priced.spec.region).await {
                Ok(img) => {
                    set(&mut view, "image", Value::string(img.id));
                    set(
                        &mut view,
                        "image_description",
                        Value::string(img.description),
                    );
                }
                Err(e) => {
                    diags.push(Diagnostic::error(
                        "Cannot look up the default GPU image",
                        format!("at {}: {e}", place.label()),
                    ));
                    return stopped(prior, &attempts, diags);
                }
            }
        } else if !view
            .get_attr("image_description")
            .is_some_and(Value::is_wholly_known)
        {
            set(&mut view, "image_description", Value::Null);
        }
        let how = Launch {
            wait: Some(wait),
            started,
            after: previous.take(),
            leaving: current.as_ref().map(VmPlace::label),
        };
        // On the cloud's clock, as `capacity_wait` counts.
        let pace = cloud.pace();
        let tried = pace.now();
        let seconds = || pace.since(tried).as_secs_f64();
        let zone_label = place.zone.clone().unwrap_or_else(|| "any".into());
        match launch(&view, settings, catalog, cloud.as_ref(), rolling_from, &how).await {
            Launched::Ready(mut r) => {
                attempts.push(attempt(
                    &place,
                    &zone_label,
                    AttemptOutcome::Ready,
                    String::new(),
                    seconds(),
                ));
                let total = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
                let placement = placement_of(&r.new_state, placing::now());
                places::restore(&mut r.new_state, planned);
                set(&mut r.new_state, "placement", placement);
                set(
                    &mut r.new_state,
                    "attempts",
                    placing::attempts_value(&attempts),
                );
                set(&mut r.new_state, TIME_TO_READY, Value::number(total));
                let mut all = diags;
                all.extend(std::mem::take(&mut r.diagnostics));
                r.diagnostics = all;
                if let Some(old) = rolling_from {
                    retire(old, current.as_ref(), settings, connector, &mut r).await;
                }
                return r;
            }
            Launched::Refused {
                outcome,
                detail,
                answer,
            } => {
                let o = match outcome {
                    "timeout" => AttemptOutcome::Timeout,
                    "quota" => AttemptOutcome::Refused(CapacityOutcome::Quota),
                    "not_offered" => AttemptOutcome::Refused(CapacityOutcome::NotOffered),
                    _ => AttemptOutcome::Refused(CapacityOutcome::Stockout),
                };
                attempts.push(attempt(&place, &zone_label, o, detail, seconds()));
                previous = Some((place.label(), outcome));
                if !answer.new_state.is_null() {
                    // Its clean-up failed: the VM left is in state, and the walk stops.
                    let mut r = answer;
                    places::restore(&mut r.new_state, planned);
                    return r;
                }
                for x in answer.diagnostics {
                    if !x.is_error() {
                        diags.push(x);
                    }
                }
            }
            Launched::Failed(mut r) => {
                let mut all = diags;
                all.extend(std::mem::take(&mut r.diagnostics));
                if r.new_state.is_null() {
                    return stopped(prior, &attempts, all);
                }
                places::restore(&mut r.new_state, planned);
                r.diagnostics = all;
                return r;
            }
        }
    }
    all_refused(
        prior,
        planned,
        current.as_ref(),
        &attempts,
        settings,
        connector,
        diags,
    )
    .await
}

/// One attempt at `place`.
fn attempt(
    place: &VmPlace,
    zone: &str,
    outcome: AttemptOutcome,
    detail: String,
    seconds: f64,
) -> Attempt {
    Attempt {
        cloud: place.cloud,
        region: place.region.clone(),
        cluster: zone.to_string(),
        outcome,
        detail,
        seconds,
    }
}

/// The planned VM at a place with what the place decides: its instance type, size, zone
/// and price.
fn fill_at(view: &mut Value, p: &Priced) {
    set(
        view,
        "instance_type",
        Value::string(p.chosen.instance_type.clone()),
    );
    set(view, "disk_size_gb", Value::number(p.spec.disk_size_gb));
    set(
        view,
        "reclaim",
        if p.spec.spot {
            Value::string(p.spec.reclaim.as_str())
        } else {
            Value::Null
        },
    );
    match &p.spec.zone {
        Some(z) => set(view, "zone", Value::string(z.clone())),
        None if cloud_blocks::unset_zone_stays_null(p.spec.cloud) => set(view, "zone", Value::Null),
        None => {}
    }
    for (n, v) in crate::resources::node_pool::desired::cost_values(&p.preview) {
        if COST.contains(&n) {
            set(view, n, v);
        }
    }
}

/// After a roll or failback placed the new VM: deletes the old one where it ran.
async fn retire(
    old: &Value,
    current: Option<&VmPlace>,
    settings: &Settings,
    connector: &dyn Connector,
    r: &mut ApplyResourceChangeResponse,
) {
    let view = match current {
        Some(at) => places::at(old, at),
        None => old.clone(),
    };
    let id = text(&InstanceModel::of(old).id);
    let deleted = match place_of(&view, None, settings) {
        Some(p) => match connector.instances(&p).await {
            Ok(c) => c.delete(&id).await,
            Err(e) => Err(e),
        },
        None => Err(gpu_core::seam::CloudError::Invalid(
            "unreadable prior place".into(),
        )),
    };
    if let Err(e) = deleted {
        r.diagnostics.push(Diagnostic::error(
            "The new VM runs; the old one was not deleted",
            format!(
                "deleting the old VM {id} failed: {e}. It still runs and bills; delete it in the cloud (it carries the ownership marker)."
            ),
        ));
    }
}

/// A walk stopped by an error that is not about capacity: nothing new is left, and a
/// roll or failback keeps the VM it had.
fn stopped(
    prior: &Value,
    attempts: &[Attempt],
    mut diags: Diagnostics,
) -> ApplyResourceChangeResponse {
    if !attempts.is_empty() {
        diags.push(Diagnostic::warning(
            "Places tried before the error",
            attempt_lines(attempts, "zone"),
        ));
    }
    if !diags.has_errors() {
        diags.push(Diagnostic::error(
            "Placing the VM failed",
            "see the warnings above",
        ));
    }
    ApplyResourceChangeResponse {
        new_state: prior.clone(),
        diagnostics: diags,
        ..Default::default()
    }
}

/// Every place said no: a create fails with one error listing the attempts (nothing left
/// anywhere, nothing in state); a roll fails the same way and keeps the VM it had; a
/// failback keeps the VM where it runs with a warning, its labels brought up to date.
async fn all_refused(
    prior: &Value,
    planned: &Value,
    current: Option<&VmPlace>,
    attempts: &[Attempt],
    settings: &Settings,
    connector: &dyn Connector,
    mut diags: Diagnostics,
) -> ApplyResourceChangeResponse {
    let lines = attempt_lines(attempts, "zone");
    let allowed = current.is_some_and(|at| places::order(planned).iter().any(|p| p.same(at)));
    if let Some(at) = current.filter(|_| allowed) {
        let mut r = super::apply::relabel_at(prior, planned, at, settings, connector).await;
        diags.push(Diagnostic::warning(
            format!("gpu_instance stays on {}", at.label()),
            format!(
                "No earlier place had capacity:\n{lines}\nEverything made there was deleted again. The VM keeps running on {}. The next apply tries again (`failback = \"on_apply\"`).",
                at.label()
            ),
        ));
        diags.extend(std::mem::take(&mut r.diagnostics));
        r.diagnostics = diags;
        return r;
    }
    let what = if prior.is_null() {
        "Nothing is left at any of them, and nothing is in state.".to_string()
    } else {
        format!(
            "Nothing new is left at any of them; the VM {} keeps running as it was.",
            text(&InstanceModel::of(prior).vm_name)
        )
    };
    diags.push(
        Diagnostic::error(
            format!(
                "No GPU capacity for gpu_instance at any of its {} places",
                attempts.len()
            ),
            format!(
                "Tried in order:\n{lines}\n{what} Add a `failover` place, allow other instance types, raise the quota, or try later."
            ),
        )
        .at(AttributePath::attr("failover")),
    );
    ApplyResourceChangeResponse {
        new_state: if prior.is_null() {
            Value::Null
        } else {
            prior.clone()
        },
        diagnostics: diags,
        ..Default::default()
    }
}
