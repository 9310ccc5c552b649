//! What a watcher reports, one JSON object per line: a reclaim seen, a start attempt,
//! a VM running again, giving up, and a VM left alone because a person stopped it.

use serde::Serialize;

/// The kind of an [`Event`], its `event` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A VM of ours found stopped by a reclaim.
    Reclaimed,
    /// A start was asked of the cloud.
    StartAttempt,
    /// The VM runs again (started by the watcher, or by the cloud itself).
    Started,
    /// The watcher stopped trying; the VM stays stopped, with its disks.
    GaveUp,
    /// A VM of ours stopped by a person (or for another reason): not started.
    LeftStopped,
}

/// One event of one VM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// When, unix seconds.
    #[serde(skip)]
    pub unix: i64,
    /// When, RFC 3339 (UTC).
    pub at: String,
    /// What happened.
    pub event: EventKind,
    /// `aws`, `azure` or `gcp`.
    pub cloud: String,
    /// The VM's region (as in the provider's event lines, so one report reads both).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// The VM's id in its cloud.
    pub instance: String,
    /// Its GPU model, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// The attempt number of a start attempt (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The cloud's words, or why the watcher gave up or left the VM alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Event {
    /// An event of `kind` for `instance` on `cloud` at `unix` seconds.
    pub fn new(kind: EventKind, unix: i64, cloud: &str, instance: &str) -> Event {
        Event {
            unix,
            at: crate::time::format_rfc3339(unix),
            event: kind,
            cloud: cloud.to_string(),
            region: String::new(),
            instance: instance.to_string(),
            gpu: None,
            attempt: None,
            detail: None,
        }
    }

    /// This event with its VM's region.
    pub fn region(mut self, region: &str) -> Event {
        self.region = region.to_string();
        self
    }

    /// This event with its GPU model.
    pub fn gpu(mut self, gpu: &str) -> Event {
        self.gpu = Some(gpu.to_string());
        self
    }

    /// This event with its attempt number.
    pub fn attempt(mut self, n: u32) -> Event {
        self.attempt = Some(n);
        self
    }

    /// This event with a detail.
    pub fn detail(mut self, text: impl Into<String>) -> Event {
        self.detail = Some(text.into());
        self
    }

    /// The event as one line of JSON (no newline).
    pub fn json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_line_of_json_with_only_what_it_has() {
        let e = Event::new(EventKind::StartAttempt, 1_764_900_000, "aws", "i-0abc")
            .gpu("H100")
            .attempt(2)
            .detail("InsufficientInstanceCapacity");
        let line = e.json_line();
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["event"], "start_attempt");
        assert_eq!(v["at"], "2025-12-05T02:00:00Z");
        assert_eq!(v["attempt"], 2);
        assert_eq!(v["gpu"], "H100");
        let bare = Event::new(EventKind::Reclaimed, 0, "gcp", "vm-1").json_line();
        let v: serde_json::Value = serde_json::from_str(&bare).unwrap();
        assert!(v.get("attempt").is_none() && v.get("detail").is_none() && v.get("unix").is_none());
    }
}
