//! AWS for the life of a process: the settings every AWS client shares ([`AwsSettings`])
//! and the session that loads the usual credential chain once per region and profile
//! ([`AwsSession`], over [`ConfigCache`]), from which EKS and EC2 clients are made per
//! operation, each with that operation's stop signal.

use std::sync::Arc;

use super::commitments::{Ec2Commitments, Ec2Tuning};
use super::config_cache::{ConfigCache, ConfigKey};
use super::eks::Eks;
use super::instances::Ec2Instances;
use super::placement_scores::Ec2PlacementScores;
use super::settings::AwsSettings;
use crate::cancel::Cancel;

/// The loaded credential chains, shared by every client the session makes; clones
/// share them.
#[derive(Debug, Clone, Default)]
pub struct AwsSession {
    settings: Arc<AwsSettings>,
    configs: ConfigCache,
}

impl AwsSession {
    /// A session of `settings`; nothing is loaded yet.
    pub fn new(settings: AwsSettings) -> Self {
        AwsSession {
            settings: Arc::new(settings),
            configs: ConfigCache::new(),
        }
    }

    /// The settings the session was made with.
    pub fn settings(&self) -> &AwsSettings {
        &self.settings
    }

    /// The SDK configuration of `region` with the settings' profile, loaded on first use.
    pub async fn sdk_config(&self, region: Option<&str>) -> aws_config::SdkConfig {
        self.configs
            .get(&ConfigKey {
                region: region.map(str::to_string),
                profile: self.settings.profile.clone(),
            })
            .await
    }

    /// How many credential chains have been loaded (for tests and logs).
    pub fn loaded(&self) -> usize {
        self.configs.loaded()
    }

    /// The EKS node group client of `region`; `cancel` ends its waits and retry pauses.
    pub async fn eks(&self, region: &str, cancel: &Cancel) -> Eks {
        let sdk = self.sdk_config(Some(region)).await;
        Eks::from_sdk_config(&sdk, &self.settings, Some(region), cancel)
    }

    /// The EC2 VM client of `region`.
    pub async fn ec2_instances(&self, region: &str, cancel: &Cancel) -> Ec2Instances {
        let sdk = self.sdk_config(Some(region)).await;
        Ec2Instances::new(&sdk, region, self.tuning(cancel))
    }

    /// The EC2 commitment client (capacity blocks and reservations), with the chain of
    /// `region`.
    pub async fn ec2_commitments(&self, region: &str, cancel: &Cancel) -> Ec2Commitments {
        let sdk = self.sdk_config(Some(region)).await;
        Ec2Commitments::new(sdk, self.tuning(cancel))
    }

    /// The spot placement scores of `region`'s zones.
    pub async fn placement_scores(&self, region: &str, cancel: &Cancel) -> Ec2PlacementScores {
        let sdk = self.sdk_config(Some(region)).await;
        Ec2PlacementScores::new(&sdk, region, self.tuning(cancel))
    }

    /// The caller's ARN as STS `GetCallerIdentity` gives it, with the chain of the
    /// default region (us-east-1 when the chain names none).
    pub async fn caller(&self) -> Result<String, crate::seam::CloudError> {
        use crate::seam::CloudError;
        let sdk = self.sdk_config(None).await;
        let mut conf = aws_sdk_sts::config::Builder::from(&sdk);
        if sdk.region().is_none() {
            conf = conf.region(aws_config::Region::new("us-east-1"));
        }
        if let Some(url) = &self.settings.sts_endpoint {
            conf = conf.endpoint_url(url);
        }
        let client = aws_sdk_sts::Client::from_conf(conf.build());
        let out = client.get_caller_identity().send().await.map_err(|e| {
            CloudError::Unauthorized(format!(
                "GetCallerIdentity: {}",
                crate::seam::error::error_chain(&e)
            ))
        })?;
        out.arn()
            .map(str::to_string)
            .ok_or_else(|| CloudError::Other("GetCallerIdentity gave no ARN".into()))
    }

    /// The EC2 call settings with `cancel`.
    fn tuning(&self, cancel: &Cancel) -> Ec2Tuning {
        Ec2Tuning {
            endpoint_url: self.settings.ec2_endpoint.clone(),
            retry: self.settings.retry,
            attempt_timeout: self.settings.attempt_timeout,
            cancel: cancel.clone(),
            pace: self.settings.pace(&["EC2"]),
        }
    }
}
