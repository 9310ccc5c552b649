//! Every cloud's session, made once per process (the provider makes them at
//! `ConfigureProvider`): credentials, SDK configurations and HTTP clients are built on
//! first use and reused by every later operation. [`Sessions`] hands out the client of a
//! cloud's seam by [`Cloud`]; a cloud without that seam here is an error naming the
//! clouds that have it, never another cloud's client.

use crate::availability::{Asks, PlaceScore};
use crate::cancel::Cancel;
use crate::clouds::aws::{AwsSession, AwsSettings};
use crate::clouds::azure::{AzureSession, AzureSettings};
use crate::clouds::gcp::{GcpSession, GcpSettings};
use crate::offer::Cloud;
use crate::seam::{CloudError, Commitments, Instances, NodeGroups, Place};

/// The clouds that have drivers with clients here, as error texts name them.
const CLOUDS_WITH_CLIENTS: &str = "aws, azure and gcp";

/// Each cloud's settings.
#[derive(Debug, Clone, Default)]
pub struct CloudSettings {
    /// AWS.
    pub aws: AwsSettings,
    /// Azure.
    pub azure: AzureSettings,
    /// Google Cloud.
    pub gcp: GcpSettings,
}

/// One session per cloud; clones share them.
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    /// AWS.
    pub aws: AwsSession,
    /// Azure.
    pub azure: AzureSession,
    /// Google Cloud.
    pub gcp: GcpSession,
    /// Each cloud's caller, asked once (the audit log's actor).
    actors: std::sync::Arc<Actors>,
}

/// The callers found so far, one per cloud.
#[derive(Debug, Default)]
struct Actors {
    aws: tokio::sync::OnceCell<String>,
    azure: tokio::sync::OnceCell<String>,
    gcp: tokio::sync::OnceCell<String>,
}

impl Sessions {
    /// The sessions of `settings`; nothing is loaded or called yet.
    pub fn new(settings: CloudSettings) -> Self {
        Sessions {
            aws: AwsSession::new(settings.aws),
            azure: AzureSession::new(settings.azure),
            gcp: GcpSession::new(settings.gcp),
            actors: Default::default(),
        }
    }

    /// The managed Kubernetes node group client of `cloud` (EKS in `region`, AKS, GKE).
    pub async fn node_groups(
        &self,
        cloud: Cloud,
        region: &str,
        cancel: &Cancel,
    ) -> Result<Box<dyn NodeGroups>, CloudError> {
        Ok(match cloud {
            Cloud::Aws => Box::new(self.aws.eks(region, cancel).await),
            Cloud::Azure => Box::new(self.azure.aks(cancel)?),
            Cloud::Gcp => Box::new(self.gcp.gke(cancel)?),
            other => return Err(absent(other, "managed Kubernetes node groups")),
        })
    }

    /// The VM client of `place` (its scope: the Google Cloud project, the Azure
    /// subscription).
    pub async fn instances(
        &self,
        place: &Place,
        cancel: &Cancel,
    ) -> Result<Box<dyn Instances>, CloudError> {
        let scope = || {
            place.scope.as_deref().ok_or_else(|| {
                CloudError::Invalid(format!("a VM on {} needs its account scope", place.cloud))
            })
        };
        Ok(match place.cloud {
            Cloud::Aws => Box::new(self.aws.ec2_instances(&place.region, cancel).await),
            Cloud::Azure => Box::new(self.azure.vms(scope()?, cancel)?),
            Cloud::Gcp => Box::new(self.gcp.compute_instances(scope()?, cancel)?),
            other => return Err(absent(other, "VMs")),
        })
    }

    /// The commitment client of `cloud` (AWS in `region`; Azure in the settings'
    /// subscription; Google Cloud in the settings' project).
    pub async fn commitments(
        &self,
        cloud: Cloud,
        region: &str,
        cancel: &Cancel,
    ) -> Result<Box<dyn Commitments>, CloudError> {
        let unset = |what: &str| CloudError::Invalid(format!("{cloud} commitments need {what}"));
        Ok(match cloud {
            Cloud::Aws => Box::new(self.aws.ec2_commitments(region, cancel).await),
            Cloud::Azure => {
                let sub = self.azure.settings().subscription_id.as_deref();
                let sub = sub.ok_or_else(|| unset("a subscription"))?;
                Box::new(self.azure.commitments(sub, cancel)?)
            }
            Cloud::Gcp => {
                let project = self.gcp.settings().project.as_deref();
                let project = project.ok_or_else(|| unset("a project"))?;
                Box::new(self.gcp.compute_commitments(project, cancel)?)
            }
            other => return Err(absent(other, "commitments")),
        })
    }
}

impl Sessions {
    /// The clouds' spot signals for `asks` (AWS in each ask's region, Azure in the
    /// settings' subscription), and one warning per cloud that could not answer (the
    /// cloud, the first error, and how many requests failed). Never fails as a whole.
    pub async fn spot_scores(
        &self,
        asks: &Asks,
        cancel: &Cancel,
    ) -> (Vec<PlaceScore>, Vec<(Cloud, String)>) {
        let mut scores = Vec::new();
        let mut aws = Failures::new(Cloud::Aws, "GetSpotPlacementScores", asks.aws.len());
        for ask in &asks.aws {
            let client = self.aws.placement_scores(&ask.region, cancel).await;
            match client.zones(ask).await {
                Ok(s) => scores.extend(s),
                Err(e) => aws.add(&ask.region, e),
            }
            if cancel.is_cancelled() {
                break;
            }
        }
        let mut azure = Failures::new(Cloud::Azure, "spot placement score", asks.azure.len());
        if !asks.azure.is_empty() {
            match self.azure.settings().subscription_id.as_deref() {
                None => azure.unasked("it needs the provider's `azure.subscription_id`"),
                Some(sub) => match self.azure.placement_scores(sub, cancel) {
                    Err(e) => azure.unasked(&e.to_string()),
                    Ok(client) => {
                        for ask in &asks.azure {
                            match client.regions(ask).await {
                                Ok(s) => scores.extend(s),
                                Err(e) => azure.add(&ask.regions.join(", "), e),
                            }
                        }
                    }
                },
            }
        }
        let warnings = [aws.warning(), azure.warning()]
            .into_iter()
            .flatten()
            .collect();
        (scores, warnings)
    }
}

/// The failed requests of one cloud's signal, for one warning.
struct Failures {
    cloud: Cloud,
    what: &'static str,
    asked: usize,
    failed: usize,
    first: Option<String>,
}

impl Failures {
    fn new(cloud: Cloud, what: &'static str, asked: usize) -> Self {
        Failures {
            cloud,
            what,
            asked,
            failed: 0,
            first: None,
        }
    }

    fn add(&mut self, place: &str, e: CloudError) {
        self.failed += 1;
        self.first.get_or_insert_with(|| format!("{place}: {e}"));
    }

    fn unasked(&mut self, why: &str) {
        self.failed = self.asked;
        self.first = Some(why.to_string());
    }

    fn warning(&self) -> Option<(Cloud, String)> {
        let first = self.first.as_ref()?;
        let text = format!(
            "{} {}: {} of {} request{} failed ({first}); those places have no cloud score",
            self.cloud,
            self.what,
            self.failed,
            self.asked,
            if self.asked == 1 { "" } else { "s" }
        );
        Some((self.cloud, text))
    }
}

/// The error for a cloud whose driver has no clients of `what`.
fn absent(cloud: Cloud, what: &str) -> CloudError {
    CloudError::Invalid(format!(
        "{cloud} has no {what} here: the clouds with them are {CLOUDS_WITH_CLIENTS}"
    ))
}

/// The caller of each cloud as that cloud names it, asked on the first audited call and
/// kept: AWS STS `GetCallerIdentity`'s ARN, the Entra token's object id (and name), the
/// Google service account's e-mail or tokeninfo's; `unknown` when the cloud cannot say.
#[async_trait::async_trait]
impl crate::audit::ActorSource for Sessions {
    async fn actor(&self, cloud: Cloud) -> String {
        let ask = || async {
            let found = match cloud {
                Cloud::Aws => self.aws.caller().await,
                Cloud::Azure => self.azure.caller().await,
                Cloud::Gcp => self.gcp.caller().await,
                other => Err(absent(other, "callers")),
            };
            found.unwrap_or_else(|_| crate::audit::UNKNOWN_ACTOR.to_string())
        };
        let slot = match cloud {
            Cloud::Aws => &self.actors.aws,
            Cloud::Azure => &self.actors.azure,
            Cloud::Gcp => &self.actors.gcp,
            _ => return ask().await,
        };
        slot.get_or_init(ask).await.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clouds::gcp::auth::AccessToken;

    #[tokio::test]
    async fn each_cloud_gets_its_own_client_and_neoclouds_none() {
        let sessions = Sessions::new(CloudSettings {
            gcp: GcpSettings {
                access_token: Some(AccessToken::new("t")),
                project: Some("p1".into()),
                ..Default::default()
            },
            ..Default::default()
        });
        let cancel = Cancel::new();
        let gke = sessions.node_groups(Cloud::Gcp, "us-central1", &cancel);
        assert_eq!(gke.await.unwrap().traits().cloud, Cloud::Gcp);
        let place = Place {
            cloud: Cloud::Gcp,
            region: "us-central1".into(),
            scope: Some("p2".into()),
        };
        let vms = sessions.instances(&place, &cancel).await.unwrap();
        assert_eq!(vms.cloud(), Cloud::Gcp);
        let no_scope = Place {
            scope: None,
            ..place
        };
        assert!(sessions.instances(&no_scope, &cancel).await.is_err());
        // The Azure subscription is unset: commitments there are refused before any call.
        let azure = sessions.commitments(Cloud::Azure, "eastus", &cancel).await;
        assert!(matches!(azure, Err(CloudError::Invalid(m)) if m.contains("subscription")));
        for c in [Cloud::Cudo, Cloud::Nebius, Cloud::Hyperbolic] {
            let e = sessions.node_groups(c, "r", &cancel).await.err().unwrap();
            assert!(e.to_string().contains("aws, azure and gcp"), "{e}");
            assert!(sessions.commitments(c, "r", &cancel).await.is_err());
        }
    }
}
