use std::collections::BTreeMap;

use super::config::*;
use super::*;
use crate::catalog::Catalog;
use crate::freshness::Freshness;
use crate::pool::FieldError;

fn gcp() -> InstanceConfig {
    InstanceConfig {
        cloud: "gcp".into(),
        region: "us-central1".into(),
        zone: Some("us-central1-a".into()),
        gpu: Some("a100-40gb".into()),
        spot: true,
        default_gcp_project: Some("p".into()),
        ..InstanceConfig::default()
    }
}

fn errors(c: &InstanceConfig) -> Vec<FieldError> {
    c.validate(Catalog::embedded()).expect_err("invalid")
}

fn attrs(c: &InstanceConfig) -> Vec<String> {
    errors(c).into_iter().map(|e| e.attribute).collect()
}

#[test]
fn a_spot_gpu_vm_validates_with_the_defaults_and_a_chosen_type() {
    let spec = gcp().validate(Catalog::embedded()).unwrap();
    assert_eq!(spec.reclaim, ReclaimPolicy::Stop);
    assert_eq!(spec.disk_size_gb, DEFAULT_DISK_GB);
    assert_eq!(spec.gpu_count, 1);
    let chosen = spec
        .chosen_type(Catalog::embedded(), &Freshness::default())
        .unwrap();
    assert!(chosen.instance_type.starts_with("a2-"), "{chosen:?}");
    assert!(chosen.spot.is_some());
    match spec.class {
        InstanceClass::Gcp { project, .. } => assert_eq!(project, "p"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_instance_type_brings_its_own_gpus_and_any_spelling_is_canonical() {
    let c = InstanceConfig {
        cloud: "AWS".into(),
        region: "US-EAST-1".into(),
        zone: None,
        gpu: None,
        instance_type: Some("P5.48XLARGE".into()),
        default_gcp_project: None,
        ..gcp()
    };
    let spec = c.validate(Catalog::embedded()).unwrap();
    assert_eq!(spec.instance_type.as_deref(), Some("p5.48xlarge"));
    assert_eq!((spec.gpu.name, spec.gpu_count), ("H100", 8));
    assert_eq!(spec.region, "us-east-1");
}

#[test]
fn every_broken_rule_is_named_by_its_attribute() {
    let mut c = gcp();
    c.cloud = "oracle".into();
    assert_eq!(attrs(&c), ["cloud"]);
    assert_eq!(
        errors(&c)[0].problem,
        "\"oracle\" is not a cloud gpu_instance runs on; valid: \"aws\", \"azure\", \"gcp\""
    );
    c.cloud = "cudo".into();
    c.disk_size_gb = Some(20000);
    let e = errors(&c);
    assert_eq!(
        e.iter().map(|f| f.problem.as_str()).collect::<Vec<_>>(),
        [
            "\"cudo\" is not a cloud gpu_instance runs on; valid: \"aws\", \"azure\", \"gcp\"",
            "is 20000; the boot disk is 50 to 16384 GB"
        ],
        "a cloud without VMs names the clouds with them; the disk is checked without a cloud"
    );

    let mut c = gcp();
    c.instance_type = Some("a2-highgpu-1g".into());
    assert_eq!(attrs(&c), ["instance_type"]);

    let mut c = gcp();
    c.gpu = None;
    assert_eq!(attrs(&c), ["gpu"]);

    let mut c = gcp();
    c.gpu_count = Some(0);
    assert_eq!(attrs(&c), ["gpu_count"]);

    let mut c = gcp();
    c.zone = None;
    assert_eq!(attrs(&c), ["zone"]);
    c.zone = Some("europe-west4-a".into());
    assert_eq!(attrs(&c), ["zone"]);

    let mut c = gcp();
    c.reclaim = Some("hibernate".into());
    assert_eq!(attrs(&c), ["reclaim"]);
    c.reclaim = Some("stop".into());
    c.spot = false;
    let e = errors(&c);
    assert_eq!(e[0].attribute, "reclaim");
    assert!(e[0].problem.contains("only a spot instance"));

    let mut c = gcp();
    c.disk_size_gb = Some(10);
    let e = errors(&c);
    assert!(e[0].problem.contains("50 to 65536 GB"), "{e:?}");

    let mut c = gcp();
    c.labels = BTreeMap::from([("Team".to_string(), "ml".to_string())]);
    assert_eq!(attrs(&c), ["labels[\"Team\"]"]);
    c.labels = BTreeMap::from([("gpu-tf-instance".to_string(), "x".to_string())]);
    assert_eq!(attrs(&c), ["labels[\"gpu-tf-instance\"]"]);

    let mut c = gcp();
    c.name = Some("Train_1".into());
    assert_eq!(attrs(&c), ["name"]);

    let mut c = gcp();
    c.image = Some("ami-0123456789abcdef0".into());
    assert_eq!(attrs(&c), ["image"]);

    let mut c = gcp();
    c.aws = Some(AwsInstanceConfig::default());
    assert_eq!(attrs(&c), ["aws"]);

    let mut c = gcp();
    c.default_gcp_project = None;
    assert_eq!(attrs(&c), ["gcp.project"]);

    let mut c = gcp();
    c.gpu = Some("h200".into());
    c.region = "us-central1".into();
    let e = errors(&c);
    assert!(
        e.iter()
            .all(|f| f.attribute == "gpu" || f.attribute == "region"),
        "{e:?}"
    );
}

#[test]
fn azure_needs_its_group_subnet_and_key_and_zones_are_numbers() {
    let c = InstanceConfig {
        cloud: "azure".into(),
        region: "East US".into(),
        zone: Some("eastus-1".into()),
        gpu: Some("a100 80gb".into()),
        spot: true,
        ..InstanceConfig::default()
    };
    let mut a = attrs(&c);
    a.sort();
    assert_eq!(
        a,
        [
            "azure.resource_group",
            "azure.ssh_public_key",
            "azure.subnet_id",
            "zone"
        ]
    );
    let ok = InstanceConfig {
        zone: Some("2".into()),
        azure: Some(AzureInstanceConfig {
            resource_group: Some("rg".into()),
            subnet_id: Some("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/default".into()),
            admin_username: None,
            ssh_public_key: Some("ssh-ed25519 AAAA test".into()),
        }),
        ..c
    };
    let spec = ok.validate(Catalog::embedded()).unwrap();
    assert_eq!(spec.region, "eastus");
    assert!(
        matches!(spec.class, InstanceClass::Azure { ref admin_username, .. } if admin_username == "azureuser")
    );
}

#[test]
fn aws_user_data_is_limited_to_what_ec2_takes() {
    let c = InstanceConfig {
        cloud: "aws".into(),
        region: "us-east-1".into(),
        zone: None,
        gpu: Some("h100".into()),
        gpu_count: Some(8),
        user_data: Some("x".repeat(17 * 1024)),
        default_gcp_project: None,
        ..gcp()
    };
    let e = errors(&c);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].attribute, "user_data");
    assert!(e[0].problem.contains("16 KB"));
}

#[test]
fn status_tells_a_reclaim_from_a_person() {
    let vm = LiveInstance {
        id: "i-1".into(),
        unique_id: "i-1".into(),
        name: "n".into(),
        region: "r".into(),
        zone: None,
        machine_type: "t".into(),
        spot: true,
        reclaim: Some(ReclaimPolicy::Stop),
        image: String::new(),
        disk_size_gb: 0,
        power: PowerState::Stopped,
        stop_cause: Some(crate::seam::instances::StopCause::Reclaim),
        last_reclaim: None,
        disk_ids: vec![],
        labels: BTreeMap::new(),
        restarts_itself: false,
    };
    assert_eq!(Status::of(&vm).as_str(), "stopped_by_reclaim");
    let person = LiveInstance {
        stop_cause: Some(crate::seam::instances::StopCause::Person),
        ..vm.clone()
    };
    assert_eq!(Status::of(&person).as_str(), "stopped");
    let running = LiveInstance {
        power: PowerState::Running,
        stop_cause: None,
        ..vm
    };
    assert_eq!(Status::of(&running), Status::Running);
}
