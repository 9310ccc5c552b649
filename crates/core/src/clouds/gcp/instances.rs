//! Compute Engine VMs over the Compute API v1 REST: [`ComputeInstances`] implements
//! [`Instances`]. A Spot VM with `reclaim = stop` is created with
//! `scheduling.provisioningModel = SPOT` and `instanceTerminationAction = STOP`: a
//! preemption stops it (status `TERMINATED`, disks kept) and records a zonal operation of
//! type `compute.instances.preempted`, which is how a reclaim is told from a person's stop.
//! Compute never restarts it by itself: the watcher does (`instances.start`).
//!
//! Calls: `instances.insert` (with a `requestId` kept across retries) / `get` / `start` /
//! `setLabels` / `delete`, `aggregated/instances` (ours by label), `zoneOperations.list`
//! (the newest preemption), `images.getFromFamily` (the default image). Every mutation's
//! operation is polled to `DONE`; a stockout is [`CloudError::InsufficientCapacity`].

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::commitments::{ComputeCommitments, Operation, checked, int64_string, request_id};
use crate::offer::Cloud;
use crate::seam::CloudError;
use crate::seam::instances::StopCause;
use crate::seam::instances::{
    GpuMachine, ImageRef, InstanceClass, Instances, LaunchSpec, LiveInstance, MARKER_LABEL,
    PowerState, ReclaimPolicy,
};
use crate::time::parse_rfc3339;

/// The project of Google's Deep Learning VM images.
pub const DLVM_PROJECT: &str = "deeplearning-platform-release";
/// The Deep Learning VM image family of the default image: Ubuntu 22.04, CUDA 12.9 and
/// the NVIDIA 580 driver.
pub const DLVM_FAMILY: &str = "common-cu129-ubuntu-2204-nvidia-580";

/// Compute Engine VMs of one project.
#[derive(Debug, Clone)]
pub struct ComputeInstances {
    inner: ComputeCommitments,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Instance {
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    machine_type: String,
    #[serde(default)]
    zone: String,
    #[serde(default)]
    disks: Vec<AttachedDisk>,
    #[serde(default)]
    scheduling: Scheduling,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    label_fingerprint: Option<String>,
    #[serde(default)]
    last_start_timestamp: Option<String>,
    /// Attached accelerators (N1 machines carry their GPUs here, not in the type).
    #[serde(default)]
    guest_accelerators: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AttachedDisk {
    #[serde(default)]
    source: String,
    #[serde(default)]
    boot: bool,
    #[serde(default, with = "int64_string")]
    disk_size_gb: u64,
}

#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Scheduling {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provisioning_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instance_termination_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    on_host_maintenance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    automatic_restart: Option<bool>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OperationList {
    #[serde(default)]
    items: Vec<OperationItem>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OperationItem {
    #[serde(default)]
    operation_type: String,
    #[serde(default)]
    insert_time: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AggregatedList {
    #[serde(default)]
    items: BTreeMap<String, ScopedInstances>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
struct ScopedInstances {
    #[serde(default)]
    instances: Vec<Instance>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Image {
    #[serde(default)]
    name: String,
    #[serde(default)]
    family: Option<String>,
}

/// `…/projects/p/zones/z/…` → `projects/p/zones/z/…` (any host), or the text as is.
fn resource_path(url: &str) -> String {
    url.find("projects/")
        .map_or(url.to_string(), |i| url[i..].to_string())
}

fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// `projects/p/zones/z/instances/n` → (zone, name), checked.
fn split_id(id: &str) -> Result<(&str, &str), CloudError> {
    let parts: Vec<&str> = id.split('/').collect();
    match parts.as_slice() {
        ["projects", _, "zones", z, "instances", n] => Ok((checked(z)?, checked(n)?)),
        _ => Err(CloudError::Invalid(format!(
            "{id:?} is not a Compute Engine instance (`projects/<p>/zones/<z>/instances/<name>`)"
        ))),
    }
}

fn power(status: &str) -> PowerState {
    match status {
        "RUNNING" => PowerState::Running,
        "STOPPING" | "SUSPENDING" => PowerState::Stopping,
        "TERMINATED" | "SUSPENDED" => PowerState::Stopped,
        _ => PowerState::Starting, // PROVISIONING, STAGING, REPAIRING
    }
}

impl ComputeInstances {
    /// Every instance of the project (`instances.aggregatedList`, every page, `filter`
    /// applied by Compute Engine) that `keep` takes, read into a [`LiveInstance`].
    async fn aggregated(
        &self,
        filter: Option<&str>,
        keep: &(dyn Fn(&Instance) -> bool + Sync),
    ) -> Result<Vec<LiveInstance>, CloudError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = Vec::new();
            if let Some(f) = filter {
                query.push(format!("filter={}", urlencode(f)));
            }
            if let Some(t) = &token {
                query.push(format!("pageToken={}", urlencode(t)));
            }
            let mut path = format!("projects/{}/aggregated/instances", self.project());
            if !query.is_empty() {
                path.push('?');
                path.push_str(&query.join("&"));
            }
            let page: AggregatedList = self
                .inner
                .rest
                .get("instances.aggregatedList", &path)
                .await?;
            for scoped in page.items.into_values() {
                for i in scoped.instances {
                    if keep(&i) {
                        out.push(self.live(i).await?);
                    }
                }
            }
            match page.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// VMs over a project's Compute Engine client (made by [`super::GcpSession`]).
    pub(super) fn new(inner: ComputeCommitments) -> Self {
        ComputeInstances { inner }
    }

    fn project(&self) -> &str {
        &self.inner.project
    }

    fn zone_path(&self, zone: &str) -> Result<String, CloudError> {
        Ok(format!(
            "projects/{}/zones/{}",
            self.project(),
            checked(zone)?
        ))
    }

    async fn read(&self, zone: &str, name: &str) -> Result<Option<Instance>, CloudError> {
        let path = format!("{}/instances/{}", self.zone_path(zone)?, checked(name)?);
        match self
            .inner
            .rest
            .get::<Instance>("instances.get", &path)
            .await
        {
            Ok(i) => Ok(Some(i)),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The newest preemption of instance `id` (numeric) in `zone`, unix seconds.
    async fn last_preemption(&self, zone: &str, id: &str) -> Result<Option<i64>, CloudError> {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Ok(None);
        }
        let filter =
            format!("(targetId = \"{id}\") AND (operationType = \"compute.instances.preempted\")");
        let path = format!(
            "{}/operations?filter={}&orderBy={}&maxResults=1",
            self.zone_path(zone)?,
            urlencode(&filter),
            urlencode("creationTimestamp desc")
        );
        let list: OperationList = self.inner.rest.get("zoneOperations.list", &path).await?;
        Ok(list
            .items
            .iter()
            .filter(|o| o.operation_type == "compute.instances.preempted")
            .filter_map(|o| o.insert_time.as_deref().and_then(parse_rfc3339))
            .max())
    }

    async fn live(&self, i: Instance) -> Result<LiveInstance, CloudError> {
        let zone = last_segment(&i.zone).to_string();
        let state = power(&i.status);
        let last_reclaim = self.last_preemption(&zone, &i.id).await?;
        let started = i.last_start_timestamp.as_deref().and_then(parse_rfc3339);
        let stop_cause =
            matches!(state, PowerState::Stopped | PowerState::Stopping).then(|| {
                match (last_reclaim, started) {
                    (Some(r), Some(s)) if r >= s => StopCause::Reclaim,
                    (Some(_), None) => StopCause::Reclaim,
                    _ if i.status == "SUSPENDED" || i.status == "SUSPENDING" => StopCause::Person,
                    _ => gce_stop_cause(Some("stop")),
                }
            });
        let spot = i.scheduling.provisioning_model.as_deref() == Some("SPOT");
        let reclaim = spot.then_some(match i.scheduling.instance_termination_action.as_deref() {
            Some("DELETE") => ReclaimPolicy::Delete,
            _ => ReclaimPolicy::Stop,
        });
        let boot = i.disks.iter().find(|d| d.boot);
        let mut disks: Vec<&AttachedDisk> = i.disks.iter().collect();
        disks.sort_by_key(|d| !d.boot);
        Ok(LiveInstance {
            id: format!(
                "projects/{}/zones/{zone}/instances/{}",
                self.project(),
                i.name
            ),
            unique_id: i.id.clone(),
            name: i.name.clone(),
            region: zone
                .rsplit_once('-')
                .map_or(zone.clone(), |(r, _)| r.to_string()),
            zone: Some(zone.clone()),
            machine_type: last_segment(&i.machine_type).to_string(),
            spot,
            reclaim,
            image: String::new(),
            disk_size_gb: boot.map_or(0, |d| d.disk_size_gb as u32),
            power: state,
            stop_cause,
            last_reclaim,
            disk_ids: disks.iter().map(|d| resource_path(&d.source)).collect(),
            labels: i
                .labels
                .into_iter()
                .filter(|(k, _)| !k.starts_with("goog-"))
                .collect(),
            restarts_itself: false,
        })
    }

    fn insert_body(spec: &LaunchSpec, zone: &str) -> serde_json::Value {
        let InstanceClass::Gcp {
            network,
            subnetwork,
            service_account,
            ..
        } = &spec.class
        else {
            return serde_json::Value::Null;
        };
        let network = network.clone().unwrap_or_else(|| "default".into());
        let mut nic = serde_json::json!({
            "network": if network.contains('/') { network } else { format!("global/networks/{network}") },
            "accessConfigs": [{"type": "ONE_TO_ONE_NAT", "name": "External NAT"}],
        });
        if let Some(s) = subnetwork {
            nic["subnetwork"] = serde_json::Value::String(s.clone());
        }
        let scheduling = if spec.spot {
            Scheduling {
                provisioning_model: Some("SPOT".into()),
                instance_termination_action: Some(
                    match spec.reclaim {
                        ReclaimPolicy::Stop => "STOP",
                        ReclaimPolicy::Delete => "DELETE",
                    }
                    .into(),
                ),
                on_host_maintenance: Some("TERMINATE".into()),
                automatic_restart: Some(false),
            }
        } else {
            Scheduling {
                provisioning_model: Some("STANDARD".into()),
                instance_termination_action: None,
                on_host_maintenance: Some("TERMINATE".into()),
                automatic_restart: Some(true),
            }
        };
        let mut body = serde_json::json!({
            "name": spec.name,
            "machineType": format!("zones/{zone}/machineTypes/{}", spec.machine_type),
            "disks": [{
                "boot": true,
                "autoDelete": true,
                "initializeParams": {
                    "diskSizeGb": spec.disk_size_gb.to_string(),
                    "sourceImage": spec.image,
                },
            }],
            "networkInterfaces": [nic],
            "scheduling": scheduling,
            "labels": spec.labels,
        });
        if let Some(data) = &spec.user_data {
            body["metadata"] = serde_json::json!({"items": [{"key": "user-data", "value": data}]});
        }
        if let Some(sa) = service_account {
            body["serviceAccounts"] = serde_json::json!([{
                "email": sa,
                "scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            }]);
        }
        body
    }
}

fn urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[async_trait]
impl Instances for ComputeInstances {
    fn cloud(&self) -> Cloud {
        Cloud::Gcp
    }

    fn pace(&self) -> crate::pace::Pace {
        *self.inner.rest.pace()
    }

    async fn default_image(&self, _region: &str) -> Result<ImageRef, CloudError> {
        let path = format!("projects/{DLVM_PROJECT}/global/images/family/{DLVM_FAMILY}");
        let image: Image = self.inner.rest.get("images.getFromFamily", &path).await?;
        Ok(ImageRef {
            id: format!("projects/{DLVM_PROJECT}/global/images/{}", image.name),
            description: format!(
                "Deep Learning VM image {} (family {}, NVIDIA driver and CUDA)",
                image.name,
                image.family.as_deref().unwrap_or(DLVM_FAMILY)
            ),
        })
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        let zone = spec
            .zone
            .as_deref()
            .ok_or_else(|| CloudError::Invalid("a Compute Engine VM needs a zone".into()))?;
        if let Some(vm) = self.find(spec).await? {
            return Ok(vm);
        }
        let path = format!(
            "{}/instances?requestId={}",
            self.zone_path(zone)?,
            request_id()
        );
        let op: Operation = self
            .inner
            .rest
            .call(
                "instances.insert",
                reqwest::Method::POST,
                &path,
                Some(&Self::insert_body(spec, zone)),
            )
            .await?;
        self.inner
            .wait(&format!("zones/{zone}"), op, "instances.insert")
            .await?;
        match self.read(zone, &spec.name).await? {
            Some(i) => self.live(i).await,
            None => Err(CloudError::Other(format!(
                "instances.insert of {} ended but the VM is not there",
                spec.name
            ))),
        }
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        let (zone, name) = split_id(id)?;
        match self.read(zone, name).await? {
            Some(i) => self.live(i).await.map(Some),
            None => Ok(None),
        }
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        let Some(zone) = spec.zone.as_deref() else {
            return Ok(None);
        };
        let want = spec.labels.get(MARKER_LABEL);
        match self.read(zone, &spec.name).await? {
            Some(i) if want.is_some() && i.labels.get(MARKER_LABEL) == want => {
                self.live(i).await.map(Some)
            }
            Some(_) => Err(CloudError::Conflict(format!(
                "a VM named {} already exists in {zone} and is not this instance's (no matching `{MARKER_LABEL}` label)",
                spec.name
            ))),
            None => Ok(None),
        }
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        let ours = format!("labels.{MARKER_LABEL}:*");
        self.aggregated(Some(&ours), &|i| i.labels.contains_key(MARKER_LABEL))
            .await
    }

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        self.aggregated(None, &|i| {
            let machine = i.machine_type.rsplit('/').next().unwrap_or_default();
            i.labels.contains_key(MARKER_LABEL) || gpu(machine) || !i.guest_accelerators.is_empty()
        })
        .await
    }

    async fn start(&self, id: &str) -> Result<(), CloudError> {
        let (zone, name) = split_id(id)?;
        let path = format!(
            "{}/instances/{name}/start?requestId={}",
            self.zone_path(zone)?,
            request_id()
        );
        let op: Operation = self
            .inner
            .rest
            .call("instances.start", reqwest::Method::POST, &path, None::<&()>)
            .await?;
        self.inner
            .wait(&format!("zones/{zone}"), op, "instances.start")
            .await
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        let (zone, name) = split_id(id)?;
        let now = self
            .read(zone, name)
            .await?
            .ok_or_else(|| CloudError::NotFound(format!("instance {id}")))?;
        let mut all = labels.clone();
        for (k, v) in &now.labels {
            if k == MARKER_LABEL || k.starts_with("goog-") {
                all.insert(k.clone(), v.clone());
            }
        }
        let body = serde_json::json!({
            "labels": all,
            "labelFingerprint": now.label_fingerprint.unwrap_or_default(),
        });
        let path = format!(
            "{}/instances/{name}/setLabels?requestId={}",
            self.zone_path(zone)?,
            request_id()
        );
        let op: Operation = self
            .inner
            .rest
            .call(
                "instances.setLabels",
                reqwest::Method::POST,
                &path,
                Some(&body),
            )
            .await?;
        self.inner
            .wait(&format!("zones/{zone}"), op, "instances.setLabels")
            .await
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        let (zone, name) = split_id(id)?;
        let path = format!(
            "{}/instances/{name}?requestId={}",
            self.zone_path(zone)?,
            request_id()
        );
        let op: Operation = match self
            .inner
            .rest
            .call(
                "instances.delete",
                reqwest::Method::DELETE,
                &path,
                None::<&()>,
            )
            .await
        {
            Ok(op) => op,
            Err(CloudError::NotFound(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.inner
            .wait(&format!("zones/{zone}"), op, "instances.delete")
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_states_read_as_compute_writes_them() {
        assert_eq!(
            split_id("projects/p/zones/us-central1-a/instances/train").unwrap(),
            ("us-central1-a", "train")
        );
        assert!(split_id("zones/us-central1-a/instances/train").is_err());
        assert_eq!(
            resource_path("https://compute.googleapis.com/compute/v1/projects/p/zones/z/disks/d"),
            "projects/p/zones/z/disks/d"
        );
        assert_eq!(power("TERMINATED"), PowerState::Stopped);
        assert_eq!(power("STAGING"), PowerState::Starting);
        assert_eq!(urlencode("labels.a:*"), "labels.a%3A%2A");
    }
}

/// The cause of a stopped (`TERMINATED`) Compute Engine VM from the `operationType` of
/// its latest zonal operation: `compute.instances.preempted` is a spot preemption (with
/// termination action `STOP` the VM stays, stopped); `stop` and `suspend` are a person.
fn gce_stop_cause(latest_operation_type: Option<&str>) -> StopCause {
    match latest_operation_type.map(str::trim) {
        Some("compute.instances.preempted") => StopCause::Reclaim,
        Some("stop" | "suspend") => StopCause::Person,
        Some(t) if !t.is_empty() => StopCause::Other(t.to_string()),
        _ => StopCause::Other("no operation".into()),
    }
}

#[cfg(test)]
mod stop_cause_tests {
    use super::*;

    #[test]
    fn gce_operations_tell_a_preemption_from_a_person() {
        assert_eq!(
            gce_stop_cause(Some("compute.instances.preempted")),
            StopCause::Reclaim
        );
        assert_eq!(gce_stop_cause(Some("stop")), StopCause::Person);
        assert_eq!(gce_stop_cause(Some("suspend")), StopCause::Person);
        assert!(!gce_stop_cause(Some("compute.instances.hostError")).restartable());
        assert!(!gce_stop_cause(None).restartable());
    }
}
