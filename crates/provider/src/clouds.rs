//! The provider's way to the clouds: every cloud's session ([`Sessions`]), made once at
//! `ConfigureProvider` from the provider block so credentials and HTTP clients are reused
//! by every operation, with an operation's stop signal. Resources get their clients here;
//! a setting a call needs and the provider block lacks is an error naming it.

use async_trait::async_trait;
use std::sync::Arc;

use gpu_core::audit::audited::{AuditedCommitments, AuditedInstances, AuditedNodeGroups};
use gpu_core::audit::{Audit, AuditContext, AuditSink};
use gpu_core::cancel::Cancel;
use gpu_core::offer::Cloud;
use gpu_core::record::{EventLine, EventLog};
use gpu_core::registry::sessions::{CloudSettings, Sessions};
use gpu_core::seam::{
    CloudError, Commitments, ConnectCommitments, ConnectInstances, Instances, NodeGroups, Place,
};
use tfplugin::{AttributePath, Diagnostic, Diagnostics};

use crate::config::ProviderConfig;

/// The sessions of the provider block `config`: `aws` (profile, `endpoints`,
/// `max_retries`), `azure` (subscription, tenant, endpoint), `gcp` (project, endpoint,
/// access token).
pub fn sessions_of(config: &ProviderConfig) -> Sessions {
    Sessions::new(CloudSettings {
        aws: config.aws.clone().unwrap_or_default().settings(),
        azure: config.azure.clone().unwrap_or_default().settings(),
        gcp: config.gcp.clone().unwrap_or_default().settings(),
    })
}

/// The clouds as one operation sees them: the process's sessions and the operation's
/// stop signal.
#[derive(Debug, Clone, Default)]
pub struct Clouds {
    sessions: Sessions,
    cancel: Cancel,
    record: Option<EventLog>,
    audit: Audit,
}

impl Clouds {
    /// The clouds of `sessions` for an operation stopped by `cancel`.
    pub fn new(sessions: Sessions, cancel: Cancel) -> Self {
        Clouds {
            sessions,
            cancel,
            record: None,
            audit: Audit::off(),
        }
    }

    /// These clouds with every mutating call audited to `sinks` (callers named by the
    /// sessions); no sink, no audit.
    pub fn with_audit(mut self, sinks: Vec<Arc<dyn AuditSink>>) -> Self {
        self.audit = Audit::new(sinks, Arc::new(self.sessions.clone()));
        self
    }

    /// These clouds for one apply, `context` (its resource and planned monthly change)
    /// on each of its audit events.
    pub fn auditing(mut self, context: AuditContext) -> Self {
        self.audit = self.audit.within(context);
        self
    }

    /// Delivers the operation's audit events, then a warning per sink that failed during
    /// it (the calls went on).
    pub fn audit_warnings(&self) -> Diagnostics {
        self.audit.flush();
        let mut d = Diagnostics::new();
        for why in self.audit.take_failures() {
            d.push(Diagnostic::warning("Audit event not delivered", why));
        }
        d
    }

    /// These clouds, with the operation's capacity events appended to `record`.
    pub fn with_record(mut self, record: Option<EventLog>) -> Self {
        self.record = record;
        self
    }

    /// Appends `line` to the events file, if there is one; a warning when it cannot be
    /// written (the apply itself goes on: the record is not what the user asked for).
    pub fn record(&self, line: &EventLine) -> Option<Diagnostic> {
        let log = self.record.as_ref()?;
        log.append(line)
            .err()
            .map(|e| Diagnostic::warning("Capacity event not recorded", e.to_string()))
    }

    /// The clouds of provider block `config`, with a stop signal of their own (the CLI's
    /// account flags make such a block).
    pub fn of(config: &ProviderConfig) -> Self {
        Clouds::new(sessions_of(config), Cancel::new())
    }

    /// The operation's stop signal.
    #[cfg(test)]
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// The sessions the clients come from.
    #[cfg(test)]
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The provider's `gcp.project`.
    pub fn gcp_project(&self) -> Option<&str> {
        self.sessions.gcp.settings().project.as_deref()
    }

    /// The provider's `azure.subscription_id`.
    pub fn azure_subscription(&self) -> Option<&str> {
        self.sessions.azure.settings().subscription_id.as_deref()
    }

    /// The node-pool API of `cloud` (EKS in `region`, AKS, GKE). AWS: the SDK's chain
    /// (loaded once per region and profile). Azure: `azure_identity`'s chain for
    /// `azure.tenant_id`. Google: `gcp.access_token`, `GOOGLE_OAUTH_ACCESS_TOKEN`, or
    /// Application Default Credentials. No call is made here.
    pub async fn node_groups(
        &self,
        cloud: Cloud,
        region: &str,
    ) -> Result<Box<dyn NodeGroups>, Diagnostics> {
        if gpu_core::registry::node_group_rules(cloud).is_none() {
            return Err(Diagnostic::error(
                "No node groups on this cloud",
                format!(
                    "gpu_node_pool runs on managed Kubernetes node groups: aws (EKS), azure (AKS) or gcp (GKE); {cloud} has none here."
                ),
            )
            .at(AttributePath::attr("cloud"))
            .into());
        }
        self.sessions
            .node_groups(cloud, region, &self.cancel)
            .await
            .map(|groups| AuditedNodeGroups::wrap(groups, cloud, &self.audit))
            .map_err(|e| {
                let name = cloud_name(cloud);
                Diagnostic::error(
                    format!("Cannot connect to {name}"),
                    format!("{e}\nSee the {name} credentials guide of the gpu provider."),
                )
                .into()
            })
    }
}

/// A cloud as the credentials guides name it.
pub fn cloud_name(cloud: Cloud) -> &'static str {
    match cloud {
        Cloud::Aws => "AWS",
        Cloud::Azure => "Azure",
        Cloud::Gcp => "Google Cloud",
        _ => "this cloud",
    }
}

#[async_trait]
impl ConnectInstances for Clouds {
    async fn instances(&self, place: &Place) -> Result<Box<dyn Instances>, CloudError> {
        let mut place = place.clone();
        match place.cloud {
            Cloud::Gcp if place.scope.is_none() => {
                return Err(CloudError::Invalid(
                    "no Google Cloud project: set `gcp.project`".into(),
                ));
            }
            Cloud::Azure if place.scope.is_none() => {
                place.scope = Some(self.azure_subscription().map(str::to_string).ok_or_else(|| {
                    CloudError::Invalid(
                        "no Azure subscription: Azure VMs are created in the provider's `azure.subscription_id`: set it in the `provider \"gpu\"` block's `azure` block".into(),
                    )
                })?);
            }
            Cloud::Aws | Cloud::Azure | Cloud::Gcp => {}
            other => {
                return Err(CloudError::Invalid(format!(
                    "gpu_instance does not run on {other}: the clouds are aws, azure and gcp"
                )));
            }
        }
        let vms = self.sessions.instances(&place, &self.cancel).await?;
        Ok(AuditedInstances::wrap(vms, &place.region, &self.audit))
    }
}

#[async_trait]
impl ConnectCommitments for Clouds {
    async fn commitments(
        &self,
        cloud: Cloud,
        region: &str,
    ) -> Result<Box<dyn Commitments>, CloudError> {
        match cloud {
            Cloud::Gcp if self.gcp_project().is_none() => Err(CloudError::Invalid(
                "Google Cloud commitments are bought in the provider's `gcp.project`: set it in the `provider \"gpu\"` block".into(),
            )),
            Cloud::Azure if self.azure_subscription().is_none() => Err(CloudError::Invalid(
                "Azure commitments are bought in the provider's `azure.subscription_id`: set it in the `provider \"gpu\"` block".into(),
            )),
            Cloud::Aws | Cloud::Azure | Cloud::Gcp => {
                let bought = self.sessions.commitments(cloud, region, &self.cancel).await?;
                Ok(AuditedCommitments::wrap(bought, cloud, region, &self.audit))
            }
            other => Err(CloudError::Invalid(format!(
                "commitments on {other} are not built yet"
            ))),
        }
    }
}
