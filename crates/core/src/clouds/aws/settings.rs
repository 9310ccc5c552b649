//! How to reach AWS ([`AwsSettings`]): what the provider block's `aws` settings and the
//! tests give every AWS client.

use std::time::Duration;

use super::endpoints;
use crate::pace::{Pace, TimeScale};
use crate::retry::RetryPolicy;
use crate::seam::poll::Backoff;

/// How to reach AWS; every field is optional and defaults to the usual AWS chain.
#[derive(Debug, Clone, Default)]
pub struct AwsSettings {
    /// Named profile of the shared config files (`aws.profile`).
    pub profile: Option<String>,
    /// EKS endpoint override, e.g. an emulator at `http://127.0.0.1:5000`.
    pub eks_endpoint: Option<String>,
    /// EC2 endpoint override (instances, commitments, launch templates of groups on a
    /// capacity reservation).
    pub ec2_endpoint: Option<String>,
    /// STS endpoint override (the audit log's `GetCallerIdentity`).
    pub sts_endpoint: Option<String>,
    /// Poll schedule of node group waits (default 5 s doubling to 30 s).
    pub backoff: Option<Backoff>,
    /// Retries of each call (default [`RetryPolicy::default`]).
    pub retry: Option<RetryPolicy>,
    /// Longest one HTTP attempt may take before it is abandoned and retried (default 30 s).
    pub attempt_timeout: Option<Duration>,
    /// The test-only time scale asked for ([`crate::pace`]); a client gets it only when
    /// every service it calls has its endpoint overridden.
    pub time_scale: TimeScale,
}

impl AwsSettings {
    /// The endpoint setting of `service` (the SDK's service id: `EKS`, `EC2`, `STS`).
    fn endpoint_of(&self, service: &str) -> Option<&str> {
        match service {
            "EKS" => self.eks_endpoint.as_deref(),
            "EC2" => self.ec2_endpoint.as_deref(),
            "STS" => self.sts_endpoint.as_deref(),
            _ => None,
        }
    }

    /// The clock of a client calling `services`: the time scale when every one of them
    /// is overridden (here or by the SDK's environment), real time otherwise.
    pub fn pace(&self, services: &[&str]) -> Pace {
        self.pace_with(services, |n| std::env::var(n).ok())
    }

    /// [`AwsSettings::pace`] with the environment read through `vars`.
    pub fn pace_with(
        &self,
        services: &[&str],
        vars: impl Fn(&str) -> Option<String> + Copy,
    ) -> Pace {
        let overridden = services
            .iter()
            .all(|s| endpoints::overridden(s, self.endpoint_of(s), vars));
        Pace::at(self.time_scale.at(overridden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_scale_is_ignored_where_an_endpoint_is_aws_own() {
        let fast = TimeScale::parse("0.01").unwrap();
        let none = |_: &str| None;
        let real = AwsSettings {
            time_scale: fast,
            ..Default::default()
        };
        assert!(real.pace_with(&["EKS", "EC2"], none).scale().is_real());
        // EKS at an emulator, EC2 still AWS's: a pool's client calls both, so real time.
        let half = AwsSettings {
            eks_endpoint: Some("http://127.0.0.1:5000".into()),
            ..real.clone()
        };
        assert!(half.pace_with(&["EKS", "EC2"], none).scale().is_real());
        assert_eq!(half.pace_with(&["EKS"], none).scale(), fast);
        let both = AwsSettings {
            ec2_endpoint: Some("http://127.0.0.1:5000".into()),
            ..half
        };
        assert_eq!(both.pace_with(&["EKS", "EC2"], none).scale(), fast);
        // The SDK's own variable counts as an override, as the SDK follows it.
        let env = |n: &str| (n == "AWS_ENDPOINT_URL").then(|| "http://127.0.0.1:9".to_string());
        assert_eq!(real.pace_with(&["EC2"], env).scale(), fast);
    }
}
