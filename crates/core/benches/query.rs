//! Offer query benchmark (std only, no harness): parse time of the embedded catalog, then
//! the median and p95 time of a few representative queries over the whole catalog.
//!
//! Run with `cargo bench -p gpu-core --bench query` (release profile). Prints figures and
//! asserts nothing. `BENCH_QUERY_MS` (default 1000) is the time budget of each query.
//! `acceptance/bench_offers.py` parses the `query` lines.

use std::hint::black_box;
use std::time::{Duration, Instant};

use gpu_core::catalog::{Catalog, EMBEDDED_CSV};
use gpu_core::query::{self, Capacity, GpuCount, OfferQuery};

/// (name, GPU model, count, capacity): the same queries as acceptance/bench_offers.py.
const QUERIES: &[(&str, &str, GpuCount, Capacity)] = &[
    ("h100x8_spot", "H100", GpuCount::Exact(8.0), Capacity::Spot),
    ("l4_either", "L4", GpuCount::AtLeast(1.0), Capacity::Either),
    (
        "a100_80gb_min4_on_demand",
        "A100-80GB",
        GpuCount::AtLeast(4.0),
        Capacity::OnDemand,
    ),
];

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("BENCH_QUERY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    );

    // the embedded catalog: first (lazy) load, then repeated parses of the same text
    let t = Instant::now();
    let catalog = Catalog::embedded();
    let first = t.elapsed();
    let mut parses: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let c = Catalog::from_csv(black_box(EMBEDDED_CSV.as_bytes()));
            let d = t.elapsed();
            black_box(c.map(|c| c.len()).unwrap_or(0));
            d
        })
        .collect();
    parses.sort();
    println!(
        "catalog: {} offers, {} bytes; parse median {:.1} us, p95 {:.1} us (n={}); first Catalog::embedded() {:.1} us",
        catalog.len(),
        EMBEDDED_CSV.len(),
        micros(percentile(&parses, 0.5)),
        micros(percentile(&parses, 0.95)),
        parses.len(),
        micros(first)
    );

    for &(name, gpu, count, capacity) in QUERIES {
        let q = match (OfferQuery {
            gpu_count: Some(count),
            capacity,
            ..OfferQuery::default()
        })
        .with_gpu_names([gpu])
        {
            Ok(q) => q,
            Err(e) => {
                eprintln!("query {name}: {e}");
                continue;
            }
        };
        // warm up, and the answer to print
        let (matched, best) = match query::run(catalog, &q) {
            Ok(r) => (r.matched, r.best().map(|b| b.price_per_gpu_hour)),
            Err(e) => {
                eprintln!("query {name}: {e}");
                continue;
            }
        };
        let mut samples = Vec::new();
        let start = Instant::now();
        while samples.len() < 50 || (start.elapsed() < budget && samples.len() < 100_000) {
            let t = Instant::now();
            let r = query::run(black_box(catalog), black_box(&q));
            let d = t.elapsed();
            black_box(r.map(|r| r.matched).unwrap_or(0));
            samples.push(d);
        }
        samples.sort();
        println!(
            "query {name}: median {:.1} us, p95 {:.1} us (n={}); matched {matched}, best {} USD/GPU-hour",
            micros(percentile(&samples, 0.5)),
            micros(percentile(&samples, 0.95)),
            samples.len(),
            best.map_or_else(|| "none".to_string(), |b| format!("{b}"))
        );
    }
}
