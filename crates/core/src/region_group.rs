//! Region groups: `europe`, `us` and `asia` stand for every region of a cloud in that
//! part of the world, wherever a region glob is accepted (`regions = ["europe"]`).
//! AWS and Google name regions by geography (`eu-`, `europe-`); Azure by place, so its
//! regions are listed here.

use crate::offer::Cloud;

/// A named part of the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionGroup {
    /// European regions (the UK, Switzerland and Norway included).
    Europe,
    /// Regions in the United States (AWS GovCloud included; not Canada).
    Us,
    /// Asian regions, from India to Japan (not Australia, not the Middle East).
    Asia,
}

/// The words, as users write them.
pub const WORDS: [&str; 3] = ["europe", "us", "asia"];

const AZURE_EUROPE: &[&str] = &[
    "francecentral",
    "francesouth",
    "germanynorth",
    "germanywestcentral",
    "italynorth",
    "northeurope",
    "norwayeast",
    "norwaywest",
    "polandcentral",
    "spaincentral",
    "swedencentral",
    "swedensouth",
    "switzerlandnorth",
    "switzerlandwest",
    "uksouth",
    "ukwest",
    "westeurope",
];
const AZURE_US: &[&str] = &[
    "centralus",
    "eastus",
    "eastus2",
    "northcentralus",
    "southcentralus",
    "westcentralus",
    "westus",
    "westus2",
    "westus3",
];
const AZURE_ASIA: &[&str] = &[
    "centralindia",
    "eastasia",
    "indonesiacentral",
    "japaneast",
    "japanwest",
    "jioindiacentral",
    "jioindiawest",
    "koreacentral",
    "koreasouth",
    "malaysiawest",
    "southeastasia",
    "southindia",
    "westindia",
];
/// AWS `ap-` regions in Australia (Sydney, Melbourne), which are not in `asia`.
const AWS_AUSTRALIA: &[&str] = &["ap-southeast-2", "ap-southeast-4"];

impl RegionGroup {
    /// The group a word names (case-insensitive), if any.
    pub fn parse(word: &str) -> Option<Self> {
        match word.trim().to_ascii_lowercase().as_str() {
            "europe" => Some(RegionGroup::Europe),
            "us" => Some(RegionGroup::Us),
            "asia" => Some(RegionGroup::Asia),
            _ => None,
        }
    }

    /// Whether `region` of `cloud` is in the group.
    pub fn contains(self, cloud: Cloud, region: &str) -> bool {
        let r = region.to_ascii_lowercase();
        let prefix = |p: &[&str]| p.iter().any(|p| r.starts_with(p));
        match (self, cloud) {
            (RegionGroup::Europe, Cloud::Azure) => AZURE_EUROPE.contains(&r.as_str()),
            (RegionGroup::Us, Cloud::Azure) => AZURE_US.contains(&r.as_str()),
            (RegionGroup::Asia, Cloud::Azure) => AZURE_ASIA.contains(&r.as_str()),
            (RegionGroup::Europe, Cloud::Gcp) => prefix(&["europe-"]),
            (RegionGroup::Us, Cloud::Gcp) => prefix(&["us-"]),
            (RegionGroup::Asia, Cloud::Gcp) => prefix(&["asia-"]),
            (RegionGroup::Asia, Cloud::Aws) => {
                prefix(&["ap-"]) && !AWS_AUSTRALIA.contains(&r.as_str())
            }
            // AWS, and the neoclouds, which name regions the AWS way (`eu-north1`,
            // `us-carlsbad-1`) or by country code (cudo's `no-`, `se-`).
            (RegionGroup::Europe, _) => prefix(&["eu-", "no-", "se-"]),
            (RegionGroup::Us, _) => prefix(&["us-"]),
            (RegionGroup::Asia, _) => prefix(&["ap-", "asia-"]),
        }
    }
}

/// Whether `region` of `cloud` matches a group word among `entries`.
pub fn in_any_group(entries: &[String], cloud: Cloud, region: &str) -> bool {
    entries
        .iter()
        .filter_map(|e| RegionGroup::parse(e))
        .any(|g| g.contains(cloud, region))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn groups_cover_each_clouds_naming() {
        let e = RegionGroup::Europe;
        assert!(e.contains(Cloud::Aws, "eu-west-1") && e.contains(Cloud::Azure, "westeurope"));
        assert!(e.contains(Cloud::Gcp, "europe-west4") && e.contains(Cloud::Azure, "uksouth"));
        assert!(!e.contains(Cloud::Azure, "eastus") && !e.contains(Cloud::Gcp, "us-east1"));
        let us = RegionGroup::Us;
        assert!(us.contains(Cloud::Aws, "us-east-1") && us.contains(Cloud::Azure, "eastus2"));
        assert!(us.contains(Cloud::Gcp, "us-central1") && !us.contains(Cloud::Aws, "ca-central-1"));
        let asia = RegionGroup::Asia;
        assert!(
            asia.contains(Cloud::Aws, "ap-northeast-1") && asia.contains(Cloud::Gcp, "asia-east1")
        );
        assert!(
            !asia.contains(Cloud::Aws, "ap-southeast-2"),
            "Sydney is not in asia"
        );
        assert!(
            asia.contains(Cloud::Azure, "japaneast")
                && !asia.contains(Cloud::Azure, "australiaeast")
        );
        assert_eq!(RegionGroup::parse(" Europe "), Some(RegionGroup::Europe));
        assert_eq!(RegionGroup::parse("eu"), None);
    }

    #[test]
    fn every_catalog_region_of_the_big_clouds_in_a_group_is_named_for_it() {
        // Each AWS, Azure and Google region of the embedded catalog is in at most one group.
        for o in Catalog::embedded().offers() {
            if !matches!(o.cloud, Cloud::Aws | Cloud::Azure | Cloud::Gcp) {
                continue;
            }
            let n = [RegionGroup::Europe, RegionGroup::Us, RegionGroup::Asia]
                .iter()
                .filter(|g| g.contains(o.cloud, &o.region))
                .count();
            assert!(n <= 1, "{} {} is in {n} groups", o.cloud, o.region);
        }
    }
}
