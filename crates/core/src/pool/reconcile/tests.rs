use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use super::*;
use crate::cloud::fake::{FakeNodeGroups, Op};
use crate::pool::spec::{TaintEffect, gpu_taint};

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

const C: &str = "train-east";

fn group(name: &str, capacity: CapacityType, min: u32, max: u32) -> NodeGroupSpec {
    NodeGroupSpec {
        name: name.into(),
        capacity_type: capacity,
        instance_types: vec!["p5.48xlarge".into()],
        ami_type: "AL2023_x86_64_NVIDIA".into(),
        scaling: Scaling {
            min,
            max,
            desired: None,
        },
        labels: BTreeMap::from([("gpu.tf/pool".into(), "train".into())]),
        taints: vec![gpu_taint()],
        tags: BTreeMap::from([("team".into(), "ml".into())]),
    }
}

fn pool() -> Vec<NodeGroupSpec> {
    vec![
        group("train-od", CapacityType::OnDemand, 1, 1),
        group("train-spot", CapacityType::Spot, 0, 3),
    ]
}

fn placement() -> Placement {
    Placement {
        node_role_arn: "arn:aws:iam::123456789012:role/node".into(),
        subnets: vec!["subnet-0a".into()],
    }
}

fn apply_to(api: &FakeNodeGroups, desired: &[NodeGroupSpec], live: &[NodeGroup]) -> Outcome {
    run(apply(
        api,
        C,
        desired,
        live,
        &placement(),
        &Timeouts::default(),
        "seed-1",
    ))
}

fn ops(api: &FakeNodeGroups) -> Vec<(Op, String)> {
    api.calls()
        .into_iter()
        .filter(|(op, _, _)| *op != Op::Describe)
        .map(|(op, _, n)| (op, n))
        .collect()
}

#[test]
fn creates_both_groups_with_the_request_fields_and_reports_them_live() {
    let api = FakeNodeGroups::new().with_settle_after(2);
    let out = apply_to(&api, &pool(), &[]);
    assert_eq!(out.error, None);
    let names: Vec<&str> = out.live.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["train-od", "train-spot"]);
    assert!(out.live.iter().all(|g| g.status == NodeGroupStatus::Active));
    let od = &out.live[0];
    assert_eq!(od.capacity_type, CapacityType::OnDemand);
    assert_eq!(
        (od.scaling.min, od.scaling.max, od.scaling.desired),
        (1, 1, Some(1))
    );
    assert_eq!(od.subnets, ["subnet-0a"]);
    assert_eq!(od.taints[0].value, "present");
    assert_eq!(
        out.live[1].scaling.desired,
        Some(0),
        "a new group starts at its min"
    );
    assert_eq!(
        ops(&api),
        [
            (Op::Create, "train-od".into()),
            (Op::Create, "train-spot".into())
        ]
    );
}

#[test]
fn nothing_to_do_makes_no_change_call() {
    let api = FakeNodeGroups::new();
    let live = apply_to(&api, &pool(), &[]).live;
    let before = api.calls().len();
    let out = apply_to(&api, &pool(), &live);
    assert_eq!(out.error, None);
    assert!(
        api.calls()[before..]
            .iter()
            .all(|(op, _, _)| *op == Op::Describe),
        "{:?}",
        &api.calls()[before..]
    );
}

#[test]
fn the_second_create_failing_reports_the_first_as_existing() {
    let api = FakeNodeGroups::new();
    api.inject_after(
        Op::Create,
        1,
        CloudError::InsufficientCapacity("no p5 spot in use1-az3".into()),
    );
    let out = apply_to(&api, &pool(), &[]);
    let e = out.error.expect("an error");
    assert_eq!(e.step, "creating node group train-spot");
    assert_eq!(e.existing, ["train-od"]);
    assert!(
        e.to_string()
            .contains("Node groups that exist now: train-od"),
        "{e}"
    );
    assert_eq!(out.live.len(), 1);
    // Again: only the missing group is created.
    let out = apply_to(&api, &pool(), &out.live);
    assert_eq!(out.error, None);
    assert_eq!(out.live.len(), 2);
}

#[test]
fn in_place_changes_are_one_config_update_and_a_tag_call() {
    let api = FakeNodeGroups::new();
    let live = apply_to(&api, &pool(), &[]).live;
    let mut want = pool();
    want[1].scaling.max = 5;
    want[1].labels.insert("stage".into(), "prod".into());
    want[1].taints.push(Taint {
        key: "team".into(),
        value: "ml".into(),
        effect: TaintEffect::NoExecute,
    });
    want[1].tags = BTreeMap::from([("project".into(), "llm".into())]);
    let before = api.calls().len();
    let out = apply_to(&api, &want, &live);
    assert_eq!(out.error, None);
    let changes: Vec<Op> = api.calls()[before..]
        .iter()
        .map(|c| c.0)
        .filter(|op| *op != Op::Describe)
        .collect();
    assert_eq!(changes, [Op::Update, Op::Tag]);
    let spot = &out.live[1];
    assert_eq!(spot.scaling.max, 5);
    assert_eq!(spot.labels.get("stage").map(String::as_str), Some("prod"));
    assert_eq!(spot.taints.len(), 2);
    assert_eq!(spot.tags, want[1].tags, "team removed, project added");
}

#[test]
fn the_autoscalers_count_is_kept_unless_it_falls_outside_the_range() {
    let live = NodeGroup {
        scaling: Scaling {
            min: 0,
            max: 3,
            desired: Some(2),
        },
        ..created(&group("g", CapacityType::Spot, 0, 3))
    };
    let mut want = group("g", CapacityType::Spot, 0, 5);
    assert_eq!(
        config_update(&want, &live).scaling.and_then(|s| s.desired),
        Some(2)
    );
    want.scaling.max = 1;
    assert_eq!(
        config_update(&want, &live).scaling.and_then(|s| s.desired),
        Some(1)
    );
    want.scaling = Scaling {
        min: 0,
        max: 3,
        desired: None,
    };
    assert_eq!(config_update(&want, &live).scaling, None);
    want.scaling.desired = Some(3);
    assert_eq!(
        config_update(&want, &live).scaling.and_then(|s| s.desired),
        Some(3)
    );
}

/// The live group `g` would be right after its create.
fn created(g: &NodeGroupSpec) -> NodeGroup {
    let api = FakeNodeGroups::new();
    run(api.create_node_group(&to_request(g, C, &placement(), "t"))).unwrap()
}

#[test]
fn a_change_that_needs_a_replacement_is_refused_without_a_call() {
    let api = FakeNodeGroups::new();
    let live = apply_to(&api, &pool(), &[]).live;
    let mut want = pool();
    want[1].instance_types = vec!["p4d.24xlarge".into()];
    let before = api.calls().len();
    let out = apply_to(&api, &want, &live);
    let e = out.error.expect("refused");
    assert!(
        e.source
            .to_string()
            .contains("instance types [p5.48xlarge] → [p4d.24xlarge]"),
        "{e}"
    );
    assert_eq!(e.existing, ["train-od", "train-spot"]);
    assert!(
        api.calls()[before..]
            .iter()
            .all(|(op, _, _)| *op == Op::Describe)
    );
}

#[test]
fn unwanted_groups_are_deleted_after_the_others_are_done() {
    let api = FakeNodeGroups::new().with_settle_after(1);
    let live = apply_to(&api, &pool(), &[]).live;
    let od_only = vec![group("train-od", CapacityType::OnDemand, 2, 2)];
    let before = api.calls().len();
    let out = apply_to(&api, &od_only, &live);
    assert_eq!(out.error, None);
    let n = ops_before(&api, before);
    assert_eq!(
        ops(&api)[n..],
        [
            (Op::Update, "train-od".into()),
            (Op::Delete, "train-spot".into())
        ]
    );
    assert_eq!(out.live.len(), 1);
    assert!(
        run(api.describe_node_group(C, "train-spot"))
            .unwrap()
            .is_none()
    );
}

/// How many non-describe calls were made before call number `before`.
fn ops_before(api: &FakeNodeGroups, before: usize) -> usize {
    api.calls()[..before]
        .iter()
        .filter(|(op, _, _)| *op != Op::Describe)
        .count()
}

#[test]
fn a_create_conflict_adopts_our_own_group_and_refuses_a_stranger() {
    // An earlier, interrupted apply created the group; our read missed it.
    let api = FakeNodeGroups::new();
    let first = apply_to(&api, &pool()[..1], &[]);
    assert_eq!(first.error, None);
    // A new apply has a new seed, so its token differs and EKS answers with a conflict.
    let out = run(apply(
        &api,
        C,
        &pool(),
        &[],
        &placement(),
        &Timeouts::default(),
        "seed-2",
    ));
    assert_eq!(out.error, None, "adopted");
    assert_eq!(out.live.len(), 2);

    let api = FakeNodeGroups::new();
    let mut other = pool()[0].clone();
    other.instance_types = vec!["g5.xlarge".into()];
    apply_to(&api, &[other], &[]);
    let out = run(apply(
        &api,
        C,
        &pool()[..1],
        &[],
        &placement(),
        &Timeouts::default(),
        "seed-2",
    ));
    let e = out.error.expect("refused");
    assert!(matches!(e.source, CloudError::Conflict(_)), "{e}");
}

#[test]
fn a_group_that_failed_to_create_is_deleted_and_created_again() {
    let api = FakeNodeGroups::new();
    let live = apply_to(&api, &pool(), &[]).live;
    api.set_status(C, "train-spot", NodeGroupStatus::CreateFailed, Vec::new());
    let live: Vec<NodeGroup> = live
        .into_iter()
        .map(|mut g| {
            if g.name == "train-spot" {
                g.status = NodeGroupStatus::CreateFailed;
            }
            g
        })
        .collect();
    let before = ops_before(&api, api.calls().len());
    let out = apply_to(&api, &pool(), &live);
    assert_eq!(out.error, None);
    assert_eq!(
        ops(&api)[before..],
        [
            (Op::Delete, "train-spot".into()),
            (Op::Create, "train-spot".into())
        ]
    );
    assert!(out.live.iter().all(|g| g.status == NodeGroupStatus::Active));
}

#[test]
fn a_wait_that_fails_names_the_step() {
    let api = FakeNodeGroups::new().with_settle_after(3);
    api.inject_after(
        Op::Describe,
        1,
        CloudError::Unauthorized("token expired".into()),
    );
    let out = apply_to(&api, &pool(), &[]);
    let e = out.error.expect("wait error");
    assert_eq!(e.step, "waiting for node group train-od to be ACTIVE");
    assert_eq!(e.existing, ["train-od", "train-spot"]);
}

#[test]
fn destroy_deletes_what_exists_and_tolerates_what_is_gone() {
    let api = FakeNodeGroups::new().with_settle_after(2);
    apply_to(&api, &pool()[..1], &[]);
    let names = vec!["train-od".to_string(), "train-spot".to_string()];
    let out = run(destroy(&api, C, &names, Duration::from_secs(60)));
    assert_eq!(
        out,
        Outcome {
            live: Vec::new(),
            error: None
        }
    );
    assert!(api.groups().is_empty());

    let api = FakeNodeGroups::new();
    apply_to(&api, &pool(), &[]);
    api.inject_after(Op::Delete, 1, CloudError::Throttled("slow down".into()));
    let out = run(destroy(&api, C, &names, Duration::from_secs(60)));
    let e = out.error.expect("second delete fails");
    assert_eq!(e.step, "deleting node group train-spot");
    assert_eq!(
        e.existing,
        ["train-spot"],
        "the first is gone, the second stays"
    );
}

#[test]
fn tokens_are_stable_short_and_differ_by_seed_and_name() {
    let a = token("train-abc", "train-od");
    assert_eq!(a, token("train-abc", "train-od"));
    assert_ne!(a, token("train-abd", "train-od"));
    assert_ne!(a, token("train-abc", "train-spot"));
    assert!(a.len() <= 64, "{a}");
}

#[test]
fn a_stop_during_a_wait_reports_the_groups_that_exist_and_a_rerun_finishes_without_creating_again()
{
    // Groups take 2 polls to settle; the adapter's wait is cut short by StopProvider on
    // the first poll (what Eks::wait_until returns when its cancel signal is set).
    let api = FakeNodeGroups::new().with_settle_after(2);
    api.inject(
        Op::Describe,
        CloudError::Cancelled("Terraform asked the provider to stop".into()),
    );
    let out = apply_to(&api, &pool(), &[]);
    let err = out.error.expect("the cancelled wait is an error");
    assert!(matches!(err.source, CloudError::Cancelled(_)), "{err}");
    assert_eq!(err.existing, ["train-od", "train-spot"]);
    assert!(
        err.to_string()
            .contains("Node groups that exist now: train-od, train-spot")
    );
    // Both creates were sent before the wait; the state keeps both, still settling.
    assert_eq!(out.live.len(), 2);
    assert!(out.live.iter().all(|g| g.status != NodeGroupStatus::Active));
    // The next apply starts from that state: it waits, and creates nothing.
    let again = apply_to(&api, &pool(), &out.live);
    assert_eq!(again.error, None);
    let creates = ops(&api).iter().filter(|(op, _)| *op == Op::Create).count();
    assert_eq!(creates, 2);
    assert!(
        again
            .live
            .iter()
            .all(|g| g.status == NodeGroupStatus::Active)
    );
}

#[test]
fn a_delete_answered_in_use_for_a_group_already_deleting_is_waited_for() {
    let api = FakeNodeGroups::new().with_settle_after(1);
    let out = apply_to(&api, &pool(), &[]);
    assert_eq!(out.error, None);
    // An earlier attempt started the delete; its answer was lost, the repeat is refused.
    run(api.delete_node_group(C, "train-spot")).unwrap();
    api.inject_after(
        Op::Delete,
        1,
        CloudError::Conflict("ResourceInUseException: node group is being deleted".into()),
    );
    let gone = run(destroy(
        &api,
        C,
        &["train-od".into(), "train-spot".into()],
        Duration::from_secs(60),
    ));
    assert_eq!(gone.error, None, "{:?}", gone.error);
    assert!(api.groups().is_empty());
}

#[test]
fn a_delete_answered_in_use_for_an_active_group_is_an_error_naming_it() {
    let api = FakeNodeGroups::new();
    let out = apply_to(&api, &pool(), &[]);
    assert_eq!(out.error, None);
    api.inject(
        Op::Delete,
        CloudError::Conflict("ResourceInUseException: an update is in progress".into()),
    );
    let r = run(destroy(
        &api,
        C,
        &["train-od".into()],
        Duration::from_secs(60),
    ));
    let err = r.error.expect("conflict on an active group");
    assert_eq!(err.step, "deleting node group train-od");
    assert_eq!(err.existing, ["train-od"]);
}

/// The fake, but each create takes `pause` (a real sleep) and each wait records the
/// timeout it was given.
struct Slow {
    inner: FakeNodeGroups,
    pause: Duration,
    waits: std::sync::Mutex<Vec<(String, Duration)>>,
}

#[async_trait::async_trait]
impl NodeGroups for Slow {
    async fn create_node_group(&self, req: &NodeGroupRequest) -> Result<NodeGroup, CloudError> {
        std::thread::sleep(self.pause);
        self.inner.create_node_group(req).await
    }
    async fn describe_node_group(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        self.inner.describe_node_group(cluster, name).await
    }
    async fn update_node_group_config(
        &self,
        cluster: &str,
        name: &str,
        update: &NodeGroupUpdate,
    ) -> Result<(), CloudError> {
        self.inner
            .update_node_group_config(cluster, name, update)
            .await
    }
    async fn tag_node_group(
        &self,
        arn: &str,
        add: &BTreeMap<String, String>,
        remove: &[String],
    ) -> Result<(), CloudError> {
        self.inner.tag_node_group(arn, add, remove).await
    }
    async fn cluster_subnets(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        self.inner.cluster_subnets(cluster).await
    }
    async fn list_node_groups(&self, cluster: &str) -> Result<Vec<String>, CloudError> {
        self.inner.list_node_groups(cluster).await
    }
    async fn delete_node_group(&self, cluster: &str, name: &str) -> Result<(), CloudError> {
        std::thread::sleep(self.pause);
        self.inner.delete_node_group(cluster, name).await
    }
    async fn wait_until(
        &self,
        cluster: &str,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        self.waits.lock().unwrap().push((name.to_string(), timeout));
        std::thread::sleep(self.pause);
        self.inner.wait_until(cluster, name, target, timeout).await
    }
}

#[test]
fn the_create_timeout_bounds_all_waits_of_the_apply_not_each() {
    let pause = Duration::from_millis(30);
    let api = Slow {
        inner: FakeNodeGroups::new(),
        pause,
        waits: Default::default(),
    };
    let limit = Duration::from_secs(3600);
    let timeouts = Timeouts {
        create: limit,
        ..Timeouts::default()
    };
    let out = run(apply(
        &api,
        C,
        &pool(),
        &[],
        &placement(),
        &timeouts,
        "seed-1",
    ));
    assert_eq!(out.error, None);
    let waits = api.waits.lock().unwrap().clone();
    let names: Vec<&str> = waits.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["train-od", "train-spot"]);
    // Two creates ran before the first wait, and the first wait before the second: each
    // wait gets what is left of one limit, not a limit of its own.
    assert!(waits[0].1 <= limit - 2 * pause, "{waits:?}");
    assert!(waits[1].1 <= waits[0].1 - pause, "{waits:?}");
}

#[test]
fn a_spent_timeout_gives_the_wait_no_time_and_reports_the_whole_run() {
    let pause = Duration::from_millis(40);
    // The fake needs several polls to settle, so a wait with no time left fails.
    let api = Slow {
        inner: FakeNodeGroups::new().with_settle_after(3),
        pause,
        waits: Default::default(),
    };
    let timeouts = Timeouts {
        create: Duration::from_millis(50), // spent by the two creates
        ..Timeouts::default()
    };
    let out = run(apply(
        &api,
        C,
        &pool(),
        &[],
        &placement(),
        &timeouts,
        "seed-1",
    ));
    let waits = api.waits.lock().unwrap().clone();
    assert_eq!(waits[0].1, Duration::ZERO, "{waits:?}");
    let err = out.error.expect("the create cannot finish in time");
    match &err.source {
        CloudError::Timeout { waited, .. } => {
            assert!(
                *waited >= 2 * pause,
                "waited counts from the run's start: {waited:?}"
            )
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // Both groups exist (being created) and the outcome says so.
    assert_eq!(err.existing, ["train-od", "train-spot"]);
}

#[test]
fn a_roll_creates_the_new_generation_and_waits_before_deleting_the_old() {
    let api = FakeNodeGroups::new().with_settle_after(2);
    let live = apply_to(&api, &pool(), &[]).live;
    // The autoscaler has 3 spot nodes running.
    run(api.update_node_group_config(
        C,
        "train-spot",
        &NodeGroupUpdate {
            scaling: Some(Scaling {
                min: 0,
                max: 3,
                desired: Some(3),
            }),
            ..Default::default()
        },
    ))
    .unwrap();
    let live: Vec<NodeGroup> = live
        .iter()
        .map(|g| run(api.describe_node_group(C, &g.name)).unwrap().unwrap())
        .collect();
    let mut want = pool();
    want[1].name = "train-spot-ab12".into();
    want[1].instance_types = vec!["p4d.24xlarge".into()];
    let before = api.calls().len();
    let out = apply_to(&api, &want, &live);
    assert_eq!(out.error, None);
    let calls: Vec<(Op, String)> = api.calls()[before..]
        .iter()
        .map(|(op, _, n)| (*op, n.clone()))
        .collect();
    let create = calls
        .iter()
        .position(|c| *c == (Op::Create, "train-spot-ab12".into()))
        .expect("new generation created");
    let delete = calls
        .iter()
        .position(|c| *c == (Op::Delete, "train-spot".into()))
        .expect("old generation deleted");
    // Waiting = describing the new group until it is ACTIVE (settle_after 2), all before
    // the old one's delete.
    let waits = calls[create..delete]
        .iter()
        .filter(|c| **c == (Op::Describe, "train-spot-ab12".into()))
        .count();
    assert!(create < delete && waits >= 2, "{calls:?}");
    let names: Vec<&str> = out.live.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["train-od", "train-spot-ab12"]);
    assert_eq!(
        out.live[1].scaling.desired,
        Some(3),
        "the new generation starts with the old one's node count"
    );
}
