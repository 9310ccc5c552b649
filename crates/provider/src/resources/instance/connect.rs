//! The VM adapter of an instance's cloud, with that cloud's usual credentials.

use gpu_core::instance::Instances;
use gpu_core::offer::Cloud;
use gpu_core::seam::CloudError;

use super::Settings;
use crate::resources::commitment::connect as options;

/// Where an instance lives, as much as the adapter needs to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Cloud.
    pub cloud: Cloud,
    /// Region.
    pub region: String,
    /// Google Cloud project.
    pub project: Option<String>,
    /// Azure subscription (`None`: the provider's `azure.subscription_id`).
    pub subscription: Option<String>,
}

/// Gives the VM adapter for a place (the cloud in the provider, a fake in tests).
#[async_trait::async_trait]
pub trait Connector: Sync {
    /// The adapter of `place`; an error when it cannot be set up.
    async fn instances(&self, place: &Place) -> Result<Box<dyn Instances>, CloudError>;
}

#[async_trait::async_trait]
impl Connector for Settings {
    async fn instances(&self, place: &Place) -> Result<Box<dyn Instances>, CloudError> {
        match place.cloud {
            Cloud::Gcp => {
                let project = place.project.clone().ok_or_else(|| {
                    CloudError::Invalid("no Google Cloud project: set `gcp.project`".into())
                })?;
                gpu_core::clouds::gcp::ComputeInstances::connect(&options::compute_options(
                    &self.base, project,
                ))
                .map(|c| Box::new(c) as Box<dyn Instances>)
            }
            Cloud::Aws => {
                let (sdk, opts) = options::ec2_setup(&self.base, &place.region).await;
                Ok(Box::new(gpu_core::clouds::aws::Ec2Instances::new(
                    &sdk,
                    &place.region,
                    opts,
                )))
            }
            Cloud::Azure => {
                let subscription_id = place
                    .subscription
                    .clone()
                    .or_else(|| self.base.azure.subscription_id.clone())
                    .ok_or_else(|| {
                        CloudError::Invalid(
                            "no Azure subscription: Azure VMs are created in the provider's `azure.subscription_id`: set it in the `provider \"gpu\"` block's `azure` block".into(),
                        )
                    })?;
                gpu_core::clouds::azure::AzureVms::connect(&options::azure_options(
                    &self.base,
                    subscription_id,
                ))
                .map(|c| Box::new(c) as Box<dyn Instances>)
            }
            other => Err(CloudError::Invalid(format!(
                "gpu_instance does not run on {other}: the clouds are aws, azure and gcp"
            ))),
        }
    }
}
