//! `commitment-size`: the `gpu_commitment_sizing` answer for a demand history in a CSV
//! file, as a table, and its cost curve as an SVG chart.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use gpu_core::commitment::{self, Commitment, Sizing, SizingInput};

/// The flags of `commitment-size`.
#[derive(Debug, clap::Args)]
pub struct CommitmentArgs {
    /// The demand history: CSV, one hour per line, GPUs in the last column.
    #[arg(long)]
    demand_csv: PathBuf,
    /// Price of one committed GPU-hour (USD).
    #[arg(long)]
    commit: f64,
    /// Price of one GPU-hour above the commitment (USD).
    #[arg(long)]
    burst: f64,
    /// On-demand price per GPU-hour, for the all-on-demand comparison.
    #[arg(long)]
    on_demand: Option<f64>,
    /// Spot price per GPU-hour, for the all-spot comparison.
    #[arg(long)]
    spot: Option<f64>,
    /// The floor: this percentile of hourly demand (0 = the minimum).
    #[arg(long, default_value_t = 0.0)]
    floor_percentile: f64,
    /// Write the cost curve (total cost by GPUs committed) as an SVG chart here.
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// Runs the command.
pub fn run(a: &CommitmentArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&a.demand_csv) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("--demand-csv {}: {e}", a.demand_csv.display());
            return ExitCode::FAILURE;
        }
    };
    let hourly_gpus = match commitment::parse_csv(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("--demand-csv {}: {e}", a.demand_csv.display());
            return ExitCode::FAILURE;
        }
    };
    let input = SizingInput {
        hourly_gpus,
        commit_usd_per_gpu_hour: a.commit,
        burst_usd_per_gpu_hour: a.burst,
        floor_percentile: a.floor_percentile,
        on_demand_usd_per_gpu_hour: a.on_demand,
        spot_usd_per_gpu_hour: a.spot,
    };
    let s = match commitment::size(&input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("commitment-size: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", table(&s));
    if let Some(path) = &a.svg {
        if let Err(e) = std::fs::write(path, svg(&s)) {
            eprintln!("--svg {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("cost curve written to {}", path.display());
    }
    ExitCode::SUCCESS
}

fn usd(x: f64) -> String {
    gpu_core::cost::format_usd(x)
}

fn opt_usd(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), usd)
}

/// The answer as a table: floor and optimum side by side.
pub fn table(s: &Sizing) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} hours, {:.1} GPU-hours of demand; a committed GPU pays at {:.0}% utilisation or more",
        s.hours,
        s.demand_gpu_hours,
        s.break_even_utilization * 100.0
    );
    let row = |out: &mut String, name: &str, c: &Commitment| {
        let _ = writeln!(
            out,
            "{name:<8} {:>6} {:>16} {:>16} {:>16} {:>7} {:>18} {:>18}",
            c.gpus,
            usd(c.commit_usd),
            usd(c.burst_usd),
            usd(c.total_usd),
            c.utilization
                .map_or_else(|| "-".into(), |u| format!("{:.0}%", u * 100.0)),
            opt_usd(c.savings_vs_on_demand_usd),
            opt_usd(c.savings_vs_spot_usd),
        );
    };
    let _ = writeln!(
        out,
        "{:<8} {:>6} {:>16} {:>16} {:>16} {:>7} {:>18} {:>18}",
        "", "GPUs", "committed", "burst", "total", "used", "saves vs on-demand", "saves vs spot"
    );
    row(&mut out, "floor", &s.floor);
    row(&mut out, "optimal", &s.optimal);
    let _ = writeln!(
        out,
        "all on demand: {}; all spot: {}",
        opt_usd(s.all_on_demand_usd),
        opt_usd(s.all_spot_usd)
    );
    out
}

/// The cost curve as an SVG line chart, floor and optimum marked.
pub fn svg(s: &Sizing) -> String {
    let (w, h, pad) = (640.0, 360.0, 56.0);
    let max_n = s.curve.last().map_or(1, |p| p.0).max(1) as f64;
    let max_usd = s.curve.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0);
    let x = |n: u32| pad + f64::from(n) / max_n * (w - 2.0 * pad);
    let y = |usd: f64| h - pad - usd / max_usd * (h - 2.0 * pad);
    let points: Vec<String> = s
        .curve
        .iter()
        .map(|(n, usd)| format!("{:.1},{:.1}", x(*n), y(*usd)))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<line x1="{pad}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{pad}" y1="{pad}" x2="{pad}" y2="{}" stroke="black"/>"#,
        h - pad,
        w - pad,
        h - pad,
        h - pad
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">GPUs committed (0 to {})</text>"#,
        w / 2.0,
        h - 16.0,
        max_n
    );
    let _ = writeln!(
        out,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">total cost over the history (max {})</text>"#,
        h / 2.0,
        h / 2.0,
        usd(max_usd)
    );
    let _ = writeln!(
        out,
        r#"<polyline fill="none" stroke="steelblue" stroke-width="2" points="{}"/>"#,
        points.join(" ")
    );
    for (label, c, colour) in [
        ("floor", &s.floor, "darkorange"),
        ("optimal", &s.optimal, "seagreen"),
    ] {
        let _ = writeln!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="5" fill="{colour}"/><text x="{:.1}" y="{:.1}" fill="{colour}">{label}: {} GPUs, {}</text>"#,
            x(c.gpus),
            y(c.total_usd),
            x(c.gpus) + 8.0,
            y(c.total_usd) - 8.0,
            c.gpus,
            usd(c.total_usd)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_chart_show_floor_and_optimum() {
        let mut hourly = vec![4.0; 75];
        hourly.extend([10.0; 25]);
        let s = commitment::size(&SizingInput {
            hourly_gpus: hourly,
            commit_usd_per_gpu_hour: 1.0,
            burst_usd_per_gpu_hour: 2.0,
            floor_percentile: 0.0,
            on_demand_usd_per_gpu_hour: Some(2.0),
            spot_usd_per_gpu_hour: None,
        })
        .unwrap();
        let t = table(&s);
        assert!(t.contains("pays at 50% utilisation"), "{t}");
        assert!(
            t.lines()
                .any(|l| l.starts_with("optimal") && l.contains("$700.00")),
            "{t}"
        );
        assert!(t.contains("all on demand: $1,100.00; all spot: -"), "{t}");
        let chart = svg(&s);
        assert_eq!(chart.matches("<polyline").count(), 1);
        assert_eq!(
            chart
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .split(' ')
                .count(),
            11
        );
        assert!(chart.contains("optimal: 4 GPUs, $700.00"), "{chart}");
    }
}
