//! `commitment-size`: the `gpu_commitment_sizing` answer for a demand history in a CSV
//! file, as a table, and its cost curve as an SVG chart.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::chart::{nice_step, short_usd};
use gpu_core::commitment::{self, Commitment, Sizing, SizingInput};

/// The flags of `commitment-size`.
#[derive(Debug, clap::Args)]
pub struct CommitmentArgs {
    /// The demand history: CSV, one hour per line, GPUs in the last column.
    #[arg(long)]
    demand_csv: PathBuf,
    /// Price of one committed GPU-hour (USD). Default: the published rate vendored with
    /// the provider for --gpu in --cloud/--region at --term (Google committed use).
    #[arg(long)]
    commit: Option<f64>,
    /// Price of one GPU-hour above the commitment (USD). Default: the catalog's cheapest
    /// price of --gpu in --cloud/--region at --burst-capacity.
    #[arg(long)]
    burst: Option<f64>,
    /// On-demand price per GPU-hour, for the all-on-demand comparison (default: the
    /// catalog's, when --cloud, --region and --gpu are given).
    #[arg(long)]
    on_demand: Option<f64>,
    /// Spot price per GPU-hour, for the all-spot comparison (default: the catalog's, as
    /// --on-demand).
    #[arg(long)]
    spot: Option<f64>,
    /// Cloud of the catalog prices: aws, azure or gcp.
    #[arg(long)]
    cloud: Option<String>,
    /// Region of the catalog prices, e.g. us-central1.
    #[arg(long)]
    region: Option<String>,
    /// GPU model of the catalog prices, e.g. H100.
    #[arg(long)]
    gpu: Option<String>,
    /// Only instance types with this many GPUs count for the catalog prices.
    #[arg(long)]
    gpu_count: Option<f64>,
    /// The commitment's term when its rate is looked up: 1y or 3y.
    #[arg(long, default_value = "1y")]
    term: String,
    /// What runs above the commitment when --burst is looked up: on-demand or spot.
    #[arg(long, default_value = "on_demand")]
    burst_capacity: String,
    /// The floor: this percentile of hourly demand (0 = the minimum).
    #[arg(long, default_value_t = 0.0)]
    floor_percentile: f64,
    /// Write the cost curve (total cost by GPUs committed) as an SVG chart here.
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// The prices of a run: as given, with the rest looked up like `gpu_commitment_sizing`
/// does (the same code), and where the looked-up ones came from.
struct Prices {
    commit: f64,
    burst: f64,
    on_demand: Option<f64>,
    spot: Option<f64>,
    source: Option<String>,
}

/// The flag each data-source attribute stands for, in messages.
fn flag_of(attribute: &str) -> String {
    let flag = match attribute {
        "commit_usd_per_gpu_hour" => "commit",
        "burst_usd_per_gpu_hour" => "burst",
        "on_demand_usd_per_gpu_hour" => "on-demand",
        "spot_usd_per_gpu_hour" => "spot",
        "hourly_gpus_csv" => "demand-csv",
        other => other,
    };
    format!("--{}", flag.replace('_', "-"))
}

/// Fills the prices not given from the catalog, through the data source's own read.
fn prices(a: &CommitmentArgs, csv: &str) -> Result<Prices, String> {
    if let (Some(commit), Some(burst)) = (a.commit, a.burst) {
        return Ok(Prices {
            commit,
            burst,
            on_demand: a.on_demand,
            spot: a.spot,
            source: None,
        });
    }
    use crate::data_sources::commitment_sizing as sizing;
    use tfplugin::Value;
    let text = |s: &Option<String>| s.clone().map_or(Value::Null, Value::string);
    let number = |x: Option<f64>| x.map_or(Value::Null, Value::number);
    let given: Vec<(&str, Value)> = vec![
        ("hourly_gpus_csv", Value::string(csv.to_string())),
        ("commit_usd_per_gpu_hour", number(a.commit)),
        ("burst_usd_per_gpu_hour", number(a.burst)),
        ("on_demand_usd_per_gpu_hour", number(a.on_demand)),
        ("spot_usd_per_gpu_hour", number(a.spot)),
        ("cloud", text(&a.cloud)),
        ("region", text(&a.region)),
        ("gpu", text(&a.gpu)),
        ("gpu_count", number(a.gpu_count)),
        ("term", Value::string(a.term.clone())),
        ("burst_capacity", Value::string(a.burst_capacity.clone())),
        ("floor_percentile", Value::number(a.floor_percentile)),
    ];
    let r = sizing::read(
        &crate::model_values::object_of(&sizing::schema(), given),
        gpu_core::catalog::Catalog::embedded(),
        gpu_core::freshness::Freshness::any(),
    );
    if let Some(d) = r.diagnostics.0.iter().find(|d| d.is_error()) {
        let at = d
            .attribute
            .as_ref()
            .map(|p| flag_of(&p.to_string()))
            .unwrap_or_else(|| "commitment-size".into());
        let detail = if d.detail.is_empty() {
            &d.summary
        } else {
            &d.detail
        };
        return Err(format!("{at}: {detail}"));
    }
    let got = |k: &str| {
        r.state
            .get_attr(k)
            .and_then(Value::as_number)
            .map(|n| n.as_f64())
    };
    Ok(Prices {
        commit: got("commit_usd_per_gpu_hour").ok_or("no commitment price")?,
        burst: got("burst_usd_per_gpu_hour").ok_or("no burst price")?,
        on_demand: got("on_demand_usd_per_gpu_hour"),
        spot: got("spot_usd_per_gpu_hour"),
        source: r
            .state
            .get_attr("price_source")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
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
    let p = match prices(a, &text) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("commitment-size: {e}");
            return ExitCode::FAILURE;
        }
    };
    let input = SizingInput {
        hourly_gpus,
        commit_usd_per_gpu_hour: p.commit,
        burst_usd_per_gpu_hour: p.burst,
        floor_percentile: a.floor_percentile,
        on_demand_usd_per_gpu_hour: p.on_demand,
        spot_usd_per_gpu_hour: p.spot,
    };
    let s = match commitment::size(&input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("commitment-size: {e}");
            return ExitCode::FAILURE;
        }
    };
    out!("{}", table(&s));
    if let Some(source) = &p.source {
        outln!(
            "prices per GPU-hour: commit ${:.4}, burst ${:.4}; from {source}",
            p.commit,
            p.burst
        );
    }
    if let Some(path) = &a.svg {
        if let Err(e) = std::fs::write(path, svg(&s)) {
            eprintln!("--svg {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        outln!("cost curve written to {}", path.display());
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

/// The cost curve as an SVG line chart: ticks on both axes, the floor and the optimum
/// marked on the curve and named in a legend above the plot, so no label covers another.
pub fn svg(s: &Sizing) -> String {
    let (w, h) = (640.0, 380.0);
    let (left, right, top, bottom) = (80.0, 24.0, 64.0, 56.0);
    let max_n = s.curve.last().map_or(1, |p| p.0).max(1) as f64;
    let peak = s.curve.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0);
    let x_step = nice_step(max_n, 8.0).round().max(1.0);
    let y_step = nice_step(peak, 5.0);
    let max_usd = (peak / y_step).ceil() * y_step;
    let x = |n: f64| left + n / max_n * (w - left - right);
    let y = |usd: f64| h - bottom - usd / max_usd * (h - top - bottom);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    // Axes.
    let _ = writeln!(
        out,
        r#"<line x1="{left}" y1="{b}" x2="{r}" y2="{b}" stroke="black"/><line x1="{left}" y1="{top}" x2="{left}" y2="{b}" stroke="black"/>"#,
        b = h - bottom,
        r = w - right,
    );
    // X ticks: whole GPU counts.
    let mut n = 0.0;
    while n <= max_n + 1e-9 {
        let _ = writeln!(
            out,
            r#"<line x1="{px:.1}" y1="{b}" x2="{px:.1}" y2="{t}" stroke="black"/><text x="{px:.1}" y="{ty}" text-anchor="middle">{n}</text>"#,
            px = x(n),
            b = h - bottom,
            t = h - bottom + 5.0,
            ty = h - bottom + 18.0,
        );
        n += x_step;
    }
    // Y ticks: money, with light grid lines.
    let mut v = 0.0;
    while v <= max_usd + 1e-9 {
        let _ = writeln!(
            out,
            r##"<line x1="{l5}" y1="{py:.1}" x2="{r}" y2="{py:.1}" stroke="#ddd"/><line x1="{l5}" y1="{py:.1}" x2="{left}" y2="{py:.1}" stroke="black"/><text x="{lx}" y="{ty:.1}" text-anchor="end">{label}</text>"##,
            l5 = left - 5.0,
            r = w - right,
            py = y(v),
            lx = left - 8.0,
            ty = y(v) + 4.0,
            label = short_usd(v),
        );
        v += y_step;
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">GPUs committed</text>"#,
        left + (w - left - right) / 2.0,
        h - 14.0,
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="{c}" transform="rotate(-90 16 {c})" text-anchor="middle">total cost over the history</text>"#,
        c = top + (h - top - bottom) / 2.0,
    );
    let points: Vec<String> = s
        .curve
        .iter()
        .map(|(n, usd)| format!("{:.1},{:.1}", x(f64::from(*n)), y(*usd)))
        .collect();
    let _ = writeln!(
        out,
        r#"<polyline fill="none" stroke="steelblue" stroke-width="2" points="{}"/>"#,
        points.join(" ")
    );
    // The marks on the curve, and their names in a legend row above the plot.
    for (i, (label, c, colour)) in [
        ("floor", &s.floor, "darkorange"),
        ("optimal", &s.optimal, "seagreen"),
    ]
    .into_iter()
    .enumerate()
    {
        let radius = if i == 0 { 7.0 } else { 4.0 };
        let lx = left + i as f64 * 260.0;
        let _ = writeln!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="{radius}" fill="{colour}"/><circle cx="{}" cy="24" r="5" fill="{colour}"/><text x="{}" y="28" fill="{colour}">{label}: {} GPUs, {}</text>"#,
            x(f64::from(c.gpus)),
            y(c.total_usd),
            lx + 5.0,
            lx + 14.0,
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

    use crate::chart::text_boxes;

    #[test]
    fn chart_labels_never_overlap_and_both_axes_have_ticks() {
        // Small and large money, few and many GPUs, floor and optimum close together.
        for (gpus, commit, burst) in [(3.0, 1.0, 2.0), (120.0, 7.67, 11.06), (2000.0, 40.0, 98.0)] {
            let hourly: Vec<f64> = (0..300)
                .map(|i| gpus * (0.6 + f64::from(i % 7) / 10.0))
                .collect();
            let s = commitment::size(&SizingInput {
                hourly_gpus: hourly,
                commit_usd_per_gpu_hour: commit,
                burst_usd_per_gpu_hour: burst,
                floor_percentile: 0.0,
                on_demand_usd_per_gpu_hour: Some(burst),
                spot_usd_per_gpu_hour: None,
            })
            .unwrap();
            let chart = svg(&s);
            let boxes = text_boxes(&chart);
            for (i, a) in boxes.iter().enumerate() {
                assert!(a.0 >= 0.0 && a.1 <= 640.0, "{a:?} leaves the chart");
                for b in &boxes[i + 1..] {
                    let same_line = (a.2 - b.2).abs() < 12.0;
                    let apart = a.1 <= b.0 || b.1 <= a.0;
                    assert!(!same_line || apart, "{gpus} GPUs: {a:?} overlaps {b:?}");
                }
            }
            // Ticks: short marks on both axes, each with its label.
            let x_ticks = boxes
                .iter()
                .filter(|b| (b.2 - (380.0 - 56.0 + 18.0)).abs() < 0.5)
                .count();
            let y_ticks = boxes
                .iter()
                .filter(|b| b.3.starts_with('$') && b.1 <= 72.0)
                .count();
            assert!(
                x_ticks >= 3 && y_ticks >= 3,
                "{gpus}: {x_ticks} x ticks, {y_ticks} y ticks"
            );
        }
    }

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
