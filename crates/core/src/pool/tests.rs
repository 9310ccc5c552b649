//! Tests of validation, instance type choice, the EKS mapping and the diff.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::catalog::Catalog;
use crate::freshness::Freshness;
use crate::offer::Cloud;

/// A small catalog whose every price the tests can read.
pub(crate) const CSV: &str = "\
cloud,region,zone,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour,source,as_of
aws,us-east-1,use1-az1,p5.48xlarge,H100,8,80,192,2048,55.04,30.0,src-a,2026-07-20
aws,us-east-1,use1-az2,p5.48xlarge,H100,8,80,192,2048,55.04,25.0,src-b,2026-07-21
aws,us-east-1,,p5.4xlarge,H100,1,80,16,256,6.88,,src-c,2026-07-20
aws,us-west-2,,p5.48xlarge,H100,8,80,192,2048,60.0,20.0,src-d,
aws,us-east-1,,p4d.24xlarge,A100-40GB,8,40,96,1152,32.77,12.0,src-e,
aws,us-east-1,use1-az1,g6.12xlarge,L4,4,22.35,48,192,4.6,1.9,src-f,
aws,us-east-1,use1-az2,g6.12xlarge,L4,4,22.35,48,192,4.6,1.7,src-g,
aws,us-east-1,use1-az1,g6.24xlarge,L4,4,22.35,96,384,6.7,1.5,src-h,
aws,us-east-1,use1-az1,g6.32xlarge,L4,4,22.35,128,512,8.0,,src-i,
aws,us-east-1,use1-az1,g6.40xlarge,L4,4,22.35,160,640,3.9,2.5,src-j,
aws,us-east-1,,g5.xlarge,A10G,1,22.35,4,16,1.006,,src-k,2026-07-20
azure,eastus,,Standard_NC40ads_H100_v5,H100,1,94,40,320,6.98,3.5,src-l,
";

/// The test catalog.
pub(crate) fn catalog() -> Catalog {
    Catalog::from_csv(CSV.as_bytes()).unwrap()
}

/// A valid config: 8 × H100 on aws us-east-1, 0–4 nodes, spot above 1 on-demand.
pub(crate) fn config() -> NodePoolConfig {
    NodePoolConfig {
        cloud: "aws".into(),
        region: "us-east-1".into(),
        cluster: "train-east".into(),
        name: "train".into(),
        gpu: "H100".into(),
        gpu_count: 8,
        min_nodes: 1,
        max_nodes: 4,
        spot: true,
        on_demand_min: 1,
        ..NodePoolConfig::default()
    }
}

/// The problems of `c`, or a panic when it is valid.
fn errors(c: &NodePoolConfig) -> ValidationErrors {
    c.validate(&catalog())
        .expect_err("config should be invalid")
}

/// Asserts `c` has a problem at `attribute` whose message contains every one of `words`.
fn assert_problem(c: &NodePoolConfig, attribute: &str, words: &[&str]) {
    let e = errors(c);
    let msgs: Vec<&FieldError> = e.for_attribute(attribute).collect();
    assert!(!msgs.is_empty(), "no problem at `{attribute}`: {e}");
    for w in words {
        assert!(
            msgs.iter().any(|m| m.problem.contains(w)),
            "`{attribute}` lacks {w:?}: {e}"
        );
    }
    assert!(e.to_string().contains(&format!("`{attribute}`")), "{e}");
}

#[test]
fn valid_config_becomes_spec() {
    let s = config().validate(&catalog()).unwrap();
    assert_eq!(s.gpu.name, "H100");
    assert_eq!(
        (s.min_nodes, s.max_nodes, s.capacity.on_demand_min),
        (1, 4, 1)
    );
    assert_eq!(s.reclaim, Reclaim::Delete);
    assert_eq!(s.driver, DriverPolicy::Al2023Nvidia);
}

#[test]
fn valid_against_embedded_snapshot() {
    let mut c = config();
    c.instance_types = vec!["p5.48xlarge".into()];
    c.validate(Catalog::embedded()).unwrap();
}

#[test]
fn every_problem_at_once() {
    let mut c = config();
    c.gpu = "H1000".into();
    c.min_nodes = 5;
    c.name = "-bad".into();
    let e = errors(&c);
    for a in ["gpu", "min_nodes", "name"] {
        assert!(e.for_attribute(a).next().is_some(), "{a}: {e}");
    }
}

#[test]
fn unknown_gpu() {
    let mut c = config();
    c.gpu = "H1000".into();
    assert_problem(&c, "gpu", &["unknown GPU model", "H100"]);
}

#[test]
fn gpu_not_on_cloud() {
    let mut c = config();
    c.gpu = "A10G".into();
    c.cloud = "azure".into();
    c.cluster = "x".into();
    c.gpu_count = 1;
    assert_problem(&c, "gpu", &["no A10G on azure", "clouds with A10G: aws"]);
}

#[test]
fn gpu_count_not_offered() {
    let mut c = config();
    c.gpu_count = 4;
    assert_problem(&c, "gpu_count", &["1, 8", "not 4"]);
    c.gpu_count = 0;
    assert_problem(&c, "gpu_count", &["from 1"]);
}

#[test]
fn region_without_gpu() {
    let mut c = config();
    c.region = "eu-west-9".into();
    assert_problem(&c, "region", &["us-east-1, us-west-2"]);
}

#[test]
fn sizes() {
    let mut c = config();
    c.min_nodes = 5;
    assert_problem(&c, "min_nodes", &["max_nodes = 4", "at most 4"]);
    let mut c = config();
    c.on_demand_min = 5;
    assert_problem(&c, "capacity.on_demand_min", &["at most 4"]);
    c.spot = false; // ignored without spot, but still a contradiction: refused
    assert_problem(&c, "capacity.on_demand_min", &["at most 4"]);
    let mut c = config();
    c.desired_nodes = Some(9);
    assert_problem(&c, "desired_nodes", &["[1, 4]"]);
    let mut c = config();
    c.min_nodes = 0;
    c.on_demand_min = 0;
    c.max_nodes = 0;
    assert_problem(&c, "max_nodes", &["at least 1"]);
    let mut c = config();
    c.min_nodes = -1;
    assert_problem(&c, "min_nodes", &["from 0"]);
}

#[test]
fn counts_that_are_not_whole_or_too_large_are_not_misreported() {
    let mut c = config();
    c.gpu_count = validate::NOT_A_WHOLE_NUMBER;
    assert_problem(&c, "gpu_count", &["is not a whole number", "from 1 to"]);
    assert!(!errors(&c).to_string().contains(&i64::MIN.to_string()));
    let mut c = config();
    c.max_nodes = i64::MAX;
    assert_problem(&c, "max_nodes", &["is more than 4294967295"]);
    c.max_nodes = i64::MIN + 1;
    assert_problem(&c, "max_nodes", &["is less than -4294967295"]);
}

#[test]
fn instance_types() {
    let mut c = config();
    c.instance_types = vec!["p4d.24xlarge".into()];
    assert_problem(
        &c,
        "instance_types[0]",
        &["8 × A100-40GB", "not 8 × H100", "p5.48xlarge"],
    );
    c.instance_types = vec!["p5.48xlarge".into(), "x9.huge".into()];
    assert_problem(
        &c,
        "instance_types[1]",
        &["not a aws GPU instance type", "p5.48xlarge"],
    );
    c.instance_types = vec!["p5.48xlarge".into(), "p5.48xlarge".into()];
    assert_problem(&c, "instance_types[1]", &["twice"]);
    let mut c = config();
    c.gpu = "A100-40GB".into();
    c.region = "us-west-2".into();
    c.instance_types = vec!["p4d.24xlarge".into()];
    assert_problem(&c, "region", &["us-east-1"]);
}

#[test]
fn instance_type_in_other_region() {
    let mut c = config();
    c.gpu = "L4".into();
    c.gpu_count = 4;
    c.instance_types = vec!["p5.48xlarge".into()];
    c.region = "us-east-1".into();
    assert_problem(&c, "instance_types[0]", &["8 × H100", "g6.12xlarge"]);
}

#[test]
fn labels() {
    let mut c = config();
    c.labels = BTreeMap::from([("gpu.tf/model".into(), "x".into())]);
    assert_problem(&c, "labels[\"gpu.tf/model\"]", &["reserved"]);
    c.labels = BTreeMap::from([("Bad Key".into(), "ok".into())]);
    assert_problem(&c, "labels[\"Bad Key\"]", &["label key"]);
    c.labels = BTreeMap::from([("team".into(), "not ok!".into())]);
    assert_problem(&c, "labels[\"team\"]", &["label value"]);
}

#[test]
fn taints() {
    let mut c = config();
    c.taints = vec![TaintConfig {
        key: "dedicated".into(),
        value: "ml".into(),
        effect: "NoWay".into(),
    }];
    assert_problem(
        &c,
        "taint[0].effect",
        &["NoSchedule, PreferNoSchedule, NoExecute"],
    );
    c.taints[0].effect = "NO_EXECUTE".into();
    assert_eq!(
        c.validate(&catalog()).unwrap().taints[0].effect,
        TaintEffect::NoExecute
    );
    c.taints[0].key = "-x".into();
    assert_problem(&c, "taint[0].key", &["taint key"]);
}

#[test]
fn names() {
    let mut c = config();
    c.name = "a".repeat(59);
    assert_problem(&c, "name", &["1–53", "-spot"]);
    c.name = "_x".into();
    assert_problem(&c, "name", &["starting with a letter or digit"]);
    let mut c = config();
    c.cluster = "bad.cluster".into();
    assert_problem(&c, "cluster", &["EKS cluster name"]);
    // The common slip: the cluster's ARN (`aws_eks_cluster.x.arn`) for its name.
    c.cluster = "arn:aws:eks:us-east-1:123456789012:cluster/train".into();
    assert_problem(&c, "cluster", &["EKS cluster name", "not its ARN"]);
    c.name = "ok_name-1".into();
    c.cluster = "ok".into();
    c.validate(&catalog()).unwrap();
}

#[test]
fn name_errors_alone_follow_the_same_rules() {
    use crate::offer::Cloud;
    assert!(validate::name_errors(Cloud::Aws, "train-east", "train").is_empty());
    let e = validate::name_errors(Cloud::Aws, "bad.cluster", "my pool!");
    let attrs: Vec<&str> = e.iter().map(|f| f.attribute.as_str()).collect();
    assert_eq!(attrs, ["cluster", "name"]);
    assert!(e[1].problem.contains("letters, digits"), "{e:?}");
    assert_eq!(
        validate::name_errors(Cloud::Azure, "", "p")[0].attribute,
        "cluster"
    );
    // AKS and GKE clusters are named by their cloud's own id.
    let e = validate::name_errors(Cloud::Azure, "train", "p");
    assert!(e[0].problem.contains("/subscriptions/"), "{e:?}");
    let aks = "/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/train";
    assert!(validate::name_errors(Cloud::Azure, aks, "p").is_empty());
    let e = validate::name_errors(Cloud::Gcp, "train", "p");
    assert!(e[0].problem.contains("projects/"), "{e:?}");
    assert!(
        validate::name_errors(
            Cloud::Gcp,
            "projects/p/locations/us-central1/clusters/c",
            "p"
        )
        .is_empty()
    );
}

#[test]
fn reclaim_stop() {
    let mut c = config();
    c.reclaim = Some("stop".into());
    assert_problem(
        &c,
        "reclaim",
        &[
            "aws cannot keep a stopped spot VM",
            "azure",
            "`gpu_instance`",
        ],
    );
    c.reclaim = Some("pause".into());
    assert_problem(&c, "reclaim", &["\"delete\", \"stop\""]);
    c.spot = false;
    c.reclaim = Some("stop".into());
    c.validate(&catalog()).unwrap();
}

#[test]
fn cloud_and_driver() {
    let mut c = config();
    c.cloud = "nebius".into();
    assert_problem(&c, "cloud", &["aws, azure, gcp"]);
    let mut c = config();
    c.driver = Some("ubuntu".into());
    assert_problem(&c, "driver", &["al2023_nvidia", "bottlerocket_nvidia"]);
    c.driver = Some("BOTTLEROCKET_x86_64_NVIDIA".into());
    assert_eq!(
        c.validate(&catalog()).unwrap().driver,
        DriverPolicy::BottlerocketNvidia
    );
}

#[test]
fn tags() {
    let mut c = config();
    c.tags = BTreeMap::from([("aws:x".into(), "1".into())]);
    assert_problem(&c, "tags[\"aws:x\"]", &["reserved by AWS"]);
    c.tags = BTreeMap::from([("gpu.tf/pool".into(), "1".into())]);
    assert_problem(&c, "tags[\"gpu.tf/pool\"]", &["reserved"]);
}

/// The validated spec of `c`.
pub(crate) fn spec_of(c: &NodePoolConfig) -> NodePoolSpec {
    c.validate(&catalog()).unwrap()
}

/// An L4 × 4 pool (four candidate types).
pub(crate) fn l4_config() -> NodePoolConfig {
    NodePoolConfig {
        gpu: "L4".into(),
        gpu_count: 4,
        ..config()
    }
}

#[test]
fn choice_by_spot_price() {
    let s = spec_of(&l4_config());
    let t = super::instance_types(
        &s,
        &catalog(),
        DEFAULT_INSTANCE_TYPE_COUNT,
        &Freshness::any(),
    );
    let names: Vec<&str> = t.iter().map(|t| t.instance_type.as_str()).collect();
    assert_eq!(names, ["g6.24xlarge", "g6.12xlarge", "g6.40xlarge"]);
    let spot = t[1].spot.as_ref().unwrap();
    assert_eq!(
        (
            spot.usd_per_hour,
            spot.zone.as_deref(),
            spot.origin.source.as_str()
        ),
        (1.7, Some("use1-az2"), "src-g")
    );
    let all = super::instance_types(&s, &catalog(), 10, &Freshness::any());
    assert_eq!(
        all.last().unwrap().instance_type,
        "g6.32xlarge",
        "no spot price ranks last"
    );
}

#[test]
fn max_price_age_leaves_old_and_undated_prices_out_of_the_choice() {
    use crate::freshness::MaxPriceAge;
    // H100x8 in us-east-1 (this test catalog dates both prices of a row alike): az1's
    // prices dated 2026-07-20 (spot 30.0), az2's 2026-07-21 (spot 25.0).
    let s = spec_of(&config());
    let at = |days: u32, today: &str| Freshness {
        max_age: Some(MaxPriceAge { days }),
        today: crate::time::days_of_date(today).unwrap(),
        include_stale: false,
    };
    let t = super::instance_types(&s, &catalog(), 3, &at(10, "2026-07-30"));
    assert_eq!(t[0].spot.as_ref().unwrap().usd_per_hour, 25.0);
    // One day later az1's prices are too old; az2's still count.
    let t = super::instance_types(&s, &catalog(), 3, &at(10, "2026-07-31"));
    for row in [&t[0].on_demand, &t[0].spot] {
        let row = row.as_ref().unwrap();
        assert_eq!(row.origin.as_of.as_deref(), Some("2026-07-21"));
        assert_eq!(row.zone.as_deref(), Some("use1-az2"));
    }
    // Two days later nothing in us-east-1 counts.
    let t = super::instance_types(&s, &catalog(), 3, &at(10, "2026-08-01"));
    assert!(
        t.iter().all(|c| c.on_demand.is_none() && c.spot.is_none()),
        "{t:?}"
    );
    // L4 rows are undated: no limit lets them price anything.
    let t = super::instance_types(
        &spec_of(&l4_config()),
        &catalog(),
        3,
        &at(100_000, "2026-07-30"),
    );
    assert!(
        t.iter().all(|c| c.on_demand.is_none() && c.spot.is_none()),
        "{t:?}"
    );
}

#[test]
fn choice_by_on_demand_price() {
    let mut c = l4_config();
    c.spot = false;
    let t = super::instance_types(&spec_of(&c), &catalog(), 2, &Freshness::any());
    let names: Vec<&str> = t.iter().map(|t| t.instance_type.as_str()).collect();
    assert_eq!(names, ["g6.40xlarge", "g6.12xlarge"]);
}

#[test]
fn pinned_types_keep_order() {
    let mut c = l4_config();
    c.instance_types = vec!["g6.32xlarge".into(), "g6.12xlarge".into()];
    let t = super::instance_types(&spec_of(&c), &catalog(), 1, &Freshness::any());
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].instance_type, "g6.32xlarge");
    assert!(t[0].spot.is_none());
    assert_eq!(t[0].on_demand.as_ref().unwrap().usd_per_hour, 8.0);
}

/// An EKS class (its AMI type is the layout's to set, from the pool's driver).
fn aws_class() -> NodeClass {
    NodeClass::Aws(crate::model::AwsClass {
        node_role: "arn:aws:iam::1:role/n".into(),
        subnets: None,
        ami_type: String::new(),
        capacity_reservation: None,
    })
}

/// A spec with these counts (L4 × 4).
fn sized(min: u32, max: u32, odm: u32, spot: bool) -> NodePoolSpec {
    let mut s = spec_of(&l4_config());
    s.min_nodes = min;
    s.max_nodes = max;
    s.capacity = CapacitySpec {
        spot,
        on_demand_min: odm,
    };
    s
}

/// (name, capacity, min, max) of each group.
fn shapes(s: &NodePoolSpec) -> Vec<(String, CapacityType, u32, u32)> {
    let t = super::instance_types(s, &catalog(), 3, &Freshness::any());
    layout::groups(s, &t, &aws_class(), &BTreeMap::new())
        .into_iter()
        .map(|g| (g.name, g.capacity, g.scaling.min, g.scaling.max))
        .collect()
}

#[test]
fn eks_group_sizes() {
    use CapacityType::{OnDemand, Spot};
    let g = |n: &str, c, a, b| (n.to_string(), c, a, b);
    assert_eq!(
        shapes(&sized(0, 4, 1, true)),
        [g("train-od", OnDemand, 1, 1), g("train-spot", Spot, 0, 3)]
    );
    assert_eq!(
        shapes(&sized(2, 4, 1, true)),
        [g("train-od", OnDemand, 1, 1), g("train-spot", Spot, 1, 3)]
    );
    assert_eq!(shapes(&sized(0, 4, 0, true)), [g("train-spot", Spot, 0, 4)]);
    assert_eq!(
        shapes(&sized(2, 2, 2, true)),
        [g("train-od", OnDemand, 2, 2)]
    );
    assert_eq!(
        shapes(&sized(1, 5, 3, false)),
        [g("train-od", OnDemand, 1, 5)]
    );
}

#[test]
fn price_labels_are_legal_label_values() {
    use crate::pool::layout::label_slug;
    assert_eq!(
        label_slug("aws/karpenter-provider-aws@1d927085 zz_generated.pricing_aws.go"),
        "aws_karpenter-provider-aws_1d927085_zz_generated.pricing_aws.go"
    );
    assert_eq!(
        label_slug("skypilot-catalog v6 @ 001367d2 (license unverified, undated)"),
        "skypilot-catalog_v6_001367d2_license_unverified_undated"
    );
    assert_eq!(label_slug("  (!) "), "unknown");
    let long = label_slug(&"ab ".repeat(40));
    assert!(long.len() <= 63, "{long}");
    // A 200-character source: shortened with a stable hash of the whole text, so two
    // sources that share their first 60 characters still read apart.
    let a = format!("{}-catalog-a", "x".repeat(190));
    let b = format!("{}-catalog-b", "x".repeat(190));
    let (la, lb) = (label_slug(&a), label_slug(&b));
    assert_eq!(la.len(), 63, "{la}");
    assert_ne!(la, lb);
    assert_eq!(la, label_slug(&a), "stable");
    assert!(
        la.starts_with(&"x".repeat(54)) && la.as_bytes()[54] == b'-',
        "{la}"
    );
    // A text of exactly 63 characters is kept as it is (today's sources do not change).
    let exact = "a".repeat(63);
    assert_eq!(label_slug(&exact), exact);
    for text in [
        "a",
        "-x-",
        "aws-price-list (live, fetched 2026-12-03)",
        &"é".repeat(70),
        &"a source name from new data, ".repeat(7),
    ] {
        let v = label_slug(text);
        assert_eq!(kube::label_value_problem(&v), None, "{text:?} -> {v}");
    }
}

#[test]
fn eks_group_contents() {
    let mut s = sized(0, 4, 1, true);
    s.labels = BTreeMap::from([("team".into(), "ml".into())]);
    s.taints = vec![Taint {
        key: "dedicated".into(),
        value: "ml".into(),
        effect: TaintEffect::NoExecute,
    }];
    s.tags = BTreeMap::from([("project".into(), "override".into())]);
    s.desired_nodes = Some(3);
    let defaults = BTreeMap::from([
        ("team".into(), "ml".into()),
        ("project".into(), "llm".into()),
    ]);
    let t = super::instance_types(&s, &catalog(), 3, &Freshness::any());
    let groups = layout::groups(&s, &t, &aws_class(), &defaults);
    let (od, spot) = (&groups[0], &groups[1]);
    assert_eq!(
        od.machine_types,
        ["g6.40xlarge", "g6.12xlarge", "g6.24xlarge"],
        "on-demand priority"
    );
    assert_eq!(
        spot.machine_types,
        ["g6.24xlarge", "g6.12xlarge", "g6.40xlarge"]
    );
    assert_eq!(
        spot.class.image(),
        "AL2023_x86_64_NVIDIA",
        "from the pool's driver"
    );
    assert_eq!(spot.scaling.desired, Some(2));
    assert_eq!(od.scaling.desired, Some(1));
    // Each node says what it costs and where that price came from: the rows the cost
    // preview uses (on-demand g6.40xlarge 3.9 from src-j; spot g6.24xlarge 1.5 from src-h).
    let preview = crate::cost::preview(&s, &t, None).unwrap();
    assert_eq!(preview.on_demand.as_ref().unwrap().row.usd_per_hour, 3.9);
    assert_eq!(preview.spot.as_ref().unwrap().row.usd_per_hour, 1.5);
    for (g, price, basis, source) in [
        (od, "3.9", "on-demand", "src-j"),
        (spot, "1.5", "spot", "src-h"),
    ] {
        assert_eq!(g.labels["gpu.tf/price-usd-per-hour"], price);
        assert_eq!(g.labels["gpu.tf/priced-as"], basis);
        assert_eq!(g.labels["gpu.tf/price-source"], source);
        assert_eq!(g.labels["gpu.tf/price-as-of"], "undated");
        for (k, v) in &g.labels {
            assert_eq!(kube::label_value_problem(v), None, "{k}={v}");
        }
    }
    for (g, cap) in [(od, "on-demand"), (spot, "spot")] {
        assert_eq!(g.labels["gpu.tf/cloud"], "aws");
        assert_eq!(g.labels["gpu.tf/model"], "L4");
        assert_eq!(g.labels["gpu.tf/capacity-type"], cap);
        assert_eq!(g.labels["gpu.tf/pool"], "train");
        assert_eq!(g.labels["team"], "ml");
        let taints: Vec<String> = g.taints.iter().map(ToString::to_string).collect();
        assert_eq!(
            taints,
            [
                "dedicated=ml:NoExecute",
                "nvidia.com/gpu=present:NoSchedule"
            ]
        );
        assert_eq!(g.tags["project"], "override");
        assert_eq!(g.tags["team"], "ml");
        assert_eq!(g.tags["gpu.tf/pool"], "train");
    }
}

proptest! {
    #[test]
    fn group_sizes_add_up(max in 1u32..50, a in 0u32..50, b in 0u32..50, spot: bool) {
        let odm = a % (max + 1);
        let min = odm + b % (max - odm + 1);
        let s = sized(min, max, odm, spot);
        let split = layout::split(&s);
        let sum = |f: fn(&Scaling) -> u32| split.on_demand.as_ref().map_or(0, f) + split.spot.as_ref().map_or(0, f);
        prop_assert_eq!(sum(|s| s.min), min);
        prop_assert_eq!(sum(|s| s.max), max);
        for g in split.on_demand.iter().chain(split.spot.iter()) {
            prop_assert!(g.max >= 1 && g.min <= g.max);
        }
        if spot {
            prop_assert_eq!(split.on_demand.map(|g| (g.min, g.max)), (odm > 0).then_some((odm, odm)));
        }
        let n = s.node_counts();
        prop_assert_eq!(n.on_demand_min + n.spot_min, min);
        prop_assert_eq!(n.on_demand_max + n.spot_max, max);
    }
}

#[test]
fn aks_and_gke_layouts_take_one_machine_type_and_legal_names() {
    use crate::model::{AzureClass, GcpClass};
    let aws = sized(0, 4, 1, true);
    let t = super::instance_types(&aws, &catalog(), 3, &Freshness::any());
    for (cloud, class) in [
        (
            Cloud::Azure,
            NodeClass::Azure(AzureClass {
                os_sku: "Ubuntu".into(),
                gpu_driver: "Install".into(),
                ..Default::default()
            }),
        ),
        (
            Cloud::Gcp,
            NodeClass::Gcp(GcpClass {
                image_type: "COS_CONTAINERD".into(),
                driver_version: "DEFAULT".into(),
                ..Default::default()
            }),
        ),
    ] {
        let mut s = aws.clone();
        s.cloud = cloud;
        let groups = layout::groups(&s, &t, &class, &BTreeMap::new());
        let rules = crate::registry::node_group_rules(cloud).unwrap();
        // On GKE the layout names the accelerator (GKE needs it for the driver config).
        let want_class = match &class {
            NodeClass::Gcp(c) => NodeClass::Gcp(GcpClass {
                accelerator_type: Some("nvidia-l4".into()),
                accelerator_count: s.gpu_count,
                ..c.clone()
            }),
            other => other.clone(),
        };
        assert_eq!(groups.len(), 2);
        for g in &groups {
            assert!(
                rules.check_group(g).is_ok(),
                "{cloud}: {:?}",
                rules.check_group(g)
            );
            assert_eq!(g.machine_types.len(), 1);
            assert_eq!(g.tags[rules.ownership_tag], "train");
            assert!(rules.owned_by(g, "train"));
            assert!(
                !g.tags.contains_key("gpu.tf/pool"),
                "not a legal tag name there"
            );
            assert_eq!(g.labels["gpu.tf/cloud"], cloud.to_string());
            assert_eq!(g.class, want_class);
        }
        assert_eq!(
            groups[0].machine_types[0], "g6.40xlarge",
            "cheapest on demand"
        );
        assert_eq!(
            groups[1].machine_types[0], t[0].instance_type,
            "cheapest spot"
        );
        let gpu_taint = groups[1].taints.iter().any(|t| t.key == "nvidia.com/gpu");
        assert_eq!(
            gpu_taint,
            cloud == Cloud::Azure,
            "GKE adds the GPU taint itself"
        );
    }
}

#[test]
fn reclaim_stop_deallocates_evicted_vms_of_the_aks_spot_pool_only() {
    use crate::model::AzureClass;
    let mut s = sized(0, 4, 1, true);
    s.cloud = Cloud::Azure;
    s.reclaim = Reclaim::Stop;
    let t = super::instance_types(&s, &catalog(), 3, &Freshness::any());
    let class = NodeClass::Azure(AzureClass {
        os_sku: "Ubuntu".into(),
        gpu_driver: "Install".into(),
        ..Default::default()
    });
    let evicts = |s: &NodePoolSpec| -> Vec<(CapacityType, bool)> {
        layout::groups(s, &t, &class, &BTreeMap::new())
            .iter()
            .map(|g| match &g.class {
                NodeClass::Azure(c) => (g.capacity, c.deallocate_evicted),
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(
        evicts(&s),
        [(CapacityType::OnDemand, false), (CapacityType::Spot, true)]
    );
    s.reclaim = Reclaim::Delete;
    assert_eq!(
        evicts(&s),
        [(CapacityType::OnDemand, false), (CapacityType::Spot, false)]
    );
}

#[test]
fn aks_and_gke_pool_names_must_be_label_values() {
    let mut c = config();
    c.cloud = "gcp".into();
    c.region = "us-central1".into();
    c.cluster = "projects/p/locations/us-central1/clusters/c".into();
    c.gpu = "L4".into();
    c.gpu_count = 1;
    c.instance_types = Vec::new();
    let name_problems = |c: &NodePoolConfig| match c.validate(&catalog()) {
        Ok(_) => 0,
        Err(e) => e.0.iter().filter(|f| f.attribute == "name").count(),
    };
    for good in ["train", "Train_Big-2", &"x".repeat(63)] {
        c.name = good.into();
        assert_eq!(name_problems(&c), 0, "{good}");
    }
    for bad in ["my pool!", "trailing-", &"x".repeat(64)] {
        c.name = bad.into();
        assert_problem(&c, "name", &["1–63 letters", "gpu.tf/pool"]);
    }
}

#[test]
fn one_type_clouds_run_the_cheapest_spot_type_whatever_the_pinned_order() {
    use crate::model::AzureClass;
    let mut s = sized(0, 4, 1, true);
    s.cloud = Cloud::Aws;
    let chosen = super::instance_types(&s, &catalog(), 3, &Freshness::any());
    assert!(chosen.len() >= 2, "{chosen:?}");
    let cheapest_spot = super::choose::by_spot_price(&chosen)[0]
        .instance_type
        .clone();
    // The same rows, as if pinned on a one-type cloud, in both orders.
    let class = NodeClass::Azure(AzureClass {
        os_sku: "Ubuntu".into(),
        gpu_driver: "Install".into(),
        ..Default::default()
    });
    s.cloud = Cloud::Azure;
    for order in [chosen.clone(), chosen.iter().rev().cloned().collect()] {
        let groups = layout::groups(&s, &order, &class, &BTreeMap::new());
        let spot = groups
            .iter()
            .find(|g| g.capacity == CapacityType::Spot)
            .unwrap();
        assert_eq!(spot.machine_types, std::slice::from_ref(&cheapest_spot));
    }
}

#[test]
fn the_summary_counts_only_the_types_a_one_type_cloud_runs() {
    let mut s = sized(0, 4, 1, true);
    let t = super::instance_types(&s, &catalog(), 3, &Freshness::any());
    assert!(t.len() >= 3, "{t:?}");
    let aws = crate::cost::preview(&s, &t, None).unwrap().summary();
    assert!(
        aws.contains(&format!("(+{} other types)", t.len() - 1)),
        "{aws}"
    );
    s.cloud = Cloud::Azure;
    let p = crate::cost::preview(&s, &t, None).unwrap();
    let used: std::collections::BTreeSet<&str> = [&p.on_demand, &p.spot]
        .into_iter()
        .flatten()
        .map(|x| x.instance_type.as_str())
        .collect();
    let azure = p.summary();
    match used.len() {
        1 => assert!(!azure.contains("other type"), "{azure}"),
        _ => assert!(azure.contains("(+1 other type)"), "{azure}"),
    }
}

/// `config()` with a `reservation` block of `kind`.
fn reserved_config(kind: &str, id: &str) -> NodePoolConfig {
    NodePoolConfig {
        reservation: Some(ReservationConfig {
            commitment_id: Some(id.into()),
            kind: kind.into(),
            usd_per_gpu_hour: Some(4.0),
        }),
        ..config()
    }
}

#[test]
fn a_reservation_must_be_a_commitment_the_pools_cloud_consumes() {
    assert_problem(
        &reserved_config("gcp_commitment", "gpu-tf-1"),
        "reservation.kind",
        &[
            "a commitment on gcp",
            "a pool on aws consumes \"aws_capacity_reservation\"",
        ],
    );
    assert_problem(
        &reserved_config("aws_capacity_block", "cr-0123"),
        "instance_types",
        &["one instance type", "aws_capacity_block"],
    );
    // A targeted capacity reservation holds one instance type.
    assert_problem(
        &reserved_config("aws_capacity_reservation", "cr-0123456789abcdef0"),
        "instance_types",
        &["one instance type"],
    );
    let mut pinned = reserved_config("aws_capacity_reservation", "cr-0123456789abcdef0");
    pinned.instance_types = vec!["p5.48xlarge".into()];
    assert!(pinned.validate(&catalog()).is_ok());
    pinned.reservation.as_mut().unwrap().commitment_id = Some("gpu-tf-1".into());
    assert_problem(
        &pinned,
        "reservation.commitment_id",
        &["not the id of a aws_capacity_reservation"],
    );
    assert_problem(
        &reserved_config("capacity_block", "cr-0123"),
        "reservation.kind",
        &["unknown commitment kind", "aws_capacity_block"],
    );
    let mut none_on_demand = reserved_config("aws_capacity_block", "cr-0123");
    none_on_demand.instance_types = vec!["p5.48xlarge".into()];
    none_on_demand.on_demand_min = 0;
    assert_problem(
        &none_on_demand,
        "reservation",
        &["needs an on-demand floor"],
    );
}

#[test]
fn a_gke_reservation_is_the_commitments_attached_one_or_the_reservation_itself() {
    use crate::commitment::CommitmentKind as K;
    let r = |kind, id: Option<&str>| PoolReservation {
        commitment_id: id.map(str::to_string),
        kind,
        usd_per_gpu_hour: Some(1.0),
    };
    assert_eq!(
        r(K::GcpCommitment, Some("gpu-tf-ab")).gke_reservation_name(),
        Some("gpu-tf-ab-r".into())
    );
    assert_eq!(
        r(K::GcpReservation, Some("Floor-1")).gke_reservation_name(),
        Some("floor-1".into())
    );
    assert_eq!(r(K::GcpCommitment, None).gke_reservation_name(), None);
    assert_eq!(
        r(K::AzureReservation, Some("x")).gke_reservation_name(),
        None
    );
}

#[test]
fn a_reservation_needs_an_on_demand_floor_to_run_on() {
    let mut c = reserved_config("azure_reservation", "0a1b2c3d-0000-4000-8000-000000000000");
    c.cloud = "azure".into();
    c.region = "eastus".into();
    c.gpu_count = 1;
    c.on_demand_min = 0;
    assert_problem(
        &c,
        "reservation",
        &["needs an on-demand floor", "on_demand_min"],
    );
    c.on_demand_min = 1;
    assert!(
        errors_or_none(&c)
            .for_attribute("reservation")
            .next()
            .is_none()
    );
    assert!(
        errors_or_none(&c)
            .for_attribute("reservation.kind")
            .next()
            .is_none()
    );
}

/// The problems of `c`, empty when it is valid.
fn errors_or_none(c: &NodePoolConfig) -> ValidationErrors {
    c.validate(&catalog())
        .err()
        .unwrap_or(ValidationErrors(Vec::new()))
}
