//! Cost numbers checked against the catalog rows they come from.

use super::*;
use crate::catalog::Catalog;
use crate::freshness::Freshness;
use crate::pool::tests::{catalog, config, spec_of};
use crate::pool::{self, ChosenType, NodePoolSpec};

/// The pool's spec and types (1 on-demand floor, 1–4 nodes of 8 × H100 in us-east-1).
fn h100() -> (NodePoolSpec, Vec<ChosenType>) {
    let s = spec_of(&config());
    let t = pool::instance_types(&s, &catalog(), 3, &Freshness::any());
    (s, t)
}

/// The cheapest price of `instance_type` in us-east-1 read straight from the catalog rows.
fn row_price(c: &Catalog, instance_type: &str, spot: bool) -> Option<f64> {
    c.offers()
        .iter()
        .filter(|o| o.region == "us-east-1" && o.instance_type == instance_type)
        .filter_map(|o| o.price(spot))
        .reduce(f64::min)
}

#[test]
fn numbers_equal_price_times_nodes() {
    let (s, t) = h100();
    let p = preview(&s, &t, None).unwrap();
    let c = catalog();
    let od = row_price(&c, "p5.48xlarge", false).unwrap();
    let spot = row_price(&c, "p5.48xlarge", true).unwrap();
    assert_eq!((od, spot), (55.04, 25.0));
    assert!(
        (p.hourly_usd - od).abs() < 1e-9,
        "1 on-demand at min_nodes = 1"
    );
    assert!((p.hourly_usd_max - (od + 3.0 * spot)).abs() < 1e-9);
    assert!((p.monthly_usd - od * 730.0).abs() < 1e-6);
    assert!((p.monthly_usd_max - (od + 3.0 * spot) * 730.0).abs() < 1e-6);
    assert_eq!(p.monthly_delta_usd, p.monthly_usd);
    assert!(!p.spot_upper_bound);
    let sp = p.spot.as_ref().unwrap();
    assert_eq!(
        (sp.row.origin.source.as_str(), sp.row.zone.as_deref()),
        ("src-b", Some("use1-az2"))
    );
    assert_eq!(sp.row.origin.as_of.as_deref(), Some("2026-07-21"));
    assert_eq!(p.on_demand.as_ref().unwrap().row.origin.source, "src-a");
}

#[test]
fn spot_min_above_floor() {
    let mut s = spec_of(&config());
    s.min_nodes = 3;
    let t = pool::instance_types(&s, &catalog(), 3, &Freshness::any());
    let p = preview(&s, &t, None).unwrap();
    assert!((p.hourly_usd - (55.04 + 2.0 * 25.0)).abs() < 1e-9);
}

#[test]
fn on_demand_only() {
    let mut c = config();
    c.spot = false;
    c.min_nodes = 2;
    let s = spec_of(&c);
    let t = pool::instance_types(&s, &catalog(), 3, &Freshness::any());
    let p = preview(&s, &t, None).unwrap();
    assert!((p.hourly_usd - 2.0 * 55.04).abs() < 1e-9);
    assert!((p.hourly_usd_max - 4.0 * 55.04).abs() < 1e-9);
    assert!(p.spot.is_none());
}

#[test]
fn upper_bound_without_spot_price() {
    let mut c = config();
    c.gpu = "A10G".into();
    c.gpu_count = 1;
    let s = spec_of(&c);
    let t = pool::instance_types(&s, &catalog(), 3, &Freshness::any());
    let p = preview(&s, &t, None).unwrap();
    let od = row_price(&catalog(), "g5.xlarge", false).unwrap();
    assert!(p.spot_upper_bound);
    assert!(p.notes.iter().any(|n| n.contains("upper bound")));
    assert!((p.hourly_usd_max - 4.0 * od).abs() < 1e-9);
    assert!(p.summary().contains("upper bound"), "{}", p.summary());
}

#[test]
fn delta_and_summary() {
    let (s, t) = h100();
    let before = preview(&s, &t, None).unwrap();
    let mut bigger = s.clone();
    bigger.min_nodes = 2;
    let after = preview(&bigger, &t, Some((&before).into())).unwrap();
    assert!((after.monthly_delta_usd - 25.0 * 730.0).abs() < 1e-6);
    assert!(after.monthly_delta_usd_max.abs() < 1e-6);
    assert_eq!(
        before.summary(),
        "+$40,179.20/month, 1 on-demand + up to 3 spot p5.48xlarge in us-east-1 \
         (up to $94,929.20/month at max_nodes)"
    );
    assert!(
        after
            .summary()
            .starts_with("+$18,250.00/month, 1 on-demand + 1–3 spot")
    );
    let smaller = preview(&s, &t, Some((&after).into())).unwrap();
    assert!(smaller.summary().starts_with("-$18,250.00/month"));
}

#[test]
fn budget() {
    let (s, t) = h100();
    let p = preview(&s, &t, None).unwrap();
    check_budget(&p, 100_000.0).unwrap();
    let e = check_budget(&p, 50_000.0).unwrap_err();
    let m = e.to_string();
    for w in [
        "`train`",
        "$94,929.20/month",
        "max_nodes = 4",
        "$40,179.20/month",
        "$50,000.00",
        "by $44,929.20",
    ] {
        assert!(m.contains(w), "{w}: {m}");
    }
}

#[test]
fn unpriced_is_an_error() {
    let (s, _) = h100();
    let t = vec![ChosenType {
        instance_type: "p5.48xlarge".into(),
        on_demand: None,
        spot: None,
    }];
    let e = preview(&s, &t, None).unwrap_err();
    assert!(
        e.to_string()
            .contains("no on-demand price for p5.48xlarge in us-east-1"),
        "{e}"
    );
}

/// A reservation of `kind` with a known id at `usd` per GPU-hour.
fn reservation(usd: f64) -> crate::pool::PoolReservation {
    crate::pool::PoolReservation {
        commitment_id: Some("gpu-tf-0123456789abcdef".into()),
        kind: crate::commitment::CommitmentKind::GcpCommitment,
        usd_per_gpu_hour: Some(usd),
    }
}

#[test]
fn a_reservation_prices_the_floor_at_the_commitment_and_the_rest_at_spot() {
    let (mut s, t) = h100();
    s.reservation = Some(reservation(4.0));
    let p = preview(&s, &t, None).unwrap();
    // 1 reserved node of 8 GPUs at 4.00 per GPU-hour; up to 3 spot nodes at 25.00.
    assert!((p.hourly_usd - 32.0).abs() < 1e-9, "{}", p.hourly_usd);
    assert!((p.hourly_usd_max - (32.0 + 3.0 * 25.0)).abs() < 1e-9);
    assert!(
        p.on_demand.is_none(),
        "no on-demand node outside the reservation"
    );
    let r = p.reserved.as_ref().unwrap();
    assert_eq!(
        r.row.origin.source, "gcp_commitment (reservation.usd_per_gpu_hour)",
        "the kind, not the id: the id is unknown at plan when bought in the same apply"
    );
    assert_eq!(p.reserved_nodes(), 1);
    let summary = p.summary();
    assert!(summary.contains("1 reserved + up to 3 spot"), "{summary}");
}

#[test]
fn without_spot_the_nodes_above_a_reserved_floor_are_on_demand() {
    let mut c = config();
    c.spot = false;
    c.min_nodes = 2;
    let mut s = spec_of(&c);
    s.reservation = Some(reservation(4.0));
    let t = pool::instance_types(&s, &catalog(), 3, &Freshness::any());
    let p = preview(&s, &t, None).unwrap();
    assert!(
        (p.hourly_usd - 2.0 * 32.0).abs() < 1e-9,
        "2 reserved at min_nodes"
    );
    assert!((p.hourly_usd_max - (2.0 * 32.0 + 2.0 * 55.04)).abs() < 1e-9);
    assert!(
        p.summary().contains("2 reserved + up to 2 on-demand"),
        "{}",
        p.summary()
    );
}

#[test]
fn an_unknown_reservation_price_is_an_error_not_zero() {
    let (mut s, t) = h100();
    let mut r = reservation(4.0);
    r.usd_per_gpu_hour = None;
    s.reservation = Some(r);
    assert!(preview(&s, &t, None).is_err());
}

#[test]
fn the_warning_pieces_put_the_money_first_and_every_price_in_one_line() {
    let (s, t) = h100();
    let p = preview(&s, &t, None).unwrap();
    let (od, spot) = (55.04, 25.0);
    assert_eq!(
        p.headline(),
        format!(
            "{}/month (up to {})",
            format_delta(od * 730.0),
            format_usd((od + 3.0 * spot) * 730.0)
        )
    );
    assert!(
        p.headline().starts_with("+$40,179.20/month"),
        "{}",
        p.headline()
    );
    assert_eq!(
        p.what(),
        "1 on-demand + up to 3 spot p5.48xlarge in us-east-1"
    );
    // Both prices are dated in the test catalog: no caution; the spot zone is named.
    let today = crate::time::days_of_date("2026-08-20").unwrap();
    let line = p.price_line(today);
    assert_eq!(
        line,
        "Prices: on-demand of 2026-07-20 (31 days old); spot of 2026-07-21 (30 days old), at use1-az2 (the cheapest zone; others may cost more)."
    );
    assert!(!line.contains('\n'));
    // An undated price says so once, with what to do.
    let mut undated = p.clone();
    if let Some(sp) = undated.spot.as_mut() {
        sp.row.origin.as_of = None;
    }
    let line = undated.price_line(today);
    assert!(line.contains("spot UNDATED"), "{line}");
    assert!(
        line.ends_with("`live = true` refreshes it, `max_price_age` leaves it out."),
        "{line}"
    );
}
