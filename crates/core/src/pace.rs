//! The one clock of every wait: operation polls, retry pauses, busy-cluster pauses,
//! capacity waits and the watcher's ticks all sleep and measure through a [`Pace`].
//!
//! A pace runs at a [`TimeScale`]: 1 (the default) is real time. A test against an
//! emulator or a fake may shrink every interval by one factor through the environment
//! variable [`TIME_SCALE_VAR`] (`GPU_TF_TIME_SCALE=0.01`: a 5 s poll waits 50 ms, a
//! 15-minute `capacity_wait` 9 s). The factor never speeds up calls to a real cloud: a
//! client gets it only where its endpoint is overridden ([`TimeScale::at`]); elsewhere
//! it runs at 1. Durations handed to a pace are cloud time (what the cloud or the user
//! said); the pace turns them into real time once, where it sleeps.

use std::fmt;
use std::time::{Duration, Instant};

/// The environment variable of the test-only time scale: a number in (0, 1].
pub const TIME_SCALE_VAR: &str = "GPU_TF_TIME_SCALE";

/// How much faster than real time waits pass: every interval is multiplied by the
/// factor, in (0, 1]; 1 is real time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeScale(f64);

/// A value of [`TIME_SCALE_VAR`] that is not a number in (0, 1].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{TIME_SCALE_VAR}={0:?} is not a time scale: it must be a number greater than 0 and at most 1 (such as 0.01); waits run in real time"
)]
pub struct BadTimeScale(pub String);

impl Default for TimeScale {
    fn default() -> Self {
        TimeScale::REAL
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl TimeScale {
    /// Real time.
    pub const REAL: TimeScale = TimeScale(1.0);

    /// The scale `text` names: a number greater than 0 and at most 1.
    pub fn parse(text: &str) -> Result<TimeScale, BadTimeScale> {
        match text.trim().parse::<f64>() {
            Ok(f) if f.is_finite() && f > 0.0 && f <= 1.0 => Ok(TimeScale(f)),
            _ => Err(BadTimeScale(text.to_string())),
        }
    }

    /// The scale of [`TIME_SCALE_VAR`] as `lookup` reads it: real time when unset or
    /// empty.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<TimeScale, BadTimeScale> {
        match lookup(TIME_SCALE_VAR) {
            Some(v) if !v.trim().is_empty() => TimeScale::parse(&v),
            _ => Ok(TimeScale::REAL),
        }
    }

    /// The scale of the process environment's [`TIME_SCALE_VAR`].
    pub fn from_env() -> Result<TimeScale, BadTimeScale> {
        TimeScale::from_vars(|name| std::env::var(name).ok())
    }

    /// The factor every interval is multiplied by.
    pub fn factor(self) -> f64 {
        self.0
    }

    /// Whether this is real time.
    pub fn is_real(self) -> bool {
        self.0 >= 1.0
    }

    /// The scale a client gets: this one where its endpoint is overridden (an emulator,
    /// a fake, a private endpoint the user chose), real time where it is the cloud's own.
    pub fn at(self, endpoint_overridden: bool) -> TimeScale {
        if endpoint_overridden {
            self
        } else {
            TimeScale::REAL
        }
    }

    /// The real time that `d` of cloud time takes at this scale.
    pub fn real(self, d: Duration) -> Duration {
        if self.is_real() { d } else { d.mul_f64(self.0) }
    }
}

/// Whether `url`'s host is one of a cloud's own (it ends with one of `suffixes`, such as
/// `amazonaws.com`): a real cloud, even when a setting named it. Such an endpoint never
/// gets the time scale.
pub fn is_cloud_host(url: &str, suffixes: &[&str]) -> bool {
    let rest = url.trim().split_once("://").map_or(url.trim(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    }
    .trim_end_matches('.')
    .to_ascii_lowercase();
    suffixes.iter().any(|s| {
        let s = s.trim_start_matches('.');
        host == s || host.ends_with(&format!(".{s}"))
    })
}

/// A clock at a [`TimeScale`]: `now` in cloud time since the pace was made, `sleep`
/// and `timeout` scaled. Copies share the origin.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    origin: Instant,
    scale: TimeScale,
}

impl Default for Pace {
    fn default() -> Self {
        Pace::real()
    }
}

impl Pace {
    /// Real time.
    pub fn real() -> Self {
        Pace::at(TimeScale::REAL)
    }

    /// A clock at `scale`, starting now.
    pub fn at(scale: TimeScale) -> Self {
        Pace {
            origin: Instant::now(),
            scale,
        }
    }

    /// The scale this clock runs at.
    pub fn scale(&self) -> TimeScale {
        self.scale
    }

    /// Cloud time since the clock was made.
    pub fn now(&self) -> Duration {
        let real = self.origin.elapsed();
        if self.scale.is_real() {
            real
        } else {
            real.div_f64(self.scale.0)
        }
    }

    /// Cloud time since `since` (a reading of [`Pace::now`]).
    pub fn since(&self, since: Duration) -> Duration {
        self.now().saturating_sub(since)
    }

    /// Sleeps `d` of cloud time.
    #[cfg(feature = "live")]
    pub fn sleep(&self, d: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(self.scale.real(d))
    }

    /// Runs `f` for at most `d` of cloud time; `None` when the time ran out first.
    #[cfg(feature = "live")]
    pub async fn timeout<F: std::future::Future>(&self, d: Duration, f: F) -> Option<F::Output> {
        tokio::time::timeout(self.scale.real(d), f).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_is_a_number_in_zero_to_one() {
        assert_eq!(TimeScale::parse("0.01").map(TimeScale::factor), Ok(0.01));
        assert_eq!(TimeScale::parse(" 1 ").map(TimeScale::factor), Ok(1.0));
        for bad in ["0", "-0.5", "1.5", "fast", "NaN", "inf", ""] {
            let e = TimeScale::parse(bad).unwrap_err();
            assert!(e.to_string().contains("GPU_TF_TIME_SCALE"), "{e}");
            assert!(e.to_string().contains("at most 1"), "{e}");
        }
    }

    #[test]
    fn unset_means_real_time() {
        assert_eq!(TimeScale::from_vars(|_| None), Ok(TimeScale::REAL));
        assert_eq!(
            TimeScale::from_vars(|_| Some(" ".into())),
            Ok(TimeScale::REAL)
        );
        assert_eq!(
            TimeScale::from_vars(|n| (n == TIME_SCALE_VAR).then(|| "0.05".into())),
            Ok(TimeScale(0.05))
        );
    }

    #[test]
    fn only_an_overridden_endpoint_gets_the_scale() {
        let fast = TimeScale::parse("0.01").unwrap();
        assert_eq!(fast.at(true), fast);
        assert_eq!(fast.at(false), TimeScale::REAL);
        assert_eq!(TimeScale::REAL.at(true), TimeScale::REAL);
    }

    #[test]
    fn a_cloud_host_is_known_by_its_suffix() {
        let aws = ["amazonaws.com", "amazonaws.com.cn"];
        assert!(is_cloud_host("https://eks.us-east-1.amazonaws.com", &aws));
        assert!(is_cloud_host(
            "https://vpce-1.ec2.us-east-1.vpce.AMAZONAWS.com/",
            &aws
        ));
        assert!(is_cloud_host(
            "https://ec2.cn-north-1.amazonaws.com.cn:443/x",
            &aws
        ));
        assert!(!is_cloud_host("http://127.0.0.1:5000", &aws));
        assert!(!is_cloud_host("http://localhost:4566/", &aws));
        assert!(!is_cloud_host("http://[::1]:8080", &aws));
        assert!(!is_cloud_host("https://amazonaws.com.evil.example", &aws));
        assert!(is_cloud_host(
            "https://management.azure.com/",
            &["management.azure.com"]
        ));
    }

    #[test]
    fn intervals_shrink_by_the_factor_and_real_time_is_untouched() {
        let fast = TimeScale::parse("0.01").unwrap();
        assert_eq!(fast.real(Duration::from_secs(5)), Duration::from_millis(50));
        assert_eq!(
            TimeScale::REAL.real(Duration::from_secs(5)),
            Duration::from_secs(5)
        );
    }

    #[cfg(feature = "live")]
    #[tokio::test]
    async fn a_scaled_clock_counts_cloud_time() {
        let pace = Pace::at(TimeScale::parse("0.001").unwrap());
        let start = Instant::now();
        pace.sleep(Duration::from_secs(30)).await;
        assert!(pace.now() >= Duration::from_secs(30), "{:?}", pace.now());
        let late = pace
            .timeout(Duration::from_secs(20), std::future::pending::<()>())
            .await;
        assert!(late.is_none());
        let real = start.elapsed();
        assert!(real >= Duration::from_millis(50), "{real:?}");
        assert!(real < Duration::from_secs(5), "{real:?}");
    }
}
