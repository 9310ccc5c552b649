//! `offers --floor N --expected M`: the places of a pool ranked by its whole expected bill
//! (the `gpu_pool_placement` ranking), as a table or as JSON.

use gpu_core::catalog::Catalog;
use gpu_core::freshness::{Freshness, MaxPriceAge};
use gpu_core::pool::placement::{self, Candidate, PlacementQuery};
use serde::Serialize;

/// What the placement needs from the `offers` flags.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementArgs {
    /// The GPU model (exactly one).
    pub gpu: Vec<String>,
    /// GPUs per node.
    pub count: Option<f64>,
    /// On-demand nodes always running.
    pub floor: u32,
    /// Nodes running on average.
    pub expected: u32,
    /// Clouds.
    pub clouds: Vec<String>,
    /// Region globs.
    pub regions: Vec<String>,
    /// `--max-price-age`.
    pub max_price_age: Option<String>,
    /// `--include-stale-prices`.
    pub include_stale_prices: bool,
}

/// The query, or an error naming the flag.
pub fn build(a: &PlacementArgs) -> Result<PlacementQuery, String> {
    let [gpu] = a.gpu.as_slice() else {
        return Err("--gpu: placing a pool needs exactly one GPU model".into());
    };
    let gpu = gpu_core::gpu::lookup(gpu).map_err(|e| format!("--gpu: {e}"))?;
    let count = match a.count {
        Some(c) if c >= 1.0 && c.fract() == 0.0 && c <= f64::from(u32::MAX) => c as u32,
        _ => return Err("--count: placing a pool needs a whole number of GPUs per node".into()),
    };
    let mut clouds = Vec::new();
    for c in &a.clouds {
        clouds.push(c.parse().map_err(|e| format!("--cloud: {e}"))?);
    }
    let age = a
        .max_price_age
        .as_deref()
        .map(str::parse::<MaxPriceAge>)
        .transpose()
        .map_err(|e| format!("--max-price-age: {e}"))?;
    let q = PlacementQuery {
        gpu,
        gpu_count: count,
        min_nodes: 0,
        max_nodes: a.floor.max(a.expected).max(1),
        on_demand_min: a.floor,
        expected_nodes: Some(a.expected.max(a.floor)),
        clouds,
        regions: a.regions.clone(),
        freshness: Freshness::at_most(age).including_stale(a.include_stale_prices),
        reserved_usd_per_gpu_hour: None,
        prefer: None,
        min_saving_percent: 0.0,
        prefer_available: None,
    };
    if let Some(e) = q.check().first() {
        let flag = match e.field {
            "clouds" => "--cloud",
            "regions" => "--region",
            other => other,
        };
        return Err(format!("{flag}: {}", e.problem));
    }
    Ok(q)
}

/// One line of a place's bill, with the data source's field names.
#[derive(Debug, Serialize, PartialEq)]
pub struct LineRecord {
    /// `on_demand`, `spot` or `reserved`.
    pub kind: &'static str,
    /// Nodes.
    pub nodes: u32,
    /// USD per node-hour.
    pub usd_per_node_hour: f64,
    /// USD per month.
    pub monthly_usd: f64,
    /// Price source.
    pub source: String,
    /// Price date.
    pub as_of: Option<String>,
    /// Days since `as_of`.
    pub price_age_days: Option<i64>,
    /// Spot priced at on-demand.
    pub spot_priced_at_on_demand: bool,
}

/// One ranked place.
#[derive(Debug, Serialize, PartialEq)]
pub struct PlaceRecord {
    /// Cloud.
    pub cloud: String,
    /// Region.
    pub region: String,
    /// Instance type.
    pub instance_type: String,
    /// Expected USD per month.
    pub monthly_usd: f64,
    /// The bill.
    pub lines: Vec<LineRecord>,
}

impl PlaceRecord {
    /// The record of a candidate, ages counted to `today`.
    pub fn of(c: &Candidate, today: i64) -> Self {
        PlaceRecord {
            cloud: c.place.cloud.as_str().into(),
            region: c.place.region.clone(),
            instance_type: c.place.instance_type.clone(),
            monthly_usd: c.monthly_usd,
            lines: c
                .lines
                .iter()
                .map(|l| LineRecord {
                    kind: l.kind.as_str(),
                    nodes: l.nodes,
                    usd_per_node_hour: l.usd_per_node_hour,
                    monthly_usd: l.monthly_usd(),
                    source: l.origin.labelled_source(),
                    as_of: l.origin.as_of.clone(),
                    price_age_days: l.origin.age_days(today),
                    spot_priced_at_on_demand: l.spot_priced_at_on_demand,
                })
                .collect(),
        }
    }
}

/// Ranks the places of `catalog`; at most `limit` records.
pub fn run(
    q: &PlacementQuery,
    catalog: &Catalog,
    limit: usize,
) -> Result<(Vec<PlaceRecord>, usize), String> {
    let placed = placement::place(catalog, q).map_err(|e| e.to_string())?;
    let today = q.freshness.today;
    let records = placed
        .candidates
        .iter()
        .take(limit)
        .map(|c| PlaceRecord::of(c, today))
        .collect();
    Ok((records, placed.candidates.len()))
}

/// `$1,234.56`-style money for the table.
fn usd(x: f64) -> String {
    gpu_core::cost::format_usd(x)
}

/// One bill line for the table: `1 od $55.0400/h 2026-07-20 (136d)`.
fn line_cell(l: &LineRecord) -> String {
    let kind = match (l.kind, l.spot_priced_at_on_demand) {
        ("spot", true) => "spot@od",
        ("on_demand", _) => "od",
        (k, _) => k,
    };
    let date = match (&l.as_of, l.price_age_days) {
        _ if l.source.contains("(STALE: ") => "STALE".into(),
        (Some(d), Some(a)) => format!("{d} ({a}d)"),
        _ => "undated".into(),
    };
    format!("{} {kind} ${:.4}/h {date}", l.nodes, l.usd_per_node_hour)
}

/// Renders records as an aligned table, the chosen row marked `*`.
pub fn table(records: &[PlaceRecord]) -> String {
    let header = ["", "CLOUD", "REGION", "INSTANCE TYPE", "$/MONTH", "BILL"];
    let rows: Vec<[String; 6]> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let lines: Vec<String> = r.lines.iter().map(line_cell).collect();
            [
                if i == 0 { "*".into() } else { String::new() },
                r.cloud.clone(),
                r.region.clone(),
                r.instance_type.clone(),
                usd(r.monthly_usd),
                lines.join(" + "),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 4 {
                    format!("{c:>w$}", w = widths[i])
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    push(header.to_vec());
    for row in &rows {
        push(row.iter().map(String::as_str).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(floor: u32, expected: u32) -> PlacementArgs {
        PlacementArgs {
            gpu: vec!["H100".into()],
            count: Some(8.0),
            floor,
            expected,
            clouds: vec!["aws".into()],
            regions: vec![],
            max_price_age: None,
            // AWS's 8x H100 spot prices are all on the stale list; these tests are about
            // the bill, so they count.
            include_stale_prices: true,
        }
    }

    #[test]
    fn a_floor_changes_the_answer_and_the_table_shows_the_bill() {
        let spot_only = build(&args(0, 3)).unwrap();
        let with_floor = build(&args(1, 3)).unwrap();
        let (a, _) = run(&spot_only, Catalog::embedded(), 5).unwrap();
        let (b, n) = run(&with_floor, Catalog::embedded(), 5).unwrap();
        assert!(n >= b.len() && !b.is_empty());
        assert_ne!(
            (&a[0].region, &a[0].instance_type),
            (&b[0].region, &b[0].instance_type),
            "a floor moves the 8x H100 pool away from the spot-cheapest region"
        );
        assert_eq!(b[0].lines[0].kind, "on_demand");
        assert_eq!(b[0].lines[1].nodes, 2);
        let sum: f64 = b[0].lines.iter().map(|l| l.monthly_usd).sum();
        assert!((sum - b[0].monthly_usd).abs() < 1e-6);
        let t = table(&b);
        assert!(t.lines().nth(1).unwrap().starts_with('*'), "{t}");
        assert!(t.contains(" od $"), "{t}");
    }

    #[test]
    fn bad_flags_are_named() {
        let mut a = args(1, 2);
        a.gpu.push("A100-80GB".into());
        assert!(build(&a).unwrap_err().starts_with("--gpu"));
        let mut a = args(1, 2);
        a.count = Some(1.5);
        assert!(build(&a).unwrap_err().starts_with("--count"));
        let mut a = args(1, 2);
        a.clouds = vec!["cudo".into()];
        assert!(
            build(&a).unwrap_err().starts_with("--cloud"),
            "{:?}",
            build(&a)
        );
        let mut a = args(1, 2);
        a.max_price_age = Some("90 days".into());
        assert!(build(&a).unwrap_err().starts_with("--max-price-age"));
    }
}
