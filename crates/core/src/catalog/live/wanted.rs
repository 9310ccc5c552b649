//! What to ask a cloud for: the regions and GPU instance types of its catalog rows.

use std::collections::BTreeSet;

use crate::catalog::Catalog;
use crate::offer::{Cloud, Offer};

use super::config::LiveConfig;

/// The rows of one cloud that a refresh may update, and their regions and types.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// The rows (clones of the catalog's), in catalog order.
    pub rows: Vec<Offer>,
    /// Their distinct regions, sorted.
    pub regions: BTreeSet<String>,
    /// Their distinct instance types, sorted.
    pub types: BTreeSet<String>,
}

impl Wanted {
    /// The rows of `cloud` in `base` in the regions `cfg` selects.
    pub fn of(base: &Catalog, cloud: Cloud, cfg: &LiveConfig) -> Self {
        let rows: Vec<Offer> = base
            .offers()
            .iter()
            .filter(|o| o.cloud == cloud && cfg.wants_region(&o.region))
            .cloned()
            .collect();
        let regions = rows.iter().map(|o| o.region.clone()).collect();
        let types = rows.iter().map(|o| o.instance_type.clone()).collect();
        Wanted {
            rows,
            regions,
            types,
        }
    }

    /// Whether there is nothing to refresh.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Instance types of the rows in `region`, sorted.
    pub fn types_in(&self, region: &str) -> BTreeSet<String> {
        self.rows
            .iter()
            .filter(|o| o.region == region)
            .map(|o| o.instance_type.clone())
            .collect()
    }
}
