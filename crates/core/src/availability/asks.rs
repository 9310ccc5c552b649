//! [`Asks`]: what to ask each cloud's spot signal for a set of ranked items, within each
//! API's limits.
//!
//! - AWS `GetSpotPlacementScores` scores a *set* of instance types (AWS: "specify at least
//!   three different instance types, otherwise Amazon EC2 will return a low Spot placement
//!   score") and answers only the top 10 regions or zones. So one ask per (region, GPU
//!   model), per zone, with every instance type of that GPU the items have there; the
//!   set's score is each of its types' score.
//! - Azure's spot placement score takes up to 8 regions and 5 VM sizes per request and
//!   scores each (size, region); Azure offers are regional, so regional scores.

use std::collections::{BTreeMap, BTreeSet};

use crate::offer::Cloud;
use crate::query::PricedOffer;

/// Azure's limit of regions per request.
pub const AZURE_MAX_REGIONS: usize = 8;
/// Azure's limit of VM sizes per request.
pub const AZURE_MAX_SIZES: usize = 5;

/// One AWS request: the zones of `region`, for `instance_types` (all of one GPU model).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AwsAsk {
    /// The region.
    pub region: String,
    /// The instance types, sorted.
    pub instance_types: Vec<String>,
}

/// One Azure request: `sizes` in each of `regions`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AzureAsk {
    /// At most [`AZURE_MAX_REGIONS`] regions; the first is where the request is sent.
    pub regions: Vec<String>,
    /// At most [`AZURE_MAX_SIZES`] VM sizes.
    pub sizes: Vec<String>,
}

/// Every request to make for a set of items.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Asks {
    /// AWS requests.
    pub aws: Vec<AwsAsk>,
    /// Azure requests.
    pub azure: Vec<AzureAsk>,
}

impl Asks {
    /// The requests that score the spot items of `items` on clouds with a signal.
    pub fn of(items: &[PricedOffer<'_>]) -> Self {
        let mut aws: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
        // Azure: per GPU model, its regions and its sizes.
        type Places<'o> = (BTreeSet<&'o str>, BTreeSet<&'o str>);
        let mut azure: BTreeMap<&str, Places<'_>> = BTreeMap::new();
        for i in items.iter().filter(|i| i.spot) {
            let o = i.offer;
            match o.cloud {
                Cloud::Aws => {
                    aws.entry((&o.region, o.gpu.name))
                        .or_default()
                        .insert(&o.instance_type);
                }
                Cloud::Azure => {
                    let (regions, sizes) = azure.entry(o.gpu.name).or_default();
                    regions.insert(&o.region);
                    sizes.insert(&o.instance_type);
                }
                _ => {}
            }
        }
        let owned = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let aws = aws
            .into_iter()
            .map(|((region, _), types)| AwsAsk {
                region: region.to_string(),
                instance_types: types.into_iter().map(str::to_string).collect(),
            })
            .collect();
        // Each GPU model's sizes in chunks of 5 times its regions in chunks of 8.
        let mut asks = Vec::new();
        for (regions, sizes) in azure.into_values() {
            let (regions, sizes): (Vec<&str>, Vec<&str>) =
                (regions.into_iter().collect(), sizes.into_iter().collect());
            for s in sizes.chunks(AZURE_MAX_SIZES) {
                for r in regions.chunks(AZURE_MAX_REGIONS) {
                    asks.push(AzureAsk {
                        regions: owned(r),
                        sizes: owned(s),
                    });
                }
            }
        }
        Asks { aws, azure: asks }
    }

    /// Whether there is nothing to ask.
    pub fn is_empty(&self) -> bool {
        self.aws.is_empty() && self.azure.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::query::{self, Capacity, OfferQuery};

    #[test]
    fn asks_group_aws_by_region_and_gpu_and_chunk_azure_within_its_limits() {
        // The stale-listed spot prices of p5 count here: this is about grouping.
        let q = OfferQuery {
            capacity: Capacity::Either,
            freshness: crate::freshness::Freshness::any().including_stale(true),
            ..OfferQuery::default()
        }
        .with_gpu_names(["A100-80GB", "H100"])
        .unwrap();
        let result = query::run(Catalog::embedded(), &q).unwrap();
        let asks = Asks::of(&result.items);
        assert!(!asks.is_empty());
        // One AWS ask per (region, GPU), each with that GPU's types there.
        let east: Vec<&AwsAsk> = asks
            .aws
            .iter()
            .filter(|a| a.region == "us-east-1")
            .collect();
        assert!(!east.is_empty());
        assert!(
            east.iter()
                .any(|a| a.instance_types.contains(&"p5.48xlarge".to_string()))
        );
        let mut seen = std::collections::BTreeSet::new();
        for a in &asks.aws {
            assert!(seen.insert(a.clone()), "repeated {a:?}");
        }
        assert!(!asks.azure.is_empty());
        for a in &asks.azure {
            assert!((1..=AZURE_MAX_REGIONS).contains(&a.regions.len()), "{a:?}");
            assert!((1..=AZURE_MAX_SIZES).contains(&a.sizes.len()), "{a:?}");
        }
        // On-demand items ask nothing.
        let on_demand = query::run(
            Catalog::embedded(),
            &OfferQuery {
                capacity: Capacity::OnDemand,
                ..q.clone()
            },
        )
        .unwrap();
        assert!(Asks::of(&on_demand.items).is_empty());
    }
}
