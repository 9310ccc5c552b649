//! Leader election for `watch` replicas: the flags, and one round of client-go's
//! acquire-or-renew against the Lease ([`crate::lease::decide`] over [`crate::kube`]).
//!
//! A replica that is not leader does no pass; it says "standby" once per spell. A replica
//! that cannot reach the API is not leader (no starts) and keeps running. Before each
//! start the leader checks it still holds an unexpired lease ([`LeaseHold`]). At exit the
//! leader gives the Lease up ([`Background::release`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::kube::{KubeAccess, KubeError, LeaseClient, SERVICE_ACCOUNT_DIR};
use crate::lease::{Decision, decide, hold_for, released};

/// The leader-election flags of `watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct LeaseArgs {
    /// Elect one leader among replicas through this `coordination.k8s.io` Lease; only the
    /// leader starts VMs (off when not given).
    #[arg(long)]
    pub lease_name: Option<String>,
    /// The Lease's namespace (default: the pod's own, from the service account, else
    /// `default`).
    #[arg(long)]
    pub lease_namespace: Option<String>,
    /// How long a leader's lease lasts unless renewed (whole seconds).
    #[arg(long, default_value = "30s")]
    pub lease_duration: String,
    /// This replica's name in the Lease (default: `$POD_NAME`, else hostname_pid).
    #[arg(long)]
    pub identity: Option<String>,
    /// Kubernetes API URL (default: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`).
    #[arg(long)]
    pub kube_endpoint: Option<String>,
    /// Bearer token file, read again on each request (default: the service account's).
    #[arg(long)]
    pub kube_token_file: Option<PathBuf>,
    /// CA bundle (PEM) of the API server (default: the service account's `ca.crt`).
    #[arg(long)]
    pub kube_ca_file: Option<PathBuf>,
}

/// Until when this replica may act as leader; shared with the start guard.
#[derive(Debug, Clone, Default)]
pub struct LeaseHold(Arc<Mutex<Option<Instant>>>);

impl LeaseHold {
    /// True while the lease this replica last acquired or renewed is still good.
    pub fn holds(&self) -> bool {
        self.0
            .lock()
            .map(|u| u.is_some_and(|until| Instant::now() < until))
            .unwrap_or(false)
    }

    /// Sets until when this replica may act as leader (`None`: not leader).
    pub fn set(&self, until: Option<Instant>) {
        if let Ok(mut u) = self.0.lock() {
            *u = until;
        }
    }
}

/// The outcome of one round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// We hold the lease: do the pass.
    Leader,
    /// Someone else does, or the API could not be reached: no pass.
    Standby(String),
}

/// One replica's side of the election.
#[derive(Debug)]
pub struct Elector {
    client: LeaseClient,
    identity: String,
    duration: Duration,
    hold: LeaseHold,
    last: Option<Role>,
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn default_identity() -> String {
    env_nonempty("POD_NAME").unwrap_or_else(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .or_else(|| env_nonempty("HOSTNAME"))
            .unwrap_or_else(|| "localhost".into());
        format!("{host}_{}", std::process::id())
    })
}

fn default_endpoint() -> Option<String> {
    let host = env_nonempty("KUBERNETES_SERVICE_HOST")?;
    let port = env_nonempty("KUBERNETES_SERVICE_PORT").unwrap_or_else(|| "443".into());
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    Some(format!("https://{host}:{port}"))
}

impl LeaseArgs {
    /// The elector these flags ask for, `None` without `--lease-name`.
    pub fn elector(&self) -> Result<Option<Elector>, String> {
        let Some(name) = &self.lease_name else {
            return Ok(None);
        };
        let duration = crate::duration::parse(&self.lease_duration)
            .map_err(|e| format!("--lease-duration {:?}: {e}", self.lease_duration))?;
        if duration < Duration::from_secs(1) || duration.subsec_nanos() != 0 {
            return Err(format!(
                "--lease-duration {:?}: whole seconds, at least 1s",
                self.lease_duration
            ));
        }
        let sa = PathBuf::from(SERVICE_ACCOUNT_DIR);
        let namespace = self.lease_namespace.clone().unwrap_or_else(|| {
            std::fs::read_to_string(sa.join("namespace"))
                .ok()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "default".into())
        });
        let endpoint = self.kube_endpoint.clone().or_else(default_endpoint).ok_or(
            "--lease-name needs the Kubernetes API: run in a pod (KUBERNETES_SERVICE_HOST) \
             or give --kube-endpoint",
        )?;
        let ca_file = self.kube_ca_file.clone().or_else(|| {
            let ca = sa.join("ca.crt");
            (ca.exists() && endpoint.starts_with("https:")).then_some(ca)
        });
        let access = KubeAccess {
            endpoint,
            token_file: self
                .kube_token_file
                .clone()
                .unwrap_or_else(|| sa.join("token")),
            ca_file,
        };
        // A round never waits longer than a third of the lease on the API.
        let timeout = (duration / 3).clamp(Duration::from_secs(1), Duration::from_secs(10));
        let client = LeaseClient::new(access, &namespace, name, timeout)?;
        Ok(Some(Elector {
            client,
            identity: self.identity.clone().unwrap_or_else(default_identity),
            duration,
            hold: LeaseHold::default(),
            last: None,
        }))
    }
}

impl Elector {
    /// What the start guard checks.
    pub fn hold(&self) -> LeaseHold {
        self.hold.clone()
    }

    /// How often to renew (and, on standby, to try): a third of the lease.
    pub fn retry_period(&self) -> Duration {
        self.duration / 3
    }

    /// Keeps electing in the background: one round now (so the first pass knows its
    /// role), then one every [`Elector::retry_period`], renewing while a pass runs however
    /// long it takes (a pass never outlives the lease unnoticed). `on_round` hears each
    /// outcome. Returns the hold the loop and the start guard read, and the handle that
    /// stops the election and gives the lease up.
    pub async fn run_in_background(
        mut self,
        on_round: impl Fn(bool) + Send + Sync + 'static,
    ) -> (LeaseHold, Background) {
        let hold = self.hold();
        on_round(self.round().await == Role::Leader);
        let (client, identity) = (self.client.clone(), self.identity.clone());
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(self.retry_period()).await;
                on_round(self.round().await == Role::Leader);
            }
        });
        let bg = Background {
            client,
            identity,
            hold: hold.clone(),
            task: Some(task),
        };
        (hold, bg)
    }

    /// One acquire-or-renew; says on standard error when the role changes (standby once
    /// per spell; never the token).
    pub async fn round(&mut self) -> Role {
        let sent = Instant::now();
        let role = match self.try_acquire_or_renew().await {
            Ok(role) => role,
            Err(KubeError::Conflict(why)) => {
                Role::Standby(format!("another replica wrote the lease first ({why})"))
            }
            Err(e) => Role::Standby(format!("not leader while the lease cannot be used: {e}")),
        };
        self.hold.set(match role {
            Role::Leader => Some(sent + hold_for(self.duration)),
            Role::Standby(_) => None,
        });
        match (&role, &self.last) {
            (Role::Leader, Some(Role::Leader)) | (Role::Standby(_), Some(Role::Standby(_))) => {}
            (Role::Leader, _) => eprintln!(
                "terraform-provider-gpu watch: leader: {} holds the lease {}",
                self.identity,
                self.client.describe()
            ),
            (Role::Standby(why), _) => eprintln!(
                "terraform-provider-gpu watch: standby: {} is not leader of the lease {}: {why}",
                self.identity,
                self.client.describe()
            ),
        }
        self.last = Some(role.clone());
        role
    }

    async fn try_acquire_or_renew(&self) -> Result<Role, KubeError> {
        let read = self.client.get().await?;
        let now_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        match decide(
            read.as_ref().map(|r| &r.record),
            &self.identity,
            now_us,
            self.duration,
        ) {
            Decision::Standby { holder, until_us } => Ok(Role::Standby(format!(
                "held by {holder} until {}",
                crate::lease::format_micro_time(until_us)
            ))),
            Decision::Acquire(record) | Decision::Renew(record) => {
                match &read {
                    None => self.client.create(&record).await?,
                    Some(read) => self.client.replace(read, &record).await?,
                };
                Ok(Role::Leader)
            }
        }
    }
}

/// The election running in the background.
#[derive(Debug)]
pub struct Background {
    client: LeaseClient,
    identity: String,
    hold: LeaseHold,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Background {
    /// Stops electing and, when this replica holds the Lease, gives it up at once (as
    /// client-go's `ReleaseOnCancel`: no holder, a 1-second duration), so another replica
    /// takes over without waiting for it to run out. Best effort: a failure only means
    /// the others wait for the expiry.
    pub async fn release(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
        // The Lease itself says whether it is ours: the aborted round may have written it
        // without having said so yet.
        self.hold.set(None);
        let outcome = async {
            let Some(read) = self.client.get().await? else {
                return Ok(false);
            };
            if read.record.holder != self.identity {
                return Ok(false);
            }
            let now_us = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as i64);
            self.client
                .replace(&read, &released(&read.record, now_us))
                .await
                .map(|_| true)
        }
        .await;
        match outcome {
            Ok(true) => eprintln!(
                "terraform-provider-gpu watch: released the lease {}",
                self.client.describe()
            ),
            Ok(false) => {}
            Err(e) => eprintln!(
                "terraform-provider-gpu watch: could not release the lease {} (it runs out by itself): {e}",
                self.client.describe()
            ),
        }
    }
}
