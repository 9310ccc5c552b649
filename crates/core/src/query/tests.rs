use super::*;
use crate::catalog::{Catalog, CatalogOrigin, EMBEDDED_CSV, OriginKind};

fn embedded() -> &'static Catalog {
    Catalog::embedded()
}

fn q() -> OfferQuery {
    OfferQuery::default()
}

fn gpus(names: &[&str]) -> OfferQuery {
    q().with_gpu_names(names).unwrap()
}

fn run_ok<'a>(c: &'a Catalog, query: &OfferQuery) -> QueryResult<'a> {
    run(c, query).unwrap_or_else(|e| panic!("{e}"))
}

/// A small hand-made offer.
#[allow(clippy::too_many_arguments)]
fn offer(
    cloud: Cloud,
    region: &str,
    zone: Option<&str>,
    itype: &str,
    gpu: &str,
    count: f64,
    od: Option<f64>,
    spot: Option<f64>,
) -> Offer {
    Offer {
        cloud,
        region: region.into(),
        zone: zone.map(Into::into),
        instance_type: itype.into(),
        gpu: gpu::lookup(gpu).unwrap(),
        gpu_count: Some(count),
        gpu_memory_gib: None,
        vcpus: Some(8.0 * count),
        memory_gib: Some(64.0 * count),
        on_demand_usd_per_hour: od,
        spot_usd_per_hour: spot,
        source: "test".into(),
        on_demand_origin: Default::default(),
        spot_origin: Default::default(),
    }
}

fn catalog(offers: Vec<Offer>) -> Catalog {
    Catalog::new(
        offers,
        CatalogOrigin {
            kind: OriginKind::Csv,
            label: "test".into(),
        },
    )
    .unwrap()
}

fn small() -> Catalog {
    use Cloud::*;
    catalog(vec![
        offer(
            Aws,
            "us-east-1",
            None,
            "p5.48xlarge",
            "H100",
            8.0,
            Some(55.04),
            None,
        ),
        offer(
            Aws,
            "us-east-1",
            Some("use1-az4"),
            "p5.48xlarge",
            "H100",
            8.0,
            Some(98.32),
            Some(30.0),
        ),
        offer(
            Azure,
            "eastus",
            None,
            "Standard_ND96isr_H100_v5",
            "H100",
            8.0,
            Some(98.32),
            Some(40.0),
        ),
        offer(
            Gcp,
            "us-central1",
            None,
            "a3-highgpu-1g",
            "H100",
            1.0,
            Some(11.06),
            Some(3.5),
        ),
        offer(
            Gcp,
            "us-central1",
            None,
            "a3-highgpu-8g",
            "H100",
            8.0,
            Some(88.49),
            Some(28.0),
        ),
        offer(
            Gcp,
            "europe-west4",
            None,
            "g2-standard-4",
            "L4",
            1.0,
            Some(0.7),
            Some(0.28),
        ),
        offer(
            Aws,
            "us-east-1",
            None,
            "g6.xlarge",
            "L4",
            1.0,
            Some(0.8048),
            None,
        ),
        offer(
            Aws,
            "us-east-1",
            None,
            "g6f.large",
            "L4",
            0.125,
            Some(0.2),
            None,
        ),
        offer(
            Cudo,
            "se-smedjebacken-1",
            None,
            "epyc-a100",
            "A100-80GB",
            1.0,
            Some(1.5),
            None,
        ),
    ])
}

fn types<'a>(r: &'a QueryResult<'_>) -> Vec<(&'a str, bool)> {
    r.items
        .iter()
        .map(|i| (i.offer.instance_type.as_str(), i.spot))
        .collect()
}

// ---------------------------------------------------------------- filters

#[test]
fn either_gives_two_items_per_offer_with_both_prices() {
    let c = small();
    let r = run_ok(&c, &gpus(&["H100"]));
    // 5 H100 offers, 4 with both prices: 9 items, less one on-demand duplicate (two
    // p5.48xlarge rows in us-east-1, one zonal: on-demand is regional, so one stays)
    assert_eq!(r.items.len(), 8);
    assert_eq!(r.matched, 8);
    let p5_on_demand: Vec<f64> = r
        .items
        .iter()
        .filter(|i| !i.spot && i.offer.instance_type == "p5.48xlarge")
        .map(|i| i.price_per_hour)
        .collect();
    assert_eq!(p5_on_demand, vec![55.04]);
    let spot = run_ok(
        &c,
        &OfferQuery {
            capacity: Capacity::Spot,
            ..gpus(&["H100"])
        },
    );
    assert_eq!(spot.items.len(), 4);
    assert!(spot.items.iter().all(|i| i.spot));
    let od = run_ok(
        &c,
        &OfferQuery {
            capacity: Capacity::OnDemand,
            ..gpus(&["H100"])
        },
    );
    assert_eq!(od.items.len(), 4); // 5 rows, the two us-east-1 p5 rows count once
    assert!(od.items.iter().all(|i| !i.spot));
}

#[test]
fn gpu_filter() {
    let c = small();
    let r = run_ok(&c, &gpus(&["nvidia-l4"]));
    assert!(r.items.iter().all(|i| i.offer.gpu.name == "L4"));
    let r = run_ok(&c, &gpus(&["L4", "A100-80GB"]));
    assert!(r.items.iter().any(|i| i.offer.gpu.name == "A100-80GB"));
    let err = q().with_gpu_names(["L4", "A100"]).unwrap_err();
    assert!(matches!(err, QueryError::Gpu { index: 1, .. }));
    assert!(
        err.to_string()
            .starts_with("gpus[1]: GPU model `A100` is ambiguous"),
        "{err}"
    );
}

#[test]
fn gpu_count_filter() {
    let c = small();
    let exact = OfferQuery {
        gpu_count: Some(GpuCount::Exact(8.0)),
        ..q()
    };
    assert!(
        run_ok(&c, &exact)
            .items
            .iter()
            .all(|i| i.offer.gpu_count == Some(8.0))
    );
    let frac = OfferQuery {
        gpu_count: Some(GpuCount::Exact(0.125)),
        ..q()
    };
    assert_eq!(types(&run_ok(&c, &frac)), [("g6f.large", false)]);
    let at_least = OfferQuery {
        gpu_count: Some(GpuCount::AtLeast(1.0)),
        ..q()
    };
    let r = run_ok(&c, &at_least);
    assert!(r.items.iter().all(|i| i.offer.gpu_count.unwrap() >= 1.0));
    assert!(!types(&r).contains(&("g6f.large", false)));
    // unknown counts never match: they cannot be priced per GPU
    let mut unknown = small().offers().to_vec();
    unknown[0].gpu_count = None;
    let c2 = catalog(unknown);
    assert!(
        !run_ok(&c2, &q())
            .items
            .iter()
            .any(|i| i.offer.gpu_count.is_none())
    );
}

#[test]
fn vram_filter_uses_nominal_memory_for_whole_gpus() {
    let c = embedded();
    let r = run_ok(
        c,
        &OfferQuery {
            min_vram_gib: Some(24.0),
            clouds: vec![Cloud::Aws],
            ..gpus(&["L4"])
        },
    );
    // EC2 reports 22.35 GiB for an L4; the whole GPU still counts as 24
    assert!(r.items.iter().any(|i| i.offer.instance_type == "g6.xlarge"));
    // partial L4s (g6f) report their slice and fail
    assert!(r.items.iter().all(|i| i.offer.gpu_count.unwrap() >= 1.0));
    let big = run_ok(
        c,
        &OfferQuery {
            min_vram_gib: Some(141.0),
            ..q()
        },
    );
    assert!(!big.items.is_empty());
    assert!(
        big.items
            .iter()
            .all(|i| i.offer.vram_per_gpu_gib().unwrap() >= 141.0)
    );
}

#[test]
fn cloud_region_zone_filters() {
    let c = small();
    let r = run_ok(
        &c,
        &OfferQuery {
            clouds: vec![Cloud::Gcp],
            ..q()
        },
    );
    assert!(r.items.iter().all(|i| i.offer.cloud == Cloud::Gcp));
    let r = run_ok(
        &c,
        &OfferQuery {
            regions: vec!["US-*".into()],
            ..q()
        },
    );
    assert!(!r.items.is_empty());
    assert!(r.items.iter().all(|i| i.offer.region.starts_with("us-")));
    let r = run_ok(
        &c,
        &OfferQuery {
            regions: vec!["europe-west?".into(), "eastus".into()],
            ..q()
        },
    );
    let regions: std::collections::BTreeSet<&str> =
        r.items.iter().map(|i| i.offer.region.as_str()).collect();
    assert_eq!(
        regions.into_iter().collect::<Vec<_>>(),
        ["eastus", "europe-west4"]
    );
    let r = run_ok(
        &c,
        &OfferQuery {
            zones: vec!["USE1-*".into()],
            ..q()
        },
    );
    assert_eq!(types(&r), [("p5.48xlarge", true), ("p5.48xlarge", false)]);
}

#[test]
fn instance_type_vcpu_memory_filters() {
    let c = small();
    let r = run_ok(
        &c,
        &OfferQuery {
            exclude_instance_types: vec!["A3-*".into(), "p5*".into()],
            ..gpus(&["H100"])
        },
    );
    assert!(r.items.iter().all(|i| i.offer.cloud == Cloud::Azure));
    let r = run_ok(
        &c,
        &OfferQuery {
            min_vcpus: Some(64.0),
            ..q()
        },
    );
    assert!(r.items.iter().all(|i| i.offer.vcpus.unwrap() >= 64.0));
    assert!(!r.items.is_empty());
    let r = run_ok(
        &c,
        &OfferQuery {
            min_memory_gib: Some(100.0),
            ..q()
        },
    );
    assert!(r.items.iter().all(|i| i.offer.memory_gib.unwrap() >= 100.0));
    // unknown memory never satisfies a minimum
    let mut o = small().offers().to_vec();
    o[0].memory_gib = None;
    let c2 = catalog(o);
    let r = run_ok(
        &c2,
        &OfferQuery {
            min_memory_gib: Some(1.0),
            ..q()
        },
    );
    assert!(r.items.iter().all(|i| i.offer.memory_gib.is_some()));
}

#[test]
fn max_price_is_per_gpu_hour() {
    let c = small();
    let r = run_ok(
        &c,
        &OfferQuery {
            max_price_per_gpu_hour: Some(3.75),
            ..gpus(&["H100"])
        },
    );
    // p5 spot 30/8 = 3.75, a3-8g spot 28/8 = 3.5, a3-1g spot 3.5, Azure 40/8 = 5 out
    assert_eq!(
        types(&r),
        [
            ("a3-highgpu-1g", true),
            ("a3-highgpu-8g", true),
            ("p5.48xlarge", true)
        ]
    );
    assert!(r.items.iter().all(|i| i.price_per_gpu_hour <= 3.75));
}

#[test]
fn limit_truncates_after_ranking() {
    let c = small();
    let all = run_ok(&c, &q());
    let two = run_ok(
        &c,
        &OfferQuery {
            limit: Some(2),
            ..q()
        },
    );
    assert_eq!(two.items, all.items[..2]);
    assert_eq!(two.matched, all.matched);
}

// ---------------------------------------------------------------- ranking

#[test]
fn ranking_ties_break_by_price_then_location_then_on_demand_first() {
    use Cloud::*;
    let c = catalog(vec![
        offer(Gcp, "b", None, "x", "L4", 1.0, Some(1.0), Some(1.0)),
        offer(Aws, "b", Some("z2"), "x", "L4", 1.0, Some(1.0), None),
        offer(Aws, "b", None, "y", "L4", 1.0, Some(1.0), None),
        offer(Aws, "b", None, "x", "L4", 1.0, Some(1.0), None),
        offer(Aws, "a", None, "x", "L4", 2.0, Some(2.0), None),
        offer(Aws, "a", None, "w", "L4", 1.0, Some(0.5), None),
    ]);
    let r = run_ok(&c, &q());
    let keys: Vec<String> = r.items.iter().map(|i| i.key().to_string()).collect();
    assert_eq!(
        keys,
        [
            "aws/a w (on-demand)", // 0.5 per GPU
            "aws/b x (on-demand)", // 1.0/GPU, 1.0/h, zone none first
            "aws/b y (on-demand)",
            // "aws/b/z2 x (on-demand)" is the same regional on-demand offer as "aws/b x"
            "gcp/b x (on-demand)", // on-demand before spot
            "gcp/b x (spot)",
            "aws/a x (on-demand)", // 1.0/GPU but 2.0/h
        ]
    );
}

#[test]
fn ranking_is_deterministic_on_the_embedded_catalog() {
    let a = run_ok(embedded(), &q());
    let b = run_ok(embedded(), &q());
    assert_eq!(a.items, b.items);
    for w in a.items.windows(2) {
        assert_eq!(ranking_order(&w[0], &w[1]), std::cmp::Ordering::Less);
    }
    // reversing the catalog's row order changes nothing
    let mut rev = embedded().offers().to_vec();
    rev.reverse();
    let rc = catalog(rev);
    let c = run_ok(&rc, &q());
    let ka: Vec<_> = a.items.iter().map(|i| i.key()).collect();
    let kc: Vec<_> = c.items.iter().map(|i| i.key()).collect();
    assert_eq!(ka, kc);
}

// ---------------------------------------------------------------- hysteresis

fn prefer(c: &Catalog, itype: &str, spot: bool, pct: f64) -> OfferQuery {
    let o = c
        .offers()
        .iter()
        .find(|o| o.instance_type == itype)
        .unwrap();
    OfferQuery {
        prefer: Some(o.key(spot)),
        min_saving_percent: pct,
        ..gpus(&["H100"])
    }
}

#[test]
fn hysteresis_keeps_preferred_unless_saving_is_large_enough() {
    let c = small();
    // best: a3-highgpu-1g spot 3.5/GPU-h; Azure spot 5.0: saving 30 %
    let keep = run_ok(&c, &prefer(&c, "Standard_ND96isr_H100_v5", true, 40.0));
    assert_eq!(types(&keep)[0], ("Standard_ND96isr_H100_v5", true));
    let h = keep.hysteresis.unwrap();
    assert!(h.found && h.kept);
    assert!((h.saving_percent - 30.0).abs() < 1e-9, "{h:?}");
    // the rest stays ranked
    for w in keep.items[1..].windows(2) {
        assert!(ranking_order(&w[0], &w[1]).is_lt());
    }
    let switch = run_ok(&c, &prefer(&c, "Standard_ND96isr_H100_v5", true, 30.0));
    assert_eq!(types(&switch)[0], ("a3-highgpu-1g", true));
    assert!(!switch.hysteresis.unwrap().kept);
}

#[test]
fn hysteresis_on_ties_and_missing_preferred() {
    let c = small();
    // a3-highgpu-8g spot is 3.5/GPU-h too, ranked after the 1g by price per hour: a tie keeps it
    let tie = run_ok(&c, &prefer(&c, "a3-highgpu-8g", true, 0.0));
    assert_eq!(types(&tie)[0], ("a3-highgpu-8g", true));
    assert_eq!(types(&tie)[1], ("a3-highgpu-1g", true));
    // a preferred item filtered out does nothing
    let mut gone = prefer(&c, "a3-highgpu-1g", true, 50.0);
    gone.capacity = Capacity::OnDemand;
    let r = run_ok(&c, &gone);
    assert!(!r.hysteresis.as_ref().unwrap().found);
    assert_eq!(
        r.items,
        run_ok(
            &c,
            &OfferQuery {
                prefer: None,
                ..gone
            }
        )
        .items
    );
}

// ---------------------------------------------------------------- validation

#[test]
fn validation_names_fields_and_valid_values() {
    let bad = OfferQuery {
        gpu_count: Some(GpuCount::Exact(0.0)),
        max_price_per_gpu_hour: Some(-1.0),
        min_vram_gib: Some(f64::NAN),
        regions: vec!["us-east-1".into(), "us-[".into()],
        zones: vec!["".into()],
        min_saving_percent: 150.0,
        limit: Some(0),
        ..q()
    };
    let QueryError::Invalid(errors) = run(&small(), &bad).unwrap_err() else {
        panic!("expected Invalid");
    };
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "gpu_count",
            "min_vram_gib",
            "max_price_per_gpu_hour",
            "min_saving_percent",
            "limit",
            "regions[1]",
            "zones[0]"
        ]
    );
    let msg = QueryError::Invalid(errors).to_string();
    assert!(
        msg.contains("`gpu_count` = 0: must be a number above 0"),
        "{msg}"
    );
    assert!(
        msg.contains("`max_price_per_gpu_hour` = -1: must be a price above 0"),
        "{msg}"
    );
    assert!(
        msg.contains("`regions[1]` = \"us-[\": invalid glob"),
        "{msg}"
    );
    assert!(msg.contains("\"us-*\""), "{msg}");
    assert!(validate(&q()).is_ok());
    let neg = OfferQuery {
        gpu_count: Some(GpuCount::AtLeast(-2.0)),
        ..q()
    };
    assert!(validate(&neg).is_err());
}

// ---------------------------------------------------------------- explanations

#[test]
fn explains_which_filter_emptied_the_result() {
    let c = small();
    let r = run_ok(
        &c,
        &OfferQuery {
            regions: vec!["mars-*".into()],
            ..gpus(&["H100"])
        },
    );
    assert!(r.items.is_empty());
    let e = r.empty.unwrap();
    assert_eq!(e.filter, Some(Filter::Regions(vec!["mars-*".into()])));
    assert_eq!(e.matched_before, 5);
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "no offer left after filter `regions = [\"mars-*\"]`: 5 candidates matched the earlier filters"
        ),
        "{msg}"
    );
    // nearest: cheapest H100 items, all failing only the region filter
    assert_eq!(e.nearest.len(), 5);
    assert_eq!(e.nearest[0].item.offer.instance_type, "a3-highgpu-1g");
    assert!(
        e.nearest
            .iter()
            .all(|n| n.failed == [Filter::Regions(vec!["mars-*".into()])])
    );
    assert!(e.nearest.iter().all(|n| n.item.offer.gpu.name == "H100"));
}

#[test]
fn explains_capacity_and_price() {
    let c = small();
    let r = run_ok(
        &c,
        &OfferQuery {
            capacity: Capacity::Spot,
            clouds: vec![Cloud::Cudo],
            ..q()
        },
    );
    let e = r.empty.unwrap();
    assert_eq!(e.filter, Some(Filter::Capacity(Capacity::Spot)));
    assert_eq!(e.matched_before, 1);
    let r = run_ok(
        &c,
        &OfferQuery {
            max_price_per_gpu_hour: Some(0.1),
            ..gpus(&["H100"])
        },
    );
    let e = r.empty.unwrap();
    assert_eq!(e.filter, Some(Filter::MaxPricePerGpuHour(0.1)));
    assert_eq!(e.matched_before, 9);
    assert!(e.to_string().contains("9 priced candidates matched"), "{e}");
    assert_eq!(e.nearest[0].failed, [Filter::MaxPricePerGpuHour(0.1)]);
}

#[test]
fn explains_a_model_nobody_offers_with_other_models() {
    let r = run_ok(
        embedded(),
        &OfferQuery {
            gpu_count: Some(GpuCount::Exact(8.0)),
            ..gpus(&["GB300"])
        },
    );
    let e = r.empty.unwrap();
    assert_eq!(
        e.filter,
        Some(Filter::Gpus(vec![gpu::lookup("GB300").unwrap()]))
    );
    assert!(e.first_filter);
    assert_eq!(e.matched_before, embedded().len());
    assert!(e.to_string().contains("the catalog has 3342 offers"), "{e}");
    // nearest are other models that pass everything else
    assert!(!e.nearest.is_empty());
    for n in &e.nearest {
        assert_eq!(n.failed.len(), 1, "{n}");
        assert_eq!(n.item.offer.gpu_count, Some(8.0));
    }
    let empty = catalog(vec![]);
    let r = run_ok(&empty, &q());
    assert_eq!(r.empty.unwrap().to_string(), "the catalog has no offers");
}

// ------------------------------------------------- against an independent computation

/// The embedded CSV's rows, parsed by hand: (cloud, region, zone, type, gpu, count, od, spot).
type Row = (
    String,
    String,
    String,
    String,
    String,
    Option<f64>,
    Option<f64>,
    Option<f64>,
);

fn rows() -> Vec<Row> {
    let num = |s: &str| (!s.is_empty()).then(|| s.parse::<f64>().unwrap());
    EMBEDDED_CSV
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.splitn(12, ',').collect();
            (
                f[0].into(),
                f[1].into(),
                f[2].into(),
                f[3].into(),
                f[4].into(),
                num(f[5]),
                num(f[9]),
                num(f[10]),
            )
        })
        .collect()
}

#[test]
fn run_agrees_with_plain_loops() {
    let rows = rows();
    // (gpu, exact count or 0 for any, cloud or "", spot/od/either, region prefix)
    let cases: &[(&str, f64, &str, &str, &str)] = &[
        ("H100", 8.0, "", "either", ""),
        ("H100", 8.0, "aws", "od", ""),
        ("A100-80GB", 8.0, "azure", "spot", ""),
        ("H100-NVL", 1.0, "azure", "od", ""),
        ("L4", 0.0, "", "either", ""),
        ("L4", 1.0, "gcp", "spot", "us-"),
        ("A100-80GB", 0.0, "", "od", ""),
        ("A100-40GB", 8.0, "", "spot", "us-"),
        ("H200", 0.0, "", "either", ""),
        ("A10G", 1.0, "aws", "spot", "eu-"),
        ("RTXPRO6000", 1.0, "gcp", "either", ""),
        ("T4", 4.0, "azure", "od", ""),
        ("MI300X", 8.0, "", "od", ""),
    ];
    for &(gpu_name, count, cloud, cap, region) in cases {
        // plain loop: the minimum price per GPU-hour and how many items
        let mut best = f64::INFINITY;
        let mut n = 0;
        let mut all_prices: Vec<f64> = Vec::new();
        // on-demand is regional: one per (cloud, region, type), whatever the zone rows
        let mut on_demand: std::collections::BTreeMap<(String, String, String), f64> =
            Default::default();
        for r in &rows {
            if r.4 != gpu_name || (!cloud.is_empty() && r.0 != cloud) || !r.1.starts_with(region) {
                continue;
            }
            let Some(c) = r.5 else { continue };
            if count > 0.0 && c != count {
                continue;
            }
            let mut prices = Vec::new();
            if cap != "spot"
                && let Some(p) = r.6
            {
                let key = (r.0.clone(), r.1.clone(), r.3.clone());
                let slot = on_demand.entry(key).or_insert(f64::INFINITY);
                *slot = slot.min(p / c);
            }
            if cap != "od" {
                prices.extend(r.7);
            }
            for p in prices {
                n += 1;
                all_prices.push(p / c);
                if p / c < best {
                    best = p / c;
                }
            }
        }
        for &per_gpu in on_demand.values() {
            n += 1;
            all_prices.push(per_gpu);
            best = best.min(per_gpu);
        }
        let query = OfferQuery {
            gpu_count: (count > 0.0).then_some(GpuCount::Exact(count)),
            clouds: if cloud.is_empty() {
                vec![]
            } else {
                vec![cloud.parse().unwrap()]
            },
            regions: if region.is_empty() {
                vec![]
            } else {
                vec![format!("{region}*")]
            },
            capacity: match cap {
                "spot" => Capacity::Spot,
                "od" => Capacity::OnDemand,
                _ => Capacity::Either,
            },
            // The plain loops read every price; the stale list has its own tests.
            freshness: crate::freshness::Freshness::any().including_stale(true),
            ..gpus(&[gpu_name])
        };
        let r = run_ok(embedded(), &query);
        let case = format!("{gpu_name} x{count} {cloud} {cap} {region}");
        assert_eq!(r.matched, n, "{case}");
        assert!(n > 0, "case matches nothing, pick another: {case}");
        let got = r.best().unwrap().price_per_gpu_hour;
        assert_eq!(got, best, "{case}");
        // and the whole ranking is the sorted list of those prices
        all_prices.sort_by(f64::total_cmp);
        let ranked: Vec<f64> = r.items.iter().map(|i| i.price_per_gpu_hour).collect();
        assert_eq!(ranked, all_prices, "{case}");
        println!(
            "{case}: {n} items, best {got:.4} $/GPU-h ({})",
            r.best().unwrap().key()
        );
    }
}

// ---------------------------------------------------------------- properties

mod props {
    use super::*;
    use proptest::prelude::*;

    const MODELS: [&str; 4] = ["H100", "L4", "A100-80GB", "T4"];
    const REGIONS: [&str; 3] = ["us-east-1", "eu-west-1", "asia-1"];

    fn arb_offer() -> impl Strategy<Value = Offer> {
        (
            0..Cloud::ALL.len(),
            0..REGIONS.len(),
            prop::option::of(0..2u8),
            0..6u8,
            0..MODELS.len(),
            prop::sample::select(vec![0.5, 1.0, 2.0, 4.0, 8.0]),
            prop::option::of(1..2000u32),
            prop::option::of(1..2000u32),
        )
            .prop_map(|(c, r, z, t, m, n, od, spot)| {
                let mut o = offer(
                    Cloud::ALL[c],
                    REGIONS[r],
                    None,
                    &format!("type-{t}"),
                    MODELS[m],
                    n,
                    od.map(|p| f64::from(p) / 100.0),
                    spot.map(|p| f64::from(p) / 100.0),
                );
                o.zone = z.map(|z| format!("{}-z{z}", REGIONS[r]));
                o
            })
    }

    /// Offers unique by key (later duplicates dropped).
    fn arb_catalog() -> impl Strategy<Value = Catalog> {
        prop::collection::vec(arb_offer(), 0..40).prop_map(|mut v| {
            let mut seen = std::collections::HashSet::new();
            v.retain(|o| {
                seen.insert((
                    o.cloud,
                    o.region.clone(),
                    o.zone.clone(),
                    o.instance_type.clone(),
                ))
            });
            catalog(v)
        })
    }

    fn arb_query() -> impl Strategy<Value = OfferQuery> {
        (
            prop::option::of(0..MODELS.len()),
            prop::option::of(prop::sample::select(vec![0.5, 1.0, 8.0])),
            prop::sample::select(vec![Capacity::Spot, Capacity::OnDemand, Capacity::Either]),
            prop::option::of(1..20u32),
            prop::option::of(0..REGIONS.len()),
        )
            .prop_map(|(m, n, capacity, max, r)| OfferQuery {
                gpus: m
                    .map(|m| vec![gpu::lookup(MODELS[m]).unwrap()])
                    .unwrap_or_default(),
                gpu_count: n.map(GpuCount::AtLeast),
                capacity,
                max_price_per_gpu_hour: max.map(f64::from),
                regions: r.map(|r| vec![REGIONS[r].to_string()]).unwrap_or_default(),
                ..OfferQuery::default()
            })
    }

    proptest! {
        #[test]
        fn ranking_is_sorted_and_deterministic(c in arb_catalog(), q in arb_query()) {
            let a = run(&c, &q).unwrap();
            for w in a.items.windows(2) {
                prop_assert!(ranking_order(&w[0], &w[1]).is_lt());
            }
            if let Some(first) = a.best() {
                prop_assert!(a.items.iter().all(|i| first.price_per_gpu_hour <= i.price_per_gpu_hour));
            }
            // row order of the catalog does not matter
            let mut rev = c.offers().to_vec();
            rev.reverse();
            let rc = catalog(rev);
            let b = run(&rc, &q).unwrap();
            let ka: Vec<_> = a.items.iter().map(|i| i.key()).collect();
            let kb: Vec<_> = b.items.iter().map(|i| i.key()).collect();
            prop_assert_eq!(ka, kb);
            // every item passes every filter; nothing passing is missing
            prop_assert_eq!(a.empty.is_some(), a.items.is_empty());
            for i in &a.items {
                prop_assert!(q.capacity.allows(i.spot));
                prop_assert!(q.max_price_per_gpu_hour.is_none_or(|m| i.price_per_gpu_hour <= m));
                prop_assert!(q.gpus.is_empty() || q.gpus[0].name == i.offer.gpu.name);
            }
        }

        #[test]
        fn hysteresis_is_bounded(c in arb_catalog(), q in arb_query(), pick in 0..40usize, pct in 0..60u32) {
            let plain = run(&c, &q).unwrap();
            prop_assume!(!plain.items.is_empty());
            let preferred = plain.items[pick % plain.items.len()];
            let pq = OfferQuery { prefer: Some(preferred.key()), min_saving_percent: f64::from(pct), ..q.clone() };
            let r = run(&c, &pq).unwrap();
            // the same items, only the first may have moved
            prop_assert_eq!(r.items.len(), plain.items.len());
            let cheapest = plain.items[0].price_per_gpu_hour;
            let first = r.items[0];
            prop_assert!(first.has_key(&preferred.key()) || first == plain.items[0]);
            if first.has_key(&preferred.key()) {
                // kept: the best did not save min_saving_percent (or anything at all)
                let saving = (first.price_per_gpu_hour - cheapest) / first.price_per_gpu_hour * 100.0;
                prop_assert!(saving <= 0.0 || saving < f64::from(pct));
            } else {
                // switched: the saving reached the threshold, and the best is the cheapest
                let saving = (preferred.price_per_gpu_hour - cheapest) / preferred.price_per_gpu_hour * 100.0;
                prop_assert!(saving > 0.0 && saving >= f64::from(pct));
            }
            // the rest stays in ranking order
            for w in r.items[1..].windows(2) {
                prop_assert!(ranking_order(&w[0], &w[1]).is_lt());
            }
            prop_assert!(r.hysteresis.unwrap().found);
        }

        #[test]
        fn empty_results_name_a_filter_that_removes_everything(c in arb_catalog(), q in arb_query()) {
            let r = run(&c, &q).unwrap();
            if let Some(e) = r.empty {
                if c.is_empty() {
                    prop_assert!(e.filter.is_none());
                } else {
                    prop_assert!(e.filter.is_some());
                    prop_assert!(e.first_filter || e.matched_before > 0);
                }
                for n in &e.nearest {
                    prop_assert!(!n.failed.is_empty());
                }
            }
        }
    }
}

// ---------------------------------------------------------------- availability

fn scored(cloud: Cloud, region: &str, itype: &str, score: f64) -> crate::availability::PlaceScore {
    crate::availability::PlaceScore {
        cloud,
        region: region.into(),
        zone: None,
        instance_type: itype.into(),
        availability: crate::availability::Availability {
            score,
            source: "test".into(),
            as_of: "2026-12-06".into(),
        },
    }
}

#[test]
fn prefer_available_ranks_known_good_then_unknown_then_short_by_price_within() {
    use Cloud::*;
    let c = catalog(vec![
        offer(Aws, "us-east-1", None, "a.x", "H100", 1.0, None, Some(1.0)),
        offer(Aws, "us-west-2", None, "a.x", "H100", 1.0, None, Some(2.0)),
        offer(Azure, "eastus", None, "b.x", "H100", 1.0, None, Some(3.0)),
        offer(Azure, "westus", None, "b.x", "H100", 1.0, None, Some(4.0)),
        offer(
            Gcp,
            "us-central1",
            None,
            "c.x",
            "H100",
            1.0,
            Some(5.0),
            None,
        ),
    ]);
    let mut scores = crate::availability::Scores::new();
    scores.add(scored(Aws, "us-east-1", "a.x", 0.1));
    scores.add(scored(Azure, "westus", "b.x", 0.9));
    scores.add(scored(Azure, "eastus", "b.x", 0.5));
    let order = |q: &OfferQuery, s: Option<&crate::availability::Scores>| -> Vec<String> {
        run_with(&c, q, s)
            .unwrap()
            .items
            .iter()
            .map(|i| i.offer.region.clone())
            .collect()
    };
    let by_price = vec!["us-east-1", "us-west-2", "eastus", "westus", "us-central1"];
    assert_eq!(order(&q(), Some(&scores)), by_price, "off: by price");
    let on = OfferQuery {
        prefer_available: Some(0.5),
        ..q()
    };
    assert_eq!(order(&on, None), by_price, "no scores: by price");
    // At or above 0.5 by price (eastus 3.0, westus 4.0), then unscored (us-west-2,
    // us-central1: on-demand items take no spot score), then the short us-east-1.
    assert_eq!(
        order(&on, Some(&scores)),
        vec!["eastus", "westus", "us-west-2", "us-central1", "us-east-1"]
    );
    // The preferred item stays first only within the best tier.
    let short = c.offers().iter().find(|o| o.region == "us-east-1").unwrap();
    let sticky = OfferQuery {
        prefer: Some(short.key(true)),
        min_saving_percent: 99.0,
        ..on.clone()
    };
    let r = run_with(&c, &sticky, Some(&scores)).unwrap();
    assert_eq!(r.items[0].offer.region, "eastus");
    assert!(!r.hysteresis.unwrap().found);
    let good = c.offers().iter().find(|o| o.region == "westus").unwrap();
    let kept = OfferQuery {
        prefer: Some(good.key(true)),
        min_saving_percent: 99.0,
        ..on.clone()
    };
    let r = run_with(&c, &kept, Some(&scores)).unwrap();
    assert_eq!(r.items[0].offer.region, "westus");
    assert_eq!(r.items[1].offer.region, "eastus");
    // The threshold is checked.
    let bad = OfferQuery {
        prefer_available: Some(1.5),
        ..q()
    };
    let err = run_with(&c, &bad, Some(&scores)).unwrap_err().to_string();
    assert!(
        err.contains("min_availability") && err.contains("from 0 to 1"),
        "{err}"
    );
}
