//! Availability: how likely a place is to give the asked GPUs now, as a score from 0 to 1
//! with where it came from and when. Three sources feed it: the clouds' own spot signals
//! (AWS `GetSpotPlacementScores`, Azure's spot placement score; each read in its cloud's
//! driver and turned into a [`PlaceScore`] there) and our own record of recent answers
//! (the events file, [`crate::record::availability`]).
//!
//! [`Scores`] holds what was read and answers for a ranked item; [`tier`] is the rule
//! `prefer_available` ranks by; [`Asks`] is what to ask each cloud for a set of items.

mod asks;
mod scores;

pub use asks::{Asks, AwsAsk, AzureAsk};
pub use scores::Scores;

use serde::Serialize;

use crate::offer::Cloud;

/// The `min_availability` used when `prefer_available` is on and none is given.
pub const DEFAULT_MIN_AVAILABILITY: f64 = 0.5;

/// A score and what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Availability {
    /// From 0 (no capacity expected) to 1 (capacity expected).
    pub score: f64,
    /// Where it came from, in words (`aws spot placement score 7 of 10`,
    /// `record: 3 of 4 answers ready in 7 days`).
    pub source: String,
    /// The date (UTC, `YYYY-MM-DD`) of the newest answer it rests on.
    pub as_of: String,
}

/// One cloud's spot score for a place and instance type.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaceScore {
    /// The cloud that scored it.
    pub cloud: Cloud,
    /// Region, as the cloud spells it.
    pub region: String,
    /// Zone as the catalog spells it (the AWS zone id `use1-az4`; Azure `1`..`3`), or
    /// `None` for a score of the whole region.
    pub zone: Option<String>,
    /// The instance type (VM size) scored.
    pub instance_type: String,
    /// The score.
    pub availability: Availability,
}

/// Where an item stands for `prefer_available`: `0` at or above `min`, `1` without a
/// score, `2` below `min`. Known-good places rank first, unknown ones next, places known
/// to be short last; within a tier, by price.
pub fn tier(availability: Option<&Availability>, min: f64) -> u8 {
    match availability {
        Some(a) if a.score >= min => 0,
        None => 1,
        Some(_) => 2,
    }
}

/// Sorts `items`, already ranked by price, by their [`tier`] (stable: the price order stays
/// within each tier) and returns how many are in the first tier: the items a preferred
/// one (hysteresis) may be kept first among.
pub fn rank_by_tier<T>(items: &mut [T], tier_of: impl Fn(&T) -> u8) -> usize {
    items.sort_by_key(&tier_of);
    let first = items.first().map(&tier_of);
    items
        .iter()
        .take_while(|i| Some(tier_of(i)) == first)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(s: f64) -> Availability {
        Availability {
            score: s,
            source: "test".into(),
            as_of: "2026-12-06".into(),
        }
    }

    #[test]
    fn tiers_put_known_good_first_and_known_short_last() {
        assert_eq!(tier(Some(&score(0.5)), 0.5), 0);
        assert_eq!(tier(Some(&score(0.9)), 0.5), 0);
        assert_eq!(tier(None, 0.5), 1);
        assert_eq!(tier(Some(&score(0.49)), 0.5), 2);
        assert_eq!(tier(Some(&score(0.0)), 0.0), 0);
    }
}
