//! Google Cloud for the life of a process: the settings every Google client shares
//! ([`GcpSettings`]) and the session that resolves the credentials once and keeps one
//! HTTP connection pool ([`GcpSession`]), from which GKE and Compute Engine clients are
//! made per operation, each with that operation's stop signal.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::auth::{AccessToken, TokenSource};
use super::commitments::ComputeCommitments;
use super::gke::Gke;
use super::instances::ComputeInstances;
use super::rest;
use crate::cancel::Cancel;
use crate::pace::{Pace, TimeScale, is_cloud_host};
use crate::retry::RetryPolicy;
use crate::seam::CloudError;
use crate::seam::poll::Backoff;

/// How to reach Google Cloud; every field is optional.
#[derive(Debug, Clone, Default)]
pub struct GcpSettings {
    /// The project commitments are bought in (the provider's `gcp.project`).
    pub project: Option<String>,
    /// Base URL of every Google API called (default each API's public endpoint), for
    /// emulators and private endpoints.
    pub endpoint: Option<String>,
    /// An OAuth access token to use as is (else `GOOGLE_OAUTH_ACCESS_TOKEN`, else
    /// Application Default Credentials).
    pub access_token: Option<AccessToken>,
    /// Poll schedule of waits (default 5 s doubling to 30 s).
    pub backoff: Option<Backoff>,
    /// Retries of each call (default [`RetryPolicy::default`]).
    pub retry: Option<RetryPolicy>,
    /// Longest one HTTP attempt may take (default 30 s).
    pub attempt_timeout: Option<Duration>,
    /// Longest wait for one operation (default 30 min for GKE, 20 min for Compute Engine).
    pub operation_timeout: Option<Duration>,
    /// The test-only time scale asked for ([`crate::pace`]): used only when `endpoint`
    /// is set to somewhere other than Google's own hosts.
    pub time_scale: TimeScale,
}

/// Google's own API hosts: an endpoint there is Google Cloud, whoever named it.
pub const GOOGLE_HOSTS: &[&str] = &["googleapis.com"];

impl GcpSettings {
    /// The clock of every Google client: the time scale when the endpoint is overridden,
    /// real time otherwise.
    pub fn pace(&self) -> Pace {
        let overridden = self
            .endpoint
            .as_deref()
            .is_some_and(|e| !is_cloud_host(e, GOOGLE_HOSTS));
        Pace::at(self.time_scale.at(overridden))
    }
}

/// Google's token information endpoint (the audit log's actor for user credentials).
const TOKENINFO: &str = "https://oauth2.googleapis.com/tokeninfo";

/// The Application Default Credentials file: `GOOGLE_APPLICATION_CREDENTIALS`, else
/// gcloud's (`~/.config/gcloud/application_default_credentials.json`).
fn adc_file() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty()) {
        return Some(p.into());
    }
    let home = std::env::var_os("HOME")?;
    Some(std::path::Path::new(&home).join(".config/gcloud/application_default_credentials.json"))
}

/// Google credentials and an HTTP client, made on first use and shared by every client
/// the session makes; clones share them.
#[derive(Debug, Clone, Default)]
pub struct GcpSession {
    settings: Arc<GcpSettings>,
    shared: Arc<Mutex<Option<(TokenSource, reqwest::Client)>>>,
}

impl GcpSession {
    /// A session of `settings`; nothing is resolved or called yet.
    pub fn new(settings: GcpSettings) -> Self {
        GcpSession {
            settings: Arc::new(settings),
            shared: Arc::default(),
        }
    }

    /// The settings the session was made with.
    pub fn settings(&self) -> &GcpSettings {
        &self.settings
    }

    /// The token source and HTTP client, resolved on the first call ([`TokenSource::resolve`]).
    fn shared(&self) -> Result<(TokenSource, reqwest::Client), CloudError> {
        let mut slot = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let tokens = TokenSource::resolve(self.settings.access_token.as_ref())?;
        let http = rest::http_client(self.attempt_timeout())?;
        *slot = Some((tokens.clone(), http.clone()));
        Ok((tokens, http))
    }

    /// The attempt timeout of every call.
    fn attempt_timeout(&self) -> Duration {
        self.settings
            .attempt_timeout
            .unwrap_or(Duration::from_secs(30))
    }

    /// A client of `service` at the settings' endpoint (or `default_endpoint`).
    fn rest(
        &self,
        service: rest::Service,
        default_endpoint: &str,
        cancel: &Cancel,
    ) -> Result<rest::Rest, CloudError> {
        let (tokens, http) = self.shared()?;
        Ok(rest::Rest::with_client(
            service,
            self.settings
                .endpoint
                .as_deref()
                .unwrap_or(default_endpoint),
            tokens,
            http,
            self.settings.retry.unwrap_or_default(),
            self.settings.pace(),
            cancel.clone(),
        ))
    }

    /// The caller's e-mail: the service account the credentials file names (a key file,
    /// an impersonation), else what Google's tokeninfo says of the current token.
    pub async fn caller(&self) -> Result<String, CloudError> {
        let (tokens, http) = self.shared()?;
        if matches!(tokens, TokenSource::Adc(_))
            && let Some(account) = adc_file()
                .and_then(|p| std::fs::read(p).ok())
                .and_then(|b| serde_json::from_slice(&b).ok())
                .and_then(|v| crate::audit::claims::google_account(&v))
        {
            return Ok(account);
        }
        let token = tokens.token().await?;
        let answer = http
            .post(TOKENINFO)
            .form(&[("access_token", token.expose())])
            .send()
            .await
            .map_err(|e| CloudError::Transient(format!("tokeninfo: {e}")))?;
        let body: serde_json::Value = answer
            .json()
            .await
            .map_err(|e| CloudError::Other(format!("tokeninfo: {e}")))?;
        body.get("email")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| CloudError::Other("tokeninfo names no e-mail".into()))
    }

    /// The GKE node pool client; `cancel` ends its waits and retry pauses early.
    pub fn gke(&self, cancel: &Cancel) -> Result<Gke, CloudError> {
        let rest = self.rest(rest::GKE, rest::DEFAULT_ENDPOINT, cancel)?;
        let compute = self.rest(rest::COMPUTE, rest::COMPUTE_ENDPOINT, cancel)?;
        Ok(Gke::new(
            rest,
            self.settings.backoff.unwrap_or_default(),
            self.settings
                .operation_timeout
                .unwrap_or(Duration::from_secs(30 * 60)),
            cancel,
        )
        .with_compute(compute))
    }

    /// Compute Engine commitments of `project`.
    pub fn compute_commitments(
        &self,
        project: &str,
        cancel: &Cancel,
    ) -> Result<ComputeCommitments, CloudError> {
        let project = ComputeCommitments::checked_project(project)?;
        let rest = self.rest(rest::COMPUTE, rest::COMPUTE_ENDPOINT, cancel)?;
        Ok(ComputeCommitments::new(
            rest,
            project,
            self.settings.backoff.unwrap_or_default(),
            self.settings
                .operation_timeout
                .unwrap_or(Duration::from_secs(20 * 60)),
            cancel,
        ))
    }

    /// Compute Engine VMs of `project`.
    pub fn compute_instances(
        &self,
        project: &str,
        cancel: &Cancel,
    ) -> Result<ComputeInstances, CloudError> {
        Ok(ComputeInstances::new(
            self.compute_commitments(project, cancel)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_share_the_resolved_credentials_and_never_print_the_token() {
        let session = GcpSession::new(GcpSettings {
            access_token: Some(AccessToken::new("ya29.SECRET-value")),
            ..Default::default()
        });
        let cancel = Cancel::new();
        session.gke(&cancel).unwrap();
        session.compute_instances("my-project", &cancel).unwrap();
        assert!(session.shared.lock().unwrap().is_some());
        let clone = session.clone();
        assert!(Arc::ptr_eq(&clone.shared, &session.shared));
        assert!(!format!("{session:?}").contains("SECRET"));
        let bad = session.compute_commitments("Not A Project", &cancel);
        assert!(matches!(bad, Err(CloudError::Invalid(_))), "{bad:?}");
    }

    #[test]
    fn the_time_scale_reaches_a_client_only_at_an_overridden_endpoint() {
        use crate::seam::{Instances, NodeGroups};
        let fast = TimeScale::parse("0.01").unwrap();
        let session_at = |endpoint: Option<&str>| {
            GcpSession::new(GcpSettings {
                endpoint: endpoint.map(str::to_string),
                access_token: Some(AccessToken::new("ya29.test")),
                time_scale: fast,
                ..Default::default()
            })
        };
        let cancel = Cancel::new();
        let vm_scale = |s: &GcpSession| s.compute_instances("p", &cancel).unwrap().pace().scale();
        assert!(
            vm_scale(&session_at(None)).is_real(),
            "Google's own by default"
        );
        assert!(vm_scale(&session_at(Some("https://compute.googleapis.com"))).is_real());
        let fake = session_at(Some("http://127.0.0.1:8080"));
        assert_eq!(vm_scale(&fake), fast);
        // The GKE client's clock runs at the same scale: a 30 s poll of cloud time is
        // 0.3 s of real time.
        let gke = fake.gke(&cancel).unwrap();
        let before = gke.now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(gke.now() - before >= std::time::Duration::from_secs(2));
    }
}
