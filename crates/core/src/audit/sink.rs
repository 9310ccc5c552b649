//! Where audit events go: an [`AuditSink`] takes each line; [`JsonLinesSink`] appends it
//! to the events file (the provider's `events_file`), one JSON object per line.

use crate::record::{EventLine, EventLog};

/// A destination of audit events. `send` must not block for long: a remote sink queues.
pub trait AuditSink: Send + Sync + std::fmt::Debug {
    /// Takes `line`; an error says why it was not kept (the caller warns, the call goes on).
    fn send(&self, line: &EventLine) -> Result<(), String>;

    /// Delivers what was queued (a remote sink), saying why not; default: nothing queued.
    fn flush(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Audit lines printed to standard output (the watcher's events go there without a file).
#[derive(Debug, Clone, Copy, Default)]
pub struct StdoutSink;

impl AuditSink for StdoutSink {
    fn send(&self, line: &EventLine) -> Result<(), String> {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", line.json()).map_err(|e| format!("standard output: {e}"))
    }
}

/// Audit lines appended to an events file.
#[derive(Debug, Clone)]
pub struct JsonLinesSink(pub EventLog);

impl AuditSink for JsonLinesSink {
    fn send(&self, line: &EventLine) -> Result<(), String> {
        self.0.append(line).map_err(|e| e.to_string())
    }
}
