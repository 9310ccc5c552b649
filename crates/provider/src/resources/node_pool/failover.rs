//! An apply that places the pool: a create with `failover` blocks walks the places in
//! order, and a failback (`failback = "on_apply"`, or the place it runs on dropped from
//! its blocks) walks the places before the one it runs on. Each place is prepared only
//! when its turn comes (its cloud connected, what is there read); a capacity answer or a
//! place too slow is cleaned up before the next; the first place that brings the pool up
//! holds it. A failback deletes the pool from the place it leaves only once the new place
//! is up, and stays where it is when no earlier place has capacity.

use std::time::Instant;

use gpu_core::catalog::Catalog;
use gpu_core::pool::failover::{self, Attempt, AttemptOutcome, Candidate, PlaceEnd};
use gpu_core::pool::reconcile;
use gpu_core::seam::ClusterRef;
use tfplugin::provider::ApplyResourceChangeResponse;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Value};

use super::apis::{Api, Apis};
use super::apply::{
    ApplyRun, all_names, apply_here, cloud_error, cluster_of, connect_at, failed, foreign_group,
    log_mutations, missing_node_role, split_ownership, unique_suffix,
};
use super::desired::{self, Desired, Settings};
use super::inputs;
use super::model::{self, PoolModel};
use super::places::{self, Place};
use super::plan::{TIME_TO_READY, set};
use super::record::Record;
use crate::resources::placing::{self, attempt_lines, now};

/// A place ready to be tried: the pool at that place, laid out for its cloud.
struct Prepared<'a> {
    view: Value,
    want: Desired,
    cluster: ClusterRef,
    api: Api<'a>,
    /// Groups there that carry the pool's ownership tag but are in no state: what an
    /// interrupted apply made (adopted, as a create without failover adopts them).
    mine: Vec<gpu_core::seam::NodeGroup>,
}

impl Prepared<'_> {
    /// The apply's run at this place, for `resolved` (the planned pool as placed here).
    fn run<'r>(
        &'r self,
        resolved: &'r Value,
        pool: &'r str,
        settings: &'r Settings,
        catalog: &'r Catalog,
    ) -> ApplyRun<'r> {
        ApplyRun {
            api: &*self.api,
            planned: resolved,
            pool,
            cluster: &self.cluster,
            settings,
            catalog,
        }
    }
}

/// Places the pool: see the module docs.
pub async fn apply_walk(
    apis: &dyn Apis,
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ApplyResourceChangeResponse {
    let mut diags = Diagnostics::new();
    let timeouts = inputs::timeouts(planned, &mut diags);
    let wait = placing::capacity_wait(planned);
    let name = model::text(&PoolModel::of(planned).name);
    let current = if prior.is_null() {
        None
    } else {
        places::elsewhere(prior)
    };
    let order = places::order(planned);
    let tries: Vec<Place> = match &current {
        None => order,
        Some(c) => order.into_iter().take_while(|p| !p.same(c)).collect(),
    };
    let prior_cost = desired::prior_cost(prior);
    let seed = format!("{name}-{}", unique_suffix());
    let started = Instant::now();
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut previous: Option<(Place, &'static str)> = None;
    for place in &tries {
        let p = match prepare(apis, planned, place, settings, catalog).await {
            Ok(p) => p,
            Err(d) => {
                diags.extend(d);
                return stopped(prior, current.is_some(), &attempts, diags);
            }
        };
        let record = Record::of(settings, &p.want, &Value::Null).since(started);
        if let Some((from, outcome)) = &previous {
            record.event(
                "failover",
                Some(outcome),
                format!("from {} ({outcome})", from.label()),
                &mut diags,
            );
        }
        record.request(&mut diags);
        let candidate = Candidate {
            cloud: place.cloud,
            region: place.region.clone(),
            cluster: p.cluster.clone(),
            api: &*p.api,
            groups: p.want.groups.clone(),
        };
        let tried = if p.mine.is_empty() {
            failover::try_place(&candidate, &timeouts, wait, &seed).await
        } else {
            adopt(&candidate, &p.mine, &timeouts, &seed).await
        };
        if let Some(r) = &tried.refusal {
            record.capacity(r, &mut diags);
        }
        if let Some(a) = &tried.attempt
            && a.outcome == AttemptOutcome::Timeout
        {
            record.event("capacity", Some("timeout"), a.detail.clone(), &mut diags);
        }
        let outcome_word = tried.attempt.as_ref().map(|a| a.outcome.as_str());
        attempts.extend(tried.attempt);
        match tried.end {
            PlaceEnd::Next => {
                previous = Some((place.clone(), outcome_word.unwrap_or("timeout")));
            }
            PlaceEnd::Placed(outcome) => {
                let ready = record.ready(&outcome, &mut diags);
                if let Some(from) = &current {
                    record.event(
                        "failback",
                        None,
                        format!("from {}", from.label()),
                        &mut diags,
                    );
                }
                let resolved = resolve(&p, place, prior_cost, &attempts, Value::unknown());
                let mut r = p
                    .run(&resolved, &name, settings, catalog)
                    .finish(outcome, diags, ready)
                    .await;
                places::restore(&mut r.new_state, planned);
                if let Some(from) = &current {
                    leave(apis, prior, from, place, &mut r.diagnostics).await;
                } else {
                    let later: Vec<&Place> = tries
                        .iter()
                        .skip_while(|p| !p.same(place))
                        .skip(1)
                        .collect();
                    sweep(apis, planned, &later, settings, catalog, &mut r.diagnostics).await;
                }
                return r;
            }
            PlaceEnd::Stopped(outcome) => {
                log_mutations(&outcome.mutations);
                if current.is_some() || outcome.live.is_empty() {
                    // Nothing of the pool stays at a place it was not placed at: a
                    // failback keeps the pool where it runs.
                    if !outcome.live.is_empty() {
                        let names: Vec<String> =
                            outcome.live.iter().map(|g| g.spec.name.clone()).collect();
                        let d =
                            reconcile::destroy(&*p.api, &p.cluster, &names, timeouts.delete).await;
                        log_mutations(&d.mutations);
                    }
                    if let Some(e) = outcome.error {
                        diags.push(Diagnostic::error(
                            format!("Placing gpu_node_pool `{name}` at {} failed", place.label()),
                            e.to_string(),
                        ));
                    }
                    return stopped(prior, current.is_some(), &attempts, diags);
                }
                let resolved = resolve(&p, place, prior_cost, &attempts, Value::Null);
                let mut r = p
                    .run(&resolved, &name, settings, catalog)
                    .finish(outcome, diags, None)
                    .await;
                places::restore(&mut r.new_state, planned);
                return r;
            }
        }
    }
    match current {
        None => {
            diags.push(no_place(&name, &attempts));
            ApplyResourceChangeResponse {
                new_state: Value::Null,
                diagnostics: diags,
                ..Default::default()
            }
        }
        Some(at) => {
            stay(
                apis, prior, planned, &at, &attempts, settings, catalog, diags,
            )
            .await
        }
    }
}

/// Connects to `place` and reads what is there: the pool laid out for its cloud, no
/// stranger's group in the way, and the pool's own groups an interrupted walk left.
async fn prepare<'a>(
    apis: &'a dyn Apis,
    planned: &Value,
    place: &Place,
    settings: &Settings,
    catalog: &Catalog,
) -> Result<Prepared<'a>, Diagnostics> {
    let view = places::at(planned, place);
    let label = place.label();
    let at = |d: Diagnostics| placing::at_place(d, &label, None);
    let spec = desired::validate(&view, catalog).map_err(at)?;
    let mut want = desired::with_types(spec, None, catalog, settings, &view);
    desired::name_groups(&mut want, &Value::Null);
    let cluster = cluster_of(&view).map_err(at)?;
    let detail = format!("`aws.node_role_arn` is required on aws, and {label} is on aws.");
    if let Some(d) = missing_node_role(&view, place.cloud, &detail) {
        return Err(d);
    }
    let api = connect_at(apis, &view).await.map_err(at)?;
    let wanted: Vec<String> = want.groups.iter().map(|g| g.name.clone()).collect();
    let names = all_names(&Value::Null, place.cloud, &want.spec.name, &wanted);
    let live = reconcile::read(&*api, &cluster, &names)
        .await
        .map_err(|e| {
            cloud_error(
                &*api,
                &format!(
                    "reading the node groups of `{}` at {}",
                    want.spec.name,
                    place.label()
                ),
                Some(&e),
            )
        })?;
    let (mine, foreign) = split_ownership(&*api, &Value::Null, &want.spec.name, live, false);
    if let Some(g) = foreign
        .iter()
        .find(|g| want.groups.iter().any(|d| d.name == g.name()))
    {
        return Err(foreign_group(&*api, &cluster, &want.spec.name, g));
    }
    Ok(Prepared {
        view,
        want,
        cluster,
        api,
        mine,
    })
}

/// A place where the pool's own groups exist already (an interrupted apply made them):
/// they are brought to the desired groups, as a create without failover adopts them. They
/// may be another configuration's (a pool of the same name in that cluster), so nothing
/// is deleted here: any error stops the walk with what exists.
async fn adopt(
    c: &Candidate<'_>,
    mine: &[gpu_core::seam::NodeGroup],
    timeouts: &reconcile::Timeouts,
    seed: &str,
) -> failover::Tried {
    let started = c.api.now();
    let outcome = reconcile::apply(c.api, &c.cluster, &c.groups, mine, timeouts, seed).await;
    match outcome.error {
        None => failover::Tried {
            attempt: Some(Attempt {
                cloud: c.cloud,
                region: c.region.clone(),
                cluster: c.cluster.id(),
                outcome: AttemptOutcome::Ready,
                detail: String::new(),
                seconds: c.api.now().saturating_sub(started).as_secs_f64(),
            }),
            end: PlaceEnd::Placed(outcome),
            refusal: None,
        },
        Some(_) => failover::Tried {
            attempt: None,
            end: PlaceEnd::Stopped(outcome),
            refusal: None,
        },
    }
}

/// After a create placed the pool: looks at the places after it for groups carrying the
/// pool's ownership tag (an interrupted earlier apply's, or another configuration's pool
/// of the same name) and warns about them; nothing is deleted.
async fn sweep(
    apis: &dyn Apis,
    planned: &Value,
    later: &[&Place],
    settings: &Settings,
    catalog: &Catalog,
    diags: &mut Diagnostics,
) {
    let name = model::text(&PoolModel::of(planned).name);
    for place in later {
        match prepare(apis, planned, place, settings, catalog).await {
            Ok(p) if !p.mine.is_empty() => {
                let names: Vec<&str> = p.mine.iter().map(|g| g.name()).collect();
                diags.push(Diagnostic::warning(
                    format!("Node groups of `{name}` outside its state at {}", place.label()),
                    format!(
                        "Cluster {} has {} carrying the ownership tag of gpu_node_pool `{name}`, which runs at its placement, not there. An interrupted apply may have left them (then delete them), or another configuration runs a pool of the same name there. Nothing was changed.",
                        place.cluster,
                        names.join(", ")
                    ),
                ));
            }
            Ok(_) => {}
            Err(_) => diags.push(Diagnostic::warning(
                format!("Could not look at {} for node groups of `{name}`", place.label()),
                "An interrupted apply may have left node groups of this pool there (they carry its ownership tag); nothing could be read to say.",
            )),
        }
    }
}

/// The planned pool at `place`, placed there now, with what only the placing apply
/// knows filled in: its instance types (unless pinned) and [`fill_placed`]'s values.
/// `time_to_ready` is left to the run when unknown.
fn resolve(
    p: &Prepared<'_>,
    place: &Place,
    prior_cost: Option<gpu_core::cost::PriorCost>,
    attempts: &[Attempt],
    time_to_ready: Value,
) -> Value {
    let mut v = p.view.clone();
    if !v
        .get_attr("instance_types")
        .is_some_and(Value::is_wholly_known)
    {
        let types = p.want.spec.instance_types.iter().map(Value::string);
        set(&mut v, "instance_types", Value::List(types.collect()));
    }
    let attempts = placing::attempts_value(attempts);
    fill_placed(
        &mut v,
        &p.want,
        &p.cluster,
        place,
        prior_cost,
        attempts,
        now(),
    );
    set(&mut v, TIME_TO_READY, time_to_ready);
    v
}

/// Writes what pool `v` (laid out as `want` in `cluster`) says about where it runs: its
/// import id there, its prices there (against `prior_cost`), `placement` since `since`,
/// and `attempts`.
fn fill_placed(
    v: &mut Value,
    want: &Desired,
    cluster: &ClusterRef,
    place: &Place,
    prior_cost: Option<gpu_core::cost::PriorCost>,
    attempts: Value,
    since: Value,
) {
    let id = super::import::import_id(cluster, &want.spec.name);
    set(v, "id", Value::string(id));
    if let Ok(preview) = desired::price(want, prior_cost) {
        for (k, x) in desired::cost_values(&preview) {
            set(v, k, x);
        }
    }
    let first = places::first_type(v);
    set(v, "placement", place.placement(first, since));
    set(v, "attempts", attempts);
}

/// The end of a walk stopped by an error that is not about capacity (or a place that could
/// not be prepared): a create leaves nothing (every earlier place was cleaned up), a
/// failback keeps the pool where it runs.
fn stopped(
    prior: &Value,
    failing_back: bool,
    attempts: &[Attempt],
    mut diags: Diagnostics,
) -> ApplyResourceChangeResponse {
    if !attempts.is_empty() {
        diags.push(Diagnostic::warning(
            "Places tried before the error",
            attempt_lines(attempts, "cluster"),
        ));
    }
    failed(
        if failing_back {
            prior.clone()
        } else {
            Value::Null
        },
        diags,
    )
}

/// The error when every place said no: each attempt with its outcome.
fn no_place(name: &str, attempts: &[Attempt]) -> Diagnostic {
    Diagnostic::error(
        format!(
            "No GPU capacity for gpu_node_pool `{name}` at any of its {} places",
            attempts.len()
        ),
        format!(
            "Tried in order:\n{}\nNothing of the pool is left at any of them, and it is not in the state. Add a `failover` place, allow other instance types, raise the quota, or try later.",
            attempt_lines(attempts, "cluster")
        ),
    )
    .at(AttributePath::attr("failover"))
}

/// After a failback: deletes the pool's groups at the place it left (`from`), now that it
/// runs at `to`; a failure is an error that names what is left there.
async fn leave(apis: &dyn Apis, prior: &Value, from: &Place, to: &Place, diags: &mut Diagnostics) {
    let view = places::at(prior, from);
    let name = model::text(&PoolModel::of(prior).name);
    let left = async {
        let api = connect_at(apis, &view).await?;
        let cluster = cluster_of(&view)?;
        let names = all_names(&view, from.cloud, &name, &[]);
        let live = reconcile::read(&*api, &cluster, &names)
            .await
            .map_err(|e| cloud_error(&*api, "reading the node groups", Some(&e)))?;
        let (mine, _) = split_ownership(&*api, &view, &name, live, false);
        let names: Vec<String> = mine.into_iter().map(|g| g.spec.name).collect();
        let mut d = Diagnostics::new();
        let gone = reconcile::destroy(
            &*api,
            &cluster,
            &names,
            inputs::timeouts(prior, &mut d).delete,
        )
        .await;
        log_mutations(&gone.mutations);
        match gone.error {
            None => Ok(()),
            Some(e) => Err(Diagnostics::from(Diagnostic::error(
                "Deleting failed",
                format!("{e} (node groups {})", names.join(", ")),
            ))),
        }
    }
    .await;
    if let Err(d) = left {
        for x in d {
            diags.push(Diagnostic::error(
                format!(
                    "gpu_node_pool `{name}` runs at {} now, but its node groups at {} were not all deleted",
                    to.label(),
                    from.label()
                ),
                format!(
                    "{}: {}\nThe state follows the pool to {}; delete what is left at {} (cluster {}) by hand: it carries the pool's ownership tag.",
                    x.summary,
                    x.detail,
                    to.label(),
                    from.label(),
                    from.cluster
                ),
            ));
        }
    }
}

/// A failback that found no earlier place with capacity: the pool stays where it runs,
/// with the rest of the planned change applied there, and a warning says why (an error
/// when the place it runs on is no longer among its places).
#[allow(clippy::too_many_arguments)]
async fn stay(
    apis: &dyn Apis,
    prior: &Value,
    planned: &Value,
    at: &Place,
    attempts: &[Attempt],
    settings: &Settings,
    catalog: &Catalog,
    diags: Diagnostics,
) -> ApplyResourceChangeResponse {
    let name = model::text(&PoolModel::of(planned).name);
    let prior_at = places::at(prior, at);
    let mut planned_at = places::at(planned, at);
    if !planned_at
        .get_attr("instance_types")
        .is_some_and(Value::is_wholly_known)
    {
        set(
            &mut planned_at,
            "instance_types",
            prior
                .get_attr("instance_types")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    let spec = match desired::validate(&planned_at, catalog) {
        Ok(s) => s,
        Err(d) => return failed(prior.clone(), d),
    };
    let mut want = desired::with_types(spec, None, catalog, settings, &planned_at);
    let rolls = desired::name_groups(&mut want, &prior_at);
    let cluster = match cluster_of(&planned_at) {
        Ok(c) => c,
        Err(d) => return failed(prior.clone(), d),
    };
    let kept_attempts = prior.get_attr("attempts").cloned().unwrap_or(Value::Null);
    fill_placed(
        &mut planned_at,
        &want,
        &cluster,
        at,
        desired::prior_cost(prior),
        kept_attempts,
        placing::since(prior),
    );
    let ttr = if rolls.is_empty() {
        prior
            .get_attr(TIME_TO_READY)
            .cloned()
            .unwrap_or(Value::Null)
    } else {
        Value::unknown()
    };
    set(&mut planned_at, TIME_TO_READY, ttr);
    let api = match connect_at(apis, &planned_at).await {
        Ok(a) => a,
        Err(d) => return failed(prior.clone(), d),
    };
    let mut r = apply_here(&*api, &prior_at, &planned_at, settings, catalog).await;
    places::restore(&mut r.new_state, planned);
    let mut all = diags;
    all.extend(std::mem::take(&mut r.diagnostics));
    r.diagnostics = all;
    let allowed = places::order(planned).iter().any(|p| p.same(at));
    let said = format!(
        "No earlier place had capacity:\n{}\nEverything made there was deleted again. The pool keeps running on {} (cluster {}).",
        attempt_lines(attempts, "cluster"),
        at.label(),
        at.cluster
    );
    let d = if allowed {
        Diagnostic::warning(
            format!("gpu_node_pool `{name}` stays on {}", at.label()),
            format!("{said} The next apply tries again (`failback = \"on_apply\"`)."),
        )
    } else {
        Diagnostic::error(
            format!(
                "gpu_node_pool `{name}` could not leave {}, which is no longer among its places",
                at.label()
            ),
            format!("{said} Put its `failover` block back, or add a place with capacity, and apply again."),
        )
        .at(AttributePath::attr("failover"))
    };
    r.diagnostics.push(d);
    r
}
