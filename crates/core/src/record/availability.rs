//! Availability: how likely a place is to give the asked GPUs now, as a score from 0 to 1
//! with where it came from and when. Three sources feed it: the clouds' own signals (AWS
//! `GetSpotPlacementScores`, 1 to 10 per region or zone; Azure's spot placement score,
//! `High`, `Medium` or `Low` per location and size) and our own record of recent answers
//! (the events file: each request for GPUs ended `ready` or with a capacity answer).
//!
//! This is the scoring the offers' ranking is to use (issue 28, item 3); the data
//! sources do not read it yet.

use std::collections::BTreeMap;

use serde::Serialize;

use super::EventLine;

/// A score and what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Availability {
    /// From 0 (no capacity expected) to 1 (capacity expected).
    pub score: f64,
    /// Where it came from, in words (`record: 3 of 4 answers ready in 7 days`).
    pub source: String,
    /// The date (UTC, `YYYY-MM-DD`) of the newest answer it rests on.
    pub as_of: String,
}

/// AWS's spot placement score (1 to 10, "10 means that your Spot request is highly
/// likely to succeed") as a score from 0 to 1: `score / 10`; `None` outside 1..=10.
pub fn aws_placement_score(score: i32) -> Option<f64> {
    (1..=10).contains(&score).then(|| f64::from(score) / 10.0)
}

/// Azure's spot placement score (`High`, `Medium` or `Low`, any letter case, with its
/// `isQuotaAvailable`) as a score from 0 to 1: `High` 0.9, `Medium` 0.5, `Low` 0.1, and
/// 0 when the quota is not available; `None` for any other word (Azure has no score to
/// give).
pub fn azure_placement_score(word: &str, quota_available: Option<bool>) -> Option<f64> {
    if quota_available == Some(false) {
        return Some(0.0);
    }
    match word.to_ascii_lowercase().as_str() {
        "high" => Some(0.9),
        "medium" => Some(0.5),
        "low" => Some(0.1),
        _ => None,
    }
}

/// Where a record's answers are kept apart: cloud, region, and GPU model.
pub type RecordKey = (String, String, String);

/// Our own record as availability per (cloud, region, GPU): of the answers in the last
/// `days` days before `now` (Unix seconds), the share that were `ready` (a `capacity`
/// line, whatever its outcome, `timeout` included, counts against). Places with no
/// answer in the window have no score.
pub fn from_record(events: &[EventLine], now: i64, days: u32) -> BTreeMap<RecordKey, Availability> {
    let since = now - i64::from(days) * 86_400;
    let mut tally: BTreeMap<RecordKey, (u32, u32, String)> = BTreeMap::new();
    for e in events {
        let ready = match e.event.as_str() {
            "ready" => true,
            "capacity" => false,
            _ => continue,
        };
        let Some(at) = crate::time::parse_rfc3339(&e.at) else {
            continue;
        };
        if at < since || at > now {
            continue;
        }
        let key = (
            e.cloud.clone(),
            e.region.clone(),
            e.gpu.clone().unwrap_or_else(|| "-".into()),
        );
        let t = tally.entry(key).or_insert((0, 0, String::new()));
        if ready {
            t.0 += 1;
        }
        t.1 += 1;
        let date = e.at.get(..10).unwrap_or_default().to_string();
        if date > t.2 {
            t.2 = date;
        }
    }
    tally
        .into_iter()
        .map(|(k, (ready, all, as_of))| {
            let a = Availability {
                score: f64::from(ready) / f64::from(all),
                source: format!("record: {ready} of {all} answers ready in {days} days"),
                as_of,
            };
            (k, a)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(at: &str, event: &str, region: &str) -> EventLine {
        EventLine {
            at: at.into(),
            event: event.into(),
            cloud: "gcp".into(),
            region: region.into(),
            gpu: Some("H100".into()),
            ..EventLine::default()
        }
    }

    #[test]
    fn the_clouds_scores_map_onto_zero_to_one() {
        assert_eq!(aws_placement_score(10), Some(1.0));
        assert_eq!(aws_placement_score(3), Some(0.3));
        assert_eq!(aws_placement_score(0), None);
        assert_eq!(aws_placement_score(11), None);
        assert_eq!(azure_placement_score("High", Some(true)), Some(0.9));
        assert_eq!(azure_placement_score("LOW", None), Some(0.1));
        assert_eq!(azure_placement_score("High", Some(false)), Some(0.0));
        assert_eq!(azure_placement_score("unknown", None), None);
    }

    #[test]
    fn the_record_scores_each_place_by_its_recent_answers() {
        let now = crate::time::parse_rfc3339("2026-12-06T12:00:00Z").unwrap();
        let events = vec![
            line("2026-12-06T10:00:00Z", "request", "us-central1"),
            line("2026-12-06T10:00:01Z", "capacity", "us-central1"),
            line("2026-12-06T10:05:00Z", "ready", "us-central1"),
            line("2026-12-05T09:00:00Z", "capacity", "us-central1"),
            line("2026-12-04T09:00:00Z", "ready", "europe-west4"),
            // Older than the window, and later than now: not counted.
            line("2026-11-01T09:00:00Z", "capacity", "europe-west4"),
            line("2026-12-07T09:00:00Z", "capacity", "europe-west4"),
        ];
        let scores = from_record(&events, now, 7);
        let key = |r: &str| ("gcp".to_string(), r.to_string(), "H100".to_string());
        let central = &scores[&key("us-central1")];
        assert!((central.score - 1.0 / 3.0).abs() < 1e-9, "{central:?}");
        assert_eq!(central.source, "record: 1 of 3 answers ready in 7 days");
        assert_eq!(central.as_of, "2026-12-06");
        let west = &scores[&key("europe-west4")];
        assert_eq!(west.score, 1.0);
        assert_eq!(west.as_of, "2026-12-04");
        assert_eq!(scores.len(), 2);
        assert!(from_record(&events, now - 30 * 86_400, 1).is_empty());
    }
}
