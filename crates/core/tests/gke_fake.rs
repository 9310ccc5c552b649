//! `clouds::gcp::Gke` against the fake GKE API of `acceptance/fakes` (Container API v1
//! node pools, operations that only advance when polled, one operation per cluster,
//! bearer tokens checked), started per test by `fixtures/gke_fake.py`.
//!
//! Python comes from the acceptance venv (`$VENV`, else `.venv` in the repository root;
//! `make venv`). A missing venv fails the tests: they are not skipped silently. The
//! fake's own state (`/_fake/state`) is what the assertions read, not only our reads.
#![cfg(feature = "gcp")]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use gpu_core::cancel::Cancel;
use gpu_core::clouds::gcp::auth::AccessToken;
use gpu_core::clouds::gcp::{GcpSession, GcpSettings, Gke};
use gpu_core::retry::{Backoff as RetryBackoff, RetryPolicy};
use gpu_core::seam::poll::Backoff;
use gpu_core::seam::{
    CapacityType, CloudError, ClusterRef, GcpClass, GroupSpec, NodeClass, NodeGroupStatus,
    NodeGroups, Scaling, Taint, TaintEffect, WaitTarget,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// The fake servers; stopped (stdin closed, then killed) on drop.
struct Fake {
    child: Child,
    stdin: Option<ChildStdin>,
    gke: String,
    key_file: String,
    access_token: String,
}

impl Drop for Fake {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(v) = std::env::var_os("VENV") {
        candidates.push(PathBuf::from(v).join("bin/python"));
    }
    candidates.push(root().join(".venv/bin/python"));
    candidates
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "the acceptance venv's python was not found ($VENV/bin/python, .venv/bin/python): \
                 run `make venv` in the repository root, or set VENV"
            )
        })
}

fn start() -> Fake {
    let py = python();
    let mut child = Command::new(&py)
        .arg(root().join("crates/core/tests/fixtures/gke_fake.py"))
        .env("PYTHONPATH", root().join("acceptance"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e} (run `make venv`)", py.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("reading the fake's URLs");
    let v: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("the GKE fake did not start ({e}): {line:?}"));
    let s = |k: &str| v[k].as_str().expect(k).to_string();
    Fake {
        stdin: child.stdin.take(),
        child,
        gke: s("gke"),
        key_file: s("key_file"),
        access_token: s("access_token"),
    }
}

fn cluster() -> ClusterRef {
    ClusterRef::Gke {
        project: "fake-project".into(),
        location: "us-central1".into(),
        name: "gke1".into(),
    }
}

fn options(fake: &Fake, token: Option<&str>) -> GcpSettings {
    GcpSettings {
        endpoint: Some(fake.gke.clone()),
        access_token: token.map(AccessToken::new),
        backoff: Some(Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(100),
        }),
        retry: Some(RetryPolicy {
            max_attempts: 4,
            max_throttled_attempts: 4,
            backoff: RetryBackoff {
                initial: Duration::from_millis(10),
                max: Duration::from_secs(3),
            },
        }),
        attempt_timeout: Some(Duration::from_secs(10)),
        operation_timeout: Some(WAIT),
        ..Default::default()
    }
}

fn adapter(fake: &Fake) -> Gke {
    GcpSession::new(options(fake, Some(&fake.access_token)))
        .gke(&Cancel::new())
        .expect("connect")
}

/// A GPU pool of `capacity` in one zone (so per-zone counts are whole-pool counts).
fn pool(name: &str, capacity: CapacityType) -> GroupSpec {
    GroupSpec {
        name: name.into(),
        capacity,
        machine_types: vec!["g2-standard-8".into()],
        scaling: Scaling {
            min: 0,
            max: 4,
            desired: Some(2),
        },
        labels: [("gpu.tf/pool".to_string(), "train".to_string())].into(),
        taints: vec![Taint {
            key: "team".into(),
            value: "ml".into(),
            effect: TaintEffect::PreferNoSchedule,
        }],
        tags: [("gpu-tf-pool".to_string(), "train".to_string())].into(),
        class: NodeClass::Gcp(GcpClass {
            locations: vec!["us-central1-a".into()],
            image_type: "COS_CONTAINERD".into(),
            driver_version: "LATEST".into(),
            accelerator_type: Some("nvidia-l4".into()),
            accelerator_count: 1,
            ..Default::default()
        }),
    }
}

async fn control(fake: &Fake, method: reqwest::Method, path: &str, body: Value) -> Value {
    let c = reqwest::Client::new();
    let r = c
        .request(method, format!("{}/_fake/{path}", fake.gke))
        .json(&body)
        .send()
        .await
        .expect("fake control");
    assert!(
        r.status().is_success(),
        "fake control {path}: {}",
        r.status()
    );
    r.json().await.expect("fake control JSON")
}

async fn state(fake: &Fake) -> Value {
    control(fake, reqwest::Method::GET, "state", json!({})).await
}

/// The fake's stored pool `name` (exactly as GKE's GET answers it).
async fn stored(fake: &Fake, name: &str) -> Value {
    state(fake).await["clusters"][0]["nodePools"][name].clone()
}

async fn create_ready(api: &Gke, spec: &GroupSpec) {
    let g = api
        .create_group(&cluster(), spec, "t")
        .await
        .expect("create");
    assert_eq!(
        g.status,
        NodeGroupStatus::Creating,
        "GKE reports PROVISIONING"
    );
    let g = api
        .wait_until(&cluster(), &spec.name, WaitTarget::Active, WAIT)
        .await
        .expect("wait")
        .expect("exists");
    assert_eq!(g.status, NodeGroupStatus::Active);
}

#[tokio::test]
async fn on_demand_and_spot_pools_are_created_updated_listed_and_deleted() {
    let fake = start();
    let api = adapter(&fake);
    let od = pool("train-od", CapacityType::OnDemand);
    let spot = pool("train-spot", CapacityType::Spot);
    create_ready(&api, &od).await;
    create_ready(&api, &spot).await;

    // What the fake stored, read without our client code.
    let s = stored(&fake, "train-spot").await;
    assert_eq!(s["config"]["spot"], json!(true));
    assert_eq!(s["config"]["machineType"], "g2-standard-8");
    assert_eq!(
        s["config"]["accelerators"],
        json!([{"acceleratorCount": "1", "acceleratorType": "nvidia-l4",
                "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}])
    );
    assert_eq!(
        s["autoscaling"],
        json!({"enabled": true, "totalMinNodeCount": 0, "totalMaxNodeCount": 4,
               "locationPolicy": "ANY"})
    );
    assert_eq!(s["initialNodeCount"], json!(2));
    assert_eq!(s["locations"], json!(["us-central1-a"]));
    assert_eq!(
        s["config"]["resourceLabels"],
        json!({"gpu-tf-pool": "train"})
    );
    assert_eq!(s["config"]["labels"], json!({"gpu.tf/pool": "train"}));
    assert_eq!(s["status"], "RUNNING");
    let o = stored(&fake, "train-od").await;
    assert!(o["config"].get("spot").is_none(), "{o}");
    assert_eq!(o["autoscaling"]["locationPolicy"], "BALANCED");
    // GKE tainted the GPU pool itself (the cluster has a non-GPU pool) ...
    let taint_keys: Vec<&str> = s["config"]["taints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(taint_keys, ["team", "nvidia.com/gpu"]);
    // ... and our read strips it: the pool reads back as asked.
    let live = api
        .get_group(&cluster(), "train-spot")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.spec, spot);
    assert_eq!(
        live.id,
        "projects/fake-project/locations/us-central1/clusters/gke1/nodePools/train-spot"
    );

    // In place: counts, labels, taints, resource labels.
    let mut want = spot.clone();
    want.scaling = Scaling {
        min: 1,
        max: 5,
        desired: Some(3),
    };
    want.labels.insert("gpu.tf/tier".into(), "gold".into());
    want.taints = vec![Taint {
        key: "dedicated".into(),
        value: "train".into(),
        effect: TaintEffect::NoExecute,
    }];
    want.tags.insert("team".into(), "ml".into());
    assert!(api.update_group(&cluster(), &live, &want).await.unwrap());
    api.wait_until(&cluster(), "train-spot", WaitTarget::Active, WAIT)
        .await
        .unwrap()
        .unwrap();
    let st = state(&fake).await;
    let s = &st["clusters"][0]["nodePools"]["train-spot"];
    assert_eq!(
        s["autoscaling"],
        json!({"enabled": true, "totalMinNodeCount": 1, "totalMaxNodeCount": 5,
               "locationPolicy": "ANY"})
    );
    assert_eq!(st["clusters"][0]["node_counts"]["train-spot"], json!(3));
    assert_eq!(
        s["config"]["labels"],
        json!({"gpu.tf/pool": "train", "gpu.tf/tier": "gold"})
    );
    assert_eq!(
        s["config"]["taints"],
        json!([{"key": "dedicated", "value": "train", "effect": "NO_EXECUTE"},
               {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]),
        "GKE's own GPU taint is kept when ours are replaced"
    );
    assert_eq!(
        s["config"]["resourceLabels"],
        json!({"gpu-tf-pool": "train", "team": "ml"})
    );
    assert_eq!(s["status"], "RUNNING");
    // One operation at a time: no mutation was refused on the way.
    let refused: Vec<&Value> = st["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"].as_u64() != Some(200))
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
    let writes: Vec<String> = st["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] != "GET")
        .map(|r| {
            format!(
                "{} {}",
                r["method"].as_str().unwrap(),
                r["path"].as_str().unwrap()
            )
        })
        .collect();
    let base = "/v1/projects/fake-project/locations/us-central1/clusters/gke1/nodePools";
    assert_eq!(
        writes,
        [
            format!("POST {base}"),
            format!("POST {base}"),
            format!("POST {base}/train-spot:setAutoscaling"),
            format!("POST {base}/train-spot:setSize"),
            format!("PUT {base}/train-spot"),
        ]
    );
    let live = api
        .get_group(&cluster(), "train-spot")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (live.spec.labels, live.spec.taints),
        (want.labels, want.taints)
    );

    let mut names = api.list_groups(&cluster()).await.unwrap();
    names.sort();
    assert_eq!(names, ["default-pool", "train-od", "train-spot"]);

    for name in ["train-spot", "train-od"] {
        api.delete_group(&cluster(), name).await.unwrap();
        let gone = api
            .wait_until(&cluster(), name, WaitTarget::Deleted, WAIT)
            .await
            .unwrap();
        assert!(gone.is_none());
    }
    let st = state(&fake).await;
    let left: Vec<&String> = st["clusters"][0]["nodePools"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, ["default-pool"]);
    assert_eq!(api.get_group(&cluster(), "train-od").await, Ok(None));
    assert!(matches!(
        api.delete_group(&cluster(), "train-od").await,
        Err(CloudError::NotFound(_))
    ));
    // Every call carried the opaque token it was given.
    assert!(
        st["requests"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["auth"] == "opaque")
    );
}

#[tokio::test]
async fn missing_pools_and_clusters() {
    let fake = start();
    let api = adapter(&fake);
    assert_eq!(api.get_group(&cluster(), "nope").await, Ok(None));
    let other = ClusterRef::Gke {
        project: "fake-project".into(),
        location: "us-central1".into(),
        name: "other".into(),
    };
    assert_eq!(api.get_group(&other, "nope").await, Ok(None));
    match api.list_groups(&other).await {
        Err(CloudError::NotFound(m)) => assert!(m.contains("clusters/other"), "{m}"),
        e => panic!("{e:?}"),
    }
    let eks = ClusterRef::Eks {
        region: "us-east-1".into(),
        name: "x".into(),
    };
    assert!(matches!(
        api.list_groups(&eks).await,
        Err(CloudError::Invalid(_))
    ));
}

#[tokio::test]
async fn a_second_mutation_while_an_operation_runs_is_refused_as_busy() {
    let fake = start();
    let api = adapter(&fake);
    api.create_group(&cluster(), &pool("first", CapacityType::OnDemand), "t")
        .await
        .unwrap();
    let second = pool("second", CapacityType::Spot);
    match api.create_group(&cluster(), &second, "t").await {
        Err(CloudError::Busy(m)) => {
            assert!(m.contains("FAILED_PRECONDITION"), "{m}");
            assert!(m.contains("incompatible operation"), "{m}");
            assert!(!m.contains(&fake.access_token));
        }
        other => panic!("{other:?}"),
    }
    assert!(stored(&fake, "second").await.is_null());
    // Once the first operation is polled to DONE the cluster takes the next one.
    api.wait_until(&cluster(), "first", WaitTarget::Active, WAIT)
        .await
        .unwrap();
    create_ready(&api, &second).await;
    assert_eq!(stored(&fake, "second").await["status"], "RUNNING");
}

#[tokio::test]
async fn a_failed_operation_is_typed() {
    let fake = start();
    let api = adapter(&fake);
    control(
        &fake,
        reqwest::Method::POST,
        "faults",
        json!({"fail_next_operation": {"status": "RESOURCE_EXHAUSTED",
            "message": "ZONE_RESOURCE_POOL_EXHAUSTED: no nvidia-l4 in us-central1-a"}}),
    )
    .await;
    api.create_group(&cluster(), &pool("gpu", CapacityType::Spot), "t")
        .await
        .unwrap();
    let e = api
        .wait_until(&cluster(), "gpu", WaitTarget::Active, WAIT)
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::InsufficientCapacity(_)), "{e}");
    let g = api.get_group(&cluster(), "gpu").await.unwrap().unwrap();
    assert_eq!(g.status, NodeGroupStatus::CreateFailed);
}

#[tokio::test]
async fn throttling_is_retried_after_the_servers_wish() {
    let fake = start();
    let api = adapter(&fake);
    control(
        &fake,
        reqwest::Method::POST,
        "faults",
        json!({"method": "GET", "path": "/nodePools$", "status": 429, "count": 2,
               "retry_after": 1}),
    )
    .await;
    let t = Instant::now();
    let names = api.list_groups(&cluster()).await.unwrap();
    assert_eq!(names, ["default-pool"]);
    // Our backoff alone would have waited ~10-20 ms; Retry-After asked for 1 s twice.
    assert!(
        t.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        t.elapsed()
    );
    let st = state(&fake).await;
    let statuses: Vec<u64> = st["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [429, 429, 200]);
    // More throttling than the policy's attempts: a typed error saying so.
    control(
        &fake,
        reqwest::Method::POST,
        "faults",
        json!({"method": "GET", "path": "/nodePools$", "status": 429, "count": 9}),
    )
    .await;
    match api.list_groups(&cluster()).await {
        Err(CloudError::Throttled(m)) => assert!(m.ends_with("(after 4 attempts)"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_wrong_token_is_unauthorized_and_never_printed() {
    let fake = start();
    let secret = "ya29.this-is-not-a-valid-token-SECRET";
    let opts = options(&fake, Some(secret));
    assert!(!format!("{opts:?}").contains("SECRET"));
    let api = GcpSession::new(opts).gke(&Cancel::new()).unwrap();
    assert!(!format!("{api:?}").contains("SECRET"));
    let errors = [
        api.get_group(&cluster(), "x").await.unwrap_err(),
        api.create_group(&cluster(), &pool("x", CapacityType::Spot), "t")
            .await
            .unwrap_err(),
    ];
    for e in &errors {
        assert!(matches!(e, CloudError::Unauthorized(_)), "{e}");
        for text in [e.to_string(), format!("{e:?}")] {
            assert!(!text.contains("SECRET") && !text.contains(secret), "{text}");
        }
    }
    assert!(
        errors[0]
            .to_string()
            .contains("invalid authentication credentials")
    );
    // Not retried: a 401 does not pass by itself.
    let st = state(&fake).await;
    assert_eq!(st["requests"].as_array().unwrap().len(), 2);
}

/// Runs `adc_child` in a child process whose only credential is
/// GOOGLE_APPLICATION_CREDENTIALS (env vars are per process; setting them here would be
/// `unsafe`), and checks the fake saw google-cloud-auth's self-signed JWTs.
#[tokio::test]
async fn a_service_account_key_file_is_used_through_application_default_credentials() {
    let fake = start();
    let home = std::env::temp_dir().join(format!("gke-adc-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "adc_child", "--ignored", "--nocapture"])
        .env("GOOGLE_APPLICATION_CREDENTIALS", &fake.key_file)
        .env("GKE_FAKE_URL", &fake.gke)
        .env("HOME", &home)
        .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
        .env_remove("CLOUDSDK_CONFIG")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&home);
    let log =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("1 passed"), "the child ran the test: {log}");
    let st = state(&fake).await;
    let auth: Vec<&str> = st["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["auth"].as_str().unwrap_or("none"))
        .collect();
    assert!(!auth.is_empty());
    assert!(auth.iter().all(|a| *a == "self-signed-jwt"), "{auth:?}");
    assert_eq!(stored(&fake, "adc-pool").await["status"], "RUNNING");
}

/// The child of the test above (ignored unless run by it).
#[tokio::test]
#[ignore = "run by a_service_account_key_file_is_used_through_application_default_credentials"]
async fn adc_child() {
    let url = std::env::var("GKE_FAKE_URL").expect("run by its parent test");
    let opts = GcpSettings {
        endpoint: Some(url),
        access_token: None,
        backoff: Some(Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(100),
        }),
        ..Default::default()
    };
    let api = GcpSession::new(opts)
        .gke(&Cancel::new())
        .expect("ADC from the key file");
    let spec = pool("adc-pool", CapacityType::OnDemand);
    create_ready(&api, &spec).await;
    let got = api
        .get_group(&cluster(), "adc-pool")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.spec, spec);
}

#[tokio::test]
async fn the_nodes_up_are_those_the_pools_instance_groups_run() {
    let fake = start();
    let api = adapter(&fake);
    let spec = pool("floor-od", CapacityType::OnDemand);
    create_ready(&api, &spec).await;
    let live = api
        .get_group(&cluster(), "floor-od")
        .await
        .expect("get")
        .expect("exists");
    // One instance group in the pool's one zone, with its two nodes running.
    let urls = stored(&fake, "floor-od").await["instanceGroupUrls"].clone();
    assert_eq!(urls.as_array().map(Vec::len), Some(1), "{urls}");
    assert_eq!(
        api.nodes_up(&cluster(), &live).await.expect("count"),
        Some(2)
    );
    // Compute was asked for that group, with the session's token.
    let asked: Vec<Value> = state(&fake).await["requests"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| {
            r["path"]
                .as_str()
                .is_some_and(|p| p.contains("/instanceGroupManagers/"))
        })
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0]["path"]
            .as_str()
            .unwrap()
            .starts_with("/compute/v1/projects/fake-project/zones/us-central1-a/")
    );
    assert_eq!(asked[0]["bearer"], json!(true));
}
