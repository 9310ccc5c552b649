//! Our own record as availability: of the recent answers to requests for GPUs at a place
//! (the events file: each request ended `ready` or with a capacity answer), the share
//! that were `ready`. The clouds' own signals are read in their drivers; both become an
//! [`Availability`] ([`crate::availability`]).

use std::collections::BTreeMap;

pub use crate::availability::Availability;

use super::EventLine;

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
            e.cloud.to_ascii_lowercase(),
            e.region.to_ascii_lowercase(),
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
