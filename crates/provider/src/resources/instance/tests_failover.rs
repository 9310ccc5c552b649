//! `gpu_instance` failover against one in-memory cloud: a stockout in the first zone lands
//! the VM in the next, the plans that follow are empty and warn; every place out is one
//! error with nothing left; a failback returns new-before-old.

use std::sync::Arc;

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use gpu_core::instance::fake::FakeInstances;
use gpu_core::offer::Cloud;
use gpu_core::seam::{CloudError, ConnectInstances, Instances, Place};
use tfplugin::Value;
use tfplugin::provider::PlanResourceChangeRequest;

use super::*;

/// Every place of the test's cloud is the one fake.
struct OneCloud(Arc<FakeInstances>);

#[async_trait]
impl ConnectInstances for OneCloud {
    async fn instances(&self, _place: &Place) -> Result<Box<dyn Instances>, CloudError> {
        Ok(Box::new(self.0.clone()))
    }
}

fn settings() -> Settings {
    let mut s = Settings::default();
    s.base.clouds = crate::clouds::Clouds::of(&crate::config::ProviderConfig {
        gcp: Some(crate::config::GcpConfig {
            project: Some("ml".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    s
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    crate::model_values::object_of(&schema(), pairs)
}

fn zone(z: &str) -> Value {
    Value::object([
        ("cloud", Value::string("gcp")),
        ("region", Value::string(&z[..z.len() - 2])),
        ("zone", Value::string(z)),
        ("instance_type", Value::Null),
    ])
}

fn config(failback: &str) -> Value {
    object(vec![
        ("cloud", Value::string("gcp")),
        ("region", Value::string("us-central1")),
        ("zone", Value::string("us-central1-a")),
        ("name", Value::string("train")),
        ("gpu", Value::string("L4")),
        ("failback", Value::string(failback)),
        (
            "failover",
            Value::List(vec![zone("us-central1-b"), zone("us-east1-b")]),
        ),
    ])
}

/// What Terraform proposes: the config, with the computed (and unset optional+computed)
/// values of the prior state.
fn proposed(config: &Value, prior: &Value) -> Value {
    if prior.is_null() {
        return config.clone();
    }
    let mut p = config.clone();
    for a in &schema().block.attributes {
        if a.is_computed() && config.get_attr(&a.name).is_none_or(Value::is_null) {
            plan::set(
                &mut p,
                &a.name,
                prior.get_attr(&a.name).cloned().unwrap_or(Value::Null),
            );
        }
    }
    p
}

async fn plan_of(
    c: &Value,
    prior: &Value,
    cloud: &OneCloud,
) -> tfplugin::provider::PlanResourceChangeResponse {
    plan::plan(
        &PlanResourceChangeRequest {
            type_name: TYPE_NAME.into(),
            prior_state: prior.clone(),
            proposed_new_state: proposed(c, prior),
            config: c.clone(),
            prior_private: Vec::new(),
            provider_meta: None,
            client_capabilities: Default::default(),
        },
        &settings(),
        Catalog::embedded(),
        cloud,
    )
    .await
}

async fn apply_of(
    c: &Value,
    prior: &Value,
    cloud: &OneCloud,
) -> tfplugin::provider::ApplyResourceChangeResponse {
    let p = plan_of(c, prior, cloud).await;
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    apply::apply(
        prior,
        &p.planned_state,
        &settings(),
        Catalog::embedded(),
        cloud,
    )
    .await
}

fn at<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| {
        v.get_attr(k).unwrap_or_else(|| panic!("no {k} in {v:?}"))
    })
}

fn outcomes(v: &Value) -> Vec<String> {
    let Some(Value::List(items)) = v.get_attr("attempts") else {
        panic!("{v:?}")
    };
    items
        .iter()
        .map(|a| at(a, &["outcome"]).as_str().unwrap().to_string())
        .collect()
}

fn texts(d: &tfplugin::Diagnostics) -> String {
    d.0.iter()
        .map(|x| format!("{}: {}", x.summary, x.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_stockout_in_the_first_zone_lands_in_the_next_and_stays() {
    let fake = Arc::new(FakeInstances::new(Cloud::Gcp, false));
    let cloud = OneCloud(fake.clone());
    let c = config("never");
    let p = plan_of(&c, &Value::Null, &cloud).await;
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert!(!at(&p.planned_state, &["placement"]).is_known());
    let w = texts(&p.diagnostics);
    assert!(w.contains("at gcp us-central1 us-central1-a"), "{w}");
    assert!(
        w.contains("us-central1-a → gcp us-central1 us-central1-b → gcp us-east1 us-east1-b"),
        "{w}"
    );

    fake.set_short(1);
    let r = apply::apply(
        &Value::Null,
        &p.planned_state,
        &settings(),
        Catalog::embedded(),
        &cloud,
    )
    .await;
    assert!(!r.diagnostics.has_errors(), "{}", texts(&r.diagnostics));
    let s = r.new_state;
    assert_eq!(outcomes(&s), ["stockout", "ready"]);
    assert_eq!(
        at(&s, &["placement", "zone"]),
        &Value::string("us-central1-b")
    );
    assert_eq!(
        at(&s, &["placement", "instance_type"]),
        &Value::string("g2-standard-4")
    );
    assert_eq!(
        at(&s, &["zone"]),
        &Value::string("us-central1-a"),
        "the user's words stay"
    );
    assert_eq!(
        fake.calls()
            .iter()
            .filter(|c| c.starts_with("launch"))
            .count(),
        2
    );
    let vms = fake.list_managed().await.unwrap();
    assert_eq!(vms.len(), 1);
    assert_eq!(vms[0].zone.as_deref(), Some("us-central1-b"));

    // Read where it runs, then plan: nothing changes, a warning says where and why.
    let read = apply::read(&s, &settings(), &cloud).await;
    assert!(!read.diagnostics.has_errors(), "{:?}", read.diagnostics);
    assert_eq!(read.new_state, s, "a read changed the state");
    let again = plan_of(&c, &s, &cloud).await;
    assert_eq!(again.planned_state, s, "the next plan is not empty");
    let w = texts(&again.diagnostics);
    assert!(
        w.contains("runs on its failover place gcp us-central1 us-central1-b"),
        "{w}"
    );
    assert!(w.contains("answered stockout"), "{w}");

    // The destroy deletes it where it runs.
    let gone = apply::apply(&s, &Value::Null, &settings(), Catalog::embedded(), &cloud).await;
    assert!(!gone.diagnostics.has_errors(), "{:?}", gone.diagnostics);
    assert!(fake.list_managed().await.unwrap().is_empty());
}

#[tokio::test]
async fn every_place_out_is_one_error_and_nothing_is_left() {
    let fake = Arc::new(FakeInstances::new(Cloud::Gcp, false));
    let cloud = OneCloud(fake.clone());
    fake.set_short(3);
    let r = apply_of(&config("never"), &Value::Null, &cloud).await;
    assert_eq!(r.new_state, Value::Null);
    let errors: Vec<_> = r.diagnostics.0.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{}", texts(&r.diagnostics));
    assert!(
        errors[0].summary.contains("at any of its 3 places"),
        "{}",
        errors[0].summary
    );
    assert!(
        errors[0]
            .detail
            .contains("gcp us-east1 (zone us-east1-b): stockout"),
        "{}",
        errors[0].detail
    );
    assert!(fake.list_managed().await.unwrap().is_empty());
}

#[tokio::test]
async fn failback_on_apply_returns_new_before_old_or_stays() {
    let fake = Arc::new(FakeInstances::new(Cloud::Gcp, false));
    let cloud = OneCloud(fake.clone());
    let c = config("on_apply");
    fake.set_short(1);
    let s = apply_of(&c, &Value::Null, &cloud).await.new_state;
    assert_eq!(
        at(&s, &["placement", "zone"]),
        &Value::string("us-central1-b")
    );
    let old_id = at(&s, &["id"]).clone();

    // Still out in zone a: the plan tries, the apply stays, the VM is the same.
    let p = plan_of(&c, &s, &cloud).await;
    assert!(texts(&p.diagnostics).contains("tries to return to gcp us-central1 us-central1-a"));
    fake.set_short(1);
    let r = apply::apply(
        &s,
        &p.planned_state,
        &settings(),
        Catalog::embedded(),
        &cloud,
    )
    .await;
    assert!(!r.diagnostics.has_errors(), "{}", texts(&r.diagnostics));
    assert!(texts(&r.diagnostics).contains("stays on gcp us-central1 us-central1-b"));
    assert_eq!(at(&r.new_state, &["id"]), &old_id);
    assert_eq!(fake.list_managed().await.unwrap().len(), 1);

    // Capacity back: a new VM in zone a, then the old one deleted.
    let r = apply_of(&c, &r.new_state, &cloud).await;
    assert!(!r.diagnostics.has_errors(), "{}", texts(&r.diagnostics));
    assert_eq!(
        at(&r.new_state, &["placement", "zone"]),
        &Value::string("us-central1-a")
    );
    assert_ne!(at(&r.new_state, &["id"]), &old_id);
    let vms = fake.list_managed().await.unwrap();
    assert_eq!(vms.len(), 1);
    assert_eq!(vms[0].zone.as_deref(), Some("us-central1-a"));
    let calls = fake.calls();
    let last_launch = calls.iter().rposition(|c| c.starts_with("launch")).unwrap();
    let delete = calls.iter().rposition(|c| c.starts_with("delete")).unwrap();
    assert!(last_launch < delete, "{calls:?}");
    // Home: the next plan is empty.
    let again = plan_of(&c, &r.new_state, &cloud).await;
    assert_eq!(again.planned_state, r.new_state);
}

#[test]
fn bad_failover_blocks_are_refused_on_their_paths() {
    let mut c = config("never");
    plan::set(&mut c, "failover", Value::List(vec![zone("us-central1-a")]));
    let mut d = tfplugin::Diagnostics::new();
    places::check(&c, &mut d);
    assert_eq!(
        d.0[0].attribute.as_ref().unwrap().to_string(),
        "failover[0]"
    );
    let mut c = config("never");
    plan::set(
        &mut c,
        "image",
        Value::string("projects/x/global/images/mine"),
    );
    plan::set(
        &mut c,
        "failover",
        Value::List(vec![Value::object([
            ("cloud", Value::string("aws")),
            ("region", Value::string("us-east-1")),
            ("zone", Value::Null),
            ("instance_type", Value::Null),
        ])]),
    );
    let mut d = tfplugin::Diagnostics::new();
    places::check(&c, &mut d);
    assert_eq!(
        d.0[0].attribute.as_ref().unwrap().to_string(),
        "image",
        "{:?}",
        d
    );
}

#[tokio::test]
async fn an_input_known_only_at_apply_still_leaves_the_place_to_the_walk() {
    let cloud = OneCloud(Arc::new(FakeInstances::new(Cloud::Gcp, false)));
    let mut c = config("never");
    plan::set(&mut c, "labels", Value::map([("team", Value::unknown())]));
    let p = plan_of(&c, &Value::Null, &cloud).await;
    assert!(!p.diagnostics.has_errors(), "{}", texts(&p.diagnostics));
    assert!(
        matches!(
            p.planned_state.get_attr("placement"),
            Some(Value::Unknown(_))
        ),
        "the apply must walk: {:?}",
        p.planned_state.get_attr("placement")
    );
}

#[tokio::test]
async fn a_failover_block_in_another_spelling_plans_nothing() {
    let cloud = OneCloud(Arc::new(FakeInstances::new(Cloud::Gcp, false)));
    let c = config("never");
    let s = apply_of(&c, &Value::Null, &cloud).await.new_state;
    let mut respelled = c.clone();
    let upper = |z: &str| {
        Value::object([
            ("cloud", Value::string("GCP")),
            (
                "region",
                Value::string(z[..z.len() - 2].to_ascii_uppercase()),
            ),
            ("zone", Value::string(z.to_ascii_uppercase())),
            ("instance_type", Value::Null),
        ])
    };
    plan::set(
        &mut respelled,
        "failover",
        Value::List(vec![upper("us-central1-b"), upper("us-east1-b")]),
    );
    let p = plan_of(&respelled, &s, &cloud).await;
    assert_eq!(p.planned_state, s, "a re-spelled place is a change");
    let mut other = c.clone();
    plan::set(
        &mut other,
        "failover",
        Value::List(vec![zone("us-central1-c")]),
    );
    assert_ne!(plan_of(&other, &s, &cloud).await.planned_state, s);
}
