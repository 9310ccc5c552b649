use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;
use crate::cloud::{CapacityType, Scaling, Taint, TaintEffect};

/// The fake never suspends, so polling to completion needs no runtime.
fn run<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn req(name: &str) -> NodeGroupRequest {
    NodeGroupRequest {
        cluster: "c1".into(),
        name: name.into(),
        capacity_type: CapacityType::Spot,
        instance_types: vec!["g5.xlarge".into()],
        ami_type: "AL2023_x86_64_NVIDIA".into(),
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
        node_role_arn: "arn:aws:iam::123456789012:role/node".into(),
        subnets: vec!["subnet-1".into()],
        client_request_token: Some("tok-1".into()),
    }
}

const T: Duration = Duration::from_secs(1);

#[test]
fn create_describe_update_delete() {
    let f = FakeNodeGroups::new();
    let g = run(f.create_node_group(&req("a"))).unwrap();
    assert_eq!(g.status, NodeGroupStatus::Active);
    assert_eq!(g.labels["gpu"], "a10g");
    let got = run(f.describe_node_group("c1", "a")).unwrap().unwrap();
    assert_eq!(got, g);

    let up = NodeGroupUpdate {
        scaling: Some(Scaling {
            min: 1,
            max: 5,
            desired: Some(2),
        }),
        labels_add: BTreeMap::from([("tier".into(), "x".into())]),
        labels_remove: vec!["gpu".into()],
        taints_add: vec![Taint {
            key: "nvidia.com/gpu".into(),
            value: "yes".into(),
            effect: TaintEffect::NoSchedule,
        }],
        taints_remove: vec![],
    };
    run(f.update_node_group_config("c1", "a", &up)).unwrap();
    let got = run(f.describe_node_group("c1", "a")).unwrap().unwrap();
    assert_eq!(got.scaling.desired, Some(2));
    assert_eq!(got.labels, BTreeMap::from([("tier".into(), "x".into())]));
    assert_eq!(got.taints.len(), 1);
    assert_eq!(got.taints[0].value, "yes");

    run(f.delete_node_group("c1", "a")).unwrap();
    assert_eq!(run(f.describe_node_group("c1", "a")).unwrap(), None);
    assert!(matches!(
        run(f.delete_node_group("c1", "a")),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn create_is_idempotent_with_same_token_only() {
    let f = FakeNodeGroups::new();
    let a = run(f.create_node_group(&req("a"))).unwrap();
    assert_eq!(run(f.create_node_group(&req("a"))).unwrap(), a);
    let mut other = req("a");
    other.client_request_token = Some("tok-2".into());
    assert!(matches!(
        run(f.create_node_group(&other)),
        Err(CloudError::Conflict(_))
    ));
    let mut no_token = req("a");
    no_token.client_request_token = None;
    assert!(matches!(
        run(f.create_node_group(&no_token)),
        Err(CloudError::Conflict(_))
    ));
    assert_eq!(f.groups().len(), 1);
}

#[test]
fn invalid_requests_are_rejected() {
    let f = FakeNodeGroups::new();
    let mut r = req("a");
    r.scaling.desired = Some(9);
    assert!(matches!(
        run(f.create_node_group(&r)),
        Err(CloudError::Invalid(_))
    ));
    let mut r = req("a");
    r.instance_types.clear();
    assert!(matches!(
        run(f.create_node_group(&r)),
        Err(CloudError::Invalid(_))
    ));
    let f = FakeNodeGroups::new().with_clusters(["other"]);
    assert!(matches!(
        run(f.create_node_group(&req("a"))),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn transitions_settle_after_polls_and_block_updates() {
    let f = FakeNodeGroups::new().with_settle_after(2);
    let g = run(f.create_node_group(&req("a"))).unwrap();
    assert_eq!(g.status, NodeGroupStatus::Creating);
    let up = NodeGroupUpdate {
        labels_add: BTreeMap::from([("k".into(), "v".into())]),
        ..Default::default()
    };
    assert!(matches!(
        run(f.update_node_group_config("c1", "a", &up)),
        Err(CloudError::Conflict(_))
    ));
    let g = run(f.wait_until("c1", "a", WaitTarget::Active, T))
        .unwrap()
        .unwrap();
    assert_eq!(g.status, NodeGroupStatus::Active);

    run(f.delete_node_group("c1", "a")).unwrap();
    let g = run(f.describe_node_group("c1", "a")).unwrap().unwrap();
    assert_eq!(g.status, NodeGroupStatus::Deleting);
    assert_eq!(
        run(f.wait_until("c1", "a", WaitTarget::Deleted, T)).unwrap(),
        None
    );
}

#[test]
fn waits_fail_typed_on_failed_state_and_time_out_when_stuck() {
    let f = FakeNodeGroups::new();
    run(f.create_node_group(&req("a"))).unwrap();
    f.set_status(
        "c1",
        "a",
        NodeGroupStatus::CreateFailed,
        vec![HealthIssue {
            code: "InstanceLimitExceeded".into(),
            message: "You've reached your quota".into(),
        }],
    );
    assert!(matches!(
        run(f.wait_until("c1", "a", WaitTarget::Active, T)),
        Err(CloudError::Quota(_))
    ));
    f.set_status("c1", "a", NodeGroupStatus::Updating, vec![]);
    assert!(matches!(
        run(f.wait_until("c1", "a", WaitTarget::Active, T)),
        Err(CloudError::Timeout { .. })
    ));
    assert!(matches!(
        run(f.wait_until("c1", "missing", WaitTarget::Active, T)),
        Err(CloudError::NotFound(_))
    ));
}

#[test]
fn injected_faults_fire_once_per_op_and_calls_are_recorded() {
    let f = FakeNodeGroups::new();
    f.inject(Op::Create, CloudError::Throttled("slow down".into()));
    let e = run(f.create_node_group(&req("a"))).unwrap_err();
    assert!(e.is_retryable());
    run(f.create_node_group(&req("a"))).unwrap();
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
    assert_eq!(run(f.describe_node_group("c1", "x")).unwrap(), None);
}

#[test]
fn a_fault_after_successes_skips_that_many_calls() {
    let f = FakeNodeGroups::new();
    f.inject_after(Op::Create, 1, CloudError::Quota("no more".into()));
    run(f.create_node_group(&req("a"))).unwrap();
    assert!(matches!(
        run(f.create_node_group(&req("b"))),
        Err(CloudError::Quota(_))
    ));
    run(f.create_node_group(&req("b"))).unwrap();
}

#[test]
fn tags_change_by_arn_and_clusters_report_their_subnets() {
    let f = FakeNodeGroups::new().with_clusters(["c1"]);
    let g = run(f.create_node_group(&req("a"))).unwrap();
    let add = BTreeMap::from([("project".to_string(), "llm".to_string())]);
    run(f.tag_node_group(&g.arn, &add, &["team".to_string()])).unwrap();
    let got = run(f.describe_node_group("c1", "a")).unwrap().unwrap();
    assert_eq!(got.tags, add);
    assert!(matches!(
        run(f.tag_node_group("arn:nope", &add, &[])),
        Err(CloudError::NotFound(_))
    ));

    assert!(run(f.cluster_subnets("c1")).unwrap().is_empty());
    f.set_cluster_subnets("c1", vec!["subnet-9".into()]);
    assert_eq!(run(f.cluster_subnets("c1")).unwrap(), vec!["subnet-9"]);
    assert!(matches!(
        run(f.cluster_subnets("c2")),
        Err(CloudError::NotFound(_))
    ));
}
