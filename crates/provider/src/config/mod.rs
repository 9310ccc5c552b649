//! The `provider "gpu"` block: its schema (with the validators attached to its attributes),
//! and the settings resources use. Each cloud's block is that cloud's face ([`aws`],
//! [`azure`], [`gcp`]).

pub mod audit;
pub mod aws;
pub mod azure;
pub mod gcp;

use crate::checks;
use gpu_core::freshness::{Freshness, MaxPriceAge};
use serde::Deserialize;
use std::collections::BTreeMap;
use tfplugin::schema::{Attribute, Block, Nesting, Presence, Schema};
use tfplugin::{Diagnostics, Type, Value};

pub use aws::{AwsConfig, is_aws_region};
pub use azure::AzureConfig;
pub use gcp::GcpConfig;

/// The provider configuration schema.
pub fn schema() -> Schema {
    Schema::new(
        Block::new(
            "The `gpu` provider finds GPU offers across AWS, Azure and Google Cloud and manages \
             GPU capacity there. Each cloud block is optional; credentials come from that \
             cloud's usual chain (environment, shared config, workload identity).",
        )
        .block(aws::block())
        .block(azure::block())
        .block(gcp::block())
        .block(audit::block())
        .attribute(
            Attribute::optional("default_labels", Type::map(Type::String))
                .describe("Cloud tags (labels on Google Cloud) put on every resource the provider makes (node groups, agent pools and node pools, VMs, commitments), under each resource's own `tags` or `labels`, for spend breakdown (e.g. `{ team = \"ml\", project = \"llm\" }`). They are not Kubernetes node labels: use a pool's `labels` for those. One set works on every cloud.")
                .validate(checks::labels()),
        )
        .attribute(
            Attribute::optional("events_file", Type::String)
                .describe("A file the provider appends one JSON line to for each capacity event: a request for GPUs (`request`), a cloud's capacity answer (`capacity`, with `outcome` `stockout`, `quota` or `not_offered`), GPUs ready (`ready`, with `seconds` from the first request), and an `audit` line for every mutating cloud call (see the `audit` block). Each line has `at`, `event`, `cloud`, `region`, and where they apply `resource`, `zone`, `gpu`, `outcome`, `seconds`, `detail`; never a secret. `terraform-provider-gpu report time-to-gpu --events FILE` and `report capacity` read it. Default: the `GPU_TF_EVENTS_FILE` environment variable; neither set: no record.")
                .validate(checks::not_blank()),
        )
        .attribute(
            Attribute::optional("allow_commitment_purchase", Type::Bool)
                .describe("Whether `gpu_commitment` may buy commitments (capacity blocks, reservations). Default `false`: a plan that would buy one fails, saying what it would cost. Commitments cost money whether used or not, and many cannot be cancelled."),
        )
        .attribute(
            Attribute::optional("max_price_age", Type::String)
                .describe("How old a catalog price may be to count, such as `\"365d\"` or `\"52w\"`: older prices, and undated ones, are left out when offers are ranked (`gpu_spot_offer`, `gpu_offers`, `gpu_pool_placement`, and the instance types a `gpu_node_pool` chooses). Each data source's own `max_price_age` overrides it. Default: every price counts, and answers show each price's date and age.")
                .validate(checks::price_age()),
        )
        .attribute(
            Attribute::optional("include_stale_prices", Type::Bool)
                .describe("Whether catalog prices on the vendored stale list (AWS P4/P5 prices from before the 2025 price cut, see the catalog's `stale_prices.csv`) count when offers are ranked. Default `false`: they are left out, and every answer that shows one says why it is stale. Each data source's own `include_stale_prices` overrides it."),
        )
        .attribute(
            Attribute::nested(
                "budget",
                Nesting::Single,
                vec![Attribute::optional("max_monthly_usd", Type::Number).describe("A ceiling per pool: the plan of any `gpu_node_pool` whose `monthly_usd_max` (its cost at `max_nodes`) is above this many US dollars fails with an error on `max_nodes`. Not a total over all pools.").validate(checks::non_negative())],
                Presence::Optional,
            )
            .describe("Spending guard rails checked at plan time."),
        ),
    )
}

/// Every problem the validators attached to the provider block's attributes find in
/// `config` (run again at configure, when every value is known).
pub fn validate(config: &Value) -> Diagnostics {
    schema().block.check(config)
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
    /// Whether prices on the stale list count in rankings.
    pub include_stale_prices: Option<bool>,
    /// Whether `gpu_commitment` may buy.
    pub allow_commitment_purchase: Option<bool>,
    /// Where capacity events are appended.
    pub events_file: Option<String>,
    /// Where audit events go besides the events file.
    pub audit: Option<audit::AuditConfig>,
}

impl ProviderConfig {
    /// `max_price_age`, parsed (validation has refused a bad one).
    pub fn max_price_age(&self) -> Option<MaxPriceAge> {
        self.max_price_age.as_deref().and_then(|s| s.parse().ok())
    }

    /// Which catalog prices count in rankings: `max_price_age` and `include_stale_prices`.
    pub fn prices(&self) -> Freshness {
        Freshness::at_most(self.max_price_age())
            .including_stale(self.include_stale_prices.unwrap_or(false))
    }
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
        crate::model_values::object_of(&schema(), pairs)
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
        assert!(gpu_core::seam::is_guid(
            "12345678-aaaa-bbbb-cccc-1234567890ab"
        ));
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
