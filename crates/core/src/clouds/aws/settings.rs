//! How to reach AWS ([`AwsSettings`]): what the provider block's `aws` settings and the
//! tests give every AWS client.

use std::time::Duration;

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
}
