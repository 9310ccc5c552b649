//! Azure's spot signal: the Spot Placement Score, `POST /subscriptions/{id}/providers/
//! Microsoft.Compute/locations/{location}/placementScores/spot/generate` (api-version
//! [`API_VERSION`]), `High`, `Medium` or `Low` per VM size and region "based on analyses of
//! Spot capacity allocation probability", up to 8 regions and 5 sizes per request. The
//! caller needs the "Compute Recommendations Role" (Reader gets 403). Regional scores,
//! one VM: Azure offers in the catalog are regional.

use reqwest::Method;
use serde_json::{Value, json};

use super::arm::Arm;
use crate::availability::{Availability, AzureAsk, PlaceScore};
use crate::offer::Cloud;
use crate::seam::CloudError;

/// The api-version of the spot placement score.
pub const API_VERSION: &str = "2025-06-05";

/// Azure's word (`High`, `Medium`, `Low`, any letter case) with its `isQuotaAvailable` as
/// a score from 0 to 1: `High` 0.9, `Medium` 0.5, `Low` 0.1; `RestrictedSkuNotAvailable`,
/// or no quota, 0; `None` for any other word (`DataNotFoundOrStale`: no score).
pub fn score_of(word: &str, quota_available: Option<bool>) -> Option<f64> {
    let score = match word.to_ascii_lowercase().as_str() {
        "high" => 0.9,
        "medium" => 0.5,
        "low" => 0.1,
        "restrictedskunotavailable" => 0.0,
        _ => return None,
    };
    Some(if quota_available == Some(false) {
        0.0
    } else {
        score
    })
}

/// The spot placement scores of one subscription.
#[derive(Debug)]
pub struct AzurePlacementScores {
    arm: Arm,
    subscription: String,
}

impl AzurePlacementScores {
    /// A client of `subscription` (made by [`super::AzureSession::placement_scores`]).
    pub(super) fn new(arm: Arm, subscription: String) -> Self {
        AzurePlacementScores { arm, subscription }
    }

    /// The regional scores for `ask`, sent to its first region.
    pub async fn regions(&self, ask: &AzureAsk) -> Result<Vec<PlaceScore>, CloudError> {
        let Some(location) = ask.regions.first() else {
            return Ok(Vec::new());
        };
        let path = format!(
            "/subscriptions/{}/providers/Microsoft.Compute/locations/{location}/placementScores/spot/generate",
            self.subscription
        );
        let body = json!({
            "desiredLocations": ask.regions,
            "desiredSizes": ask.sizes.iter().map(|s| json!({"sku": s})).collect::<Vec<_>>(),
            "desiredCount": 1,
            "availabilityZones": false,
        });
        let url = self.arm.url(&path, API_VERSION);
        let answer = self
            .arm
            .call(Method::POST, &url, Some(&body), &[], "spot placement score")
            .await?;
        Ok(read_scores(
            &answer.body,
            &crate::time::date_of(crate::time::unix_now()),
        ))
    }
}

/// The `placementScores` of an answer as [`PlaceScore`]s, dated `today`.
fn read_scores(body: &Value, today: &str) -> Vec<PlaceScore> {
    let rows = body
        .get("placementScores")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    rows.iter()
        .filter_map(|r| {
            let text = |k: &str| r.get(k).and_then(Value::as_str);
            let word = text("score")?;
            let quota = r.get("isQuotaAvailable").and_then(Value::as_bool);
            let score = score_of(word, quota)?;
            let quota_note = if quota == Some(false) {
                ", no quota"
            } else {
                ""
            };
            Some(PlaceScore {
                cloud: Cloud::Azure,
                region: text("region")?.to_ascii_lowercase(),
                zone: text("availabilityZone").map(str::to_string),
                instance_type: text("sku")?.to_string(),
                availability: Availability {
                    score,
                    source: format!("azure spot placement score {word}{quota_note}"),
                    as_of: today.to_string(),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azure_words_map_onto_zero_to_one() {
        assert_eq!(score_of("High", Some(true)), Some(0.9));
        assert_eq!(score_of("LOW", None), Some(0.1));
        assert_eq!(score_of("Medium", None), Some(0.5));
        assert_eq!(score_of("High", Some(false)), Some(0.0));
        assert_eq!(score_of("RestrictedSkuNotAvailable", Some(true)), Some(0.0));
        assert_eq!(score_of("DataNotFoundOrStale", Some(true)), None);
    }

    #[test]
    fn an_answer_becomes_one_score_per_size_and_region() {
        // The answer's shape as Az.Compute's Invoke-AzSpotPlacementScore documents it.
        let body = json!({
            "desiredLocations": ["eastus", "westus2"],
            "desiredSizes": [{"sku": "Standard_NC24ads_A100_v4"}],
            "desiredCount": 1,
            "availabilityZones": false,
            "placementScores": [
                {"sku": "Standard_NC24ads_A100_v4", "region": "eastus", "score": "High",
                 "isQuotaAvailable": true},
                {"sku": "Standard_NC24ads_A100_v4", "region": "westus2", "score": "Low",
                 "isQuotaAvailable": false},
                {"sku": "Standard_NC24ads_A100_v4", "region": "centralus",
                 "score": "DataNotFoundOrStale", "isQuotaAvailable": true}
            ]
        });
        let scores = read_scores(&body, "2026-12-06");
        assert_eq!(scores.len(), 2, "no score for stale data");
        assert_eq!(scores[0].region, "eastus");
        assert_eq!(scores[0].availability.score, 0.9);
        assert_eq!(
            scores[0].availability.source,
            "azure spot placement score High"
        );
        assert_eq!(scores[1].availability.score, 0.0);
        assert!(scores[1].availability.source.ends_with("no quota"));
        assert!(
            scores
                .iter()
                .all(|s| s.zone.is_none() && s.availability.as_of == "2026-12-06")
        );
    }
}
