//! The vendored stale list (`data/stale_prices.csv`): catalog prices known, or suspected, to
//! predate a price cut. [`mark`] flags them on load so that rankings leave them out and every
//! answer that shows one says why.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::offer::{Cloud, Offer};

/// The stale list's CSV text, exactly as vendored by `tools/vendor_prices.py`.
pub const STALE_CSV: &str = include_str!("../../data/stale_prices.csv");

/// The source the list judged: a price whose origin no longer names it (a live refresh, a
/// newer snapshot) is not the price the list calls stale.
const JUDGED_SOURCE: &str = "skypilot-catalog v6";

/// (cloud, region, instance type, spot) → reason.
type Reasons = HashMap<(Cloud, String, String, bool), String>;

static REASONS: LazyLock<Reasons> = LazyLock::new(|| {
    parse(STALE_CSV).unwrap_or_else(|e| panic!("vendored stale_prices.csv does not parse: {e}"))
});

/// Reads the list: header `cloud,region,instance_type,price,reason,evidence`, `price` being
/// `on_demand` or `spot`.
fn parse(text: &str) -> Result<Reasons, String> {
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    if header[..]
        != [
            "cloud",
            "region",
            "instance_type",
            "price",
            "reason",
            "evidence",
        ]
    {
        return Err(format!("header `{}`", header.join(",")));
    }
    let mut out = Reasons::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| e.to_string())?;
        let cloud: Cloud = row[0].parse().map_err(|e| format!("row {}: {e}", i + 2))?;
        let spot = match &row[3] {
            "spot" => true,
            "on_demand" => false,
            other => return Err(format!("row {}: price `{other}`", i + 2)),
        };
        out.insert(
            (cloud, row[1].to_string(), row[2].to_string(), spot),
            row[4].to_string(),
        );
    }
    Ok(out)
}

/// Flags each listed price of `offers` that still comes from the judged source and is undated.
pub(super) fn mark(offers: &mut [Offer]) {
    for o in offers.iter_mut() {
        for spot in [false, true] {
            if o.price(spot).is_none() {
                continue;
            }
            let key = (o.cloud, o.region.clone(), o.instance_type.clone(), spot);
            let Some(why) = REASONS.get(&key) else {
                continue;
            };
            let origin = if spot {
                &mut o.spot_origin
            } else {
                &mut o.on_demand_origin
            };
            if origin.as_of.is_none() && origin.source.starts_with(JUDGED_SOURCE) {
                origin.stale = Some(why.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn the_vendored_list_parses_and_marks_the_embedded_prices_it_names() {
        assert_eq!(REASONS.len(), 54);
        let offers = Catalog::embedded().offers();
        let stale = |spot: bool| {
            offers
                .iter()
                .filter(|o| o.origin(spot).stale.is_some())
                .count()
        };
        // Zone rows: 55 on-demand and 62 spot (the list's own count of zone rows).
        assert_eq!((stale(false), stale(true)), (55, 62));
        let p5 = offers
            .iter()
            .find(|o| o.region == "us-west-2" && o.instance_type == "p5.48xlarge")
            .expect("p5 in us-west-2");
        let why = p5.on_demand_origin.stale.as_deref().unwrap();
        assert!(
            why.contains("predates the 2025-06 AWS P4/P5 price reduction"),
            "{why}"
        );
        assert!(
            p5.on_demand_origin
                .labelled_source()
                .contains("(STALE: predates")
        );
        // us-east-1's on-demand price is current (2026-07-20), its spot price is listed.
        let east = offers
            .iter()
            .find(|o| o.region == "us-east-1" && o.instance_type == "p5.48xlarge")
            .unwrap();
        assert!(east.on_demand_origin.stale.is_none());
        assert!(
            east.spot_origin
                .stale
                .as_deref()
                .unwrap()
                .contains("unverified")
        );
    }

    #[test]
    fn a_price_from_another_source_or_dated_is_not_the_one_the_list_judged() {
        let mut offers: Vec<Offer> = Catalog::embedded()
            .offers()
            .iter()
            .filter(|o| o.region == "us-west-2" && o.instance_type == "p5.48xlarge")
            .cloned()
            .collect();
        for o in &mut offers {
            o.on_demand_origin.stale = None;
            o.spot_origin.stale = None;
        }
        offers[0].on_demand_origin = crate::offer::PriceOrigin::new(
            "AWS price list bulk API",
            Some("2026-12-01".to_string()),
        );
        mark(&mut offers);
        assert!(offers[0].on_demand_origin.stale.is_none());
        assert!(offers[0].spot_origin.stale.is_some());
    }

    #[test]
    fn a_malformed_list_is_refused() {
        assert!(parse("cloud,region\naws,x\n").is_err());
        let bad = "cloud,region,instance_type,price,reason,evidence\naws,r,t,reserved,why,e\n";
        assert!(parse(bad).unwrap_err().contains("reserved"));
    }
}
