//! The commitment adapter of a kind's cloud, with that cloud's usual credentials.

use gpu_core::cloud::aws::{ConfigKey, Ec2Commitments, Ec2Options};
use gpu_core::commitment::Commitments;
use gpu_core::retry::RetryPolicy;

use super::Settings;

/// Gives the commitment adapter for a region (the cloud in the provider, a fake in tests).
#[async_trait::async_trait]
pub trait Connector: Sync {
    /// The adapter for `region`.
    async fn commitments(&self, region: &str) -> Box<dyn Commitments>;
}

#[async_trait::async_trait]
impl Connector for Settings {
    async fn commitments(&self, region: &str) -> Box<dyn Commitments> {
        ec2(self, region).await
    }
}

/// EC2 commitments in `region` (the usual AWS chain, `aws.profile`, `aws.endpoints.ec2`,
/// `aws.max_retries`, the provider's stop signal).
pub async fn ec2(settings: &Settings, region: &str) -> Box<dyn Commitments> {
    let sdk = settings
        .aws_configs
        .get(&ConfigKey {
            region: Some(region.to_string()),
            profile: settings.aws_profile.clone(),
        })
        .await;
    Box::new(Ec2Commitments::new(
        sdk,
        Ec2Options {
            endpoint_url: settings.ec2_endpoint.clone(),
            retry: settings.aws_max_retries.map(|n| RetryPolicy {
                max_attempts: n + 1,
                ..RetryPolicy::default()
            }),
            cancel: settings.cancel.clone(),
            ..Default::default()
        },
    ))
}
