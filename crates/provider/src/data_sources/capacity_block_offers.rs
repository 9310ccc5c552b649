//! `gpu_capacity_block_offers`: EC2 capacity-block offerings across the regions asked,
//! ranked by price per GPU-hour, with upfront fee, zone, start and end (read-only
//! `DescribeCapacityBlockOfferings` calls; nothing is bought).

use serde::Deserialize;
use std::sync::Arc;
use tfplugin::Tf;

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use gpu_core::commitment::rank_offerings;
use gpu_core::commitment::spec::{self, Candidate, CommitmentConfig, Term};
use gpu_core::commitment::{CapacityBlockOffering, OfferingQuery};
use gpu_core::seam::commitments::capacity_block_offerings;
use gpu_core::time::{format_rfc3339, unix_now};
use tfplugin::provider::ReadDataSourceResponse;
use tfplugin::resource::{ReadDataRequest, ValidateRequest};
use tfplugin::schema::{Attribute, Block};
use tfplugin::{AttributePath, DataSource, Diagnostic, Diagnostics, Schema, Type, Value};

use crate::resources::commitment::resource::CommitmentProvider;
use gpu_core::seam::ConnectCommitments as Connector;

/// The data source's type name.
pub const TYPE_NAME: &str = "gpu_capacity_block_offers";

/// Most instance types asked per region when `gpu` leaves the type open.
const MAX_TYPES_ASKED: usize = 4;

fn offer_type() -> Type {
    Type::object([
        ("offering_id", Type::String),
        ("region", Type::String),
        ("zone", Type::String),
        ("instance_type", Type::String),
        ("gpu", Type::String),
        ("gpus", Type::Number),
        ("instance_count", Type::Number),
        ("start", Type::String),
        ("end", Type::String),
        ("duration_hours", Type::Number),
        ("upfront_usd", Type::Number),
        ("usd_per_gpu_hour", Type::Number),
        ("on_demand_usd_per_gpu_hour", Type::Number),
        ("tenancy", Type::String),
    ])
}

/// The schema of `gpu_capacity_block_offers`.
pub fn schema() -> Schema {
    Schema::new(
        Block::new("EC2 Capacity Blocks for ML on offer across `regions`, ranked by price per GPU-hour (then earliest start): what a `gpu_commitment` of kind `aws_capacity_block` would choose from. Read-only: nothing is bought. Credentials and endpoint as for the provider's `aws` block (`endpoints.ec2`).")
            .attribute(Attribute::required("regions", Type::list(Type::String)).describe("Regions to ask, e.g. `[\"us-east-1\", \"us-west-2\"]`."))
            .attribute(Attribute::optional("instance_type", Type::String).describe("Instance type, e.g. `p5.48xlarge`; or set `gpu`."))
            .attribute(Attribute::optional("gpu", Type::String).describe("GPU model (any alias); the catalog's types with it in each region are asked (up to 4 per region, cheapest on demand first)."))
            .attribute(Attribute::optional("gpu_count", Type::Number).describe("GPUs per instance, with `gpu`."))
            .attribute(Attribute::optional("instance_count", Type::Number).describe("Instances per block, 1 to 64 (default 1)."))
            .attribute(Attribute::required("duration_hours", Type::Number).describe("Length: 24 to 336 hours in whole days, or up to 4368 in whole weeks."))
            .attribute(Attribute::optional("start_after", Type::String).describe("Earliest start (RFC 3339 or a date); default now."))
            .attribute(Attribute::optional("start_before", Type::String).describe("Latest start, at most 8 weeks ahead; default 8 weeks from now."))
            .attribute(Attribute::computed("offers", Type::list(offer_type())).describe("The offerings, cheapest per GPU-hour first: `offering_id`, `region`, `zone`, `instance_type`, `gpu`, `gpus` (in the block), `instance_count`, `start`, `end`, `duration_hours`, `upfront_usd`, `usd_per_gpu_hour`, `on_demand_usd_per_gpu_hour` (the catalog's, null when unknown), `tenancy`."))
            .attribute(Attribute::computed("cheapest", offer_type()).describe("The first of `offers`; null when there is none.")),
    )
}

/// The arguments as typed values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Args {
    regions: Tf<Vec<Tf<String>>>,
    gpu: Tf<String>,
    gpu_count: Tf<f64>,
    instance_type: Tf<String>,
    instance_count: Tf<f64>,
    duration_hours: Tf<f64>,
    start_after: Tf<String>,
    start_before: Tf<String>,
}

impl Args {
    /// Decodes `config`; a value off the schema reads as no arguments.
    fn of(config: &Value) -> Self {
        tfplugin::tf::decode(config).unwrap_or_default()
    }
}

fn regions(config: &Value) -> Vec<String> {
    crate::model_values::strings(&Args::of(config).regions).unwrap_or_default()
}

fn core_config(config: &Value, region: &str) -> CommitmentConfig {
    let args = Args::of(config);
    CommitmentConfig {
        kind: "aws_capacity_block".into(),
        region: region.to_string(),
        gpu: args.gpu.known().cloned(),
        gpu_count: crate::model_values::whole(&args.gpu_count),
        instance_type: args.instance_type.known().cloned(),
        instance_count: crate::model_values::whole(&args.instance_count).unwrap_or(1),
        duration_hours: crate::model_values::whole(&args.duration_hours),
        start_after: args.start_after.known().cloned(),
        start_before: args.start_before.known().cloned(),
        ..Default::default()
    }
}

/// Every input problem, per region, on its attribute (`region` as `regions`).
fn check(
    config: &Value,
    catalog: &Catalog,
    now: Option<i64>,
) -> Result<Vec<spec::CommitmentSpec>, Diagnostics> {
    let mut d = Diagnostics::new();
    let list = regions(config);
    if list.is_empty() {
        d.push(
            Diagnostic::error("Invalid regions", "`regions`: give at least one region.")
                .at(AttributePath::attr("regions")),
        );
        return Err(d);
    }
    let mut specs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in &list {
        match spec::validate(&core_config(config, r), catalog, now) {
            Ok(s) => specs.push(s),
            Err(errors) => {
                for e in errors {
                    let attr = if e.attribute == "region" {
                        "regions"
                    } else {
                        e.attribute.as_str()
                    };
                    if seen.insert((attr.to_string(), e.problem.clone())) {
                        d.push(
                            Diagnostic::error(
                                format!("Invalid {attr}"),
                                format!("`{attr}`: {}.", e.problem),
                            )
                            .at(AttributePath::attr(attr)),
                        );
                    }
                }
            }
        }
    }
    if d.has_errors() { Err(d) } else { Ok(specs) }
}

fn offer_value(o: &CapacityBlockOffering, c: &Candidate, gpu: &str) -> Value {
    let gpus = o.instance_count * c.gpus_per_instance;
    let per = o.upfront_fee / (f64::from(o.duration_hours) * f64::from(gpus)).max(1.0);
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    Value::object([
        ("offering_id", Value::string(&o.id)),
        ("region", Value::string(&o.region)),
        ("zone", Value::string(&o.zone)),
        ("instance_type", Value::string(&o.instance_type)),
        ("gpu", Value::string(gpu)),
        ("gpus", Value::number(i64::from(gpus))),
        ("instance_count", Value::number(i64::from(o.instance_count))),
        ("start", Value::string(format_rfc3339(o.start))),
        ("end", Value::string(format_rfc3339(o.end))),
        ("duration_hours", Value::number(i64::from(o.duration_hours))),
        ("upfront_usd", Value::number(round(o.upfront_fee))),
        ("usd_per_gpu_hour", Value::number(round(per))),
        (
            "on_demand_usd_per_gpu_hour",
            c.on_demand_usd_per_gpu_hour()
                .map_or(Value::Null, |p| Value::number(round(p))),
        ),
        ("tenancy", Value::string(&o.tenancy)),
    ])
}

/// Reads the offerings of every region through `connector`.
pub async fn read(
    config: &Value,
    catalog: &Catalog,
    connector: &dyn Connector,
) -> ReadDataSourceResponse {
    let now = unix_now() as i64;
    let specs = match check(config, catalog, Some(now)) {
        Ok(s) => s,
        Err(d) => {
            return ReadDataSourceResponse {
                state: Value::Null,
                diagnostics: d,
            };
        }
    };
    let mut found: Vec<(CapacityBlockOffering, Candidate, String)> = Vec::new();
    let mut d = Diagnostics::new();
    for s in &specs {
        let Term::Window {
            hours,
            start_after,
            start_before,
        } = s.term
        else {
            continue;
        };
        let store = match connector
            .commitments(gpu_core::offer::Cloud::Aws, &s.region)
            .await
        {
            Ok(store) => store,
            Err(e) => {
                d.push(
                    Diagnostic::error("Cannot connect to AWS", e.to_string())
                        .at(AttributePath::attr("regions")),
                );
                return ReadDataSourceResponse {
                    state: Value::Null,
                    diagnostics: d,
                };
            }
        };
        for c in s.candidates.iter().take(MAX_TYPES_ASKED) {
            let q = OfferingQuery {
                region: s.region.clone(),
                instance_type: c.instance_type.clone(),
                instance_count: s.instance_count,
                duration_hours: hours,
                start_after,
                start_before,
            };
            match capacity_block_offerings(store.as_ref(), &q).await {
                Ok(list) => found.extend(
                    list.into_iter()
                        .map(|o| (o, c.clone(), s.gpu.name.to_string())),
                ),
                Err(e) => {
                    d.push(
                        Diagnostic::error(
                            "Cannot read capacity block offerings",
                            format!(
                                "EC2 DescribeCapacityBlockOfferings in {} for {}: {e}",
                                s.region, c.instance_type
                            ),
                        )
                        .at(AttributePath::attr("regions")),
                    );
                    return ReadDataSourceResponse {
                        state: Value::Null,
                        diagnostics: d,
                    };
                }
            }
        }
    }
    let mut offerings: Vec<CapacityBlockOffering> =
        found.iter().map(|(o, _, _)| o.clone()).collect();
    let gpus_of = |t: &str| {
        found
            .iter()
            .find(|(o, _, _)| o.instance_type == t)
            .map(|(_, c, _)| c.gpus_per_instance)
    };
    rank_offerings(&mut offerings, gpus_of);
    let values: Vec<Value> = offerings
        .iter()
        .filter_map(|o| {
            found
                .iter()
                .find(|(f, _, _)| f.id == o.id && f.region == o.region)
                .map(|(_, c, g)| offer_value(o, c, g))
        })
        .collect();
    let mut state = config.clone();
    if let Value::Object(m) = &mut state {
        m.insert(
            "cheapest".into(),
            values.first().cloned().unwrap_or(Value::Null),
        );
        m.insert("offers".into(), Value::List(values));
    }
    ReadDataSourceResponse {
        state,
        diagnostics: d,
    }
}

/// The data source, configured through the provider block.
#[derive(Debug, Clone)]
pub struct CapacityBlockOffers {
    provider: Arc<dyn CommitmentProvider>,
}

impl CapacityBlockOffers {
    /// The data source, configured through `provider`.
    pub fn new(provider: Arc<dyn CommitmentProvider>) -> Self {
        CapacityBlockOffers { provider }
    }
}

#[async_trait]
impl DataSource for CapacityBlockOffers {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        let config = request.config();
        if !config.is_wholly_known() {
            return Diagnostics::new();
        }
        check(config, Catalog::embedded(), Some(unix_now() as i64))
            .err()
            .unwrap_or_default()
    }

    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse {
        let settings = self.provider.commitment_settings();
        read(request.config(), Catalog::embedded(), &settings.clouds).await
    }
}
