//! `cloud::aws::Eks` against a real moto server (EKS + EC2 emulation), started per test.
//!
//! moto comes from the acceptance venv (`make venv`); `MOTO_SERVER` overrides the path.
//! A missing moto fails the tests: they are not skipped silently.
#![cfg(feature = "aws")]

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_eks::config::Credentials;
use aws_sdk_eks::config::retry::RetryConfig;
use gpu_core::cancel::Cancel;
use gpu_core::cloud::aws::{Eks, EksOptions};
use gpu_core::cloud::poll::Backoff;
use gpu_core::cloud::{
    CapacityType, CloudError, NodeGroupRequest, NodeGroupStatus, NodeGroupUpdate, NodeGroups,
    Scaling, Taint, TaintEffect, WaitTarget,
};
use gpu_core::retry::{Backoff as RetryBackoff, RetryPolicy};

const REGION: &str = "us-east-1";
const ROLE: &str = "arn:aws:iam::123456789012:role/eks-nodes";
const CLUSTER: &str = "gpu";
const WAIT: Duration = Duration::from_secs(10);

/// A running moto server; killed on drop.
struct Moto {
    child: Child,
    url: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn moto_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("MOTO_SERVER") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates = Vec::new();
    if let Some(v) = std::env::var_os("VENV") {
        candidates.push(PathBuf::from(v).join("bin/moto_server"));
    }
    candidates.push(root.join(".venv/bin/moto_server"));
    candidates
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "moto_server not found (MOTO_SERVER, $VENV/bin, .venv/bin): run `make venv` \
             in the repository root, or set MOTO_SERVER"
            )
        })
}

fn start_moto() -> Moto {
    let bin = moto_binary();
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut child = Command::new(&bin)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .env("MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION", "true")
        .env("MOTO_ENABLE_AMI_VALIDATION", "true")
        .env("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_DEFAULT_REGION", REGION)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e} (run `make venv`)", bin.display()));
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("moto_server exited early: {st}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "moto_server did not listen on {port} within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Moto {
        child,
        url: format!("http://127.0.0.1:{port}"),
    }
}

/// Static test credentials, no IMDS, no SDK retries (so failures show at once).
async fn sdk_config(endpoint: &str) -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(REGION))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
        .endpoint_url(endpoint)
        .retry_config(RetryConfig::disabled())
        .load()
        .await
}

fn fast_backoff() -> Option<Backoff> {
    Some(Backoff {
        initial: Duration::from_millis(50),
        max: Duration::from_millis(200),
    })
}

/// moto plus a VPC, two subnets and an ACTIVE cluster; returns the adapter and subnets.
async fn setup() -> (Moto, Eks, Vec<String>) {
    let moto = start_moto();
    let sdk = sdk_config(&moto.url).await;
    let ec2 = aws_sdk_ec2::Client::new(&sdk);
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .expect("CreateVpc")
        .vpc()
        .and_then(|v| v.vpc_id())
        .expect("vpc id")
        .to_string();
    let mut subnets = Vec::new();
    for (i, az) in ["us-east-1a", "us-east-1b"].iter().enumerate() {
        let s = ec2
            .create_subnet()
            .vpc_id(&vpc)
            .cidr_block(format!("10.0.{i}.0/24"))
            .availability_zone(*az)
            .send()
            .await
            .expect("CreateSubnet");
        subnets.push(s.subnet().and_then(|s| s.subnet_id()).unwrap().to_string());
    }
    let eks = Eks::from_sdk_config(
        &sdk,
        &EksOptions {
            backoff: fast_backoff(),
            ..Default::default()
        },
    );
    // moto only checks the role ARN's shape; no IAM role has to exist.
    eks.client()
        .create_cluster()
        .name(CLUSTER)
        .role_arn("arn:aws:iam::123456789012:role/eks-cluster")
        .resources_vpc_config(
            aws_sdk_eks::types::VpcConfigRequest::builder()
                .set_subnet_ids(Some(subnets.clone()))
                .build(),
        )
        .send()
        .await
        .expect("CreateCluster");
    (moto, eks, subnets)
}

fn spot_request(subnets: &[String]) -> NodeGroupRequest {
    NodeGroupRequest {
        cluster: CLUSTER.into(),
        name: "spot-a10g".into(),
        capacity_type: CapacityType::Spot,
        instance_types: vec!["g5.xlarge".into(), "g5.2xlarge".into()],
        ami_type: "AL2023_x86_64_NVIDIA".into(),
        scaling: Scaling {
            min: 0,
            max: 4,
            desired: Some(1),
        },
        labels: BTreeMap::from([
            ("gpu.example/model".into(), "A10G".into()),
            ("gpu.example/spot".into(), "true".into()),
        ]),
        taints: vec![Taint {
            key: "nvidia.com/gpu".into(),
            value: "present".into(),
            effect: TaintEffect::NoSchedule,
        }],
        tags: BTreeMap::from([("team".into(), "ml".into())]),
        node_role_arn: ROLE.into(),
        subnets: subnets.to_vec(),
        client_request_token: Some("spot-a10g-1".into()),
    }
}

fn on_demand_request(subnets: &[String]) -> NodeGroupRequest {
    NodeGroupRequest {
        name: "od-h100".into(),
        capacity_type: CapacityType::OnDemand,
        instance_types: vec!["p5.48xlarge".into()],
        scaling: Scaling {
            min: 1,
            max: 2,
            desired: Some(1),
        },
        labels: BTreeMap::from([("gpu.example/model".into(), "H100".into())]),
        taints: vec![Taint {
            key: "dedicated".into(),
            value: String::new(),
            effect: TaintEffect::NoExecute,
        }],
        tags: BTreeMap::from([("cost-center".into(), "42".into())]),
        client_request_token: None,
        ..spot_request(subnets)
    }
}

fn sorted(mut t: Vec<Taint>) -> Vec<Taint> {
    t.sort();
    t
}

/// Every requested field comes back as sent.
fn assert_round_trip(req: &NodeGroupRequest, got: &gpu_core::cloud::NodeGroup) {
    assert_eq!(got.cluster, req.cluster);
    assert_eq!(got.name, req.name);
    assert!(got.arn.starts_with("arn:aws:eks:us-east-1:"), "{}", got.arn);
    assert_eq!(got.capacity_type, req.capacity_type);
    assert_eq!(got.instance_types, req.instance_types);
    assert_eq!(got.ami_type, req.ami_type);
    assert_eq!(got.scaling, req.scaling);
    assert_eq!(got.labels, req.labels);
    assert_eq!(sorted(got.taints.clone()), sorted(req.taints.clone()));
    assert_eq!(got.tags, req.tags);
    assert_eq!(got.node_role_arn, req.node_role_arn);
    assert_eq!(got.subnets, req.subnets);
}

#[tokio::test]
async fn spot_and_on_demand_lifecycle() {
    let (_moto, eks, subnets) = setup().await;
    let spot = spot_request(&subnets);
    let od = on_demand_request(&subnets);

    for req in [&spot, &od] {
        let created = eks.create_node_group(req).await.expect("create");
        assert_round_trip(req, &created);
        // moto: ACTIVE at once (real EKS reports CREATING for minutes).
        assert_eq!(created.status, NodeGroupStatus::Active);
        let active = eks
            .wait_until(CLUSTER, &req.name, WaitTarget::Active, WAIT)
            .await
            .expect("wait active")
            .expect("group");
        assert_round_trip(req, &active);
        let described = eks
            .describe_node_group(CLUSTER, &req.name)
            .await
            .unwrap()
            .expect("exists");
        assert_eq!(described, active);
    }

    let update = NodeGroupUpdate {
        scaling: Some(Scaling {
            min: 1,
            max: 8,
            desired: Some(3),
        }),
        labels_add: BTreeMap::from([
            ("gpu.example/tier".into(), "batch".into()),
            ("gpu.example/model".into(), "A10G-24GB".into()),
        ]),
        labels_remove: vec!["gpu.example/spot".into()],
        taints_add: vec![Taint {
            key: "batch-only".into(),
            value: "yes".into(),
            effect: TaintEffect::PreferNoSchedule,
        }],
        taints_remove: vec![spot.taints[0].clone()],
    };
    eks.update_node_group_config(CLUSTER, &spot.name, &update)
        .await
        .expect("update");
    let after = eks
        .wait_until(CLUSTER, &spot.name, WaitTarget::Active, WAIT)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.scaling, update.scaling.unwrap());
    assert_eq!(
        after.labels,
        BTreeMap::from([
            ("gpu.example/model".into(), "A10G-24GB".into()),
            ("gpu.example/tier".into(), "batch".into()),
        ])
    );
    assert_eq!(after.taints, update.taints_add);
    // Untouched fields stay.
    assert_eq!(after.tags, spot.tags);
    assert_eq!(after.instance_types, spot.instance_types);

    for req in [&spot, &od] {
        eks.delete_node_group(CLUSTER, &req.name)
            .await
            .expect("delete");
        let gone = eks
            .wait_until(CLUSTER, &req.name, WaitTarget::Deleted, WAIT)
            .await
            .expect("wait deleted");
        assert_eq!(gone, None);
        assert_eq!(
            eks.describe_node_group(CLUSTER, &req.name).await.unwrap(),
            None
        );
    }
}

#[tokio::test]
async fn same_client_request_token_twice_makes_one_group() {
    let (_moto, eks, subnets) = setup().await;
    let req = spot_request(&subnets);
    let first = eks.create_node_group(&req).await.expect("first create");
    match eks.create_node_group(&req).await {
        // Real EKS: the same token and body return the same group.
        Ok(second) => assert_eq!(second.arn, first.arn),
        // moto keeps no idempotency record: a typed conflict, never a second group.
        Err(CloudError::Conflict(m)) => assert!(m.contains("ResourceInUseException"), "{m}"),
        Err(e) => panic!("unexpected error: {e}"),
    }
    let listed = eks.list_node_groups(CLUSTER).await.expect("list");
    assert_eq!(listed, std::slice::from_ref(&req.name));
}

#[tokio::test]
async fn list_names_every_group() {
    let (_moto, eks, subnets) = setup().await;
    assert!(eks.list_node_groups(CLUSTER).await.unwrap().is_empty());
    for req in [spot_request(&subnets), on_demand_request(&subnets)] {
        eks.create_node_group(&req).await.expect("create");
    }
    let mut names = eks.list_node_groups(CLUSTER).await.unwrap();
    names.sort();
    let mut want = vec![
        spot_request(&subnets).name,
        on_demand_request(&subnets).name,
    ];
    want.sort();
    assert_eq!(names, want);
    // (A missing cluster is `ResourceNotFoundException` on EKS; moto 5.2.5 answers
    // ListNodegroups for one with an HTML 500, so that mapping is covered by the error
    // table's unit tests, not here.)
}

#[tokio::test]
async fn missing_groups_and_clusters() {
    let (_moto, eks, subnets) = setup().await;
    assert_eq!(
        eks.describe_node_group(CLUSTER, "nope").await.unwrap(),
        None
    );
    assert_eq!(
        eks.describe_node_group("no-cluster", "nope").await.unwrap(),
        None
    );
    let e = eks.delete_node_group(CLUSTER, "nope").await.unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    let up = NodeGroupUpdate {
        labels_add: BTreeMap::from([("k".into(), "v".into())]),
        ..Default::default()
    };
    let e = eks
        .update_node_group_config(CLUSTER, "nope", &up)
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    let e = eks
        .wait_until(CLUSTER, "nope", WaitTarget::Active, WAIT)
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    let mut req = spot_request(&subnets);
    req.cluster = "no-cluster".into();
    let e = eks.create_node_group(&req).await.unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    assert!(e.to_string().contains("CreateNodegroup"), "{e}");
}

#[tokio::test]
async fn bad_requests_map_to_typed_errors() {
    let (_moto, eks, subnets) = setup().await;
    // Rejected by the service: InvalidParameterException.
    let mut req = spot_request(&subnets);
    req.node_role_arn = "not-an-arn".into();
    let e = eks.create_node_group(&req).await.unwrap_err();
    assert!(matches!(e, CloudError::Invalid(_)), "{e}");
    assert!(e.to_string().contains("InvalidParameterException"), "{e}");
    assert!(!e.is_retryable());

    // A taken name without a matching token: ResourceInUseException.
    eks.create_node_group(&spot_request(&subnets))
        .await
        .unwrap();
    let mut dup = spot_request(&subnets);
    dup.client_request_token = Some("another".into());
    let e = eks.create_node_group(&dup).await.unwrap_err();
    assert!(matches!(e, CloudError::Conflict(_)), "{e}");

    // Rejected before any call (moto itself accepts desired > max).
    let mut bad = spot_request(&subnets);
    bad.name = "bad-scaling".into();
    bad.scaling.desired = Some(9);
    let e = eks.create_node_group(&bad).await.unwrap_err();
    assert!(matches!(e, CloudError::Invalid(_)), "{e}");
    assert_eq!(
        eks.describe_node_group(CLUSTER, "bad-scaling").await,
        Ok(None)
    );
    let e = eks
        .update_node_group_config(CLUSTER, "spot-a10g", &NodeGroupUpdate::default())
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::Invalid(_)), "{e}");
}

#[tokio::test]
async fn unreachable_endpoint_is_transient() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let sdk = sdk_config(&format!("http://127.0.0.1:{port}")).await;
    let eks = Eks::from_sdk_config(
        &sdk,
        &EksOptions {
            retry: Some(RetryPolicy {
                max_attempts: 3,
                backoff: RetryBackoff {
                    initial: Duration::from_millis(10),
                    max: Duration::from_millis(40),
                },
            }),
            ..Default::default()
        },
    );
    let e = eks.describe_node_group(CLUSTER, "g").await.unwrap_err();
    assert!(matches!(e, CloudError::Transient(_)), "{e}");
    assert!(e.is_retryable());
    // A refused connection is retried by the crate's policy, the SDK's being off.
    assert!(e.to_string().ends_with("(after 3 attempts)"), "{e}");
    assert!(
        !e.to_string().contains("testing"),
        "no credentials in errors: {e}"
    );
}

#[tokio::test]
async fn a_stop_ends_the_retry_pauses_at_once() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let sdk = sdk_config(&format!("http://127.0.0.1:{port}")).await;
    let cancel = Cancel::new();
    let eks = Eks::from_sdk_config(
        &sdk,
        &EksOptions {
            retry: Some(RetryPolicy {
                max_attempts: 10,
                backoff: RetryBackoff {
                    initial: Duration::from_secs(30),
                    max: Duration::from_secs(30),
                },
            }),
            cancel: cancel.clone(),
            ..Default::default()
        },
    );
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.cancel();
    });
    let start = std::time::Instant::now();
    let e = eks.describe_node_group(CLUSTER, "g").await.unwrap_err();
    assert!(matches!(e, CloudError::Cancelled(_)), "{e}");
    assert!(e.to_string().contains("DescribeNodegroup"), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn cluster_subnets_and_tag_calls() {
    let (_moto, eks, subnets) = setup().await;
    assert_eq!(eks.cluster_subnets(CLUSTER).await.unwrap(), subnets);
    let e = eks.cluster_subnets("no-cluster").await.unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    assert!(e.to_string().contains("DescribeCluster"), "{e}");

    // moto tags only clusters (a node group ARN is NotFound there), so the TagResource and
    // UntagResource requests are checked on the cluster's ARN.
    let cluster = eks
        .client()
        .describe_cluster()
        .name(CLUSTER)
        .send()
        .await
        .unwrap();
    let arn = cluster.cluster().and_then(|c| c.arn()).unwrap().to_string();
    let add = BTreeMap::from([
        ("team".to_string(), "ml".to_string()),
        ("project".to_string(), "llm".to_string()),
    ]);
    eks.tag_node_group(&arn, &add, &[]).await.unwrap();
    eks.tag_node_group(&arn, &BTreeMap::new(), &["team".to_string()])
        .await
        .unwrap();
    let tags = eks
        .client()
        .list_tags_for_resource()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap();
    let tags: BTreeMap<String, String> = tags
        .tags()
        .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    assert_eq!(tags.get("project").map(String::as_str), Some("llm"));
    assert!(!tags.contains_key("team"), "{tags:?}");

    let group = eks
        .create_node_group(&spot_request(&subnets))
        .await
        .unwrap();
    let e = eks.tag_node_group(&group.arn, &add, &[]).await.unwrap_err();
    assert!(
        matches!(e, CloudError::NotFound(_)),
        "moto's documented gap: {e}"
    );
}
