//! What one create of a VM (a new one, or the new VM of a roll) appends to the events file
//! (`events_file`): the request, a capacity answer, and the VM running with the seconds
//! since the request, which is also `time_to_ready_seconds`.

use std::time::Instant;

use gpu_core::instance::{InstanceSpec, LaunchSpec};
use gpu_core::record::EventLine;
use gpu_core::seam::{CapacityOutcome, CloudError};
use tfplugin::Diagnostics;

use crate::clouds::Clouds;

/// The record of one launch.
pub struct Record<'a> {
    clouds: &'a Clouds,
    base: EventLine,
    started: Instant,
}

impl<'a> Record<'a> {
    /// The record of launching `launch` (of `spec`, the VM the user named `name`),
    /// starting now.
    pub fn of(clouds: &'a Clouds, spec: &InstanceSpec, launch: &LaunchSpec, name: &str) -> Self {
        let mut base = EventLine::now("request", spec.cloud.as_str(), &launch.region);
        base.resource = Some(format!("gpu_instance.{name}"));
        base.zone = launch.zone.clone();
        base.gpu = Some(spec.gpu.name.to_string());
        base.detail = Some(format!(
            "{}{}",
            if launch.spot { "spot " } else { "" },
            launch.machine_type
        ));
        Record {
            clouds,
            base,
            started: Instant::now(),
        }
    }

    /// The same record, timed from `started` (a walk's first request: the time to GPU
    /// counts every place tried).
    pub fn since(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    /// An event of kind `event` (`failover`, `failback`, a `capacity` timeout) here.
    pub fn event(
        &self,
        event: &str,
        outcome: Option<&str>,
        detail: String,
        diags: &mut Diagnostics,
    ) {
        let mut line = self.base.next(event);
        line.outcome = outcome.map(str::to_string);
        line.seconds = Some(self.started.elapsed().as_secs_f64());
        line.detail = Some(detail);
        self.append(&line, diags);
    }

    fn append(&self, line: &EventLine, diags: &mut Diagnostics) {
        if let Some(w) = self.clouds.record(line) {
            diags.push(w);
        }
    }

    /// The request.
    pub fn request(&self, diags: &mut Diagnostics) {
        self.append(&self.base, diags);
    }

    /// The cloud's capacity answer.
    pub fn capacity(&self, outcome: CapacityOutcome, e: &CloudError, diags: &mut Diagnostics) {
        let mut line = self.base.next("capacity");
        line.outcome = Some(outcome.as_str().to_string());
        line.seconds = Some(self.started.elapsed().as_secs_f64());
        line.detail = Some(e.to_string());
        self.append(&line, diags);
    }

    /// The VM running: the seconds since the request, recorded as `ready`.
    pub fn ready(&self, diags: &mut Diagnostics) -> f64 {
        let seconds = (self.started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let mut line = self.base.next("ready");
        line.seconds = Some(seconds);
        self.append(&line, diags);
        seconds
    }
}
