//! The watcher's Prometheus metrics, counted from the same events it writes as JSON lines,
//! and encoded in the Prometheus text exposition format (version 0.0.4) by
//! `prometheus-client`, the Prometheus project's own Rust client (its encoder escapes
//! label values and writes `# HELP`/`# TYPE` and the histogram's `_bucket`/`_sum`/`_count`
//! as scrapers expect; no reason to hand-write that).
//!
//! | metric | labels | meaning |
//! | --- | --- | --- |
//! | `gpu_watch_reclaims_total` | cloud, region, gpu | reclaims seen |
//! | `gpu_watch_start_attempts_total` | cloud, region, gpu, result (`accepted`/`failed`) | starts asked |
//! | `gpu_watch_recoveries_total` | cloud, region, gpu | VMs running again after a reclaim |
//! | `gpu_watch_gave_up_total` | cloud, region, gpu | VMs the watcher stopped trying to start |
//! | `gpu_watch_time_to_running_seconds` | cloud, region, gpu | histogram: reclaim to running |
//! | `gpu_watch_stopped_vms` | cloud | VMs stopped by a reclaim the watcher is bringing back |
//! | `gpu_watch_leader` | | 1 while this replica leads (always 1 without election) |
//! | `gpu_watch_last_pass_timestamp_seconds` | | unix time the last pass ended |

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use gpu_core::reclaim::{Event, EventKind};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The `Content-Type` of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

type Labels = Vec<(String, String)>;

/// Buckets of the time to running, seconds: 1 minute to 6 hours (the default give-up).
const TO_RUNNING_BUCKETS: [f64; 8] = [60.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 21600.0];

fn to_running_histogram() -> Histogram {
    Histogram::new(TO_RUNNING_BUCKETS)
}

/// Every metric of one watcher.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reclaims: Family<Labels, Counter>,
    start_attempts: Family<Labels, Counter>,
    recoveries: Family<Labels, Counter>,
    gave_up: Family<Labels, Counter>,
    to_running: Family<Labels, Histogram, fn() -> Histogram>,
    stopped: Family<Labels, Gauge>,
    leader: Gauge,
    last_pass: Gauge<f64, AtomicU64>,
    /// Reclaims not yet ended, by (cloud, instance): since when (unix seconds).
    open: Mutex<BTreeMap<(String, String), i64>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// The metrics, all at zero (`gpu_watch_leader` 0 until told).
    pub fn new() -> Metrics {
        let m = Metrics {
            registry: Registry::default(),
            reclaims: Family::default(),
            start_attempts: Family::default(),
            recoveries: Family::default(),
            gave_up: Family::default(),
            to_running: Family::new_with_constructor(to_running_histogram),
            stopped: Family::default(),
            leader: Gauge::default(),
            last_pass: Gauge::default(),
            open: Mutex::new(BTreeMap::new()),
        };
        let mut r = Registry::default();
        r.register(
            "gpu_watch_reclaims",
            "VMs found stopped by a reclaim",
            m.reclaims.clone(),
        );
        r.register(
            "gpu_watch_start_attempts",
            "Starts asked of the cloud, by result (accepted or failed)",
            m.start_attempts.clone(),
        );
        r.register(
            "gpu_watch_recoveries",
            "VMs running again after a reclaim",
            m.recoveries.clone(),
        );
        r.register(
            "gpu_watch_gave_up",
            "VMs the watcher stopped trying to start",
            m.gave_up.clone(),
        );
        r.register(
            "gpu_watch_time_to_running_seconds",
            "Seconds from a reclaim to the VM running again",
            m.to_running.clone(),
        );
        r.register(
            "gpu_watch_stopped_vms",
            "VMs stopped by a reclaim that the watcher is bringing back",
            m.stopped.clone(),
        );
        r.register(
            "gpu_watch_leader",
            "1 while this replica is the leader (always 1 without leader election)",
            m.leader.clone(),
        );
        r.register(
            "gpu_watch_last_pass_timestamp_seconds",
            "Unix time the last pass ended",
            m.last_pass.clone(),
        );
        Metrics { registry: r, ..m }
    }

    /// Counts `e`.
    pub fn observe(&self, e: &Event) {
        let gpu = e.gpu.clone().unwrap_or_else(|| "-".into());
        let region = if e.region.is_empty() {
            "-".to_string()
        } else {
            e.region.clone()
        };
        let labels = vec![
            ("cloud".to_string(), e.cloud.clone()),
            ("region".to_string(), region),
            ("gpu".to_string(), gpu),
        ];
        let vm = (e.cloud.clone(), e.instance.clone());
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        match e.event {
            EventKind::Reclaimed => {
                self.reclaims.get_or_create(&labels).inc();
                open.insert(vm, e.unix);
            }
            EventKind::StartAttempt => {
                let result = if e.detail.as_deref() == Some("accepted") {
                    "accepted"
                } else {
                    "failed"
                };
                let mut l = labels.clone();
                l.push(("result".into(), result.into()));
                self.start_attempts.get_or_create(&l).inc();
            }
            EventKind::Started => {
                if let Some(since) = open.remove(&vm) {
                    self.recoveries.get_or_create(&labels).inc();
                    self.to_running
                        .get_or_create(&labels)
                        .observe((e.unix - since).max(0) as f64);
                }
            }
            EventKind::GaveUp => {
                open.remove(&vm);
                self.gave_up.get_or_create(&labels).inc();
            }
            EventKind::LeftStopped => {}
        }
    }

    /// Sets the VMs of `cloud` the watcher is bringing back.
    pub fn set_stopped(&self, cloud: &str, n: usize) {
        self.stopped
            .get_or_create(&vec![("cloud".to_string(), cloud.to_string())])
            .set(n as i64);
    }

    /// Sets whether this replica leads.
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }

    /// Records the end of a pass at `unix` seconds.
    pub fn pass_done(&self, unix: f64) {
        self.last_pass.set(unix);
    }

    /// The text a scrape answers.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, minute: i64, vm: &str) -> Event {
        Event::new(kind, 1_764_900_000 + minute * 60, "gcp", vm)
            .region("us-central1")
            .gpu("A100-40GB")
    }

    fn line<'a>(text: &'a str, start: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(start)).collect()
    }

    #[test]
    fn events_become_counters_a_histogram_and_gauges_in_the_text_format() {
        let m = Metrics::new();
        m.set_leader(true);
        m.set_stopped("gcp", 1);
        m.pass_done(1_764_900_600.5);
        for e in [
            ev(EventKind::Reclaimed, 0, "vm-1"),
            ev(EventKind::StartAttempt, 1, "vm-1")
                .attempt(1)
                .detail("insufficient capacity: ZONE_RESOURCE_POOL_EXHAUSTED"),
            ev(EventKind::StartAttempt, 2, "vm-1")
                .attempt(2)
                .detail("accepted"),
            ev(EventKind::Started, 5, "vm-1"),
            ev(EventKind::Reclaimed, 0, "vm-2"),
            ev(EventKind::GaveUp, 360, "vm-2"),
            ev(EventKind::LeftStopped, 3, "vm-3"),
        ] {
            m.observe(&e);
        }
        let text = m.encode();
        let l = r#"{cloud="gcp",region="us-central1",gpu="A100-40GB"}"#;
        assert!(
            text.contains("# TYPE gpu_watch_reclaims_total counter\n"),
            "{text}"
        );
        assert_eq!(
            line(&text, "gpu_watch_reclaims_total{"),
            [format!("gpu_watch_reclaims_total{l} 2")]
        );
        let mut attempts = line(&text, "gpu_watch_start_attempts_total{");
        attempts.sort();
        assert_eq!(
            attempts,
            [
                r#"gpu_watch_start_attempts_total{cloud="gcp",region="us-central1",gpu="A100-40GB",result="accepted"} 1"#,
                r#"gpu_watch_start_attempts_total{cloud="gcp",region="us-central1",gpu="A100-40GB",result="failed"} 1"#,
            ]
        );
        assert_eq!(
            line(&text, "gpu_watch_recoveries_total{"),
            [format!("gpu_watch_recoveries_total{l} 1")]
        );
        assert_eq!(
            line(&text, "gpu_watch_gave_up_total{"),
            [format!("gpu_watch_gave_up_total{l} 1")]
        );
        assert!(
            text.contains(&format!("gpu_watch_time_to_running_seconds_sum{l} 300.0")),
            "{text}"
        );
        assert!(
            text.contains(&format!("gpu_watch_time_to_running_seconds_count{l} 1")),
            "{text}"
        );
        assert!(
            text.contains(r#"gpu_watch_time_to_running_seconds_bucket{cloud="gcp",region="us-central1",gpu="A100-40GB",le="300"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"gpu_watch_time_to_running_seconds_bucket{cloud="gcp",region="us-central1",gpu="A100-40GB",le="60"} 0"#
            ),
            "{text}"
        );
        assert!(
            text.contains("gpu_watch_stopped_vms{cloud=\"gcp\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("\ngpu_watch_leader 1\n"), "{text}");
        assert!(
            text.contains("\ngpu_watch_last_pass_timestamp_seconds 1764900600.5\n"),
            "{text}"
        );
        assert!(
            !text.contains("# EOF"),
            "0.0.4 text, not OpenMetrics: {text}"
        );
        assert_eq!(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
    }
}
