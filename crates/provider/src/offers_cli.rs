//! The `offers` command: the same ranking as the `gpu_offers` data source, as an aligned
//! table or as JSON with the data source's field names.

use crate::data_sources::offer_query::OfferRecord;
use crate::placement_cli::{self, PlacementArgs};
use gpu_core::catalog::Catalog;
use gpu_core::freshness::{Freshness, MaxPriceAge};
use gpu_core::query::{self, Capacity, GpuCount, OfferQuery};
use std::process::ExitCode;

/// Arguments of `terraform-provider-gpu offers`.
#[derive(Debug, clap::Args)]
pub struct OffersArgs {
    /// GPU model(s), e.g. H100 or A100-80GB; repeat or separate with commas.
    #[arg(long, value_delimiter = ',')]
    gpu: Vec<String>,
    /// Exactly this many GPUs per instance.
    #[arg(long, conflicts_with = "min_count")]
    count: Option<f64>,
    /// At least this many GPUs per instance.
    #[arg(long)]
    min_count: Option<f64>,
    /// Spot offers only.
    #[arg(long, conflicts_with = "on_demand")]
    spot: bool,
    /// On-demand offers only.
    #[arg(long)]
    on_demand: bool,
    /// Clouds to search (aws, azure, gcp, cudo, nebius, hyperbolic), comma separated.
    #[arg(long, value_delimiter = ',')]
    cloud: Vec<String>,
    /// Region globs, e.g. 'us-*', or the region groups europe, us and asia (every
    /// region of each cloud there).
    #[arg(long, value_delimiter = ',')]
    region: Vec<String>,
    /// Minimum memory per GPU, GiB.
    #[arg(long)]
    min_gpu_memory_gib: Option<f64>,
    /// Maximum USD per GPU-hour.
    #[arg(long)]
    max_price_per_gpu_hour: Option<f64>,
    /// Only prices at most this old (`365d`, `52w`); undated prices are left out too.
    #[arg(long)]
    max_price_age: Option<String>,
    /// Rank prices on the vendored stale list too (AWS P4/P5 prices from before the 2025
    /// price cut); each is marked STALE with its reason.
    #[arg(long)]
    include_stale_prices: bool,
    /// Place a pool instead of listing offers: on-demand nodes always running. Ranks
    /// (cloud, region, instance type) by the pool's expected monthly bill, like the
    /// `gpu_pool_placement` data source (needs one --gpu and a whole --count).
    #[arg(long, conflicts_with_all = ["spot", "on_demand", "min_count"])]
    floor: Option<u32>,
    /// With --floor: nodes running on average (default: the floor); those above the
    /// floor are priced as spot.
    #[arg(long, requires = "floor")]
    expected: Option<u32>,
    /// Refresh prices from the clouds' price APIs first (cached for 6 h; see `live` in the
    /// data source docs). Failing sources fall back to the embedded snapshot with a warning.
    #[arg(long)]
    live: bool,
    /// How many rows to show.
    #[arg(long, default_value_t = 10)]
    limit: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// How `offers` prints.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// An aligned table; the chosen (cheapest) row is marked with `*`.
    Table,
    /// A JSON array of offers with the data sources' field names.
    Json,
}

fn build(args: &OffersArgs) -> Result<OfferQuery, String> {
    let mut q = OfferQuery::default()
        .with_gpu_names(&args.gpu)
        .map_err(|e| format!("--gpu: {e}"))?;
    q.gpu_count = args
        .count
        .map(GpuCount::Exact)
        .or(args.min_count.map(GpuCount::AtLeast));
    q.capacity = match (args.spot, args.on_demand) {
        (true, _) => Capacity::Spot,
        (_, true) => Capacity::OnDemand,
        _ => Capacity::Either,
    };
    for c in &args.cloud {
        q.clouds
            .push(c.parse().map_err(|e| format!("--cloud: {e}"))?);
    }
    q.regions = args.region.clone();
    q.min_vram_gib = args.min_gpu_memory_gib;
    q.max_price_per_gpu_hour = args.max_price_per_gpu_hour;
    q.limit = Some(args.limit);
    let age = args
        .max_price_age
        .as_deref()
        .map(str::parse::<MaxPriceAge>)
        .transpose()
        .map_err(|e| format!("--max-price-age: {e}"))?;
    q.freshness = Freshness::at_most(age).including_stale(args.include_stale_prices);
    Ok(q)
}

/// Refreshes live prices for `query`, drawing a progress bar on stderr.
fn live_catalog(query: &OfferQuery) -> Result<std::sync::Arc<Catalog>, String> {
    use gpu_core::catalog::live::ProgressEvent;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed}] live prices: {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    let progress = |event: ProgressEvent| match event {
        ProgressEvent::SourceStarted { source, scopes } => {
            bar.set_message(format!("{source}: starting ({scopes} scope(s))"))
        }
        ProgressEvent::CacheHit { source, scope } => {
            bar.set_message(format!("{source} {scope}: cached"))
        }
        ProgressEvent::PageFetched {
            source,
            scope,
            page,
            of,
        } => bar.set_message(format!(
            "{source} {scope}: page {page}{}",
            of.map(|n| format!(" of {n}")).unwrap_or_default()
        )),
        ProgressEvent::SourceFinished {
            source,
            rows_updated,
        } => bar.println(format!("{source}: {rows_updated} offers updated")),
    };
    let refreshed = runtime.block_on(crate::live::LiveCache::default().get(
        None,
        query,
        &progress,
        &gpu_core::cancel::Cancel::new(),
    ));
    bar.finish_and_clear();
    for w in &refreshed.warnings {
        eprintln!("warning: {w}");
    }
    Ok(refreshed.catalog)
}

/// The placement flags, when `--floor` asks for a placement.
fn placement_args(args: &OffersArgs) -> Option<PlacementArgs> {
    let floor = args.floor?;
    Some(PlacementArgs {
        gpu: args.gpu.clone(),
        count: args.count,
        floor,
        expected: args.expected.unwrap_or(floor),
        clouds: if args.cloud.is_empty() {
            vec!["aws".into(), "azure".into(), "gcp".into()]
        } else {
            args.cloud.clone()
        },
        regions: args.region.clone(),
        max_price_age: args.max_price_age.clone(),
        include_stale_prices: args.include_stale_prices,
    })
}

/// `--floor`: ranks the places of a pool by its whole bill.
fn run_placement(args: &OffersArgs, p: &PlacementArgs, catalog: &Catalog) -> ExitCode {
    let q = match placement_cli::build(p) {
        Ok(q) => q,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let live = if args.live {
        let scope = OfferQuery {
            gpus: vec![q.gpu],
            gpu_count: Some(GpuCount::Exact(f64::from(q.gpu_count))),
            clouds: q.clouds.clone(),
            regions: q.regions.clone(),
            ..OfferQuery::default()
        };
        match live_catalog(&scope) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let catalog = live.as_deref().unwrap_or(catalog);
    let (records, matched) = match placement_cli::run(&q, catalog, args.limit) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("no place for the pool: {e}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        Format::Json => match serde_json::to_string_pretty(&records) {
            Ok(s) => outln!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Format::Table => {
            out!("{}", placement_cli::table(&records));
            eprintln!(
                "{} of {matched} places, by expected monthly bill ({} on-demand + {} spot nodes, 730 h); catalog: {}",
                records.len(),
                q.floor_nodes(),
                q.spot_nodes(),
                catalog.origin().label
            );
        }
    }
    ExitCode::SUCCESS
}

/// Runs the command against `catalog` (or, with `--live`, a refreshed copy of it).
pub fn run(args: &OffersArgs, catalog: &Catalog) -> ExitCode {
    if let Some(p) = placement_args(args) {
        return run_placement(args, &p, catalog);
    }
    let live = match build(args) {
        Ok(q) if args.live => match live_catalog(&q) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    let catalog = live.as_deref().unwrap_or(catalog);
    let today = gpu_core::time::today_days();
    let result = build(args).and_then(|q| query::run(catalog, &q).map_err(|e| e.to_string()));
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let records: Vec<OfferRecord> = result
        .items
        .iter()
        .map(|p| OfferRecord::of(p, today))
        .collect();
    match args.format {
        Format::Json => match serde_json::to_string_pretty(&records) {
            Ok(s) => outln!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        // No rows, no table: the line below says why nothing matched.
        Format::Table if records.is_empty() => {}
        Format::Table => out!("{}", table(&records)),
    }
    if let Some(empty) = &result.empty {
        eprintln!("no offer matches: {empty}");
        return ExitCode::FAILURE;
    }
    if matches!(args.format, Format::Table) {
        eprintln!(
            "{} of {} matching offers; catalog: {}",
            records.len(),
            result.matched,
            catalog.origin().label
        );
    }
    ExitCode::SUCCESS
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x}"))
}

/// Renders records as an aligned table, the first (chosen) row marked `*`.
pub fn table(records: &[OfferRecord]) -> String {
    let header = [
        "",
        "CLOUD",
        "REGION",
        "ZONE",
        "INSTANCE TYPE",
        "GPUS",
        "VRAM/GPU",
        "CAPACITY",
        "$/GPU-HOUR",
        "$/HOUR",
        "PRICE DATE",
    ];
    let rows: Vec<[String; 11]> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            [
                if i == 0 { "*".into() } else { String::new() },
                r.cloud.clone(),
                r.region.clone(),
                r.zone.clone().unwrap_or_else(|| "-".into()),
                r.instance_type.clone(),
                format!("{}x{}", r.gpu_count, r.gpu),
                r.gpu_memory_gib
                    .map_or_else(|| "-".into(), |m| format!("{} GiB", opt(Some(m)))),
                if r.spot {
                    "spot".into()
                } else {
                    "on-demand".into()
                },
                format!("${:.4}", r.price_per_gpu_hour),
                format!("${:.4}", r.price_per_hour),
                match (&r.as_of, r.price_age_days, &r.stale_reason) {
                    (_, _, Some(_)) => "STALE".into(),
                    (Some(d), Some(age), None) => format!("{d} ({age}d old)"),
                    _ => "undated".into(),
                },
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let numeric = |i: usize| i == 8 || i == 9;
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if numeric(i) {
                    format!("{c:>w$}", w = widths[i])
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
    for r in records {
        if let Some(why) = &r.stale_reason {
            out.push_str(&format!(
                "STALE {} {} {}: {why}\n",
                r.region,
                r.instance_type,
                if r.spot { "spot" } else { "on-demand" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: OffersArgs,
    }

    #[test]
    fn table_marks_the_chosen_row_and_aligns() {
        let args = T::parse_from([
            "t", "--gpu", "H100", "--count", "8", "--spot", "--cloud", "aws,gcp",
        ])
        .a;
        let q = build(&args).unwrap();
        let r = query::run(Catalog::embedded(), &q).unwrap();
        let records: Vec<OfferRecord> = r.items.iter().map(|p| OfferRecord::of(p, 0)).collect();
        assert!(!records.is_empty());
        assert!(
            records
                .iter()
                .all(|r| r.spot && r.gpu == "H100" && r.gpu_count == 8.0)
        );
        let t = table(&records);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].starts_with('*'));
        assert!(!lines[2].starts_with('*'));
        let col = lines[0].find("$/GPU-HOUR").unwrap() + "$/GPU-HOUR".len();
        assert!(
            lines[1..]
                .iter()
                .all(|l| l[..col].ends_with(|c: char| c.is_ascii_digit()))
        );
    }

    #[test]
    fn stale_prices_are_left_out_unless_asked_for_and_then_say_why() {
        let rows = |extra: &[&str]| {
            let mut argv = vec!["t", "--gpu", "H100", "--count", "8", "--on-demand"];
            argv.extend_from_slice(&["--cloud", "aws", "--region", "us-west-2", "--limit", "50"]);
            argv.extend_from_slice(extra);
            let q = build(&T::parse_from(argv).a).unwrap();
            let r = query::run(Catalog::embedded(), &q).unwrap();
            r.items
                .iter()
                .map(|p| OfferRecord::of(p, 0))
                .collect::<Vec<_>>()
        };
        // p5.48xlarge's us-west-2 on-demand price predates the 2025 cut: not ranked.
        assert!(rows(&[]).iter().all(|r| r.instance_type != "p5.48xlarge"));
        let with = rows(&["--include-stale-prices"]);
        let p5 = with
            .iter()
            .find(|r| r.instance_type == "p5.48xlarge")
            .unwrap();
        let why = p5.stale_reason.as_deref().unwrap();
        assert!(why.contains("predates the 2025-06 AWS P4/P5 price reduction"));
        let t = table(&with);
        assert!(
            t.contains("STALE us-west-2 p5.48xlarge on-demand: predates"),
            "{t}"
        );
    }

    #[test]
    fn bad_cloud_is_an_error() {
        let args = T::parse_from(["t", "--cloud", "mars"]).a;
        assert!(build(&args).unwrap_err().starts_with("--cloud"));
    }
}
