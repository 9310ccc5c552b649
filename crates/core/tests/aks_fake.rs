//! `clouds::azure::Aks` against the ARM/AKS and Entra ID fakes of `acceptance/fakes`
//! (started once per test binary by `run_azure.py`), through the real credential code:
//! `azure_identity`'s client-secret credential gets its token from the local Entra ID.
//! Results are checked in the fake's own state (`/_fake/state`), not only through the
//! adapter's reads. The fakes come from the acceptance venv (`make venv`); a missing venv
//! fails the tests: they are not skipped silently.
#![cfg(feature = "azure")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use gpu_core::cancel::Cancel;
use gpu_core::clouds::azure::{Aks, AzureSession, AzureSettings};
use gpu_core::retry::{Backoff as RetryBackoff, RetryPolicy};
use gpu_core::seam::poll::Backoff;
use gpu_core::seam::{
    AzureClass, CapacityType, CloudError, ClusterRef, GroupSpec, NodeClass, NodeGroupStatus,
    NodeGroups, Scaling, Taint, TaintEffect, WaitTarget,
};
use serde_json::{Value, json};

const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT: &str = "9a1b2c3d-0000-4000-8000-00000000c0de";
const SECRET: &str = "fake-client-secret-Zq8~not.a.real.one";
const SUB: &str = "00000000-1111-4222-8333-444444444444";
const WAIT: Duration = Duration::from_secs(20);

/// The running fakes, shared by every test of this binary (each test seeds its own
/// cluster, as AKS runs one operation per cluster).
struct Fakes {
    _child: Child,
    aad: String,
    arm: String,
    /// The test CA the fakes' HTTPS certificates come from.
    ca_pem: String,
}

fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates = Vec::new();
    if let Some(v) = std::env::var_os("VENV") {
        candidates.push(PathBuf::from(v).join("bin/python"));
    }
    candidates.push(root.join(".venv/bin/python"));
    candidates
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "the acceptance venv's python was not found ($VENV/bin, .venv/bin): run `make venv`"
            )
        })
}

fn fakes() -> &'static Fakes {
    static FAKES: OnceLock<Fakes> = OnceLock::new();
    FAKES.get_or_init(|| {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../acceptance/fakes/azure/run_azure.py");
        let dir = std::env::temp_dir().join(format!("gpu-core-aks-fake-{}", std::process::id()));
        let mut child = Command::new(python())
            .arg(script)
            .args([TENANT, CLIENT, SECRET])
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start run_azure.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read the fakes' URLs");
        let urls: Value = serde_json::from_str(&line).expect("the fakes' URL line");
        Fakes {
            aad: urls["aad"].as_str().unwrap().to_string(),
            arm: urls["arm"].as_str().unwrap().to_string(),
            ca_pem: std::fs::read_to_string(urls["ca"].as_str().unwrap()).expect("the CA"),
            _child: child,
        }
    })
}

/// The variables of a service principal whose token comes from the local Entra ID.
fn vars(secret: &'static str) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
    let aad = fakes().aad.clone();
    move |name: &str| match name {
        "AZURE_TENANT_ID" => Some(TENANT.into()),
        "AZURE_CLIENT_ID" => Some(CLIENT.into()),
        "AZURE_CLIENT_SECRET" => Some(secret.into()),
        "AZURE_AUTHORITY_HOST" => Some(aad.clone()),
        _ => None,
    }
}

fn aks_with(secret: &'static str) -> Aks {
    let settings = AzureSettings {
        endpoint: Some(fakes().arm.clone()),
        backoff: Some(Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(100),
        }),
        retry: Some(RetryPolicy {
            max_attempts: 4,
            max_throttled_attempts: 4,
            backoff: RetryBackoff {
                initial: Duration::from_millis(10),
                max: Duration::from_millis(50),
            },
        }),
        ca_pem: Some(fakes().ca_pem.clone()),
        ..AzureSettings::default()
    };
    AzureSession::with_vars(settings, vars(secret))
        .aks(&Cancel::new())
        .unwrap()
}

fn aks() -> Aks {
    aks_with(SECRET)
}

/// A call to the ARM fake's control surface (`/_fake/...`): GET without a body.
async fn control(path: &str, body: Option<Value>) -> Value {
    let url = format!("{}/_fake/{path}", fakes().arm);
    let c = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(fakes().ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let resp = match body {
        Some(b) => {
            c.post(&url)
                .header("Content-Type", "application/json")
                .body(b.to_string())
                .send()
                .await
        }
        None => c.get(&url).send().await,
    }
    .expect("fake control call");
    let bytes = resp.bytes().await.expect("control body");
    serde_json::from_slice(&bytes).expect("control JSON")
}

async fn seed(name: &str) -> ClusterRef {
    control(
        "clusters",
        Some(json!({"subscription": SUB, "resource_group": "rg", "name": name, "location": "eastus"})),
    )
    .await;
    ClusterRef::Aks {
        subscription: SUB.into(),
        resource_group: "rg".into(),
        name: name.into(),
    }
}

/// The stored pool `pool` of cluster `cluster`, as the fake holds it.
async fn stored(cluster: &str, pool: &str) -> Option<Value> {
    let state = control("state", None).await;
    state["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == cluster)
        .and_then(|c| c["agentPools"].get(pool).cloned())
}

fn spec(name: &str, capacity: CapacityType, min: u32, max: u32) -> GroupSpec {
    GroupSpec {
        name: name.into(),
        capacity,
        machine_types: vec!["Standard_NC24ads_A100_v4".into()],
        scaling: Scaling {
            min,
            max,
            desired: None,
        },
        labels: BTreeMap::from([
            ("gpu.tf/pool".into(), "train".into()),
            ("gpu.tf/capacity-type".into(), capacity.label_value().into()),
        ]),
        taints: vec![Taint {
            key: "nvidia.com/gpu".into(),
            value: "present".into(),
            effect: TaintEffect::NoSchedule,
        }],
        tags: BTreeMap::from([
            ("gpu-tf-pool".into(), "train".into()),
            ("team".into(), "ml".into()),
        ]),
        class: NodeClass::Azure(AzureClass {
            subnet: None,
            zones: vec![],
            os_sku: "Ubuntu".into(),
            gpu_driver: "Install".into(),
            deallocate_evicted: false,
            capacity_reservation_group: None,
        }),
    }
}

#[tokio::test]
async fn pools_are_created_read_updated_listed_and_deleted() {
    let aks = aks();
    let c = seed("life").await;
    let spot = spec("gs1", CapacityType::Spot, 0, 3);
    let created = aks.create_group(&c, &spot, "t").await.unwrap();
    assert_eq!(created.status, NodeGroupStatus::Creating);
    let ready = aks
        .wait_until(&c, "gs1", WaitTarget::Active, WAIT)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ready.status, NodeGroupStatus::Active);
    // Read back without AKS's own spot label and taint: no drift.
    let mut want = spot.clone();
    want.scaling.desired = Some(0);
    assert_eq!(ready.spec, want);
    // What ARM holds, read from the fake itself.
    let p = stored("life", "gs1").await.expect("gs1 stored")["properties"].clone();
    assert_eq!(p["scaleSetPriority"], "Spot");
    assert_eq!(p["scaleSetEvictionPolicy"], "Delete");
    assert_eq!(p["spotMaxPrice"], -1.0);
    assert_eq!(p["vmSize"], "Standard_NC24ads_A100_v4");
    assert_eq!(p["mode"], "User");
    assert_eq!(
        (
            p["enableAutoScaling"].clone(),
            p["minCount"].clone(),
            p["maxCount"].clone()
        ),
        (json!(true), json!(0), json!(3))
    );
    assert_eq!(p["gpuProfile"]["driver"], "Install");
    assert_eq!(
        p["nodeLabels"]["kubernetes.azure.com/scalesetpriority"],
        "spot"
    );
    assert_eq!(p["tags"]["gpu-tf-pool"], "train");
    assert_eq!(p["provisioningState"], "Succeeded");

    // The floor: a fixed count, no autoscaling; created only once gs1's operation is over.
    let floor = spec("go1", CapacityType::OnDemand, 1, 1);
    aks.create_group(&c, &floor, "t").await.unwrap();
    aks.wait_until(&c, "go1", WaitTarget::Active, WAIT)
        .await
        .unwrap();
    let p = stored("life", "go1").await.unwrap()["properties"].clone();
    assert_eq!(
        (
            p["count"].clone(),
            p["enableAutoScaling"].clone(),
            p["scaleSetPriority"].clone()
        ),
        (json!(1), json!(false), json!("Regular"))
    );

    let mut names = aks.list_groups(&c).await.unwrap();
    names.sort();
    assert_eq!(names, ["go1", "gs1", "nodepool1"]);

    // In place: labels, a taint, a tag and the ceiling, one PUT.
    let live = aks.get_group(&c, "gs1").await.unwrap().unwrap();
    let mut changed = spot.clone();
    changed.labels.insert("workload".into(), "training".into());
    changed.tags.insert("project".into(), "llm".into());
    changed.scaling.max = 5;
    assert!(aks.update_group(&c, &live, &changed).await.unwrap());
    let after = aks
        .wait_until(&c, "gs1", WaitTarget::Active, WAIT)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.spec.labels["workload"], "training");
    assert_eq!(after.spec.scaling.max, 5);
    let p = stored("life", "gs1").await.unwrap()["properties"].clone();
    assert_eq!(
        (p["maxCount"].clone(), p["tags"]["project"].clone()),
        (json!(5), json!("llm"))
    );
    // Nothing to change: no call, no operation.
    assert!(!aks.update_group(&c, &after, &changed).await.unwrap());

    aks.delete_group(&c, "gs1").await.unwrap();
    assert_eq!(
        aks.wait_until(&c, "gs1", WaitTarget::Deleted, WAIT)
            .await
            .unwrap(),
        None
    );
    assert!(
        stored("life", "gs1").await.is_none(),
        "ARM no longer holds gs1"
    );
    assert_eq!(aks.get_group(&c, "gs1").await.unwrap(), None);
    assert!(matches!(
        aks.delete_group(&c, "gs1").await,
        Err(CloudError::NotFound(_))
    ));
}

#[tokio::test]
async fn one_operation_per_cluster_and_no_overwrite_of_an_existing_pool() {
    let aks = aks();
    let c = seed("serial").await;
    aks.create_group(&c, &spec("gs1", CapacityType::Spot, 0, 2), "t")
        .await
        .unwrap();
    // A second mutation while the first runs: AKS's 409 OperationNotAllowed, read as
    // busy (nothing was done; the reconcile sends it again once the cluster is free).
    let busy = aks
        .create_group(&c, &spec("gs2", CapacityType::Spot, 0, 2), "t")
        .await
        .unwrap_err();
    assert!(
        matches!(&busy, CloudError::Busy(m) if m.contains("OperationNotAllowed") && m.contains("in progress")),
        "{busy}"
    );
    aks.wait_until(&c, "gs1", WaitTarget::Active, WAIT)
        .await
        .unwrap();
    // The same name again: a conflict, never a silent overwrite.
    let again = aks
        .create_group(&c, &spec("gs1", CapacityType::Spot, 0, 9), "t")
        .await
        .unwrap_err();
    assert!(
        matches!(&again, CloudError::Conflict(m) if m.contains("already exists")),
        "{again}"
    );
    let p = stored("serial", "gs1").await.unwrap()["properties"].clone();
    assert_eq!(p["maxCount"], 2, "the existing pool is untouched");
}

#[tokio::test]
async fn throttling_is_retried_and_a_failed_operation_is_an_error() {
    let aks = aks();
    let c = seed("faults").await;
    control(
        "faults",
        Some(json!({"faults": [{"method": "PUT", "path": ".*/agentPools/gs1", "status": 429, "count": 2, "retry_after": 0}]})),
    )
    .await;
    aks.create_group(&c, &spec("gs1", CapacityType::Spot, 0, 2), "t")
        .await
        .unwrap();
    let state = control("state", None).await;
    let injected = state["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["injected"] == true && r["method"] == "PUT")
        .count();
    assert_eq!(
        injected, 2,
        "two 429s answered, then the third PUT went through"
    );
    aks.wait_until(&c, "gs1", WaitTarget::Active, WAIT)
        .await
        .unwrap();

    control(
        "faults",
        Some(json!({"fail_next_operation": {"code": "AllocationFailed", "message": "no A100 capacity in eastus"}})),
    )
    .await;
    aks.create_group(&c, &spec("gs2", CapacityType::Spot, 0, 2), "t")
        .await
        .unwrap();
    let e = aks
        .wait_until(&c, "gs2", WaitTarget::Active, WAIT)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CloudError::InsufficientCapacity(m) if m.contains("no A100 capacity")),
        "{e}"
    );
}

#[tokio::test]
async fn a_wrong_secret_is_unauthorized_and_never_shown() {
    let aks = aks_with("the-wrong-secret-4711");
    let c = seed("auth").await;
    let e = aks.get_group(&c, "gs1").await.unwrap_err();
    assert!(matches!(e, CloudError::Unauthorized(_)), "{e}");
    let text = format!("{e} {e:?} {aks:?}");
    assert!(!text.contains("the-wrong-secret-4711"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
    // No request reached ARM without a token.
    let state = control("state", None).await;
    assert!(
        state["requests"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["bearer"] == true),
        "{state}"
    );
}

#[tokio::test]
async fn another_clouds_cluster_is_refused_before_any_call() {
    let aks = aks();
    let eks = ClusterRef::Eks {
        region: "us-east-1".into(),
        name: "gpu".into(),
    };
    assert!(matches!(
        aks.get_group(&eks, "gs1").await,
        Err(CloudError::Invalid(_))
    ));
}

#[tokio::test]
async fn the_cluster_region_is_its_location_and_reclaimed_spot_vms_can_be_deallocated() {
    let aks = aks();
    let c = seed("where").await;
    assert_eq!(
        aks.cluster_region(&c).await.unwrap().as_deref(),
        Some("eastus")
    );
    let mut keep = spec("gs1", CapacityType::Spot, 0, 2);
    if let NodeClass::Azure(class) = &mut keep.class {
        class.deallocate_evicted = true;
    }
    aks.create_group(&c, &keep, "t").await.unwrap();
    let ready = aks
        .wait_until(&c, "gs1", WaitTarget::Active, WAIT)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ready.spec.class, keep.class);
    let p = stored("where", "gs1").await.unwrap()["properties"].clone();
    assert_eq!(p["scaleSetEvictionPolicy"], "Deallocate");
    let gone = ClusterRef::Aks {
        subscription: SUB.into(),
        resource_group: "rg".into(),
        name: "nowhere".into(),
    };
    assert!(matches!(
        aks.cluster_region(&gone).await,
        Err(CloudError::NotFound(_))
    ));
}
