//! The offer snapshot compiled into the binary (`crates/core/data/offers.csv`, refreshed by
//! `tools/vendor_offers.py`).

use std::sync::LazyLock;

use super::{Catalog, CatalogOrigin, OriginKind};

/// The embedded snapshot's CSV text, exactly as vendored.
pub const EMBEDDED_CSV: &str = include_str!("../../data/offers.csv");

/// The embedded snapshot, parsed on first use.
pub(super) static EMBEDDED: LazyLock<Catalog> = LazyLock::new(|| {
    Catalog::from_csv(EMBEDDED_CSV.as_bytes())
        .map(|c| {
            c.with_origin(CatalogOrigin {
                kind: OriginKind::Embedded,
                label: "embedded snapshot (crates/core/data/offers.csv)".to_string(),
            })
        })
        // The file is vendored and checked by tests: failing here is a build defect.
        .unwrap_or_else(|e| panic!("embedded offer snapshot does not parse: {e}"))
});
