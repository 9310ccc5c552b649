use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::seam::{AwsClass, AzureClass, GcpClass, Scaling};
use crate::test_support::block_on as run;

fn eks() -> ClusterRef {
    ClusterRef::Eks {
        region: "us-east-1".into(),
        name: "c1".into(),
    }
}

fn aks() -> ClusterRef {
    ClusterRef::Aks {
        subscription: "00000000-0000-0000-0000-000000000000".into(),
        resource_group: "rg".into(),
        name: "c1".into(),
    }
}

fn gke() -> ClusterRef {
    ClusterRef::Gke {
        project: "p".into(),
        location: "us-central1".into(),
        name: "c1".into(),
    }
}

fn spec(name: &str) -> GroupSpec {
    GroupSpec {
        name: name.into(),
        capacity: CapacityType::Spot,
        machine_types: vec!["g5.xlarge".into()],
        scaling: Scaling {
            min: 0,
            max: 3,
            desired: Some(1),
        },
        labels: BTreeMap::from([("gpu".into(), "a10g".into())]),
        taints: vec![Taint {
            key: "nvidia.com/gpu".into(),
            value: "true".into(),
            effect: TaintEffect::NoSchedule,
        }],
        tags: BTreeMap::from([("team".into(), "ml".into())]),
        class: NodeClass::Aws(AwsClass {
            node_role: "arn:aws:iam::123456789012:role/node".into(),
            subnets: Some(vec!["subnet-1".into()]),
            ami_type: "AL2023_x86_64_NVIDIA".into(),
            capacity_reservation: None,
        }),
    }
}

fn aks_spec(name: &str) -> GroupSpec {
    GroupSpec {
        machine_types: vec!["Standard_NC24ads_A100_v4".into()],
        taints: Vec::new(),
        class: NodeClass::Azure(AzureClass {
            os_sku: "Ubuntu".into(),
            gpu_driver: "Install".into(),
            ..Default::default()
        }),
        ..spec(name)
    }
}

fn gke_spec(name: &str) -> GroupSpec {
    GroupSpec {
        machine_types: vec!["g2-standard-8".into()],
        taints: Vec::new(),
        class: NodeClass::Gcp(GcpClass {
            image_type: "COS_CONTAINERD".into(),
            driver_version: "DEFAULT".into(),
            ..Default::default()
        }),
        ..spec(name)
    }
}

const T: Duration = Duration::from_secs(1);

#[test]
fn create_get_update_delete() {
    let f = FakeNodeGroups::new();
    let c = eks();
    let g = run(f.create_group(&c, &spec("a"), "tok")).unwrap();
    assert_eq!(g.status, NodeGroupStatus::Active);
    assert_eq!(g.spec.labels["gpu"], "a10g");
    assert_eq!(
        g.spec.tags,
        BTreeMap::from([("team".into(), "ml".into())]),
        "the aws: tag EKS adds is stripped on read"
    );
    assert!(f.groups()[0].spec.tags.contains_key("aws:eks:cluster-name"));
    let got = run(f.get_group(&c, "a")).unwrap().unwrap();
    assert_eq!(got, g);

    let mut want = spec("a");
    want.scaling = Scaling {
        min: 1,
        max: 5,
        desired: Some(2),
    };
    want.labels = BTreeMap::from([("tier".into(), "x".into())]);
    want.taints[0].value = "yes".into();
    want.tags = BTreeMap::from([("project".into(), "llm".into())]);
    assert!(run(f.update_group(&c, &g, &want)).unwrap());
    let got = run(f.get_group(&c, "a")).unwrap().unwrap();
    assert_eq!(got.spec.scaling.desired, Some(2));
    assert_eq!(got.spec.labels, want.labels);
    assert_eq!(got.spec.taints, want.taints);
    assert_eq!(
        got.spec.tags, want.tags,
        "tags are part of the whole desired state"
    );
    assert!(
        !run(f.update_group(&c, &got, &want)).unwrap(),
        "nothing left to change: no operation"
    );

    run(f.delete_group(&c, "a")).unwrap();
    assert_eq!(run(f.get_group(&c, "a")).unwrap(), None);
    assert!(matches!(
        run(f.delete_group(&c, "a")),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn create_is_idempotent_with_same_token_only() {
    let f = FakeNodeGroups::new();
    let c = eks();
    let a = run(f.create_group(&c, &spec("a"), "tok-1")).unwrap();
    assert_eq!(run(f.create_group(&c, &spec("a"), "tok-1")).unwrap(), a);
    assert!(matches!(
        run(f.create_group(&c, &spec("a"), "tok-2")),
        Err(CloudError::Conflict(_))
    ));
    assert!(matches!(
        run(f.create_group(&c, &spec("a"), "")),
        Err(CloudError::Conflict(_))
    ));
    assert_eq!(f.groups().len(), 1);
}

#[test]
fn invalid_groups_are_rejected() {
    let f = FakeNodeGroups::new();
    let mut r = spec("a");
    r.scaling.desired = Some(9);
    assert!(matches!(
        run(f.create_group(&eks(), &r, "t")),
        Err(CloudError::Invalid(_))
    ));
    let mut r = spec("a");
    r.machine_types.clear();
    assert!(matches!(
        run(f.create_group(&eks(), &r, "t")),
        Err(CloudError::Invalid(_))
    ));
    assert!(
        matches!(run(f.create_group(&aks(), &spec("a"), "t")), Err(CloudError::Invalid(m)) if m.contains("not a cluster")),
        "an AKS cluster on the EKS fake"
    );
    let f = FakeNodeGroups::new().with_clusters(["other"]);
    assert!(matches!(
        run(f.create_group(&eks(), &spec("a"), "t")),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn an_eks_group_without_subnets_gets_the_clusters() {
    let f = FakeNodeGroups::new();
    f.set_cluster_subnets(&eks(), vec!["subnet-9".into()]);
    let mut s = spec("a");
    s.class = NodeClass::Aws(AwsClass {
        subnets: None,
        ..AwsClass::default()
    });
    let g = run(f.create_group(&eks(), &s, "t")).unwrap();
    let NodeClass::Aws(class) = &g.spec.class else {
        panic!("{g:?}")
    };
    assert_eq!(class.subnets, Some(vec!["subnet-9".to_string()]));
}

#[test]
fn transitions_settle_after_polls_and_block_updates() {
    let f = FakeNodeGroups::new().with_settle_after(2);
    let c = eks();
    let g = run(f.create_group(&c, &spec("a"), "t")).unwrap();
    assert_eq!(g.status, NodeGroupStatus::Creating);
    let mut up = spec("a");
    up.labels.insert("k".into(), "v".into());
    assert!(matches!(
        run(f.update_group(&c, &g, &up)),
        Err(CloudError::Conflict(_))
    ));
    let g = run(f.wait_until(&c, "a", WaitTarget::Active, T))
        .unwrap()
        .unwrap();
    assert_eq!(g.status, NodeGroupStatus::Active);

    run(f.delete_group(&c, "a")).unwrap();
    let g = run(f.get_group(&c, "a")).unwrap().unwrap();
    assert_eq!(g.status, NodeGroupStatus::Deleting);
    assert_eq!(
        run(f.wait_until(&c, "a", WaitTarget::Deleted, T)).unwrap(),
        None
    );
}

#[test]
fn waits_fail_typed_on_failed_state_and_time_out_when_stuck() {
    let f = FakeNodeGroups::new();
    let c = eks();
    run(f.create_group(&c, &spec("a"), "t")).unwrap();
    f.set_status(
        &c,
        "a",
        NodeGroupStatus::CreateFailed,
        vec![HealthIssue {
            code: "InstanceLimitExceeded".into(),
            message: "You've reached your quota".into(),
        }],
    );
    assert!(matches!(
        run(f.wait_until(&c, "a", WaitTarget::Active, T)),
        Err(CloudError::Quota(_))
    ));
    f.set_status(&c, "a", NodeGroupStatus::Updating, vec![]);
    assert!(matches!(
        run(f.wait_until(&c, "a", WaitTarget::Active, T)),
        Err(CloudError::Timeout { .. })
    ));
    assert!(matches!(
        run(f.wait_until(&c, "missing", WaitTarget::Active, T)),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn injected_faults_fire_once_per_op_and_calls_are_recorded() {
    let f = FakeNodeGroups::new();
    f.inject(Op::Create, CloudError::Throttled("slow down".into()));
    let e = run(f.create_group(&eks(), &spec("a"), "t")).unwrap_err();
    assert!(e.is_retryable());
    run(f.create_group(&eks(), &spec("a"), "t")).unwrap();
    assert_eq!(
        f.calls()
            .iter()
            .map(|(op, _, n)| (*op, n.as_str()))
            .collect::<Vec<_>>(),
        vec![(Op::Create, "a"), (Op::Create, "a")]
    );
}

#[test]
fn trait_is_object_safe() {
    let f: Box<dyn NodeGroups> = Box::new(FakeNodeGroups::new());
    assert_eq!(run(f.get_group(&eks(), "x")).unwrap(), None);
    assert_eq!(f.traits().cloud, Cloud::Aws);
}

#[test]
fn a_fault_after_successes_skips_that_many_calls() {
    let f = FakeNodeGroups::new();
    f.inject_after(Op::Create, 1, CloudError::Quota("no more".into()));
    run(f.create_group(&eks(), &spec("a"), "t")).unwrap();
    assert!(matches!(
        run(f.create_group(&eks(), &spec("b"), "t")),
        Err(CloudError::Quota(_))
    ));
    run(f.create_group(&eks(), &spec("b"), "t")).unwrap();
}

#[test]
fn lists_a_clusters_groups_and_refuses_a_missing_cluster() {
    let f = FakeNodeGroups::new().with_clusters(["c1"]);
    run(f.create_group(&eks(), &spec("a"), "t")).unwrap();
    run(f.create_group(&eks(), &spec("b"), "t")).unwrap();
    assert_eq!(run(f.list_groups(&eks())).unwrap(), ["a", "b"]);
    let other = ClusterRef::Eks {
        region: "us-east-1".into(),
        name: "c2".into(),
    };
    assert!(matches!(
        run(f.list_groups(&other)),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn aks_enforces_its_name_rule_one_vm_size_and_one_operation_at_a_time() {
    let f = FakeNodeGroups::for_cloud(Cloud::Azure).with_settle_after(1);
    let c = aks();
    assert!(
        matches!(run(f.create_group(&c, &aks_spec("train-od"), "t")), Err(CloudError::Invalid(m)) if m.contains("12 lowercase")),
        "'-' is not legal in an AKS pool name"
    );
    let mut two = aks_spec("gs1");
    two.machine_types.push("Standard_NC48ads_A100_v4".into());
    assert!(matches!(
        run(f.create_group(&c, &two, "t")),
        Err(CloudError::Invalid(_))
    ));
    let g = run(f.create_group(&c, &aks_spec("gs1"), "t")).unwrap();
    assert!(
        g.id.ends_with("/managedClusters/c1/agentPools/gs1"),
        "{}",
        g.id
    );
    assert!(
        matches!(run(f.create_group(&c, &aks_spec("gs2"), "t")), Err(CloudError::Busy(m)) if m.contains("OperationNotAllowed")),
        "a second create while the first runs"
    );
    run(f.wait_until(&c, "gs1", WaitTarget::Active, T)).unwrap();
    run(f.create_group(&c, &aks_spec("gs2"), "t")).unwrap();
}

#[test]
fn reads_strip_what_aks_and_gke_add_themselves() {
    let f = FakeNodeGroups::for_cloud(Cloud::Azure);
    let g = run(f.create_group(&aks(), &aks_spec("gs1"), "t")).unwrap();
    let held = &f.groups()[0].spec;
    assert!(
        held.labels
            .contains_key("kubernetes.azure.com/scalesetpriority")
    );
    assert!(
        held.taints
            .iter()
            .any(|t| t.key.starts_with("kubernetes.azure.com/"))
    );
    assert_eq!(g.spec.labels, aks_spec("gs1").labels);
    assert!(g.spec.taints.is_empty(), "{:?}", g.spec.taints);
    assert_eq!(g.spec.tags, aks_spec("gs1").tags);
    assert!(
        !run(f.update_group(&aks(), &g, &aks_spec("gs1"))).unwrap(),
        "no drift from system labels"
    );

    let f = FakeNodeGroups::for_cloud(Cloud::Gcp);
    let g = run(f.create_group(&gke(), &gke_spec("train-spot"), "t")).unwrap();
    assert!(
        f.groups()[0]
            .spec
            .taints
            .iter()
            .any(|t| t.key == "nvidia.com/gpu")
    );
    assert!(g.spec.taints.is_empty(), "GKE's own GPU taint is stripped");
    assert_eq!(g.spec.labels, gke_spec("train-spot").labels);
    assert!(!run(f.update_group(&gke(), &g, &gke_spec("train-spot"))).unwrap());
}
