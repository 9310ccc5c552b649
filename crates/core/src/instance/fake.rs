//! An in-memory cloud of single VMs for tests: launches, reads, starts and deletes as a
//! cloud does, plus what only a cloud does by itself: a reclaim, a person's stop, a
//! capacity shortage of N start attempts, and (where the cloud does it, as EC2 for
//! persistent spot requests) restarting a reclaimed VM once capacity is back.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::offer::Cloud;
use crate::seam::CloudError;
use crate::seam::instances::StopCause;
use crate::seam::instances::{
    GpuMachine, ImageRef, Instances, LaunchSpec, LiveInstance, PowerState, ReclaimPolicy,
};

#[derive(Debug, Default)]
struct World {
    vms: BTreeMap<String, LiveInstance>,
    next: u64,
    short: u32,
    starts: u32,
    calls: Vec<String>,
}

/// Single VMs of one cloud, in memory.
#[derive(Debug)]
pub struct FakeInstances {
    cloud: Cloud,
    restarts_itself: bool,
    world: Mutex<World>,
}

impl FakeInstances {
    /// An empty cloud; `restarts_itself`: it restarts reclaimed VMs itself (EC2's way).
    pub fn new(cloud: Cloud, restarts_itself: bool) -> Self {
        FakeInstances {
            cloud,
            restarts_itself,
            world: Mutex::new(World::default()),
        }
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cloud reclaims VM `id` at `now`: stopped (policy stop) or deleted.
    pub fn reclaim(&self, id: &str, now: i64) {
        let mut w = self.world();
        let Some(vm) = w.vms.get_mut(id) else { return };
        if vm.reclaim == Some(ReclaimPolicy::Delete) {
            w.vms.remove(id);
            return;
        }
        vm.power = PowerState::Stopped;
        vm.stop_cause = Some(StopCause::Reclaim);
        vm.last_reclaim = Some(now);
    }

    /// A person stops VM `id`.
    pub fn stop_by_person(&self, id: &str) {
        if let Some(vm) = self.world().vms.get_mut(id) {
            vm.power = PowerState::Stopped;
            vm.stop_cause = Some(StopCause::Person);
        }
    }

    /// The next `n` starts (by us or by the cloud itself) fail for want of capacity.
    pub fn set_short(&self, n: u32) {
        self.world().short = n;
    }

    /// The cloud's own turn: where it restarts reclaimed VMs, one restart attempt each.
    pub fn tick(&self) {
        if !self.restarts_itself {
            return;
        }
        let mut w = self.world();
        let ids: Vec<String> = w
            .vms
            .values()
            .filter(|v| v.power == PowerState::Stopped && v.stop_cause == Some(StopCause::Reclaim))
            .map(|v| v.id.clone())
            .collect();
        for id in ids {
            if w.short > 0 {
                w.short -= 1;
                continue;
            }
            if let Some(vm) = w.vms.get_mut(&id) {
                vm.power = PowerState::Running;
                vm.stop_cause = None;
            }
        }
    }

    /// Starts asked of the fake so far (by anyone calling [`Instances::start`]).
    pub fn starts(&self) -> u32 {
        self.world().starts
    }

    /// Every mutating call so far, in order (`launch name`, `start id`, ...).
    pub fn calls(&self) -> Vec<String> {
        self.world().calls.clone()
    }

    /// A VM as stored.
    pub fn vm(&self, id: &str) -> Option<LiveInstance> {
        self.world().vms.get(id).cloned()
    }
}

#[async_trait]
impl Instances for FakeInstances {
    fn cloud(&self) -> Cloud {
        self.cloud
    }

    fn pace(&self) -> crate::pace::Pace {
        crate::pace::Pace::real()
    }

    async fn default_image(&self, region: &str) -> Result<ImageRef, CloudError> {
        // An id in the cloud's own shape, as a real lookup returns.
        let id = match self.cloud {
            Cloud::Aws => "ami-0123456789abcdef0".to_string(),
            Cloud::Azure => "microsoft-dsvm:ubuntu-hpc:2204:latest".to_string(),
            _ => format!("projects/fake-images/global/images/gpu-{region}"),
        };
        Ok(ImageRef {
            id,
            description: "the fake cloud's GPU image".into(),
        })
    }

    async fn launch(&self, spec: &LaunchSpec) -> Result<LiveInstance, CloudError> {
        if let Some(vm) = self.find(spec).await? {
            return Ok(vm);
        }
        let mut w = self.world();
        w.calls.push(format!("launch {}", spec.name));
        if w.short > 0 {
            w.short -= 1;
            return Err(CloudError::InsufficientCapacity(format!(
                "no {} capacity",
                spec.machine_type
            )));
        }
        w.next += 1;
        let id = format!("vm-{}", w.next);
        let vm = LiveInstance {
            id: id.clone(),
            unique_id: format!("u-{}", w.next),
            name: spec.name.clone(),
            region: spec.region.clone(),
            zone: spec.zone.clone(),
            machine_type: spec.machine_type.clone(),
            spot: spec.spot,
            reclaim: spec.spot.then_some(spec.reclaim),
            image: spec.image.clone(),
            disk_size_gb: spec.disk_size_gb,
            power: PowerState::Running,
            stop_cause: None,
            last_reclaim: None,
            disk_ids: vec![format!("disk-{}", w.next)],
            labels: spec.labels.clone(),
            restarts_itself: self.restarts_itself && spec.spot,
        };
        w.vms.insert(id, vm.clone());
        Ok(vm)
    }

    async fn get(&self, id: &str) -> Result<Option<LiveInstance>, CloudError> {
        Ok(self.world().vms.get(id).cloned())
    }

    async fn find(&self, spec: &LaunchSpec) -> Result<Option<LiveInstance>, CloudError> {
        let key = spec
            .labels
            .get(super::MARKER_TAG)
            .or_else(|| spec.labels.get(super::MARKER_LABEL));
        Ok(self
            .world()
            .vms
            .values()
            .find(|v| v.name == spec.name && key.is_some_and(|k| v.marker() == Some(k)))
            .cloned())
    }

    async fn list_managed(&self) -> Result<Vec<LiveInstance>, CloudError> {
        Ok(self
            .world()
            .vms
            .values()
            .filter(|v| v.marker().is_some())
            .cloned()
            .collect())
    }

    async fn list_gpu(&self, gpu: &GpuMachine<'_>) -> Result<Vec<LiveInstance>, CloudError> {
        Ok(self
            .world()
            .vms
            .values()
            .filter(|v| v.marker().is_some() || gpu(&v.machine_type))
            .cloned()
            .collect())
    }

    async fn start(&self, id: &str) -> Result<(), CloudError> {
        let mut w = self.world();
        w.calls.push(format!("start {id}"));
        w.starts += 1;
        if !w.vms.contains_key(id) {
            return Err(CloudError::NotFound(format!("no VM {id}")));
        }
        if w.short > 0 {
            w.short -= 1;
            return Err(CloudError::InsufficientCapacity(
                "no capacity in the zone".into(),
            ));
        }
        if let Some(vm) = w.vms.get_mut(id) {
            vm.power = PowerState::Running;
            vm.stop_cause = None;
        }
        Ok(())
    }

    async fn set_labels(
        &self,
        id: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), CloudError> {
        let mut w = self.world();
        w.calls.push(format!("label {id}"));
        let vm = w
            .vms
            .get_mut(id)
            .ok_or_else(|| CloudError::NotFound(format!("no VM {id}")))?;
        let marker: Vec<(String, String)> = vm
            .labels
            .iter()
            .filter(|(k, _)| *k == super::MARKER_TAG || *k == super::MARKER_LABEL)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        vm.labels = labels.clone();
        vm.labels.extend(marker);
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), CloudError> {
        let mut w = self.world();
        w.calls.push(format!("delete {id}"));
        w.vms.remove(id);
        Ok(())
    }
}
