//! Reports over the record: the time from a GPU request to GPUs ready, by cloud, region and
//! GPU (count, p50, p90, max), and the capacity answers by day and place.

use std::collections::BTreeMap;

use serde::Serialize;

use super::EventLine;

/// A line of an events file that is not an event.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}:{line}: not an event line: {why}")]
pub struct BadLine {
    /// The file.
    pub file: String,
    /// Its line number (1-based).
    pub line: usize,
    /// What the JSON reader said.
    pub why: String,
}

/// The events of `text` (the content of events file `file`); blank lines are skipped.
pub fn parse(file: &str, text: &str) -> Result<Vec<EventLine>, BadLine> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| BadLine {
                file: file.to_string(),
                line: i + 1,
                why: e.to_string(),
            })
        })
        .collect()
}

/// Time to GPU at one place for one GPU: how many readies, and their spread in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeRow {
    /// `aws`, `azure`, `gcp`, or `all` for the total row.
    pub cloud: String,
    /// The region, or `all`.
    pub region: String,
    /// The GPU model, or `all` (`-` when a line did not say).
    pub gpu: String,
    /// How many `ready` events.
    pub count: usize,
    /// Median seconds (nearest rank).
    pub p50: f64,
    /// 90th percentile seconds (nearest rank).
    pub p90: f64,
    /// The longest.
    pub max: f64,
}

/// The time-to-GPU rows of `events`: one per (cloud, region, GPU) with `ready` events
/// that carry seconds, sorted, then an `all` row; none when there is no such event.
pub fn time_to_gpu(events: &[EventLine]) -> Vec<TimeRow> {
    let mut groups: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    let mut all = Vec::new();
    for e in events.iter().filter(|e| e.event == "ready") {
        let Some(s) = e.seconds.filter(|s| s.is_finite() && *s >= 0.0) else {
            continue;
        };
        let gpu = e.gpu.clone().unwrap_or_else(|| "-".into());
        groups
            .entry((e.cloud.clone(), e.region.clone(), gpu))
            .or_default()
            .push(s);
        all.push(s);
    }
    let mut rows: Vec<TimeRow> = groups
        .into_iter()
        .map(|((cloud, region, gpu), v)| row(cloud, region, gpu, v))
        .collect();
    if !all.is_empty() {
        rows.push(row("all".into(), "all".into(), "all".into(), all));
    }
    rows
}

fn row(cloud: String, region: String, gpu: String, mut v: Vec<f64>) -> TimeRow {
    v.sort_by(f64::total_cmp);
    TimeRow {
        cloud,
        region,
        gpu,
        count: v.len(),
        p50: nearest_rank(&v, 0.5),
        p90: nearest_rank(&v, 0.9),
        max: v.last().copied().unwrap_or(0.0),
    }
}

/// The `q` quantile of sorted `v` by the nearest-rank method (the smallest value with at
/// least `q` of the values at or below it).
fn nearest_rank(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let rank = (q * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// Capacity answers at one place on one day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapacityRow {
    /// The day, `YYYY-MM-DD` (UTC).
    pub day: String,
    /// The cloud.
    pub cloud: String,
    /// The region.
    pub region: String,
    /// The zone, or `-`.
    pub zone: String,
    /// `stockout`, `quota` or `not_offered`.
    pub outcome: String,
    /// How many answers.
    pub count: usize,
}

/// The `capacity` events of `events` counted by day, place and outcome, sorted.
pub fn capacity(events: &[EventLine]) -> Vec<CapacityRow> {
    let mut counts: BTreeMap<(String, String, String, String, String), usize> = BTreeMap::new();
    for e in events.iter().filter(|e| e.event == "capacity") {
        let key = (
            e.at.get(..10).unwrap_or(&e.at).to_string(),
            e.cloud.clone(),
            e.region.clone(),
            e.zone.clone().unwrap_or_else(|| "-".into()),
            e.outcome.clone().unwrap_or_else(|| "-".into()),
        );
        *counts.entry(key).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|((day, cloud, region, zone, outcome), count)| CapacityRow {
            day,
            cloud,
            region,
            zone,
            outcome,
            count,
        })
        .collect()
}

/// `rows` as a text table with a header, columns padded to their widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.clone()));
        out.push('\n');
    }
    out
}

/// The time-to-GPU rows as table cells (seconds with one decimal).
pub fn time_cells(rows: &[TimeRow]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            vec![
                r.cloud.clone(),
                r.region.clone(),
                r.gpu.clone(),
                r.count.to_string(),
                format!("{:.1}", r.p50),
                format!("{:.1}", r.p90),
                format!("{:.1}", r.max),
            ]
        })
        .collect()
}

/// The capacity rows as table cells.
pub fn capacity_cells(rows: &[CapacityRow]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            vec![
                r.day.clone(),
                r.cloud.clone(),
                r.region.clone(),
                r.zone.clone(),
                r.outcome.clone(),
                r.count.to_string(),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(cloud: &str, region: &str, gpu: &str, s: f64) -> EventLine {
        EventLine {
            at: "2026-12-06T10:00:00Z".into(),
            event: "ready".into(),
            cloud: cloud.into(),
            region: region.into(),
            gpu: Some(gpu.into()),
            seconds: Some(s),
            ..EventLine::default()
        }
    }

    #[test]
    fn percentiles_by_place_and_gpu_then_all() {
        let mut events: Vec<EventLine> = (1..=10)
            .map(|i| ready("gcp", "us-central1", "L4", f64::from(i) * 10.0))
            .collect();
        events.push(ready("aws", "us-east-1", "H100", 300.0));
        events.push(EventLine {
            event: "request".into(),
            ..ready("aws", "us-east-1", "H100", 1.0)
        });
        let rows = time_to_gpu(&events);
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].cloud.as_str(), rows[0].count), ("aws", 1));
        let gcp = &rows[1];
        assert_eq!(
            (gcp.count, gcp.p50, gcp.p90, gcp.max),
            (10, 50.0, 90.0, 100.0)
        );
        let all = &rows[2];
        assert_eq!((all.cloud.as_str(), all.count, all.max), ("all", 11, 300.0));
        assert!(time_to_gpu(&[]).is_empty());
    }

    #[test]
    fn capacity_answers_by_day_place_and_outcome() {
        let cap = |at: &str, zone: Option<&str>, outcome: &str| EventLine {
            at: at.into(),
            event: "capacity".into(),
            cloud: "azure".into(),
            region: "eastus".into(),
            zone: zone.map(str::to_string),
            outcome: Some(outcome.into()),
            ..EventLine::default()
        };
        let rows = capacity(&[
            cap("2026-12-05T23:59:00Z", Some("1"), "stockout"),
            cap("2026-12-06T00:01:00Z", Some("1"), "stockout"),
            cap("2026-12-06T08:00:00Z", Some("1"), "stockout"),
            cap("2026-12-06T09:00:00Z", None, "quota"),
        ]);
        let got: Vec<(String, String, String, usize)> = rows
            .iter()
            .map(|r| (r.day.clone(), r.zone.clone(), r.outcome.clone(), r.count))
            .collect();
        assert_eq!(
            got,
            [
                ("2026-12-05".into(), "1".into(), "stockout".into(), 1),
                ("2026-12-06".into(), "-".into(), "quota".into(), 1),
                ("2026-12-06".into(), "1".into(), "stockout".into(), 2),
            ]
        );
    }

    #[test]
    fn watcher_lines_parse_and_bad_lines_name_their_place() {
        let text = concat!(
            r#"{"at":"2026-12-06T10:00:00Z","event":"started","cloud":"gcp","instance":"projects/p/zones/z/instances/a","gpu":"L4"}"#,
            "\n\n",
            r#"{"at":"2026-12-06T10:00:00Z","event":"ready","cloud":"gcp","region":"us-central1","seconds":4.5}"#,
            "\n",
        );
        let events = parse("e.jsonl", text).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].region, "");
        let e = parse("e.jsonl", "{\"at\":1}\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("e.jsonl", 1));
    }

    #[test]
    fn a_table_pads_columns() {
        let t = table(&["a", "bb"], &[vec!["xxx".into(), "y".into()]]);
        assert_eq!(t, "a    bb\nxxx  y\n");
    }
}
