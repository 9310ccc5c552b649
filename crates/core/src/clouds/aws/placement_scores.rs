//! AWS's spot signal: EC2 `GetSpotPlacementScores`, "how likely it is that a Spot request
//! will succeed in a Region or Availability Zone", 1 to 10. Asked per region for the zones
//! (`SingleAvailabilityZone`), with one GPU model's instance types as the set, a target of
//! one instance. AWS answers the top 10 places only; a place it leaves out has no score.
//! The call needs the IAM permission `ec2:GetSpotPlacementScores` and costs nothing.

use aws_sdk_ec2::types::TargetCapacityUnitType;

use super::commitments::Ec2Tuning;
use super::retrying::send;
use crate::availability::{Availability, AwsAsk, PlaceScore};
use crate::offer::Cloud;
use crate::retry::RetryPolicy;
use crate::seam::CloudError;

/// AWS's score (1 to 10, "10 means that your Spot request is highly likely to succeed")
/// as a score from 0 to 1: `score / 10`; `None` outside 1..=10.
pub fn score_of(score: i32) -> Option<f64> {
    (1..=10).contains(&score).then(|| f64::from(score) / 10.0)
}

/// The spot placement scores of one region's zones.
#[derive(Debug)]
pub struct Ec2PlacementScores {
    client: aws_sdk_ec2::Client,
    opts: Ec2Tuning,
}

impl Ec2PlacementScores {
    /// A client of `region` (made by [`super::AwsSession::placement_scores`]).
    pub(super) fn new(sdk: &aws_config::SdkConfig, region: &str, opts: Ec2Tuning) -> Self {
        let client = super::clients::ec2_client(
            sdk,
            Some(region),
            opts.endpoint_url.as_deref(),
            opts.attempt_timeout,
        );
        Ec2PlacementScores { client, opts }
    }

    /// The zones' scores for `ask`, each zone by its id (`use1-az4`, as the catalog
    /// spells zones), one [`PlaceScore`] per instance type of the set.
    pub async fn zones(&self, ask: &AwsAsk) -> Result<Vec<PlaceScore>, CloudError> {
        let policy: RetryPolicy = self.opts.retry.unwrap_or_default();
        let today = crate::time::date_of(crate::time::unix_now());
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let page = send(
                &policy,
                &self.opts.pace,
                &self.opts.cancel,
                "GetSpotPlacementScores",
                || {
                    self.client
                        .get_spot_placement_scores()
                        .set_instance_types(Some(ask.instance_types.clone()))
                        .target_capacity(1)
                        .target_capacity_unit_type(TargetCapacityUnitType::Units)
                        .single_availability_zone(true)
                        .region_names(ask.region.clone())
                        .max_results(10)
                        .set_next_token(next.clone())
                        .send()
                },
            )
            .await?;
            for s in page.spot_placement_scores() {
                let (Some(region), Some(zone), Some(raw)) =
                    (s.region(), s.availability_zone_id(), s.score())
                else {
                    continue;
                };
                let Some(score) = score_of(raw) else {
                    continue;
                };
                for t in &ask.instance_types {
                    out.push(PlaceScore {
                        cloud: Cloud::Aws,
                        region: region.to_string(),
                        zone: Some(zone.to_string()),
                        instance_type: t.clone(),
                        availability: Availability {
                            score,
                            source: format!(
                                "aws spot placement score {raw} of 10 ({} type{} of the GPU)",
                                ask.instance_types.len(),
                                if ask.instance_types.len() == 1 {
                                    ""
                                } else {
                                    "s"
                                }
                            ),
                            as_of: today.clone(),
                        },
                    });
                }
            }
            match page.next_token().filter(|t| !t.is_empty()) {
                Some(t) if Some(t) != next.as_deref() => next = Some(t.to_string()),
                _ => break,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_scores_map_onto_zero_to_one() {
        assert_eq!(score_of(10), Some(1.0));
        assert_eq!(score_of(3), Some(0.3));
        assert_eq!(score_of(1), Some(0.1));
        assert_eq!(score_of(0), None);
        assert_eq!(score_of(11), None);
    }
}
