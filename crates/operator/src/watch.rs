//! `watch`: the reclaim watcher. Finds the VMs `gpu_instance` manages that a reclaim
//! stopped and brings them back (`core::reclaim::Watcher`), one JSON line per event, a
//! summary table at the end. Never deletes or stops anything, never starts a VM a person
//! stopped. Same credential chains as the provider. With `--lease-name` only the replica
//! holding the Lease does passes ([`crate::elector`]); with `--metrics-addr` it serves
//! Prometheus metrics ([`crate::metrics`]). The provider binary's `watch` subcommand is
//! [`WatchArgs`] and [`run`].

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use gpu_core::catalog::Catalog;
use gpu_core::instance::Instances;
use gpu_core::offer::Cloud;
use gpu_core::pace::{Pace, TimeScale};
use gpu_core::reclaim::{Event, StartSchedule, Summary, Watcher};
use gpu_core::retry::Backoff;

use crate::elector::{LeaseArgs, LeaseHold};
use crate::guard::LeaseGuarded;
use crate::metrics::Metrics;
use gpu_core::audit::audited::AuditedInstances;
use gpu_core::audit::{Audit, AuditContext, AuditSink, JsonLinesSink, StdoutSink};
use gpu_core::cancel::Cancel;
use gpu_core::clouds::aws::AwsSettings;
use gpu_core::clouds::azure::AzureSettings;
use gpu_core::clouds::gcp::GcpSettings;
use gpu_core::record::EventLog;
use gpu_core::registry::sessions::{CloudSettings, Sessions};
use gpu_core::seam::Place;

/// The flags of `watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// What to watch, repeatable: `aws:<region>`, `gcp:<project>`, `azure:<subscription>`.
    #[arg(long = "target", required = true)]
    targets: Vec<String>,
    /// One pass, then exit (for cron).
    #[arg(long)]
    once: bool,
    /// Pause between passes (Go duration: `30s`, `2m`).
    #[arg(long, default_value = "60s")]
    interval: String,
    /// Stop after this many passes (a round on standby counts as one).
    #[arg(long)]
    passes: Option<u32>,
    /// Exit after a pass that leaves no reclaimed VM to bring back (never on standby).
    #[arg(long)]
    exit_when_idle: bool,
    /// First pause after a start refused for want of capacity (doubles, with jitter).
    #[arg(long, default_value = "30s")]
    retry_initial: String,
    /// Longest pause between start attempts.
    #[arg(long, default_value = "10m")]
    retry_max: String,
    /// Stop trying this long after the reclaim, and say so.
    #[arg(long, default_value = "6h")]
    give_up_after: String,
    /// Append the JSON-line events to this file (default: the `GPU_TF_EVENTS_FILE`
    /// environment variable, the provider's record, else standard output).
    #[arg(long, env = "GPU_TF_EVENTS_FILE")]
    events: Option<PathBuf>,
    /// Print the summary table (by cloud and GPU) to standard error at exit.
    #[arg(long)]
    summary: bool,
    /// Compute Engine endpoint (default Google's), as the provider's `gcp.endpoint`.
    #[arg(long)]
    gcp_endpoint: Option<String>,
    /// EC2 endpoint, as the provider's `aws.endpoints.ec2`.
    #[arg(long)]
    aws_endpoint: Option<String>,
    /// STS endpoint (the audit lines' AWS caller), as the provider's `aws.endpoints.sts`.
    #[arg(long)]
    aws_sts_endpoint: Option<String>,
    /// AWS profile.
    #[arg(long)]
    aws_profile: Option<String>,
    /// ARM endpoint, as the provider's `azure.endpoint`.
    #[arg(long)]
    azure_endpoint: Option<String>,
    /// Serve Prometheus metrics on this address (`GET /metrics`), e.g. `127.0.0.1:9464`
    /// or `0.0.0.0:9464` in a pod (off when not given).
    #[arg(long)]
    metrics_addr: Option<String>,
    /// Leader election among replicas.
    #[command(flatten)]
    lease: Box<LeaseArgs>,
}

fn duration(flag: &str, s: &str) -> Result<Duration, String> {
    crate::duration::parse(s).map_err(|e| format!("--{flag} {s:?}: {e}"))
}

fn place(target: &str) -> Result<Place, String> {
    let (cloud, scope) = target.split_once(':').ok_or_else(|| {
        format!(
            "--target {target:?}: write `aws:<region>`, `gcp:<project>` or `azure:<subscription>`"
        )
    })?;
    let cloud = gpu_core::pool::spelling::cloud(cloud)
        .filter(|c| matches!(c, Cloud::Aws | Cloud::Azure | Cloud::Gcp))
        .ok_or_else(|| format!("--target {target:?}: the cloud is `aws`, `azure` or `gcp`"))?;
    Ok(match cloud {
        Cloud::Gcp | Cloud::Azure => Place {
            cloud,
            region: String::new(),
            scope: Some(scope.to_string()),
        },
        _ => Place {
            cloud,
            region: scope.to_string(),
            scope: None,
        },
    })
}

/// Runs the watcher; exit 1 on bad flags or when no target could be reached.
pub fn run(args: &WatchArgs) -> ExitCode {
    match try_run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terraform-provider-gpu watch: {e}");
            ExitCode::FAILURE
        }
    }
}

fn try_run(args: &WatchArgs) -> Result<(), String> {
    let interval = duration("interval", &args.interval)?;
    let schedule = StartSchedule {
        backoff: Backoff {
            initial: duration("retry-initial", &args.retry_initial)?,
            max: duration("retry-max", &args.retry_max)?,
        },
        give_up_after: duration("give-up-after", &args.give_up_after)?,
    };
    let places = args
        .targets
        .iter()
        .map(|t| place(t))
        .collect::<Result<Vec<_>, _>>()?;
    // The test-only time scale reaches only clouds whose endpoint is overridden.
    let time_scale = TimeScale::from_env().unwrap_or_else(|e| {
        eprintln!("terraform-provider-gpu watch: {e}");
        TimeScale::REAL
    });
    let sessions = Sessions::new(CloudSettings {
        aws: AwsSettings {
            profile: args.aws_profile.clone(),
            ec2_endpoint: args.aws_endpoint.clone(),
            sts_endpoint: args.aws_sts_endpoint.clone(),
            time_scale,
            ..Default::default()
        },
        azure: AzureSettings {
            endpoint: args.azure_endpoint.clone(),
            time_scale,
            ..Default::default()
        },
        gcp: GcpSettings {
            endpoint: args.gcp_endpoint.clone(),
            time_scale,
            ..Default::default()
        },
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    runtime.block_on(watch(args, &sessions, &places, schedule, interval))
}

async fn watch(
    args: &WatchArgs,
    sessions: &Sessions,
    places: &[Place],
    schedule: StartSchedule,
    interval: Duration,
) -> Result<(), String> {
    let elector = args.lease.elector()?;
    let elected = elector.is_some();
    let metrics = Arc::new(Metrics::new());
    metrics.set_leader(elector.is_none());
    let (hold, election) = match elector {
        Some(el) => {
            let m = metrics.clone();
            let (hold, bg) = el
                .run_in_background(move |leader| m.set_leader(leader))
                .await;
            (Some(hold), Some(bg))
        }
        None => (None, None),
    };
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("listening for SIGTERM: {e}"))?;
    if let Some(addr) = &args.metrics_addr {
        let bound = crate::serve::spawn(addr, metrics.clone()).await?;
        eprintln!("terraform-provider-gpu watch: metrics on http://{bound}/metrics");
    }
    // The watcher's places always carry their scope (`place`), so the sessions' own
    // check is the only one needed; nothing cancels the connection (Ctrl-C ends the loop).
    let cancel = Cancel::new();
    // Every start is audited where the events go: who started what, and how it ended.
    let sink: Arc<dyn AuditSink> = match &args.events {
        Some(path) => Arc::new(JsonLinesSink(EventLog::at(path))),
        None => Arc::new(StdoutSink),
    };
    let audit = Audit::new(vec![sink], Arc::new(sessions.clone())).within(AuditContext {
        resource: Some("watch".into()),
        monthly_delta_usd: None,
    });
    let mut watched: Vec<(Box<dyn Instances>, Watcher, String)> = Vec::new();
    for p in places {
        let mut c = sessions
            .instances(p, &cancel)
            .await
            .map_err(|e| format!("{}: {e}", p.cloud))?;
        c = AuditedInstances::wrap(c, &p.region, &audit);
        if let Some(hold) = &hold {
            c = Box::new(LeaseGuarded {
                inner: c,
                hold: hold.clone(),
            });
        }
        let scope = p.scope.clone();
        let label = format!("{}:{}", p.cloud, scope.unwrap_or(p.region.clone()));
        watched.push((c, Watcher::new(schedule), label));
    }
    let mut out: Box<dyn std::io::Write> = match &args.events {
        Some(path) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("--events {}: {e}", path.display()))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    let clock = WatchClock::of(watched.iter().map(|(c, _, _)| c.pace()), elected);
    let mut all: Vec<Event> = Vec::new();
    let max_passes = if args.once { Some(1) } else { args.passes };
    let mut pass = 0u32;
    loop {
        pass += 1;
        // With election, a pass only while the lease renewed in the background holds.
        let leader = hold.as_ref().is_none_or(LeaseHold::holds);
        // A target whose first read fails cannot be read at all (no credentials, an
        // unknown region or project): the watcher ends with one line and failure rather
        // than watching nothing. Later failures are reported and the next pass retries.
        let mut unreadable = Vec::new();
        for (cloud, watcher, label) in watched.iter_mut().filter(|_| leader) {
            let now = clock.unix_now();
            match watcher.pass(cloud.as_ref(), Catalog::embedded(), now).await {
                Ok(events) => {
                    for e in events {
                        metrics.observe(&e);
                        let _ = writeln!(out, "{}", e.json_line());
                        all.push(e);
                    }
                    let _ = out.flush();
                }
                Err(e) if !watcher.has_read() => unreadable.push(format!("{label}: {e}")),
                Err(e) => eprintln!("terraform-provider-gpu watch: {label}: {e}"),
            }
        }
        for why in audit.take_failures() {
            eprintln!("terraform-provider-gpu watch: audit line not written: {why}");
        }
        if !unreadable.is_empty() {
            if let Some(bg) = election {
                bg.release().await;
            }
            return Err(format!("cannot read {}", unreadable.join("; ")));
        }
        let pending: usize = watched.iter().map(|(_, w, _)| w.pending()).sum();
        if leader {
            let mut by_cloud: std::collections::BTreeMap<&str, usize> = Default::default();
            for (c, w, _) in &watched {
                *by_cloud.entry(c.cloud().as_str()).or_default() += w.pending();
            }
            for (cloud, n) in by_cloud {
                metrics.set_stopped(cloud, n);
            }
            metrics.pass_done(clock.unix_now() as f64);
        }
        if max_passes.is_some_and(|m| pass >= m) || (args.exit_when_idle && leader && pending == 0)
        {
            break;
        }
        // SIGTERM (a pod stopping) or Ctrl-C ends the loop between passes.
        tokio::select! {
            _ = clock.pace.sleep(interval) => {}
            _ = terminate.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    if let Some(bg) = election {
        bg.release().await;
    }
    if args.summary {
        eprintln!("{}", Summary::of(&all).table());
    }
    Ok(())
}

/// The watcher's time: its ticks, its start schedule and its events' times on one
/// [`Pace`]. The test-only time scale applies only when every target's client runs at
/// it (each cloud's endpoint overridden) and no Lease elects the leader (a Lease's
/// duration is real time on the Kubernetes API server, shared with the other replicas);
/// otherwise the watcher runs in real time.
struct WatchClock {
    pace: Pace,
    /// Unix time when the watcher started.
    started: f64,
}

impl WatchClock {
    /// The clock of a watcher whose clients run at `paces`, `elected` through a Lease or
    /// not.
    fn of(paces: impl Iterator<Item = Pace>, elected: bool) -> Self {
        let scales: Vec<TimeScale> = paces.map(|p| p.scale()).collect();
        let scale = match scales.first() {
            Some(&s) if !elected && scales.iter().all(|&x| x == s) => s,
            _ => TimeScale::REAL,
        };
        WatchClock {
            pace: Pace::at(scale),
            started: gpu_core::time::unix_now() as f64,
        }
    }

    /// Unix seconds as the watcher's schedule counts them: the system clock in real
    /// time, else the start plus the scaled time since.
    fn unix_now(&self) -> i64 {
        if self.pace.scale().is_real() {
            return gpu_core::time::unix_now() as i64;
        }
        (self.started + self.pace.now().as_secs_f64()) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_project_a_subscription_or_a_region() {
        let gcp = place("gcp:my-project").unwrap();
        assert_eq!(gcp.scope.as_deref(), Some("my-project"));
        let sub = "6b1f0a52-3c9d-4e7a-8f21-9d0c4b7e5a13";
        let azure = place(&format!("AZURE:{sub}")).unwrap();
        assert_eq!(azure.cloud, Cloud::Azure);
        assert_eq!(azure.scope.as_deref(), Some(sub));
        assert_eq!(azure.region.as_str(), "");
        let aws = place("aws:us-east-1").unwrap();
        assert_eq!(aws.region, "us-east-1");
        assert_eq!(aws.scope, None);
        assert!(place("azure").is_err());
        assert!(place("oci:x").is_err());
    }

    #[test]
    fn the_watcher_runs_fast_only_when_every_target_does() {
        let fast = TimeScale::parse("0.01").unwrap();
        let all_fast = WatchClock::of([Pace::at(fast), Pace::at(fast)].into_iter(), false);
        assert_eq!(all_fast.pace.scale(), fast);
        let one_real = WatchClock::of([Pace::at(fast), Pace::real()].into_iter(), false);
        assert!(one_real.pace.scale().is_real());
        assert!(
            WatchClock::of(std::iter::empty(), false)
                .pace
                .scale()
                .is_real()
        );
        let leased = WatchClock::of([Pace::at(fast)].into_iter(), true);
        assert!(leased.pace.scale().is_real(), "a Lease's time is real");
        let real = WatchClock::of([Pace::real()].into_iter(), false);
        let wall = gpu_core::time::unix_now() as i64;
        assert!((real.unix_now() - wall).abs() <= 1);
    }
}
