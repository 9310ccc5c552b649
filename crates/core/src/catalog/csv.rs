//! Parsing the offer CSV format (the embedded snapshot's) into [`Offer`]s.
//!
//! The format gives each price its own source and date ([`COLUMNS`]). The earlier format
//! ([`LEGACY_COLUMNS`], one `as_of` per row) is still read: there the row's `source` and
//! `as_of` stand for both prices, as they meant.

use std::collections::HashMap;

use super::CatalogError;
use crate::gpu::{self, GpuModel};
use crate::offer::{Offer, PriceOrigin};

/// The header of the offer CSV format, in order.
pub const COLUMNS: [&str; 16] = [
    "cloud",
    "region",
    "zone",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "on_demand_usd_per_hour",
    "spot_usd_per_hour",
    "source",
    "on_demand_source",
    "on_demand_as_of",
    "spot_source",
    "spot_as_of",
];

/// The header of the earlier format: one `as_of` for the whole row.
pub const LEGACY_COLUMNS: [&str; 13] = [
    "cloud",
    "region",
    "zone",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "on_demand_usd_per_hour",
    "spot_usd_per_hour",
    "source",
    "as_of",
];

/// Parses every row; the first bad row is the error.
pub(super) fn parse<R: std::io::Read>(reader: R) -> Result<Vec<Offer>, CatalogError> {
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(reader);
    let header = rdr.headers()?.clone();
    let legacy = if header.iter().eq(COLUMNS.iter().copied()) {
        false
    } else if header.iter().eq(LEGACY_COLUMNS.iter().copied()) {
        true
    } else {
        return Err(CatalogError::Header {
            found: header.iter().collect::<Vec<_>>().join(","),
        });
    };
    let mut gpus: HashMap<String, &'static GpuModel> = HashMap::new();
    let mut offers = Vec::new();
    let mut rec = ::csv::StringRecord::new();
    while rdr.read_record(&mut rec)? {
        let line = rec.position().map_or(0, |p| p.line());
        offers.push(row(&rec, line, legacy, &mut gpus)?);
    }
    Ok(offers)
}

/// One record to one offer.
fn row(
    rec: &::csv::StringRecord,
    line: u64,
    legacy: bool,
    gpus: &mut HashMap<String, &'static GpuModel>,
) -> Result<Offer, CatalogError> {
    let field = |i: usize| rec.get(i).unwrap_or("").trim();
    let columns: &[&'static str] = if legacy { &LEGACY_COLUMNS } else { &COLUMNS };
    let bad = |i: usize, reason: &str| CatalogError::Field {
        line,
        column: columns[i],
        value: field(i).to_string(),
        reason: reason.to_string(),
    };
    let text = |i: usize| -> Result<String, CatalogError> {
        match field(i) {
            "" => Err(bad(i, "is empty")),
            v => Ok(v.to_string()),
        }
    };
    let optional = |i: usize| Some(field(i)).filter(|v| !v.is_empty()).map(str::to_string);
    // Non-negative finite number, or None when empty; `positive` also refuses zero.
    let number = |i: usize, positive: bool| -> Result<Option<f64>, CatalogError> {
        let v = field(i);
        if v.is_empty() {
            return Ok(None);
        }
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
            Ok(x) if x.is_finite() && x == 0.0 && !positive => Ok(Some(x)),
            Ok(_) if positive => Err(bad(i, "must be a number above 0")),
            Ok(_) => Err(bad(i, "must be a number of 0 or more")),
            Err(_) => Err(bad(i, "is not a number")),
        }
    };

    let cloud = field(0).parse().map_err(|_| {
        bad(
            0,
            "is not a known cloud (aws, azure, gcp, cudo, nebius, hyperbolic)",
        )
    })?;
    let gpu_name = field(4);
    let gpu = match gpus.get(gpu_name) {
        Some(g) => *g,
        None => {
            let g = gpu::lookup(gpu_name).map_err(|source| CatalogError::Gpu { line, source })?;
            gpus.insert(gpu_name.to_string(), g);
            g
        }
    };
    let date = |i: usize| -> Result<Option<String>, CatalogError> {
        match optional(i) {
            Some(d) if !is_date(&d) => Err(bad(i, "is not a YYYY-MM-DD date")),
            d => Ok(d),
        }
    };
    let on_demand_usd_per_hour = number(9, false)?;
    let spot_usd_per_hour = number(10, false)?;
    let source = field(11).to_string();
    // A price's origin; a missing price has none, and a price without its own source
    // falls back to the row's.
    let origin = |price: Option<f64>, src: &str, as_of: Option<String>| match price {
        None => PriceOrigin::default(),
        Some(_) if src.is_empty() => PriceOrigin::new(source.clone(), as_of),
        Some(_) => PriceOrigin::new(src, as_of),
    };
    let (on_demand_origin, spot_origin) = if legacy {
        let as_of = date(12)?;
        (
            origin(on_demand_usd_per_hour, "", as_of.clone()),
            origin(spot_usd_per_hour, "", as_of),
        )
    } else {
        (
            origin(on_demand_usd_per_hour, field(12), date(13)?),
            origin(spot_usd_per_hour, field(14), date(15)?),
        )
    };
    Ok(Offer {
        cloud,
        region: text(1)?,
        zone: optional(2),
        instance_type: text(3)?,
        gpu,
        gpu_count: number(5, true)?,
        gpu_memory_gib: number(6, true)?,
        vcpus: number(7, true)?,
        memory_gib: number(8, true)?,
        on_demand_usd_per_hour,
        spot_usd_per_hour,
        source,
        on_demand_origin,
        spot_origin,
    })
}

/// Writes `offers` in the [`COLUMNS`] format, `\n` line ends, fields quoted only where
/// needed: the format [`parse`] reads (and the vendored snapshot's bytes).
pub(super) fn write<W: std::io::Write>(offers: &[Offer], out: W) -> Result<(), CatalogError> {
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(out);
    w.write_record(COLUMNS)?;
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for o in offers {
        let origin = |p: Option<f64>, origin: &PriceOrigin| match p {
            Some(_) => (
                origin.source.clone(),
                origin.as_of.clone().unwrap_or_default(),
            ),
            None => (String::new(), String::new()),
        };
        let (od_source, od_as_of) = origin(o.on_demand_usd_per_hour, &o.on_demand_origin);
        let (spot_source, spot_as_of) = origin(o.spot_usd_per_hour, &o.spot_origin);
        w.write_record([
            o.cloud.as_str().to_string(),
            o.region.clone(),
            o.zone.clone().unwrap_or_default(),
            o.instance_type.clone(),
            o.gpu.name.to_string(),
            num(o.gpu_count),
            num(o.gpu_memory_gib),
            num(o.vcpus),
            num(o.memory_gib),
            num(o.on_demand_usd_per_hour),
            num(o.spot_usd_per_hour),
            o.source.clone(),
            od_source,
            od_as_of,
            spot_source,
            spot_as_of,
        ])?;
    }
    w.flush().map_err(|e| CatalogError::Csv(e.into()))?;
    Ok(())
}

/// `YYYY-MM-DD` with digits in the right places (the calendar is not checked).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}
