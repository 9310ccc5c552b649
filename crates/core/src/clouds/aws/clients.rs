//! The AWS SDK clients of this driver: SDK retries off ([`crate::retry`] owns them) and
//! one set of timeouts.

use std::time::Duration;

use aws_sdk_eks::config::timeout::TimeoutConfig;

/// The SDK timeouts of every AWS client here: 10 s to connect, `attempt` (default 30 s)
/// per attempt. Retries are off in the SDK: [`crate::retry`] owns them.
pub(super) fn sdk_timeouts(attempt: Option<Duration>) -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(10))
        .operation_attempt_timeout(attempt.unwrap_or(Duration::from_secs(30)))
        .build()
}

/// An EC2 client of `sdk` with SDK retries off and [`sdk_timeouts`], in `region` and at
/// `endpoint` when given.
pub(super) fn ec2_client(
    sdk: &aws_config::SdkConfig,
    region: Option<&str>,
    endpoint: Option<&str>,
    attempt_timeout: Option<Duration>,
) -> aws_sdk_ec2::Client {
    let mut conf = aws_sdk_ec2::config::Builder::from(sdk)
        .retry_config(aws_sdk_ec2::config::retry::RetryConfig::disabled())
        .timeout_config(sdk_timeouts(attempt_timeout));
    if let Some(r) = region {
        conf = conf.region(aws_sdk_ec2::config::Region::new(r.to_string()));
    }
    if let Some(ep) = endpoint {
        conf = conf.endpoint_url(ep);
    }
    aws_sdk_ec2::Client::from_conf(conf.build())
}
