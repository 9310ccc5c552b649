//! `terraform-provider-gpu report`: what the events files say. `time-to-gpu` gives the
//! seconds from a GPU request to GPUs ready (count, p50, p90, max) by cloud, region and
//! GPU; `capacity` the clouds' capacity answers by day, place and outcome; `spend`
//! (`spend_cli`) the money of what runs now, from the inventory.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use gpu_core::record::EventLine;
use gpu_core::record::report;

/// The reports.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Seconds from a GPU request to GPUs ready, by cloud, region and GPU.
    TimeToGpu(ReportArgs),
    /// The clouds' capacity answers (stockout, quota, not offered) by day and place.
    Capacity(ReportArgs),
    /// Monthly GPU spend of what the clouds run now (the inventory), by team, project,
    /// cloud or any label; a table, JSON, or an SVG bar chart.
    Spend(Box<crate::spend_cli::SpendArgs>),
}

/// Where the events are and how to print the report.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Events files (the provider's `events_file` / `GPU_TF_EVENTS_FILE`, the watcher's).
    #[arg(long = "events", required = true, num_args = 1..)]
    pub events: Vec<PathBuf>,
    /// `table` (default) or `json`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// How a report prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns with a header.
    Table,
    /// One JSON array of rows.
    Json,
}

/// Runs `report <command>`.
pub fn run(command: &ReportCommand) -> ExitCode {
    let args = match command {
        ReportCommand::TimeToGpu(a) | ReportCommand::Capacity(a) => a,
        ReportCommand::Spend(a) => return crate::spend_cli::run(a),
    };
    let events = match read(&args.events) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("terraform-provider-gpu report: {e}");
            return ExitCode::FAILURE;
        }
    };
    out!("{}", render(command, &events, args.format));
    ExitCode::SUCCESS
}

/// Every event of `files`, in order.
fn read(files: &[PathBuf]) -> Result<Vec<EventLine>, String> {
    let mut out = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{name}: {e}"))?;
        out.extend(report::parse(&name, &text).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// The report `command` over `events`.
fn render(command: &ReportCommand, events: &[EventLine], format: Format) -> String {
    match (command, format) {
        (ReportCommand::TimeToGpu(_), Format::Json) => json(&report::time_to_gpu(events)),
        (ReportCommand::Capacity(_), Format::Json) => json(&report::capacity(events)),
        (ReportCommand::TimeToGpu(_), Format::Table) => {
            let rows = report::time_to_gpu(events);
            if rows.is_empty() {
                return "no `ready` events with seconds in these files\n".into();
            }
            report::table(
                &["CLOUD", "REGION", "GPU", "COUNT", "P50_S", "P90_S", "MAX_S"],
                &report::time_cells(&rows),
            )
        }
        (ReportCommand::Capacity(_), Format::Table) => {
            let rows = report::capacity(events);
            if rows.is_empty() {
                return "no `capacity` events in these files\n".into();
            }
            report::table(
                &["DAY", "CLOUD", "REGION", "ZONE", "OUTCOME", "COUNT"],
                &report::capacity_cells(&rows),
            )
        }
        (ReportCommand::Spend(_), _) => unreachable!("`spend` reads the clouds, not events"),
    }
}

fn json<T: serde::Serialize>(rows: &T) -> String {
    let mut s = serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: &str, seconds: Option<f64>, outcome: Option<&str>) -> EventLine {
        EventLine {
            at: "2026-12-06T10:00:00Z".into(),
            event: event.into(),
            cloud: "gcp".into(),
            region: "us-central1".into(),
            gpu: Some("L4".into()),
            seconds,
            outcome: outcome.map(str::to_string),
            ..EventLine::default()
        }
    }

    fn args() -> ReportArgs {
        ReportArgs {
            events: Vec::new(),
            format: Format::Table,
        }
    }

    #[test]
    fn time_to_gpu_prints_a_table_and_json() {
        let events = [line("ready", Some(42.0), None), line("request", None, None)];
        let t = render(&ReportCommand::TimeToGpu(args()), &events, Format::Table);
        assert!(
            t.starts_with("CLOUD  REGION       GPU  COUNT  P50_S  P90_S  MAX_S\n"),
            "{t}"
        );
        assert!(
            t.contains("gcp    us-central1  L4   1      42.0   42.0   42.0"),
            "{t}"
        );
        let j = render(&ReportCommand::TimeToGpu(args()), &events, Format::Json);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v[0]["p90"], 42.0);
        assert_eq!(v[1]["cloud"], "all");
    }

    #[test]
    fn capacity_counts_and_empty_reports_say_so() {
        let events = [line("capacity", Some(3.0), Some("stockout"))];
        let t = render(&ReportCommand::Capacity(args()), &events, Format::Table);
        assert!(
            t.contains("2026-12-06  gcp    us-central1  -     stockout  1"),
            "{t}"
        );
        let none = render(&ReportCommand::TimeToGpu(args()), &events, Format::Table);
        assert_eq!(none, "no `ready` events with seconds in these files\n");
    }
}
