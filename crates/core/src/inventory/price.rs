//! What a machine type costs in a region, from the catalog: the lowest on-demand and spot
//! prices of its rows there, with their source and date.

use crate::catalog::Catalog;
use crate::offer::Cloud;

/// A machine type's GPUs and prices in one region.
#[derive(Debug, Clone, PartialEq)]
pub struct InstancePrice {
    /// GPU model.
    pub gpu: &'static str,
    /// GPUs per instance.
    pub gpus: u32,
    /// Lowest on-demand USD per hour, when listed.
    pub on_demand: Option<f64>,
    /// Lowest spot USD per hour over its zones, when listed.
    pub spot: Option<f64>,
    /// Where the on-demand price came from and its date.
    pub source: String,
}

/// The catalog's view of `instance_type` in `region` of `cloud`; `None` when the catalog
/// has no such GPU type there (an item without a price, never $0).
pub fn instance_price(
    catalog: &Catalog,
    cloud: Cloud,
    region: &str,
    instance_type: &str,
) -> Option<InstancePrice> {
    let rows: Vec<_> = catalog
        .offers()
        .iter()
        .filter(|o| {
            o.cloud == cloud
                && o.region.eq_ignore_ascii_case(region)
                && o.instance_type.eq_ignore_ascii_case(instance_type)
        })
        .collect();
    let first = rows.first()?;
    let min = |f: fn(&crate::offer::Offer) -> Option<f64>| {
        rows.iter()
            .filter_map(|o| f(o))
            .min_by(|a, b| a.total_cmp(b))
    };
    let on_demand = min(|o| o.on_demand_usd_per_hour);
    let origin = rows
        .iter()
        .find(|o| o.on_demand_usd_per_hour == on_demand)
        .map(|o| &o.on_demand_origin);
    Some(InstancePrice {
        gpu: first.gpu.name,
        gpus: first.gpu_count.map_or(0, |n| n.round() as u32),
        on_demand,
        spot: min(|o| o.spot_usd_per_hour),
        source: origin.map_or_else(String::new, |o| {
            format!(
                "{} ({})",
                o.labelled_source(),
                o.as_of.as_deref().unwrap_or("undated")
            )
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_type_is_priced_and_an_unknown_one_is_not() {
        let p = instance_price(
            Catalog::embedded(),
            Cloud::Gcp,
            "us-central1",
            "a3-highgpu-8g",
        )
        .expect("the catalog lists A3 in us-central1");
        assert_eq!((p.gpu, p.gpus), ("H100", 8));
        assert!(p.on_demand.unwrap() > p.spot.unwrap(), "{p:?}");
        assert!(!p.source.is_empty());
        let none = instance_price(Catalog::embedded(), Cloud::Gcp, "us-central1", "e2-medium");
        assert_eq!(none, None, "not a GPU type: no price, not $0");
    }
}
