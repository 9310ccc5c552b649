//! The summary of a watcher's events, by cloud and GPU: reclaims seen, minutes the VMs
//! stayed stopped, and the time from a reclaim to running again.

use std::collections::BTreeMap;

use super::events::{Event, EventKind};

/// One line of the summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryRow {
    /// Reclaims seen.
    pub reclaims: u32,
    /// Of those, VMs running again.
    pub recovered: u32,
    /// Of those, VMs the watcher gave up on.
    pub gave_up: u32,
    /// Start attempts made.
    pub start_attempts: u32,
    /// Minutes stopped, summed over the reclaims that ended (running again or given up).
    pub minutes_stopped: f64,
    /// Minutes from reclaim to running, of each recovered reclaim.
    pub minutes_to_running: Vec<f64>,
}

impl SummaryRow {
    /// The median of `minutes_to_running`, if any VM came back.
    pub fn median_minutes_to_running(&self) -> Option<f64> {
        let mut v = self.minutes_to_running.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        Some(if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        })
    }
}

/// The summary, keyed by (cloud, GPU model or `-`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Rows by (cloud, GPU).
    pub rows: BTreeMap<(String, String), SummaryRow>,
}

impl Summary {
    /// Sums `events` (in time order per VM): a reclaim opens a stop, `started` or
    /// `gave_up` closes it.
    pub fn of(events: &[Event]) -> Summary {
        let mut rows: BTreeMap<(String, String), SummaryRow> = BTreeMap::new();
        let mut open: BTreeMap<(String, String), i64> = BTreeMap::new();
        let mut gpu_of: BTreeMap<(String, String), String> = BTreeMap::new();
        for e in events {
            let vm = (e.cloud.clone(), e.instance.clone());
            if let Some(g) = &e.gpu {
                gpu_of.insert(vm.clone(), g.clone());
            }
            let gpu = gpu_of.get(&vm).cloned().unwrap_or_else(|| "-".into());
            let row = rows.entry((e.cloud.clone(), gpu)).or_default();
            let minutes = |since: i64| (e.unix - since).max(0) as f64 / 60.0;
            match e.event {
                EventKind::Reclaimed => {
                    row.reclaims += 1;
                    open.insert(vm, e.unix);
                }
                EventKind::StartAttempt => row.start_attempts += 1,
                EventKind::Started => {
                    if let Some(since) = open.remove(&vm) {
                        row.recovered += 1;
                        row.minutes_stopped += minutes(since);
                        row.minutes_to_running.push(minutes(since));
                    }
                }
                EventKind::GaveUp => {
                    if let Some(since) = open.remove(&vm) {
                        row.gave_up += 1;
                        row.minutes_stopped += minutes(since);
                    }
                }
                EventKind::LeftStopped => {}
            }
        }
        Summary { rows }
    }

    /// The summary as a text table for people.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<6} {:<10} {:>8} {:>9} {:>7} {:>8} {:>15} {:>17}\n",
            "cloud",
            "gpu",
            "reclaims",
            "recovered",
            "gave up",
            "starts",
            "minutes stopped",
            "median to running"
        );
        for ((cloud, gpu), r) in &self.rows {
            let median = r
                .median_minutes_to_running()
                .map_or_else(|| "-".to_string(), |m| format!("{m:.1} min"));
            out.push_str(&format!(
                "{cloud:<6} {gpu:<10} {:>8} {:>9} {:>7} {:>8} {:>15.1} {median:>17}\n",
                r.reclaims, r.recovered, r.gave_up, r.start_attempts, r.minutes_stopped
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, minute: i64, cloud: &str, vm: &str) -> Event {
        Event::new(kind, 1_764_900_000 + minute * 60, cloud, vm)
    }

    #[test]
    fn stops_are_timed_from_reclaim_to_running_or_giving_up() {
        use EventKind::*;
        let events = vec![
            ev(Reclaimed, 0, "aws", "i-1").gpu("H100"),
            ev(StartAttempt, 1, "aws", "i-1").attempt(1),
            ev(StartAttempt, 5, "aws", "i-1").attempt(2),
            ev(Started, 12, "aws", "i-1"),
            ev(Reclaimed, 20, "aws", "i-1"),
            ev(Started, 24, "aws", "i-1"),
            ev(Reclaimed, 0, "gcp", "vm-a").gpu("L4"),
            ev(GaveUp, 360, "gcp", "vm-a"),
            ev(LeftStopped, 3, "gcp", "vm-b").gpu("L4"),
            // A start with no reclaim open (a person's VM started by a person) counts nothing.
            ev(Started, 30, "gcp", "vm-b"),
        ];
        let s = Summary::of(&events);
        let aws = &s.rows[&("aws".to_string(), "H100".to_string())];
        assert_eq!(
            (aws.reclaims, aws.recovered, aws.gave_up, aws.start_attempts),
            (2, 2, 0, 2)
        );
        assert!((aws.minutes_stopped - 16.0).abs() < 1e-9);
        assert_eq!(aws.median_minutes_to_running(), Some(8.0));
        let gcp = &s.rows[&("gcp".to_string(), "L4".to_string())];
        assert_eq!((gcp.reclaims, gcp.recovered, gcp.gave_up), (1, 0, 1));
        assert!((gcp.minutes_stopped - 360.0).abs() < 1e-9);
        assert_eq!(gcp.median_minutes_to_running(), None);
        let table = s.table();
        assert!(table.lines().count() == 3, "{table}");
        assert!(
            table.contains("8.0 min") && table.contains("360.0"),
            "{table}"
        );
    }
}
