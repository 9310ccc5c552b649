//! Plan and apply of `gpu_commitment` against an in-memory cloud.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use gpu_core::commitment::{
    CapacityBlockOffering, CommitmentKind, CommitmentStatus, Commitments, LiveCommitment,
    OfferingQuery, Order,
};
use gpu_core::seam::CloudError;
use gpu_core::seam::commitments::CapacityBlocks;
use gpu_core::time::unix_now;
use tfplugin::Value;
use tfplugin::provider::PlanResourceChangeRequest;

use super::{Settings, apply, plan, schema};
use gpu_core::seam::ConnectCommitments as Connector;

#[derive(Default)]
struct Cloud {
    offerings: Mutex<Vec<CapacityBlockOffering>>,
    bought: Mutex<Vec<LiveCommitment>>,
    cancelled: Mutex<Vec<String>>,
}

#[derive(Clone, Default)]
struct Shared(Arc<Cloud>);

#[async_trait]
impl CapacityBlocks for Shared {
    async fn capacity_block_offerings(
        &self,
        q: &OfferingQuery,
    ) -> Result<Vec<CapacityBlockOffering>, CloudError> {
        Ok(self
            .0
            .offerings
            .lock()
            .unwrap()
            .iter()
            .filter(|o| o.instance_type == q.instance_type)
            .cloned()
            .collect())
    }
}

#[async_trait]
impl Commitments for Shared {
    fn capacity_blocks(&self) -> Option<&dyn CapacityBlocks> {
        Some(self)
    }
    async fn purchase(
        &self,
        order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError> {
        let mut bought = self.0.bought.lock().unwrap();
        let (kind, zone) = match order {
            Order::CapacityBlock { .. } => (CommitmentKind::AwsCapacityBlock, "us-east-1a"),
            Order::CapacityReservation { .. } => {
                (CommitmentKind::AwsCapacityReservation, "us-east-1b")
            }
            other => panic!("not an AWS order: {other:?}"),
        };
        let c = LiveCommitment {
            id: format!("cr-{:017x}", bought.len()),
            kind,
            status: CommitmentStatus::Active,
            cloud_state: "active".into(),
            zone: Some(zone.into()),
            instance_type: "p5.48xlarge".into(),
            instance_count: 1,
            start: Some(unix_now() as i64),
            end: None,
            tags: tags.clone(),
            in_use: None,
            term_years: None,
            billing_plan: None,
            platform: None,
            match_criteria: None,
        };
        bought.push(c.clone());
        Ok(c)
    }
    async fn get(&self, _r: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError> {
        Ok(self
            .0
            .bought
            .lock()
            .unwrap()
            .iter()
            .find(|c| c.id == id)
            .cloned())
    }
    async fn find_by_marker(&self, _r: &str, _k: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        Ok(vec![])
    }
    async fn cancel(&self, _r: &str, id: &str) -> Result<(), CloudError> {
        self.0.cancelled.lock().unwrap().push(id.to_string());
        Ok(())
    }
    async fn list(&self, _r: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        Ok(self.0.bought.lock().unwrap().clone())
    }
}

#[async_trait]
impl Connector for Shared {
    async fn commitments(
        &self,
        _cloud: gpu_core::offer::Cloud,
        _region: &str,
    ) -> Result<Box<dyn Commitments>, CloudError> {
        Ok(Box::new(self.clone()))
    }
}

/// A resource value with `attrs` set and every other attribute null.
fn value(attrs: &[(&str, Value)]) -> Value {
    let ty = schema().value_type();
    let names = ty.object_type().unwrap().attributes.keys().cloned();
    let mut m: BTreeMap<String, Value> = names.map(|n| (n, Value::Null)).collect();
    for (k, v) in attrs {
        m.insert(k.to_string(), v.clone());
    }
    Value::Object(m)
}

fn block_config() -> Value {
    value(&[
        ("kind", Value::string("aws_capacity_block")),
        ("region", Value::string("us-east-1")),
        ("instance_type", Value::string("p5.48xlarge")),
        ("instance_count", Value::number(1i64)),
        ("duration_hours", Value::number(48i64)),
    ])
}

fn request(prior: Value, config: Value) -> PlanResourceChangeRequest {
    PlanResourceChangeRequest {
        type_name: super::TYPE_NAME.into(),
        prior_state: prior,
        proposed_new_state: config.clone(),
        config,
        prior_private: Vec::new(),
        provider_meta: None,
        client_capabilities: Default::default(),
    }
}

fn offering(id: &str, fee: f64) -> CapacityBlockOffering {
    let start = unix_now() as i64 + 86_400;
    CapacityBlockOffering {
        id: id.into(),
        region: "us-east-1".into(),
        zone: "us-east-1a".into(),
        instance_type: "p5.48xlarge".into(),
        instance_count: 1,
        start,
        end: start + 48 * 3600,
        duration_hours: 48,
        upfront_fee: fee,
        currency: "USD".into(),
        tenancy: "default".into(),
    }
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn allowed() -> Settings {
    Settings {
        allow_purchase: true,
        ..Default::default()
    }
}

#[test]
fn a_block_plan_picks_the_cheapest_offering_and_says_irreversible() {
    let cloud = Shared::default();
    *cloud.0.offerings.lock().unwrap() =
        vec![offering("cb-dear", 2000.0), offering("cb-cheap", 1500.0)];
    let r = run(plan::plan(
        &request(Value::Null, block_config()),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    let p = &r.planned_state;
    assert_eq!(
        p.get_attr("offering_id").unwrap().as_str(),
        Some("cb-cheap")
    );
    assert_eq!(
        p.get_attr("upfront_usd")
            .unwrap()
            .as_number()
            .unwrap()
            .as_f64(),
        1500.0
    );
    let eff = p
        .get_attr("effective_usd_per_gpu_hour")
        .unwrap()
        .as_number()
        .unwrap()
        .as_f64();
    assert!((eff - 1500.0 / (48.0 * 8.0)).abs() < 1e-3, "{eff}");
    assert!(
        p.get_attr("break_even_utilization")
            .unwrap()
            .as_number()
            .is_some()
    );
    let warning = format!("{:?}", r.diagnostics);
    assert!(
        warning.contains("IRREVERSIBLE: $1,500.00 over 48 hours"),
        "{warning}"
    );
}

#[test]
fn without_the_guard_the_plan_fails_with_the_money() {
    let cloud = Shared::default();
    *cloud.0.offerings.lock().unwrap() = vec![offering("cb-1", 1500.0)];
    let r = run(plan::plan(
        &request(Value::Null, block_config()),
        &Settings::default(),
        Catalog::embedded(),
        &cloud,
    ));
    let text = format!("{:?}", r.diagnostics);
    assert!(r.diagnostics.has_errors());
    assert!(
        text.contains("allow_commitment_purchase") && text.contains("$1,500.00"),
        "{text}"
    );
}

#[test]
fn no_offering_is_an_error_naming_the_window() {
    let cloud = Shared::default();
    let r = run(plan::plan(
        &request(Value::Null, block_config()),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    let text = format!("{:?}", r.diagnostics);
    assert!(
        r.diagnostics.has_errors() && text.contains("start_before"),
        "{text}"
    );
}

/// A capacity block of `block_config()` planned and bought on `cloud` (one offering of
/// $1,500): its state.
fn bought_block(cloud: &Shared) -> Value {
    *cloud.0.offerings.lock().unwrap() = vec![offering("cb-1", 1500.0)];
    let planned = run(plan::plan(
        &request(Value::Null, block_config()),
        &allowed(),
        Catalog::embedded(),
        cloud,
    ))
    .planned_state;
    let applied = run(apply::apply(&Value::Null, &planned, &allowed(), cloud));
    assert!(
        !applied.diagnostics.has_errors(),
        "{:?}",
        applied.diagnostics
    );
    applied.new_state
}

#[test]
fn buy_then_update_only_on_destroy_then_refuse_destroy() {
    let cloud = Shared::default();
    let state = bought_block(&cloud);
    assert_eq!(state.get_attr("status").unwrap().as_str(), Some("active"));
    let tags = &cloud.0.bought.lock().unwrap()[0].tags;
    assert!(tags.contains_key("gpu.tf/commitment"), "{tags:?}");

    // Re-spelled: no error, the prior value kept.
    let mut respelled = block_config();
    if let Value::Object(m) = &mut respelled {
        m.insert("kind".into(), Value::string("AWS_Capacity_Block"));
        m.insert("region".into(), Value::string("US-EAST-1"));
    }
    let r = run(plan::plan(
        &request(state.clone(), respelled),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(r.planned_state, state, "a re-spelling is not a change");

    // A real change is an error on its attribute.
    let mut bigger = block_config();
    if let Value::Object(m) = &mut bigger {
        m.insert("instance_count".into(), Value::number(2i64));
    }
    let r = run(plan::plan(
        &request(state.clone(), bigger),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    let text = format!("{:?}", r.diagnostics);
    assert!(
        r.diagnostics.has_errors()
            && text.contains("instance_count")
            && text.contains("new purchase"),
        "{text}"
    );

    // Destroy is refused at plan and at apply.
    let r = run(plan::plan(
        &request(state.clone(), Value::Null),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    assert!(r.diagnostics.has_errors());
    let a = run(apply::apply(&state, &Value::Null, &allowed(), &cloud));
    assert!(a.diagnostics.has_errors());
    assert_eq!(a.new_state, state, "state kept");
    assert!(cloud.0.cancelled.lock().unwrap().is_empty());
}

#[test]
fn a_default_written_out_is_planned_as_written_never_left_as_the_prior_null() {
    let cloud = Shared::default();
    let state = bought_block(&cloud);
    assert!(state.get_attr("aws").unwrap().is_null());
    let mut written = block_config();
    if let Value::Object(m) = &mut written {
        m.insert(
            "aws".into(),
            Value::object([
                ("instance_platform", Value::string("linux/unix")),
                ("instance_match_criteria", Value::Null),
            ]),
        );
    }
    let r = run(plan::plan(
        &request(state.clone(), written.clone()),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    // Terraform refuses a plan that keeps a null block the configuration writes.
    assert_eq!(r.planned_state.get_attr("aws"), written.get_attr("aws"));
    let applied = run(apply::apply(&state, &r.planned_state, &allowed(), &cloud));
    assert_eq!(
        cloud.0.bought.lock().unwrap().len(),
        1,
        "a state-only update buys nothing"
    );
    assert_eq!(applied.new_state.get_attr("aws"), written.get_attr("aws"));
}

#[test]
fn a_reservation_cancels_on_destroy_and_prices_at_on_demand() {
    let cloud = Shared::default();
    let config = value(&[
        ("kind", Value::string("aws_capacity_reservation")),
        ("region", Value::string("us-east-1")),
        ("zone", Value::string("us-east-1b")),
        ("gpu", Value::string("h100")),
        ("gpu_count", Value::number(8i64)),
        ("instance_count", Value::number(2i64)),
    ]);
    let r = run(plan::plan(
        &request(Value::Null, config),
        &allowed(),
        Catalog::embedded(),
        &cloud,
    ));
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    let p = r.planned_state;
    assert_eq!(
        p.get_attr("break_even_utilization")
            .unwrap()
            .as_number()
            .unwrap()
            .as_f64(),
        1.0
    );
    assert!(
        p.get_attr("total_usd").unwrap().is_null(),
        "open-ended: no total"
    );
    assert!(format!("{:?}", r.diagnostics).contains("COMMITMENT:"));
    let state = run(apply::apply(&Value::Null, &p, &allowed(), &cloud)).new_state;
    let a = run(apply::apply(&state, &Value::Null, &allowed(), &cloud));
    assert!(!a.diagnostics.has_errors() && a.new_state.is_null());
    assert_eq!(cloud.0.cancelled.lock().unwrap().len(), 1);
}
