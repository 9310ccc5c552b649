//! Planning an instance: validation (no cloud call), the instance type from the catalog,
//! the default image looked up (create only), the price by the node pool's function, and
//! the one decision of an update: labels change in place, anything else rolls the VM
//! (new one running first). A re-spelling keeps the prior value: never a change.

use gpu_core::catalog::Catalog;
use gpu_core::cost::{self, PriorCost};
use gpu_core::instance::InstanceSpec;
use gpu_core::offer::Cloud;
use gpu_core::pool::spelling;
use tfplugin::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use tfplugin::{AttributePath, Diagnostic, Diagnostics, Tf, Value};

use super::cloud_blocks;
use super::model::InstanceModel;
use super::{FIXED, Settings, core_config, failover, places};
use crate::model_values::{flag, opt, text, value_of};
use crate::resources::commitment::plan::field_diagnostics;
use gpu_core::seam::{ConnectInstances as Connector, Place};

/// Computed attributes that describe one VM: unknown until it exists.
pub const PER_VM: &[&str] = &[
    "id",
    "vm_name",
    "instance_id",
    "disk_ids",
    "status",
    TIME_TO_READY,
];

/// The computed seconds from the launch request to the VM running.
pub const TIME_TO_READY: &str = "time_to_ready_seconds";

/// Optional inputs the provider fills when the configuration leaves them out.
pub const FILLED: &[&str] = &[
    "zone",
    "name",
    "instance_type",
    "reclaim",
    "image",
    "disk_size_gb",
];

/// The cost attributes, a subset of the node pool's.
pub const COST: &[&str] = &[
    "hourly_usd",
    "monthly_usd",
    "monthly_delta_usd",
    "spot_priced_at_on_demand",
    "price_source",
    "price_as_of",
    "cost_summary",
];

/// Inputs an unknown value of which (in the configuration) leaves the checks and the price
/// to apply.
const INPUTS: &[&str] = &[
    "cloud",
    "region",
    "zone",
    "gpu",
    "gpu_count",
    "instance_type",
    "spot",
    "reclaim",
    "image",
    "disk_size_gb",
    "labels",
    "name",
    "aws",
    "azure",
    "gcp",
];

/// Plans a create, an update (labels in place, or a roll) or a destroy.
pub async fn plan(
    req: &PlanResourceChangeRequest,
    settings: &Settings,
    catalog: &Catalog,
    connector: &dyn Connector,
) -> PlanResourceChangeResponse {
    let (prior, config) = (&req.prior_state, &req.config);
    let proposed = &keep_failover_spelling(prior, &req.proposed_new_state);
    if proposed.is_null() {
        return respond(Value::Null, destroy_preview(prior));
    }
    let unknown_input = INPUTS
        .iter()
        .any(|n| config.get_attr(n).is_some_and(|v| !v.is_wholly_known()));
    let mut checked = Diagnostics::new();
    places::check(config, &mut checked);
    if checked.has_errors() {
        return respond(proposed.clone(), checked);
    }
    let walks = crate::resources::placing::has_failover(config);
    // A create or a roll with failover blocks walks the places from the first.
    let walk = || {
        failover::plan_walk(
            prior,
            proposed,
            config,
            None,
            unknown_input,
            settings,
            catalog,
        )
    };
    if prior.is_null() {
        if walks {
            return walk();
        }
        let mut r = plan_create(
            proposed,
            config,
            settings,
            catalog,
            connector,
            unknown_input,
        )
        .await;
        placed_by_apply(&mut r.planned_state);
        return r;
    }
    if req.prior_private == super::import::IMPORTED {
        // Just imported: what the cloud does not report comes from the configuration.
        let (adopted, taken) = super::import::adopt(prior, proposed, catalog);
        let mut r = plan_update(
            &adopted,
            proposed,
            config,
            settings,
            catalog,
            connector,
            unknown_input,
        )
        .await;
        if !taken.is_empty() {
            r.planned_private = super::import::IMPORTED.to_vec();
            r.diagnostics.push(Diagnostic::warning(
                "Imported gpu_instance: values taken from the configuration",
                format!(
                    "No cloud reports these back about a VM, so they are taken as written, without changing the VM: {}. Check them against how the VM was made.",
                    taken.join(", ")
                ),
            ));
        }
        return r;
    }
    // A VM on a failover place is planned there, unless this apply moves it back.
    let current = places::elsewhere(prior);
    let moves = current.as_ref().is_some_and(|at| {
        crate::resources::placing::fails_back(proposed)
            || !places::order(proposed).iter().any(|p| p.same(at))
    });
    if let Some(at) = current.as_ref().filter(|_| !moves) {
        let view = |v: &Value| places::at(v, at);
        let mut r = plan_update(
            &view(prior),
            &view(proposed),
            &view(config),
            settings,
            catalog,
            connector,
            unknown_input,
        )
        .await;
        if rolls(&r.planned_state) {
            placed_by_apply(&mut r.planned_state);
        }
        places::restore(&mut r.planned_state, proposed);
        if !r.diagnostics.has_errors() {
            r.diagnostics.push(failover::staying(prior, at, proposed));
        }
        return r;
    }
    if moves {
        return failover::plan_walk(
            prior,
            proposed,
            config,
            current.as_ref(),
            unknown_input,
            settings,
            catalog,
        );
    }
    let mut r = plan_update(
        prior,
        proposed,
        config,
        settings,
        catalog,
        connector,
        unknown_input,
    )
    .await;
    if rolls(&r.planned_state) && !r.diagnostics.has_errors() {
        if walks {
            return walk();
        }
        placed_by_apply(&mut r.planned_state);
    }
    r
}

/// Whether a planned update rolls the VM (a new VM: its id is not known yet).
fn rolls(planned: &Value) -> bool {
    planned.get_attr("id").is_some_and(|v| !v.is_known())
}

/// A create or roll at the VM's own place (or the place it runs on): the place is known,
/// its zone and type as planned, and since when and `attempts` are the apply's.
fn placed_by_apply(planned: &mut Value) {
    if planned.is_null() {
        return;
    }
    let m = InstanceModel::of(planned);
    let own = place_of(planned, None, &Settings::default());
    let placement = match own {
        Some(p) => Value::object([
            ("cloud", Value::string(p.cloud.as_str())),
            ("region", Value::string(p.region)),
            ("zone", value_of(&m.zone)),
            ("instance_type", value_of(&m.instance_type)),
            ("since", Value::unknown()),
        ]),
        None => Value::unknown(),
    };
    set(planned, "placement", placement);
    set(planned, "attempts", Value::unknown());
}

/// `proposed` with the prior `failover` blocks kept when the new ones name the same places
/// in another spelling: a spelling is never a change.
fn keep_failover_spelling(prior: &Value, proposed: &Value) -> Value {
    let mut out = proposed.clone();
    if !prior.is_null()
        && !proposed.is_null()
        && prior.get_attr("failover") != proposed.get_attr("failover")
        && places::same_failovers(prior, proposed)
    {
        let kept = prior.get_attr("failover").cloned().unwrap_or(Value::Null);
        set(&mut out, "failover", kept);
    }
    out
}

fn respond(planned: Value, diagnostics: Diagnostics) -> PlanResourceChangeResponse {
    PlanResourceChangeResponse {
        planned_state: planned,
        requires_replace: Vec::new(),
        planned_private: Vec::new(),
        diagnostics,
    }
}

pub(super) fn set(v: &mut Value, name: &str, value: Value) {
    if let Value::Object(m) = v {
        m.insert(name.to_string(), value);
    }
}

/// The configuration's problems; unknown inputs wait for the plan.
pub fn validate_config(config: &Value, settings: &Settings, catalog: &Catalog) -> Diagnostics {
    if !config.is_wholly_known() {
        return Diagnostics::new();
    }
    let mut c = core_config(config, settings);
    // Terraform validates before it configures the provider: the provider's project is
    // checked at plan.
    c.default_gcp_project
        .get_or_insert_with(|| "provider-project".into());
    match c.validate(catalog) {
        Ok(_) => Diagnostics::new(),
        Err(errors) => field_diagnostics(&errors),
    }
}

/// Where `v` lives, for the connector.
pub fn place_of(v: &Value, spec: Option<&InstanceSpec>, settings: &Settings) -> Option<Place> {
    let m = InstanceModel::of(v);
    let cloud = spelling::cloud(&opt(&m.cloud)?)?;
    Some(Place {
        cloud,
        region: spelling::region(Some(cloud), &opt(&m.region)?),
        scope: cloud_blocks::scope(cloud, Some(&m), spec, &settings.base.clouds),
    })
}

async fn plan_create(
    proposed: &Value,
    config: &Value,
    settings: &Settings,
    catalog: &Catalog,
    connector: &dyn Connector,
    unknown_input: bool,
) -> PlanResourceChangeResponse {
    let mut planned = proposed.clone();
    for n in PER_VM
        .iter()
        .chain(["last_reclaimed_at", "image_description"].iter())
    {
        set(&mut planned, n, Value::unknown());
    }
    for n in FILLED {
        if config.get_attr(n).is_none_or(Value::is_null) {
            set(&mut planned, n, Value::unknown());
        }
    }
    set(&mut planned, "reclaims", Value::number(0));
    if unknown_input {
        for n in COST {
            set(&mut planned, n, Value::unknown());
        }
        return respond(planned, Diagnostics::new());
    }
    let spec = match core_config(config, settings).validate(catalog) {
        Ok(s) => s,
        Err(e) => return respond(planned, field_diagnostics(&e)),
    };
    let mut d = Diagnostics::new();
    if let Some(missing) = cloud_blocks::missing_setting(spec.cloud, &settings.base.clouds) {
        d.push(missing);
        return respond(planned, d);
    }
    let Some(chosen) = spec.chosen_type(catalog, &settings.prices) else {
        d.push(no_instance_type(&spec));
        return respond(planned, d);
    };
    set(
        &mut planned,
        "instance_type",
        Value::string(chosen.instance_type.clone()),
    );
    set(
        &mut planned,
        "disk_size_gb",
        Value::number(spec.disk_size_gb),
    );
    set(
        &mut planned,
        "reclaim",
        if spec.spot {
            Value::string(spec.reclaim.as_str())
        } else {
            Value::Null
        },
    );
    match &spec.zone {
        Some(z) => set(&mut planned, "zone", Value::string(z.clone())),
        None if cloud_blocks::unset_zone_stays_null(spec.cloud) => {
            set(&mut planned, "zone", Value::Null)
        }
        None => {}
    }
    if let Some(n) = &spec.name {
        set(&mut planned, "name", Value::string(n.clone()));
    }
    match &spec.image {
        Some(i) => {
            set(&mut planned, "image", Value::string(i.clone()));
            set(&mut planned, "image_description", Value::Null);
        }
        None => match default_image(&spec, settings, connector).await {
            Ok(img) => {
                set(&mut planned, "image", Value::string(img.id));
                set(
                    &mut planned,
                    "image_description",
                    Value::string(img.description),
                );
            }
            Err(diag) => {
                d.push(diag);
                return respond(planned, d);
            }
        },
    }
    price_into(&mut planned, &spec, chosen, None, "creates", &mut d);
    respond(planned, d)
}

/// The error of a spec the catalog has no priced instance type for (create and roll).
pub(super) fn no_instance_type(spec: &InstanceSpec) -> Diagnostic {
    Diagnostic::error(
        "No instance type",
        format!(
            "the catalog has no priced {} instance type with {} × {} in {} (within `max_price_age`)",
            spec.cloud, spec.gpu_count, spec.gpu.name, spec.region
        ),
    )
    .at(AttributePath::attr("gpu"))
}

/// The cloud's default GPU image for `spec`, or why it could not be looked up.
async fn default_image(
    spec: &InstanceSpec,
    settings: &Settings,
    connector: &dyn Connector,
) -> Result<gpu_core::instance::ImageRef, Diagnostic> {
    let place = Place {
        cloud: spec.cloud,
        region: spec.region.clone(),
        scope: cloud_blocks::scope(spec.cloud, None, Some(spec), &settings.base.clouds),
    };
    let fail = |e: String| {
        Diagnostic::error(
            "Cannot look up the default GPU image",
            format!(
                "{e}. Set `image` to choose one yourself, or give the provider credentials for {}.",
                spec.cloud
            ),
        )
        .at(AttributePath::attr("image"))
    };
    let cloud = connector
        .instances(&place)
        .await
        .map_err(|e| fail(e.to_string()))?;
    cloud
        .default_image(&spec.region)
        .await
        .map_err(|e| fail(e.to_string()))
}

/// Prices `spec` on `chosen` into the cost attributes, with the warning an approver reads.
fn price_into(
    planned: &mut Value,
    spec: &InstanceSpec,
    chosen: gpu_core::pool::ChosenType,
    prior: Option<PriorCost>,
    verb: &str,
    d: &mut Diagnostics,
) {
    match cost::preview(&spec.as_pool(), &[chosen], prior) {
        Ok(p) => {
            for (n, v) in crate::resources::node_pool::desired::cost_values(&p) {
                if COST.contains(&n) {
                    set(planned, n, v);
                }
            }
            let detail = format!(
                "{verb}: {}\n{}",
                p.what(),
                p.price_line(gpu_core::time::today_days())
            );
            d.push(Diagnostic::warning(
                format!(
                    "{}: {}/month",
                    warning_subject(planned),
                    gpu_core::cost::format_delta(p.monthly_delta_usd)
                ),
                detail,
            ));
        }
        Err(e) => d.push(
            Diagnostic::error("Cannot price the instance", e.to_string())
                .at(AttributePath::attr("instance_type")),
        ),
    }
}

/// Whether two spellings of input `name` mean the same VM.
pub fn same_meaning(name: &str, prior: Option<&Value>, new: Option<&Value>) -> bool {
    let p = prior.cloned().unwrap_or(Value::Null);
    let n = new.cloned().unwrap_or(Value::Null);
    if p == n {
        return true;
    }
    let number = |v: &Value| v.as_number().map(|x| x.as_f64());
    match name {
        "spot" => p.as_bool().unwrap_or(false) == n.as_bool().unwrap_or(false),
        "gpu_count" => gpus(number(&p)) == gpus(number(&n)),
        "disk_size_gb" => number(&p) == number(&n),
        _ => same_words(name, p.as_str(), n.as_str()),
    }
}

/// `gpu_count`, 1 when unset.
fn gpus(count: Option<f64>) -> f64 {
    count.unwrap_or(1.0)
}

/// Whether two texts of input `name` (none: null or unknown) mean the same VM, trimmed.
fn same_words(name: &str, prior: Option<&str>, new: Option<&str>) -> bool {
    let (ps, ns) = (prior.map(str::trim), new.map(str::trim));
    match name {
        "cloud" => {
            ps.and_then(spelling::cloud).is_some()
                && ps.and_then(spelling::cloud) == ns.and_then(spelling::cloud)
        }
        "gpu" => {
            ps.and_then(spelling::gpu).is_some()
                && ps.and_then(spelling::gpu) == ns.and_then(spelling::gpu)
        }
        "region" => match (ps, ns) {
            (Some(a), Some(b)) => {
                spelling::region(Some(Cloud::Azure), a) == spelling::region(Some(Cloud::Azure), b)
            }
            _ => false,
        },
        "zone" | "instance_type" | "reclaim" => match (ps, ns) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        },
        "image" | "user_data" => ps == ns,
        _ => false,
    }
}

/// [`same_meaning`] of the typed text input `name`.
fn same_text(name: &str, prior: &Tf<String>, new: &Tf<String>) -> bool {
    prior == new
        || same_words(
            name,
            prior.known().map(String::as_str),
            new.known().map(String::as_str),
        )
}

/// Whether `prior` and `new` name the same GPUs (model and count).
fn same_gpus(prior: &InstanceModel, new: &InstanceModel) -> bool {
    same_text("gpu", &prior.gpu, &new.gpu)
        && gpus(prior.gpu_count.known().copied()) == gpus(new.gpu_count.known().copied())
}

#[allow(clippy::too_many_arguments)]
async fn plan_update(
    prior: &Value,
    proposed: &Value,
    config: &Value,
    settings: &Settings,
    catalog: &Catalog,
    connector: &dyn Connector,
    unknown_input: bool,
) -> PlanResourceChangeResponse {
    let (old, wanted) = (InstanceModel::of(prior), InstanceModel::of(config));
    let mut planned = proposed.clone();
    // Left out of the configuration, a filled input keeps its value.
    for n in FILLED {
        if config.get_attr(n).is_none_or(Value::is_null) {
            set(
                &mut planned,
                n,
                prior.get_attr(n).cloned().unwrap_or(Value::Null),
            );
        }
    }
    // A gpu written instead of an instance type: the type chosen at create stands.
    if !wanted.gpu.is_null() && same_gpus(&old, &wanted) {
        set(&mut planned, "instance_type", value_of(&old.instance_type));
    }
    let mut reasons = Vec::new();
    for n in FIXED.iter().chain(["name"].iter()) {
        let (p, new) = (prior.get_attr(n), planned.get_attr(n));
        if new.is_some_and(|v| !v.is_wholly_known()) {
            reasons.push(format!("`{n}` is not known yet"));
            continue;
        }
        if same_meaning(n, p, new) {
            set(&mut planned, n, p.cloned().unwrap_or(Value::Null));
        } else {
            reasons.push(format!("`{n}` changes"));
        }
    }
    let mut d = Diagnostics::new();
    if reasons.is_empty() {
        // Labels change in place; every computed fact of the VM stands.
        for n in PER_VM
            .iter()
            .chain(COST)
            .chain(["last_reclaimed_at", "reclaims", "image_description"].iter())
        {
            set(
                &mut planned,
                n,
                prior.get_attr(n).cloned().unwrap_or(Value::Null),
            );
        }
        if old.hourly_usd.is_null() && !unknown_input {
            price_as_it_is(&mut planned, settings, catalog, &mut d);
        }
        return respond(planned, d);
    }
    // A roll: a new VM, running before the old one and its disks are deleted.
    for n in PER_VM.iter().chain(["last_reclaimed_at"].iter()) {
        set(&mut planned, n, Value::unknown());
    }
    set(&mut planned, "reclaims", Value::number(0));
    if unknown_input {
        for n in COST {
            set(&mut planned, n, Value::unknown());
        }
        return respond(planned, d);
    }
    let mut want = planned.clone();
    if !wanted.gpu.is_null() {
        set(&mut want, "instance_type", Value::Null);
    }
    let spec = match core_config(&want, settings).validate(catalog) {
        Ok(s) => s,
        Err(e) => return respond(planned, field_diagnostics(&e)),
    };
    let new = InstanceModel::of(&planned);
    let Some(chosen) = roll_type(&old, &new, &wanted, &spec, settings, catalog) else {
        d.push(no_instance_type(&spec));
        return respond(planned, d);
    };
    set(
        &mut planned,
        "instance_type",
        Value::string(chosen.instance_type.clone()),
    );
    let moved = !same_text("cloud", &old.cloud, &new.cloud)
        || !same_text("region", &old.region, &new.region);
    if wanted.image.is_null() && moved {
        match default_image(&spec, settings, connector).await {
            Ok(img) => {
                set(&mut planned, "image", Value::string(img.id));
                set(
                    &mut planned,
                    "image_description",
                    Value::string(img.description),
                );
            }
            Err(diag) => {
                d.push(diag);
                return respond(planned, d);
            }
        }
    }
    let prior_cost = old.monthly_usd.known().map(|m| PriorCost {
        monthly_usd: *m,
        monthly_usd_max: *m,
    });
    let verb = format!(
        "rolls VM {} ({}): a new VM is created and running before the old one and its disks are deleted (the new VM starts from a fresh boot disk)",
        text(&old.vm_name),
        reasons.join("; ")
    );
    price_into(&mut planned, &spec, chosen, prior_cost, &verb, &mut d);
    respond(planned, d)
}

/// The type a roll prices: chosen again from the catalog when the configuration leaves
/// the type to `gpu` and the GPUs or spot change, else the planned one.
fn roll_type(
    old: &InstanceModel,
    new: &InstanceModel,
    wanted: &InstanceModel,
    spec: &InstanceSpec,
    settings: &Settings,
    catalog: &Catalog,
) -> Option<gpu_core::pool::ChosenType> {
    let gpus_changed = !same_gpus(old, new) || flag(&old.spot) != flag(&new.spot);
    let fresh = settings.prices;
    if wanted.instance_type.is_null() && gpus_changed {
        return spec.chosen_type(catalog, &fresh);
    }
    let t = text(&new.instance_type);
    gpu_core::pool::choose::price_types(catalog, spec.cloud, &spec.region, &[t], &fresh)
        .into_iter()
        .next()
}

/// What a cost warning names: `gpu_instance.<name>`, or `gpu_instance` while the name is
/// left to the apply.
pub fn warning_subject(instance: &Value) -> String {
    match InstanceModel::of(instance).name.known() {
        Some(n) if !n.is_empty() => format!("gpu_instance.{n}"),
        _ => "gpu_instance".to_string(),
    }
}

/// The saving shown when an instance is destroyed.
fn destroy_preview(prior: &Value) -> Diagnostics {
    let m = InstanceModel::of(prior);
    let Some(monthly) = m.monthly_usd.known() else {
        return Diagnostics::new();
    };
    Diagnostics::from(Diagnostic::warning(
        format!(
            "{}: -{}/month",
            warning_subject(prior),
            gpu_core::cost::format_usd(*monthly)
        ),
        format!("Deletes VM {} and its disks.", text(&m.vm_name)),
    ))
}

/// Prices a VM that has no price in state yet (just imported) at its own instance type.
pub(super) fn price_as_it_is(
    planned: &mut Value,
    settings: &Settings,
    catalog: &Catalog,
    d: &mut Diagnostics,
) {
    let mut want = planned.clone();
    set(&mut want, "gpu", Value::Null);
    set(&mut want, "gpu_count", Value::Null);
    let Ok(spec) = core_config(&want, settings).validate(catalog) else {
        return; // a type the catalog does not know: no price, and the read said what it is
    };
    let t = text(&InstanceModel::of(planned).instance_type);
    if let Some(chosen) = gpu_core::pool::choose::price_types(
        catalog,
        spec.cloud,
        &spec.region,
        &[t],
        &settings.prices,
    )
    .into_iter()
    .next()
    {
        price_into(planned, &spec, chosen, None, "Prices the imported VM", d);
        set(planned, "monthly_delta_usd", Value::number(0)); // it already runs and bills
    }
}
