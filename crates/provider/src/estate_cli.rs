//! The flags `report spend` and `export` share: what to list (the `gpu_inventory`
//! filters) and with which accounts (mirroring the provider block), and the listing
//! itself. Read-only; credentials are each cloud's usual chain.

use std::collections::BTreeMap;
use std::process::ExitCode;

use gpu_core::catalog::Catalog;
use tfplugin::Value;

use crate::clouds::Clouds;
use crate::config::ProviderConfig;
use crate::config::aws::AwsConfig;
use crate::config::azure::AzureConfig;
use crate::config::gcp::GcpConfig;
use crate::data_sources::inventory::{self, Found};

/// What to list and the accounts to list it with.
#[derive(Debug, Clone, clap::Args)]
pub struct EstateArgs {
    /// Clouds to read, comma-separated (`aws,azure,gcp`); default: AWS, and Azure and
    /// Google Cloud when their account flags are given.
    #[arg(long, value_delimiter = ',')]
    pub clouds: Vec<String>,
    /// Regions to list VMs and commitments in: globs or region groups, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub regions: Vec<String>,
    /// A cluster whose node groups are listed (its cloud id), repeatable.
    #[arg(long = "cluster")]
    pub clusters: Vec<String>,
    /// What to list: `node_pool`, `instance`, `commitment` (default all).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// AWS profile, as the provider's `aws.profile`.
    #[arg(long)]
    pub aws_profile: Option<String>,
    /// AWS endpoint override `SERVICE=URL` (`ec2`, `eks`), repeatable, as `aws.endpoints`.
    #[arg(long = "aws-endpoint")]
    pub aws_endpoints: Vec<String>,
    /// Azure subscription, as `azure.subscription_id`.
    #[arg(long)]
    pub azure_subscription: Option<String>,
    /// Entra tenant, as `azure.tenant_id`.
    #[arg(long)]
    pub azure_tenant: Option<String>,
    /// ARM endpoint, as `azure.endpoint`.
    #[arg(long)]
    pub azure_endpoint: Option<String>,
    /// Google Cloud project, as `gcp.project`.
    #[arg(long)]
    pub gcp_project: Option<String>,
    /// Google API endpoint, as `gcp.endpoint`.
    #[arg(long)]
    pub gcp_endpoint: Option<String>,
}

/// The flag that sets data-source attribute `attr`.
fn flag_of(attr: &str) -> &'static str {
    match attr {
        "clouds" => "--clouds",
        "regions" => "--regions",
        "clusters" => "--cluster",
        "kinds" => "--kinds",
        _ => "--by",
    }
}

impl EstateArgs {
    /// The `--aws-endpoint` flags as the provider's `aws.endpoints` map.
    pub fn aws_endpoint_map(&self) -> Result<BTreeMap<String, String>, String> {
        let mut endpoints = BTreeMap::new();
        for e in &self.aws_endpoints {
            let (service, url) = e.split_once('=').ok_or_else(|| {
                format!("--aws-endpoint {e:?}: write SERVICE=URL, e.g. ec2=https://…")
            })?;
            endpoints.insert(service.trim().to_string(), url.trim().to_string());
        }
        Ok(endpoints)
    }

    /// The provider settings the flags give.
    pub fn provider_config(&self) -> Result<ProviderConfig, String> {
        let endpoints = self.aws_endpoint_map()?;
        Ok(ProviderConfig {
            aws: Some(AwsConfig {
                profile: self.aws_profile.clone(),
                endpoints: (!endpoints.is_empty()).then_some(endpoints),
                max_retries: None,
            }),
            azure: self.azure_subscription.as_ref().map(|s| AzureConfig {
                subscription_id: Some(s.clone()),
                tenant_id: self.azure_tenant.clone(),
                endpoint: self.azure_endpoint.clone(),
            }),
            gcp: self.gcp_project.as_ref().map(|p| GcpConfig {
                project: Some(p.clone()),
                endpoint: self.gcp_endpoint.clone(),
                access_token: None,
            }),
            ..ProviderConfig::default()
        })
    }

    /// The data source's arguments the flags give, summing by `group_by`.
    fn arguments(&self, group_by: &[String]) -> Value {
        let list = |v: &[String]| {
            (!v.is_empty()).then(|| Value::List(v.iter().map(Value::string).collect()))
        };
        let pairs = [
            ("clouds", list(&self.clouds)),
            ("regions", list(&self.regions)),
            ("clusters", list(&self.clusters)),
            ("kinds", list(&self.kinds)),
            ("group_by", list(group_by)),
        ];
        crate::model_values::object_of(
            &inventory::schema(),
            pairs.into_iter().filter_map(|(k, v)| Some((k, v?))),
        )
    }
}

/// The provider settings the flags give; a bad flag is printed (as
/// `terraform-provider-gpu <command>: …`) and gives exit 1.
pub fn config_of(a: &EstateArgs, command: &str) -> Result<ProviderConfig, ExitCode> {
    a.provider_config().map_err(|e| fail(command, e))
}

/// Prints `e` as `command`'s failure; exit 1.
pub fn fail(command: &str, e: String) -> ExitCode {
    eprintln!("terraform-provider-gpu {command}: {e}");
    ExitCode::FAILURE
}

/// A runtime for one command (a failure to start is printed, exit 1).
pub fn runtime(command: &str) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(command, format!("cannot start: {e}")))
}

/// Lists the estate the flags name through `clouds`, summing by `group_by`; bad filters
/// are printed (naming the flag) and give exit 1, unreadable places are warned about on
/// standard error.
pub async fn list_with(
    a: &EstateArgs,
    group_by: &[String],
    clouds: &Clouds,
    command: &str,
) -> Result<Found, ExitCode> {
    let found = inventory::list(&a.arguments(group_by), clouds, Catalog::embedded()).await;
    let found = found.map_err(|d| {
        for x in d.0 {
            let attr = x.summary.strip_prefix("Invalid ").unwrap_or_default();
            let text = x.detail.replace(&format!("`{attr}`"), flag_of(attr));
            eprintln!("terraform-provider-gpu {command}: {text}");
        }
        ExitCode::FAILURE
    })?;
    for u in &found.unread {
        eprintln!("warning: cannot read {}: {}", u.what, u.why);
    }
    Ok(found)
}

/// [`list_with`] with the clouds of the flags' accounts, on a runtime of its own.
pub fn list(a: &EstateArgs, group_by: &[String], command: &str) -> Result<Found, ExitCode> {
    let config = config_of(a, command)?;
    runtime(command)?.block_on(list_with(a, group_by, &Clouds::of(&config), command))
}
