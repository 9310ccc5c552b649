//! `terraform-provider-gpu cost --plan plan.json`: the monthly cost of a plan's GPU
//! resources before and after it, the change, and the totals by team, project and cloud,
//! as a table, as Markdown for a pull-request comment, or as JSON whose totals carry
//! Infracost's names (`totalMonthlyCost`, `pastTotalMonthlyCost`, `diffTotalMonthlyCost`,
//! `currency`), so CI steps written for it read ours.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use gpu_core::cost::{format_delta, format_usd};
use gpu_core::record::report::table;
use serde_json::{Value, json};

use crate::plan_cost::{self, CostRow, Total};

/// Which plan, and how to print its cost.
#[derive(Debug, Args)]
pub struct CostArgs {
    /// The plan as JSON: `terraform plan -out=tfplan && terraform show -json tfplan > plan.json`.
    #[arg(long)]
    pub plan: PathBuf,
    /// `table` (default), `markdown` (a pull-request comment) or `json`.
    #[arg(long, value_enum, default_value_t = CostFormat::Table)]
    pub format: CostFormat,
    /// The groups of the totals: tag or label keys, and `cloud`.
    #[arg(long, value_delimiter = ',', default_value = "team,project,cloud")]
    pub by: Vec<String>,
}

/// How the cost prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CostFormat {
    /// Aligned columns.
    Table,
    /// Markdown tables for a pull-request comment.
    Markdown,
    /// One JSON object.
    Json,
}

/// Runs `cost`.
pub fn run(args: &CostArgs) -> ExitCode {
    let name = args.plan.display().to_string();
    let text = match std::fs::read_to_string(&args.plan) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("terraform-provider-gpu cost: {name}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match plan_cost::rows(&text) {
        Ok(rows) => {
            // A closed pipe (`| head`) ends the output quietly.
            out!("{}", render(&rows, &args.by, args.format));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("terraform-provider-gpu cost: {name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The cost of `rows` in `format`, with totals by each of `by`.
pub fn render(rows: &[CostRow], by: &[String], format: CostFormat) -> String {
    match format {
        CostFormat::Table => render_table(rows, by),
        CostFormat::Markdown => render_markdown(rows, by),
        CostFormat::Json => render_json(rows, by),
    }
}

fn money(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), format_usd)
}

fn change(r: &CostRow) -> String {
    r.diff()
        .map_or_else(|| "known after apply".into(), format_delta)
}

/// The resources whose cost only the apply will know, as a closing line.
fn unknown_line(rows: &[CostRow]) -> Option<String> {
    let unknown: Vec<&str> = rows
        .iter()
        .filter(|r| r.unknown)
        .map(|r| r.address.as_str())
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "Not in the totals, their cost is known only after apply: {}.",
            unknown.join(", ")
        )
    })
}

fn render_table(rows: &[CostRow], by: &[String]) -> String {
    if rows.is_empty() {
        return "no GPU resources in this plan\n".into();
    }
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.address.clone(),
                r.action.clone(),
                r.cloud.clone(),
                money(r.before),
                money(r.after),
                change(r),
            ]
        })
        .collect();
    let t = plan_cost::total(rows);
    cells.push(vec![
        "TOTAL".into(),
        String::new(),
        String::new(),
        format_usd(t.before),
        format_usd(t.after),
        format_delta(t.diff),
    ]);
    let mut out = table(
        &[
            "RESOURCE",
            "ACTION",
            "CLOUD",
            "BEFORE/MO",
            "AFTER/MO",
            "CHANGE",
        ],
        &cells,
    );
    for key in by {
        out.push('\n');
        let head = format!("BY {}", key.to_ascii_uppercase());
        out.push_str(&table(
            &[head.as_str(), "BEFORE/MO", "AFTER/MO", "CHANGE"],
            &group_cells(rows, key),
        ));
    }
    if let Some(l) = unknown_line(rows) {
        out.push('\n');
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn group_cells(rows: &[CostRow], key: &str) -> Vec<Vec<String>> {
    plan_cost::totals_by(rows, key)
        .into_iter()
        .map(|(g, t)| {
            vec![
                g,
                format_usd(t.before),
                format_usd(t.after),
                format_delta(t.diff),
            ]
        })
        .collect()
}

fn render_markdown(rows: &[CostRow], by: &[String]) -> String {
    let t = plan_cost::total(rows);
    let mut out = String::from("### GPU cost of this plan\n\n");
    if rows.is_empty() {
        out.push_str("No GPU resources in this plan.\n");
        return out;
    }
    out.push_str(&format!(
        "Monthly: **{}** (now {}, change **{}**)\n\n",
        format_usd(t.after),
        format_usd(t.before),
        format_delta(t.diff)
    ));
    out.push_str("| Resource | Action | Cloud | Before/mo | After/mo | Change |\n");
    out.push_str("|---|---|---|---:|---:|---:|\n");
    for r in rows {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            r.address,
            r.action,
            r.cloud,
            money(r.before),
            money(r.after),
            change(r)
        ));
    }
    out.push_str(&format!(
        "| **Total** | | | {} | {} | **{}** |\n",
        format_usd(t.before),
        format_usd(t.after),
        format_delta(t.diff)
    ));
    for key in by {
        out.push_str(&format!(
            "\n| By {key} | Before/mo | After/mo | Change |\n|---|---:|---:|---:|\n"
        ));
        for c in group_cells(rows, key) {
            out.push_str(&format!("| {} | {} | {} | {} |\n", c[0], c[1], c[2], c[3]));
        }
    }
    if let Some(l) = unknown_line(rows) {
        out.push_str(&format!("\n{l}\n"));
    }
    out
}

/// An amount as Infracost writes it in JSON: a decimal string with cents.
fn amount(x: f64) -> Value {
    Value::String(format!("{x:.2}"))
}

fn totals_json(t: &Total) -> Value {
    json!({"pastMonthlyCost": amount(t.before), "monthlyCost": amount(t.after),
           "diffMonthlyCost": amount(t.diff)})
}

fn render_json(rows: &[CostRow], by: &[String]) -> String {
    let t = plan_cost::total(rows);
    let resources: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "address": r.address,
                "type": r.kind,
                "action": r.action,
                "cloud": r.cloud,
                "tags": r.tags,
                "pastMonthlyCost": r.before.map(amount),
                "monthlyCost": r.after.map(amount),
                "diffMonthlyCost": r.diff().map(amount),
                "knownAfterApply": r.unknown,
            })
        })
        .collect();
    let groups: BTreeMap<&str, BTreeMap<String, Value>> = by
        .iter()
        .map(|k| {
            let g = plan_cost::totals_by(rows, k)
                .into_iter()
                .map(|(name, t)| (name, totals_json(&t)))
                .collect();
            (k.as_str(), g)
        })
        .collect();
    let v = json!({
        "currency": "USD",
        "totalMonthlyCost": amount(t.after),
        "pastTotalMonthlyCost": amount(t.before),
        "diffTotalMonthlyCost": amount(t.diff),
        "resources": resources,
        "totalsBy": groups,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan_cost::rows;

    fn by() -> Vec<String> {
        ["team", "project", "cloud"].map(String::from).to_vec()
    }

    fn sample() -> Vec<CostRow> {
        rows(&crate::plan_cost::tests::plan()).unwrap()
    }

    #[test]
    fn the_table_lists_each_resource_the_total_and_the_groups() {
        let t = render(&sample(), &by(), CostFormat::Table);
        assert!(t.starts_with("RESOURCE "), "{t}");
        let line = |start: &str| {
            t.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no {start} line in\n{t}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            line("gpu_node_pool.train"),
            "gpu_node_pool.train create aws - $40,179.20 +$40,179.20"
        );
        assert_eq!(
            line("gpu_instance.dev"),
            "gpu_instance.dev delete azure $289.81 - -$289.81"
        );
        assert_eq!(line("TOTAL"), "TOTAL $1,289.81 $41,679.70 +$40,389.89");
        assert!(t.contains("BY TEAM"), "{t}");
        assert_eq!(line("ml "), "ml $289.81 $40,179.20 +$39,889.39");
        assert!(
            t.contains("known only after apply: gpu_node_pool.later"),
            "{t}"
        );
    }

    #[test]
    fn markdown_is_a_comment_with_the_totals_first() {
        let m = render(&sample(), &by(), CostFormat::Markdown);
        assert!(m.starts_with("### GPU cost of this plan\n\nMonthly: **$41,679.70** (now $1,289.81, change **+$40,389.89**)\n"), "{m}");
        assert!(
            m.contains("| `module.infer.gpu_node_pool.serve` | update | azure | $1,000.00 | $1,500.50 | +$500.50 |"),
            "{m}"
        );
        assert!(
            m.contains("| By project | Before/mo | After/mo | Change |"),
            "{m}"
        );
        assert!(
            m.contains("| llm | $1,289.81 | $41,679.70 | +$40,389.89 |"),
            "{m}"
        );
    }

    #[test]
    fn json_carries_infracosts_total_names_as_decimal_strings() {
        let j: Value = serde_json::from_str(&render(&sample(), &by(), CostFormat::Json)).unwrap();
        assert_eq!(j["currency"], "USD");
        assert_eq!(j["totalMonthlyCost"], "41679.70");
        assert_eq!(j["pastTotalMonthlyCost"], "1289.81");
        assert_eq!(j["diffTotalMonthlyCost"], "40389.89");
        assert_eq!(j["resources"].as_array().unwrap().len(), 4);
        assert_eq!(j["resources"][3]["knownAfterApply"], true);
        assert_eq!(j["resources"][3]["monthlyCost"], Value::Null);
        assert_eq!(j["totalsBy"]["cloud"]["aws"]["monthlyCost"], "40179.20");
    }

    #[test]
    fn a_plan_without_gpu_resources_says_so() {
        assert_eq!(
            render(&[], &by(), CostFormat::Table),
            "no GPU resources in this plan\n"
        );
        let j: Value = serde_json::from_str(&render(&[], &by(), CostFormat::Json)).unwrap();
        assert_eq!(j["totalMonthlyCost"], "0.00");
    }
}
