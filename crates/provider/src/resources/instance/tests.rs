use gpu_core::catalog::Catalog;
use tfplugin::Value;

use super::plan::same_meaning;
use super::*;

#[test]
fn re_spellings_mean_the_same_instance() {
    let s = |x: &str| Some(Value::string(x));
    assert!(same_meaning("cloud", s("GCP").as_ref(), s("gcp").as_ref()));
    assert!(same_meaning(
        "gpu",
        s("a100 40gb").as_ref(),
        s("A100-40GB").as_ref()
    ));
    assert!(same_meaning(
        "region",
        s("East US").as_ref(),
        s("eastus").as_ref()
    ));
    assert!(same_meaning(
        "zone",
        s("US-CENTRAL1-A").as_ref(),
        s("us-central1-a").as_ref()
    ));
    assert!(!same_meaning(
        "zone",
        s("us-central1-a").as_ref(),
        s("us-central1-b").as_ref()
    ));
    assert!(same_meaning("spot", None, Some(&Value::Bool(false))));
    assert!(same_meaning("gpu_count", None, Some(&Value::number(1))));
    assert!(!same_meaning("gpu_count", None, Some(&Value::number(2))));
}

#[test]
fn a_config_reads_into_the_core_config_with_the_provider_defaults() {
    let v = Value::object([
        ("cloud", Value::string("gcp")),
        ("region", Value::string("us-central1")),
        ("zone", Value::string("us-central1-a")),
        ("gpu", Value::string("l4")),
        ("gpu_count", Value::number(1)),
        ("instance_type", Value::string("g2-standard-8")),
        ("spot", Value::Bool(true)),
        ("labels", Value::map([("team", Value::string("ml"))])),
        ("gcp", Value::Null),
    ]);
    let mut settings = Settings::default();
    settings.base.gcp.project = Some("proj".into());
    settings
        .base
        .default_labels
        .insert("env".into(), "prod".into());
    let c = core_config(&v, &settings);
    // With `gpu` written, the instance type in a plan is the one chosen: not an input.
    assert_eq!(c.instance_type, None);
    assert_eq!(c.labels.len(), 2);
    let spec = c.validate(Catalog::embedded()).unwrap();
    assert!(
        matches!(spec.class, gpu_core::instance::InstanceClass::Gcp { ref project, .. } if project == "proj")
    );
}

#[tokio::test]
async fn azure_vms_need_the_providers_subscription_and_reach_it() {
    use super::connect::{Connector, Place};
    use gpu_core::offer::Cloud;
    let place = Place {
        cloud: Cloud::Azure,
        region: "eastus".into(),
        project: None,
        subscription: None,
    };
    let mut settings = Settings::default();
    let missing = settings.instances(&place).await.err().unwrap();
    assert!(
        missing.to_string().contains("azure.subscription_id"),
        "{missing}"
    );
    settings.base.azure.subscription_id = Some("6b1f0a52-3c9d-4e7a-8f21-9d0c4b7e5a13".into());
    let vms = settings.instances(&place).await.unwrap();
    assert_eq!(vms.cloud(), Cloud::Azure);
    // A watcher's `azure:<subscription>` target names its own subscription.
    let other = Place {
        subscription: Some("not-a-guid".into()),
        ..place
    };
    assert!(settings.instances(&other).await.is_err());
}
