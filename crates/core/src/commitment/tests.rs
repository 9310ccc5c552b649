//! Tests of commitment validation and of buying at most once.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::purchase::*;
use super::spec::{CommitmentConfig, OnDestroy, Term, valid_block_hours, validate};
use super::{CommitmentKind, purchase_key};
use crate::catalog::Catalog;
use crate::seam::CloudError;
use crate::seam::commitments::*;

const NOW: i64 = 1_796_083_200; // 2026-12-01T00:00:00Z

fn block() -> CommitmentConfig {
    CommitmentConfig {
        kind: "aws_capacity_block".into(),
        region: "us-east-1".into(),
        instance_type: Some("p5.48xlarge".into()),
        instance_count: 1,
        duration_hours: Some(48),
        ..Default::default()
    }
}

fn attrs(errors: &[crate::pool::validate::FieldError]) -> Vec<&str> {
    errors.iter().map(|e| e.attribute.as_str()).collect()
}

#[test]
fn a_capacity_block_validates_with_defaults() {
    let spec = validate(&block(), Catalog::embedded(), Some(NOW)).expect("valid");
    assert_eq!(spec.kind, CommitmentKind::AwsCapacityBlock);
    assert_eq!(spec.cheapest().instance_type, "p5.48xlarge");
    assert_eq!(spec.cheapest().gpus_per_instance, 8);
    assert_eq!(spec.gpu.name, "H100");
    assert_eq!(
        spec.on_destroy,
        OnDestroy::Refuse,
        "blocks cannot be cancelled"
    );
    assert_eq!(
        spec.term,
        Term::Window {
            hours: 48,
            start_after: NOW,
            start_before: NOW + 56 * 86_400
        }
    );
}

#[test]
fn spellings_mean_the_same() {
    let mut c = block();
    c.kind = "AWS-Capacity-Block".into();
    c.region = "US-EAST-1".into();
    c.instance_type = Some("P5.48XLARGE".into());
    let spec = validate(&c, Catalog::embedded(), Some(NOW)).unwrap();
    assert_eq!(spec.region, "us-east-1");
    assert_eq!(spec.cheapest().instance_type, "p5.48xlarge");
}

#[test]
fn every_problem_at_once_on_its_attribute() {
    let mut c = block();
    c.duration_hours = Some(30);
    c.instance_count = 0;
    c.term = Some("1y".into());
    c.on_destroy = Some("cancel".into());
    c.start_after = Some("2027-06-01".into()); // beyond 8 weeks
    let errors = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    let a = attrs(&errors);
    for want in [
        "duration_hours",
        "instance_count",
        "term",
        "on_destroy",
        "start_after",
    ] {
        assert!(a.contains(&want), "{want} missing from {errors:?}");
    }
    let d = errors
        .iter()
        .find(|e| e.attribute == "duration_hours")
        .unwrap();
    assert!(d.problem.contains("24 to 336"), "{}", d.problem);
}

#[test]
fn an_unknown_kind_fails_on_kind_naming_the_valid_ones() {
    let mut c = block();
    c.kind = "aws_block".into();
    let e = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert!(
        e.iter()
            .any(|e| e.attribute == "kind" && e.problem.contains("azure_capacity_reservation"))
    );
}

#[test]
fn azure_capacity_zones_are_numbers_and_have_no_end() {
    let c = CommitmentConfig {
        kind: "azure_capacity_reservation".into(),
        region: "East US".into(),
        gpu: Some("H100".into()),
        gpu_count: Some(8),
        instance_count: 1,
        zone: Some("eastus-1".into()),
        end: Some("2027-01-01".into()),
        ..Default::default()
    };
    let e = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert_eq!(attrs(&e), ["zone", "end"]);
    let ok = CommitmentConfig {
        zone: Some("2".into()),
        end: None,
        ..c
    };
    let spec = validate(&ok, Catalog::embedded(), Some(NOW)).unwrap();
    assert_eq!(spec.region, "eastus");
    assert_eq!(spec.on_destroy, OnDestroy::Cancel);
}

#[test]
fn a_reservation_needs_a_zone_of_its_region_and_cancels_by_default() {
    let mut c = block();
    c.kind = "aws_capacity_reservation".into();
    c.duration_hours = None;
    let e = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert_eq!(attrs(&e), ["zone"]);
    c.zone = Some("us-west-2a".into());
    let e = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert!(e[0].problem.contains("us-east-1a"), "{e:?}");
    c.zone = Some("US-EAST-1B".into());
    c.end = Some("2027-01-31".into());
    let spec = validate(&c, Catalog::embedded(), Some(NOW)).unwrap();
    assert_eq!(spec.zone.as_deref(), Some("us-east-1b"));
    assert_eq!(spec.on_destroy, OnDestroy::Cancel);
    assert!(matches!(spec.term, Term::UntilCancelled { end: Some(_) }));
    c.end = Some("2020-01-01".into());
    assert_eq!(
        attrs(&validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err()),
        ["end"]
    );
}

#[test]
fn a_gpu_picks_the_cheapest_type_and_a_missing_count_is_explained() {
    let mut c = block();
    c.instance_type = None;
    c.gpu = Some("h100".into());
    c.gpu_count = Some(8);
    let spec = validate(&c, Catalog::embedded(), Some(NOW)).unwrap();
    assert!(spec.candidates.iter().all(|t| t.gpus_per_instance == 8));
    let prices: Vec<f64> = spec
        .candidates
        .iter()
        .filter_map(|t| t.on_demand_usd_per_gpu_hour())
        .collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]), "{prices:?}");
    c.gpu_count = Some(3);
    let e = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert_eq!(attrs(&e), ["gpu_count"]);
    assert!(e[0].problem.contains("8"), "{e:?}");
    c.gpu_count = None;
    c.instance_type = Some("p5.48xlarge".into());
    assert_eq!(
        attrs(&validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err()),
        ["instance_type"]
    );
}

#[test]
fn block_lengths_follow_ec2() {
    for ok in [24, 48, 336, 504, 4368] {
        assert!(valid_block_hours(ok), "{ok}");
    }
    for bad in [0, 12, 30, 360, 4392, 4536] {
        assert!(!valid_block_hours(bad), "{bad}");
    }
}

// --- buying at most once -------------------------------------------------------------

/// A store in memory that can lose the answer of its next purchase.
#[derive(Default)]
struct Memory {
    bought: Mutex<Vec<LiveCommitment>>,
    lose_next_answer: Mutex<bool>,
    refuse_next: Mutex<Option<CloudError>>,
}

#[async_trait]
impl Commitments for Memory {
    async fn purchase(
        &self,
        _order: &Order,
        tags: &BTreeMap<String, String>,
    ) -> Result<LiveCommitment, CloudError> {
        if let Some(e) = self.refuse_next.lock().unwrap().take() {
            return Err(e);
        }
        let mut bought = self.bought.lock().unwrap();
        let c = LiveCommitment {
            id: format!("cr-{}", bought.len()),
            kind: CommitmentKind::AwsCapacityBlock,
            status: CommitmentStatus::Scheduled,
            cloud_state: "scheduled".into(),
            zone: Some("us-east-1a".into()),
            instance_type: "p5.48xlarge".into(),
            instance_count: 1,
            start: None,
            end: None,
            tags: tags.clone(),
            in_use: None,
            term_years: None,
            billing_plan: None,
            platform: None,
            match_criteria: None,
        };
        bought.push(c.clone());
        if std::mem::take(&mut *self.lose_next_answer.lock().unwrap()) {
            return Err(CloudError::Transient("connection reset".into()));
        }
        Ok(c)
    }
    async fn get(&self, _r: &str, id: &str) -> Result<Option<LiveCommitment>, CloudError> {
        Ok(self
            .bought
            .lock()
            .unwrap()
            .iter()
            .find(|c| c.id == id)
            .cloned())
    }
    async fn find_by_marker(&self, _r: &str, key: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        Ok(self
            .bought
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.tags.get(MARKER_TAG).map(String::as_str) == Some(key))
            .cloned()
            .collect())
    }
    async fn cancel(&self, _r: &str, _id: &str) -> Result<(), CloudError> {
        Ok(())
    }
    async fn list(&self, _r: &str) -> Result<Vec<LiveCommitment>, CloudError> {
        Ok(self.bought.lock().unwrap().clone())
    }
}

fn order() -> Order {
    Order::CapacityBlock {
        region: "us-east-1".into(),
        offering_id: "cb-0123".into(),
        platform: "Linux/UNIX".into(),
    }
}

/// Runs a future that never waits (the in-memory store answers at once).
fn run<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("the in-memory store never waits"),
    }
}

#[test]
fn a_lost_answer_is_found_again_not_bought_twice() {
    let store = Memory::default();
    *store.lose_next_answer.lock().unwrap() = true;
    let tags = BTreeMap::from([("team".to_string(), "ml".to_string())]);
    let key = purchase_key(&order(), &tags);
    let got = run(purchase_once(&store, &order(), &key, &tags)).unwrap();
    assert!(matches!(got, Purchased::Found(_)), "{got:?}");
    assert_eq!(
        got.commitment().tags.get("team").map(String::as_str),
        Some("ml")
    );
    // The next apply (or a retry) adopts it again instead of buying.
    let again = run(purchase_once(&store, &order(), &key, &tags)).unwrap();
    assert_eq!(again.commitment().id, got.commitment().id);
    assert_eq!(store.bought.lock().unwrap().len(), 1);
}

#[test]
fn a_refusal_is_reported_and_a_dead_commitment_is_not_adopted() {
    let store = Memory::default();
    *store.refuse_next.lock().unwrap() =
        Some(CloudError::InsufficientCapacity("no capacity".into()));
    let key = purchase_key(&order(), &BTreeMap::new());
    let e = run(purchase_once(&store, &order(), &key, &BTreeMap::new())).unwrap_err();
    assert!(matches!(e, CloudError::InsufficientCapacity(_)));
    let first = run(purchase_once(&store, &order(), &key, &BTreeMap::new())).unwrap();
    assert!(matches!(first, Purchased::Bought(_)));
    store.bought.lock().unwrap()[0].status = CommitmentStatus::Cancelled;
    let second = run(purchase_once(&store, &order(), &key, &BTreeMap::new())).unwrap();
    assert!(
        matches!(second, Purchased::Bought(_)),
        "a cancelled one is not adopted"
    );
    assert_eq!(store.bought.lock().unwrap().len(), 2);
}

#[test]
fn keys_differ_by_order_and_tags_and_are_stable() {
    let none = BTreeMap::new();
    let tagged = BTreeMap::from([("team".to_string(), "a".to_string())]);
    assert_eq!(purchase_key(&order(), &none), purchase_key(&order(), &none));
    assert_ne!(
        purchase_key(&order(), &none),
        purchase_key(&order(), &tagged)
    );
    // Fixed value: a key must survive provider upgrades (an interrupted apply's purchase is
    // found by the next version too).
    assert_eq!(purchase_key(&order(), &none), "gc-4f0931cda5349f3e");
}

#[test]
fn offerings_rank_by_price_per_gpu_hour() {
    let o = |id: &str, t: &str, fee: f64, start: i64| CapacityBlockOffering {
        id: id.into(),
        region: "us-east-1".into(),
        zone: "us-east-1a".into(),
        instance_type: t.into(),
        instance_count: 1,
        start,
        end: start + 86_400,
        duration_hours: 24,
        upfront_fee: fee,
        currency: "USD".into(),
        tenancy: "default".into(),
    };
    let mut list = vec![
        o("a", "p5.48xlarge", 800.0, 2),
        o("b", "p4d.24xlarge", 500.0, 1),
        o("c", "p5.48xlarge", 800.0, 1),
        o("d", "unknown.type", 1.0, 0),
    ];
    rank_offerings(&mut list, |t| match t {
        "p5.48xlarge" | "p4d.24xlarge" => Some(8),
        _ => None,
    });
    let ids: Vec<&str> = list.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["b", "c", "a", "d"]);
}

#[test]
fn google_kinds_check_their_zone_term_and_billing() {
    let base = CommitmentConfig {
        kind: "gcp_reservation".into(),
        region: "us-central1".into(),
        instance_type: Some("a3-highgpu-8g".into()),
        instance_count: 2,
        ..Default::default()
    };
    let e = validate(&base, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert_eq!(attrs(&e), ["zone"]);
    let mut c = base.clone();
    c.zone = Some("us-central1a".into());
    let e = validate(&c, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert!(e[0].problem.contains("us-central1-a"), "{e:?}");
    c.zone = Some("US-CENTRAL1-A".into());
    let spec = validate(&c, Catalog::embedded(), Some(NOW)).unwrap();
    assert_eq!(spec.on_destroy, OnDestroy::Cancel);
    let mut cud = base.clone();
    cud.kind = "gcp_commitment".into();
    cud.zone = Some("us-central1-b".into());
    cud.term = Some("3Y".into());
    cud.billing = Some("upfront".into());
    let e = validate(&cud, Catalog::embedded(), Some(NOW)).unwrap_err();
    assert_eq!(attrs(&e), ["billing"]);
    cud.billing = None;
    let spec = validate(&cud, Catalog::embedded(), Some(NOW)).unwrap();
    assert_eq!(
        spec.term,
        Term::Years {
            years: 3,
            billing: super::spec::Billing::Monthly
        }
    );
    assert_eq!(spec.on_destroy, OnDestroy::Refuse);
}
