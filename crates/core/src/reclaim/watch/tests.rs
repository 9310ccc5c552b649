use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::instance::fake::FakeInstances;
use crate::instance::{InstanceClass, LaunchSpec, MARKER_LABEL, ReclaimPolicy};
use crate::offer::Cloud;
use crate::retry::Backoff;
use crate::test_support::block_on;

fn spec(name: &str) -> LaunchSpec {
    LaunchSpec {
        name: name.into(),
        region: "us-central1".into(),
        zone: Some("us-central1-a".into()),
        machine_type: "a2-highgpu-1g".into(),
        spot: true,
        reclaim: ReclaimPolicy::Stop,
        image: "img".into(),
        disk_size_gb: 200,
        labels: BTreeMap::from([(MARKER_LABEL.to_string(), name.to_string())]),
        user_data: None,
        class: InstanceClass::Gcp {
            project: "p".into(),
            network: None,
            subnetwork: None,
            service_account: None,
        },
    }
}

fn quick() -> StartSchedule {
    StartSchedule {
        backoff: Backoff {
            initial: Duration::from_secs(60),
            max: Duration::from_secs(60),
        },
        give_up_after: Duration::from_secs(3600),
    }
}

fn kinds(events: &[Event]) -> Vec<EventKind> {
    events.iter().map(|e| e.event).collect()
}

#[test]
fn a_reclaimed_vm_is_started_again_after_the_shortage_same_instance_and_disk() {
    let cloud = FakeInstances::new(Cloud::Gcp, false);
    let vm = block_on(cloud.launch(&spec("train"))).unwrap();
    cloud.reclaim(&vm.id, 1000);
    cloud.set_short(2);
    let mut w = Watcher::new(quick());
    let catalog = Catalog::embedded();
    let mut all = Vec::new();
    // Passes every minute: two refused starts, then one accepted, then running.
    for minute in 0..6 {
        all.extend(block_on(w.pass(&cloud, catalog, 1000 + 60 * minute)).unwrap());
    }
    assert_eq!(
        kinds(&all),
        [
            EventKind::Reclaimed,
            EventKind::StartAttempt,
            EventKind::StartAttempt,
            EventKind::StartAttempt,
            EventKind::Started
        ]
    );
    assert_eq!(all[0].gpu.as_deref(), Some("A100-40GB"));
    assert!(all[1].detail.as_deref().unwrap().contains("capacity"));
    assert_eq!(all[3].attempt, Some(3));
    assert_eq!(cloud.starts(), 3);
    let back = cloud.vm(&vm.id).unwrap();
    assert_eq!((back.unique_id, back.disk_ids), (vm.unique_id, vm.disk_ids));
    assert_eq!(w.pending(), 0);
    let summary = crate::reclaim::Summary::of(&all);
    let row = &summary.rows[&("gcp".to_string(), "A100-40GB".to_string())];
    assert_eq!((row.reclaims, row.recovered, row.start_attempts), (1, 1, 3));
}

#[test]
fn a_vm_a_person_stopped_is_never_started_and_said_once() {
    let cloud = FakeInstances::new(Cloud::Gcp, false);
    let vm = block_on(cloud.launch(&spec("dev"))).unwrap();
    cloud.stop_by_person(&vm.id);
    let mut w = Watcher::new(quick());
    let mut all = Vec::new();
    for minute in 0..5 {
        all.extend(block_on(w.pass(&cloud, Catalog::embedded(), 60 * minute)).unwrap());
    }
    assert_eq!(kinds(&all), [EventKind::LeftStopped]);
    assert!(all[0].detail.as_deref().unwrap().contains("person"));
    assert_eq!(cloud.starts(), 0);
}

#[test]
fn where_the_cloud_restarts_reclaimed_vms_the_watcher_only_watches() {
    let cloud = FakeInstances::new(Cloud::Aws, true);
    let vm = block_on(cloud.launch(&spec("train"))).unwrap();
    cloud.reclaim(&vm.id, 0);
    cloud.set_short(1);
    let mut w = Watcher::new(quick());
    let mut all = block_on(w.pass(&cloud, Catalog::embedded(), 0)).unwrap();
    cloud.tick(); // still short
    all.extend(block_on(w.pass(&cloud, Catalog::embedded(), 60)).unwrap());
    cloud.tick(); // capacity back: the cloud restarts it
    all.extend(block_on(w.pass(&cloud, Catalog::embedded(), 600)).unwrap());
    assert_eq!(kinds(&all), [EventKind::Reclaimed, EventKind::Started]);
    assert!(all[0].detail.as_deref().unwrap().contains("watching"));
    assert!(all[1].detail.as_deref().unwrap().contains("10 minutes"));
    assert_eq!(
        cloud.starts(),
        0,
        "the watcher never starts what the cloud restarts"
    );
}

#[test]
fn the_watcher_gives_up_after_the_configured_time_and_says_so() {
    let cloud = FakeInstances::new(Cloud::Gcp, false);
    let vm = block_on(cloud.launch(&spec("train"))).unwrap();
    cloud.reclaim(&vm.id, 0);
    cloud.set_short(1000);
    let mut w = Watcher::new(quick());
    let mut all = Vec::new();
    for minute in 0..120 {
        all.extend(block_on(w.pass(&cloud, Catalog::embedded(), 60 * minute)).unwrap());
    }
    let gave_up: Vec<&Event> = all
        .iter()
        .filter(|e| e.event == EventKind::GaveUp)
        .collect();
    assert_eq!(gave_up.len(), 1);
    assert!(
        gave_up[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("give up after 60 minutes")
    );
    let attempts = cloud.starts();
    assert!((20..=61).contains(&attempts), "{attempts} attempts");
    // Nothing more after giving up; the VM is still there, stopped.
    let more = block_on(w.pass(&cloud, Catalog::embedded(), 60 * 200)).unwrap();
    assert!(more.is_empty());
    assert_eq!(cloud.starts(), attempts);
    assert!(cloud.vm(&vm.id).is_some());
    assert!(!cloud.calls().iter().any(|c| c.starts_with("delete")));
}
