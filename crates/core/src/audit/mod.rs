//! The audit log: every mutating cloud call (node groups, VMs, commitments, the watcher's
//! starts) passes through one choke point, [`Audit::run`], reached through the seam
//! decorators in [`audited`]. Each call becomes an `audit` line of the event record
//! ([`crate::record::EventLine`]): when, who (the caller as the cloud knows it, resolved
//! once per cloud by an [`ActorSource`]), what, on which cloud id, how it ended and the
//! monthly cost change of the apply it belongs to, sent to every [`AuditSink`]. A sink
//! that fails never fails the call: its error is kept for the operation to warn about.

pub mod audited;
pub mod claims;
#[cfg(feature = "live")]
pub mod otlp;
pub mod sink;

use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::offer::Cloud;
use crate::record::EventLine;
use crate::seam::CloudError;

pub use sink::{AuditSink, JsonLinesSink, StdoutSink};

/// The actor of a cloud the caller cannot be named on.
pub const UNKNOWN_ACTOR: &str = "unknown";

/// Names the caller of each cloud as that cloud sees it.
#[async_trait]
pub trait ActorSource: Send + Sync + std::fmt::Debug {
    /// The caller on `cloud` (never empty: [`UNKNOWN_ACTOR`] when the cloud cannot say).
    async fn actor(&self, cloud: Cloud) -> String;
}

/// An actor source that knows no one (tests, and auditing without clouds).
#[derive(Debug, Default)]
pub struct NoActor;

#[async_trait]
impl ActorSource for NoActor {
    async fn actor(&self, _cloud: Cloud) -> String {
        UNKNOWN_ACTOR.to_string()
    }
}

/// What one operation's calls are part of: the resource and its planned monthly change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditContext {
    /// The resource's type and the name the user gave it (`gpu_node_pool.train`).
    pub resource: Option<String>,
    /// The monthly cost change of the apply, USD.
    pub monthly_delta_usd: Option<f64>,
}

/// The audit of one operation: where events go, who the callers are, and the context.
/// Clones share the sinks and the sink errors.
#[derive(Debug, Clone)]
pub struct Audit {
    sinks: Arc<Vec<Arc<dyn AuditSink>>>,
    actors: Arc<dyn ActorSource>,
    context: AuditContext,
    failures: Arc<Mutex<Vec<String>>>,
}

impl Default for Audit {
    fn default() -> Self {
        Audit::off()
    }
}

impl Audit {
    /// No sink: calls run unrecorded.
    pub fn off() -> Self {
        Audit::new(Vec::new(), Arc::new(NoActor))
    }

    /// An audit writing to `sinks`, naming callers through `actors`.
    pub fn new(sinks: Vec<Arc<dyn AuditSink>>, actors: Arc<dyn ActorSource>) -> Self {
        Audit {
            sinks: Arc::new(sinks),
            actors,
            context: AuditContext::default(),
            failures: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Whether any sink is set.
    pub fn is_on(&self) -> bool {
        !self.sinks.is_empty()
    }

    /// This audit for an operation in `context`, with its own list of sink errors.
    pub fn within(&self, context: AuditContext) -> Self {
        Audit {
            context,
            failures: Arc::new(Mutex::new(Vec::new())),
            ..self.clone()
        }
    }

    /// The choke point: runs the mutating `call` (`action` on `target`, a cloud id, at
    /// `cloud` `region`) and sends its audit event to every sink.
    pub async fn run<T, F>(
        &self,
        cloud: Cloud,
        region: &str,
        action: &str,
        target: &str,
        call: F,
    ) -> Result<T, CloudError>
    where
        F: Future<Output = Result<T, CloudError>>,
    {
        let result = call.await;
        if self.is_on() {
            let mut line = EventLine::now("audit", cloud.as_str(), region);
            line.actor = Some(self.actors.actor(cloud).await);
            line.action = Some(action.to_string());
            line.target = Some(target.to_string());
            line.resource = self.context.resource.clone();
            line.monthly_delta_usd = self.context.monthly_delta_usd;
            line.result = Some(match &result {
                Ok(_) => "ok".to_string(),
                Err(e) => error_word(e).to_string(),
            });
            line.detail = result.as_ref().err().map(ToString::to_string);
            self.emit(&line);
        }
        result
    }

    /// Sends `line` to every sink; a failure is kept, not raised.
    pub fn emit(&self, line: &EventLine) {
        for sink in self.sinks.iter() {
            if let Err(e) = sink.send(line) {
                self.failures
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(e);
            }
        }
    }

    /// Delivers what the sinks queued (the end of an apply); a failure is kept.
    pub fn flush(&self) {
        for sink in self.sinks.iter() {
            if let Err(e) = sink.flush() {
                self.failures
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(e);
            }
        }
    }

    /// The sink errors since the operation began (each once), emptied.
    pub fn take_failures(&self) -> Vec<String> {
        let mut all = std::mem::take(&mut *self.failures.lock().unwrap_or_else(|p| p.into_inner()));
        all.dedup();
        all
    }
}

/// The kind of `e` as an audit result word.
pub fn error_word(e: &CloudError) -> &'static str {
    match e {
        CloudError::InsufficientCapacity(_) => "insufficient_capacity",
        CloudError::Quota(_) => "quota",
        CloudError::NotOffered(_) => "not_offered",
        CloudError::NotFound(_) => "not_found",
        CloudError::Throttled(_) => "throttled",
        CloudError::Unauthorized(_) => "unauthorized",
        CloudError::Invalid(_) => "invalid",
        CloudError::Conflict(_) => "conflict",
        CloudError::Busy(_) => "busy",
        CloudError::Transient(_) => "transient",
        CloudError::Timeout { .. } => "timeout",
        CloudError::Cancelled(_) => "cancelled",
        CloudError::Other(_) => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::block_on;

    #[derive(Debug, Default)]
    struct Kept(Mutex<Vec<EventLine>>);

    impl AuditSink for Kept {
        fn send(&self, line: &EventLine) -> Result<(), String> {
            self.0.lock().unwrap().push(line.clone());
            Ok(())
        }
    }

    #[derive(Debug)]
    struct Broken;

    impl AuditSink for Broken {
        fn send(&self, _line: &EventLine) -> Result<(), String> {
            Err("collector down".into())
        }
    }

    #[derive(Debug)]
    struct Named;

    #[async_trait]
    impl ActorSource for Named {
        async fn actor(&self, cloud: Cloud) -> String {
            format!("someone@{cloud}")
        }
    }

    #[test]
    fn each_call_is_one_event_with_its_outcome_and_a_broken_sink_never_fails_it() {
        let kept = Arc::new(Kept::default());
        let audit = Audit::new(vec![kept.clone(), Arc::new(Broken)], Arc::new(Named)).within(
            AuditContext {
                resource: Some("gpu_node_pool.train".into()),
                monthly_delta_usd: Some(1200.5),
            },
        );
        let ok = block_on(audit.run(
            Cloud::Gcp,
            "us-central1",
            "create_node_group",
            "c/p",
            async { Ok::<_, CloudError>(3) },
        ));
        assert_eq!(ok.unwrap(), 3);
        let err = block_on(audit.run(
            Cloud::Aws,
            "us-east-1",
            "purchase_commitment",
            "cr-1",
            async { Err::<(), _>(CloudError::Quota("no more".into())) },
        ));
        assert!(err.is_err());
        let lines = kept.0.lock().unwrap().clone();
        assert_eq!(lines.len(), 2);
        let a = &lines[0];
        assert_eq!(
            (
                a.event.as_str(),
                a.actor.as_deref(),
                a.action.as_deref(),
                a.target.as_deref()
            ),
            (
                "audit",
                Some("someone@gcp"),
                Some("create_node_group"),
                Some("c/p")
            )
        );
        assert_eq!(
            (a.result.as_deref(), a.monthly_delta_usd),
            (Some("ok"), Some(1200.5))
        );
        assert_eq!(a.resource.as_deref(), Some("gpu_node_pool.train"));
        assert_eq!(lines[1].result.as_deref(), Some("quota"));
        assert!(lines[1].detail.as_deref().unwrap().contains("no more"));
        assert_eq!(audit.take_failures(), ["collector down"]);
        assert!(audit.take_failures().is_empty());
    }

    #[test]
    fn without_a_sink_nothing_is_asked_or_sent() {
        let audit = Audit::off();
        assert!(!audit.is_on());
        let r = block_on(audit.run(Cloud::Aws, "r", "delete_instance", "i-1", async {
            Ok::<_, CloudError>(())
        }));
        assert!(r.is_ok() && audit.take_failures().is_empty());
    }
}
