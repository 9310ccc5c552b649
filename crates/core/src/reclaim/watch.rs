//! One pass of the reclaim watcher over the VMs we manage: a VM a reclaim stopped is
//! started again (or, where the cloud restarts it itself, watched), with the
//! [`StartSchedule`]'s pauses after a shortage and its give-up; a VM a person stopped is
//! left alone and said so once. Never deletes or stops anything.
//!
//! The loop, leader election and output live in the binary; this is the decision, tested
//! against [`crate::instance::fake`].

use std::collections::BTreeMap;
use std::time::Duration;

use super::events::{Event, EventKind};
use super::schedule::{Next, StartSchedule};
use crate::catalog::Catalog;
use crate::instance::{Instances, LiveInstance, PowerState};
use crate::reclaim::StopCause;

/// What the watcher remembers of one stopped VM between passes.
#[derive(Debug, Clone, PartialEq)]
struct Stop {
    /// Since when (unix seconds).
    since: i64,
    /// Start attempts made.
    attempts: u32,
    /// No attempt before this (unix seconds).
    next_try: i64,
    /// Gave up: no more attempts.
    gave_up: bool,
}

/// The watcher's memory: VMs stopped by a reclaim it is bringing back, and VMs left alone.
#[derive(Debug, Default)]
pub struct Watcher {
    schedule: StartSchedule,
    stops: BTreeMap<(String, String), Stop>,
    left_alone: BTreeMap<(String, String), ()>,
    /// Whether a pass has listed the cloud's VMs at least once.
    read_once: bool,
}

impl Watcher {
    /// A watcher with `schedule`.
    pub fn new(schedule: StartSchedule) -> Self {
        Watcher {
            schedule,
            ..Watcher::default()
        }
    }

    /// Whether any pass has read the cloud's VMs: a target never read is one the
    /// credentials or the place cannot reach.
    pub fn has_read(&self) -> bool {
        self.read_once
    }

    /// VMs currently stopped by a reclaim that the watcher still tries to start.
    pub fn pending(&self) -> usize {
        self.stops.values().filter(|s| !s.gave_up).count()
    }

    /// One pass over every VM `cloud` manages, at `now` (unix seconds): the events of the
    /// pass, in order. `catalog` names each VM's GPU from its machine type.
    pub async fn pass(
        &mut self,
        cloud: &dyn Instances,
        catalog: &Catalog,
        now: i64,
    ) -> Result<Vec<Event>, crate::seam::CloudError> {
        let vms = cloud.list_managed().await?;
        self.read_once = true;
        let name = cloud.cloud().as_str();
        let mut events = Vec::new();
        for vm in &vms {
            let key = (name.to_string(), vm.id.clone());
            let gpu = gpu_of(catalog, cloud, vm);
            let event = |kind| {
                let e = Event::new(kind, now, name, &vm.id).region(&vm.region);
                match &gpu {
                    Some(g) => e.gpu(g),
                    None => e,
                }
            };
            match (vm.power, &vm.stop_cause) {
                (PowerState::Stopped, Some(StopCause::Reclaim)) => {
                    if !self.stops.contains_key(&key) {
                        let since = vm.last_reclaim.unwrap_or(now).min(now);
                        let mut e = event(EventKind::Reclaimed);
                        e.unix = since;
                        e.at = crate::time::format_rfc3339(since);
                        events.push(e.detail(if vm.restarts_itself {
                            "the cloud restarts it when capacity returns; watching"
                        } else {
                            "stopped with its disks; starting it when capacity returns"
                        }));
                        self.stops.insert(
                            key.clone(),
                            Stop {
                                since,
                                attempts: 0,
                                next_try: now,
                                gave_up: false,
                            },
                        );
                    }
                    if !vm.restarts_itself {
                        self.try_start(cloud, vm, &key, now, &event, &mut events)
                            .await;
                    }
                }
                (PowerState::Stopped, cause) => {
                    self.stops.remove(&key);
                    if self.left_alone.insert(key, ()).is_none() {
                        let why = match cause {
                            Some(StopCause::Person) => {
                                "stopped by a person: not started".to_string()
                            }
                            Some(StopCause::Other(w)) => format!("stopped ({w}): not started"),
                            _ => "stopped for an unknown reason: not started".to_string(),
                        };
                        events.push(event(EventKind::LeftStopped).detail(why));
                    }
                }
                (PowerState::Running, _) => {
                    self.left_alone.remove(&key);
                    if let Some(stop) = self.stops.remove(&key) {
                        let minutes = (now - stop.since).max(0) / 60;
                        events.push(event(EventKind::Started).detail(format!(
                            "running again after {minutes} minutes, same instance and disks"
                        )));
                    }
                }
                _ => {}
            }
        }
        // Forget what no longer exists.
        let ids: Vec<(String, String)> = vms
            .iter()
            .map(|v| (name.to_string(), v.id.clone()))
            .collect();
        self.stops.retain(|k, _| k.0 != name || ids.contains(k));
        self.left_alone
            .retain(|k, _| k.0 != name || ids.contains(k));
        Ok(events)
    }

    async fn try_start(
        &mut self,
        cloud: &dyn Instances,
        vm: &LiveInstance,
        key: &(String, String),
        now: i64,
        event: &dyn Fn(EventKind) -> Event,
        events: &mut Vec<Event>,
    ) {
        let Some(stop) = self.stops.get_mut(key) else {
            return;
        };
        if stop.gave_up || now < stop.next_try {
            return;
        }
        stop.attempts += 1;
        let attempt = stop.attempts;
        match cloud.start(&vm.id).await {
            Ok(()) => events.push(
                event(EventKind::StartAttempt)
                    .attempt(attempt)
                    .detail("accepted"),
            ),
            Err(e) => {
                events.push(
                    event(EventKind::StartAttempt)
                        .attempt(attempt)
                        .detail(e.to_string()),
                );
                let stopped_for = Duration::from_secs((now - stop.since).max(0) as u64);
                match self.schedule.after_failure(attempt, stopped_for, &e) {
                    Next::RetryIn(d) => stop.next_try = now + d.as_secs().max(1) as i64,
                    Next::GiveUp(why) => {
                        stop.gave_up = true;
                        events.push(event(EventKind::GaveUp).attempt(attempt).detail(why));
                    }
                }
            }
        }
    }
}

/// The GPU of `vm`, from the catalog row of its machine type.
fn gpu_of(catalog: &Catalog, cloud: &dyn Instances, vm: &LiveInstance) -> Option<String> {
    catalog
        .offers()
        .iter()
        .find(|o| o.cloud == cloud.cloud() && o.instance_type == vm.machine_type)
        .map(|o| o.gpu.name.to_string())
}

#[cfg(test)]
mod tests;
