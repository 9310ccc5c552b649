//! The `provider "gpu"` block: its schema, its checks, and the settings resources use.

use crate::checks;
use gpu_core::clouds::gcp::auth::AccessToken;
use gpu_core::freshness::MaxPriceAge;
use gpu_core::seam::is_guid;
use serde::Deserialize;
use std::collections::BTreeMap;
use tfplugin::schema::{Attribute, Block, NestedBlock, Nesting, Presence, Schema};
use tfplugin::{AttributePath, Diagnostics, Tf, Type, Value};

/// The largest `aws.max_retries` accepted (with the 20 s cap, about 8 minutes of pauses).
pub const MAX_RETRIES_LIMIT: u32 = 25;

/// AWS service names that `aws.endpoints` may override: the ones the provider calls
/// (`ec2`: spot price history; `eks`: node groups; `pricing`: the bulk price list host).
pub const AWS_ENDPOINT_SERVICES: &[&str] = &["ec2", "eks", "pricing"];

/// The provider configuration schema.
pub fn schema() -> Schema {
    Schema::new(
        Block::new(
            "The `gpu` provider finds GPU offers across AWS, Azure and Google Cloud and manages \
             GPU capacity there. Each cloud block is optional; credentials come from that \
             cloud's usual chain (environment, shared config, workload identity).",
        )
        .block(NestedBlock::single(
            "aws",
            Block::new("Settings for AWS. Credentials come from the standard AWS chain (environment, shared config and credentials files, SSO, instance or pod roles).")
                .attribute(Attribute::optional("profile", Type::String).describe("Named profile of the shared AWS config files to use."))
                .attribute(Attribute::optional("endpoints", Type::map(Type::String)).describe("Endpoint overrides by service name, for emulators and private endpoints, e.g. `{ eks = \"http://127.0.0.1:5000\" }`: `eks` (node groups), `ec2` (capacity blocks and capacity reservations of `gpu_commitment` and `gpu_capacity_block_offers`; launch templates of a pool's floor on a capacity reservation; spot price history, with `live = true`), `pricing` (the base URL of the AWS bulk price list, default `https://pricing.us-east-1.amazonaws.com`, with `live = true`). Each pool calls the region it names; credentials come from the usual chain."))
                .attribute(Attribute::optional("max_retries", Type::Number).describe("How many times one EKS or EC2 call (node pools, commitments) is repeated after throttling, a server error or a dropped connection, from 0 (never) to 25 (unset: 7 after a server error or a dropped connection, so 8 attempts, and 24 while the cloud answers throttling, so 25 attempts; a value set here caps both). The pauses are 1 s doubling to 20 s with jitter, or the server's `Retry-After`. Errors that repeating cannot fix are never retried.")),
        ))
        .block(NestedBlock::single(
            "azure",
            Block::new("Settings for Azure, used by node pools on AKS. Credentials come from the standard Azure chain (environment client secret, workload identity, managed identity, Azure CLI); `AZURE_AUTHORITY_HOST` is honoured. See the Azure credentials guide.")
                .attribute(Attribute::optional("subscription_id", Type::String).describe("Azure subscription the pools' clusters are in (a GUID). When set, a pool whose `cluster` is in another subscription fails at plan."))
                .attribute(Attribute::optional("tenant_id", Type::String).describe("Microsoft Entra tenant to authenticate against (a GUID). Defaults to the credential's tenant."))
                .attribute(Attribute::optional("endpoint", Type::String).describe("Azure Resource Manager endpoint override, for emulators and private endpoints. Defaults to `https://management.azure.com`. (Sovereign clouds are not supported yet: tokens are requested for the public cloud's Resource Manager.)")),
        ))
        .block(NestedBlock::single(
            "gcp",
            Block::new("Settings for Google Cloud, used by node pools on GKE. Credentials come from `access_token` when set, else the `GOOGLE_OAUTH_ACCESS_TOKEN` environment variable, else Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS` key file, gcloud user credentials, the metadata server).")
                .attribute(Attribute::optional("project", Type::String).describe("Google Cloud project the pools' clusters are in. When set, a pool whose `cluster` is in another project fails at plan."))
                .attribute(Attribute::optional("endpoint", Type::String).describe("Endpoint override for the Google Cloud APIs, for emulators and private endpoints."))
                .attribute(Attribute::optional("access_token", Type::String).sensitive().describe("An OAuth 2.0 access token to call Google Cloud with, as is (it is not refreshed); default the `GOOGLE_OAUTH_ACCESS_TOKEN` environment variable, then Application Default Credentials. Sensitive: never shown in plans, logs or errors.")),
        ))
        .attribute(
            Attribute::optional("default_labels", Type::map(Type::String))
                .describe("Cloud tags put on every node pool's cloud resources (EKS node groups), under each pool's own `tags`, for spend breakdown (e.g. `{ team = \"ml\", project = \"llm\" }`). They are not Kubernetes node labels: use a pool's `labels` for those. Keys and values must be valid Kubernetes labels, so one set works on every cloud."),
        )
        .attribute(
            Attribute::optional("allow_commitment_purchase", Type::Bool)
                .describe("Whether `gpu_commitment` may buy commitments (capacity blocks, reservations). Default `false`: a plan that would buy one fails, saying what it would cost. Commitments cost money whether used or not, and many cannot be cancelled."),
        )
        .attribute(
            Attribute::optional("max_price_age", Type::String)
                .describe("How old a catalog price may be to count, such as `\"90d\"` or `\"12w\"`: older prices, and undated ones, are left out when offers are ranked (`gpu_spot_offer`, `gpu_offers`, `gpu_pool_placement`, and the instance types a `gpu_node_pool` chooses). Each data source's own `max_price_age` overrides it. Default: every price counts, and answers show each price's date and age."),
        )
        .attribute(
            Attribute::nested(
                "budget",
                Nesting::Single,
                vec![Attribute::optional("max_monthly_usd", Type::Number).describe("A ceiling per pool: the plan of any `gpu_node_pool` whose `monthly_usd_max` (its cost at `max_nodes`) is above this many US dollars fails with an error on `max_nodes`. Not a total over all pools.")],
                Presence::Optional,
            )
            .describe("Spending guard rails checked at plan time."),
        ),
    )
}

/// The provider block as typed values, for its checks (any value may be unknown there).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BlockValues {
    aws: Tf<AwsValues>,
    azure: Tf<AzureValues>,
    gcp: Tf<GcpValues>,
    default_labels: Tf<BTreeMap<String, Tf<String>>>,
    max_price_age: Tf<String>,
    budget: Tf<BudgetValues>,
}

/// The `aws` block's checked values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AwsValues {
    max_retries: Tf<f64>,
    endpoints: Tf<BTreeMap<String, Tf<String>>>,
}

/// The `azure` block's checked values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AzureValues {
    subscription_id: Tf<String>,
    tenant_id: Tf<String>,
    endpoint: Tf<String>,
}

/// The `gcp` block's checked values (the token prints as `***`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GcpValues {
    endpoint: Tf<String>,
    access_token: Tf<AccessToken>,
}

/// The `budget` attribute's checked values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BudgetValues {
    max_monthly_usd: Tf<f64>,
}

/// Checks the provider block; unknown values are skipped (checked again at configure).
pub fn validate(config: &Value) -> Diagnostics {
    let block: BlockValues = tfplugin::tf::decode(config).unwrap_or_default();
    let mut d = Diagnostics::new();
    if let Some(aws) = block.aws.known() {
        check_aws(&mut d, aws);
    }
    if let Some(azure) = block.azure.known() {
        let at = AttributePath::attr("azure");
        checks::http_url(&mut d, &azure.endpoint, at.clone().then_attr("endpoint"));
        for (attr, id) in [
            ("subscription_id", &azure.subscription_id),
            ("tenant_id", &azure.tenant_id),
        ] {
            if let Some(id) = id.known()
                && !is_guid(id)
            {
                d.attr_error(
                    at.clone().then_attr(attr),
                    format!("Invalid azure.{attr}"),
                    format!("`azure.{attr}` must be a GUID such as \"00000000-0000-0000-0000-000000000000\"."),
                );
            }
        }
    }
    if let Some(gcp) = block.gcp.known() {
        let at = AttributePath::attr("gcp");
        checks::http_url(&mut d, &gcp.endpoint, at.clone().then_attr("endpoint"));
        // The token itself is never quoted: only that it is empty.
        if gcp
            .access_token
            .known()
            .is_some_and(|t| t.expose().is_empty())
        {
            d.attr_error(
                at.then_attr("access_token"),
                "Empty gcp.access_token",
                "`gcp.access_token` is empty; give an OAuth access token, or leave it unset to use `GOOGLE_OAUTH_ACCESS_TOKEN` or Application Default Credentials.",
            );
        }
    }
    checks::labels(
        &mut d,
        &block.default_labels,
        AttributePath::attr("default_labels"),
    );
    checks::price_age(
        &mut d,
        &block.max_price_age,
        AttributePath::attr("max_price_age"),
    );
    if let Some(budget) = block.budget.known() {
        checks::non_negative(
            &mut d,
            &budget.max_monthly_usd,
            AttributePath::attr("budget").then_attr("max_monthly_usd"),
        );
    }
    d
}

/// The checks of the `aws` block: `max_retries` and `endpoints`.
fn check_aws(d: &mut Diagnostics, aws: &AwsValues) {
    let at = AttributePath::attr("aws");
    if let Some(n) = aws.max_retries.known()
        && !(n.fract() == 0.0 && (0.0..=f64::from(MAX_RETRIES_LIMIT)).contains(n))
    {
        d.attr_error(
            at.clone().then_attr("max_retries"),
            "Invalid aws.max_retries",
            format!(
                "`aws.max_retries` is {n}; it must be a whole number from 0 to {MAX_RETRIES_LIMIT}."
            ),
        );
    }
    for (service, url) in aws.endpoints.known().into_iter().flatten() {
        let path = at.clone().then_attr("endpoints").then_key(service.clone());
        if !AWS_ENDPOINT_SERVICES.contains(&service.as_str()) {
            d.attr_error(
                path.clone(),
                "Unknown AWS endpoint service",
                format!(
                    "`aws.endpoints` has no service {service:?}; valid services are: {}.",
                    AWS_ENDPOINT_SERVICES.join(", ")
                ),
            );
        }
        checks::http_url(d, url, path);
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

/// The provider settings after `ConfigureProvider`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct ProviderConfig {
    /// AWS settings.
    pub aws: Option<AwsConfig>,
    /// Azure settings.
    pub azure: Option<AzureConfig>,
    /// Google Cloud settings.
    pub gcp: Option<GcpConfig>,
    /// Labels for every pool and commitment.
    pub default_labels: Option<BTreeMap<String, String>>,
    /// Spending guard rails.
    pub budget: Option<Budget>,
    /// The oldest a price may be to count in rankings (`90d`).
    pub max_price_age: Option<String>,
    /// Whether `gpu_commitment` may buy.
    pub allow_commitment_purchase: Option<bool>,
}

impl ProviderConfig {
    /// `max_price_age`, parsed (validation has refused a bad one).
    pub fn max_price_age(&self) -> Option<MaxPriceAge> {
        self.max_price_age.as_deref().and_then(|s| s.parse().ok())
    }
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

/// The `azure` block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct AzureConfig {
    /// Subscription id.
    pub subscription_id: Option<String>,
    /// Tenant id.
    pub tenant_id: Option<String>,
    /// ARM endpoint override.
    pub endpoint: Option<String>,
}

/// The `gcp` block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct GcpConfig {
    /// Project id.
    pub project: Option<String>,
    /// API endpoint override.
    pub endpoint: Option<String>,
    /// An OAuth access token to use as is (printed as `***`; read by the GKE connection,
    /// which comes with the GKE node pools).
    pub access_token: Option<AccessToken>,
}

/// The `budget` attribute.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct Budget {
    /// Monthly ceiling in USD.
    pub max_monthly_usd: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: Vec<(&str, Value)>) -> Value {
        let ty = schema().value_type();
        let Type::Object(obj) = &ty else {
            unreachable!()
        };
        let mut m: BTreeMap<String, Value> = obj
            .attributes
            .keys()
            .map(|k| (k.clone(), Value::Null))
            .collect();
        for (k, v) in pairs {
            m.insert(k.to_string(), v);
        }
        Value::Object(m)
    }

    #[test]
    fn access_token_decodes_and_never_prints() {
        let token = "ya29.a0-secret-token-value";
        let c = config(vec![(
            "gcp",
            Value::object([
                ("project", Value::Null),
                ("endpoint", Value::Null),
                ("access_token", Value::string(token)),
            ]),
        )]);
        assert!(validate(&c).is_empty());
        let parsed: ProviderConfig = tfplugin::value::from_value(&c).unwrap();
        let gcp = parsed.gcp.as_ref().unwrap();
        assert_eq!(gcp.access_token.as_ref().unwrap().expose(), token);
        let shown = format!("{parsed:?}");
        assert!(
            !shown.contains("secret-token") && shown.contains("***"),
            "{shown}"
        );
        // An empty one is refused, naming the attribute and not echoing a value.
        let empty = config(vec![(
            "gcp",
            Value::object([
                ("project", Value::Null),
                ("endpoint", Value::Null),
                ("access_token", Value::string(" ")),
            ]),
        )]);
        let d = validate(&empty);
        assert_eq!(
            d.0.iter()
                .map(|x| x.attribute.as_ref().unwrap().to_string())
                .collect::<Vec<_>>(),
            ["gcp.access_token"]
        );
    }

    #[test]
    fn tenant_id_is_a_guid() {
        let c = config(vec![(
            "azure",
            Value::object([
                ("subscription_id", Value::Null),
                ("tenant_id", Value::string("contoso.onmicrosoft.com")),
                ("endpoint", Value::Null),
            ]),
        )]);
        let d = validate(&c);
        assert_eq!(d.0.len(), 1);
        assert_eq!(
            d.0[0].attribute.as_ref().unwrap().to_string(),
            "azure.tenant_id"
        );
        assert!(d.0[0].detail.contains("GUID"), "{}", d.0[0].detail);
    }

    #[test]
    fn empty_config_is_valid_and_decodes() {
        let c = config(vec![]);
        assert!(validate(&c).is_empty());
        let parsed: ProviderConfig = tfplugin::value::from_value(&c).unwrap();
        assert_eq!(parsed, ProviderConfig::default());
    }

    #[test]
    fn negative_budget_names_its_path() {
        let c = config(vec![(
            "budget",
            Value::object([("max_monthly_usd", Value::number(-5))]),
        )]);
        let d = validate(&c);
        assert!(d.has_errors());
        assert_eq!(
            d.0[0].attribute.as_ref().unwrap().to_string(),
            "budget.max_monthly_usd"
        );
    }

    #[test]
    fn max_retries_is_a_whole_number_up_to_the_limit() {
        let aws = |n: Value| {
            config(vec![(
                "aws",
                Value::object([
                    ("profile", Value::Null),
                    ("endpoints", Value::Null),
                    ("max_retries", n),
                ]),
            )])
        };
        for ok in [0.0, 3.0, 25.0] {
            let c = aws(Value::number(ok));
            assert!(validate(&c).is_empty(), "{ok}");
            let parsed: ProviderConfig = tfplugin::value::from_value(&c).unwrap();
            assert_eq!(parsed.aws.unwrap().max_retries, Some(ok as u32));
        }
        for bad in [-1.0, 2.5, 26.0] {
            let d = validate(&aws(Value::number(bad)));
            assert_eq!(d.0.len(), 1, "{bad}: {d:?}");
            assert_eq!(
                d.0[0].attribute.as_ref().unwrap().to_string(),
                "aws.max_retries"
            );
            assert!(d.0[0].detail.contains("from 0 to 25"), "{d:?}");
        }
    }

    #[test]
    fn bad_endpoints_and_guid() {
        let aws = Value::object([
            ("profile", Value::Null),
            (
                "endpoints",
                Value::map([("ec3", Value::string("localhost:5000"))]),
            ),
        ]);
        let azure = Value::object([
            ("subscription_id", Value::string("nope")),
            ("tenant_id", Value::Null),
            ("endpoint", Value::Null),
        ]);
        let d = validate(&config(vec![("aws", aws), ("azure", azure)]));
        let paths: Vec<String> =
            d.0.iter()
                .map(|x| x.attribute.as_ref().unwrap().to_string())
                .collect();
        assert_eq!(
            paths,
            vec![
                "aws.endpoints[\"ec3\"]",
                "aws.endpoints[\"ec3\"]",
                "azure.subscription_id"
            ]
        );
        assert!(is_aws_region("us-gov-west-1") && is_aws_region("eu-west-2"));
        assert!(is_guid("12345678-aaaa-bbbb-cccc-1234567890ab"));
    }

    #[test]
    fn unknown_values_are_not_judged() {
        let c = config(vec![
            ("budget", Value::unknown()),
            ("default_labels", Value::unknown()),
        ]);
        assert!(validate(&c).is_empty());
    }
}
