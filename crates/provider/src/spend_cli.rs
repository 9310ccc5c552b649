//! `terraform-provider-gpu report spend`: the inventory (`gpu_inventory`'s listing, same
//! filters) summed by `--by` keys (`cloud`, `kind`, `region` or label keys), as a table,
//! JSON, and an SVG bar chart of monthly spend by group and cloud. Read-only. Credentials
//! are each cloud's usual chain; the account flags mirror the provider block.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use gpu_core::inventory::Item;
use gpu_core::inventory::spend::{SpendRow, spend_by, value_of};
use gpu_core::record::report;

use crate::chart::{escape, nice_step, short_usd};
use crate::estate_cli::EstateArgs;
use crate::report_cli::Format;

/// The flags of `report spend`.
#[derive(Debug, clap::Args)]
pub struct SpendArgs {
    /// What to read and with which accounts.
    #[command(flatten)]
    estate: EstateArgs,
    /// Keys to sum by: `cloud`, `kind`, `region` or label keys.
    #[arg(long, value_delimiter = ',', default_value = "team,project,cloud")]
    by: Vec<String>,
    /// `table` (default) or `json`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write a bar chart of monthly spend by group and cloud to this SVG file.
    #[arg(long)]
    chart: Option<PathBuf>,
}

/// Runs `report spend`; exit 1 on bad flags, 0 otherwise (unreadable places are warned
/// about on standard error).
pub fn run(a: &SpendArgs) -> ExitCode {
    let found = match crate::estate_cli::list(&a.estate, &a.by, "report spend") {
        Ok(found) => found,
        Err(code) => return code,
    };
    let rows = spend_by(&found.items, &a.by);
    if let Some(path) = &a.chart
        && let Err(e) = std::fs::write(path, chart(&found.items, &a.by))
    {
        eprintln!(
            "terraform-provider-gpu report spend: --chart {}: {e}",
            path.display()
        );
        return ExitCode::FAILURE;
    }
    match a.format {
        Format::Json => out!("{}", json(&rows)),
        Format::Table => out!("{}", table(&rows, &a.by)),
    }
    ExitCode::SUCCESS
}

fn usd(x: f64) -> String {
    format!("{x:.2}")
}

/// The rows as a table, with a total line.
pub fn table(rows: &[SpendRow], by: &[String]) -> String {
    if rows.is_empty() {
        return "nothing found\n".into();
    }
    let mut header: Vec<String> = by.iter().map(|k| k.to_ascii_uppercase()).collect();
    header.extend(["MONTHLY_USD", "IDLE_COMMITMENT_USD", "ITEMS", "UNPRICED"].map(String::from));
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut c: Vec<String> = by
                .iter()
                .map(|k| {
                    let v = &r.group[k];
                    if v.is_empty() { "-".into() } else { v.clone() }
                })
                .collect();
            c.extend([
                usd(r.monthly_usd),
                usd(r.idle_commitment_monthly_usd),
                r.items.to_string(),
                r.unpriced.to_string(),
            ]);
            c
        })
        .collect();
    let mut total: Vec<String> = by
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 { "all" } else { "" }.to_string())
        .collect();
    total.extend([
        usd(rows.iter().map(|r| r.monthly_usd).sum()),
        usd(rows.iter().map(|r| r.idle_commitment_monthly_usd).sum()),
        rows.iter().map(|r| r.items).sum::<u32>().to_string(),
        rows.iter().map(|r| r.unpriced).sum::<u32>().to_string(),
    ]);
    cells.push(total);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    report::table(&header, &cells)
}

/// The rows as JSON: `currency`, `rows` (each its group, money, items) and the totals.
pub fn json(rows: &[SpendRow]) -> String {
    let body = serde_json::json!({
        "currency": "USD",
        "rows": rows,
        "total_monthly_usd": (rows.iter().map(|r| r.monthly_usd).sum::<f64>() * 100.0).round() / 100.0,
        "total_idle_commitment_monthly_usd":
            (rows.iter().map(|r| r.idle_commitment_monthly_usd).sum::<f64>() * 100.0).round() / 100.0,
    });
    let mut text = serde_json::to_string_pretty(&body).unwrap_or_default();
    text.push('\n');
    text
}

/// The colour of a cloud's bars.
fn colour(cloud: &str) -> &'static str {
    match cloud {
        "aws" => "#e68a00",
        "azure" => "#0078d4",
        "gcp" => "#34a853",
        _ => "#888888",
    }
}

/// A horizontal bar per group of the `by` keys other than `cloud`, split by cloud, with
/// the money on an axis with ticks and each bar's total beside it; a legend of the clouds
/// above. Labels never overlap (each bar has its own line).
pub fn chart(items: &[Item], by: &[String]) -> String {
    let keys: Vec<String> = by.iter().filter(|k| *k != "cloud").cloned().collect();
    let groups = spend_by(items, &keys);
    let label = |g: &SpendRow| {
        let parts: Vec<String> = keys
            .iter()
            .map(|k| {
                let v = &g.group[k];
                format!("{k}={}", if v.is_empty() { "-" } else { v })
            })
            .collect();
        if parts.is_empty() {
            "all".to_string()
        } else {
            parts.join(", ")
        }
    };
    let labels: Vec<String> = groups.iter().map(label).collect();
    // The label column is as wide as the longest label; the plot keeps its width.
    let left = (labels.iter().map(|l| l.chars().count()).max().unwrap_or(3) as f64 * 7.2 + 24.0)
        .max(120.0);
    let w = (left + 560.0).max(760.0);
    let (right, top, bar, gap, bottom) = (90.0, 56.0, 22.0, 12.0, 52.0);
    let h = top + groups.len().max(1) as f64 * (bar + gap) + bottom;
    let max = groups
        .iter()
        .map(|g| g.monthly_usd)
        .fold(0.0, f64::max)
        .max(1.0);
    let step = nice_step(max, 5.0);
    let top_usd = (max / step).ceil() * step;
    let x = |usd: f64| left + usd / top_usd * (w - left - right);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    // Legend: the clouds present.
    let mut clouds: Vec<String> = items.iter().map(|i| i.cloud.as_str().to_string()).collect();
    clouds.sort();
    clouds.dedup();
    for (i, c) in clouds.iter().enumerate() {
        let lx = left + i as f64 * 110.0;
        let _ = writeln!(
            out,
            r#"<rect x="{lx}" y="18" width="12" height="12" fill="{}"/><text x="{}" y="28">{c}</text>"#,
            colour(c),
            lx + 18.0
        );
    }
    // Axis with ticks and grid.
    let axis_y = h - bottom;
    let _ = writeln!(
        out,
        r#"<line x1="{left}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="black"/><line x1="{left}" y1="{top}" x2="{left}" y2="{axis_y}" stroke="black"/>"#,
        w - right
    );
    let mut v = 0.0;
    while v <= top_usd + 1e-9 {
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" y1="{top}" x2="{px:.1}" y2="{axis_y}" stroke="#e5e5e5"/><line x1="{px:.1}" y1="{axis_y}" x2="{px:.1}" y2="{t}" stroke="black"/><text x="{px:.1}" y="{ty}" text-anchor="middle">{}</text>"##,
            short_usd(v),
            px = x(v),
            t = axis_y + 5.0,
            ty = axis_y + 18.0,
        );
        v += step;
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">USD per month</text>"#,
        left + (w - left - right) / 2.0,
        h - 12.0
    );
    // Bars: one per group, a segment per cloud.
    for (i, (g, name)) in groups.iter().zip(&labels).enumerate() {
        let y = top + i as f64 * (bar + gap);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y + bar / 2.0 + 4.0,
            escape(name)
        );
        let mut start = 0.0;
        for c in &clouds {
            let usd: f64 = items
                .iter()
                .filter(|it| it.cloud.as_str() == c)
                .filter(|it| keys.iter().all(|k| value_of(it, k) == g.group[k]))
                .filter_map(|it| it.monthly_usd)
                .sum();
            if usd <= 0.0 {
                continue;
            }
            let _ = writeln!(
                out,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{bar}" fill="{}"><title>{c}: {}</title></rect>"#,
                x(start),
                x(start + usd) - x(start),
                colour(c),
                short_usd(usd)
            );
            start += usd;
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            x(start) + 6.0,
            y + bar / 2.0 + 4.0,
            short_usd(g.monthly_usd)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{assert_no_overlap, text_boxes};
    use gpu_core::inventory::ItemKind;
    use gpu_core::offer::Cloud;

    fn item(cloud: Cloud, team: &str, project: &str, monthly: f64) -> Item {
        Item {
            kind: ItemKind::NodePool,
            cloud,
            region: "r".into(),
            cluster: None,
            name: "n".into(),
            managed: true,
            gpu: Some("H100".into()),
            gpu_count: Some(8),
            nodes: 1,
            capacity: "spot".into(),
            hourly_usd: Some(monthly / 730.0),
            monthly_usd: Some(monthly),
            labels: [("team", team), ("project", project)]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            import_id: None,
            price_source: String::new(),
            used_instances: None,
            utilization: None,
            idle_monthly_usd: None,
        }
    }

    fn estate() -> Vec<Item> {
        vec![
            item(
                Cloud::Aws,
                "ml",
                "llm-pretraining-with-a-long-name",
                180_000.0,
            ),
            item(
                Cloud::Gcp,
                "ml",
                "llm-pretraining-with-a-long-name",
                40_000.0,
            ),
            item(Cloud::Azure, "vision", "detector", 12_500.0),
            item(Cloud::Gcp, "research", "rl", 900.0),
        ]
    }

    #[test]
    fn the_table_sums_by_the_keys_and_ends_with_the_total() {
        let by = ["team".to_string(), "cloud".to_string()];
        let t = table(&spend_by(&estate(), &by), &by);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("TEAM") && lines[0].contains("MONTHLY_USD"),
            "{t}"
        );
        assert!(
            lines[1].contains("ml") && lines[1].contains("aws") && lines[1].contains("180000.00")
        );
        assert!(
            lines.last().unwrap().starts_with("all") && t.contains("233400.00"),
            "{t}"
        );
    }

    #[test]
    fn the_chart_has_a_bar_per_group_ticks_a_legend_and_no_overlapping_label() {
        let by = [
            "team".to_string(),
            "project".to_string(),
            "cloud".to_string(),
        ];
        let svg = chart(&estate(), &by);
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        assert!(width >= 760.0);
        assert_no_overlap(&svg, width);
        let boxes = text_boxes(&svg);
        let ticks = boxes
            .iter()
            .filter(|b| b.3.starts_with('$') && b.2 > 100.0)
            .count();
        assert!(ticks >= 3 + 3, "axis ticks and bar totals: {boxes:?}");
        for cloud in ["aws", "azure", "gcp"] {
            assert!(boxes.iter().any(|b| b.3 == cloud), "legend names {cloud}");
        }
        // The ml bar is split in two clouds: two rects at its row.
        assert_eq!(svg.matches("<title>aws: $180k</title>").count(), 1);
        assert_eq!(svg.matches("<title>gcp: $40k</title>").count(), 1);
        assert!(svg.contains("team=ml, project=llm-pretraining-with-a-long-name"));
    }

    #[test]
    fn json_names_the_currency_and_totals() {
        let by = ["cloud".to_string()];
        let v: serde_json::Value = serde_json::from_str(&json(&spend_by(&estate(), &by))).unwrap();
        assert_eq!(v["currency"], "USD");
        assert_eq!(v["total_monthly_usd"], 233_400.0);
        assert_eq!(v["rows"][0]["group"]["cloud"], "aws");
    }
}
