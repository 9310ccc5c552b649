//! Azure credentials, the usual way: `azure_identity`'s credentials tried in the order
//! Azure's own tools use (environment client secret, workload identity, managed identity,
//! Azure CLI), the first that gives a token kept for the life of the adapter.
//! `AZURE_AUTHORITY_HOST` is honoured by the credentials themselves. Tokens and secrets
//! never reach `Debug` output or error text.

use std::fmt;
use std::sync::{Arc, Mutex};

use azure_core::cloud::{CloudConfiguration, CustomConfiguration};
use azure_core::credentials::{Secret, TokenCredential};
use azure_core::http::{ClientOptions, Transport};
use azure_identity::{
    AzureCliCredential, AzureCliCredentialOptions, ClientSecretCredential,
    ClientSecretCredentialOptions, ManagedIdentityCredential, WorkloadIdentityCredential,
    WorkloadIdentityCredentialOptions,
};

use crate::seam::CloudError;

/// The scope of Azure Resource Manager tokens.
pub const ARM_SCOPE: &str = "https://management.azure.com/.default";

/// A bearer token; `Debug` and `Display` never show it.
#[derive(Clone)]
pub struct Bearer(Secret);

impl Bearer {
    /// The `Authorization` header value.
    pub fn header(&self) -> String {
        format!("Bearer {}", self.0.secret())
    }

    /// The token's claims (the payload of an Entra JWT), `None` when it is not a JWT.
    /// Read for the audit log's actor; the signature is Entra's to check, not ours.
    pub fn claims(&self) -> Option<serde_json::Value> {
        use base64::Engine as _;
        let payload = self.0.secret().split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

impl fmt::Debug for Bearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bearer(***)")
    }
}

/// One way of getting a token, named for messages.
struct Source {
    name: &'static str,
    credential: Arc<dyn TokenCredential>,
}

/// The credential chain of one adapter.
pub struct AzureCredentials {
    sources: Vec<Source>,
    /// Why sources that were not even built were left out (e.g. a variable unset).
    skipped: Vec<String>,
    /// The index of the source that worked, once one has.
    chosen: Mutex<Option<usize>>,
}

impl fmt::Debug for AzureCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.sources.iter().map(|s| s.name).collect();
        f.debug_struct("AzureCredentials")
            .field("sources", &names)
            .finish_non_exhaustive()
    }
}

impl AzureCredentials {
    /// The chain from the process environment; `tenant` (the provider's
    /// `azure.tenant_id`) overrides `AZURE_TENANT_ID`.
    pub fn from_env(tenant: Option<&str>) -> Self {
        Self::from_vars(tenant, &|name| std::env::var(name).ok(), None)
    }

    /// The chain from the variables `var` gives (the environment's names:
    /// `AZURE_TENANT_ID`, `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`,
    /// `AZURE_FEDERATED_TOKEN_FILE`, `AZURE_AUTHORITY_HOST`); with `http`, the client
    /// secret is exchanged through that client (e.g. one trusting a private CA).
    pub fn from_vars(
        tenant: Option<&str>,
        var: &dyn Fn(&str) -> Option<String>,
        http: Option<reqwest::Client>,
    ) -> Self {
        let env = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let tenant = tenant
            .map(str::to_string)
            .or_else(|| env("AZURE_TENANT_ID"));
        // The authority host (a sovereign cloud, or a local token endpoint).
        let mut client_options = ClientOptions::default();
        if let Some(host) = env("AZURE_AUTHORITY_HOST") {
            let mut custom = CustomConfiguration::default();
            custom.authority_host = host;
            client_options.cloud = Some(Arc::new(CloudConfiguration::from(custom)));
        }
        if let Some(client) = http {
            client_options.transport = Some(Transport::new(Arc::new(client)));
        }
        let mut built: Vec<(&'static str, azure_core::Result<Arc<dyn TokenCredential>>)> =
            Vec::new();
        let mut skipped = Vec::new();
        let mut add = |name: &'static str, b: azure_core::Result<Arc<dyn TokenCredential>>| {
            built.push((name, b));
        };
        match (&tenant, env("AZURE_CLIENT_ID"), env("AZURE_CLIENT_SECRET")) {
            (Some(t), Some(id), Some(secret)) => add(
                "environment client secret",
                ClientSecretCredential::new(
                    t,
                    id,
                    Secret::new(secret),
                    Some(ClientSecretCredentialOptions { client_options }),
                )
                .map(|c| c as Arc<dyn TokenCredential>),
            ),
            _ => skipped.push(
                "environment client secret: AZURE_TENANT_ID (or azure.tenant_id), \
                 AZURE_CLIENT_ID and AZURE_CLIENT_SECRET are not all set"
                    .into(),
            ),
        }
        if env("AZURE_FEDERATED_TOKEN_FILE").is_some() {
            add(
                "workload identity",
                WorkloadIdentityCredential::new(Some(WorkloadIdentityCredentialOptions {
                    tenant_id: tenant.clone(),
                    ..Default::default()
                }))
                .map(|c| c as Arc<dyn TokenCredential>),
            );
        } else {
            skipped.push("workload identity: AZURE_FEDERATED_TOKEN_FILE is not set".into());
        }
        add(
            "managed identity",
            ManagedIdentityCredential::new(None).map(|c| c as Arc<dyn TokenCredential>),
        );
        add(
            "Azure CLI",
            AzureCliCredential::new(Some(AzureCliCredentialOptions {
                tenant_id: tenant,
                ..Default::default()
            }))
            .map(|c| c as Arc<dyn TokenCredential>),
        );
        let mut sources = Vec::new();
        for (name, b) in built {
            match b {
                Ok(credential) => sources.push(Source { name, credential }),
                Err(e) => skipped.push(format!("{name}: {}", first_line(&e.to_string()))),
            }
        }
        AzureCredentials {
            sources,
            skipped,
            chosen: Mutex::new(None),
        }
    }

    /// A token for Azure Resource Manager from the first source that gives one; every
    /// source's failure in the error when none does.
    pub async fn bearer(&self) -> Result<Bearer, CloudError> {
        let chosen = *self.chosen.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = chosen {
            return self.sources[i]
                .credential
                .get_token(&[ARM_SCOPE], None)
                .await
                .map(|t| Bearer(t.token))
                .map_err(|e| {
                    CloudError::Unauthorized(format!(
                        "Azure {}: {}",
                        self.sources[i].name,
                        first_line(&e.to_string())
                    ))
                });
        }
        let mut failures = self.skipped.clone();
        for (i, source) in self.sources.iter().enumerate() {
            match source.credential.get_token(&[ARM_SCOPE], None).await {
                Ok(t) => {
                    *self.chosen.lock().unwrap_or_else(|p| p.into_inner()) = Some(i);
                    return Ok(Bearer(t.token));
                }
                Err(e) => failures.push(format!("{}: {}", source.name, first_line(&e.to_string()))),
            }
        }
        Err(CloudError::Unauthorized(format!(
            "no Azure credential gave a token ({})",
            failures.join("; ")
        )))
    }
}

/// The first line of a message (credential errors can be long).
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}
