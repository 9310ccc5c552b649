//! Whether an AWS service's endpoint is overridden: by the provider's setting, or by the
//! SDK's own environment variables (`AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`,
//! unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true). The test-only time scale
//! ([`crate::pace`]) applies only to such a service.

use crate::pace::is_cloud_host;

/// AWS's own host names: an endpoint under one is AWS, whoever named it.
pub const AWS_HOSTS: &[&str] = &["amazonaws.com", "amazonaws.com.cn", "api.aws"];

/// Whether calls to `service` (the SDK's service id: `EC2`, `EKS`, `STS`) go somewhere
/// other than AWS: `setting` names such an endpoint, or else the environment `vars` do
/// (the service's own variable first, as the SDK reads them).
pub fn overridden(
    service: &str,
    setting: Option<&str>,
    vars: impl Fn(&str) -> Option<String>,
) -> bool {
    let elsewhere = |url: &str| !is_cloud_host(url, AWS_HOSTS);
    if let Some(url) = setting.filter(|s| !s.trim().is_empty()) {
        return elsewhere(url);
    }
    if vars("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    {
        return false;
    }
    let named = |name: &str| vars(name).filter(|v| !v.trim().is_empty());
    named(&format!(
        "AWS_ENDPOINT_URL_{}",
        service.to_ascii_uppercase()
    ))
    .or_else(|| named("AWS_ENDPOINT_URL"))
    .is_some_and(|url| elsewhere(&url))
}

/// [`overridden`] with the process environment.
pub fn overridden_here(service: &str, setting: Option<&str>) -> bool {
    overridden(service, setting, |n| std::env::var(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |n| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
    }

    #[test]
    fn aws_own_endpoint_unless_a_setting_or_the_sdk_variables_say_otherwise() {
        assert!(!overridden("EKS", None, vars(&[])));
        assert!(overridden("EKS", Some("http://127.0.0.1:5000"), vars(&[])));
        assert!(overridden(
            "EKS",
            None,
            vars(&[("AWS_ENDPOINT_URL", "http://127.0.0.1:9")])
        ));
        assert!(overridden(
            "EC2",
            None,
            vars(&[("AWS_ENDPOINT_URL_EC2", "http://x")])
        ));
        // Another service's variable does not count.
        assert!(!overridden(
            "EKS",
            None,
            vars(&[("AWS_ENDPOINT_URL_EC2", "http://x")])
        ));
        assert!(!overridden("EKS", None, vars(&[("AWS_ENDPOINT_URL", " ")])));
        // An endpoint of AWS's own (a VPC endpoint, say) is the real cloud.
        assert!(!overridden(
            "EC2",
            Some("https://vpce-0a.ec2.us-east-1.vpce.amazonaws.com"),
            vars(&[("AWS_ENDPOINT_URL", "http://127.0.0.1:9")])
        ));
        assert!(!overridden(
            "EKS",
            None,
            vars(&[(
                "AWS_ENDPOINT_URL_EKS",
                "https://eks.us-west-2.amazonaws.com"
            )])
        ));
        // The SDK ignores the variables when told to; so do we.
        assert!(!overridden(
            "EKS",
            None,
            vars(&[
                ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
                ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
            ])
        ));
    }
}
