//! [`Scores`]: the availability read for one answer, by place, and the rule for which
//! score an offer gets.
//!
//! - A spot item gets its cloud's score for its zone (or, without a zone, for its region:
//!   the region's own score, else its best zone's), else our record's.
//! - An on-demand item gets our record's only: the clouds' signals score spot capacity.
//! - Our record scores a (cloud, region, GPU model), whatever the instance type.

use std::collections::{BTreeMap, HashMap};

use super::{Availability, PlaceScore};
use crate::offer::Cloud;
use crate::query::PricedOffer;
use crate::record::availability::RecordKey;

/// A place and instance type: cloud, region, zone (`None`: the region), instance type.
type PlaceKey = (Cloud, String, Option<String>, String);

/// The availability read for one answer.
#[derive(Debug, Clone, Default)]
pub struct Scores {
    places: HashMap<PlaceKey, Availability>,
    /// The best zone's score per (cloud, region, type), for items without a zone.
    best_zone: HashMap<PlaceKey, Availability>,
    record: BTreeMap<RecordKey, Availability>,
}

impl Scores {
    /// No scores.
    pub fn new() -> Self {
        Scores::default()
    }

    /// Adds a cloud's score; a later score for the same place replaces an earlier one.
    pub fn add(&mut self, s: PlaceScore) {
        let region = s.region.to_ascii_lowercase();
        if let Some(zone) = &s.zone {
            let key = (s.cloud, region.clone(), None, s.instance_type.clone());
            let better = self
                .best_zone
                .get(&key)
                .is_none_or(|b| s.availability.score > b.score);
            if better {
                let mut best = s.availability.clone();
                best.source = format!("{} in its best zone {zone}", best.source);
                self.best_zone.insert(key, best);
            }
        }
        let key = (s.cloud, region, s.zone, s.instance_type);
        self.places.insert(key, s.availability);
    }

    /// Adds our record's scores (from [`crate::record::availability::from_record`]).
    pub fn add_record(&mut self, record: BTreeMap<RecordKey, Availability>) {
        self.record.extend(record);
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty() && self.record.is_empty()
    }

    /// How many places the clouds scored, and how many our record did.
    pub fn counts(&self) -> (usize, usize) {
        (self.places.len(), self.record.len())
    }

    /// The spot score of `instance_type` at `region` (and `zone`), or our record's for
    /// `gpu` there.
    pub fn spot(
        &self,
        cloud: Cloud,
        region: &str,
        zone: Option<&str>,
        instance_type: &str,
        gpu: &str,
    ) -> Option<&Availability> {
        let region = region.to_ascii_lowercase();
        let key = |zone: Option<&str>| {
            (
                cloud,
                region.clone(),
                zone.map(str::to_string),
                instance_type.to_string(),
            )
        };
        let cloud_says = match zone {
            Some(z) => self.places.get(&key(Some(z))),
            None => self
                .places
                .get(&key(None))
                .or_else(|| self.best_zone.get(&key(None))),
        };
        cloud_says.or_else(|| self.recorded(cloud, &region, gpu))
    }

    /// Our record's score for `gpu` at `region`.
    pub fn recorded(&self, cloud: Cloud, region: &str, gpu: &str) -> Option<&Availability> {
        self.record.get(&(
            cloud.as_str().to_string(),
            region.to_ascii_lowercase(),
            gpu.to_string(),
        ))
    }

    /// The score of a ranked item (see the module's rule).
    pub fn of_item(&self, item: &PricedOffer<'_>) -> Option<&Availability> {
        let o = item.offer;
        if item.spot {
            self.spot(
                o.cloud,
                &o.region,
                o.zone.as_deref(),
                &o.instance_type,
                o.gpu.name,
            )
        } else {
            self.recorded(o.cloud, &o.region, o.gpu.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(score: f64, source: &str) -> Availability {
        Availability {
            score,
            source: source.into(),
            as_of: "2026-12-06".into(),
        }
    }

    fn place(region: &str, zone: Option<&str>, score: f64) -> PlaceScore {
        PlaceScore {
            cloud: Cloud::Aws,
            region: region.into(),
            zone: zone.map(str::to_string),
            instance_type: "p5.48xlarge".into(),
            availability: at(score, "aws spot placement score"),
        }
    }

    #[test]
    fn a_spot_item_takes_its_zone_then_its_region_then_the_record() {
        let mut s = Scores::new();
        s.add(place("us-east-1", Some("use1-az1"), 0.3));
        s.add(place("us-east-1", Some("use1-az4"), 0.9));
        s.add(place("us-west-2", None, 0.2));
        s.add_record(
            [(
                ("aws".into(), "eu-west-1".into(), "H100".into()),
                at(0.25, "record"),
            )]
            .into(),
        );
        let spot = |r: &str, z: Option<&str>| s.spot(Cloud::Aws, r, z, "p5.48xlarge", "H100");
        assert_eq!(spot("us-east-1", Some("use1-az1")).unwrap().score, 0.3);
        let best = spot("US-EAST-1", None).unwrap();
        assert_eq!(best.score, 0.9);
        assert!(
            best.source.ends_with("in its best zone use1-az4"),
            "{best:?}"
        );
        assert_eq!(spot("us-west-2", None).unwrap().score, 0.2);
        assert_eq!(
            spot("eu-west-1", Some("euw1-az1")).unwrap().source,
            "record"
        );
        assert!(spot("ap-south-1", None).is_none());
        assert!(
            s.spot(
                Cloud::Aws,
                "us-east-1",
                Some("use1-az1"),
                "g5.xlarge",
                "A10G"
            )
            .is_none()
        );
        assert_eq!(
            s.recorded(Cloud::Aws, "eu-west-1", "H100").unwrap().score,
            0.25
        );
        assert_eq!(s.counts(), (3, 1));
        assert!(!s.is_empty() && Scores::new().is_empty());
    }
}
