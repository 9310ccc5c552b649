//! `terraform-provider-gpu report spend`: the inventory (`gpu_inventory`'s listing, same
//! filters) summed by `--by` keys (`cloud`, `kind`, `region` or label keys), as a table,
//! JSON, and an SVG bar chart of monthly spend by group and cloud. Read-only. Credentials
//! are each cloud's usual chain; the account flags mirror the provider block.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use gpu_core::catalog::Catalog;
use gpu_core::inventory::Item;
use gpu_core::inventory::spend::{SpendRow, spend_by, value_of};
use gpu_core::record::report;
use tfplugin::Value;

use crate::chart::{escape, nice_step, short_usd};
use crate::clouds::Clouds;
use crate::config::ProviderConfig;
use crate::config::aws::AwsConfig;
use crate::config::azure::AzureConfig;
use crate::config::gcp::GcpConfig;
use crate::data_sources::inventory;
use crate::report_cli::Format;

/// The flags of `report spend`.
#[derive(Debug, clap::Args)]
pub struct SpendArgs {
    /// Clouds to read, comma-separated (`aws,azure,gcp`); default: AWS, and Azure and
    /// Google Cloud when their account flags are given.
    #[arg(long, value_delimiter = ',')]
    clouds: Vec<String>,
    /// Regions to list VMs and commitments in: globs or region groups, comma-separated.
    #[arg(long, value_delimiter = ',')]
    regions: Vec<String>,
    /// A cluster whose node groups are listed (its cloud id), repeatable.
    #[arg(long = "cluster")]
    clusters: Vec<String>,
    /// What to list: `node_pool`, `instance`, `commitment` (default all).
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Keys to sum by: `cloud`, `kind`, `region` or label keys.
    #[arg(long, value_delimiter = ',', default_value = "team,project,cloud")]
    by: Vec<String>,
    /// `table` (default) or `json`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write a bar chart of monthly spend by group and cloud to this SVG file.
    #[arg(long)]
    chart: Option<PathBuf>,
    /// AWS profile, as the provider's `aws.profile`.
    #[arg(long)]
    aws_profile: Option<String>,
    /// AWS endpoint override `SERVICE=URL` (`ec2`, `eks`), repeatable, as `aws.endpoints`.
    #[arg(long = "aws-endpoint")]
    aws_endpoints: Vec<String>,
    /// Azure subscription, as `azure.subscription_id`.
    #[arg(long)]
    azure_subscription: Option<String>,
    /// Entra tenant, as `azure.tenant_id`.
    #[arg(long)]
    azure_tenant: Option<String>,
    /// ARM endpoint, as `azure.endpoint`.
    #[arg(long)]
    azure_endpoint: Option<String>,
    /// Google Cloud project, as `gcp.project`.
    #[arg(long)]
    gcp_project: Option<String>,
    /// Google API endpoint, as `gcp.endpoint`.
    #[arg(long)]
    gcp_endpoint: Option<String>,
}

/// The flag that sets data-source attribute `attr`.
fn flag_of(attr: &str) -> &'static str {
    match attr {
        "clouds" => "--clouds",
        "regions" => "--regions",
        "clusters" => "--cluster",
        "kinds" => "--kinds",
        _ => "--by",
    }
}

/// The provider settings the flags give.
fn provider_config(a: &SpendArgs) -> Result<ProviderConfig, String> {
    let mut endpoints = BTreeMap::new();
    for e in &a.aws_endpoints {
        let (service, url) = e.split_once('=').ok_or_else(|| {
            format!("--aws-endpoint {e:?}: write SERVICE=URL, e.g. ec2=https://…")
        })?;
        endpoints.insert(service.trim().to_string(), url.trim().to_string());
    }
    Ok(ProviderConfig {
        aws: Some(AwsConfig {
            profile: a.aws_profile.clone(),
            endpoints: (!endpoints.is_empty()).then_some(endpoints),
            max_retries: None,
        }),
        azure: a.azure_subscription.as_ref().map(|s| AzureConfig {
            subscription_id: Some(s.clone()),
            tenant_id: a.azure_tenant.clone(),
            endpoint: a.azure_endpoint.clone(),
        }),
        gcp: a.gcp_project.as_ref().map(|p| GcpConfig {
            project: Some(p.clone()),
            endpoint: a.gcp_endpoint.clone(),
            access_token: None,
        }),
        ..ProviderConfig::default()
    })
}

/// The data source's arguments the flags give.
fn arguments(a: &SpendArgs) -> Value {
    let list =
        |v: &[String]| (!v.is_empty()).then(|| Value::List(v.iter().map(Value::string).collect()));
    let pairs = [
        ("clouds", list(&a.clouds)),
        ("regions", list(&a.regions)),
        ("clusters", list(&a.clusters)),
        ("kinds", list(&a.kinds)),
        ("group_by", list(&a.by)),
    ];
    crate::model_values::object_of(
        &inventory::schema(),
        pairs.into_iter().filter_map(|(k, v)| Some((k, v?))),
    )
}

/// Runs `report spend`; exit 1 on bad flags, 0 otherwise (unreadable places are warned
/// about on standard error).
pub fn run(a: &SpendArgs) -> ExitCode {
    let fail = |e: String| {
        eprintln!("terraform-provider-gpu report spend: {e}");
        ExitCode::FAILURE
    };
    let config = match provider_config(a) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start: {e}")),
    };
    let found = runtime.block_on(async {
        let clouds = Clouds::of(&config);
        inventory::list(&arguments(a), &clouds, Catalog::embedded()).await
    });
    let found = match found {
        Ok(f) => f,
        Err(d) => {
            for x in d.0 {
                let attr = x.summary.strip_prefix("Invalid ").unwrap_or_default();
                let text = x.detail.replace(&format!("`{attr}`"), flag_of(attr));
                eprintln!("terraform-provider-gpu report spend: {text}");
            }
            return ExitCode::FAILURE;
        }
    };
    for u in &found.unread {
        eprintln!("warning: cannot read {}: {}", u.what, u.why);
    }
    let rows = spend_by(&found.items, &a.by);
    if let Some(path) = &a.chart
        && let Err(e) = std::fs::write(path, chart(&found.items, &a.by))
    {
        return fail(format!("--chart {}: {e}", path.display()));
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
