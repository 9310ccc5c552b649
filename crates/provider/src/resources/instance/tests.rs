use gpu_core::catalog::Catalog;
use tfplugin::Value;

use super::plan::{same_meaning, set};
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
        ("instance_type", Value::Null),
        ("spot", Value::Bool(true)),
        ("labels", Value::map([("team", Value::string("ml"))])),
        ("gcp", Value::Null),
    ]);
    let mut settings = Settings::default();
    settings.base.clouds = crate::clouds::Clouds::of(&crate::config::ProviderConfig {
        gcp: Some(crate::config::GcpConfig {
            project: Some("proj".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    settings
        .base
        .default_labels
        .insert("env".into(), "prod".into());
    let c = core_config(&v, &settings);
    assert_eq!(c.labels.len(), 2);
    let spec = c.validate(Catalog::embedded()).unwrap();
    assert!(
        matches!(spec.class, gpu_core::instance::InstanceClass::Gcp { ref project, .. } if project == "proj")
    );
}

#[test]
fn validation_names_each_bad_input_before_any_cloud_call() {
    let base = || {
        Value::object([
            ("cloud", Value::string("gcp")),
            ("region", Value::string("us-central1")),
            ("zone", Value::string("us-central1-a")),
            ("gpu", Value::string("L4")),
            ("instance_type", Value::Null),
            ("labels", Value::Null),
            ("aws", Value::Null),
            ("gcp", Value::Null),
        ])
    };
    let attrs = |v: &Value| -> Vec<String> {
        super::plan::validate_config(v, &Settings::default(), Catalog::embedded())
            .0
            .iter()
            .map(|d| format!("{} {}", d.summary, d.detail))
            .collect()
    };
    assert!(attrs(&base()).is_empty(), "{:?}", attrs(&base()));
    // Both a GPU and an instance type written: one must go (the type is not dropped).
    let mut v = base();
    set(&mut v, "instance_type", Value::string("g2-standard-8"));
    assert!(
        attrs(&v).iter().any(|d| d.contains("not both")),
        "{:?}",
        attrs(&v)
    );
    let mut v = base();
    set(
        &mut v,
        "labels",
        Value::map([("Team", Value::string("ml"))]),
    );
    assert!(
        attrs(&v).iter().any(|d| d.contains("lower-case")),
        "{:?}",
        attrs(&v)
    );
}

#[tokio::test]
async fn azure_vms_need_the_providers_subscription_and_reach_it() {
    use gpu_core::offer::Cloud;
    use gpu_core::seam::{ConnectInstances as _, Place};
    let place = Place {
        cloud: Cloud::Azure,
        region: "eastus".into(),
        scope: None,
    };
    let mut settings = Settings::default();
    let missing = settings.base.clouds.instances(&place).await.err().unwrap();
    assert!(
        missing.to_string().contains("azure.subscription_id"),
        "{missing}"
    );
    settings.base.clouds = crate::clouds::Clouds::of(&crate::config::ProviderConfig {
        azure: Some(crate::config::AzureConfig {
            subscription_id: Some("6b1f0a52-3c9d-4e7a-8f21-9d0c4b7e5a13".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    let vms = settings.base.clouds.instances(&place).await.unwrap();
    assert_eq!(vms.cloud(), Cloud::Azure);
    // A watcher's `azure:<subscription>` target names its own subscription.
    let other = Place {
        scope: Some("not-a-guid".into()),
        ..place
    };
    assert!(settings.base.clouds.instances(&other).await.is_err());
}
