use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::*;
use crate::clouds::fake::{FakeNodeGroups, Op};
use crate::model::{AwsClass, AzureClass, NodeClass, Scaling, Taint};
use crate::offer::Cloud;
use crate::pool::spec::{TaintEffect, gpu_taint};
use crate::test_support::block_on as run;

static C: LazyLock<ClusterRef> = LazyLock::new(|| ClusterRef::Eks {
    region: "us-east-1".into(),
    name: "train-east".into(),
});

fn group(name: &str, capacity: CapacityType, min: u32, max: u32) -> GroupSpec {
    GroupSpec {
        name: name.into(),
        capacity,
        machine_types: vec!["p5.48xlarge".into()],
        scaling: Scaling {
            min,
            max,
            desired: None,
        },
        labels: BTreeMap::from([("gpu.tf/pool".into(), "train".into())]),
        taints: vec![gpu_taint()],
        tags: BTreeMap::from([("team".into(), "ml".into())]),
        class: NodeClass::Aws(AwsClass {
            node_role: "arn:aws:iam::123456789012:role/node".into(),
            subnets: Some(vec!["subnet-0a".into()]),
            ami_type: "AL2023_x86_64_NVIDIA".into(),
            capacity_reservation: None,
        }),
    }
}

fn pool() -> Vec<GroupSpec> {
    vec![
        group("train-od", CapacityType::OnDemand, 1, 1),
        group("train-spot", CapacityType::Spot, 0, 3),
    ]
}

fn apply_to(api: &FakeNodeGroups, desired: &[GroupSpec], live: &[NodeGroup]) -> Outcome {
    run(apply(
        api,
        &C,
        desired,
        live,
        &Timeouts::default(),
        "seed-1",
    ))
}

fn ops(api: &FakeNodeGroups) -> Vec<(Op, String)> {
    api.calls()
        .into_iter()
        .filter(|(op, _, _)| *op != Op::Get)
        .map(|(op, _, n)| (op, n))
        .collect()
}

#[test]
fn creates_both_groups_with_the_request_fields_and_reports_them_live() {
    let api = FakeNodeGroups::new().with_settle_after(2);
    let out = apply_to(&api, &pool(), &[]);
    assert_eq!(out.error, None);
    let names: Vec<&str> = out.live.iter().map(|g| g.name()).collect();
    assert_eq!(names, ["train-od", "train-spot"]);
    assert!(out.live.iter().all(|g| g.status == NodeGroupStatus::Active));
    let od = &out.live[0];
    assert_eq!(od.spec.capacity, CapacityType::OnDemand);
    assert_eq!(
        (
            od.spec.scaling.min,
            od.spec.scaling.max,
            od.spec.scaling.desired
        ),
        (1, 1, Some(1))
    );
    assert_eq!(od.spec.class, pool()[0].class);
    assert_eq!(od.spec.taints[0].value, "present");
    assert_eq!(
        out.live[1].spec.scaling.desired,
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
            .all(|(op, _, _)| *op == Op::Get),
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
fn in_place_changes_are_one_update_of_the_whole_desired_state() {
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
        .filter(|op| *op != Op::Get)
        .collect();
    assert_eq!(changes, [Op::Update]);
    let spot = &out.live[1];
    assert_eq!(spot.spec.scaling.max, 5);
    assert_eq!(
        spot.spec.labels.get("stage").map(String::as_str),
        Some("prod")
    );
    assert_eq!(spot.spec.taints.len(), 2);
    assert_eq!(spot.spec.tags, want[1].tags, "team removed, project added");
}

#[test]
fn the_autoscalers_count_is_kept_unless_it_falls_outside_the_range() {
    let mut live = group("g", CapacityType::Spot, 0, 3);
    live.scaling.desired = Some(2);
    let desired_of = |want: &GroupSpec| {
        ConfigDelta::between(&live, want)
            .scaling
            .and_then(|s| s.desired)
    };
    let mut want = group("g", CapacityType::Spot, 0, 5);
    assert_eq!(desired_of(&want), Some(2));
    want.scaling.max = 1;
    assert_eq!(desired_of(&want), Some(1));
    want.scaling = Scaling {
        min: 0,
        max: 3,
        desired: None,
    };
    assert_eq!(ConfigDelta::between(&live, &want).scaling, None);
    want.scaling.desired = Some(3);
    assert_eq!(desired_of(&want), Some(3));
}

#[test]
fn a_change_that_needs_a_replacement_is_refused_without_a_call() {
    let api = FakeNodeGroups::new();
    let live = apply_to(&api, &pool(), &[]).live;
    let mut want = pool();
    want[1].machine_types = vec!["p4d.24xlarge".into()];
    let before = api.calls().len();
    let out = apply_to(&api, &want, &live);
    let e = out.error.expect("refused");
    assert!(
        e.source
            .to_string()
            .contains("machine types p5.48xlarge → p4d.24xlarge"),
        "{e}"
    );
    assert_eq!(e.existing, ["train-od", "train-spot"]);
    assert!(
        api.calls()[before..]
            .iter()
            .all(|(op, _, _)| *op == Op::Get)
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
    assert!(run(api.get_group(&C, "train-spot")).unwrap().is_none());
}

/// How many non-describe calls were made before call number `before`.
fn ops_before(api: &FakeNodeGroups, before: usize) -> usize {
    api.calls()[..before]
        .iter()
        .filter(|(op, _, _)| *op != Op::Get)
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
        &C,
        &pool(),
        &[],
        &Timeouts::default(),
        "seed-2",
    ));
    assert_eq!(out.error, None, "adopted");
    assert_eq!(out.live.len(), 2);

    let api = FakeNodeGroups::new();
    let mut other = pool()[0].clone();
    other.machine_types = vec!["g5.xlarge".into()];
    apply_to(&api, &[other], &[]);
    let out = run(apply(
        &api,
        &C,
        &pool()[..1],
        &[],
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
    api.set_status(&C, "train-spot", NodeGroupStatus::CreateFailed, Vec::new());
    let live: Vec<NodeGroup> = live
        .into_iter()
        .map(|mut g| {
            if g.spec.name == "train-spot" {
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
    api.inject_after(Op::Get, 1, CloudError::Unauthorized("token expired".into()));
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
    let out = run(destroy(&api, &C, &names, Duration::from_secs(60)));
    assert_eq!((out.live, out.error), (Vec::new(), None));
    let deletes: Vec<(Verb, &str, bool)> = out
        .mutations
        .iter()
        .map(|m| (m.verb, m.target.as_str(), m.error.is_some()))
        .collect();
    assert_eq!(
        deletes,
        [
            (Verb::Delete, "train-east/train-od", false),
            (Verb::Delete, "train-east/train-spot", true)
        ],
        "both deletes pass the choke point; the second found nothing to delete"
    );
    assert!(api.groups().is_empty());

    let api = FakeNodeGroups::new();
    apply_to(&api, &pool(), &[]);
    api.inject_after(Op::Delete, 1, CloudError::Throttled("slow down".into()));
    let out = run(destroy(&api, &C, &names, Duration::from_secs(60)));
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
        Op::Get,
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
    run(api.delete_group(&C, "train-spot")).unwrap();
    api.inject_after(
        Op::Delete,
        1,
        CloudError::Conflict("ResourceInUseException: node group is being deleted".into()),
    );
    let gone = run(destroy(
        &api,
        &C,
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
        &C,
        &["train-od".into()],
        Duration::from_secs(60),
    ));
    let err = r.error.expect("conflict on an active group");
    assert_eq!(err.step, "deleting node group train-od");
    assert_eq!(err.existing, ["train-od"]);
}

/// The fake, but each create, delete and wait takes `pause` on the fake's clock first,
/// and each wait records the timeout it was given.
struct Slow {
    inner: FakeNodeGroups,
    pause: Duration,
    waits: std::sync::Mutex<Vec<(String, Duration)>>,
}

#[async_trait::async_trait]
impl NodeGroups for Slow {
    fn traits(&self) -> &'static crate::seam::CloudTraits {
        self.inner.traits()
    }
    async fn create_group(
        &self,
        cluster: &ClusterRef,
        spec: &GroupSpec,
        token: &str,
    ) -> Result<NodeGroup, CloudError> {
        self.inner.pause(self.pause).await?;
        self.inner.create_group(cluster, spec, token).await
    }
    async fn get_group(
        &self,
        cluster: &ClusterRef,
        name: &str,
    ) -> Result<Option<NodeGroup>, CloudError> {
        self.inner.get_group(cluster, name).await
    }
    async fn update_group(
        &self,
        cluster: &ClusterRef,
        live: &NodeGroup,
        spec: &GroupSpec,
    ) -> Result<bool, CloudError> {
        self.inner.update_group(cluster, live, spec).await
    }
    async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
        self.inner.list_groups(cluster).await
    }
    async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
        self.inner.pause(self.pause).await?;
        self.inner.delete_group(cluster, name).await
    }
    async fn wait_until(
        &self,
        cluster: &ClusterRef,
        name: &str,
        target: WaitTarget,
        timeout: Duration,
    ) -> Result<Option<NodeGroup>, CloudError> {
        self.waits.lock().unwrap().push((name.to_string(), timeout));
        self.inner.pause(self.pause).await?;
        self.inner.wait_until(cluster, name, target, timeout).await
    }
    async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
        self.inner.pause(pause).await
    }
    fn now(&self) -> Duration {
        self.inner.now()
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
    let out = run(apply(&api, &C, &pool(), &[], &timeouts, "seed-1"));
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
    let out = run(apply(&api, &C, &pool(), &[], &timeouts, "seed-1"));
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
    let mut three = pool()[1].clone();
    three.scaling.desired = Some(3);
    let spot = run(api.get_group(&C, "train-spot")).unwrap().unwrap();
    run(api.update_group(&C, &spot, &three)).unwrap();
    let live: Vec<NodeGroup> = live
        .iter()
        .map(|g| run(api.get_group(&C, g.name())).unwrap().unwrap())
        .collect();
    let mut want = pool();
    want[1].name = "train-spot-ab12".into();
    want[1].machine_types = vec!["p4d.24xlarge".into()];
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
        .filter(|c| **c == (Op::Get, "train-spot-ab12".into()))
        .count();
    assert!(create < delete && waits >= 2, "{calls:?}");
    let names: Vec<&str> = out.live.iter().map(|g| g.name()).collect();
    assert_eq!(names, ["train-od", "train-spot-ab12"]);
    assert_eq!(
        out.live[1].spec.scaling.desired,
        Some(3),
        "the new generation starts with the old one's node count"
    );
}

fn aks_cluster() -> ClusterRef {
    ClusterRef::Aks {
        subscription: "00000000-0000-0000-0000-000000000000".into(),
        resource_group: "rg".into(),
        name: "train".into(),
    }
}

fn aks_group(name: &str, capacity: CapacityType, driver: &str) -> GroupSpec {
    GroupSpec {
        machine_types: vec!["Standard_NC24ads_A100_v4".into()],
        class: NodeClass::Azure(AzureClass {
            os_sku: "Ubuntu".into(),
            gpu_driver: driver.into(),
            ..Default::default()
        }),
        ..group(name, capacity, 0, 3)
    }
}

#[test]
fn on_aks_one_operation_runs_at_a_time_and_a_roll_still_creates_before_it_deletes() {
    // AKS answers 409 OperationNotAllowed to a second agent-pool operation in a cluster;
    // the fake does too, so starting both creates before waiting would fail here.
    let api = FakeNodeGroups::for_cloud(Cloud::Azure).with_settle_after(2);
    let c = aks_cluster();
    let pool = vec![
        aks_group("goaaaaaaaaaa", CapacityType::OnDemand, "Install"),
        aks_group("gsaaaaaaaaaa", CapacityType::Spot, "Install"),
    ];
    let out = run(apply(&api, &c, &pool, &[], &Timeouts::default(), "s"));
    assert_eq!(out.error, None);
    assert_eq!(out.live.len(), 2);
    // The spot pool rolls (GPU driver is fixed on AKS): new first, ready, then old gone.
    let mut want = pool.clone();
    want[1] = aks_group("gsbbbbbbbbbb", CapacityType::Spot, "None");
    let before = api.calls().len();
    let out = run(apply(&api, &c, &want, &out.live, &Timeouts::default(), "s"));
    assert_eq!(out.error, None, "{:?}", out.error);
    let calls: Vec<(Op, String)> = api.calls()[before..]
        .iter()
        .map(|(op, _, n)| (*op, n.clone()))
        .collect();
    let create = calls
        .iter()
        .position(|c| *c == (Op::Create, "gsbbbbbbbbbb".into()));
    let delete = calls
        .iter()
        .position(|c| *c == (Op::Delete, "gsaaaaaaaaaa".into()));
    assert!(create.unwrap() < delete.unwrap(), "{calls:?}");
    let names: Vec<&str> = out.live.iter().map(|g| g.name()).collect();
    assert_eq!(names, ["goaaaaaaaaaa", "gsbbbbbbbbbb"]);
    let verbs: Vec<Verb> = out.mutations.iter().map(|m| m.verb).collect();
    assert_eq!(
        verbs,
        [Verb::Create, Verb::Delete],
        "every mutation is journaled"
    );
}

#[test]
fn on_aks_system_labels_are_not_a_change() {
    let api = FakeNodeGroups::for_cloud(Cloud::Azure);
    let c = aks_cluster();
    let pool = vec![aks_group("gsaaaaaaaaaa", CapacityType::Spot, "Install")];
    let live = run(apply(&api, &c, &pool, &[], &Timeouts::default(), "s")).live;
    let before = api.calls().len();
    let out = run(apply(&api, &c, &pool, &live, &Timeouts::default(), "s"));
    assert_eq!(out.error, None);
    assert!(
        api.calls()[before..]
            .iter()
            .all(|(op, _, _)| *op == Op::Get),
        "AKS's own spot label and taint are stripped, so nothing is updated: {:?}",
        &api.calls()[before..]
    );
}

// --- turns at a cluster that runs one operation at a time (issue 26) -------------------

fn busy(op: &str) -> CloudError {
    CloudError::Busy(format!(
        "OperationNotAllowed: Another operation ({op}) is in progress, please wait for it to finish"
    ))
}

#[test]
fn a_create_refused_as_busy_is_sent_again_and_makes_no_second_group() {
    let api = FakeNodeGroups::for_cloud(Cloud::Azure).with_settle_after(1);
    let c = aks_cluster();
    let pool = vec![
        aks_group("goaaaaaaaaaa", CapacityType::OnDemand, "Install"),
        aks_group("gsaaaaaaaaaa", CapacityType::Spot, "Install"),
    ];
    api.inject(Op::Create, busy("Updating"));
    api.inject(Op::Create, busy("Updating"));
    let out = run(apply(&api, &c, &pool, &[], &Timeouts::default(), "s"));
    assert_eq!(out.error, None, "{:?}", out.error);
    assert_eq!(api.groups().len(), 2, "exactly the two groups asked for");
    assert_eq!(out.waits.refused, 2);
    assert!(
        out.waits.refused_for >= Duration::from_secs(2),
        "{:?}",
        out.waits
    );
    assert!(
        out.waits
            .last_refusal
            .as_deref()
            .unwrap()
            .contains("Updating")
    );
    // Each refusal is journaled: two refused creates, then the two that were accepted.
    let creates: Vec<bool> = out
        .mutations
        .iter()
        .filter(|m| m.verb == Verb::Create)
        .map(|m| m.error.is_none())
        .collect();
    assert_eq!(creates, [false, false, true, true]);
}

#[test]
fn a_cluster_busy_past_the_timeout_fails_naming_the_operation_and_creates_nothing() {
    let api = FakeNodeGroups::for_cloud(Cloud::Azure);
    let c = aks_cluster();
    let pool = vec![aks_group("goaaaaaaaaaa", CapacityType::OnDemand, "Install")];
    for _ in 0..100 {
        api.inject(Op::Create, busy("Upgrading"));
    }
    let timeouts = Timeouts {
        create: Duration::from_secs(120),
        ..Timeouts::default()
    };
    let out = run(apply(&api, &c, &pool, &[], &timeouts, "s"));
    let err = out.error.expect("the cluster never became free");
    assert_eq!(err.step, "creating agent pool goaaaaaaaaaa");
    assert!(matches!(err.source, CloudError::Timeout { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("to finish another operation") && text.contains("(Upgrading)"),
        "{text}"
    );
    assert!(api.groups().is_empty());
    // The pauses stayed within the timeout, then it gave up (not 100 attempts).
    assert!(
        out.waits.refused_for <= Duration::from_secs(120),
        "{:?}",
        out.waits
    );
    assert!(out.waits.refused < 20, "{:?}", out.waits);
}

#[test]
fn an_update_refused_as_busy_reads_the_group_again_and_converges() {
    let api = FakeNodeGroups::for_cloud(Cloud::Azure);
    let c = aks_cluster();
    let pool = vec![aks_group("gsaaaaaaaaaa", CapacityType::Spot, "Install")];
    let live = run(apply(&api, &c, &pool, &[], &Timeouts::default(), "s")).live;
    let mut want = pool.clone();
    want[0].labels.insert("workload".into(), "inference".into());
    api.inject(Op::Update, busy("Scaling"));
    let before = api.calls().len();
    let out = run(apply(&api, &c, &want, &live, &Timeouts::default(), "s"));
    assert_eq!(out.error, None, "{:?}", out.error);
    assert_eq!(out.waits.refused, 1);
    assert_eq!(out.live[0].spec.labels["workload"], "inference");
    let after: Vec<Op> = api.calls()[before..].iter().map(|(op, _, _)| *op).collect();
    let updates = after.iter().filter(|op| **op == Op::Update).count();
    assert_eq!(updates, 2, "refused once, then sent again: {after:?}");
    let first = after.iter().position(|op| *op == Op::Update).unwrap();
    assert!(
        after[first + 1..].contains(&Op::Get),
        "the group is read again before the second update: {after:?}"
    );
}

#[test]
fn a_delete_refused_as_busy_is_sent_again_until_the_group_is_gone() {
    let api = FakeNodeGroups::for_cloud(Cloud::Gcp);
    let c = ClusterRef::Gke {
        project: "p".into(),
        location: "us-central1".into(),
        name: "gke1".into(),
    };
    let g = GroupSpec {
        name: "train-od".into(),
        machine_types: vec!["g2-standard-4".into()],
        class: NodeClass::Gcp(Default::default()),
        ..group("train-od", CapacityType::OnDemand, 1, 1)
    };
    let live = run(apply(&api, &c, &[g], &[], &Timeouts::default(), "s")).live;
    assert_eq!(live.len(), 1);
    api.inject(
        Op::Delete,
        CloudError::Busy(
            "FAILED_PRECONDITION: Cluster is running incompatible operation operation-1-a.".into(),
        ),
    );
    let out = run(destroy(
        &api,
        &c,
        &["train-od".into()],
        Duration::from_secs(600),
    ));
    assert_eq!(out.error, None, "{:?}", out.error);
    assert!(api.groups().is_empty());
    assert_eq!(out.waits.refused, 1);
    assert!(out.waits.last_refusal.unwrap().contains("operation-1-a"));
}

/// Two runs applied at once (needs an executor: the `live` feature's tokio).
#[cfg(feature = "live")]
mod parallel {
    use super::*;

    /// The fake, yielding to the executor in every call, so two runs on one thread interleave
    /// as two Terraform resources applied in parallel do.
    struct Yielding(FakeNodeGroups);

    #[async_trait::async_trait]
    impl NodeGroups for Yielding {
        fn traits(&self) -> &'static crate::seam::CloudTraits {
            self.0.traits()
        }
        async fn create_group(
            &self,
            cluster: &ClusterRef,
            spec: &GroupSpec,
            token: &str,
        ) -> Result<NodeGroup, CloudError> {
            tokio::task::yield_now().await;
            self.0.create_group(cluster, spec, token).await
        }
        async fn get_group(
            &self,
            cluster: &ClusterRef,
            name: &str,
        ) -> Result<Option<NodeGroup>, CloudError> {
            tokio::task::yield_now().await;
            self.0.get_group(cluster, name).await
        }
        async fn update_group(
            &self,
            cluster: &ClusterRef,
            live: &NodeGroup,
            spec: &GroupSpec,
        ) -> Result<bool, CloudError> {
            tokio::task::yield_now().await;
            self.0.update_group(cluster, live, spec).await
        }
        async fn list_groups(&self, cluster: &ClusterRef) -> Result<Vec<String>, CloudError> {
            self.0.list_groups(cluster).await
        }
        async fn delete_group(&self, cluster: &ClusterRef, name: &str) -> Result<(), CloudError> {
            tokio::task::yield_now().await;
            self.0.delete_group(cluster, name).await
        }
        async fn wait_until(
            &self,
            cluster: &ClusterRef,
            name: &str,
            target: WaitTarget,
            timeout: Duration,
        ) -> Result<Option<NodeGroup>, CloudError> {
            // The adapters' loop over this wrapper's yielding reads.
            crate::seam::poll::group(
                &crate::seam::poll::VirtualClock::default(),
                crate::seam::poll::Backoff::default(),
                timeout,
                &crate::cancel::Cancel::new(),
                self.0.traits(),
                cluster,
                name,
                target,
                || self.get_group(cluster, name),
            )
            .await
        }
        async fn take_turn(&self, cluster: &ClusterRef) -> Result<crate::seam::Turn, CloudError> {
            self.0.take_turn(cluster).await
        }
        async fn pause(&self, pause: Duration) -> Result<(), CloudError> {
            tokio::task::yield_now().await;
            self.0.pause(pause).await
        }
        fn now(&self) -> Duration {
            self.0.now()
        }
    }

    #[tokio::test]
    async fn pools_on_one_aks_cluster_applied_in_parallel_take_turns_instead_of_being_refused() {
        let api = Yielding(FakeNodeGroups::for_cloud(Cloud::Azure).with_settle_after(2));
        let c = aks_cluster();
        let pool = |tag: &str| {
            vec![
                aks_group(&format!("go{tag}"), CapacityType::OnDemand, "Install"),
                aks_group(&format!("gs{tag}"), CapacityType::Spot, "Install"),
            ]
        };
        let (a, b) = (pool("aaaaaaaaaa"), pool("bbbbbbbbbb"));
        let t = Timeouts::default();
        let (ra, rb) = tokio::join!(
            apply(&api, &c, &a, &[], &t, "a"),
            apply(&api, &c, &b, &[], &t, "b")
        );
        for r in [&ra, &rb] {
            assert_eq!(r.error, None, "{:?}", r.error);
            assert_eq!(r.live.len(), 2);
            assert_eq!(r.waits.refused, 0, "nothing was refused: {:?}", r.waits);
        }
        assert_eq!(api.0.groups().len(), 4);
        // One operation at a time: every create is followed by its group's wait to ACTIVE
        // before the next create, whichever pool it belongs to.
        let calls = api.0.calls();
        let creates: Vec<usize> = (0..calls.len())
            .filter(|&i| calls[i].0 == Op::Create)
            .collect();
        assert_eq!(creates.len(), 4, "{calls:?}");
        for w in creates.windows(2) {
            let name = &calls[w[0]].2;
            let polls = calls[w[0]..w[1]]
                .iter()
                .filter(|(op, _, n)| *op == Op::Get && n == name)
                .count();
            assert!(
                polls >= 2,
                "{name} settled before the next create: {calls:?}"
            );
        }
    }
}
