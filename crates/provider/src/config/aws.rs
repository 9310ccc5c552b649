//! The provider block's `aws {}` face: its schema and checks, its settings, and the AWS
//! session settings they become.

use gpu_core::clouds::aws::AwsSettings;
use gpu_core::retry::RetryPolicy;
use serde::Deserialize;
use std::collections::BTreeMap;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::validators::Validator;
use tfplugin::{Diagnostic, Type};

use crate::checks;

/// The largest `aws.max_retries` accepted (with the 20 s cap, about 8 minutes of pauses).
pub const MAX_RETRIES_LIMIT: u32 = 25;

/// AWS service names that `aws.endpoints` may override: the ones the provider calls
/// (`ec2`: spot price history; `eks`: node groups; `pricing`: the bulk price list host;
/// `sts`: the audit log's caller).
pub const AWS_ENDPOINT_SERVICES: &[&str] = &["ec2", "eks", "pricing", "sts"];

/// The `aws` block's schema.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "aws",
        Block::new("Settings for AWS. Credentials come from the standard AWS chain (environment, shared config and credentials files, SSO, instance or pod roles).")
            .attribute(Attribute::optional("profile", Type::String).describe("Named profile of the shared AWS config files to use."))
            .attribute(
                Attribute::optional("endpoints", Type::map(Type::String))
                    .describe("Endpoint overrides by service name, for emulators and private endpoints, e.g. `{ eks = \"http://127.0.0.1:5000\" }`: `eks` (node groups), `ec2` (capacity blocks and capacity reservations of `gpu_commitment` and `gpu_capacity_block_offers`; launch templates of a pool's floor on a capacity reservation; spot price history, with `live = true`), `pricing` (the base URL of the AWS bulk price list, default `https://pricing.us-east-1.amazonaws.com`, with `live = true`), `sts` (`GetCallerIdentity`, the audit log's actor). Each pool calls the region it names; credentials come from the usual chain.")
                    .validate(known_services())
                    .validate(checks::http_url().each().describe("")),
            )
            .attribute(
                Attribute::optional("max_retries", Type::Number)
                    .describe("How many times one EKS or EC2 call (node pools, commitments) is repeated after throttling, a server error or a dropped connection, from 0 (never) to 25 (unset: 7 after a server error or a dropped connection, so 8 attempts, and 24 while the cloud answers throttling, so 25 attempts; a value set here caps both). The pauses are 1 s doubling to 20 s with jitter, or the server's `Retry-After`. Errors that repeating cannot fix are never retried.")
                    .validate(retries()),
            ),
    )
}

/// Every key of `aws.endpoints` is a service the provider calls.
fn known_services() -> Validator {
    Validator::diagnosing(|path, v| {
        v.as_entries()
            .into_iter()
            .flatten()
            .filter(|(service, _)| !AWS_ENDPOINT_SERVICES.contains(&service.as_str()))
            .map(|(service, _)| {
                Diagnostic::error(
                    "Unknown AWS endpoint service",
                    format!(
                        "`aws.endpoints` has no service {service:?}; valid services are: {}.",
                        AWS_ENDPOINT_SERVICES.join(", ")
                    ),
                )
                .at(path.clone().then_key(service.clone()))
            })
            .collect()
    })
    .describe("Keys must be `ec2`, `eks`, `pricing` or `sts`, values `http://` or `https://` URLs.")
}

/// `aws.max_retries` is a whole number up to [`MAX_RETRIES_LIMIT`].
fn retries() -> Validator {
    Validator::with_detail(|name, v| {
        let n = v.as_number().map(|n| n.as_f64()).unwrap_or(f64::NAN);
        if n.fract() == 0.0 && (0.0..=f64::from(MAX_RETRIES_LIMIT)).contains(&n) {
            Ok(())
        } else {
            Err(format!(
                "`{name}` is {n}; it must be a whole number from 0 to {MAX_RETRIES_LIMIT}."
            ))
        }
    })
    .describe(format!(
        "Must be a whole number from 0 to {MAX_RETRIES_LIMIT}."
    ))
}

/// The `aws` block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct AwsConfig {
    /// Shared-config profile.
    pub profile: Option<String>,
    /// Endpoint overrides by service.
    pub endpoints: Option<BTreeMap<String, String>>,
    /// Retries of each EKS call after the first attempt.
    pub max_retries: Option<u32>,
}

impl AwsConfig {
    /// The AWS session settings of this block.
    pub fn settings(&self) -> AwsSettings {
        let endpoint = |service: &str| {
            self.endpoints
                .as_ref()
                .and_then(|e| e.get(service).cloned())
        };
        AwsSettings {
            profile: self.profile.clone(),
            eks_endpoint: endpoint("eks"),
            ec2_endpoint: endpoint("ec2"),
            sts_endpoint: endpoint("sts"),
            retry: self.max_retries.map(RetryPolicy::with_retries),
            ..Default::default()
        }
    }
}

/// Whether `s` has the shape of an AWS region (`us-east-1`, `us-gov-west-1`).
pub fn is_aws_region(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() >= 3
        && parts[0].len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && parts
            .last()
            .is_some_and(|p| p.chars().all(|c| c.is_ascii_digit()))
}
