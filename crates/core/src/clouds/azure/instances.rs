//! Azure virtual machines over Resource Manager REST: [`AzureVms`] implements
//! [`Instances`] for one subscription.
//!
//! A Spot VM with `reclaim = stop` is created with `priority: Spot`, `evictionPolicy:
//! Deallocate` and `billingProfile.maxPrice: -1` (never evicted for price): an eviction
//! deallocates it and keeps its OS disk. Azure never starts it again by itself; the
//! watcher does (`start`). A reclaim is told from a person's deallocation by the
//! subscription's activity log: Azure writes `Microsoft.Compute/virtualMachines/
//! evictSpotVM/action` for an eviction (`simulateEviction/action` for a simulated one),
//! while a person's stop is `deallocate/action` or `powerOff/action`.
//!
//! Calls (`Microsoft.Compute` 2024-07-01, `Microsoft.Insights` 2015-04-01):
//! `virtualMachines` PUT (with `If-None-Match: *`) / GET (`$expand=instanceView`) /
//! PATCH (tags) / DELETE, `start`, the subscription's VM list (`nextLink`), the activity
//! log (`eventtypes/management/values`), marketplace image versions. Every mutation's
//! `Azure-AsyncOperation` is polled to its end; an allocation refusal is
//! [`CloudError::InsufficientCapacity`]. The VM creates its own NIC and OS disk, both
//! with `deleteOption: Delete`, so deleting the VM deletes them.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};

use super::arm::{Answer, Arm};
use super::commitments::segment;
use crate::offer::Cloud;
use crate::seam::CloudError;
use crate::seam::instances::StopCause;
use crate::seam::instances::{
    GpuMachine, ImageRef, InstanceClass, Instances, LaunchSpec, LiveInstance, MARKER_LABEL,
    PowerState, ReclaimPolicy,
};
use crate::time::{format_rfc3339, parse_rfc3339, unix_now};

/// The api-version of `Microsoft.Compute/virtualMachines` and image versions.
pub const VM_API_VERSION: &str = "2024-07-01";
/// The api-version of the activity log (`Microsoft.Insights`).
pub const ACTIVITY_API_VERSION: &str = "2015-04-01";
/// The `networkApiVersion` of NICs a VM creates itself.
pub const NETWORK_API_VERSION: &str = "2020-11-01";
/// Publisher of the default GPU image (the Azure HPC image: NVIDIA driver, CUDA, NCCL).
pub const HPC_IMAGE_PUBLISHER: &str = "microsoft-dsvm";
/// Offer of the default GPU image.
pub const HPC_IMAGE_OFFER: &str = "ubuntu-hpc";
/// SKU of the default GPU image (Ubuntu 22.04).
pub const HPC_IMAGE_SKU: &str = "2204";
/// The activity log keeps 90 days; a read looks back at most this far.
const LOG_DAYS: i64 = 89;
/// Pages of activity log read for one VM at most.
const LOG_PAGES: usize = 20;

/// Azure virtual machines of one subscription.
#[derive(Debug, Clone)]
pub struct AzureVms {
    arm: Arm,
    subscription: String,
    operation_timeout: Duration,
}

/// A VM's place: resource group and name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct VmRef {
    resource_group: String,
    name: String,
}

/// What an activity log entry says happened to a VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    /// Azure evicted it (or an eviction was simulated).
    Reclaim,
    /// Someone deallocated or powered it off.
    PersonStop,
    /// It was started.
    Started,
}

/// One activity log entry, reduced to what the cause needs: when (unix seconds,
/// nanoseconds) and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogEntry {
    at: (i64, u32),
    act: Act,
}

/// `/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<n>`
/// (literal segments in any case) → the VM's place, checked to be in `subscription`.
fn parse_vm_id(id: &str, subscription: &str) -> Result<VmRef, CloudError> {
    let parts: Vec<&str> = id.split('/').collect();
    let bad = || {
        CloudError::Invalid(format!(
            "{id:?} is not an Azure VM id (`/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>`)"
        ))
    };
    let ["", subs, sub, rgs, rg, providers, namespace, kind, name] = parts.as_slice() else {
        return Err(bad());
    };
    let literal = |have: &str, want: &str| have.eq_ignore_ascii_case(want);
    if !(literal(subs, "subscriptions")
        && literal(rgs, "resourceGroups")
        && literal(providers, "providers")
        && literal(namespace, "Microsoft.Compute")
        && literal(kind, "virtualMachines"))
    {
        return Err(bad());
    }
    if !sub.eq_ignore_ascii_case(subscription) {
        return Err(CloudError::Invalid(format!(
            "VM {id} is in subscription {sub}, not in the provider's {subscription}"
        )));
    }
    Ok(VmRef {
        resource_group: segment(rg)?.to_string(),
        name: segment(name)?.to_string(),
    })
}

/// A disk's ARM id with the resource group spelled as in `resource_group` when they are the
/// same name (ARM ids are case-insensitive; Compute has been seen to answer the OS disk's
/// resource group in capitals), so the ids in state stay the same from read to read.
fn canonical_disk_id(id: &str, resource_group: &str) -> String {
    let parts: Vec<&str> = id.split('/').collect();
    match parts.as_slice() {
        ["", subs, sub, rgs, rg, providers, namespace, kind, name]
            if subs.eq_ignore_ascii_case("subscriptions")
                && rgs.eq_ignore_ascii_case("resourceGroups")
                && providers.eq_ignore_ascii_case("providers")
                && namespace.eq_ignore_ascii_case("Microsoft.Compute")
                && kind.eq_ignore_ascii_case("disks") =>
        {
            let rg = if rg.eq_ignore_ascii_case(resource_group) {
                resource_group
            } else {
                rg
            };
            format!(
                "/subscriptions/{}/resourceGroups/{rg}/providers/Microsoft.Compute/disks/{name}",
                sub.to_ascii_lowercase()
            )
        }
        _ => id.to_string(),
    }
}

/// The power state of a VM from its instance view's `PowerState/<word>` and its
/// `provisioningState` (a VM being deleted is [`PowerState::Terminated`]).
fn power_of(power_code: Option<&str>, provisioning: &str) -> PowerState {
    if provisioning.eq_ignore_ascii_case("Deleting") {
        return PowerState::Terminated;
    }
    match power_code
        .and_then(|c| c.strip_prefix("PowerState/"))
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("running") => PowerState::Running,
        Some("stopping" | "deallocating") => PowerState::Stopping,
        Some("stopped" | "deallocated") => PowerState::Stopped,
        _ => PowerState::Starting, // starting, or no power state yet (being created)
    }
}

/// What an activity log entry of a VM means, from its `operationName.value` and
/// `status.value`: a failed operation changed nothing; a start counts once it succeeded.
fn act_of(operation: &str, status: &str) -> Option<Act> {
    if status.eq_ignore_ascii_case("Failed") {
        return None;
    }
    let op = operation.to_ascii_lowercase();
    let action = op.strip_prefix("microsoft.compute/virtualmachines/")?;
    match action {
        "evictspotvm/action" | "simulateeviction/action" => Some(Act::Reclaim),
        "deallocate/action" | "poweroff/action" => Some(Act::PersonStop),
        "start/action" | "restart/action" if status.eq_ignore_ascii_case("Succeeded") => {
            Some(Act::Started)
        }
        _ => None,
    }
}

/// An RFC 3339 time to (unix seconds, nanoseconds), so events of the same second order.
fn instant(s: &str) -> Option<(i64, u32)> {
    let secs = parse_rfc3339(s)?;
    let nanos = s
        .get(19..)
        .and_then(|rest| rest.strip_prefix('.'))
        .map(|frac| {
            let digits: String = frac
                .chars()
                .take_while(char::is_ascii_digit)
                .take(9)
                .collect();
            format!("{digits:0<9}").parse::<u32>().unwrap_or(0)
        })
        .unwrap_or(0);
    Some((secs, nanos))
}

/// Why a stopped VM stopped and the newest reclaim (unix seconds), from its activity log:
/// the newest of evictions, a person's deallocations or power-offs, and successful starts
/// decides; a reclaim is restartable only when nothing came after it.
fn cause_from_log(entries: &[LogEntry]) -> (StopCause, Option<i64>) {
    let last_reclaim = entries
        .iter()
        .filter(|e| e.act == Act::Reclaim)
        .map(|e| e.at)
        .max();
    let newest = entries.iter().max_by_key(|e| e.at);
    let cause = match newest.map(|e| e.act) {
        Some(Act::Reclaim) => StopCause::Reclaim,
        Some(Act::PersonStop) => StopCause::Person,
        Some(Act::Started) => StopCause::Other(
            "no deallocation or eviction recorded since the last start (shut down from inside the VM?)"
                .into(),
        ),
        None => StopCause::Other("no stop recorded in the activity log".into()),
    };
    (cause, last_reclaim.map(|(s, _)| s))
}

/// Base64 (standard alphabet, padded) of `data`: Azure's `customData`.
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Percent-encoding of a query value.
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

/// `storageProfile.imageReference` of `image`: an ARM id, or `publisher:offer:sku:version`.
fn image_reference(image: &str) -> Result<Value, CloudError> {
    let image = image.trim();
    if image.starts_with('/') {
        return Ok(json!({ "id": image }));
    }
    match image.split(':').collect::<Vec<_>>().as_slice() {
        [publisher, offer, sku, version]
            if [publisher, offer, sku, version]
                .iter()
                .all(|s| !s.is_empty()) =>
        {
            Ok(json!({"publisher": publisher, "offer": offer, "sku": sku, "version": version}))
        }
        _ => Err(CloudError::Invalid(format!(
            "{image:?} is not an Azure image: `publisher:offer:sku:version` or an image's ARM id"
        ))),
    }
}

/// The image a VM answer names: its ARM id, or `publisher:offer:sku:version` as written.
fn image_of(reference: &Value) -> String {
    let text = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or("");
    if !text("id").is_empty() {
        return text("id").to_string();
    }
    if text("publisher").is_empty() {
        return String::new();
    }
    format!(
        "{}:{}:{}:{}",
        text("publisher"),
        text("offer"),
        text("sku"),
        text("version")
    )
}

/// The newest of marketplace image versions (`22.04.2025030701`), compared part by part.
fn newest_version<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let key = |n: &str| {
        n.split('.')
            .map(|p| (p.parse::<u64>().unwrap_or(0), p.to_string()))
            .collect::<Vec<_>>()
    };
    names.max_by_key(|n| key(n))
}

/// The body of the VM's PUT.
fn put_body(spec: &LaunchSpec) -> Result<Value, CloudError> {
    let InstanceClass::Azure {
        subnet_id,
        admin_username,
        ssh_public_key,
        ..
    } = &spec.class
    else {
        return Err(CloudError::Invalid(
            "an Azure VM needs the `azure` block".into(),
        ));
    };
    let mut os_profile = json!({
        "computerName": spec.name,
        "adminUsername": admin_username,
        "linuxConfiguration": {
            "disablePasswordAuthentication": true,
            "ssh": {"publicKeys": [{
                "path": format!("/home/{admin_username}/.ssh/authorized_keys"),
                "keyData": ssh_public_key.trim(),
            }]},
        },
    });
    if let Some(data) = &spec.user_data {
        os_profile["customData"] = Value::String(base64(data.as_bytes()));
    }
    let mut properties = json!({
        "hardwareProfile": {"vmSize": spec.machine_type},
        "storageProfile": {
            "imageReference": image_reference(&spec.image)?,
            "osDisk": {
                "createOption": "FromImage",
                "diskSizeGB": spec.disk_size_gb,
                "deleteOption": "Delete",
                "managedDisk": {"storageAccountType": "Premium_LRS"},
            },
        },
        "osProfile": os_profile,
        "networkProfile": {
            "networkApiVersion": NETWORK_API_VERSION,
            "networkInterfaceConfigurations": [{
                "name": format!("{}-nic", spec.name),
                "properties": {
                    "primary": true,
                    "deleteOption": "Delete",
                    "ipConfigurations": [{
                        "name": "ipconfig1",
                        "properties": {"subnet": {"id": subnet_id}},
                    }],
                },
            }],
        },
        "priority": if spec.spot { "Spot" } else { "Regular" },
    });
    if spec.spot {
        properties["evictionPolicy"] = Value::String(
            match spec.reclaim {
                ReclaimPolicy::Stop => "Deallocate",
                ReclaimPolicy::Delete => "Delete",
            }
            .into(),
        );
        properties["billingProfile"] = json!({"maxPrice": -1});
    }
    let mut body = json!({
        "location": spec.region,
        "tags": spec.labels,
        "properties": properties,
    });
    if let Some(zone) = &spec.zone {
        body["zones"] = json!([zone]);
    }
    Ok(body)
}

/// The marker tag's value among `tags` (Azure tag names are case-insensitive).
fn marker_of(tags: &BTreeMap<String, String>) -> Option<&str> {
    tags.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(MARKER_LABEL))
        .map(|(_, v)| v.as_str())
}

fn tags_of(vm: &Value) -> BTreeMap<String, String> {
    vm.get("tags")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

impl AzureVms {
    /// A client of `subscription` over `arm` (made by [`super::AzureSession`]).
    pub(super) fn new(arm: Arm, subscription: String, operation_timeout: Duration) -> Self {
        AzureVms {
            arm,
            subscription,
            operation_timeout,
        }
    }

    fn vm_path(&self, vm: &VmRef) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Compute/virtualMachines/{}",
            self.subscription, vm.resource_group, vm.name
        )
    }

    /// One ARM call at the VM api-version (`query` appended), named `what`.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
        what: &str,
    ) -> Result<Answer, CloudError> {
        let url = format!("{}{query}", self.arm.url(path, VM_API_VERSION));
        self.arm.call(method, &url, body, headers, what).await
    }

    /// Polls the operation `a` started, if any, to its end.
    async fn finish(&self, a: &Answer, what: &str) -> Result<(), CloudError> {
        match &a.operation {
            Some(op) => self.arm.wait(op, what, self.operation_timeout).await,
            None => Ok(()),
        }
    }

    /// The VM with its instance view; `None` when it is not there.
    async fn read(&self, vm: &VmRef) -> Result<Option<Value>, CloudError> {
        match self
            .call(
                Method::GET,
                &self.vm_path(vm),
                "&$expand=instanceView",
                None,
                &[],
                &format!("read VM {}", vm.name),
            )
            .await
        {
            Ok(a) => Ok(Some(a.body)),
            Err(CloudError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The activity log entries of VM `id` since `since` (unix seconds, until now) that tell a stop's
    /// cause, newest first as ARM lists them (at most [`LOG_PAGES`] pages).
    async fn log_of(&self, id: &str, since: i64) -> Result<Vec<LogEntry>, CloudError> {
        // The end a minute ahead: `now` is whole seconds, and an entry of this very second
        // (or stamped by a clock a little ahead of ours) must still be in.
        let filter = activity_filter(id, since, crate::time::unix_now() as i64 + 60);
        let mut url = format!(
            "{}&$filter={}&$select={}",
            self.arm.url(
                &format!(
                    "/subscriptions/{}/providers/Microsoft.Insights/eventtypes/management/values",
                    self.subscription
                ),
                ACTIVITY_API_VERSION
            ),
            urlencode(&filter),
            urlencode("eventTimestamp,operationName,status")
        );
        let mut out = Vec::new();
        for _ in 0..LOG_PAGES {
            let a = self
                .arm
                .call(Method::GET, &url, None, &[], "read the activity log")
                .await?;
            for e in a
                .body
                .get("value")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let text = |p: &str| e.pointer(p).and_then(Value::as_str).unwrap_or("");
                let act = act_of(text("/operationName/value"), text("/status/value"));
                if let (Some(act), Some(at)) = (act, instant(text("/eventTimestamp"))) {
                    out.push(LogEntry { at, act });
                }
            }
            match a.body.get("nextLink").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => url = next.to_string(),
                _ => break,
            }
        }
        Ok(out)
    }

    /// A VM answer (with its instance view) as the neutral [`LiveInstance`].
    async fn live(&self, vm: &Value) -> Result<LiveInstance, CloudError> {
        let text = |p: &str| vm.pointer(p).and_then(Value::as_str).unwrap_or("");
        let id = text("/id").to_string();
        let place = parse_vm_id(&id, &self.subscription)?;
        let statuses = vm
            .pointer("/properties/instanceView/statuses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let power_code = statuses
            .iter()
            .filter_map(|s| s.get("code").and_then(Value::as_str))
            .find(|c| c.starts_with("PowerState/"));
        let power = power_of(power_code, text("/properties/provisioningState"));
        let now = unix_now() as i64;
        let since = parse_rfc3339(text("/properties/timeCreated"))
            .unwrap_or(0)
            .max(now - LOG_DAYS * 86_400)
            .saturating_sub(60);
        let (cause, last_reclaim) = cause_from_log(&self.log_of(&id, since).await?);
        let spot = text("/properties/priority").eq_ignore_ascii_case("Spot");
        let reclaim = spot.then(|| {
            if text("/properties/evictionPolicy").eq_ignore_ascii_case("Delete") {
                ReclaimPolicy::Delete
            } else {
                ReclaimPolicy::Stop
            }
        });
        let os_disk = vm
            .pointer("/properties/storageProfile/osDisk")
            .cloned()
            .unwrap_or(Value::Null);
        let mut disk_ids: Vec<String> = Vec::new();
        if let Some(d) = os_disk.pointer("/managedDisk/id").and_then(Value::as_str) {
            disk_ids.push(canonical_disk_id(d, &place.resource_group));
        }
        for d in vm
            .pointer("/properties/storageProfile/dataDisks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(d) = d.pointer("/managedDisk/id").and_then(Value::as_str) {
                disk_ids.push(canonical_disk_id(d, &place.resource_group));
            }
        }
        Ok(LiveInstance {
            id,
            unique_id: text("/properties/vmId").to_string(),
            name: text("/name").to_string(),
            region: text("/location").to_string(),
            zone: vm
                .pointer("/zones/0")
                .and_then(Value::as_str)
                .map(str::to_string),
            machine_type: text("/properties/hardwareProfile/vmSize").to_string(),
            spot,
            reclaim,
            image: image_of(
                vm.pointer("/properties/storageProfile/imageReference")
                    .unwrap_or(&Value::Null),
            ),
            disk_size_gb: os_disk
                .get("diskSizeGB")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32,
            power,
            stop_cause: matches!(power, PowerState::Stopped | PowerState::Stopping)
                .then_some(cause),
            last_reclaim,
            disk_ids,
            labels: tags_of(vm),
            restarts_itself: false,
        })
    }

    fn place_of(spec: &LaunchSpec) -> Result<VmRef, CloudError> {
        let InstanceClass::Azure { resource_group, .. } = &spec.class else {
            return Err(CloudError::Invalid(
                "an Azure VM needs the `azure` block".into(),
            ));
        };
        Ok(VmRef {
            resource_group: segment(resource_group)?.to_string(),
            name: segment(&spec.name)?.to_string(),
        })
    }
}

impl AzureVms {
    /// The subscription's VMs that carry the marker or whose size `also` takes, each read
    /// again for its instance view (the list has none).
    async fn list_where(&self, also: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        let mut url = self.arm.url(
            &format!(
                "/subscriptions/{}/providers/Microsoft.Compute/virtualMachines",
                self.subscription
            ),
            VM_API_VERSION,
        );
        let mut kept = Vec::new();
        loop {
            let a = self
                .arm
                .call(Method::GET, &url, None, &[], "list the subscription's VMs")
                .await?;
            for vm in a
                .body
                .get("value")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let size = vm
                    .pointer("/properties/hardwareProfile/vmSize")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if (marker_of(&tags_of(vm)).is_some() || also(size))
                    && let Some(id) = vm.get("id").and_then(Value::as_str)
                {
                    kept.push(id.to_string());
                }
            }
            match a.body.get("nextLink").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => url = next.to_string(),
                _ => break,
            }
        }
        let mut out = Vec::new();
        for id in kept {
            if let Some(vm) = self.get(&id).await? {
                out.push(vm);
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Instances for AzureVms {
    fn cloud(&self) -> Cloud {
        Cloud::Azure
    }

    fn pace(&self) -> crate::pace::Pace {
        self.arm.pace
    }

    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError> {
        let path = format!(
            "/subscriptions/{}/providers/Microsoft.Compute/locations/{}/publishers/{HPC_IMAGE_PUBLISHER}/artifacttypes/vmimage/offers/{HPC_IMAGE_OFFER}/skus/{HPC_IMAGE_SKU}/versions",
            self.subscription,
            segment(&region.to_ascii_lowercase())?
        );
        let a = self
            .call(
                Method::GET,
                &path,
                "",
                None,
                &[],
                "list the HPC image versions",
            )
            .await?;
        let names = a
            .body
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("name").and_then(Value::as_str));
        let image = format!("{HPC_IMAGE_PUBLISHER}:{HPC_IMAGE_OFFER}:{HPC_IMAGE_SKU}");
        let version = newest_version(names).ok_or_else(|| {
            CloudError::NotFound(format!("no version of the image {image} in {region}"))
        })?;
        Ok(ImageRef {
            id: format!("{image}:{version}"),
            description: format!(
                "Azure HPC image {image} version {version} (Ubuntu 22.04, NVIDIA driver and CUDA)"
            ),
        })
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        let place = Self::place_of(spec)?;
        if let Some(vm) = self.find(spec).await? {
            return Ok(vm);
        }
        let body = put_body(spec)?;
        let what = format!("create VM {}", spec.name);
        let a = match self
            .call(
                Method::PUT,
                &self.vm_path(&place),
                "",
                Some(&body),
                &[("If-None-Match", "*")],
                &what,
            )
            .await
        {
            Ok(a) => a,
            // Created meanwhile (a lost answer retried): ours if it carries our marker.
            Err(CloudError::Conflict(m)) if m.contains("PreconditionFailed") => {
                return match self.find(spec).await? {
                    Some(vm) => Ok(vm),
                    None => Err(CloudError::Conflict(m)),
                };
            }
            Err(e) => return Err(e),
        };
        self.finish(&a, &what).await?;
        match self.read(&place).await? {
            Some(vm) => self.live(&vm).await,
            None => Err(CloudError::Other(format!(
                "the creation of VM {} ended but the VM is not there",
                spec.name
            ))),
        }
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        let place = parse_vm_id(id, &self.subscription)?;
        match self.read(&place).await? {
            Some(vm) => self.live(&vm).await.map(Some),
            None => Ok(None),
        }
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        let place = Self::place_of(spec)?;
        let Some(vm) = self.read(&place).await? else {
            return Ok(None);
        };
        let want = spec.labels.get(MARKER_LABEL).map(String::as_str);
        if want.is_some() && marker_of(&tags_of(&vm)) == want {
            return self.live(&vm).await.map(Some);
        }
        Err(CloudError::Conflict(format!(
            "a VM named {} already exists in resource group {} and is not this instance's (no matching `{MARKER_LABEL}` tag)",
            place.name, place.resource_group
        )))
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        self.list_where(&|_| false).await
    }

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        self.list_where(gpu).await
    }

    async fn start(&self, id: &str) -> Result<(), CloudError> {
        let place = parse_vm_id(id, &self.subscription)?;
        let what = format!("start VM {}", place.name);
        let a = self
            .call(
                Method::POST,
                &format!("{}/start", self.vm_path(&place)),
                "",
                None,
                &[],
                &what,
            )
            .await?;
        self.finish(&a, &what).await
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        let place = parse_vm_id(id, &self.subscription)?;
        let now = self
            .read(&place)
            .await?
            .ok_or_else(|| CloudError::NotFound(format!("VM {id}")))?;
        let mut all: BTreeMap<String, String> = labels
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case(MARKER_LABEL))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in tags_of(&now) {
            if k.eq_ignore_ascii_case(MARKER_LABEL) {
                all.insert(k, v);
            }
        }
        let what = format!("change the tags of VM {}", place.name);
        let a = self
            .call(
                Method::PATCH,
                &self.vm_path(&place),
                "",
                Some(&json!({ "tags": all })),
                &[],
                &what,
            )
            .await?;
        self.finish(&a, &what).await
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        let place = parse_vm_id(id, &self.subscription)?;
        let what = format!("delete VM {}", place.name);
        let a = match self
            .call(Method::DELETE, &self.vm_path(&place), "", None, &[], &what)
            .await
        {
            Ok(a) => a,
            Err(CloudError::NotFound(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        match self.finish(&a, &what).await {
            Ok(()) | Err(CloudError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// The activity log `$filter` for VM `id` between `since` and `until` (unix seconds): a
/// start and an end time, as every documented pattern of the Activity Log API has them
/// (`eventTimestamp ge '…' and eventTimestamp le '…' and resourceUri eq '…'`).
fn activity_filter(id: &str, since: i64, until: i64) -> String {
    format!(
        "eventTimestamp ge '{}' and eventTimestamp le '{}' and resourceUri eq '{id}'",
        format_rfc3339(since),
        format_rfc3339(until.max(since))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUB: &str = "6b1f0a52-3c9d-4e7a-8f21-9d0c4b7e5a13";

    fn entry(at: &str, op: &str, status: &str) -> Option<LogEntry> {
        Some(LogEntry {
            at: instant(at)?,
            act: act_of(&format!("Microsoft.Compute/virtualMachines/{op}"), status)?,
        })
    }

    fn log(entries: &[(&str, &str, &str)]) -> Vec<LogEntry> {
        entries
            .iter()
            .filter_map(|(t, op, st)| entry(t, op, st))
            .collect()
    }

    #[test]
    fn the_activity_filter_has_a_start_and_an_end() {
        let f = activity_filter("/subscriptions/s/vm", 1_764_900_000, 1_764_903_600);
        assert_eq!(
            f,
            "eventTimestamp ge '2025-12-05T02:00:00Z' and eventTimestamp le '2025-12-05T03:00:00Z' and resourceUri eq '/subscriptions/s/vm'"
        );
        // An end before the start (a clock step) is clamped to the start.
        assert!(activity_filter("x", 10, 5).contains("le '1970-01-01T00:00:10Z'"));
    }

    #[test]
    fn vm_ids_parse_in_any_case_and_only_in_our_subscription() {
        let id = format!(
            "/subscriptions/{SUB}/resourceGroups/rg-gpu/providers/Microsoft.Compute/virtualMachines/gpu-1a2b3c4d"
        );
        assert_eq!(
            parse_vm_id(&id, SUB).unwrap(),
            VmRef {
                resource_group: "rg-gpu".into(),
                name: "gpu-1a2b3c4d".into()
            }
        );
        let lower = id.to_ascii_lowercase();
        assert_eq!(
            parse_vm_id(&lower, &SUB.to_ascii_uppercase()).unwrap().name,
            "gpu-1a2b3c4d"
        );
        let other = id.replace(SUB, "00000000-0000-4000-8000-000000000000");
        assert!(
            matches!(parse_vm_id(&other, SUB), Err(CloudError::Invalid(m)) if m.contains("subscription"))
        );
        assert!(parse_vm_id("projects/p/zones/z/instances/n", SUB).is_err());
        assert!(parse_vm_id(&id.replace("virtualMachines", "disks"), SUB).is_err());
        assert!(parse_vm_id(&format!("{id}/start"), SUB).is_err());
        assert!(parse_vm_id(&id.replace("gpu-1a2b3c4d", "a?b"), SUB).is_err());
    }

    #[test]
    fn disk_ids_keep_the_vms_spelling_of_the_resource_group() {
        let upper = format!(
            "/subscriptions/{SUB}/resourceGroups/RG-GPU/providers/Microsoft.Compute/disks/gpu1_OsDisk_1_ab"
        );
        assert_eq!(
            canonical_disk_id(&upper, "rg-gpu"),
            format!(
                "/subscriptions/{SUB}/resourceGroups/rg-gpu/providers/Microsoft.Compute/disks/gpu1_OsDisk_1_ab"
            )
        );
        let elsewhere = upper.replace("RG-GPU", "rg-disks");
        assert_eq!(canonical_disk_id(&elsewhere, "rg-gpu"), elsewhere);
        assert_eq!(canonical_disk_id("not-an-id", "rg"), "not-an-id");
    }

    #[test]
    fn power_states_read_as_the_instance_view_writes_them() {
        assert_eq!(
            power_of(Some("PowerState/running"), "Succeeded"),
            PowerState::Running
        );
        assert_eq!(
            power_of(Some("PowerState/deallocated"), "Succeeded"),
            PowerState::Stopped
        );
        assert_eq!(
            power_of(Some("PowerState/stopped"), "Succeeded"),
            PowerState::Stopped
        );
        assert_eq!(
            power_of(Some("PowerState/deallocating"), "Updating"),
            PowerState::Stopping
        );
        assert_eq!(
            power_of(Some("PowerState/stopping"), "Updating"),
            PowerState::Stopping
        );
        assert_eq!(
            power_of(Some("PowerState/starting"), "Updating"),
            PowerState::Starting
        );
        assert_eq!(power_of(None, "Creating"), PowerState::Starting);
        assert_eq!(
            power_of(Some("PowerState/running"), "Deleting"),
            PowerState::Terminated
        );
        // A failed allocation leaves the VM deallocated.
        assert_eq!(
            power_of(Some("PowerState/deallocated"), "Failed"),
            PowerState::Stopped
        );
    }

    #[test]
    fn the_activity_log_tells_an_eviction_from_a_person() {
        // Azure evicted it after it was created and started.
        let evicted = log(&[
            ("2026-12-05T10:00:00.000000Z", "write", "Succeeded"),
            (
                "2026-12-05T11:00:00.500000Z",
                "evictSpotVM/action",
                "Succeeded",
            ),
        ]);
        let (cause, last) = cause_from_log(&evicted);
        assert_eq!(cause, StopCause::Reclaim);
        assert_eq!(last, parse_rfc3339("2026-12-05T11:00:00Z"));
        // A simulated eviction counts too.
        let simulated = log(&[(
            "2026-12-05T11:00:00Z",
            "simulateEviction/action",
            "Succeeded",
        )]);
        assert_eq!(cause_from_log(&simulated).0, StopCause::Reclaim);
        // A person deallocated it after it had been evicted and started again.
        let person = log(&[
            ("2026-12-05T11:00:00Z", "evictSpotVM/action", "Succeeded"),
            ("2026-12-05T11:30:00Z", "start/action", "Succeeded"),
            ("2026-12-05T12:00:00Z", "deallocate/action", "Started"),
            ("2026-12-05T12:00:01Z", "deallocate/action", "Succeeded"),
        ]);
        let (cause, last) = cause_from_log(&person);
        assert_eq!(cause, StopCause::Person);
        assert_eq!(
            last,
            parse_rfc3339("2026-12-05T11:00:00Z"),
            "still reported"
        );
        assert_eq!(
            cause_from_log(&log(&[(
                "2026-12-05T12:00:00Z",
                "powerOff/action",
                "Succeeded"
            )]))
            .0,
            StopCause::Person
        );
        // Refused starts change nothing: still a reclaim to bring back.
        let refused = log(&[
            ("2026-12-05T11:00:00Z", "evictSpotVM/action", "Succeeded"),
            ("2026-12-05T11:01:00Z", "start/action", "Started"),
            ("2026-12-05T11:01:00Z", "start/action", "Accepted"),
            ("2026-12-05T11:01:05Z", "start/action", "Failed"),
        ]);
        assert_eq!(cause_from_log(&refused).0, StopCause::Reclaim);
        // Sub-second order decides within one second.
        let same_second = log(&[
            ("2026-12-05T11:00:00.9Z", "deallocate/action", "Succeeded"),
            ("2026-12-05T11:00:00.25Z", "evictSpotVM/action", "Succeeded"),
        ]);
        assert_eq!(cause_from_log(&same_second).0, StopCause::Person);
        // Nothing recorded: left alone.
        assert!(!cause_from_log(&[]).0.restartable());
        let started_only = log(&[("2026-12-05T11:00:00Z", "start/action", "Succeeded")]);
        assert!(!cause_from_log(&started_only).0.restartable());
        // Other operations and other resource types are not read.
        assert_eq!(act_of("Microsoft.Compute/disks/write", "Succeeded"), None);
        assert_eq!(
            act_of(
                "MICROSOFT.COMPUTE/VIRTUALMACHINES/EVICTSPOTVM/ACTION",
                "Succeeded"
            ),
            Some(Act::Reclaim)
        );
        assert_eq!(
            act_of(
                "Microsoft.Compute/virtualMachines/deallocate/action",
                "Failed"
            ),
            None
        );
    }

    fn spec(spot: bool, reclaim: ReclaimPolicy, zone: Option<&str>) -> LaunchSpec {
        LaunchSpec {
            name: "gpu-1a2b3c4d".into(),
            region: "eastus".into(),
            zone: zone.map(str::to_string),
            machine_type: "Standard_NC24ads_A100_v4".into(),
            spot,
            reclaim,
            image: "microsoft-dsvm:ubuntu-hpc:2204:latest".into(),
            disk_size_gb: 200,
            labels: BTreeMap::from([
                ("team".to_string(), "ml".to_string()),
                (MARKER_LABEL.to_string(), "gpu-1a2b3c4d".to_string()),
            ]),
            user_data: Some("#cloud-config\n".into()),
            class: InstanceClass::Azure {
                resource_group: "rg-gpu".into(),
                subnet_id: format!(
                    "/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/v/subnets/s"
                ),
                admin_username: "azureuser".into(),
                ssh_public_key: "ssh-ed25519 AAAA test\n".into(),
            },
        }
    }

    #[test]
    fn the_put_body_is_a_spot_vm_that_owns_its_disk_and_nic() {
        let b = put_body(&spec(true, ReclaimPolicy::Stop, Some("2"))).unwrap();
        let p = &b["properties"];
        assert_eq!(b["location"], "eastus");
        assert_eq!(b["zones"], json!(["2"]));
        assert_eq!(b["tags"][MARKER_LABEL], "gpu-1a2b3c4d");
        assert_eq!(b["tags"]["team"], "ml");
        assert_eq!(p["priority"], "Spot");
        assert_eq!(p["evictionPolicy"], "Deallocate");
        assert_eq!(p["billingProfile"]["maxPrice"], -1);
        assert_eq!(p["hardwareProfile"]["vmSize"], "Standard_NC24ads_A100_v4");
        assert_eq!(
            p["storageProfile"]["imageReference"],
            json!({"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2204", "version": "latest"})
        );
        let os = &p["storageProfile"]["osDisk"];
        assert_eq!(os["createOption"], "FromImage");
        assert_eq!(os["deleteOption"], "Delete");
        assert_eq!(os["diskSizeGB"], 200);
        let osp = &p["osProfile"];
        assert_eq!(osp["computerName"], "gpu-1a2b3c4d");
        assert_eq!(osp["customData"], "I2Nsb3VkLWNvbmZpZwo=");
        assert_eq!(
            osp["linuxConfiguration"]["disablePasswordAuthentication"],
            true
        );
        assert_eq!(
            osp["linuxConfiguration"]["ssh"]["publicKeys"][0],
            json!({"path": "/home/azureuser/.ssh/authorized_keys", "keyData": "ssh-ed25519 AAAA test"})
        );
        let nic = &p["networkProfile"]["networkInterfaceConfigurations"][0];
        assert_eq!(
            p["networkProfile"]["networkApiVersion"],
            NETWORK_API_VERSION
        );
        assert_eq!(nic["properties"]["deleteOption"], "Delete");
        assert!(
            nic["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"]
                .as_str()
                .unwrap()
                .ends_with("/subnets/s")
        );

        let b = put_body(&spec(true, ReclaimPolicy::Delete, None)).unwrap();
        assert_eq!(b["properties"]["evictionPolicy"], "Delete");
        assert!(b.get("zones").is_none());

        let b = put_body(&spec(false, ReclaimPolicy::Stop, None)).unwrap();
        assert_eq!(b["properties"]["priority"], "Regular");
        assert!(b["properties"].get("evictionPolicy").is_none());
        assert!(b["properties"].get("billingProfile").is_none());

        let mut by_id = spec(false, ReclaimPolicy::Stop, None);
        by_id.image = format!(
            "/subscriptions/{SUB}/resourceGroups/img/providers/Microsoft.Compute/images/cuda"
        );
        let b = put_body(&by_id).unwrap();
        assert_eq!(
            b["properties"]["storageProfile"]["imageReference"],
            json!({"id": by_id.image})
        );
        by_id.image = "ubuntu".into();
        assert!(matches!(put_body(&by_id), Err(CloudError::Invalid(_))));
    }

    #[test]
    fn images_versions_and_encodings() {
        assert_eq!(
            newest_version(
                ["22.04.2024043001", "22.04.2025030701", "22.04.2025011501"].into_iter()
            ),
            Some("22.04.2025030701")
        );
        assert_eq!(
            newest_version(["1.9.0", "1.10.0"].into_iter()),
            Some("1.10.0")
        );
        assert_eq!(newest_version(std::iter::empty()), None);
        assert_eq!(
            image_of(
                &json!({"publisher": "p", "offer": "o", "sku": "s", "version": "latest", "exactVersion": "1.2"})
            ),
            "p:o:s:latest"
        );
        assert_eq!(
            image_of(&json!({"id": "/subscriptions/x/images/y"})),
            "/subscriptions/x/images/y"
        );
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(urlencode("a b'c"), "a%20b%27c");
        assert_eq!(
            instant("2026-12-05T11:00:00.25Z"),
            Some((parse_rfc3339("2026-12-05T11:00:00Z").unwrap(), 250_000_000))
        );
        assert_eq!(
            marker_of(&BTreeMap::from([(
                "GPU-TF-INSTANCE".to_string(),
                "x".to_string()
            )])),
            Some("x")
        );
    }
}
