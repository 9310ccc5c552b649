//! The commitment adapter of a kind's cloud, with that cloud's usual credentials.

use gpu_core::clouds::aws::{ConfigKey, Ec2Commitments, Ec2Options, SdkConfig};
use gpu_core::clouds::azure::{AzureCommitmentOptions, AzureCommitments};
use gpu_core::clouds::gcp::{ComputeCommitments, ComputeOptions};
use gpu_core::commitment::Commitments;
use gpu_core::offer::Cloud;
use gpu_core::retry::RetryPolicy;
use gpu_core::seam::CloudError;

use super::Settings;

/// Gives the commitment adapter of a cloud for a region (the cloud in the provider, a fake
/// in tests).
#[async_trait::async_trait]
pub trait Connector: Sync {
    /// The adapter of `cloud` for `region`; an error when it cannot be set up (no
    /// credentials, no project).
    async fn commitments(
        &self,
        cloud: Cloud,
        region: &str,
    ) -> Result<Box<dyn Commitments>, CloudError>;
}

#[async_trait::async_trait]
impl Connector for Settings {
    async fn commitments(
        &self,
        cloud: Cloud,
        region: &str,
    ) -> Result<Box<dyn Commitments>, CloudError> {
        match cloud {
            Cloud::Gcp => compute(self).map(|c| Box::new(c) as Box<dyn Commitments>),
            Cloud::Aws => Ok(ec2(self, region).await),
            Cloud::Azure => azure(self).map(|c| Box::new(c) as Box<dyn Commitments>),
            other => Err(CloudError::Invalid(format!(
                "commitments on {other} are not built yet"
            ))),
        }
    }
}

/// Compute Engine in the provider's `gcp.project`, with Google's credentials.
fn compute(settings: &Settings) -> Result<ComputeCommitments, CloudError> {
    let project = settings.gcp.project.clone().ok_or_else(|| {
        CloudError::Invalid(
            "Google Cloud commitments are bought in the provider's `gcp.project`: set it in the `provider \"gpu\"` block".into(),
        )
    })?;
    ComputeCommitments::connect(&compute_options(settings, project))
}

/// EC2 commitments in `region` (the usual AWS chain, `aws.profile`, `aws.endpoints.ec2`,
/// `aws.max_retries`, the provider's stop signal).
pub async fn ec2(settings: &Settings, region: &str) -> Box<dyn Commitments> {
    let (sdk, opts) = ec2_setup(settings, region).await;
    Box::new(Ec2Commitments::new(sdk, opts))
}

/// The provider's AWS settings for EC2 in `region`: the usual chain with `aws.profile`
/// (loaded once per region and profile), `aws.endpoints.ec2`, `aws.max_retries`, the stop
/// signal. Commitments and `gpu_instance` both reach EC2 through it.
pub async fn ec2_setup(settings: &Settings, region: &str) -> (SdkConfig, Ec2Options) {
    let sdk = settings
        .aws_configs
        .get(&ConfigKey {
            region: Some(region.to_string()),
            profile: settings.aws_profile.clone(),
        })
        .await;
    let opts = Ec2Options {
        endpoint_url: settings.ec2_endpoint.clone(),
        retry: settings.aws_max_retries.map(RetryPolicy::with_retries),
        cancel: settings.cancel.clone(),
        ..Default::default()
    };
    (sdk, opts)
}

/// The provider's Google settings (endpoint, access token, stop signal) for `project`.
pub fn compute_options(settings: &Settings, project: String) -> ComputeOptions {
    ComputeOptions {
        project,
        endpoint: settings.gcp.endpoint.clone(),
        access_token: settings.gcp.access_token.clone(),
        cancel: settings.cancel.clone(),
        ..Default::default()
    }
}

/// The provider's Azure settings (endpoint, tenant, stop signal) for `subscription_id`.
pub fn azure_options(settings: &Settings, subscription_id: String) -> AzureCommitmentOptions {
    AzureCommitmentOptions {
        subscription_id,
        endpoint: settings.azure.endpoint.clone(),
        tenant_id: settings.azure.tenant_id.clone(),
        cancel: settings.cancel.clone(),
        ..Default::default()
    }
}

/// Azure in the provider's `azure.subscription_id`, with Azure's usual credentials.
fn azure(settings: &Settings) -> Result<AzureCommitments, CloudError> {
    let subscription_id = settings.azure.subscription_id.clone().ok_or_else(|| {
        CloudError::Invalid(
            "Azure commitments are bought in the provider's `azure.subscription_id`: set it in the `provider \"gpu\"` block".into(),
        )
    })?;
    AzureCommitments::connect(&azure_options(settings, subscription_id))
}
