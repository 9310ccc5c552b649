//! A [`Catalog`]: a set of offers and where they came from. The default is the snapshot
//! embedded in the binary ([`Catalog::embedded`]); with the `live` feature, `live` refreshes
//! its prices from the clouds' price APIs.

mod csv;
mod embedded;
#[cfg(feature = "live")]
pub mod live;
mod stale;

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use crate::gpu::GpuLookupError;
use crate::offer::{Cloud, Offer};

pub use self::csv::{COLUMNS, LEGACY_COLUMNS};
pub use embedded::EMBEDDED_CSV;
pub use stale::STALE_CSV;

/// What kind of source a catalog was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginKind {
    /// The snapshot compiled into the binary (offline, no credentials).
    Embedded,
    /// A CSV file or stream in the embedded snapshot's format.
    Csv,
    /// A cloud's live price API.
    Live,
}

/// Where a catalog came from, for people: kind plus a free-text label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogOrigin {
    /// The kind of source.
    pub kind: OriginKind,
    /// Human description, e.g. `embedded snapshot crates/core/data/offers.csv`.
    pub label: String,
}

/// Row counts of one cloud in a catalog.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CloudCounts {
    /// Offers (rows).
    pub rows: usize,
    /// Offers with an on-demand price.
    pub on_demand_priced: usize,
    /// Offers with a spot price.
    pub spot_priced: usize,
    /// Offers with at least one price.
    pub priced: usize,
}

/// Why a catalog could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The CSV itself is malformed (quoting, field count, encoding).
    #[error("offer CSV: {0}")]
    Csv(#[from] ::csv::Error),
    /// The header row is not the expected one.
    #[error("offer CSV header is `{found}`; expected `{}`", COLUMNS.join(","))]
    Header {
        /// The header found.
        found: String,
    },
    /// A field has a value that is not valid for its column.
    #[error("offer CSV line {line}, column `{column}`: `{value}` {reason}")]
    Field {
        /// 1-based line number.
        line: u64,
        /// Column name.
        column: &'static str,
        /// The value found.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The `gpu_model` does not name a registry model.
    #[error("offer CSV line {line}: {source}")]
    Gpu {
        /// 1-based line number.
        line: u64,
        /// The lookup failure.
        source: GpuLookupError,
    },
    /// Two offers share (cloud, region, zone, instance type).
    #[error("duplicate offer {cloud}/{region}/{zone} {instance_type}", zone = .zone.as_deref().unwrap_or("-"))]
    Duplicate {
        /// Cloud.
        cloud: Cloud,
        /// Region.
        region: String,
        /// Zone.
        zone: Option<String>,
        /// Instance type.
        instance_type: String,
    },
}

/// A set of offers, unique by (cloud, region, zone, instance type), with its origin.
#[derive(Debug, Clone)]
pub struct Catalog {
    offers: Vec<Offer>,
    origin: CatalogOrigin,
}

impl Catalog {
    /// Builds a catalog, refusing two offers with the same (cloud, region, zone, type).
    pub fn new(offers: Vec<Offer>, origin: CatalogOrigin) -> Result<Self, CatalogError> {
        let mut seen = HashSet::with_capacity(offers.len());
        for o in &offers {
            if !seen.insert((o.cloud, &o.region, &o.zone, &o.instance_type)) {
                return Err(CatalogError::Duplicate {
                    cloud: o.cloud,
                    region: o.region.clone(),
                    zone: o.zone.clone(),
                    instance_type: o.instance_type.clone(),
                });
            }
        }
        Ok(Catalog { offers, origin })
    }

    /// The snapshot compiled into the binary, parsed once on first use.
    pub fn embedded() -> &'static Catalog {
        &embedded::EMBEDDED
    }

    /// Reads offers from CSV in the embedded snapshot's format (header [`COLUMNS`]), and
    /// flags the prices the vendored stale list names (still from the source it judged).
    pub fn from_csv<R: std::io::Read>(reader: R) -> Result<Self, CatalogError> {
        let mut offers = csv::parse(reader)?;
        stale::mark(&mut offers);
        Catalog::new(
            offers,
            CatalogOrigin {
                kind: OriginKind::Csv,
                label: "CSV".to_string(),
            },
        )
    }

    /// Writes the offers as CSV in the [`COLUMNS`] format, which [`Catalog::from_csv`] reads
    /// back: each price with its own source and date.
    pub fn write_csv<W: std::io::Write>(&self, out: W) -> Result<(), CatalogError> {
        csv::write(&self.offers, out)
    }

    /// The same catalog with another origin (e.g. the file name it was read from).
    pub fn with_origin(mut self, origin: CatalogOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// Every offer, in source order.
    pub fn offers(&self) -> &[Offer] {
        &self.offers
    }

    /// Where the offers came from.
    pub fn origin(&self) -> &CatalogOrigin {
        &self.origin
    }

    /// Number of offers.
    pub fn len(&self) -> usize {
        self.offers.len()
    }

    /// Whether the catalog has no offers.
    pub fn is_empty(&self) -> bool {
        self.offers.is_empty()
    }

    /// Row and priced-row counts per cloud (clouds without rows are absent).
    pub fn counts_per_cloud(&self) -> BTreeMap<Cloud, CloudCounts> {
        let mut map: BTreeMap<Cloud, CloudCounts> = BTreeMap::new();
        for o in &self.offers {
            let c = map.entry(o.cloud).or_default();
            c.rows += 1;
            c.on_demand_priced += usize::from(o.on_demand_usd_per_hour.is_some());
            c.spot_priced += usize::from(o.spot_usd_per_hour.is_some());
            c.priced +=
                usize::from(o.on_demand_usd_per_hour.is_some() || o.spot_usd_per_hour.is_some());
        }
        map
    }
}

impl fmt::Display for Catalog {
    /// `embedded snapshot … : 3342 offers (aws 1387, azure 1391, …)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} offers (", self.origin.label, self.offers.len())?;
        for (i, (cloud, c)) in self.counts_per_cloud().iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{cloud} {}", c.rows)?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests;
