//! `catalog`: rebuilds the embedded snapshot from the live price sources (`make catalog`).
//! Every price a source answers gets that source and today's date; the others keep the
//! snapshot's price, source and date (or stay undated). Writes the CSV and a provenance
//! page next to it; with no source answering, writes nothing.

use crate::live::{clouds_of, config_for};
use gpu_core::catalog::Catalog;
use gpu_core::catalog::live::{self, LiveRefresh, ProgressEvent};
use gpu_core::offer::Cloud;
use gpu_core::query::OfferQuery;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `terraform-provider-gpu catalog`.
#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// Where to write the catalog CSV (the embedded snapshot is
    /// `crates/core/data/offers.csv`).
    #[arg(long)]
    out: PathBuf,
    /// Where to write the provenance page (default: `PROVENANCE.md` next to `--out`).
    #[arg(long)]
    provenance: Option<PathBuf>,
    /// Clouds to refresh (aws, azure, gcp), comma separated; default all three.
    #[arg(long, value_delimiter = ',')]
    cloud: Vec<String>,
    /// Region globs to refresh; default every region of the snapshot.
    #[arg(long, value_delimiter = ',')]
    region: Vec<String>,
}

/// Dated and undated prices of one cloud.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Dating {
    /// Prices with a date.
    pub dated: usize,
    /// Prices without one.
    pub undated: usize,
}

/// Dated and undated prices per cloud of `catalog`.
pub fn dating(catalog: &Catalog) -> BTreeMap<Cloud, Dating> {
    let mut out: BTreeMap<Cloud, Dating> = BTreeMap::new();
    for o in catalog.offers() {
        for spot in [false, true] {
            if o.price(spot).is_none() {
                continue;
            }
            let d = out.entry(o.cloud).or_default();
            if o.origin(spot).as_of.is_some() {
                d.dated += 1;
            } else {
                d.undated += 1;
            }
        }
    }
    out
}

/// The provenance page of a rebuilt catalog.
pub fn provenance(refresh: &LiveRefresh, base: &Catalog, today: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Provenance of the offer catalog\n");
    let _ = writeln!(
        s,
        "Written by `terraform-provider-gpu catalog` (`make catalog`) on {today}, from the live \
         price sources over {}. A price a source answered carries that source and the fetch \
         date in `on_demand_source`/`on_demand_as_of` or `spot_source`/`spot_as_of`; every \
         other price keeps the base's price, source and date, and stays undated where it had \
         none.\n",
        base.origin().label
    );
    let _ = writeln!(s, "## Sources\n");
    let _ = writeln!(
        s,
        "| source | rows updated | prices returned | scopes from network | from cache | failed | skipped |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for st in &refresh.stats {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            st.source,
            st.rows_updated,
            st.quotes,
            st.scopes_from_network,
            st.scopes_from_cache,
            st.scopes_failed,
            if st.skipped { "yes" } else { "no" }
        );
    }
    let _ = writeln!(s, "\n## Prices by date\n");
    let _ = writeln!(s, "| cloud | rows | dated prices | undated prices |");
    let _ = writeln!(s, "|---|---|---|---|");
    let counts = refresh.catalog.counts_per_cloud();
    for (cloud, d) in dating(&refresh.catalog) {
        let rows = counts.get(&cloud).map_or(0, |c| c.rows);
        let _ = writeln!(s, "| {cloud} | {rows} | {} | {} |", d.dated, d.undated);
    }
    let _ = writeln!(s, "\n## Warnings\n");
    if refresh.warnings.is_empty() {
        let _ = writeln!(s, "None: every source asked for answered.");
    }
    for w in &refresh.warnings {
        let _ = writeln!(s, "- {w}");
    }
    s
}

/// Writes `text` to `path` through a temporary file in the same directory.
fn write_atomic(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let tmp = match dir {
        Some(d) => d.join(format!(".catalog-{}.tmp", std::process::id())),
        None => PathBuf::from(format!(".catalog-{}.tmp", std::process::id())),
    };
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Runs the command.
pub fn run(args: &CatalogArgs) -> ExitCode {
    let mut query = OfferQuery {
        regions: args.region.clone(),
        ..OfferQuery::default()
    };
    for c in &args.cloud {
        match c.parse::<Cloud>() {
            Ok(cloud) if clouds_of(&OfferQuery::default()).contains(&cloud) => {
                query.clouds.push(cloud)
            }
            _ => {
                eprintln!("error: --cloud: `{c}` has no live price source; valid: aws, azure, gcp");
                return ExitCode::from(2);
            }
        }
    }
    let base = Catalog::embedded();
    let cfg = config_for(None, &query, base);
    let clouds = clouds_of(&query);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let progress = |event: ProgressEvent| {
        if let ProgressEvent::SourceFinished {
            source,
            rows_updated,
        } = event
        {
            eprintln!("{source}: {rows_updated} offers updated");
        }
    };
    let refreshed = runtime.block_on(live::refresh(base, &cfg, &clouds, &progress));
    for w in &refreshed.warnings {
        eprintln!("warning: {w}");
    }
    if refreshed.stats.iter().all(|s| s.rows_updated == 0) {
        eprintln!(
            "error: no live price source answered (offline?); {} left unchanged",
            args.out.display()
        );
        return ExitCode::FAILURE;
    }
    let mut csv = Vec::new();
    if let Err(e) = refreshed.catalog.write_csv(&mut csv) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let today = gpu_core::time::date_of(gpu_core::time::unix_now());
    let page = provenance(&refreshed, base, &today);
    let page_path = args.provenance.clone().unwrap_or_else(|| {
        args.out
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join("PROVENANCE.md")
    });
    for (path, bytes) in [(&args.out, csv.as_slice()), (&page_path, page.as_bytes())] {
        if let Err(e) = write_atomic(path, bytes) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        outln!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_dating_matches_its_vendoring_summary() {
        // The figures tools/vendor_offers.py prints for this snapshot (SOURCE.md).
        let d = dating(Catalog::embedded());
        assert_eq!(
            d[&Cloud::Aws],
            Dating {
                dated: 237,
                undated: 1261
            }
        );
        assert_eq!(
            d[&Cloud::Azure],
            Dating {
                dated: 1391,
                undated: 150
            }
        );
        assert_eq!(
            d[&Cloud::Gcp],
            Dating {
                dated: 768,
                undated: 0
            }
        );
    }

    #[test]
    fn the_provenance_page_lists_sources_dates_and_warnings() {
        let refresh = LiveRefresh {
            catalog: Catalog::embedded().clone(),
            warnings: vec!["gcp-billing-catalog: no API key".into()],
            stats: vec![live::SourceStats::new(live::SourceId::AzureRetail)],
        };
        let page = provenance(&refresh, Catalog::embedded(), "2026-12-03");
        assert!(page.contains("on 2026-12-03"), "{page}");
        assert!(page.contains("| azure-retail-prices | 0 |"), "{page}");
        assert!(page.contains("| aws | 1387 | 237 | 1261 |"), "{page}");
        assert!(page.contains("- gcp-billing-catalog: no API key"), "{page}");
    }
}
