use std::sync::LazyLock;

use super::*;
use crate::clouds::fake::{FakeNodeGroups, Op};
use crate::seam::{CloudError, NodeGroupStatus};
use crate::test_support::{block_on as run, eks_pool as pool};

static C: LazyLock<ClusterRef> = LazyLock::new(|| ClusterRef::Eks {
    region: "us-east-1".into(),
    name: "train-east".into(),
});

fn attempt(api: &FakeNodeGroups) -> CreateAttempt {
    run(create_new(api, &C, &pool(), &Timeouts::default(), "seed"))
}

#[test]
fn a_stockout_after_the_first_group_leaves_nothing_behind() {
    let api = FakeNodeGroups::new();
    api.inject_after(
        Op::Create,
        1,
        CloudError::InsufficientCapacity("InsufficientInstanceCapacity: no p5 spot".into()),
    );
    let a = attempt(&api);
    let refusal = a.refusal.expect("a capacity refusal");
    assert_eq!(refusal.outcome, CapacityOutcome::Stockout);
    assert_eq!(refusal.error.step, "creating node group train-spot");
    assert_eq!(refusal.deleted, ["train-od"]);
    assert_eq!(a.outcome.error, None);
    assert!(a.outcome.live.is_empty());
    assert!(api.groups().is_empty(), "{:?}", api.groups());
}

#[test]
fn a_group_the_cloud_left_failed_is_deleted_too() {
    // The floor group is made, then settles CREATE_FAILED for lack of quota.
    let api = FakeNodeGroups::new();
    api.inject(
        Op::Create,
        CloudError::Quota("VcpuLimitExceeded: vCPU limit of 0".into()),
    );
    let a = attempt(&api);
    let refusal = a.refusal.expect("a capacity refusal");
    assert_eq!(refusal.outcome, CapacityOutcome::Quota);
    assert!(api.groups().is_empty());
    // A failed group left by the cloud: the clean-up names it.
    let api = FakeNodeGroups::new().with_settle_after(0);
    run(api.create_group(&C, &pool()[0], "t")).unwrap();
    api.set_status(&C, "train-od", NodeGroupStatus::CreateFailed, Vec::new());
    let names: Vec<String> = pool().iter().map(|g| g.name.clone()).collect();
    let cleaned = run(reconcile::destroy(
        &api,
        &C,
        &names,
        Timeouts::default().delete,
    ));
    assert_eq!(cleaned.error, None);
    assert!(api.groups().is_empty());
}

#[test]
fn other_errors_keep_what_was_made_for_the_state() {
    let api = FakeNodeGroups::new();
    api.inject_after(
        Op::Create,
        1,
        CloudError::Invalid("InvalidParameterException: bad subnet".into()),
    );
    let a = attempt(&api);
    assert_eq!(a.refusal, None);
    let e = a.outcome.error.expect("the create's error");
    assert_eq!(e.existing, ["train-od"]);
    assert_eq!(api.groups().len(), 1);
}

#[test]
fn a_clean_create_has_no_refusal() {
    let api = FakeNodeGroups::new();
    let a = attempt(&api);
    assert_eq!(a.refusal, None);
    assert_eq!(a.outcome.error, None);
    assert_eq!(a.outcome.live.len(), 2);
}
