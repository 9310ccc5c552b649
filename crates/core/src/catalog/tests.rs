use std::collections::BTreeMap;
use std::time::Instant;

use super::*;
use crate::gpu;
use crate::offer::PriceOrigin;

/// The embedded CSV's data lines split naively (no field before `source` holds a comma).
fn lines() -> Vec<Vec<&'static str>> {
    EMBEDDED_CSV
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.splitn(12, ',').take(11).collect())
        .collect()
}

#[test]
fn header_is_the_documented_one() {
    assert_eq!(EMBEDDED_CSV.lines().next().unwrap(), COLUMNS.join(","));
}

#[test]
fn counts_per_cloud_match_plain_line_counting() {
    let mut rows: BTreeMap<String, usize> = BTreeMap::new();
    let mut od: BTreeMap<String, usize> = BTreeMap::new();
    let mut spot: BTreeMap<String, usize> = BTreeMap::new();
    let mut priced: BTreeMap<String, usize> = BTreeMap::new();
    for f in lines() {
        *priced.entry(f[0].to_string()).or_default() +=
            usize::from(!f[9].is_empty() || !f[10].is_empty());
        *rows.entry(f[0].to_string()).or_default() += 1;
        *od.entry(f[0].to_string()).or_default() += usize::from(!f[9].is_empty());
        *spot.entry(f[0].to_string()).or_default() += usize::from(!f[10].is_empty());
    }
    let counts = Catalog::embedded().counts_per_cloud();
    assert_eq!(counts.len(), rows.len());
    for (cloud, c) in &counts {
        assert_eq!(c.rows, rows[cloud.as_str()], "{cloud}");
        assert_eq!(c.on_demand_priced, od[cloud.as_str()], "{cloud}");
        assert_eq!(c.spot_priced, spot[cloud.as_str()], "{cloud}");
        assert_eq!(c.priced, priced[cloud.as_str()], "{cloud}");
    }
    assert_eq!(Catalog::embedded().len(), lines().len());
    // The figures SOURCE.md gives for this snapshot.
    assert_eq!(Catalog::embedded().len(), 3342);
    assert_eq!(counts[&Cloud::Aws].spot_priced, 680);
    assert_eq!(counts[&Cloud::Azure].spot_priced, 150);
    assert_eq!(counts[&Cloud::Gcp].spot_priced, 384);
    assert_eq!(counts[&Cloud::Nebius].spot_priced, 8);
    assert_eq!(counts.values().map(|c| c.priced).sum::<usize>(), 2777);
}

#[test]
fn every_gpu_model_in_the_csv_resolves_to_itself() {
    for f in lines() {
        let m = gpu::lookup(f[4]).unwrap_or_else(|e| panic!("{}: {e}", f[4]));
        assert_eq!(m.name, f[4]);
    }
}

#[test]
fn fields_survive_parsing() {
    let by_line = lines();
    for (o, f) in Catalog::embedded().offers().iter().zip(&by_line) {
        assert_eq!(o.cloud.as_str(), f[0]);
        assert_eq!(o.region, f[1]);
        assert_eq!(o.zone.as_deref().unwrap_or(""), f[2]);
        assert_eq!(o.instance_type, f[3]);
        let num = |s: &str| (!s.is_empty()).then(|| s.parse::<f64>().unwrap());
        assert_eq!(o.gpu_count, num(f[5]));
        assert_eq!(o.gpu_memory_gib, num(f[6]));
        assert_eq!(o.vcpus, num(f[7]));
        assert_eq!(o.memory_gib, num(f[8]));
        assert_eq!(o.on_demand_usd_per_hour, num(f[9]));
        assert_eq!(o.spot_usd_per_hour, num(f[10]));
    }
    let o = &Catalog::embedded().offers()[0];
    assert!(o.source.contains("moto"));
    assert_eq!(
        o.on_demand_origin,
        PriceOrigin::default(),
        "no price, no origin"
    );
}

#[test]
fn each_price_has_its_own_origin() {
    let find = |cloud: Cloud, region: &str, t: &str| {
        Catalog::embedded()
            .offers()
            .iter()
            .find(|o| o.cloud == cloud && o.region == region && o.instance_type == t)
            .unwrap_or_else(|| panic!("{cloud} {region} {t}"))
    };
    // On-demand from Karpenter's 2026 price file, spot from the undated skypilot v6 table.
    let p4d = find(Cloud::Aws, "us-east-1", "p4d.24xlarge");
    assert_eq!(p4d.on_demand_origin.as_of.as_deref(), Some("2026-07-20"));
    assert!(
        p4d.on_demand_origin
            .source
            .starts_with("aws/karpenter-provider-aws@")
    );
    assert_eq!(p4d.spot_origin.as_of, None);
    assert!(p4d.spot_origin.source.starts_with("skypilot-catalog v6"));
    // One dated file priced both.
    let a2 = find(Cloud::Gcp, "us-central1", "a2-highgpu-1g");
    assert_eq!(a2.on_demand_origin, a2.spot_origin);
    assert_eq!(a2.spot_origin.as_of.as_deref(), Some("2026-08-03"));
    // Every price has a source; no priced row lacks one, no unpriced row has one.
    for o in Catalog::embedded().offers() {
        for spot in [false, true] {
            assert_eq!(
                o.price(spot).is_some(),
                !o.origin(spot).source.is_empty(),
                "{} {} {spot}",
                o.region,
                o.instance_type
            );
        }
    }
}

#[test]
fn writing_the_embedded_snapshot_gives_back_its_bytes() {
    let mut out = Vec::new();
    Catalog::embedded().write_csv(&mut out).unwrap();
    let written = String::from_utf8(out).unwrap();
    if written != EMBEDDED_CSV {
        let diff = written
            .lines()
            .zip(EMBEDDED_CSV.lines())
            .find(|(a, b)| a != b);
        panic!("first differing line: {diff:?}");
    }
    let again = Catalog::from_csv(written.as_bytes()).unwrap();
    assert_eq!(again.offers(), Catalog::embedded().offers());
}

#[test]
fn the_earlier_format_dates_both_prices_with_the_row() {
    let csv = format!(
        "{}\naws,us-east-1,,p5.48xlarge,H100,8,80,192,2048,55.04,20.5,src,2026-07-20\n",
        LEGACY_COLUMNS.join(",")
    );
    let c = Catalog::from_csv(csv.as_bytes()).unwrap();
    let o = &c.offers()[0];
    let both = PriceOrigin::new("src", Some("2026-07-20".into()));
    assert_eq!((&o.on_demand_origin, &o.spot_origin), (&both, &both));
    let bad = csv.replace("2026-07-20", "July");
    let err = Catalog::from_csv(bad.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("column `as_of`"), "{err}");
}

#[test]
fn embedded_parse_time() {
    let start = Instant::now();
    let c = Catalog::from_csv(EMBEDDED_CSV.as_bytes()).unwrap();
    let took = start.elapsed();
    println!(
        "parsed {} embedded offers ({} bytes) in {:.2} ms",
        c.len(),
        EMBEDDED_CSV.len(),
        took.as_secs_f64() * 1e3
    );
    // generous: the debug build of the test, on a loaded 2-core machine
    assert!(took.as_secs_f64() < 2.0, "{took:?}");
    let start = Instant::now();
    let e = Catalog::embedded();
    println!(
        "Catalog::embedded() first touch {:.2} ms: {e}",
        start.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(e.origin().kind, OriginKind::Embedded);
    assert!(e.to_string().contains("aws 1387"), "{e}");
}

fn csv_with(row: &str) -> String {
    format!("{}\n{row}\n", COLUMNS.join(","))
}

const GOOD: &str = "aws,us-east-1,,p5.48xlarge,H100,8,80,192,2048,55.04,,src,od-src,2026-07-20,,";

#[test]
fn good_row_parses() {
    let c = Catalog::from_csv(csv_with(GOOD).as_bytes()).unwrap();
    let o = &c.offers()[0];
    assert_eq!(o.gpu.name, "H100");
    assert_eq!(o.gpu_count, Some(8.0));
    assert_eq!(o.spot_usd_per_hour, None);
    assert_eq!(o.zone, None);
    assert_eq!(
        o.on_demand_origin,
        PriceOrigin::new("od-src", Some("2026-07-20".into()))
    );
    assert_eq!(o.spot_origin, PriceOrigin::default());
    assert_eq!(c.origin().kind, OriginKind::Csv);
}

#[test]
fn bad_rows_are_errors_naming_line_and_column() {
    let cases = [
        (GOOD.replace(",55.04,", ",-1,"), "on_demand_usd_per_hour"),
        (GOOD.replace(",55.04,", ",abc,"), "on_demand_usd_per_hour"),
        (GOOD.replace(",H100,8,", ",H100,0,"), "gpu_count"),
        (GOOD.replace("aws,", "oracle,"), "cloud"),
        (GOOD.replace("2026-07-20", "July"), "on_demand_as_of"),
        (GOOD.replace(",p5.48xlarge,", ",,"), "instance_type"),
    ];
    for (row, column) in cases {
        let err = Catalog::from_csv(csv_with(&row).as_bytes()).unwrap_err();
        match &err {
            CatalogError::Field {
                line, column: c, ..
            } => {
                assert_eq!(*line, 2);
                assert_eq!(*c, column);
            }
            other => panic!("{row}: {other}"),
        }
        assert!(err.to_string().contains("line 2"), "{err}");
    }
    let err =
        Catalog::from_csv(csv_with(&GOOD.replace(",H100,", ",A100,")).as_bytes()).unwrap_err();
    assert!(matches!(err, CatalogError::Gpu { line: 2, .. }), "{err}");
    assert!(err.to_string().contains("ambiguous"), "{err}");
}

#[test]
fn bad_header_and_duplicates_are_errors() {
    let err = Catalog::from_csv("cloud,region\naws,x\n".as_bytes()).unwrap_err();
    assert!(matches!(err, CatalogError::Header { .. }), "{err}");
    let two = format!("{}\n{GOOD}\n{GOOD}\n", COLUMNS.join(","));
    let err = Catalog::from_csv(two.as_bytes()).unwrap_err();
    assert!(matches!(err, CatalogError::Duplicate { .. }), "{err}");
    let short = format!("{}\naws,us-east-1\n", COLUMNS.join(","));
    assert!(matches!(
        Catalog::from_csv(short.as_bytes()),
        Err(CatalogError::Csv(_))
    ));
}
