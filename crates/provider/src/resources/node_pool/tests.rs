//! The resource end to end against the in-memory node groups: plan, apply, read, plan
//! again, update, replace, import, destroy.

use std::collections::BTreeMap;

use gpu_core::catalog::Catalog;
use gpu_core::clouds::fake::{FakeNodeGroups, Op};
use gpu_core::seam::{CapacityType, CloudError, NodeGroups};
use tfplugin::provider::PlanResourceChangeRequest;
use tfplugin::{AttributePath, Type, Value};

use super::apply::apply_with;
use super::import::import_state;
use super::plan::plan;
use super::refresh::read_with;
use super::*;

pub(super) const ROLE: &str = "arn:aws:iam::123456789012:role/eks-node";

/// p5.48xlarge in us-east-1: on-demand 55.04, cheapest spot (use1-az3) 20.9934.
const OD: f64 = 55.04;
const SPOT: f64 = 20.9934;

pub(super) fn catalog() -> &'static Catalog {
    Catalog::embedded()
}

/// The tests' provider settings: prices on the stale list count (the tests price p5 in
/// us-east-1 at its listed spot price); [`stale_prices_are_left_out_by_default`] checks
/// the default.
pub(super) fn settings() -> Settings {
    Settings {
        default_labels: BTreeMap::from([("team".to_string(), "ml".to_string())]),
        prices: gpu_core::freshness::Freshness::any().including_stale(true),
        ..Settings::default()
    }
}

/// An object of the resource's type with every attribute null but `pairs`.
pub(super) fn object(pairs: Vec<(&str, Value)>) -> Value {
    let taint = ("taint", Value::List(Vec::new()));
    crate::model_values::object_of(&schema(), std::iter::once(taint).chain(pairs))
}

pub(super) fn list(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| Value::string(*s)).collect())
}

/// The example pool: H100 × 8, 1–4 nodes, one on-demand, the rest spot.
pub(super) fn config() -> Value {
    object(vec![
        ("cloud", Value::string("aws")),
        ("region", Value::string("us-east-1")),
        ("cluster", Value::string("train-east")),
        ("name", Value::string("train")),
        ("gpu", Value::string("H100")),
        ("gpu_count", Value::number(8)),
        ("min_nodes", Value::number(1)),
        ("max_nodes", Value::number(4)),
        (
            "capacity",
            Value::object([
                ("spot", Value::Bool(true)),
                ("on_demand_min", Value::number(1)),
            ]),
        ),
        ("labels", Value::map([("workload", Value::string("train"))])),
        (
            "taint",
            Value::List(vec![Value::object([
                ("key", Value::string("dedicated")),
                ("value", Value::string("train")),
                ("effect", Value::string("NoSchedule")),
            ])]),
        ),
        ("tags", Value::map([("project", Value::string("llm"))])),
        (
            "aws",
            Value::object([
                ("node_role_arn", Value::string(ROLE)),
                ("subnet_ids", Value::Null),
            ]),
        ),
    ])
}

pub(super) fn with(mut v: Value, name: &str, value: Value) -> Value {
    plan::set(&mut v, name, value);
    v
}

/// What Terraform proposes: the config, with computed values (and optional+computed ones
/// left unset) taken from the prior state.
pub(super) fn proposed(config: &Value, prior: &Value) -> Value {
    if prior.is_null() {
        return config.clone();
    }
    let mut p = config.clone();
    let block = schema().block;
    for a in &block.attributes {
        let unset = config.get_attr(&a.name).is_none_or(Value::is_null);
        if a.is_computed() && unset {
            plan::set(
                &mut p,
                &a.name,
                prior.get_attr(&a.name).cloned().unwrap_or(Value::Null),
            );
        }
    }
    if let (Some(Value::Object(aws)), Some(prior_aws)) = (
        match &mut p {
            Value::Object(m) => m.get_mut("aws"),
            _ => None,
        },
        prior.get_attr("aws"),
    ) && aws.get("subnet_ids").is_none_or(Value::is_null)
    {
        aws.insert(
            "subnet_ids".into(),
            prior_aws
                .get_attr("subnet_ids")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    p
}

pub(super) fn plan_of(
    config: &Value,
    prior: &Value,
) -> tfplugin::provider::PlanResourceChangeResponse {
    plan(
        &PlanResourceChangeRequest {
            type_name: TYPE_NAME.into(),
            prior_state: prior.clone(),
            proposed_new_state: proposed(config, prior),
            config: config.clone(),
            prior_private: Vec::new(),
            provider_meta: None,
            client_capabilities: Default::default(),
        },
        &settings(),
        catalog(),
    )
}

pub(super) fn num(v: &Value, name: &str) -> f64 {
    v.get_attr(name)
        .and_then(Value::as_number)
        .map(|n| n.as_f64())
        .unwrap_or_else(|| panic!("{name} is not a number: {:?}", v.get_attr(name)))
}

pub(super) fn errors(d: &tfplugin::Diagnostics) -> Vec<(String, String)> {
    d.0.iter()
        .filter(|x| x.is_error())
        .map(|x| {
            (
                x.attribute
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
                x.detail.clone(),
            )
        })
        .collect()
}

/// The example pools' cluster.
pub(super) fn east() -> gpu_core::seam::ClusterRef {
    gpu_core::seam::ClusterRef::Eks {
        region: "us-east-1".into(),
        name: "train-east".into(),
    }
}

pub(super) fn fake() -> FakeNodeGroups {
    let f = FakeNodeGroups::new();
    f.set_cluster_subnets(
        &east(),
        vec!["subnet-0000000a".into(), "subnet-0000000b".into()],
    );
    f
}

/// Plan and apply `config` over `prior`; returns the new state.
pub(super) async fn plan_apply(api: &dyn apis::Apis, config: &Value, prior: &Value) -> Value {
    let p = plan_of(config, prior);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    let r = apply_with(api, prior, &p.planned_state, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    r.new_state
}

#[test]
fn stale_prices_are_left_out_by_default() {
    let plan_with = |config: &Value| {
        plan(
            &PlanResourceChangeRequest {
                type_name: TYPE_NAME.into(),
                prior_state: Value::Null,
                proposed_new_state: proposed(config, &Value::Null),
                config: config.clone(),
                prior_private: Vec::new(),
                provider_meta: None,
                client_capabilities: Default::default(),
            },
            &Settings::default(),
            catalog(),
        )
    };
    // us-east-1: p5's spot price is on the stale list, so spot is priced at on-demand.
    let p = plan_with(&config());
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert_eq!(num(&p.planned_state, "spot_usd_per_node_hour"), OD);
    // us-west-2: every p5 price is stale; the error says how to count them anyway.
    let west = with(config(), "region", Value::string("us-west-2"));
    let e = errors(&plan_with(&west).diagnostics);
    assert!(
        e.iter().any(|(_, d)| d.contains("include_stale_prices")),
        "{e:?}"
    );
    // Pinned, the same rules price it (plan and apply price alike): still an error.
    let pinned = with(west, "instance_types", list(&["p5.48xlarge"]));
    let e = errors(&plan_with(&pinned).diagnostics);
    assert!(
        e.iter().any(|(_, d)| d.contains("include_stale_prices")),
        "{e:?}"
    );
    // Counted, the pool is priced, and its price source says why the price is stale.
    let counted = Settings {
        prices: gpu_core::freshness::Freshness::any().including_stale(true),
        ..Settings::default()
    };
    let p = plan(
        &PlanResourceChangeRequest {
            type_name: TYPE_NAME.into(),
            prior_state: Value::Null,
            proposed_new_state: proposed(&pinned, &Value::Null),
            config: pinned.clone(),
            prior_private: Vec::new(),
            provider_meta: None,
            client_capabilities: Default::default(),
        },
        &counted,
        catalog(),
    );
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    // The cost warning's price line says why (the source attributes and node labels keep
    // the plain source, so that they match each other).
    let said = format!("{:?}", p.diagnostics);
    assert!(
        said.contains("STALE (predates the 2025-06 AWS P4/P5 price reduction"),
        "{said}"
    );
}

#[test]
fn plan_prices_the_pool_from_the_catalog_rows_it_names() {
    let p = plan_of(&config(), &Value::Null);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    let s = &p.planned_state;
    assert_eq!(s.get_attr("instance_types"), Some(&list(&["p5.48xlarge"])));
    assert_eq!(num(s, "on_demand_usd_per_node_hour"), OD);
    assert_eq!(num(s, "spot_usd_per_node_hour"), SPOT);
    // min 1 = the on-demand floor; max 4 = 1 on-demand + 3 spot.
    assert!((num(s, "hourly_usd") - OD).abs() < 1e-6);
    assert!((num(s, "hourly_usd_max") - (OD + 3.0 * SPOT)).abs() < 1e-6);
    assert!((num(s, "monthly_usd") - (OD * 730.0 * 100.0).round() / 100.0).abs() < 1e-9);
    assert_eq!(num(s, "monthly_delta_usd"), num(s, "monthly_usd"));
    assert_eq!(
        s.get_attr("id"),
        Some(&Value::string("aws/us-east-1/train-east/train"))
    );
    let warning = p
        .diagnostics
        .0
        .iter()
        .find(|d| !d.is_error())
        .expect("a cost warning");
    // The money in the title (so `-compact-warnings` shows it), the rest in two lines.
    assert_eq!(
        warning.summary,
        "gpu_node_pool.train: +$40,179.20/month (up to $86,154.75)"
    );
    assert!(
        warning
            .detail
            .starts_with("1 on-demand + up to 3 spot p5.48xlarge in us-east-1\nPrices: "),
        "{}",
        warning.detail
    );
    assert_eq!(warning.detail.lines().count(), 2, "{}", warning.detail);
    assert!(
        warning
            .detail
            .contains("1 on-demand + up to 3 spot p5.48xlarge in us-east-1")
    );
    let groups = s
        .get_attr("node_groups")
        .and_then(Value::as_elements)
        .unwrap();
    assert_eq!(groups.len(), 2);
    assert!(!groups[0].get_attr("id").unwrap().is_known());
}

#[test]
fn bad_configs_fail_at_plan_with_the_attribute_named() {
    let cases = [
        (with(config(), "min_nodes", Value::number(5)), "min_nodes"),
        (with(config(), "gpu", Value::string("H101")), "gpu"),
        (with(config(), "gpu_count", Value::number(3)), "gpu_count"),
        (
            with(config(), "region", Value::string("eu-nowhere-1")),
            "region",
        ),
        (
            with(
                config(),
                "capacity",
                Value::object([
                    ("spot", Value::Bool(true)),
                    ("on_demand_min", Value::number(9)),
                ]),
            ),
            "capacity.on_demand_min",
        ),
        (
            with(
                config(),
                "taint",
                Value::List(vec![Value::object([
                    ("key", Value::string("a")),
                    ("value", Value::Null),
                    ("effect", Value::string("Never")),
                ])]),
            ),
            "taint[0].effect",
        ),
        (
            with(
                config(),
                "labels",
                Value::map([("gpu.tf/pool", Value::string("x"))]),
            ),
            "labels[\"gpu.tf/pool\"]",
        ),
        (
            with(
                config(),
                "aws",
                Value::object([
                    ("node_role_arn", Value::string("eks-node")),
                    ("subnet_ids", Value::Null),
                ]),
            ),
            "aws.node_role_arn",
        ),
        (with(config(), "aws", Value::Null), "aws"),
        (
            with(
                config(),
                "timeouts",
                Value::object([
                    ("create", Value::string("ten")),
                    ("update", Value::Null),
                    ("delete", Value::Null),
                ]),
            ),
            "timeouts.create",
        ),
        (with(config(), "gpu", Value::unknown()), "gpu"),
        (
            with(
                with(config(), "cloud", Value::string("azure")),
                "region",
                Value::string("eastus"),
            ),
            "cluster",
        ),
    ];
    for (cfg, path) in cases {
        let p = plan_of(&cfg, &Value::Null);
        let errs = errors(&p.diagnostics);
        assert!(
            errs.iter().any(|(p, _)| p == path),
            "expected an error at {path}, got {errs:?}"
        );
    }
}

#[test]
fn names_and_taints_known_only_after_apply_do_not_fail_the_plan() {
    // e.g. `cluster = aws_eks_cluster.x.name` where the cluster is created in the same run.
    let taint = Value::List(vec![Value::object([
        ("key", Value::unknown()),
        ("value", Value::unknown()),
        ("effect", Value::unknown()),
    ])]);
    let cfg = with(
        with(
            with(config(), "cluster", Value::unknown()),
            "name",
            Value::unknown(),
        ),
        "taint",
        taint,
    );
    let p = plan_of(&cfg, &Value::Null);
    assert!(errors(&p.diagnostics).is_empty(), "{:?}", p.diagnostics);
    let s = &p.planned_state;
    for a in ["cluster", "name", "id", "node_groups"] {
        assert!(
            !s.get_attr(a).unwrap().is_known(),
            "{a} should stay unknown"
        );
    }
    assert!(num(s, "monthly_usd") > 0.0);
    let warning = &p
        .diagnostics
        .0
        .iter()
        .find(|d| !d.is_error())
        .unwrap()
        .summary;
    assert!(warning.contains("(name known after apply)"), "{warning}");
    assert!(
        !format!("{s:?}").contains("known-after-apply"),
        "a stand-in leaked: {s:?}"
    );

    // A known bad value next to them is still refused, and the stand-ins are not quoted.
    let bad = with(cfg, "min_nodes", Value::number(9));
    let errs = errors(&plan_of(&bad, &Value::Null).diagnostics);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, "min_nodes");
}

#[test]
fn on_demand_floor_above_max_nodes_is_refused_without_spot_too() {
    let cfg = with(
        config(),
        "capacity",
        Value::object([
            ("spot", Value::Bool(false)),
            ("on_demand_min", Value::number(9)),
        ]),
    );
    let errs = errors(&plan_of(&cfg, &Value::Null).diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "capacity.on_demand_min" && d.contains("at most 4")),
        "{errs:?}"
    );
}

#[test]
fn an_azure_pool_plans_with_its_price_id_and_account_check() {
    let azure = with(
        with(config(), "cloud", Value::string("azure")),
        "region",
        Value::string("eastus"),
    );
    // An EKS cluster name cannot name an AKS cluster: the ARM id's shape is the fix.
    let p = plan_of(&azure, &Value::Null);
    let errs = errors(&p.diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "cluster" && d.contains("/subscriptions/<subscription>")),
        "{errs:?}"
    );
    let sub = "0b1f6471-1bf0-4dda-aec3-cb9272f09590";
    let azure = with(
        azure,
        "cluster",
        Value::string(format!(
            "/subscriptions/{sub}/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/train"
        )),
    );
    let p = plan_of(&azure, &Value::Null);
    assert!(errors(&p.diagnostics).is_empty(), "{:?}", p.diagnostics);
    let planned = &p.planned_state;
    assert_eq!(
        planned.get_attr("id").and_then(Value::as_str),
        Some(format!("azure/{sub}/ml/train/train").as_str())
    );
    assert!(
        planned
            .get_attr("monthly_usd")
            .and_then(Value::as_number)
            .is_some_and(|n| n.as_f64() > 0.0)
    );
    let cost = p
        .diagnostics
        .0
        .iter()
        .find(|d| d.summary.starts_with("gpu_node_pool.train: +$"))
        .expect("cost warning");
    assert!(cost.detail.contains("eastus"), "{}", cost.detail);
    // A cluster in another subscription than the provider's is refused on `cluster`.
    let mut other = settings();
    other.clouds = crate::clouds::Clouds::of(&crate::config::ProviderConfig {
        azure: Some(crate::config::AzureConfig {
            subscription_id: Some("11111111-2222-4333-8444-555555555555".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    let p = plan(
        &PlanResourceChangeRequest {
            type_name: TYPE_NAME.into(),
            prior_state: Value::Null,
            proposed_new_state: proposed(&azure, &Value::Null),
            config: azure.clone(),
            prior_private: Vec::new(),
            provider_meta: None,
            client_capabilities: Default::default(),
        },
        &other,
        catalog(),
    );
    let errs = errors(&p.diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "cluster" && d.contains("azure.subscription_id")),
        "{errs:?}"
    );
    // A region the other cloud does not have is named as such, with the valid ones.
    let p = plan_of(
        &with(config(), "cloud", Value::string("azure")),
        &Value::Null,
    );
    let errs = errors(&p.diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "region" && d.contains("eastus")),
        "{errs:?}"
    );
}

#[test]
fn cloud_blocks_are_checked_on_their_own_cloud_only() {
    let aks = "/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/train";
    let bad_azure = Value::object([("os_sku", Value::string("Windows2022"))]);
    let bad_gcp = Value::object([("image_type", Value::string("WINDOWS_LTSC_CONTAINERD"))]);
    let azure = with(
        with(
            with(
                with(config(), "cloud", Value::string("azure")),
                "region",
                Value::string("eastus"),
            ),
            "cluster",
            Value::string(aks),
        ),
        "azure",
        bad_azure.clone(),
    );
    let azure = with(azure, "gcp", bad_gcp.clone());
    let errs = errors(&plan_of(&azure, &Value::Null).diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "azure.os_sku" && d.contains("`AzureLinux`")),
        "{errs:?}"
    );
    assert!(!errs.iter().any(|(p, _)| p.starts_with("gcp")), "{errs:?}");
    // On aws, neither block is read: the plan is clean.
    let aws = with(with(config(), "azure", bad_azure), "gcp", bad_gcp);
    let errs = errors(&plan_of(&aws, &Value::Null).diagnostics);
    assert!(errs.is_empty(), "{errs:?}");
}

#[test]
fn budget_over_the_ceiling_fails_on_max_nodes() {
    let s = Settings {
        max_monthly_usd: Some(50_000.0),
        ..settings()
    };
    let p = plan(
        &PlanResourceChangeRequest {
            type_name: TYPE_NAME.into(),
            prior_state: Value::Null,
            proposed_new_state: config(),
            config: config(),
            prior_private: Vec::new(),
            provider_meta: None,
            client_capabilities: Default::default(),
        },
        &s,
        catalog(),
    );
    let errs = errors(&p.diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "max_nodes" && d.contains("budget")),
        "{errs:?}"
    );
}

#[tokio::test]
async fn apply_read_and_plan_again_is_empty() {
    let api = fake();
    let state = plan_apply(&api, &config(), &Value::Null).await;
    let od = api.get_group(&east(), "train-od").await.unwrap().unwrap();
    let spot = api.get_group(&east(), "train-spot").await.unwrap().unwrap();
    assert_eq!(od.spec.capacity, CapacityType::OnDemand);
    assert_eq!(
        (
            od.spec.scaling.min,
            od.spec.scaling.max,
            od.spec.scaling.desired
        ),
        (1, 1, Some(1))
    );
    assert_eq!(spot.spec.capacity, CapacityType::Spot);
    assert_eq!((spot.spec.scaling.min, spot.spec.scaling.max), (0, 3));
    assert_eq!(
        od.spec.class,
        gpu_core::seam::NodeClass::Aws(gpu_core::seam::AwsClass {
            node_role: ROLE.into(),
            subnets: Some(vec!["subnet-0000000a".into(), "subnet-0000000b".into()]),
            ami_type: "AL2023_x86_64_NVIDIA".into(),
            capacity_reservation: None,
        }),
        "the cluster's subnets"
    );
    assert_eq!(
        spot.spec
            .labels
            .get("gpu.tf/capacity-type")
            .map(String::as_str),
        Some("spot")
    );
    assert_eq!(spot.spec.tags.get("team").map(String::as_str), Some("ml"));
    assert_eq!(
        spot.spec.tags.get("project").map(String::as_str),
        Some("llm")
    );
    let ids = groups::ids(&state);
    assert_eq!(ids.get("train-od"), Some(&od.id));

    let read = read_with(&api, &state, &settings(), catalog()).await;
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert_eq!(
        read.new_state, state,
        "read of an unchanged pool changes nothing"
    );
    let again = plan_of(&config(), &read.new_state);
    assert!(!again.diagnostics.has_errors(), "{:?}", again.diagnostics);
    assert_eq!(again.planned_state, read.new_state, "second plan is empty");
    assert!(again.requires_replace.is_empty());
    assert!(
        again.diagnostics.is_empty(),
        "no cost warning without a change"
    );
}

#[tokio::test]
async fn the_floor_nodes_up_are_read_at_apply_and_refresh_and_a_change_reads_them_again() {
    let api = fake();
    let p = plan_of(&config(), &Value::Null);
    assert!(
        !p.planned_state
            .get_attr("floor_nodes_up")
            .unwrap()
            .is_known()
    );
    let state = plan_apply(&api, &config(), &Value::Null).await;
    assert_eq!(
        num(&state, "floor_nodes_up"),
        1.0,
        "the floor group's one node"
    );
    // The cloud says its floor node is gone: the refresh shows it, the plan stays empty.
    api.set_nodes_up("train-od", 0);
    let read = read_with(&api, &state, &settings(), catalog()).await;
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert_eq!(num(&read.new_state, "floor_nodes_up"), 0.0);
    let again = plan_of(&config(), &read.new_state);
    assert_eq!(again.planned_state, read.new_state, "no change to plan");
    // A change leaves it to the apply, which reads it again.
    let labelled = with(
        config(),
        "labels",
        Value::map([("workload", Value::string("serve"))]),
    );
    let change = plan_of(&labelled, &read.new_state);
    assert!(
        !change
            .planned_state
            .get_attr("floor_nodes_up")
            .unwrap()
            .is_known()
    );
    // A pool without a floor has none to count.
    let no_floor = with(
        config(),
        "capacity",
        Value::object([
            ("spot", Value::Bool(true)),
            ("on_demand_min", Value::number(0)),
        ]),
    );
    let other = fake();
    let state = plan_apply(&other, &no_floor, &Value::Null).await;
    assert!(state.get_attr("floor_nodes_up").unwrap().is_null());
}

#[tokio::test]
async fn drift_shows_and_label_changes_update_in_place() {
    let api = fake();
    let state = plan_apply(&api, &config(), &Value::Null).await;
    // Someone raises the spot group's max outside Terraform.
    let live = api.get_group(&east(), "train-spot").await.unwrap().unwrap();
    let mut raised = live.spec.clone();
    raised.scaling = gpu_core::model::Scaling {
        min: 0,
        max: 7,
        desired: Some(0),
    };
    api.update_group(&east(), &live, &raised).await.unwrap();
    let read = read_with(&api, &state, &settings(), catalog())
        .await
        .new_state;
    assert_eq!(num(&read, "max_nodes"), 8.0);
    let cfg = with(
        config(),
        "labels",
        Value::map([("stage", Value::string("prod"))]),
    );
    let p = plan_of(&cfg, &read);
    assert!(p.requires_replace.is_empty(), "{:?}", p.requires_replace);
    assert_ne!(p.planned_state, read);
    let r = apply_with(&api, &read, &p.planned_state, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    let spot = api.get_group(&east(), "train-spot").await.unwrap().unwrap();
    assert_eq!(spot.spec.scaling.max, 3, "drift corrected");
    assert_eq!(
        spot.spec.labels.get("stage").map(String::as_str),
        Some("prod")
    );
    assert!(
        !spot.spec.labels.contains_key("workload"),
        "removed label is gone"
    );
    assert!(api.calls().iter().all(|(op, _, _)| *op != Op::Delete));
}

#[tokio::test]
async fn driver_or_gpu_count_change_rolls_the_groups_and_never_replaces() {
    let api = fake();
    let state = plan_apply(&api, &config(), &Value::Null).await;
    let state = read_with(&api, &state, &settings(), catalog())
        .await
        .new_state;
    let cfg = with(config(), "driver", Value::string("bottlerocket_nvidia"));
    let p = plan_of(&cfg, &state);
    assert!(p.requires_replace.is_empty(), "{:?}", p.requires_replace);
    let planned = groups::names(&p.planned_state);
    assert_eq!(planned.len(), 2);
    assert!(
        planned
            .iter()
            .all(|n| n.starts_with("train-od-") || n.starts_with("train-spot-")),
        "both groups roll to a new generation: {planned:?}"
    );
    let warning = &p.diagnostics.0[0].detail;
    assert!(
        warning.contains("Rolls train-spot → train-spot-")
            && warning.contains("image AL2023_x86_64_NVIDIA → BOTTLEROCKET_x86_64_NVIDIA"),
        "{warning}"
    );
    let before = api.calls().len();
    let r = apply_with(&api, &state, &p.planned_state, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(groups::names(&r.new_state), planned);
    // Every create (and its wait) comes before the first delete: never zero nodes.
    let calls: Vec<(Op, String)> = api.calls()[before..]
        .iter()
        .map(|(op, _, n)| (*op, n.clone()))
        .collect();
    let last_create = calls.iter().rposition(|(op, _)| *op == Op::Create).unwrap();
    let first_delete = calls.iter().position(|(op, _)| *op == Op::Delete).unwrap();
    assert!(last_create < first_delete, "{calls:?}");
    let deleted: Vec<&str> = calls
        .iter()
        .filter(|(op, _)| *op == Op::Delete)
        .map(|(_, n)| n.as_str())
        .collect();
    assert_eq!(deleted, ["train-od", "train-spot"]);
    // The plan after the roll is empty.
    let read = read_with(&api, &r.new_state, &settings(), catalog())
        .await
        .new_state;
    assert_no_change(&cfg, &read, "after the roll");

    // gpu_count 8 → 1 changes the instance types: a roll too, not a replacement.
    let p = plan_of(&with(config(), "gpu_count", Value::number(1)), &state);
    assert!(p.requires_replace.is_empty(), "{:?}", p.requires_replace);
}

#[tokio::test]
async fn only_a_change_of_identity_replaces() {
    let api = fake();
    let state = plan_apply(&api, &config(), &Value::Null).await;
    for (attr, value) in [
        ("cluster", "train-west"),
        ("name", "train2"),
        ("region", "us-west-2"),
    ] {
        let p = plan_of(&with(config(), attr, Value::string(value)), &state);
        let paths: Vec<String> = p.requires_replace.iter().map(ToString::to_string).collect();
        assert_eq!(paths, vec![attr.to_string()], "{attr}");
        // A replacement is a new pool: its groups start at generation 0.
        let names = groups::names(&p.planned_state);
        assert!(
            names
                .iter()
                .all(|n| n.ends_with("-od") || n.ends_with("-spot")),
            "{names:?}"
        );
    }
}

#[tokio::test]
async fn second_group_failing_keeps_the_first_in_state() {
    let api = fake();
    api.inject(Op::Create, CloudError::Throttled("nope".into()));
    // The first create fails: nothing exists, nothing is recorded.
    let p = plan_of(&config(), &Value::Null);
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings(), catalog()).await;
    assert!(r.diagnostics.has_errors());
    assert!(r.new_state.is_null(), "{:?}", r.new_state);

    let api = fake();
    api.inject_after(
        Op::Create,
        1,
        CloudError::Transient("InternalFailure: try again".into()),
    );
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings(), catalog()).await;
    let detail = &r
        .diagnostics
        .0
        .iter()
        .find(|d| d.is_error())
        .unwrap()
        .detail;
    assert!(detail.contains("train-od"), "{detail}");
    let names = groups::names(&r.new_state);
    assert_eq!(names, vec!["train-od"]);
    assert!(api.get_group(&east(), "train-od").await.unwrap().is_some());
    // Applying again converges: the missing group is created, the existing one kept.
    let p2 = plan_of(&config(), &r.new_state);
    let r2 = apply_with(
        &api,
        &r.new_state,
        &p2.planned_state,
        &settings(),
        catalog(),
    )
    .await;
    assert!(!r2.diagnostics.has_errors(), "{:?}", r2.diagnostics);
    assert_eq!(groups::names(&r2.new_state), vec!["train-od", "train-spot"]);
}

#[tokio::test]
async fn a_new_pool_refused_for_capacity_leaves_nothing_and_says_where() {
    let api = fake();
    api.inject_after(
        Op::Create,
        1,
        CloudError::InsufficientCapacity(
            "InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a).".into(),
        ),
    );
    let p = plan_of(&config(), &Value::Null);
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings(), catalog()).await;
    assert!(r.new_state.is_null(), "{:?}", r.new_state);
    assert!(api.groups().is_empty(), "nothing left: {:?}", api.groups());
    let e = r.diagnostics.0.iter().find(|d| d.is_error()).unwrap();
    assert_eq!(
        e.summary,
        "No GPU capacity for gpu_node_pool `train` at aws us-east-1 (cluster train-east)"
    );
    assert!(e.detail.starts_with("EKS answered stockout: creating node group train-spot failed: insufficient capacity: InsufficientInstanceCapacity"), "{}", e.detail);
    assert!(
        e.detail
            .contains("the node group train-od made before the refusal was deleted"),
        "{}",
        e.detail
    );
    assert_eq!(e.attribute, Some(AttributePath::attr("region")));
    // Capacity back: the same plan applies.
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(groups::names(&r.new_state), vec!["train-od", "train-spot"]);
}

/// Settings whose operations append capacity events to a fresh file; the file's path.
fn recording(test: &str) -> (Settings, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("gpu-tf-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("events.jsonl");
    let _ = std::fs::remove_file(&path);
    let mut s = settings();
    s.clouds = s
        .clouds
        .with_record(Some(gpu_core::record::EventLog::at(&path)));
    (s, path)
}

fn events(path: &std::path::Path) -> Vec<gpu_core::record::EventLine> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    gpu_core::record::report::parse("events", &text).unwrap()
}

#[tokio::test]
async fn a_create_records_the_request_and_the_time_to_ready_and_an_update_keeps_it() {
    let (settings, path) = recording("ready");
    let api = fake();
    let p = plan_of(&config(), &Value::Null);
    assert!(
        !p.planned_state
            .get_attr("time_to_ready_seconds")
            .unwrap()
            .is_known()
    );
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings, catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    let seconds = r
        .new_state
        .get_attr("time_to_ready_seconds")
        .unwrap()
        .clone();
    assert!(
        seconds.as_number().is_some_and(|n| n.as_f64() >= 0.0),
        "{seconds:?}"
    );
    let e = events(&path);
    let kinds: Vec<&str> = e.iter().map(|l| l.event.as_str()).collect();
    assert_eq!(kinds, ["request", "ready"]);
    assert_eq!(e[1].resource.as_deref(), Some("gpu_node_pool.train"));
    assert_eq!(
        (e[1].cloud.as_str(), e[1].region.as_str()),
        ("aws", "us-east-1")
    );
    assert_eq!(e[1].gpu.as_deref(), Some("H100"));
    assert_eq!(
        Some(e[1].seconds.unwrap()),
        seconds.as_number().map(|n| n.as_f64())
    );
    // A change that makes no group keeps the measure and records nothing.
    let again = plan_of(&config(), &r.new_state);
    assert_eq!(
        again.planned_state.get_attr("time_to_ready_seconds"),
        Some(&seconds)
    );
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[tokio::test]
async fn a_capacity_refusal_is_recorded_with_its_outcome() {
    let (settings, path) = recording("capacity");
    let api = fake();
    api.inject(
        Op::Create,
        CloudError::Quota("VcpuLimitExceeded: vCPU limit of 0".into()),
    );
    let p = plan_of(&config(), &Value::Null);
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings, catalog()).await;
    assert!(r.diagnostics.has_errors());
    let e = events(&path);
    let kinds: Vec<&str> = e.iter().map(|l| l.event.as_str()).collect();
    assert_eq!(kinds, ["request", "capacity"]);
    assert_eq!(e[1].outcome.as_deref(), Some("quota"));
    assert!(
        e[1].detail
            .as_deref()
            .unwrap()
            .contains("VcpuLimitExceeded")
    );
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[tokio::test]
async fn a_change_refused_as_busy_is_sent_again_and_the_apply_warns_how_long_it_waited() {
    let api = fake();
    api.inject(
        Op::Create,
        CloudError::Busy("ResourceInUseException: The specified resource is in use".into()),
    );
    let p = plan_of(&config(), &Value::Null);
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert_eq!(groups::names(&r.new_state), vec!["train-od", "train-spot"]);
    assert_eq!(api.groups().len(), 2, "no group made twice");
    let warning = r
        .diagnostics
        .0
        .iter()
        .find(|d| d.summary.contains("for its turn"))
        .expect("a warning says the pool waited");
    assert!(!warning.is_error());
    assert!(
        warning.summary.starts_with("gpu_node_pool `train` waited ")
            && warning.summary.ends_with(" s for its turn"),
        "{}",
        warning.summary
    );
    assert!(
        warning.detail.contains("refused the change 1 time")
            && warning.detail.contains("ResourceInUseException")
            && warning
                .detail
                .contains("EKS refuses a change to a node group"),
        "{}",
        warning.detail
    );
    // Without a refusal or a queue there is nothing to say.
    let again = plan_of(&config(), &r.new_state);
    let r2 = apply_with(
        &api,
        &r.new_state,
        &again.planned_state,
        &settings(),
        catalog(),
    )
    .await;
    assert!(
        r2.diagnostics
            .0
            .iter()
            .all(|d| !d.summary.contains("for its turn")),
        "{:?}",
        r2.diagnostics
    );
}

#[tokio::test]
async fn a_cloud_without_node_groups_is_refused_never_sent_to_another() {
    let v = with(config(), "cloud", Value::string("cudo"));
    let Err(d) = super::inputs::connect(&settings(), &v).await else {
        panic!("cudo has no node groups here");
    };
    let e = &d.0[0];
    assert!(e.is_error());
    assert!(
        e.detail
            .contains("aws (EKS), azure (AKS) or gcp (GKE); cudo has none"),
        "{}",
        e.detail
    );
}

#[test]
fn import_ids_no_pool_could_have_are_refused_before_any_read() {
    let keys: Vec<String> = match schema().value_type() {
        Type::Object(o) => o.attributes.keys().cloned().collect(),
        _ => unreachable!(),
    };
    let region = import_state("aws/nowhere/train-east/train", &keys, catalog()).unwrap_err();
    assert!(
        region.contains("\"nowhere\"") && region.contains("\"us-east-1\""),
        "{region}"
    );
    let name = import_state("aws/us-east-1/train-east/my pool!", &keys, catalog()).unwrap_err();
    assert!(
        name.contains("`name`") && name.contains("letters, digits"),
        "{name}"
    );
    let cluster = import_state("aws/us-east-1/bad.cluster/train", &keys, catalog()).unwrap_err();
    assert!(cluster.contains("`cluster`"), "{cluster}");
    let long = format!("aws/us-east-1/train-east/{}", "a".repeat(59));
    assert!(
        import_state(&long, &keys, catalog())
            .unwrap_err()
            .contains("1–53")
    );
    assert!(import_state("aws/us-gov-west-1/train_east/train-2", &keys, catalog()).is_ok());
    // Shaped like a region but a typo: refused with the catalog's AWS regions, instead of
    // a minute of retried DNS failures against eks.us-esat-1.amazonaws.com.
    let typo = import_state("aws/us-esat-1/train-east/train", &keys, catalog()).unwrap_err();
    assert!(
        typo.contains("\"us-esat-1\"")
            && typo.contains("no AWS GPU offer")
            && typo.contains("us-east-1, "),
        "{typo}"
    );
}

#[tokio::test]
async fn import_then_plan_is_empty_and_destroy_removes_every_group() {
    let api = fake();
    let state = plan_apply(&api, &config(), &Value::Null).await;
    let keys: Vec<String> = match schema().value_type() {
        Type::Object(o) => o.attributes.keys().cloned().collect(),
        _ => unreachable!(),
    };
    let imported = import_state("aws/us-east-1/train-east/train", &keys, catalog()).unwrap();
    let read = read_with(&api, &imported, &settings(), catalog()).await;
    assert!(!read.diagnostics.has_errors(), "{:?}", read.diagnostics);
    let s = read.new_state;
    assert_eq!(s.get_attr("gpu"), Some(&Value::string("H100")));
    assert_eq!(num(&s, "gpu_count"), 8.0);
    assert_eq!(num(&s, "min_nodes"), 1.0);
    assert_eq!(num(&s, "max_nodes"), 4.0);
    assert_eq!(s.get_attr("labels"), config().get_attr("labels"));
    assert_eq!(s.get_attr("tags"), config().get_attr("tags"));
    assert_eq!(num(&s, "monthly_usd"), num(&state, "monthly_usd"));
    let p = plan_of(&config(), &s);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert_eq!(p.planned_state, s, "plan after import is empty");

    let short = import_state("aws/us-east-1/train-east", &keys, catalog()).unwrap_err();
    assert!(
        short.contains("must look like \"aws/<region>/<cluster>/<name>\""),
        "{short}"
    );
    // A GKE id needs its project: four parts are one short.
    let gcp = import_state("gcp/us-central1/c/p", &keys, catalog()).unwrap_err();
    assert!(
        gcp.contains("\"gcp/<project>/<location>/<cluster>/<name>\""),
        "{gcp}"
    );

    let r = apply_with(&api, &s, &Value::Null, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    assert!(r.new_state.is_null());
    for g in ["train-od", "train-spot"] {
        assert!(api.get_group(&east(), g).await.unwrap().is_none());
    }
    let gone = read_with(&api, &s, &settings(), catalog()).await;
    assert!(
        gone.new_state.is_null(),
        "a pool with no groups is gone from state"
    );
}

#[tokio::test]
async fn a_strangers_group_of_the_same_name_is_never_adopted_or_deleted() {
    let api = fake();
    let stranger = gpu_core::seam::GroupSpec {
        name: "train-spot".into(),
        capacity: CapacityType::Spot,
        machine_types: vec!["t3.large".into()],
        scaling: gpu_core::model::Scaling {
            min: 1,
            max: 1,
            desired: Some(1),
        },
        labels: Default::default(),
        taints: Vec::new(),
        tags: [("owner".to_string(), "someone-else".to_string())].into(),
        class: gpu_core::seam::NodeClass::Aws(gpu_core::seam::AwsClass {
            node_role: "arn:aws:iam::123456789012:role/other".into(),
            subnets: Some(vec!["subnet-0000000a".into()]),
            ami_type: "AL2023_x86_64_STANDARD".into(),
            capacity_reservation: None,
        }),
    };
    api.create_group(&east(), &stranger, "").await.unwrap();
    let p = plan_of(&config(), &Value::Null);
    let r = apply_with(&api, &Value::Null, &p.planned_state, &settings(), catalog()).await;
    let errs = errors(&r.diagnostics);
    assert!(
        errs.iter()
            .any(|(p, d)| p == "name" && d.contains("train-spot")),
        "{errs:?}"
    );
    assert!(r.new_state.is_null(), "nothing recorded: {:?}", r.new_state);
    assert!(
        api.calls()
            .iter()
            .all(|(op, _, n)| *op != Op::Create || n != "train-od"),
        "nothing created"
    );

    // A pool with only its on-demand group never reads, records or deletes the stranger.
    api.delete_group(&east(), "train-spot").await.unwrap();
    let od_only = with(
        with(config(), "max_nodes", Value::number(1)),
        "min_nodes",
        Value::number(1),
    );
    let state = plan_apply(&api, &od_only, &Value::Null).await;
    assert_eq!(groups::names(&state), vec!["train-od"]);
    api.create_group(&east(), &stranger, "").await.unwrap();
    let read = read_with(&api, &state, &settings(), catalog())
        .await
        .new_state;
    assert_eq!(groups::names(&read), vec!["train-od"]);
    let r = apply_with(&api, &read, &Value::Null, &settings(), catalog()).await;
    assert!(!r.diagnostics.has_errors(), "{:?}", r.diagnostics);
    let left: Vec<String> = api.groups().into_iter().map(|g| g.spec.name).collect();
    assert_eq!(left, vec!["train-spot"], "the stranger's group stays");
}

/// Plans `cfg` over `state` and asserts Terraform would show nothing: the planned state is
/// the prior, nothing to replace, no cost warning.
fn assert_no_change(cfg: &Value, state: &Value, what: &str) {
    let p = plan_of(cfg, state);
    assert!(!p.diagnostics.has_errors(), "{what}: {:?}", p.diagnostics);
    assert!(
        p.requires_replace.is_empty(),
        "{what}: {:?}",
        p.requires_replace
    );
    assert_eq!(&p.planned_state, state, "{what}: the plan must be empty");
    assert!(
        p.diagnostics.is_empty(),
        "{what}: no cost warning without a change"
    );
}

#[tokio::test]
async fn re_spelling_cloud_gpu_or_region_plans_no_change() {
    let api = fake();
    let state = plan_apply(&api, &config(), &Value::Null).await;
    let state = read_with(&api, &state, &settings(), catalog())
        .await
        .new_state;
    for (attr, spelled) in [
        ("gpu", "h100"),
        ("gpu", "NVIDIA H100"),
        ("cloud", "AWS"),
        ("region", "US-EAST-1"),
    ] {
        assert_no_change(
            &with(config(), attr, Value::string(spelled)),
            &state,
            &format!("{attr} = {spelled:?}"),
        );
    }
    // All at once, too.
    let mut all = config();
    for (attr, spelled) in [("gpu", "h100"), ("cloud", "Aws"), ("region", "Us-East-1")] {
        all = with(all, attr, Value::string(spelled));
    }
    assert_no_change(&all, &state, "every re-spelling together");
    // A real change of the same attribute is a change: the groups roll.
    let p = plan_of(&with(config(), "gpu", Value::string("H200")), &state);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert_ne!(&p.planned_state, &state);
    let names = groups::names(&p.planned_state);
    assert!(
        names
            .iter()
            .all(|n| n.contains("-od-") || n.contains("-spot-")),
        "{names:?}"
    );
}

#[tokio::test]
async fn reordering_or_re_casing_pinned_instance_types_plans_no_change() {
    let api = fake();
    let l4 = |types: &[&str]| {
        let c = with(config(), "gpu", Value::string("L4"));
        let c = with(c, "gpu_count", Value::number(1));
        with(c, "instance_types", list(types))
    };
    let state = plan_apply(&api, &l4(&["g6.xlarge", "g6.2xlarge"]), &Value::Null).await;
    let state = read_with(&api, &state, &settings(), catalog())
        .await
        .new_state;
    assert_no_change(&l4(&["g6.xlarge", "g6.2xlarge"]), &state, "same list");
    assert_no_change(&l4(&["g6.2xlarge", "g6.xlarge"]), &state, "reversed");
    assert_no_change(
        &l4(&["G6.2XLARGE", "g6.xlarge"]),
        &state,
        "reversed, upper case",
    );
    let p = plan_of(&l4(&["g6.xlarge", "g6.4xlarge"]), &state);
    assert!(p.requires_replace.is_empty(), "{:?}", p.requires_replace);
    assert_ne!(&p.planned_state, &state, "another set is a real change");
    let names = groups::names(&p.planned_state);
    assert!(
        names
            .iter()
            .all(|n| n.contains("-od-") || n.contains("-spot-")),
        "another set rolls the groups: {names:?}"
    );
}

#[tokio::test]
async fn a_pool_created_with_upper_case_spellings_applies_and_reads_live() {
    let api = fake();
    let cfg = with(
        with(config(), "cloud", Value::string("AWS")),
        "region",
        Value::string("US-EAST-1"),
    );
    let p = plan_of(&cfg, &Value::Null);
    assert!(!p.diagnostics.has_errors(), "{:?}", p.diagnostics);
    assert_eq!(
        p.planned_state.get_attr("cloud"),
        Some(&Value::string("AWS")),
        "the plan keeps what the user wrote (Terraform requires it)"
    );
    let state = plan_apply(&api, &cfg, &Value::Null).await;
    assert!(
        api.get_group(&east(), "train-spot")
            .await
            .unwrap()
            .is_some()
    );
    // Someone deletes the spot group: the read must see it.
    api.delete_group(&east(), "train-spot").await.unwrap();
    let read = read_with(&api, &state, &settings(), catalog())
        .await
        .new_state;
    assert_ne!(read, state, "drift shows");
    assert!(
        super::refresh::reads_live(&state),
        "cloud = \"AWS\" is read from EKS"
    );
}
