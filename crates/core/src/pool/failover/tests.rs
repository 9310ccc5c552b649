use std::time::Duration;

use super::*;
use crate::clouds::fake::{FakeNodeGroups, Op};
use crate::test_support::{block_on as run, eks_pool as pool};

fn cluster(region: &str) -> ClusterRef {
    ClusterRef::Eks {
        region: region.into(),
        name: "train".into(),
    }
}

fn candidate<'a>(api: &'a FakeNodeGroups, region: &str) -> Candidate<'a> {
    Candidate {
        cloud: Cloud::Aws,
        region: region.into(),
        cluster: cluster(region),
        api,
        groups: pool(),
    }
}

fn walked(candidates: &[Candidate<'_>], wait: Duration) -> Walk {
    run(walk(candidates, &Timeouts::default(), wait, "seed"))
}

fn outcomes(w: &Walk) -> Vec<&'static str> {
    w.attempts.iter().map(|a| a.outcome.as_str()).collect()
}

#[test]
fn a_stockout_at_the_first_place_lands_on_the_second_and_leaves_the_first_empty() {
    let (east, west) = (FakeNodeGroups::new(), FakeNodeGroups::new());
    east.inject_after(
        Op::Create,
        1,
        CloudError::InsufficientCapacity("InsufficientInstanceCapacity: none".into()),
    );
    let w = walked(
        &[candidate(&east, "us-east-1"), candidate(&west, "us-west-2")],
        Duration::from_secs(900),
    );
    assert_eq!(outcomes(&w), ["stockout", "ready"]);
    assert_eq!(w.placed, Some(1));
    assert!(east.groups().is_empty(), "{:?}", east.groups());
    assert_eq!(west.groups().len(), 2);
    assert!(
        w.attempts[0]
            .detail
            .contains("InsufficientInstanceCapacity")
    );
    assert_eq!(w.attempts[0].region, "us-east-1");
    assert_eq!(w.attempts[1].detail, "");
    assert_eq!(w.stopped_by(), None);
}

#[test]
fn a_floor_that_does_not_come_up_within_capacity_wait_is_a_timeout_and_cleaned_up() {
    let slow = FakeNodeGroups::new().with_slow_creates(10_000);
    let west = FakeNodeGroups::new();
    let w = walked(
        &[candidate(&slow, "us-east-1"), candidate(&west, "us-west-2")],
        Duration::from_secs(60),
    );
    assert_eq!(outcomes(&w), ["timeout", "ready"]);
    assert!(slow.groups().is_empty(), "{:?}", slow.groups());
    assert_eq!(w.placed, Some(1));
}

#[test]
fn every_place_out_leaves_nothing_anywhere() {
    let (a, b) = (FakeNodeGroups::new(), FakeNodeGroups::new());
    a.inject(Op::Create, CloudError::Quota("VcpuLimitExceeded".into()));
    b.inject(Op::Create, CloudError::NotOffered("Unsupported".into()));
    let w = walked(
        &[candidate(&a, "us-east-1"), candidate(&b, "us-west-2")],
        Duration::from_secs(900),
    );
    assert_eq!(outcomes(&w), ["quota", "not_offered"]);
    assert_eq!(w.placed, None);
    assert!(w.outcome.is_none());
    assert!(a.groups().is_empty() && b.groups().is_empty());
}

#[test]
fn an_error_that_is_not_about_capacity_stops_the_walk_with_what_exists() {
    let (a, b) = (FakeNodeGroups::new(), FakeNodeGroups::new());
    a.inject_after(
        Op::Create,
        1,
        CloudError::Unauthorized("AccessDenied".into()),
    );
    let w = walked(
        &[candidate(&a, "us-east-1"), candidate(&b, "us-west-2")],
        Duration::from_secs(900),
    );
    assert!(w.attempts.is_empty(), "{:?}", w.attempts);
    assert_eq!(w.placed, None);
    let e = w.stopped_by().expect("the error that stopped it");
    assert!(matches!(e.source, CloudError::Unauthorized(_)));
    assert_eq!(e.existing, ["train-od"]);
    assert!(b.calls().is_empty(), "the next place is never asked");
}
