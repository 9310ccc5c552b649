//! `ApplyResourceChange` for `gpu_node_pool` on EKS (create, update, roll, destroy), and
//! the helpers `refresh` shares: every call goes to the cloud, and the state returned
//! always matches what exists there.

use std::collections::BTreeSet;

use gpu_core::catalog::Catalog;
use gpu_core::model::CapacityType;
use gpu_core::offer::Cloud;
use gpu_core::pool::{attempt, layout, reconcile};
use gpu_core::seam::{CloudError, ClusterRef, NodeClass, NodeGroup, NodeGroups};
use tfplugin::provider::ApplyResourceChangeResponse;
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Tf, Value};

use super::apis::{Apis, Sessions};
use super::desired::{self, Settings};
use super::floor::{FLOOR_UP, floor_up};
use super::groups;
use super::inputs;
use super::live_state::state_from_live;
use super::model::{self, PoolModel};
use super::places;
use super::plan::set;
use super::record::Record;
use crate::resources::placing;

/// Creates, updates or destroys the pool so the cloud matches `planned`.
pub async fn apply(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ApplyResourceChangeResponse {
    apply_with(&Sessions(settings), prior, planned, settings, catalog).await
}

/// [`apply`] with the node-group APIs of `apis` (the tests use in-memory fakes).
pub async fn apply_with(
    apis: &dyn Apis,
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ApplyResourceChangeResponse {
    if planned.is_null() {
        // The pool is deleted where it runs.
        let at = places::elsewhere(prior);
        let view = at
            .as_ref()
            .map_or_else(|| prior.clone(), |p| places::at(prior, p));
        let api = match connect_at(apis, &view).await {
            Ok(api) => api,
            Err(d) => return failed(prior.clone(), d),
        };
        let mut r = destroy(&*api, &view, settings, catalog).await;
        places::restore(&mut r.new_state, prior);
        return r;
    }
    if planned
        .get_attr("placement")
        .is_some_and(|p| matches!(p, Value::Unknown(_)))
    {
        return super::failover::apply_walk(apis, prior, planned, settings, catalog).await;
    }
    // Not placing: the pool is created, or changed where it runs.
    let at = if prior.is_null() {
        None
    } else {
        places::elsewhere(prior)
    };
    let view = |v: &Value| at.as_ref().map_or_else(|| v.clone(), |p| places::at(v, p));
    let (prior_at, planned_at) = (view(prior), view(planned));
    let api = match connect_at(apis, &planned_at).await {
        Ok(api) => api,
        Err(d) => return failed(prior.clone(), d),
    };
    let mut r = apply_here(&*api, &prior_at, &planned_at, settings, catalog).await;
    places::restore(&mut r.new_state, planned);
    if prior.is_null() {
        placed_here(&mut r.new_state);
    }
    r
}

/// The node-group API of the place pool `v` names.
pub(super) async fn connect_at<'a>(
    apis: &'a dyn Apis,
    v: &Value,
) -> Result<super::apis::Api<'a>, Diagnostics> {
    let Some(cloud) = super::inputs::cloud_of(v) else {
        return Err(super::inputs::unknown_cloud(v));
    };
    apis.at(cloud, &super::inputs::region_of(v)).await
}

/// A pool created at its own place (no `failover`): placed there now, after one attempt
/// that took its time to ready.
fn placed_here(state: &mut Value) {
    let Some(own) = places::own(state) else {
        return;
    };
    let instance_type = places::first_type(state);
    set(
        state,
        "placement",
        own.placement(instance_type, placing::now()),
    );
    let seconds = state
        .get_attr(super::plan::TIME_TO_READY)
        .cloned()
        .unwrap_or(Value::Null);
    let ready = placing::attempt_value(own.cloud.as_str(), &own.region, "ready", "", seconds);
    set(state, "attempts", Value::List(vec![ready]));
}

/// Creates or changes the pool at the place `planned` names, with that place's API.
pub(super) async fn apply_here(
    api: &dyn NodeGroups,
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ApplyResourceChangeResponse {
    let mut diags = Diagnostics::new();
    let timeouts = inputs::timeouts(planned, &mut diags);
    let spec = match desired::validate(planned, catalog) {
        Ok(s) => s,
        Err(d) => return failed(prior.clone(), d),
    };
    let mut want = desired::with_types(spec, None, catalog, settings, planned);
    // The same naming as the plan's (same prior, same planned pool): kept groups keep
    // their names, rolled ones get their new generation's.
    desired::name_groups(&mut want, prior);
    let cluster = match cluster_of(planned) {
        Ok(c) => c,
        Err(d) => return failed(prior.clone(), d),
    };
    let cloud = want.spec.cloud;
    if let Some(d) = missing_node_role(planned, cloud, "`aws.node_role_arn` is required on aws.") {
        return failed(prior.clone(), d);
    };
    let wanted: Vec<String> = want.groups.iter().map(|g| g.name.clone()).collect();
    let names = all_names(prior, cloud, &want.spec.name, &wanted);
    let live = match reconcile::read(api, &cluster, &names).await {
        Ok(l) => l,
        Err(e) => {
            return failed(
                prior.clone(),
                cloud_error(
                    api,
                    &format!("reading the node groups of `{}`", want.spec.name),
                    Some(&e),
                ),
            );
        }
    };
    let (live, foreign) = split_ownership(api, prior, &want.spec.name, live, false);
    if let Some(g) = foreign
        .iter()
        .find(|g| want.groups.iter().any(|d| d.name == g.name()))
    {
        return failed(
            prior.clone(),
            foreign_group(api, &cluster, &want.spec.name, g),
        );
    }
    let seed = format!("{}-{}", want.spec.name, unique_suffix());
    let record = Record::of(settings, &want, prior);
    record.request(&mut diags);
    let run = ApplyRun {
        api,
        planned,
        pool: &want.spec.name,
        cluster: &cluster,
        settings,
        catalog,
    };
    if prior.is_null() && live.is_empty() {
        let attempt = attempt::create_new(api, &cluster, &want.groups, &timeouts, &seed).await;
        if let Some(refusal) = &attempt.refusal {
            record.capacity(refusal, &mut diags);
            let clean = attempt.outcome.error.is_none();
            diags.push(refused(
                api,
                planned,
                &want.spec.name,
                &cluster,
                refusal,
                clean,
            ));
            if clean {
                log_mutations(&attempt.outcome.mutations);
                return ApplyResourceChangeResponse {
                    new_state: Value::Null,
                    diagnostics: diags,
                    ..Default::default()
                };
            }
            // The clean-up failed: the state records what exists, as after any failure.
        }
        let ready = record.ready(&attempt.outcome, &mut diags);
        return run.finish(attempt.outcome, diags, ready).await;
    }
    let outcome = reconcile::apply(api, &cluster, &want.groups, &live, &timeouts, &seed).await;
    let ready = record.ready(&outcome, &mut diags);
    run.finish(outcome, diags, ready).await
}

/// One apply of one pool: where it runs and what it needs to answer.
pub(super) struct ApplyRun<'a> {
    pub(super) api: &'a dyn NodeGroups,
    pub(super) planned: &'a Value,
    pub(super) pool: &'a str,
    pub(super) cluster: &'a ClusterRef,
    pub(super) settings: &'a Settings,
    pub(super) catalog: &'a Catalog,
}

impl ApplyRun<'_> {
    /// The apply's answer after a reconcile run: the state of what exists (with the
    /// measured time to ready, when the run made groups), its warnings and its error.
    pub(super) async fn finish(
        &self,
        outcome: reconcile::Outcome,
        mut diags: Diagnostics,
        ready: Option<f64>,
    ) -> ApplyResourceChangeResponse {
        let (api, planned, pool, cluster) = (self.api, self.planned, self.pool, self.cluster);
        let (settings, catalog) = (self.settings, self.catalog);
        log_mutations(&outcome.mutations);
        if let Some(w) = turn_warning(api, pool, cluster, &outcome.waits) {
            diags.push(w);
        }
        let mut state = planned.clone();
        record_subnets(&mut state, &outcome.live);
        match outcome.error {
            None => {
                set(&mut state, "node_groups", ordered_groups(&outcome.live));
                let (up, warning) = floor_up(api, cluster, pool, &outcome.live).await;
                set(&mut state, FLOOR_UP, up);
                if let Some(w) = warning {
                    diags.push(w);
                }
                // Only where the plan left it to the apply (a create or a roll): a group
                // re-created after drift is recorded but keeps the planned value.
                let planned_unknown =
                    matches!(PoolModel::of(planned).time_to_ready_seconds, Tf::Unknown);
                if let Some(seconds) = ready.filter(|_| planned_unknown) {
                    set(
                        &mut state,
                        super::plan::TIME_TO_READY,
                        Value::number(seconds),
                    );
                }
                ApplyResourceChangeResponse {
                    new_state: null_unknowns(state),
                    diagnostics: diags,
                    ..Default::default()
                }
            }
            Some(e) => {
                let state = null_unknowns(state);
                let new_state =
                    state_from_live(&state, &outcome.live, &settings.default_labels, catalog);
                diags.push(Diagnostic::error(
                    format!("Applying gpu_node_pool `{pool}` failed"),
                    format!(
                        "{e}\nThe state records exactly the node groups that exist; run `terraform apply` again to finish (Terraform may plan a replacement if the pool was being created)."
                    ),
                ));
                ApplyResourceChangeResponse {
                    new_state,
                    diagnostics: diags,
                    ..Default::default()
                }
            }
        }
    }
}

/// The error for a new pool the cloud refused for capacity: what the cloud answered, where,
/// and what the clean-up deleted (`clean`: nothing of the pool is left there, so there is
/// no state).
fn refused(
    api: &dyn NodeGroups,
    planned: &Value,
    pool: &str,
    cluster: &ClusterRef,
    refusal: &attempt::Refusal,
    clean: bool,
) -> Diagnostic {
    let pool_model = PoolModel::of(planned);
    let place = format!(
        "{} {} (cluster {cluster})",
        model::text(&pool_model.cloud),
        model::text(&pool_model.region),
    );
    let left = if !clean {
        "Deleting what the create had made failed (below).".to_string()
    } else if refusal.deleted.is_empty() {
        "Nothing of the pool was made there.".to_string()
    } else {
        format!(
            "Nothing of the pool is left there: the {} {} made before the refusal {} deleted.",
            api.traits().noun,
            refusal.deleted.join(", "),
            if refusal.deleted.len() == 1 {
                "was"
            } else {
                "were"
            }
        )
    };
    Diagnostic::error(
        format!("No GPU capacity for gpu_node_pool `{pool}` at {place}"),
        format!(
            "{} answered {}: {} failed: {}.\n{left}\nTry another region or cloud, other instance types, or later.",
            api.traits().service,
            refusal.outcome,
            refusal.error.step,
            refusal.error.source,
        ),
    )
    .at(AttributePath::attr("region"))
}

/// Deletes every node group of the pool and waits until they are gone.
async fn destroy(
    api: &dyn NodeGroups,
    prior: &Value,
    settings: &Settings,
    catalog: &Catalog,
) -> ApplyResourceChangeResponse {
    let mut diags = Diagnostics::new();
    let timeouts = inputs::timeouts(prior, &mut diags);
    let name = model::text(&PoolModel::of(prior).name);
    let cluster = match cluster_of(prior) {
        Ok(c) => c,
        Err(d) => return failed(prior.clone(), d),
    };
    let cloud = cluster.cloud();
    let live = match reconcile::read(api, &cluster, &all_names(prior, cloud, &name, &[])).await {
        Ok(l) => l,
        Err(e) => {
            return failed(
                prior.clone(),
                cloud_error(
                    api,
                    &format!("reading the node groups of `{name}`"),
                    Some(&e),
                ),
            );
        }
    };
    // Only the pool's own groups are deleted, never a stranger's of the same name.
    let (mine, _) = split_ownership(api, prior, &name, live, false);
    let names: Vec<String> = mine.into_iter().map(|g| g.spec.name).collect();
    let outcome = reconcile::destroy(api, &cluster, &names, timeouts.delete).await;
    log_mutations(&outcome.mutations);
    if let Some(w) = turn_warning(api, &name, &cluster, &outcome.waits) {
        diags.push(w);
    }
    match outcome.error {
        None => ApplyResourceChangeResponse {
            new_state: Value::Null,
            diagnostics: diags,
            ..Default::default()
        },
        Some(e) => {
            diags.push(Diagnostic::error(
                format!("Destroying gpu_node_pool `{}` failed", name),
                format!("{e}\nThe state keeps the node groups that still exist; run `terraform destroy` again."),
            ));
            ApplyResourceChangeResponse {
                new_state: state_from_live(prior, &outcome.live, &settings.default_labels, catalog),
                diagnostics: diags,
                ..Default::default()
            }
        }
    }
}

/// The error of pool `v` on `cloud` aws without `aws.node_role_arn` (EKS node groups run
/// as an IAM role), saying `detail`; none elsewhere or when it is set.
pub(super) fn missing_node_role(v: &Value, cloud: Cloud, detail: &str) -> Option<Diagnostics> {
    let set = super::cloud_blocks::aws::settings(v)
        .node_role_arn
        .is_some();
    (cloud == Cloud::Aws && !set).then(|| {
        Diagnostic::error("Missing aws.node_role_arn", detail)
            .at(AttributePath::attr("aws").then_attr("node_role_arn"))
            .into()
    })
}

/// The pool's group names on `cloud`: its generation-0 names, any recorded in state, and
/// `wanted`.
pub(super) fn all_names(prior: &Value, cloud: Cloud, name: &str, wanted: &[String]) -> Vec<String> {
    let mut set: BTreeSet<String> = [CapacityType::OnDemand, CapacityType::Spot]
        .into_iter()
        .map(|c| layout::base_name(cloud, name, c))
        .collect();
    set.extend(groups::names(prior));
    set.extend(wanted.iter().cloned());
    set.into_iter().collect()
}

/// The cluster of pool `v` as its cloud names it; refused (as validation would) when its
/// cloud, region and `cluster` do not name one.
pub(super) fn cluster_of(v: &Value) -> Result<ClusterRef, Diagnostics> {
    let Some(cloud) = super::inputs::cloud_of(v) else {
        return Err(super::inputs::unknown_cloud(v));
    };
    let cluster = model::text(&PoolModel::of(v).cluster);
    ClusterRef::parse(cloud, &super::inputs::region_of(v), &cluster).map_err(|e| {
        Diagnostic::error("Invalid cluster", format!("`cluster`: {e}"))
            .at(AttributePath::attr("cluster"))
            .into()
    })
}

/// Splits live groups into the pool's own and strangers with the same names. Ours: every
/// group when `adopt_all` (import), else those recorded in the prior state's
/// `node_groups` or carrying the cloud's ownership marker for `pool` (so an interrupted
/// create is adopted).
pub(super) fn split_ownership(
    api: &dyn NodeGroups,
    prior: &Value,
    pool: &str,
    live: Vec<NodeGroup>,
    adopt_all: bool,
) -> (Vec<NodeGroup>, Vec<NodeGroup>) {
    if adopt_all {
        return (live, Vec::new());
    }
    let recorded: BTreeSet<String> = groups::names(prior).into_iter().collect();
    let rules = api.traits();
    live.into_iter()
        .partition(|g| recorded.contains(g.name()) || rules.owned_by(&g.spec, pool))
}

/// The error for a group of the pool's name that is not the pool's.
pub(super) fn foreign_group(
    api: &dyn NodeGroups,
    cluster: &ClusterRef,
    pool: &str,
    g: &NodeGroup,
) -> Diagnostics {
    let t = api.traits();
    let (marker, service, noun) = (t.ownership_tag, t.service, t.noun);
    let id = super::import::import_id(cluster, pool);
    let mut title = format!(
        "{noun} `{}` already exists and is not this pool's",
        g.name()
    );
    title[..1].make_ascii_uppercase();
    Diagnostic::error(
        title,
        format!(
            "{service} cluster `{cluster}` already has a {noun} `{}` that this pool did not create (it is not in the state and has no `{marker} = {}` tag). Nothing was changed. Import it into this resource (`terraform import <address> {id}`) if it belongs to the pool, or give the pool another `name`.",
            g.name(),
            t.marker_value(pool)
        ),
    )
    .at(AttributePath::attr("name"))
    .into()
}

/// `aws.subnet_ids` of `state`, when the user left them to the cluster: the subnets the
/// live groups were placed in (unchanged when set or when no group reports them).
fn record_subnets(state: &mut Value, live: &[NodeGroup]) {
    let placed = live.iter().find_map(|g| match &g.spec.class {
        NodeClass::Aws(c) => c.subnets.clone(),
        _ => None,
    });
    let Some(placed) = placed else { return };
    if let Some(Value::Object(aws)) = match state {
        Value::Object(m) => m.get_mut("aws"),
        _ => None,
    } && aws
        .get("subnet_ids")
        .is_none_or(|v| v.is_null() || !v.is_wholly_known())
    {
        aws.insert(
            "subnet_ids".into(),
            Value::List(placed.iter().map(Value::string).collect()),
        );
    }
}

/// Each mutating call of an apply, at debug level (`TF_LOG=debug` shows them).
pub(super) fn log_mutations(mutations: &[gpu_core::seam::choke::Mutation]) {
    for m in mutations {
        tracing::debug!(
            verb = ?m.verb,
            target = %m.target,
            took_ms = m.took.as_millis() as u64,
            error = m.error.as_deref().unwrap_or(""),
            "cloud mutation"
        );
    }
}

/// The warning of a pool that waited for its turn at its cluster (a cloud that runs one
/// operation per cluster): how long behind this apply's other pools, how long refused
/// while another operation ran, and the cloud's last such answer. Nothing for a wait
/// under a second without refusals.
fn turn_warning(
    api: &dyn NodeGroups,
    pool: &str,
    cluster: &ClusterRef,
    w: &reconcile::TurnWaits,
) -> Option<Diagnostic> {
    if w.refused == 0 && w.total() < std::time::Duration::from_secs(1) {
        return None;
    }
    let t = api.traits();
    let secs = |d: std::time::Duration| format!("{:.1} s", d.as_secs_f64());
    let mut parts = Vec::new();
    if !w.queued.is_zero() {
        parts.push(format!(
            "{} behind this apply's other changes to the cluster",
            secs(w.queued)
        ));
    }
    if w.refused > 0 {
        let times = if w.refused == 1 { "time" } else { "times" };
        parts.push(format!(
            "{} while the cluster ran another operation ({} refused the change {} {times}; its last answer: {})",
            secs(w.refused_for),
            t.service,
            w.refused,
            w.last_refusal.as_deref().unwrap_or("busy")
        ));
    }
    let rule = if t.serial_operations {
        format!(
            "{} runs one {} operation per cluster at a time, so changes to cluster `{cluster}` queue",
            t.service, t.noun
        )
    } else {
        format!(
            "{} refuses a change to a {} while another operation runs on it (cluster `{cluster}`)",
            t.service, t.noun
        )
    };
    Some(Diagnostic::warning(
        format!(
            "gpu_node_pool `{pool}` waited {} for its turn",
            secs(w.total())
        ),
        format!(
            "{rule}. This pool waited {}. A refused change did nothing and was sent again with the same name, so no {} was made twice. Time behind this apply's own pools does not count against `timeouts`; time refused does.",
            parts.join(", and "),
            t.noun
        ),
    ))
}

/// Live groups sorted by name (`-od` before `-spot`), as `node_groups`.
fn ordered_groups(live: &[NodeGroup]) -> Value {
    let mut v = live.to_vec();
    v.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    groups::live(&v)
}

/// A state with every unknown left replaced by null (a new state may hold no unknowns).
pub(super) fn null_unknowns(v: Value) -> Value {
    match v {
        Value::Unknown(_) => Value::Null,
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (k, null_unknowns(v))).collect())
        }
        Value::Map(m) => Value::Map(m.into_iter().map(|(k, v)| (k, null_unknowns(v))).collect()),
        Value::List(l) => Value::List(l.into_iter().map(null_unknowns).collect()),
        Value::Set(l) => Value::Set(l.into_iter().map(null_unknowns).collect()),
        other => other,
    }
}

/// Fails before any change: the state stays as it was.
pub(super) fn failed(state: Value, diagnostics: Diagnostics) -> ApplyResourceChangeResponse {
    ApplyResourceChangeResponse {
        new_state: null_unknowns(state),
        diagnostics,
        ..Default::default()
    }
}

/// An error diagnostic for a failed call to `api`'s cloud (titled `EKS call failed`,
/// `AKS call failed` or `GKE call failed`).
pub(super) fn cloud_error(api: &dyn NodeGroups, what: &str, e: Option<&CloudError>) -> Diagnostics {
    let detail = match e {
        Some(e) => format!("{what}: {e}"),
        None => what.to_string(),
    };
    Diagnostic::error(format!("{} call failed", api.traits().service), detail).into()
}

/// Nanoseconds since the epoch in base 36: a fresh idempotency seed per apply.
pub(super) fn unique_suffix() -> String {
    let mut n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while n > 0 {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}
