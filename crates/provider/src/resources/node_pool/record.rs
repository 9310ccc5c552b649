//! What one apply of a pool appends to the events file (`events_file`): the request for
//! GPUs when the apply makes groups (a create, a roll), a capacity answer, and the groups
//! ready with the seconds since the request, which is also `time_to_ready_seconds`.

use std::time::Instant;

use gpu_core::pool::attempt::Refusal;
use gpu_core::pool::reconcile::Outcome;
use gpu_core::record::EventLine;
use tfplugin::{Diagnostics, Value};

use super::desired::{Desired, Settings};
use super::groups;

/// The record of one apply.
pub struct Record<'a> {
    settings: &'a Settings,
    base: EventLine,
    /// Whether the apply makes groups (only then is there a request to time).
    makes_groups: bool,
    started: Instant,
}

impl<'a> Record<'a> {
    /// The record of applying `want` over `prior`, starting now.
    pub fn of(settings: &'a Settings, want: &Desired, prior: &Value) -> Self {
        let before = groups::names(prior);
        let makes_groups = want.groups.iter().any(|g| !before.contains(&g.name));
        let mut base = EventLine::now("request", want.spec.cloud.as_str(), &want.spec.region);
        base.resource = Some(format!("gpu_node_pool.{}", want.spec.name));
        base.gpu = Some(want.spec.gpu.name.to_string());
        Record {
            settings,
            base,
            makes_groups,
            started: Instant::now(),
        }
    }

    fn append(&self, line: &EventLine, diags: &mut Diagnostics) {
        if let Some(w) = self.settings.clouds.record(line) {
            diags.push(w);
        }
    }

    /// The same record, timed from `started` (a walk's first request: the time to GPU
    /// counts every place tried).
    pub fn since(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    /// An event of kind `event` (`failover`, `failback`, a `capacity` timeout) here, with
    /// its outcome and the words that say why.
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

    /// The request, when the apply makes groups.
    pub fn request(&self, diags: &mut Diagnostics) {
        if self.makes_groups {
            self.append(&self.base.next("request"), diags);
        }
    }

    /// The cloud's capacity answer.
    pub fn capacity(&self, refusal: &Refusal, diags: &mut Diagnostics) {
        let mut line = self.base.next("capacity");
        line.outcome = Some(refusal.outcome.as_str().to_string());
        line.seconds = Some(self.started.elapsed().as_secs_f64());
        line.detail = Some(format!(
            "{} failed: {}",
            refusal.error.step, refusal.error.source
        ));
        self.append(&line, diags);
    }

    /// The groups ready: the seconds since the request, when the apply made groups and
    /// they all are; recorded as `ready`.
    pub fn ready(&self, outcome: &Outcome, diags: &mut Diagnostics) -> Option<f64> {
        if !self.makes_groups || outcome.error.is_some() {
            return None;
        }
        let seconds = (self.started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let mut line = self.base.next("ready");
        line.seconds = Some(seconds);
        self.append(&line, diags);
        Some(seconds)
    }
}
