//! Applying and reading an instance: create (found again by its marker after a lost
//! answer), labels in place, a roll (new VM running, then the old one deleted), delete;
//! and the read that reports a reclaim as `stopped_by_reclaim`, never as drift.

use std::collections::BTreeMap;
use std::time::Instant;

use gpu_core::catalog::Catalog;
use gpu_core::instance::{
    InstanceSpec, Instances, LaunchSpec, LiveInstance, MARKER_LABEL, MARKER_TAG, Status,
};
use gpu_core::time::{format_rfc3339, parse_rfc3339};
use tfplugin::provider::{ApplyResourceChangeResponse, ReadResourceResponse};
use tfplugin::{Diagnostic, Diagnostics, Value};

use super::model::InstanceModel;
use super::places;
use super::plan::TIME_TO_READY;
use super::plan::{place_of, same_meaning, set};
use super::record::Record;
use super::{FIXED, Settings, core_config};
use crate::model_values::{flag, opt, text, whole};
use crate::resources::placing;
use gpu_core::seam::ConnectInstances as Connector;
use gpu_core::seam::{CapacityOutcome, CloudError};

fn done(state: Value, diagnostics: Diagnostics) -> ApplyResourceChangeResponse {
    ApplyResourceChangeResponse {
        new_state: state,
        private: Vec::new(),
        diagnostics,
    }
}

fn error(summary: &str, detail: impl Into<String>) -> Diagnostics {
    Diagnostics::from(Diagnostic::error(summary, detail.into()))
}

/// Applies the planned change through `connector`: where the VM runs (its `placement`),
/// or, when the plan left where to the apply, by walking its places.
pub async fn apply(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
    connector: &dyn Connector,
) -> ApplyResourceChangeResponse {
    if planned
        .get_attr("placement")
        .is_some_and(|p| matches!(p, Value::Unknown(_)))
    {
        return super::failover::apply_walk(prior, planned, settings, catalog, connector).await;
    }
    let at = places::elsewhere(prior);
    let view = |v: &Value| match &at {
        Some(p) if !v.is_null() => places::at(v, p),
        _ => v.clone(),
    };
    let (prior_at, planned_at) = (view(prior), view(planned));
    let mut r = apply_here(&prior_at, &planned_at, settings, catalog, connector).await;
    let placed_now = planned
        .get_attr("placement")
        .and_then(|p| p.get_attr("since"))
        .is_some_and(|s| !s.is_known());
    if placed_now && !r.new_state.is_null() && !r.diagnostics.has_errors() {
        let placement = super::failover::placement_of(&r.new_state, placing::now());
        let m = InstanceModel::of(&r.new_state);
        let seconds = r
            .new_state
            .get_attr(TIME_TO_READY)
            .cloned()
            .unwrap_or(Value::Null);
        let ready = placing::attempt_value(&text(&m.cloud), &text(&m.region), "ready", "", seconds);
        set(&mut r.new_state, "placement", placement);
        set(&mut r.new_state, "attempts", Value::List(vec![ready]));
    }
    if at.is_some() {
        places::restore(
            &mut r.new_state,
            if planned.is_null() { prior } else { planned },
        );
    }
    r
}

/// A failback that found no earlier place: the VM stays at `at`, with the planned labels.
pub(super) async fn relabel_at(
    prior: &Value,
    planned: &Value,
    at: &places::VmPlace,
    settings: &Settings,
    connector: &dyn Connector,
) -> ApplyResourceChangeResponse {
    let prior_at = places::at(prior, at);
    // What the plan left to a new VM stays as the one that runs.
    let mut planned_at = places::at(planned, at);
    if let (Value::Object(p), Value::Object(old)) = (&mut planned_at, &prior_at) {
        for (k, v) in p.iter_mut() {
            if !v.is_wholly_known() {
                *v = old.get(k).cloned().unwrap_or(Value::Null);
            }
        }
    }
    let Some(place) = place_of(&prior_at, None, settings) else {
        return done(
            prior.clone(),
            error("Invalid cloud", "the VM's place is not readable"),
        );
    };
    let mut r = match connector.instances(&place).await {
        Ok(cloud) => relabel(&prior_at, &planned_at, settings, cloud.as_ref()).await,
        Err(e) => done(
            prior_at.clone(),
            error(&format!("Cannot connect to {}", place.cloud), e.to_string()),
        ),
    };
    places::restore(&mut r.new_state, prior);
    r
}

/// Applies the planned change at the place `planned` (and `prior`) name.
async fn apply_here(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
    connector: &dyn Connector,
) -> ApplyResourceChangeResponse {
    let target = if planned.is_null() { prior } else { planned };
    let Some(place) = place_of(target, None, settings) else {
        return done(
            prior.clone(),
            error(
                "Invalid cloud",
                "the instance's cloud and region are not readable",
            ),
        );
    };
    let cloud = match connector.instances(&place).await {
        Ok(c) => c,
        Err(e) => {
            return done(
                prior.clone(),
                error(&format!("Cannot connect to {}", place.cloud), e.to_string()),
            );
        }
    };
    if planned.is_null() {
        return match cloud.delete(&text(&InstanceModel::of(prior).id)).await {
            Ok(()) => done(Value::Null, Diagnostics::new()),
            Err(e) => done(
                prior.clone(),
                error("Cannot delete the instance", e.to_string()),
            ),
        };
    }
    if prior.is_null() {
        return create(planned, settings, catalog, cloud.as_ref(), None).await;
    }
    let rolls = FIXED
        .iter()
        .chain(["name"].iter())
        .any(|n| !same_meaning(n, prior.get_attr(n), planned.get_attr(n)));
    if !rolls {
        return relabel(prior, planned, settings, cloud.as_ref()).await;
    }
    // A roll: the new VM runs before the old one is deleted.
    let old_place = place_of(prior, None, settings);
    let new = create(planned, settings, catalog, cloud.as_ref(), Some(prior)).await;
    if new.diagnostics.has_errors() || new.new_state.is_null() {
        return ApplyResourceChangeResponse {
            new_state: if new.new_state.is_null() {
                prior.clone()
            } else {
                new.new_state
            },
            ..new
        };
    }
    let old = match old_place {
        Some(p) if p == place => Ok(cloud),
        Some(p) => connector.instances(&p).await,
        None => Err(gpu_core::seam::CloudError::Invalid(
            "unreadable prior place".into(),
        )),
    };
    let old_id = text(&InstanceModel::of(prior).id);
    let deleted = match old {
        Ok(c) => c.delete(&old_id).await,
        Err(e) => Err(e),
    };
    match deleted {
        Ok(()) => new,
        Err(e) => done(
            new.new_state,
            error(
                "The new VM runs; the old one was not deleted",
                format!(
                    "deleting the old VM {old_id} failed: {e}. It still runs and bills; delete it in the cloud (it carries the ownership marker)."
                ),
            ),
        ),
    }
}

/// The VM name of a create (`name`, or generated) or of a roll (`<name>-<4 hex>`).
fn vm_name(planned: &Value, rolling_from: Option<&Value>) -> (String, String) {
    let base = opt(&InstanceModel::of(planned).name)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| {
            let token = gpu_core::retry::fresh_token("gpu");
            format!("gpu-{}", &token[token.len() - 8..])
        });
    let Some(prior) = rolling_from else {
        return (base.clone(), base);
    };
    let old = text(&InstanceModel::of(prior).vm_name);
    let mut seed = old.clone();
    for n in FIXED {
        seed.push('|');
        seed.push_str(&format!("{:?}", planned.get_attr(n)));
    }
    let h = gpu_core::commitment::stable_name(&[&seed]);
    let suffix: String = h
        .chars()
        .rev()
        .filter(char::is_ascii_alphanumeric)
        .take(4)
        .collect();
    let mut name = format!("{base}-{}", suffix.to_ascii_lowercase());
    if name == old {
        name = format!("{base}-{}", &suffix.to_ascii_lowercase()[..3]);
    }
    (base, name)
}

/// The launch of `planned` named `vm_name`, from the checked spec.
fn launch_spec(
    spec: &InstanceSpec,
    planned: &Value,
    vm_name: &str,
    settings: &Settings,
) -> LaunchSpec {
    let m = InstanceModel::of(planned);
    let mut all = m.labels(&settings.base.default_labels);
    // A checked spec is on a cloud with VMs: its rules say the marker and the name tag.
    if let Some(rules) = gpu_core::registry::instance_rules(spec.cloud) {
        all.insert(
            rules.marker.to_string(),
            gpu_core::instance::marker_key(vm_name),
        );
        if let Some(tag) = rules.name_tag {
            all.insert(tag.to_string(), vm_name.to_string());
        }
    }
    LaunchSpec {
        name: vm_name.to_string(),
        region: spec.region.clone(),
        zone: opt(&m.zone).or_else(|| spec.zone.clone()),
        machine_type: text(&m.instance_type),
        spot: spec.spot,
        reclaim: spec.reclaim,
        image: text(&m.image),
        disk_size_gb: spec.disk_size_gb,
        labels: all,
        user_data: spec.user_data.clone(),
        class: spec.class.clone(),
    }
}

async fn create(
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
    cloud: &dyn Instances,
    rolling_from: Option<&Value>,
) -> ApplyResourceChangeResponse {
    let how = Launch {
        wait: None,
        started: Instant::now(),
        after: None,
        leaving: None,
    };
    match launch(planned, settings, catalog, cloud, rolling_from, &how).await {
        Launched::Ready(r) | Launched::Failed(r) => r,
        Launched::Refused { answer, .. } => answer,
    }
}

/// How a launch is bounded and timed.
pub(super) struct Launch {
    /// How long the VM may take to run before it counts as a `timeout` (`capacity_wait`
    /// in a walk); none: the cloud's own waits.
    pub wait: Option<std::time::Duration>,
    /// When the request for GPUs started (a walk's first place).
    pub started: Instant,
    /// The place tried before this one and its outcome, when a walk moved on (recorded as
    /// a `failover` event).
    pub after: Option<(String, &'static str)>,
    /// The failover place a failback leaves (recorded as a `failback` event once the VM
    /// runs).
    pub leaving: Option<String>,
}

/// What one launch came to.
pub(super) enum Launched {
    /// The VM runs: its state.
    Ready(ApplyResourceChangeResponse),
    /// A capacity answer (`stockout`, `quota`, `not_offered`) or a `timeout`, and the
    /// answer a create without failover gives (state null when nothing is left).
    Refused {
        /// The outcome's word.
        outcome: &'static str,
        /// The cloud's words.
        detail: String,
        /// The create's answer: the error, and a VM left only when its delete failed.
        answer: ApplyResourceChangeResponse,
    },
    /// Any other failure.
    Failed(ApplyResourceChangeResponse),
}

/// Launches the VM of `planned` (named for a roll from `rolling_from`) and waits until it
/// runs, within `how.wait` when set.
pub(super) async fn launch(
    planned: &Value,
    settings: &Settings,
    catalog: &Catalog,
    cloud: &dyn Instances,
    rolling_from: Option<&Value>,
    how: &Launch,
) -> Launched {
    let mut want = planned.clone();
    if !InstanceModel::of(planned).gpu.is_null() {
        set(&mut want, "instance_type", Value::Null);
    }
    let spec = match core_config(&want, settings).validate(catalog) {
        Ok(s) => s,
        Err(e) => {
            return Launched::Failed(done(
                Value::Null,
                crate::resources::commitment::plan::field_diagnostics(&e),
            ));
        }
    };
    let (base, name) = vm_name(planned, rolling_from);
    let launch = launch_spec(&spec, planned, &name, settings);
    let mut warnings = Diagnostics::new();
    let record = Record::of(&settings.base.clouds, &spec, &launch, &base).since(how.started);
    if let Some((from, outcome)) = &how.after {
        let detail = format!("from {from} ({outcome})");
        record.event("failover", Some(outcome), detail, &mut warnings);
    }
    record.request(&mut warnings);
    let launched = match how.wait {
        None => cloud.launch(&launch).await,
        Some(wait) => match cloud.pace().timeout(wait, cloud.launch(&launch)).await {
            Some(r) => r,
            None => {
                let detail = format!(
                    "the VM was not running within capacity_wait ({} s)",
                    wait.as_secs()
                );
                record.event("capacity", Some("timeout"), detail.clone(), &mut warnings);
                let left = cloud.find(&launch).await.ok().flatten();
                let answer = match left {
                    None => done(Value::Null, warnings),
                    Some(vm) => match cloud.delete(&vm.id).await {
                        Ok(()) => done(Value::Null, warnings),
                        Err(de) => {
                            let mut state = planned.clone();
                            set(&mut state, "name", Value::string(base));
                            warnings.extend(error(
                                "Cannot delete a VM too slow to start",
                                format!("deleting {} failed: {de}", vm.name),
                            ));
                            done(state_of(&state, &vm, None), warnings)
                        }
                    },
                };
                return Launched::Refused {
                    outcome: "timeout",
                    detail,
                    answer,
                };
            }
        },
    };
    match launched {
        Ok(vm) => {
            let seconds = record.ready(&mut warnings);
            if let Some(from) = &how.leaving {
                record.event("failback", None, format!("from {from}"), &mut warnings);
            }
            let mut state = planned.clone();
            set(&mut state, "name", Value::string(base));
            set(&mut state, TIME_TO_READY, Value::number(seconds));
            Launched::Ready(done(state_of(&state, &vm, None), warnings))
        }
        Err(e) => {
            let left = cloud.find(&launch).await.ok().flatten();
            if let Some(outcome) = e.capacity_outcome() {
                record.capacity(outcome, &e, &mut warnings);
                let mut answer = refused(planned, &base, cloud, &launch, outcome, &e, left).await;
                answer.diagnostics.extend(warnings);
                return Launched::Refused {
                    outcome: outcome.as_str(),
                    detail: e.to_string(),
                    answer,
                };
            }
            // A VM the failed launch left behind is in state, so Terraform replaces it;
            // nothing left: nothing in state.
            let summary = "Cannot create the instance";
            Launched::Failed(match left {
                Some(vm) => {
                    let mut state = planned.clone();
                    set(&mut state, "name", Value::string(base));
                    done(state_of(&state, &vm, None), error(summary, e.to_string()))
                }
                None => done(Value::Null, error(summary, e.to_string())),
            })
        }
    }
}

/// A launch the cloud refused for capacity: a VM it left behind (an allocation failure on
/// Azure leaves a failed VM) is deleted with its disks, so nothing is left and nothing is
/// in state, and the error says what the cloud answered and where. If that delete fails,
/// the VM is in state (Terraform replaces it) and the error says so.
async fn refused(
    planned: &Value,
    base: &str,
    cloud: &dyn Instances,
    launch: &LaunchSpec,
    outcome: CapacityOutcome,
    e: &CloudError,
    left: Option<LiveInstance>,
) -> ApplyResourceChangeResponse {
    let place = match &launch.zone {
        Some(z) => format!("{} {} {z}", cloud.cloud(), launch.region),
        None => format!("{} {}", cloud.cloud(), launch.region),
    };
    let kind = if launch.spot { "spot " } else { "" };
    let summary = format!("No GPU capacity for gpu_instance at {place}");
    let answer = format!(
        "{} answered {outcome} for a {kind}{}: {e}.",
        crate::clouds::cloud_name(cloud.cloud()),
        launch.machine_type
    );
    let hint = "Try another zone, region or cloud, another instance type, or later.";
    let at = if launch.zone.is_some() {
        "zone"
    } else {
        "region"
    };
    let diag = |detail: String| -> Diagnostics {
        Diagnostic::error(summary.clone(), detail)
            .at(tfplugin::AttributePath::attr(at))
            .into()
    };
    let Some(vm) = left else {
        return done(
            Value::Null,
            diag(format!("{answer}\nNothing was made there.\n{hint}")),
        );
    };
    match cloud.delete(&vm.id).await {
        Ok(()) => done(
            Value::Null,
            diag(format!(
                "{answer}\nThe VM {} the cloud left failed was deleted with its disks: nothing is left there.\n{hint}",
                vm.name
            )),
        ),
        Err(de) => {
            let mut state = planned.clone();
            set(&mut state, "name", Value::string(base));
            done(
                state_of(&state, &vm, None),
                diag(format!(
                    "{answer}\nDeleting the VM {} the cloud left failed did not work ({de}): it is in state, so the next apply replaces it.",
                    vm.name
                )),
            )
        }
    }
}

async fn relabel(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    cloud: &dyn Instances,
) -> ApplyResourceChangeResponse {
    let (old, new) = (InstanceModel::of(prior), InstanceModel::of(planned));
    let id = text(&old.id);
    if old.own_labels() != new.own_labels() {
        let all = new.labels(&settings.base.default_labels);
        if let Err(e) = cloud.set_labels(&id, &all).await {
            return done(
                prior.clone(),
                error("Cannot change the instance's labels", e.to_string()),
            );
        }
    }
    match cloud.get(&id).await {
        Ok(Some(vm)) => done(state_of(planned, &vm, Some(prior)), Diagnostics::new()),
        Ok(None) => done(
            Value::Null,
            error("The instance is gone", format!("{id} no longer exists")),
        ),
        Err(e) => done(
            planned.clone(),
            error("Cannot read the instance", e.to_string()),
        ),
    }
}

/// `base` with what `vm` says live: id, name, disks, status, zone, and reclaims seen
/// since `prior`.
pub fn state_of(base: &Value, vm: &LiveInstance, prior: Option<&Value>) -> Value {
    let base_m = InstanceModel::of(base);
    let mut s = base.clone();
    set(&mut s, "id", Value::string(vm.id.clone()));
    set(&mut s, "vm_name", Value::string(vm.name.clone()));
    set(&mut s, "instance_id", Value::string(vm.unique_id.clone()));
    set(
        &mut s,
        "disk_ids",
        Value::List(vm.disk_ids.iter().cloned().map(Value::string).collect()),
    );
    set(&mut s, "status", Value::string(Status::of(vm).as_str()));
    if let Some(z) = &vm.zone {
        set(&mut s, "zone", Value::string(z.clone()));
    } else if !base_m.zone.is_known() {
        // No zone from the cloud: an unknown zone becomes null (a null one stays).
        set(&mut s, "zone", Value::Null);
    }
    if base_m.image_description.is_unknown() {
        set(&mut s, "image_description", Value::Null);
    }
    let before = prior.map_or(base_m, InstanceModel::of);
    let seen = before
        .last_reclaimed_at
        .known()
        .and_then(|t| parse_rfc3339(t));
    let mut count = whole(&before.reclaims).unwrap_or(0);
    let mut last = seen;
    if let Some(t) = vm.last_reclaim
        && seen.is_none_or(|s| t > s)
    {
        count += 1;
        last = Some(t);
    }
    set(&mut s, "reclaims", Value::number(count));
    set(
        &mut s,
        "last_reclaimed_at",
        last.map_or(Value::Null, |t| Value::string(format_rfc3339(t))),
    );
    s
}

/// Refresh: the VM read live; gone means gone from state. A stopped VM stays as it is in
/// every input (a reclaim is not drift); a changed machine type, spot setting or labels
/// show as drift.
pub async fn read(
    current: &Value,
    settings: &Settings,
    connector: &dyn Connector,
) -> ReadResourceResponse {
    let respond = |state: Value, diagnostics: Diagnostics| ReadResourceResponse {
        new_state: state,
        private: Vec::new(),
        diagnostics,
    };
    // A VM on a failover place is read there.
    let at = places::elsewhere(current);
    let whole = current;
    let viewed = at.as_ref().map(|p| places::at(current, p));
    let current = viewed.as_ref().unwrap_or(current);
    let Some(place) = place_of(current, None, settings) else {
        return respond(whole.clone(), Diagnostics::new());
    };
    let cloud = match connector.instances(&place).await {
        Ok(c) => c,
        Err(e) => {
            return respond(
                current.clone(),
                error(&format!("Cannot connect to {}", place.cloud), e.to_string()),
            );
        }
    };
    let m = InstanceModel::of(current);
    let vm = match cloud.get(&text(&m.id)).await {
        Ok(Some(vm)) => vm,
        Ok(None) => return respond(Value::Null, Diagnostics::new()),
        Err(e) => {
            return respond(
                current.clone(),
                error("Cannot read the instance", e.to_string()),
            );
        }
    };
    let mut s = state_of(current, &vm, None);
    fill_unread(&mut s, &m, &vm);
    show_drift(&mut s, &m, &vm, &settings.base.default_labels);
    if m.hourly_usd.is_null() {
        // Just imported: priced as it runs, so the plan after an import shows no change.
        let mut unused = Diagnostics::new();
        super::plan::price_as_it_is(&mut s, settings, Catalog::embedded(), &mut unused);
    }
    if InstanceModel::of(&s).placement.is_null() {
        // Imported, or made before `placement`: placed where it runs, since unknown.
        let placement = super::failover::placement_of(&s, Value::Null);
        set(&mut s, "placement", placement);
    }
    if at.is_some() {
        places::restore(&mut s, whole);
    }
    // A state from before a block existed holds it as null; Terraform as empty.
    let s = super::schema().block.with_empty_blocks(s);
    respond(s, Diagnostics::new())
}

/// After an import: what the cloud reports fills what the state `m` does not know yet.
fn fill_unread(s: &mut Value, m: &InstanceModel, vm: &LiveInstance) {
    for (known, n, live) in [
        (&m.name, "name", &vm.name),
        (&m.image, "image", &vm.image),
        (&m.region, "region", &vm.region),
    ] {
        if text(known).is_empty() && !live.is_empty() {
            set(s, n, Value::string(live.clone()));
        }
    }
    if m.disk_size_gb.is_null() && vm.disk_size_gb > 0 {
        set(s, "disk_size_gb", Value::number(vm.disk_size_gb));
    }
}

/// A machine type, spot setting, reclaim or labels of `vm` other than the state `m` says,
/// as drift.
fn show_drift(
    s: &mut Value,
    m: &InstanceModel,
    vm: &LiveInstance,
    default_labels: &BTreeMap<String, String>,
) {
    if !opt(&m.instance_type).is_some_and(|t| t.eq_ignore_ascii_case(&vm.machine_type)) {
        set(s, "instance_type", Value::string(vm.machine_type.clone()));
    }
    if flag(&m.spot) != vm.spot {
        set(s, "spot", Value::Bool(vm.spot));
    }
    if vm.spot
        && let Some(r) = vm.reclaim
        && !opt(&m.reclaim).is_some_and(|t| t.eq_ignore_ascii_case(r.as_str()))
    {
        set(s, "reclaim", Value::string(r.as_str()));
    }
    let own = m.own_labels();
    let live = user_labels(&vm.labels, &own, default_labels);
    if live != own {
        set(
            s,
            "labels",
            if live.is_empty() && m.labels.is_null() {
                Value::Null
            } else {
                Value::Map(
                    live.into_iter()
                        .map(|(k, v)| (k, Value::string(v)))
                        .collect(),
                )
            },
        );
    }
}

/// The user's labels among `live`: without the marker, the cloud's `Name`, and the
/// provider's `default_labels` the user did not write.
fn user_labels(
    live: &BTreeMap<String, String>,
    own: &BTreeMap<String, String>,
    defaults: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    live.iter()
        .filter(|(k, _)| *k != MARKER_TAG && *k != MARKER_LABEL && *k != "Name")
        .filter(|(k, v)| own.contains_key(*k) || defaults.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
