//! Azure for the life of a process: the settings every Resource Manager client shares
//! ([`AzureSettings`]) and the session that builds the credential chain and the HTTP
//! client once ([`AzureSession`]), from which AKS, VM and commitment clients are made per
//! operation, each with that operation's stop signal. Tokens are cached by the chain, so
//! later operations do not fetch a new one.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::DEFAULT_ENDPOINT;
use super::aks::Aks;
use super::arm::{self, Arm};
use super::auth::AzureCredentials;
use super::commitments::AzureCommitments;
use super::instances::AzureVms;
use super::placement_scores::AzurePlacementScores;
use crate::cancel::Cancel;
use crate::pace::{Pace, TimeScale, is_cloud_host};
use crate::retry::RetryPolicy;
use crate::seam::CloudError;
use crate::seam::poll::Backoff;

/// How to reach Azure; every field is optional.
#[derive(Debug, Clone, Default)]
pub struct AzureSettings {
    /// The subscription commitments are bought in and VMs made in (the provider's
    /// `azure.subscription_id`).
    pub subscription_id: Option<String>,
    /// Tenant to authenticate against (the provider's `azure.tenant_id`); default the
    /// credential's (`AZURE_TENANT_ID`).
    pub tenant_id: Option<String>,
    /// Resource Manager base URL; default [`DEFAULT_ENDPOINT`].
    pub endpoint: Option<String>,
    /// An extra certificate authority (PEM) to trust, besides the system's, for private
    /// endpoints and emulators: used for Resource Manager and the token endpoint.
    pub ca_pem: Option<String>,
    /// Poll schedule of waits (default 5 s doubling to 30 s).
    pub backoff: Option<Backoff>,
    /// Retries of each call (default [`RetryPolicy::default`]).
    pub retry: Option<RetryPolicy>,
    /// Longest one HTTP attempt may take (default 30 s).
    pub attempt_timeout: Option<Duration>,
    /// Longest wait for one VM operation, purchase or capacity reservation (default 20 min).
    pub operation_timeout: Option<Duration>,
    /// The test-only time scale asked for ([`crate::pace`]): used only when `endpoint`
    /// is set to somewhere other than Azure's own hosts.
    pub time_scale: TimeScale,
}

impl AzureSettings {
    /// The clock of every Resource Manager client: the time scale when the endpoint is
    /// overridden, real time otherwise.
    pub fn pace(&self) -> Pace {
        let overridden = self
            .endpoint
            .as_deref()
            .is_some_and(|e| !is_cloud_host(e, AZURE_HOSTS));
        Pace::at(self.time_scale.at(overridden))
    }
}

/// Azure's own Resource Manager hosts: an endpoint there is Azure, whoever named it.
pub const AZURE_HOSTS: &[&str] = &[
    "management.azure.com",
    "management.usgovcloudapi.net",
    "management.chinacloudapi.cn",
];

/// Where the session reads credential variables from (the environment's names).
type Vars = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What every client of a session shares: the credential chain and the HTTP client.
type Shared = (Arc<AzureCredentials>, reqwest::Client);

/// The credential chain and HTTP client, made on first use and shared by every client
/// the session makes; clones share them.
#[derive(Clone, Default)]
pub struct AzureSession {
    settings: Arc<AzureSettings>,
    vars: Option<Vars>,
    shared: Arc<Mutex<Option<Shared>>>,
}

impl fmt::Debug for AzureSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureSession")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl AzureSession {
    /// A session of `settings` with Azure's usual chain from the process environment;
    /// nothing is built or called yet.
    pub fn new(settings: AzureSettings) -> Self {
        AzureSession {
            settings: Arc::new(settings),
            vars: None,
            shared: Arc::default(),
        }
    }

    /// Like [`AzureSession::new`], with the credential variables from `vars` instead of
    /// the process environment.
    pub fn with_vars(
        settings: AzureSettings,
        vars: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        AzureSession {
            vars: Some(Arc::new(vars)),
            ..Self::new(settings)
        }
    }

    /// The settings the session was made with.
    pub fn settings(&self) -> &AzureSettings {
        &self.settings
    }

    /// The credentials and HTTP client, built on the first call.
    fn shared(&self) -> Result<Shared, CloudError> {
        let mut slot = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let ca = self.settings.ca_pem.as_deref();
        let token_http = arm::http_client(ca, self.settings.attempt_timeout)?;
        let env = |name: &str| std::env::var(name).ok();
        let credentials = match &self.vars {
            Some(vars) => AzureCredentials::from_vars(
                self.settings.tenant_id.as_deref(),
                &|n| vars(n),
                Some(token_http),
            ),
            None => AzureCredentials::from_vars(
                self.settings.tenant_id.as_deref(),
                &env,
                Some(token_http),
            ),
        };
        let http = arm::http_client(ca, self.settings.attempt_timeout)?;
        let made = (Arc::new(credentials), http);
        *slot = Some(made.clone());
        Ok(made)
    }

    /// A Resource Manager client with the session's credentials and `cancel`.
    fn arm(&self, cancel: &Cancel) -> Result<Arm, CloudError> {
        let (credentials, http) = self.shared()?;
        Ok(Arm::new(
            http,
            self.settings
                .endpoint
                .as_deref()
                .unwrap_or(DEFAULT_ENDPOINT),
            credentials,
            self.settings.backoff.unwrap_or_default(),
            self.settings.retry.unwrap_or_default(),
            self.settings.pace(),
            cancel.clone(),
        ))
    }

    /// The longest wait for one VM operation or purchase.
    fn operation_timeout(&self) -> Duration {
        self.settings
            .operation_timeout
            .unwrap_or(Duration::from_secs(20 * 60))
    }

    /// The caller as its Entra token names it: the object id and, where present, a name
    /// ([`crate::audit::claims::entra_actor`]).
    pub async fn caller(&self) -> Result<String, CloudError> {
        let (credentials, _) = self.shared()?;
        let bearer = credentials.bearer().await?;
        let claims = bearer
            .claims()
            .ok_or_else(|| CloudError::Other("the Azure token is not a JWT".into()))?;
        crate::audit::claims::entra_actor(&claims)
            .ok_or_else(|| CloudError::Other("the Azure token names no object id".into()))
    }

    /// The AKS agent pool client; `cancel` ends its waits and retry pauses early.
    pub fn aks(&self, cancel: &Cancel) -> Result<Aks, CloudError> {
        Ok(Aks::new(self.arm(cancel)?))
    }

    /// The VMs of `subscription` (a GUID).
    pub fn vms(&self, subscription: &str, cancel: &Cancel) -> Result<AzureVms, CloudError> {
        let subscription = checked_subscription(subscription)?;
        Ok(AzureVms::new(
            self.arm(cancel)?,
            subscription,
            self.operation_timeout(),
        ))
    }

    /// The commitments of `subscription` (a GUID).
    pub fn commitments(
        &self,
        subscription: &str,
        cancel: &Cancel,
    ) -> Result<AzureCommitments, CloudError> {
        let subscription = checked_subscription(subscription)?;
        Ok(AzureCommitments::new(
            self.arm(cancel)?,
            subscription,
            self.operation_timeout(),
        ))
    }

    /// The spot placement scores of `subscription` (a GUID).
    pub fn placement_scores(
        &self,
        subscription: &str,
        cancel: &Cancel,
    ) -> Result<AzurePlacementScores, CloudError> {
        let subscription = checked_subscription(subscription)?;
        Ok(AzurePlacementScores::new(self.arm(cancel)?, subscription))
    }
}

/// `subscription`, lower-cased, when it is a GUID.
fn checked_subscription(subscription: &str) -> Result<String, CloudError> {
    if !crate::seam::is_guid(subscription) {
        return Err(CloudError::Invalid(format!(
            "{subscription:?} is not an Azure subscription id (a GUID)"
        )));
    }
    Ok(subscription.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_share_one_credential_chain_and_subscriptions_are_checked() {
        let session = AzureSession::with_vars(AzureSettings::default(), |_| None);
        let cancel = Cancel::new();
        session.aks(&cancel).unwrap();
        let sub = "ABCDEF01-2345-6789-ABCD-EF0123456789";
        session.vms(sub, &cancel).unwrap();
        session.commitments(sub, &cancel).unwrap();
        let first = session.shared.lock().unwrap().clone().unwrap().0;
        session.clone().aks(&cancel).unwrap();
        let again = session.shared.lock().unwrap().clone().unwrap().0;
        assert!(Arc::ptr_eq(&first, &again));
        assert!(matches!(
            session.vms("nope", &cancel),
            Err(CloudError::Invalid(m)) if m.contains("GUID")
        ));
    }

    #[test]
    fn the_time_scale_reaches_a_client_only_at_an_overridden_endpoint() {
        use crate::seam::Instances;
        let fast = TimeScale::parse("0.01").unwrap();
        let sub = "abcdef01-2345-6789-abcd-ef0123456789";
        let vms_at = |endpoint: Option<&str>| {
            let session = AzureSession::with_vars(
                AzureSettings {
                    endpoint: endpoint.map(str::to_string),
                    time_scale: fast,
                    ..Default::default()
                },
                |_| None,
            );
            session.vms(sub, &Cancel::new()).unwrap().pace().scale()
        };
        assert!(vms_at(None).is_real(), "Azure's own endpoint by default");
        assert!(vms_at(Some("https://management.azure.com")).is_real());
        assert_eq!(vms_at(Some("https://127.0.0.1:8443")), fast);
    }
}
