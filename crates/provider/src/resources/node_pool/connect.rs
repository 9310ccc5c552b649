//! The connection a pool's calls go through: EKS, AKS or GKE by the pool's `cloud`, with
//! the provider's settings for that cloud and the cloud's usual credential chain.

use gpu_core::clouds::aws::{Eks, EksOptions};
use gpu_core::clouds::azure::{Aks, AksOptions};
use gpu_core::clouds::gcp::{Gke, GkeOptions};
use gpu_core::offer::Cloud;
use gpu_core::retry::RetryPolicy;
use gpu_core::seam::NodeGroups;
use tfplugin::{Diagnostic, Diagnostics, Value};

use super::desired::Settings;
use super::inputs::text;

/// The cloud of pool `v` (any spelling); aws when it names none (validation refuses that
/// before any of these runs; a cloud without node groups is refused by [`connect`]).
pub fn cloud_of(v: &Value) -> Cloud {
    gpu_core::pool::spelling::cloud(&text(v, "cloud")).unwrap_or(Cloud::Aws)
}

/// The region of pool `v` as its cloud spells it (`US-EAST-1` → `us-east-1`): the AWS SDK
/// signs requests for the region it is given, so a re-spelled one must not reach it.
pub fn region_of(v: &Value) -> String {
    gpu_core::pool::spelling::region(Some(cloud_of(v)), &text(v, "region"))
}

/// Connects to the node-pool API of pool `v`'s cloud. AWS: the SDK's chain (loaded once
/// per region and profile for the life of the process). Azure: `azure_identity`'s chain
/// for `azure.tenant_id`. Google: `gcp.access_token`, `GOOGLE_OAUTH_ACCESS_TOKEN`, or
/// Application Default Credentials. No call is made here.
pub async fn connect(settings: &Settings, v: &Value) -> Result<Box<dyn NodeGroups>, Diagnostics> {
    match cloud_of(v) {
        Cloud::Azure => Aks::connect(&AksOptions {
            endpoint: settings.azure.endpoint.clone(),
            tenant_id: settings.azure.tenant_id.clone(),
            cancel: settings.cancel.clone(),
            ..Default::default()
        })
        .map(|a| Box::new(a) as Box<dyn NodeGroups>)
        .map_err(|e| connect_error("Azure", &e)),
        Cloud::Gcp => Gke::connect(&GkeOptions {
            endpoint: settings.gcp.endpoint.clone(),
            access_token: settings.gcp.access_token.clone(),
            cancel: settings.cancel.clone(),
            ..Default::default()
        })
        .map(|g| Box::new(g) as Box<dyn NodeGroups>)
        .map_err(|e| connect_error("Google Cloud", &e)),
        Cloud::Aws => Ok(Box::new(eks(settings, &region_of(v)).await)),
        other => Err(Diagnostic::error(
            "No node groups on this cloud",
            format!(
                "gpu_node_pool runs on managed Kubernetes node groups: aws (EKS), azure (AKS) or gcp (GKE); {other} has none here."
            ),
        )
        .at(tfplugin::AttributePath::attr("cloud"))
        .into()),
    }
}

/// Connects to EKS in `region` with the provider's AWS settings.
async fn eks(settings: &Settings, region: &str) -> Eks {
    Eks::connect_cached(
        &settings.aws_configs,
        &EksOptions {
            region: Some(region.to_string()),
            endpoint_url: settings.eks_endpoint.clone(),
            ec2_endpoint_url: settings.ec2_endpoint.clone(),
            profile: settings.aws_profile.clone(),
            cancel: settings.cancel.clone(),
            retry: settings.aws_max_retries.map(RetryPolicy::with_retries),
            ..Default::default()
        },
    )
    .await
}

/// The error of a connection that could not be set up (no credentials, a bad CA).
fn connect_error(cloud: &str, e: &gpu_core::seam::CloudError) -> Diagnostics {
    Diagnostic::error(
        format!("Cannot connect to {cloud}"),
        format!("{e}\nSee the {cloud} credentials guide of the gpu provider."),
    )
    .into()
}
