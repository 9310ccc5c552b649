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
use gpu_core::pace::TimeScale;
use gpu_core::record::{EventLine, EventLog};
use gpu_core::registry::sessions::{CloudSettings, Sessions};
use gpu_core::seam::{
    CloudError, Commitments, ConnectCommitments, ConnectInstances, Instances, NodeGroups, Place,
};
use tfplugin::{AttributePath, Diagnostic, Diagnostics};

use crate::config::ProviderConfig;

/// The sessions of the provider block `config`: `aws` (profile, `endpoints`,
/// `max_retries`), `azure` (subscription, tenant, endpoint), `gcp` (project, endpoint,
/// access token), each with the test-only time scale of the environment
/// ([`requested_time_scale`]), which a session applies only where its endpoint is
/// overridden.
pub fn sessions_of(config: &ProviderConfig) -> Sessions {
    Sessions::new(cloud_settings(config, requested_time_scale()))
}

/// Every cloud's settings of provider block `config`, with `time_scale` asked.
fn cloud_settings(config: &ProviderConfig, time_scale: TimeScale) -> CloudSettings {
    let mut s = CloudSettings {
        aws: config.aws.clone().unwrap_or_default().settings(),
        azure: config.azure.clone().unwrap_or_default().settings(),
        gcp: config.gcp.clone().unwrap_or_default().settings(),
    };
    s.aws.time_scale = time_scale;
    s.azure.time_scale = time_scale;
    s.gcp.time_scale = time_scale;
    s
}

/// The time scale `GPU_TF_TIME_SCALE` asks for; real time when it is unset or not a
/// scale (which [`time_scale_warnings`] reports).
pub fn requested_time_scale() -> TimeScale {
    TimeScale::from_env().unwrap_or(TimeScale::REAL)
}

/// What the provider says of `GPU_TF_TIME_SCALE` at `ConfigureProvider`: a warning when
/// it is not a scale, and one naming each cloud whose block the provider configuration
/// has while its endpoint is the cloud's own (the scale is ignored there: those waits run
/// in real time). A cloud without a block is only logged (`tracing` warning): the
/// provider cannot know whether it will be called.
pub fn time_scale_warnings(config: &ProviderConfig) -> Diagnostics {
    time_scale_warnings_for(config, TimeScale::from_env())
}

fn time_scale_warnings_for(
    config: &ProviderConfig,
    asked: Result<TimeScale, gpu_core::pace::BadTimeScale>,
) -> Diagnostics {
    let mut d = Diagnostics::new();
    let scale = match asked {
        Ok(s) if s.is_real() => return d,
        Ok(s) => s,
        Err(e) => {
            d.push(Diagnostic::warning("Time scale ignored", e.to_string()));
            return d;
        }
    };
    let s = cloud_settings(config, scale);
    let clouds = [
        (
            "aws",
            config.aws.is_some(),
            s.aws.pace(&["EKS", "EC2"]).scale(),
        ),
        ("azure", config.azure.is_some(), s.azure.pace().scale()),
        ("gcp", config.gcp.is_some(), s.gcp.pace().scale()),
    ];
    let var = gpu_core::pace::TIME_SCALE_VAR;
    for (cloud, configured, at) in clouds {
        if !at.is_real() {
            continue;
        }
        if configured {
            d.push(
                Diagnostic::warning(
                    "Time scale ignored",
                    format!(
                        "{var}={scale} shrinks waits only against an overridden endpoint (an emulator or a fake); the `{cloud}` block calls the cloud's own endpoints, so its waits run in real time."
                    ),
                )
                .at(AttributePath::attr(cloud)),
            );
        } else {
            tracing::warn!("{var}={scale} is ignored for {cloud}: its endpoint is the cloud's own");
        }
    }
    d
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::azure::AzureConfig;
    use crate::config::gcp::GcpConfig;

    fn fast() -> TimeScale {
        TimeScale::parse("0.01").unwrap()
    }

    #[test]
    fn no_warning_at_real_time_without_blocks_or_with_an_overridden_endpoint() {
        let plain = ProviderConfig::default();
        assert!(time_scale_warnings_for(&plain, Ok(TimeScale::REAL)).is_empty());
        assert!(time_scale_warnings_for(&plain, Ok(fast())).is_empty());
        let fake = ProviderConfig {
            gcp: Some(GcpConfig {
                endpoint: Some("http://127.0.0.1:8080".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(time_scale_warnings_for(&fake, Ok(fast())).is_empty());
        let s = cloud_settings(&fake, fast());
        assert_eq!(s.gcp.pace().scale(), fast());
        assert!(s.azure.pace().scale().is_real());
    }

    #[test]
    fn a_block_at_the_clouds_own_endpoint_or_a_bad_value_is_a_warning() {
        let real_azure = ProviderConfig {
            azure: Some(AzureConfig {
                endpoint: Some("https://management.azure.com".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let d = time_scale_warnings_for(&real_azure, Ok(fast()));
        let text = format!("{d:?}");
        assert_eq!(d.0.len(), 1, "{text}");
        assert!(text.contains("Time scale ignored"), "{text}");
        assert!(text.contains("the `azure` block"), "{text}");
        let bad = TimeScale::parse("fast").unwrap_err();
        let d = time_scale_warnings_for(&ProviderConfig::default(), Err(bad));
        assert!(format!("{d:?}").contains("at most 1"), "{d:?}");
    }
}
