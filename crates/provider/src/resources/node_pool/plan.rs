//! `PlanResourceChange` for `gpu_node_pool`: validate, choose instance types, price the
//! pool, fill in the computed attributes, and say what forces a replacement.

use gpu_core::catalog::Catalog;
use gpu_core::cost::{self, format_usd};
use gpu_core::pool::generation::Roll;
use gpu_core::pool::spelling;
use tfplugin::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Value};

use super::cloud_blocks;
use super::desired::{self, Desired, Settings};
use super::groups;
use super::inputs::{self, text};
use super::model::{self, PoolModel};
use super::schema::COST_ATTRIBUTES;
use super::{places, plan_places};

/// The computed seconds from the first request to the pool's groups ready.
pub const TIME_TO_READY: &str = "time_to_ready_seconds";

/// Plans a create, update, replace or destroy of one pool.
pub fn plan(
    req: &PlanResourceChangeRequest,
    settings: &Settings,
    catalog: &Catalog,
) -> PlanResourceChangeResponse {
    let prior = &req.prior_state;
    let proposed = &keep_prior_spelling(prior, &req.proposed_new_state, &req.config, catalog);
    if proposed.is_null() {
        return PlanResourceChangeResponse {
            planned_state: Value::Null,
            diagnostics: destroy_preview(prior),
            ..Default::default()
        };
    }
    let mut checked = Diagnostics::new();
    places::check(proposed, &mut checked);
    if checked.has_errors() {
        return PlanResourceChangeResponse {
            planned_state: proposed.clone(),
            diagnostics: checked,
            ..Default::default()
        };
    }
    // Only a change of identity (cloud, region, cluster, name) replaces the pool; all else
    // is an update, rolling node groups where needed.
    let replace =
        tfplugin::plan::requires_replace_at(prior, proposed, super::schema::replace_paths());
    let new = prior.is_null() || !replace.is_empty();
    // A pool on a failover place is planned there, unless this apply moves it.
    let current = if new { None } else { places::elsewhere(prior) };
    let moves = current.as_ref().is_some_and(|at| {
        crate::resources::placing::fails_back(proposed)
            || !places::order(proposed).iter().any(|p| p.same(at))
    });
    if let Some(at) = current.as_ref().filter(|_| !moves) {
        let view = |v: &Value| places::at(v, at);
        let base = Base {
            prior: &view(prior),
            proposed: &view(proposed),
            config: &view(&req.config),
            prior_private: &req.prior_private,
        };
        let mut r = plan_at(&base, Vec::new(), None, settings, catalog);
        places::restore(&mut r.planned_state, proposed);
        if !r.diagnostics.has_errors() {
            r.diagnostics
                .push(plan_places::staying(prior, at, proposed));
        }
        return r;
    }
    let walk = if moves || (new && crate::resources::placing::has_failover(proposed)) {
        Some(current)
    } else {
        None
    };
    let base = Base {
        prior,
        proposed,
        config: &req.config,
        prior_private: &req.prior_private,
    };
    plan_at(&base, replace, walk, settings, catalog)
}

/// The values one plan starts from (all at the place planned for).
struct Base<'a> {
    prior: &'a Value,
    proposed: &'a Value,
    config: &'a Value,
    prior_private: &'a [u8],
}

/// Plans the pool at the place its values name. `walk`: the apply may place the pool
/// (a create with `failover` blocks, or a move back from `Some(current)` failover place),
/// so where it lands, its groups and its prices are known only after it.
fn plan_at(
    base: &Base<'_>,
    replace: Vec<AttributePath>,
    walk: Option<Option<places::Place>>,
    settings: &Settings,
    catalog: &Catalog,
) -> PlanResourceChangeResponse {
    let (prior, proposed, config) = (base.prior, base.proposed, base.config);
    let fail = |diagnostics: Diagnostics| PlanResourceChangeResponse {
        planned_state: proposed.clone(),
        diagnostics,
        ..Default::default()
    };
    let mut diags = inputs::require_known(config);
    if diags.has_errors() {
        return fail(diags);
    }
    let mut timeouts_diags = Diagnostics::new();
    inputs::timeouts(proposed, &mut timeouts_diags);
    diags.extend(timeouts_diags);
    // Only what the user wrote counts as pinned; a value from state was a choice.
    let mut cfg_view = proposed.clone();
    if PoolModel::of(config).instance_types.is_null()
        && let Value::Object(m) = &mut cfg_view
    {
        m.insert("instance_types".into(), Value::Null);
    }
    let mut spec = match desired::validate(&with_stand_ins(&cfg_view), catalog) {
        Ok(s) => s,
        Err(d) => {
            diags.extend(d);
            return fail(diags);
        }
    };
    // The stand-ins only passed validation; messages name what is known.
    let pool = PoolModel::of(proposed);
    spec.cluster = model::text(&pool.cluster);
    spec.name = model::opt(&pool.name).unwrap_or_else(|| UNKNOWN_NAME.into());
    cloud_blocks::check_own(proposed, spec.cloud, Some(&spec.region), &mut diags);
    if !prior.is_null()
        && let Some(r) = pool.reservation.known()
        && r.commitment_id.is_unknown()
    {
        diags.attr_error(
            AttributePath::attr("reservation").then_attr("commitment_id"),
            "reservation.commitment_id must be known at plan time",
            "This pool exists, and which of its node groups roll depends on the commitment it consumes, which is not bought yet: apply the `gpu_commitment` first (`terraform apply -target=gpu_commitment.<name>`), then this pool.",
        );
    }
    // A walk lays the pool out anew wherever it lands: nothing of the prior is kept.
    let kept = if walk.is_some() {
        (!pins_instance_types(config)).then(Vec::new)
    } else {
        kept_types(prior, proposed, config)
    };
    let mut want = desired::with_types(spec, kept, catalog, settings, proposed);
    // A replacement (or a walk) starts from nothing: no group of the old pool is kept or
    // rolled.
    let from_nothing = !replace.is_empty() || walk.is_some();
    let groups_base = if from_nothing { &Value::Null } else { prior };
    let rolls = desired::name_groups(&mut want, groups_base);
    // A replacement is priced as a new pool (Terraform plans the create part again with
    // no prior state); the delta against the pool it replaces goes in the warning.
    let prior_cost = if replace.is_empty() {
        desired::prior_cost(prior)
    } else {
        None
    };
    let preview = match desired::price(&want, prior_cost) {
        Ok(p) => p,
        Err(d) => {
            diags.extend(d);
            return fail(diags);
        }
    };
    if let Some(budget) = settings.max_monthly_usd
        && let Err(e) = cost::check_budget(&preview, budget)
    {
        diags.push(
            Diagnostic::error("Over budget", e.to_string()).at(AttributePath::attr("max_nodes")),
        );
    }
    check_account(&want, settings, AttributePath::attr("cluster"), &mut diags);
    let elsewhere = match &walk {
        Some(current) => plan_places::price_places(
            proposed,
            config,
            current.as_ref(),
            prior_cost,
            settings,
            catalog,
            &mut diags,
        ),
        None => Vec::new(),
    };
    if diags.has_errors() {
        return fail(diags);
    }
    let mut planned = proposed.clone();
    fill(
        &mut planned,
        prior,
        &want,
        &desired::cost_values(&preview),
        pins_instance_types(config),
    );
    // Measured by an apply that makes groups (a create, a roll, a replacement); any other
    // change keeps the last measure.
    let makes_groups = prior.is_null() || from_nothing || !rolls.is_empty();
    // The prior value as stored (a number read back through f64 would not compare equal
    // to Terraform's decimal, and the plan would never be empty).
    let time_to_ready = if makes_groups {
        Value::unknown()
    } else {
        prior
            .get_attr(TIME_TO_READY)
            .cloned()
            .unwrap_or(Value::Null)
    };
    set(&mut planned, TIME_TO_READY, time_to_ready);
    plan_places::fill_placement(
        &mut planned,
        prior,
        walk.is_some() || new_pool(prior, &replace),
    );
    if let Some(current) = &walk {
        plan_places::unknown_until_placed(&mut planned, pins_instance_types(config));
        diags.push(plan_places::walk_warning(
            &want,
            &preview,
            &elsewhere,
            current.as_ref(),
            prior,
        ));
    } else if !prior.is_null() && same_apart_from_cost(&planned, prior) {
        // Nothing changes: keep the prices of the last change, so the plan stays empty.
        for a in COST_ATTRIBUTES
            .iter()
            .chain(&["node_groups", super::floor::FLOOR_UP])
        {
            set(
                &mut planned,
                a,
                prior.get_attr(a).cloned().unwrap_or(Value::Null),
            );
        }
    } else {
        diags.push(cost_warning(
            &want,
            &preview,
            prior,
            !replace.is_empty(),
            &rolls,
        ));
        // The apply reads the floor again.
        set(&mut planned, super::floor::FLOOR_UP, Value::unknown());
    }
    PlanResourceChangeResponse {
        planned_state: planned,
        requires_replace: replace,
        planned_private: base.prior_private.to_vec(),
        diagnostics: diags,
    }
}

/// Whether the plan makes a new pool (a create or a replacement).
fn new_pool(prior: &Value, replace: &[AttributePath]) -> bool {
    prior.is_null() || !replace.is_empty()
}

/// Refuses a cluster outside the provider's `azure.subscription_id` or `gcp.project`: the
/// credentials are for that account, and a pool elsewhere is most likely a typo.
pub(super) fn check_account(
    want: &Desired,
    settings: &Settings,
    path: AttributePath,
    d: &mut Diagnostics,
) {
    let Ok(cluster) = gpu_core::seam::ClusterRef::parse(want.spec.cloud, "", &want.spec.cluster)
    else {
        return;
    };
    let (setting, configured, named) = match &cluster {
        gpu_core::seam::ClusterRef::Aks { subscription, .. } => (
            "azure.subscription_id",
            settings.clouds.azure_subscription(),
            subscription.as_str(),
        ),
        gpu_core::seam::ClusterRef::Gke { project, .. } => (
            "gcp.project",
            settings.clouds.gcp_project(),
            project.as_str(),
        ),
        gpu_core::seam::ClusterRef::Eks { .. } => return,
    };
    if let Some(c) = configured
        && !c.eq_ignore_ascii_case(named)
    {
        d.push(
            Diagnostic::error(
                "Cluster outside the provider's account",
                format!(
                    "`{path}` is in {named:?}, but the provider's `{setting}` is {c:?}: use a cluster of {c:?}, or change `{setting}`."
                ),
            )
            .at(path),
        );
    }
}

/// How a pool whose `name` is not known yet is called in plan messages.
const UNKNOWN_NAME: &str = "(name known after apply)";

/// A value that passes every check, standing in for an unknown one.
const STAND_IN: &str = "known-after-apply";

/// `v` with the unknown values that validation would read as `""` (and so refuse) replaced
/// by valid stand-ins: `cluster`, `name`, and a taint's `key` and `effect`. Unlike the cost
/// inputs, these need not be known to plan (e.g. `cluster = aws_eks_cluster.x.name` in the
/// configuration that creates the cluster); they are checked once known, at apply.
pub(super) fn with_stand_ins(v: &Value) -> Value {
    let unknown = |v: &Value, name: &str| v.get_attr(name).is_some_and(|x| !x.is_known());
    let mut out = v.clone();
    for name in ["cluster", "name"] {
        if unknown(v, name) {
            set(&mut out, name, Value::string(STAND_IN));
        }
    }
    if let Some(Value::List(taints)) = planned_attr_mut(&mut out, "taint") {
        for t in taints.iter_mut() {
            let before = t.clone();
            if unknown(&before, "key") {
                set(t, "key", Value::string(STAND_IN));
            }
            if unknown(&before, "effect") {
                set(t, "effect", Value::string("NoSchedule"));
            }
        }
    }
    out
}

/// The prior's chosen instance types, when the user pins none and nothing they depend on
/// changed: choosing again would roll the node groups whenever the catalog's order moved.
fn kept_types(prior: &Value, proposed: &Value, config: &Value) -> Option<Vec<String>> {
    if pins_instance_types(config) {
        return None;
    }
    if prior.is_null() {
        return Some(Vec::new());
    }
    let same = ["cloud", "region", "gpu", "gpu_count"]
        .iter()
        .all(|a| prior.get_attr(a) == proposed.get_attr(a))
        && inputs::capacity(prior).0 == inputs::capacity(proposed).0;
    let prior_types =
        model::strings(&PoolModel::of(prior).instance_types).filter(|t| !t.is_empty());
    Some(if same {
        prior_types.unwrap_or_default()
    } else {
        Vec::new()
    })
}

/// Whether the configuration sets `instance_types` (pins them) rather than letting the
/// provider choose.
pub(super) fn pins_instance_types(config: &Value) -> bool {
    !PoolModel::of(config).instance_types.is_null()
}

/// `proposed` with the prior value kept for each attribute whose new spelling means the
/// same (`cloud = "AWS"` for `"aws"`, `gpu = "l4"` for `"L4"`, a region in other case,
/// pinned `instance_types` in another order or case). Terraform accepts a planned value
/// equal to the prior one in place of the configuration's, so the plan shows no change.
pub fn keep_prior_spelling(
    prior: &Value,
    proposed: &Value,
    config: &Value,
    catalog: &Catalog,
) -> Value {
    if prior.is_null() || proposed.is_null() {
        return proposed.clone();
    }
    let mut out = proposed.clone();
    let both = |name: &str| match (prior.get_attr(name), proposed.get_attr(name)) {
        (Some(p @ Value::String(_)), Some(n @ Value::String(_))) if p != n => {
            Some((text(prior, name), text(proposed, name)))
        }
        _ => None,
    };
    let cloud = spelling::cloud(&model::text(&PoolModel::of(proposed).cloud));
    let mut keep = Vec::new();
    if let Some((p, n)) = both("cloud")
        && spelling::cloud(&p).is_some()
        && spelling::cloud(&p) == spelling::cloud(&n)
    {
        keep.push("cloud");
    }
    if let Some((p, n)) = both("gpu")
        && spelling::gpu(&p).is_some()
        && spelling::gpu(&p) == spelling::gpu(&n)
    {
        keep.push("gpu");
    }
    if let Some((p, n)) = both("reclaim")
        && gpu_core::pool::Reclaim::parse(&p).is_some()
        && gpu_core::pool::Reclaim::parse(&p) == gpu_core::pool::Reclaim::parse(&n)
    {
        keep.push("reclaim");
    }
    if let Some((p, n)) = both("driver")
        && gpu_core::pool::spelling::driver(&p).is_some()
        && gpu_core::pool::spelling::driver(&p) == gpu_core::pool::spelling::driver(&n)
    {
        keep.push("driver");
    }
    if let Some((p, n)) = both("region")
        && spelling::region(cloud, &p) == spelling::region(cloud, &n)
    {
        keep.push("region");
    }
    if pins_instance_types(config)
        && let (Some(p), Some(n)) = (
            model::strings(&PoolModel::of(prior).instance_types),
            model::strings(&PoolModel::of(proposed).instance_types),
        )
        && p != n
        && spelling::instance_type_set(catalog, cloud, &p)
            == spelling::instance_type_set(catalog, cloud, &n)
    {
        keep.push("instance_types");
    }
    for name in keep {
        set(
            &mut out,
            name,
            prior.get_attr(name).cloned().unwrap_or(Value::Null),
        );
    }
    cloud_blocks::keep_prior_spelling(prior, &mut out);
    if prior.get_attr("failover") != proposed.get_attr("failover")
        && places::same_failovers(prior, proposed)
    {
        set(
            &mut out,
            "failover",
            prior.get_attr("failover").cloned().unwrap_or(Value::Null),
        );
    }
    out
}

/// Writes the computed attributes of a planned pool; `pinned`: the configuration sets
/// `instance_types`, so the planned list stays the user's (or the prior's, same meaning).
fn fill(
    planned: &mut Value,
    prior: &Value,
    want: &Desired,
    costs: &[(&'static str, Value)],
    pinned: bool,
) {
    let pool = PoolModel::of(planned);
    let cluster = gpu_core::seam::ClusterRef::parse(
        want.spec.cloud,
        &want.spec.region,
        &model::text(&pool.cluster),
    );
    let id = match cluster {
        Ok(c) if planned_known(planned, &["region", "cluster", "name"]) => {
            Value::string(super::import::import_id(&c, &model::text(&pool.name)))
        }
        _ => Value::unknown(),
    };
    set(planned, "id", id);
    if !pinned {
        set(
            planned,
            "instance_types",
            Value::List(want.spec.instance_types.iter().map(Value::string).collect()),
        );
    }
    for (k, v) in costs {
        set(planned, k, v.clone());
    }
    let ids = groups::ids(prior);
    let ng = if planned_known(planned, &["name"]) {
        groups::planned(&want.groups, &ids)
    } else {
        Value::unknown()
    };
    set(planned, "node_groups", ng);
    // Subnets default to the cluster's, read at apply; keep what state knows. (Only on
    // aws: elsewhere the block is not read, and stays as written.)
    if want.spec.cloud == gpu_core::offer::Cloud::Aws
        && let Some(Value::Object(aws)) = planned_attr_mut(planned, "aws")
        && aws.get("subnet_ids").is_none_or(Value::is_null)
    {
        let prior_subnets = PoolModel::of(prior)
            .aws
            .into_known()
            .and_then(|a| model::strings(&a.subnet_ids))
            .map(|ids| Value::List(ids.iter().map(Value::string).collect()));
        aws.insert(
            "subnet_ids".into(),
            prior_subnets.unwrap_or_else(Value::unknown),
        );
    }
}

/// Whether every attribute in `names` is known in `v`.
fn planned_known(v: &Value, names: &[&str]) -> bool {
    names
        .iter()
        .all(|n| v.get_attr(n).is_some_and(Value::is_wholly_known))
}

/// The attribute `name` of object `v`, mutably.
fn planned_attr_mut<'a>(v: &'a mut Value, name: &str) -> Option<&'a mut Value> {
    match v {
        Value::Object(m) => m.get_mut(name),
        _ => None,
    }
}

/// Sets attribute `name` of object `v`.
pub(super) fn set(v: &mut Value, name: &str, value: Value) {
    if let Value::Object(m) = v {
        m.insert(name.to_string(), value);
    }
}

/// Whether `planned` and `prior` agree on everything but the cost attributes and ids.
fn same_apart_from_cost(planned: &Value, prior: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        for a in COST_ATTRIBUTES {
            set(&mut v, a, Value::Null);
        }
        groups::strip_ids(&mut v);
        v
    };
    strip(planned) == strip(prior)
}

/// The one-line preview as a warning, so the approver sees the money.
fn cost_warning(
    want: &Desired,
    p: &cost::CostPreview,
    prior: &Value,
    replaces: bool,
    rolls: &[Roll],
) -> Diagnostic {
    let name = &want.spec.name;
    let mut detail = p.what();
    let mut money = p.headline();
    if replaces && let Some(old) = desired::prior_cost(prior) {
        // A replacement is priced as a new pool: the change is against the old one.
        money = p.headline_with_change(p.monthly_usd - old.monthly_usd);
        detail = format!(
            "Replaces the pool ({}/month now → {}/month): {detail}",
            format_usd(old.monthly_usd),
            format_usd(p.monthly_usd),
        );
    }
    for r in rolls {
        detail.push_str(&format!(
            "\nRolls {} → {} ({}): the new group is up before the old is deleted; both are billed during the roll.",
            r.from,
            r.to,
            r.reasons.join("; ")
        ));
    }
    detail.push('\n');
    detail.push_str(&p.price_line(gpu_core::time::today_days()));
    Diagnostic::warning(format!("gpu_node_pool.{name}: {money}"), detail)
}

/// The saving shown when a pool is destroyed.
fn destroy_preview(prior: &Value) -> Diagnostics {
    let Some(old) = desired::prior_cost(prior) else {
        return Diagnostics::new();
    };
    Diagnostics::from(Diagnostic::warning(
        format!(
            "gpu_node_pool.{}: -{}/month (up to {})",
            model::text(&PoolModel::of(prior).name),
            format_usd(old.monthly_usd),
            format_usd(old.monthly_usd_max)
        ),
        "Destroys the pool.",
    ))
}
