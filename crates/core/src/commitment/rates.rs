//! Published commitment rates (Google Cloud committed use, Azure reserved instances) where
//! the cloud has no read-only price call: the vendored `data/commitment_rates.csv`, each
//! row with its source and date (see `data/SOURCE.md`). A rate is either a price per
//! instance-hour under the commitment or a discount against on demand; a machine without a
//! row has no known rate (never a made-up one).

use std::sync::OnceLock;

use serde::Deserialize;

use crate::offer::Cloud;

/// The vendored table.
const EMBEDDED: &str = include_str!("../../data/commitment_rates.csv");

/// One published rate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Rate {
    /// `gcp` or `azure`.
    pub cloud: String,
    /// Region as the cloud spells it.
    pub region: String,
    /// Machine type / VM size.
    pub instance_type: String,
    /// `1y` or `3y`.
    pub term: String,
    /// `monthly` or `upfront`.
    pub billing: String,
    /// USD per instance-hour under the commitment, when published as a price.
    pub usd_per_hour: Option<f64>,
    /// Discount against on demand (0.37 = 37 % off), when published as a discount.
    pub discount_vs_on_demand: Option<f64>,
    /// Where it was published.
    pub source: String,
    /// The date the source states (`YYYY-MM-DD`), empty when undated.
    pub as_of: Option<String>,
}

impl Rate {
    /// USD per instance-hour under the commitment: the published price, else on demand
    /// less the published discount (when the on-demand price is known).
    pub fn usd_per_hour(&self, on_demand_usd_per_hour: Option<f64>) -> Option<f64> {
        self.usd_per_hour.or_else(|| {
            self.discount_vs_on_demand
                .zip(on_demand_usd_per_hour)
                .map(|(d, od)| od * (1.0 - d))
        })
    }
}

/// Why the table did not parse (a bug in the vendored file: a unit test reads it).
#[derive(Debug, thiserror::Error)]
#[error("commitment_rates.csv line {line}: {message}")]
pub struct RatesError {
    line: usize,
    message: String,
}

/// Parses a rates table.
pub fn parse(text: &str) -> Result<Vec<Rate>, RatesError> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (i, row) in reader.deserialize::<Rate>().enumerate() {
        let r = row.map_err(|e| RatesError {
            line: i + 2,
            message: e.to_string(),
        })?;
        if !matches!(r.term.as_str(), "1y" | "3y")
            || !matches!(r.billing.as_str(), "monthly" | "upfront")
        {
            return Err(RatesError {
                line: i + 2,
                message: format!(
                    "term {:?} / billing {:?}: want 1y|3y and monthly|upfront",
                    r.term, r.billing
                ),
            });
        }
        if r.usd_per_hour.is_none() && r.discount_vs_on_demand.is_none() {
            return Err(RatesError {
                line: i + 2,
                message: "neither usd_per_hour nor discount_vs_on_demand".into(),
            });
        }
        out.push(r);
    }
    Ok(out)
}

/// The embedded table (parsed once; an unreadable table is empty, and a unit test fails).
pub fn embedded() -> &'static [Rate] {
    static TABLE: OnceLock<Vec<Rate>> = OnceLock::new();
    TABLE.get_or_init(|| parse(EMBEDDED).unwrap_or_default())
}

/// The published rate of `instance_type` in `region` for `term` (`1y`/`3y`) and `billing`,
/// if there is one.
pub fn lookup(
    cloud: Cloud,
    region: &str,
    instance_type: &str,
    term: &str,
    billing: &str,
) -> Option<&'static Rate> {
    embedded().iter().find(|r| {
        r.cloud == cloud.as_str()
            && r.region == region
            && r.instance_type.eq_ignore_ascii_case(instance_type)
            && r.term == term
            && r.billing == billing
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_table_parses_and_every_row_is_sourced() {
        let rows = parse(EMBEDDED).expect("vendored commitment_rates.csv parses");
        for r in &rows {
            assert!(!r.source.trim().is_empty(), "{r:?}");
            assert!(matches!(r.cloud.as_str(), "gcp" | "azure"), "{r:?}");
            if let Some(p) = r.usd_per_hour {
                assert!(p > 0.0, "{r:?}");
            }
            if let Some(d) = r.discount_vs_on_demand {
                assert!((0.0..1.0).contains(&d), "{r:?}");
            }
        }
    }

    #[test]
    fn the_google_rates_are_the_2026_07_30_prices_and_cover_g4() {
        let rows = embedded();
        assert_eq!(rows.len(), 724);
        assert!(
            rows.iter()
                .all(|r| r.as_of.as_deref() == Some("2026-07-30"))
        );
        let a3 = lookup(Cloud::Gcp, "us-central1", "a3-highgpu-8g", "1y", "monthly").unwrap();
        assert_eq!(a3.usd_per_hour, Some(61.383672));
        assert!(a3.source.contains("pricing.yml@fd66b26"), "{}", a3.source);
        assert!(lookup(Cloud::Gcp, "us-central1", "g4-standard-48", "3y", "monthly").is_some());
        // A2 Ultra has no published commitment price: no row, never an estimate.
        assert!(lookup(Cloud::Gcp, "us-central1", "a2-ultragpu-8g", "1y", "monthly").is_none());
    }

    #[test]
    fn a_discount_needs_the_on_demand_price() {
        let text = "cloud,region,instance_type,term,billing,usd_per_hour,discount_vs_on_demand,source,as_of\n\
                    gcp,us-central1,a3-highgpu-8g,1y,monthly,,0.37,test,2026-01-01\n";
        let rows = parse(text).unwrap();
        assert_eq!(rows[0].usd_per_hour(None), None);
        assert!((rows[0].usd_per_hour(Some(100.0)).unwrap() - 63.0).abs() < 1e-9);
        let bad = "cloud,region,instance_type,term,billing,usd_per_hour,discount_vs_on_demand,source,as_of\n\
                   gcp,us-central1,a3-highgpu-8g,2y,monthly,1,,test,\n";
        assert!(parse(bad).unwrap_err().to_string().contains("line 2"));
    }
}
