//! `clouds::aws::Eks` against a real moto server (EKS + EC2 emulation), started per test.
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
use gpu_core::clouds::aws::{AwsSettings, Eks};
use gpu_core::retry::{Backoff as RetryBackoff, RetryPolicy};
use gpu_core::seam::poll::Backoff;
use gpu_core::seam::{
    AwsClass, CapacityType, CloudError, ClusterRef, GroupSpec, NodeClass, NodeGroupStatus,
    NodeGroups, Scaling, Taint, TaintEffect, WaitTarget,
};

const REGION: &str = "us-east-1";
const ROLE: &str = "arn:aws:iam::123456789012:role/eks-nodes";
const CLUSTER: &str = "gpu";

fn cluster() -> ClusterRef {
    ClusterRef::Eks {
        region: REGION.into(),
        name: CLUSTER.into(),
    }
}

fn no_cluster() -> ClusterRef {
    ClusterRef::Eks {
        region: REGION.into(),
        name: "no-cluster".into(),
    }
}
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
        &AwsSettings {
            backoff: fast_backoff(),
            ..Default::default()
        },
        None,
        &Cancel::new(),
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

fn class(subnets: Option<&[String]>) -> NodeClass {
    NodeClass::Aws(AwsClass {
        node_role: ROLE.into(),
        subnets: subnets.map(<[String]>::to_vec),
        ami_type: "AL2023_x86_64_NVIDIA".into(),
        capacity_reservation: None,
    })
}

fn spot_request(subnets: &[String]) -> GroupSpec {
    GroupSpec {
        name: "spot-a10g".into(),
        capacity: CapacityType::Spot,
        machine_types: vec!["g5.xlarge".into(), "g5.2xlarge".into()],
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
        class: class(Some(subnets)),
    }
}

fn on_demand_request(subnets: &[String]) -> GroupSpec {
    GroupSpec {
        name: "od-h100".into(),
        capacity: CapacityType::OnDemand,
        machine_types: vec!["p5.48xlarge".into()],
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
        ..spot_request(subnets)
    }
}

/// Every requested field comes back as sent.
fn assert_round_trip(req: &GroupSpec, got: &gpu_core::seam::NodeGroup) {
    assert!(got.id.starts_with("arn:aws:eks:us-east-1:"), "{}", got.id);
    let mut want = req.clone();
    want.taints.sort();
    assert_eq!(got.spec, want);
}

#[tokio::test]
async fn spot_and_on_demand_lifecycle() {
    let (_moto, eks, subnets) = setup().await;
    let spot = spot_request(&subnets);
    let od = on_demand_request(&subnets);

    for req in [&spot, &od] {
        let created = eks
            .create_group(&cluster(), req, "tok-1")
            .await
            .expect("create");
        assert_round_trip(req, &created);
        // moto: ACTIVE at once (real EKS reports CREATING for minutes).
        assert_eq!(created.status, NodeGroupStatus::Active);
        let active = eks
            .wait_until(&cluster(), &req.name, WaitTarget::Active, WAIT)
            .await
            .expect("wait active")
            .expect("group");
        assert_round_trip(req, &active);
        let described = eks
            .get_group(&cluster(), &req.name)
            .await
            .unwrap()
            .expect("exists");
        assert_eq!(described, active);
    }

    // The whole desired state; the adapter sends EKS's label and taint deltas.
    let mut want = spot.clone();
    want.scaling = Scaling {
        min: 1,
        max: 8,
        desired: Some(3),
    };
    want.labels = BTreeMap::from([
        ("gpu.example/model".into(), "A10G-24GB".into()),
        ("gpu.example/tier".into(), "batch".into()),
    ]);
    want.taints = vec![Taint {
        key: "batch-only".into(),
        value: "yes".into(),
        effect: TaintEffect::PreferNoSchedule,
    }];
    let live = eks
        .get_group(&cluster(), &spot.name)
        .await
        .unwrap()
        .unwrap();
    assert!(
        eks.update_group(&cluster(), &live, &want)
            .await
            .expect("update")
    );
    let after = eks
        .wait_until(&cluster(), &spot.name, WaitTarget::Active, WAIT)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.spec, want);
    assert!(
        !eks.update_group(&cluster(), &after, &want)
            .await
            .expect("no-op"),
        "nothing left to change: no UpdateNodegroupConfig"
    );

    for req in [&spot, &od] {
        eks.delete_group(&cluster(), &req.name)
            .await
            .expect("delete");
        let gone = eks
            .wait_until(&cluster(), &req.name, WaitTarget::Deleted, WAIT)
            .await
            .expect("wait deleted");
        assert_eq!(gone, None);
        assert_eq!(eks.get_group(&cluster(), &req.name).await.unwrap(), None);
    }
}

#[tokio::test]
async fn same_client_request_token_twice_makes_one_group() {
    let (_moto, eks, subnets) = setup().await;
    let req = spot_request(&subnets);
    let first = eks
        .create_group(&cluster(), &req, "tok-1")
        .await
        .expect("first create");
    match eks.create_group(&cluster(), &req, "tok-1").await {
        // Real EKS: the same token and body return the same group.
        Ok(second) => assert_eq!(second.id, first.id),
        // moto keeps no idempotency record: a typed conflict, never a second group.
        Err(CloudError::Conflict(m)) => assert!(m.contains("ResourceInUseException"), "{m}"),
        Err(e) => panic!("unexpected error: {e}"),
    }
    let listed = eks.list_groups(&cluster()).await.expect("list");
    assert_eq!(listed, std::slice::from_ref(&req.name));
}

#[tokio::test]
async fn list_names_every_group() {
    let (_moto, eks, subnets) = setup().await;
    assert!(eks.list_groups(&cluster()).await.unwrap().is_empty());
    for req in [spot_request(&subnets), on_demand_request(&subnets)] {
        eks.create_group(&cluster(), &req, "t")
            .await
            .expect("create");
    }
    let mut names = eks.list_groups(&cluster()).await.unwrap();
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
    assert_eq!(eks.get_group(&cluster(), "nope").await.unwrap(), None);
    assert_eq!(eks.get_group(&no_cluster(), "nope").await.unwrap(), None);
    let e = eks.delete_group(&cluster(), "nope").await.unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    let mut nope = spot_request(&subnets);
    nope.name = "nope".into();
    // A group read earlier and deleted since: the update is EKS's NotFound.
    let mut was = nope.clone();
    was.scaling.max = 9;
    let gone = gpu_core::seam::NodeGroup {
        id: "arn:aws:eks:us-east-1:123456789012:nodegroup/gpu/nope/x".into(),
        status: NodeGroupStatus::Active,
        spec: was,
        kubernetes_version: None,
        health: Vec::new(),
    };
    let e = eks
        .update_group(&cluster(), &gone, &nope)
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    let e = eks
        .wait_until(&cluster(), "nope", WaitTarget::Active, WAIT)
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    let e = eks
        .create_group(&no_cluster(), &spot_request(&subnets), "t")
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    assert!(e.to_string().contains("CreateNodegroup"), "{e}");
    // Without subnets of its own a group needs the cluster's: DescribeCluster first.
    let mut bare = spot_request(&subnets);
    bare.class = class(None);
    let e = eks
        .create_group(&no_cluster(), &bare, "t")
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::NotFound(_)), "{e}");
    assert!(e.to_string().contains("DescribeCluster"), "{e}");
    let aks = ClusterRef::Aks {
        subscription: "s".into(),
        resource_group: "rg".into(),
        name: "c".into(),
    };
    let e = eks.get_group(&aks, "x").await.unwrap_err();
    assert!(matches!(e, CloudError::Invalid(_)), "{e}");
}

#[tokio::test]
async fn bad_requests_map_to_typed_errors() {
    let (_moto, eks, subnets) = setup().await;
    // Rejected by the service: InvalidParameterException.
    let mut req = spot_request(&subnets);
    req.class = NodeClass::Aws(AwsClass {
        node_role: "not-an-arn".into(),
        subnets: Some(subnets.clone()),
        ami_type: "AL2023_x86_64_NVIDIA".into(),
        capacity_reservation: None,
    });
    let e = eks.create_group(&cluster(), &req, "t").await.unwrap_err();
    assert!(matches!(e, CloudError::Invalid(_)), "{e}");
    assert!(e.to_string().contains("InvalidParameterException"), "{e}");
    assert!(!e.is_retryable());

    // A taken name without a matching token: ResourceInUseException.
    eks.create_group(&cluster(), &spot_request(&subnets), "tok-1")
        .await
        .unwrap();
    let e = eks
        .create_group(&cluster(), &spot_request(&subnets), "another")
        .await
        .unwrap_err();
    assert!(matches!(e, CloudError::Conflict(_)), "{e}");

    // Rejected before any call (moto itself accepts desired > max).
    let mut bad = spot_request(&subnets);
    bad.name = "bad-scaling".into();
    bad.scaling.desired = Some(9);
    let e = eks.create_group(&cluster(), &bad, "t").await.unwrap_err();
    assert!(matches!(e, CloudError::Invalid(_)), "{e}");
    assert_eq!(eks.get_group(&cluster(), "bad-scaling").await, Ok(None));
    let mut illegal = spot_request(&subnets);
    illegal.name = "no/slash".into();
    let e = eks
        .create_group(&cluster(), &illegal, "t")
        .await
        .unwrap_err();
    assert!(
        matches!(e, CloudError::Invalid(ref m) if m.contains("not legal")),
        "{e}"
    );
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
        &AwsSettings {
            retry: Some(RetryPolicy {
                max_attempts: 3,
                max_throttled_attempts: 3,
                backoff: RetryBackoff {
                    initial: Duration::from_millis(10),
                    max: Duration::from_millis(40),
                },
            }),
            ..Default::default()
        },
        None,
        &Cancel::new(),
    );
    let e = eks.get_group(&cluster(), "g").await.unwrap_err();
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
        &AwsSettings {
            retry: Some(RetryPolicy {
                max_attempts: 10,
                max_throttled_attempts: 10,
                backoff: RetryBackoff {
                    initial: Duration::from_secs(30),
                    max: Duration::from_secs(30),
                },
            }),
            ..Default::default()
        },
        None,
        &cancel,
    );
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.cancel();
    });
    let start = std::time::Instant::now();
    let e = eks.get_group(&cluster(), "g").await.unwrap_err();
    assert!(matches!(e, CloudError::Cancelled(_)), "{e}");
    assert!(e.to_string().contains("DescribeNodegroup"), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn a_group_without_subnets_gets_the_clusters_and_tags_change_through_update() {
    let (_moto, eks, subnets) = setup().await;
    let mut bare = spot_request(&subnets);
    bare.class = class(None);
    let g = eks.create_group(&cluster(), &bare, "t").await.unwrap();
    assert_eq!(
        g.spec.class,
        class(Some(&subnets)),
        "DescribeCluster's subnets"
    );

    // A tag change is part of the whole desired state: TagResource / UntagResource on the
    // group's ARN. moto tags only clusters (a node group ARN is NotFound there), so the
    // call is seen to be made and refused the way moto documents.
    let mut retag = bare.clone();
    retag.tags = BTreeMap::from([("project".to_string(), "llm".to_string())]);
    let e = eks.update_group(&cluster(), &g, &retag).await.unwrap_err();
    assert!(
        matches!(e, CloudError::NotFound(_)),
        "moto's documented gap: {e}"
    );
    assert!(e.to_string().contains("TagResource"), "{e}");
}
