//! `failover` end to end against in-memory node groups of two clouds: a create that
//! lands on its second place, every place out, the plans that follow (sticky, with a
//! warning), a failback that moves new-before-old or stays, and bad input.

use gpu_core::clouds::fake::{FakeNodeGroups, Op};
use gpu_core::offer::Cloud;
use gpu_core::seam::CloudError;
use tfplugin::{Diagnostics, Value};

use super::apis::ByCloud;
use super::apply::apply_with;
use super::refresh::read_with;
use super::tests::{catalog, config, errors, plan_of, settings, with};
use super::*;

const GKE: &str = "projects/ml/locations/us-central1/clusters/train-central";

fn with_failover(extra: Vec<(&str, Value)>) -> Value {
    let mut v = with(
        config(),
        "failover",
        Value::List(vec![Value::object([
            ("cloud", Value::string("gcp")),
            ("region", Value::string("us-central1")),
            ("cluster", Value::string(GKE)),
        ])]),
    );
    for (k, x) in extra {
        v = with(v, k, x);
    }
    v
}

fn clouds<'a>(aws: &'a FakeNodeGroups, gcp: &'a FakeNodeGroups) -> ByCloud<'a> {
    ByCloud(vec![(Cloud::Aws, aws), (Cloud::Gcp, gcp)])
}

fn stockout() -> CloudError {
    CloudError::InsufficientCapacity(
        "InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity"
            .into(),
    )
}

fn attr<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| {
        v.get_attr(k).unwrap_or_else(|| panic!("no {k} in {v:?}"))
    })
}

fn outcomes(state: &Value) -> Vec<String> {
    match state.get_attr("attempts") {
        Some(Value::List(items)) => items
            .iter()
            .map(|a| attr(a, &["outcome"]).as_str().unwrap().to_string())
            .collect(),
        other => panic!("attempts: {other:?}"),
    }
}

/// Reads the pool where it runs, as `refresh::read` does with the provider's sessions.
async fn read_at(apis: &ByCloud<'_>, prior: &Value) -> Value {
    let at = places::elsewhere(prior);
    let view = at
        .as_ref()
        .map_or_else(|| prior.clone(), |p| places::at(prior, p));
    let cloud = inputs::cloud_of(&view).unwrap();
    let api = apis::Apis::at(apis, cloud, "x").await.unwrap();
    let mut r = read_with(&*api, &view, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    places::restore(&mut r.new_state, prior);
    r.new_state
}

fn warnings(d: &Diagnostics) -> Vec<String> {
    d.0.iter()
        .filter(|x| !x.is_error())
        .map(|x| format!("{}: {}", x.summary, x.detail))
        .collect()
}

/// Applies `planned` over `prior` with the aws and gcp fakes.
async fn apply_at(
    aws: &FakeNodeGroups,
    gcp: &FakeNodeGroups,
    prior: &Value,
    planned: &Value,
) -> tfplugin::provider::ApplyResourceChangeResponse {
    apply_with(&clouds(aws, gcp), prior, planned, &settings(), catalog()).await
}

/// Creates the pool with aws out of stock: it lands on gcp.
async fn landed_on_gcp(aws: &FakeNodeGroups, gcp: &FakeNodeGroups, cfg: &Value) -> Value {
    aws.inject_after(Op::Create, 1, stockout());
    let p = plan_of(cfg, &Value::Null);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    let r = apply_at(aws, gcp, &Value::Null, &p.planned_state).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    r.new_state
}

#[tokio::test]
async fn a_create_out_of_stock_at_its_first_place_lands_on_the_second_and_stays() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    let cfg = with_failover(vec![]);
    let p = plan_of(&cfg, &Value::Null);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    // Where it lands, its groups and prices are for the apply to say; the plan names
    // the order and the price range.
    for a in [
        "placement",
        "attempts",
        "node_groups",
        "monthly_usd",
        "instance_types",
        "id",
    ] {
        assert!(
            !p.planned_state.get_attr(a).unwrap().is_known(),
            "{a} should be unknown at plan"
        );
    }
    let w = warnings(&p.diagnostics).join("\n");
    assert!(w.contains("at aws us-east-1"), "{w}");
    assert!(w.contains("if it fails over to gcp us-central1"), "{w}");
    assert!(w.contains("aws us-east-1 → gcp us-central1"), "{w}");

    let state = landed_on_gcp(&aws, &gcp, &cfg).await;
    assert!(aws.groups().is_empty(), "aws left: {:?}", aws.groups());
    assert_eq!(gcp.groups().len(), 2, "{:?}", gcp.groups());
    assert_eq!(outcomes(&state), ["stockout", "ready"]);
    assert_eq!(attr(&state, &["placement", "cloud"]), &Value::string("gcp"));
    assert_eq!(attr(&state, &["placement", "cluster"]), &Value::string(GKE));
    assert_eq!(
        attr(&state, &["placement", "instance_type"]),
        &Value::string("a3-highgpu-8g")
    );
    assert!(attr(&state, &["placement", "since"]).as_str().is_some());
    // The user's words stay; the id and prices are the place's.
    assert_eq!(attr(&state, &["cloud"]), &Value::string("aws"));
    assert!(
        attr(&state, &["id"])
            .as_str()
            .unwrap()
            .starts_with("gcp/ml/us-central1/")
    );
    assert!(super::tests::num(&state, "monthly_usd") > 0.0);
    assert!(super::tests::num(&state, "time_to_ready_seconds") >= 0.0);
    let first = &match state.get_attr("attempts") {
        Some(Value::List(a)) => a.clone(),
        _ => unreachable!(),
    }[0];
    assert!(
        attr(first, &["detail"])
            .as_str()
            .unwrap()
            .contains("InsufficientInstanceCapacity"),
        "{first:?}"
    );

    // Read where it runs, then plan: nothing to do, and a warning says where and why.
    let read = read_at(&clouds(&aws, &gcp), &state).await;
    assert_eq!(read, state, "a read changed the state");
    let again = plan_of(&cfg, &read);
    assert!(!again.diagnostics.has_errors(), "{:?}", again.diagnostics);
    assert_eq!(again.planned_state, read, "the next plan is not empty");
    let w = warnings(&again.diagnostics).join("\n");
    assert!(
        w.contains("runs on its failover place gcp us-central1"),
        "{w}"
    );
    assert!(w.contains("aws us-east-1 answered stockout"), "{w}");
    assert!(w.contains("failback = \"on_apply\""), "{w}");

    // An update at the failover place is made there.
    let bigger = with(cfg.clone(), "max_nodes", Value::number(6));
    let p = plan_of(&bigger, &read);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    let r = apply_at(&aws, &gcp, &read, &p.planned_state).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert!(aws.groups().is_empty());
    assert!(
        gcp.groups().iter().any(|g| g.spec.scaling.max == 5),
        "{:?}",
        gcp.groups()
    );

    // And the destroy deletes it there.
    let r = apply_at(&aws, &gcp, &r.new_state, &Value::Null).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert!(gcp.groups().is_empty(), "{:?}", gcp.groups());
}

#[tokio::test]
async fn every_place_out_is_one_error_listing_the_attempts_and_nothing_is_left() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    aws.inject_after(Op::Create, 1, stockout());
    gcp.inject(
        Op::Create,
        CloudError::Quota("QUOTA_EXCEEDED: Insufficient regional quota to satisfy request: resource \"NVIDIA_H100_GPUS\"".into()),
    );
    let cfg = with_failover(vec![]);
    let p = plan_of(&cfg, &Value::Null);
    let r = apply_at(&aws, &gcp, &Value::Null, &p.planned_state).await;
    assert_eq!(r.new_state, Value::Null);
    let e = errors(&r.diagnostics);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "failover");
    assert!(
        e[0].1
            .contains("aws us-east-1 (cluster train-east): stockout"),
        "{}",
        e[0].1
    );
    assert!(e[0].1.contains("gcp us-central1"), "{}", e[0].1);
    assert!(e[0].1.contains("quota"), "{}", e[0].1);
    assert!(aws.groups().is_empty() && gcp.groups().is_empty());
}

#[tokio::test]
async fn an_error_that_is_not_about_capacity_stops_the_walk_at_once() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    aws.inject(
        Op::Create,
        CloudError::Unauthorized("AccessDenied: not allowed".into()),
    );
    let cfg = with_failover(vec![]);
    let p = plan_of(&cfg, &Value::Null);
    let r = apply_at(&aws, &gcp, &Value::Null, &p.planned_state).await;
    assert!(r.diagnostics.has_errors());
    assert!(
        gcp.calls().iter().all(|c| c.0 != Op::Create),
        "gcp was tried"
    );
    assert_eq!(r.new_state, Value::Null);
}

#[tokio::test]
async fn failback_on_apply_moves_back_new_before_old_or_stays_with_a_warning() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    let cfg = with_failover(vec![("failback", Value::string("on_apply"))]);
    let state = landed_on_gcp(&aws, &gcp, &cfg).await;
    let read = read_at(&clouds(&aws, &gcp), &state).await;

    // aws still out: the plan tries, the apply stays on gcp and says so.
    let p = plan_of(&cfg, &read);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert!(!p.planned_state.get_attr("placement").unwrap().is_known());
    let w = warnings(&p.diagnostics).join("\n");
    assert!(w.contains("tries to return to aws us-east-1"), "{w}");
    aws.inject(Op::Create, stockout());
    let r = apply_at(&aws, &gcp, &read, &p.planned_state).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    let w = warnings(&r.diagnostics).join("\n");
    assert!(w.contains("stays on gcp us-central1"), "{w}");
    assert!(aws.groups().is_empty(), "{:?}", aws.groups());
    assert_eq!(gcp.groups().len(), 2);
    assert_eq!(
        attr(&r.new_state, &["placement", "cloud"]),
        &Value::string("gcp")
    );
    assert_eq!(
        attr(&r.new_state, &["placement", "since"]),
        attr(&read, &["placement", "since"])
    );

    // aws has capacity again: created there, then deleted from gcp.
    let p = plan_of(&cfg, &r.new_state);
    let r = apply_at(&aws, &gcp, &r.new_state, &p.planned_state).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(
        attr(&r.new_state, &["placement", "cloud"]),
        &Value::string("aws")
    );
    assert_eq!(outcomes(&r.new_state), ["ready"]);
    assert_eq!(aws.groups().len(), 2);
    assert!(gcp.groups().is_empty(), "{:?}", gcp.groups());
    // The old place's delete came after the new place's create.
    let aws_created = aws.calls().iter().filter(|c| c.0 == Op::Create).count();
    assert!(aws_created >= 2);
    // Back home: plans are empty and quiet again.
    let read = read_at(&clouds(&aws, &gcp), &r.new_state).await;
    let again = plan_of(&cfg, &read);
    assert_eq!(again.planned_state, read);
    assert!(
        warnings(&again.diagnostics).is_empty(),
        "{:?}",
        again.diagnostics
    );
}

#[test]
fn bad_failover_input_is_refused_on_its_attribute_before_any_call() {
    let cases = [
        ("capacity_wait", Value::string("0s"), "capacity_wait"),
        ("capacity_wait", Value::string("soon"), "capacity_wait"),
        ("failback", Value::string("sometimes"), "failback"),
    ];
    for (name, value, path) in cases {
        let cfg = with_failover(vec![(name, value.clone())]);
        let d = schema().block.check(&cfg);
        let e = errors(&d);
        assert_eq!(e.len(), 1, "{name} = {value:?}: {e:?}");
        assert_eq!(e[0].0, path);
    }
    let repeated = with(
        config(),
        "failover",
        Value::List(vec![Value::object([
            ("cloud", Value::string("AWS")),
            ("region", Value::string("us-east-1")),
            ("cluster", Value::string("train-east")),
        ])]),
    );
    let e = errors(&validate(&repeated, catalog()));
    assert!(e.iter().any(|(p, _)| p == "failover[0]"), "{e:?}");
    let p = plan_of(&repeated, &Value::Null);
    assert!(p.diagnostics.has_errors());
    let foreign = with(
        config(),
        "failover",
        Value::List(vec![Value::object([
            ("cloud", Value::string("gcp")),
            ("region", Value::string("us-central1")),
            ("cluster", Value::string("train-east")),
        ])]),
    );
    let e = errors(&validate(&foreign, catalog()));
    assert!(e.iter().any(|(p, _)| p == "failover[0].cluster"), "{e:?}");
}

#[test]
fn a_pool_without_failover_plans_its_own_place() {
    let p = plan_of(&config(), &Value::Null);
    let placement = p.planned_state.get_attr("placement").unwrap();
    assert_eq!(attr(placement, &["cloud"]), &Value::string("aws"));
    assert_eq!(attr(placement, &["region"]), &Value::string("us-east-1"));
    assert!(!attr(placement, &["since"]).is_known());
    assert!(p.planned_state.get_attr("monthly_usd").unwrap().is_known());
}

#[tokio::test]
async fn tagged_groups_at_a_later_place_are_reported_never_deleted() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    let cfg = with_failover(vec![]);
    // A first apply landed on gcp, and the provider was killed before Terraform saved
    // the state (or another configuration runs a pool of the same name there).
    let _lost = landed_on_gcp(&aws, &gcp, &cfg).await;
    assert_eq!(gcp.groups().len(), 2);
    // The next apply finds capacity at aws: placed there; gcp is left alone, with a
    // warning that names what is there.
    let p = plan_of(&cfg, &Value::Null);
    let r = apply_at(&aws, &gcp, &Value::Null, &p.planned_state).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(
        attr(&r.new_state, &["placement", "cloud"]),
        &Value::string("aws")
    );
    assert_eq!(aws.groups().len(), 2);
    assert_eq!(
        gcp.groups().len(),
        2,
        "nothing is deleted at a place the pool is not at"
    );
    let w = warnings(&r.diagnostics).join("\n");
    assert!(w.contains("outside its state at gcp us-central1"), "{w}");
    assert!(w.contains("train-od"), "{w}");
}

#[tokio::test]
async fn a_walk_adopts_the_groups_an_interrupted_walk_left_where_it_lands() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    let cfg = with_failover(vec![]);
    let _lost = landed_on_gcp(&aws, &gcp, &cfg).await;
    let ids: Vec<String> = gcp.groups().iter().map(|g| g.id.clone()).collect();
    // aws still out: the walk reaches gcp and takes the groups there as they are.
    aws.inject_after(Op::Create, 1, stockout());
    let p = plan_of(&cfg, &Value::Null);
    let r = apply_at(&aws, &gcp, &Value::Null, &p.planned_state).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(
        attr(&r.new_state, &["placement", "cloud"]),
        &Value::string("gcp")
    );
    let now: Vec<String> = gcp.groups().iter().map(|g| g.id.clone()).collect();
    assert_eq!(now, ids, "adopted, not made again");
    assert!(aws.groups().is_empty());
}

#[tokio::test]
async fn a_failover_block_in_another_spelling_plans_nothing() {
    let (aws, gcp) = (super::tests::fake(), FakeNodeGroups::for_cloud(Cloud::Gcp));
    let cfg = with_failover(vec![]);
    let state = landed_on_gcp(&aws, &gcp, &cfg).await;
    let respelled = with(
        cfg.clone(),
        "failover",
        Value::List(vec![Value::object([
            ("cloud", Value::string("GCP")),
            ("region", Value::string("US-CENTRAL1")),
            ("cluster", Value::string(GKE)),
        ])]),
    );
    let p = plan_of(&respelled, &state);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert_eq!(p.planned_state, state, "a re-spelled place is a change");
    // Another place is one.
    let other = with(
        cfg,
        "failover",
        Value::List(vec![Value::object([
            ("cloud", Value::string("gcp")),
            ("region", Value::string("us-central1")),
            (
                "cluster",
                Value::string("projects/ml/locations/us-central1/clusters/other"),
            ),
        ])]),
    );
    assert_ne!(plan_of(&other, &state).planned_state, state);
}
