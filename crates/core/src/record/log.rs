//! Appending lines to the events file: each line is written whole with one `write` to a
//! file opened for appending, so the lines of parallel pools (and of parallel processes on
//! a local disk) do not interleave.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::EventLine;

/// An events file lines are appended to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLog {
    path: PathBuf,
}

/// A line could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot append to the events file {path}: {source}")]
pub struct LogError {
    /// The file.
    pub path: String,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

impl EventLog {
    /// The log at `path` (created at the first line, its directory must exist).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        EventLog { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` and a newline.
    pub fn append(&self, line: &EventLine) -> Result<(), LogError> {
        let mut text = line.json();
        text.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|source| LogError {
                path: self.path.display().to_string(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_appended_whole_and_read_back() {
        let dir = std::env::temp_dir().join(format!("gpu-tf-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = EventLog::at(dir.join("events.jsonl"));
        let _ = std::fs::remove_file(log.path());
        let mut a = EventLine::now("request", "gcp", "us-central1");
        a.resource = Some("gpu_node_pool.train".into());
        let mut b = EventLine::now("ready", "gcp", "us-central1");
        b.seconds = Some(12.5);
        log.append(&a).unwrap();
        log.append(&b).unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<EventLine> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines, [a, b]);
        assert!(!text.contains("null"), "absent fields are left out: {text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let log = EventLog::at("/nonexistent-dir-gpu-tf/events.jsonl");
        let e = log
            .append(&EventLine::now("ready", "aws", "us-east-1"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("/nonexistent-dir-gpu-tf/events.jsonl"),
            "{e}"
        );
    }
}
