//! `ImportResourceState` for `gpu_node_pool`: the import id `aws/<region>/<cluster>/<name>`
//! parsed and checked into a minimal state; the read that follows finds the groups.

use std::collections::{BTreeMap, BTreeSet};

use gpu_core::catalog::Catalog;
use tfplugin::Value;

/// Parses an import id `aws/<region>/<cluster>/<name>` into a minimal state; the region
/// must be one where `catalog` has AWS GPU offers (a pool elsewhere could not be priced).
pub fn import_state(id: &str, object_keys: &[String], catalog: &Catalog) -> Result<Value, String> {
    let parts: Vec<&str> = id.split('/').collect();
    let [cloud, region, cluster, name] = parts.as_slice() else {
        return Err(format!(
            "the import id {id:?} must look like \"aws/<region>/<cluster>/<name>\", e.g. \"aws/us-east-1/train-east/train\""
        ));
    };
    if gpu_core::pool::spelling::cloud(cloud) != Some(gpu_core::offer::Cloud::Aws) {
        return Err(format!(
            "the import id {id:?} names cloud {cloud:?}; only \"aws\" node pools can be imported today"
        ));
    }
    if [region, cluster, name].iter().any(|p| p.is_empty()) {
        return Err(format!(
            "the import id {id:?} has an empty part; it must look like \"aws/<region>/<cluster>/<name>\""
        ));
    }
    let region = &gpu_core::pool::spelling::region(Some(gpu_core::offer::Cloud::Aws), region);
    // Refused here, before the read that follows an import calls the cloud with them.
    if !crate::config::is_aws_region(region) {
        return Err(format!(
            "the import id {id:?} names region {region:?}, which is not an AWS region; an AWS region looks like \"us-east-1\" or \"eu-west-2\""
        ));
    }
    let aws_regions: BTreeSet<&str> = catalog
        .offers()
        .iter()
        .filter(|o| o.cloud == gpu_core::offer::Cloud::Aws)
        .map(|o| o.region.as_str())
        .collect();
    if !aws_regions.contains(region.as_str()) {
        let list: Vec<&str> = aws_regions.iter().copied().collect();
        return Err(format!(
            "the import id {id:?} names region {region:?}, where the catalog has no AWS GPU offer, so no gpu_node_pool can be priced there; AWS regions with GPU offers: {}",
            list.join(", ")
        ));
    }
    let problems =
        gpu_core::pool::validate::name_errors(gpu_core::offer::Cloud::Aws, cluster, name);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(format!(
            "the import id {id:?} cannot name a pool: {}",
            list.join("; ")
        ));
    }
    let mut m: BTreeMap<String, Value> = object_keys
        .iter()
        .map(|k| (k.clone(), Value::Null))
        .collect();
    m.insert("id".into(), Value::string(id));
    m.insert("cloud".into(), Value::string("aws"));
    m.insert("region".into(), Value::string(region));
    m.insert("cluster".into(), Value::string(*cluster));
    m.insert("name".into(), Value::string(*name));
    m.insert("taint".into(), Value::List(Vec::new()));
    Ok(Value::Object(m))
}
