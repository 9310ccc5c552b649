//! Applying and reading an instance: create (found again by its marker after a lost
//! answer), labels in place, a roll (new VM running, then the old one deleted), delete;
//! and the read that reports a reclaim as `stopped_by_reclaim`, never as drift.

use std::collections::BTreeMap;

use gpu_core::catalog::Catalog;
use gpu_core::instance::{
    InstanceSpec, Instances, LaunchSpec, LiveInstance, MARKER_LABEL, MARKER_TAG, Status,
};
use gpu_core::offer::Cloud;
use gpu_core::time::{format_rfc3339, parse_rfc3339};
use tfplugin::provider::{ApplyResourceChangeResponse, ReadResourceResponse};
use tfplugin::{Diagnostic, Diagnostics, Value};

use super::plan::{place_of, same_meaning, set};
use super::{FIXED, Settings, core_config, labels, own_labels, text};
use gpu_core::seam::ConnectInstances as Connector;

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

/// Applies the planned change through `connector`.
pub async fn apply(
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
        return match cloud.delete(&text(prior, "id").unwrap_or_default()).await {
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
    let old_id = text(prior, "id").unwrap_or_default();
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
    let base = text(planned, "name")
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| {
            let token = gpu_core::retry::fresh_token("gpu");
            format!("gpu-{}", &token[token.len() - 8..])
        });
    let Some(prior) = rolling_from else {
        return (base.clone(), base);
    };
    let old = text(prior, "vm_name").unwrap_or_default();
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
    let mut all = labels(planned, &settings.base.default_labels);
    let key = gpu_core::instance::marker_key(vm_name);
    match spec.cloud {
        Cloud::Aws => all.insert(MARKER_TAG.to_string(), key),
        _ => all.insert(MARKER_LABEL.to_string(), key),
    };
    if spec.cloud == Cloud::Aws {
        all.insert("Name".to_string(), vm_name.to_string());
    }
    LaunchSpec {
        name: vm_name.to_string(),
        region: spec.region.clone(),
        zone: text(planned, "zone").or_else(|| spec.zone.clone()),
        machine_type: text(planned, "instance_type").unwrap_or_default(),
        spot: spec.spot,
        reclaim: spec.reclaim,
        image: text(planned, "image").unwrap_or_default(),
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
    let mut want = planned.clone();
    if planned.get_attr("gpu").is_some_and(|g| !g.is_null()) {
        set(&mut want, "instance_type", Value::Null);
    }
    let spec = match core_config(&want, settings).validate(catalog) {
        Ok(s) => s,
        Err(e) => {
            return done(
                Value::Null,
                crate::resources::commitment::plan::field_diagnostics(&e),
            );
        }
    };
    let (base, name) = vm_name(planned, rolling_from);
    let launch = launch_spec(&spec, planned, &name, settings);
    match cloud.launch(&launch).await {
        Ok(vm) => {
            let mut state = planned.clone();
            set(&mut state, "name", Value::string(base));
            done(state_of(&state, &vm, None), Diagnostics::new())
        }
        Err(e) => {
            // A VM the failed launch left behind (an allocation failure on Azure) is in
            // state, so Terraform replaces it; nothing left: nothing in state.
            let left = cloud.find(&launch).await.ok().flatten();
            let summary = "Cannot create the instance";
            match left {
                Some(vm) => {
                    let mut state = planned.clone();
                    set(&mut state, "name", Value::string(base));
                    done(state_of(&state, &vm, None), error(summary, e.to_string()))
                }
                None => done(Value::Null, error(summary, e.to_string())),
            }
        }
    }
}

async fn relabel(
    prior: &Value,
    planned: &Value,
    settings: &Settings,
    cloud: &dyn Instances,
) -> ApplyResourceChangeResponse {
    let id = text(prior, "id").unwrap_or_default();
    if own_labels(prior) != own_labels(planned) {
        let all = labels(planned, &settings.base.default_labels);
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
    } else if !base.get_attr("zone").is_some_and(Value::is_known) {
        set(&mut s, "zone", Value::Null);
    }
    if s.get_attr("image_description")
        .is_some_and(|v| !v.is_known())
    {
        set(&mut s, "image_description", Value::Null);
    }
    let before = prior.unwrap_or(base);
    let seen = before
        .get_attr("last_reclaimed_at")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339);
    let mut count = before
        .get_attr("reclaims")
        .and_then(Value::as_i64)
        .unwrap_or(0);
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
    let Some(place) = place_of(current, None, settings) else {
        return respond(current.clone(), Diagnostics::new());
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
    let id = text(current, "id").unwrap_or_default();
    let vm = match cloud.get(&id).await {
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
    // After an import: what the cloud reports fills what the state does not know yet.
    for (n, live) in [
        ("name", &vm.name),
        ("image", &vm.image),
        ("region", &vm.region),
    ] {
        if text(current, n).is_none_or(|t| t.is_empty()) && !live.is_empty() {
            set(&mut s, n, Value::string(live.clone()));
        }
    }
    if current.get_attr("disk_size_gb").is_none_or(Value::is_null) && vm.disk_size_gb > 0 {
        set(&mut s, "disk_size_gb", Value::number(vm.disk_size_gb));
    }
    if !text(current, "instance_type").is_some_and(|t| t.eq_ignore_ascii_case(&vm.machine_type)) {
        set(
            &mut s,
            "instance_type",
            Value::string(vm.machine_type.clone()),
        );
    }
    let spot = current
        .get_attr("spot")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if spot != vm.spot {
        set(&mut s, "spot", Value::Bool(vm.spot));
    }
    if vm.spot
        && let Some(r) = vm.reclaim
        && !text(current, "reclaim").is_some_and(|t| t.eq_ignore_ascii_case(r.as_str()))
    {
        set(&mut s, "reclaim", Value::string(r.as_str()));
    }
    let live = user_labels(
        &vm.labels,
        &own_labels(current),
        &settings.base.default_labels,
    );
    if live != own_labels(current) {
        let had = current.get_attr("labels").is_some_and(|l| !l.is_null());
        set(
            &mut s,
            "labels",
            if live.is_empty() && !had {
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
    respond(s, Diagnostics::new())
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
