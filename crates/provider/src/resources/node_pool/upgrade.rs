//! State upgrades of `gpu_node_pool`: version 0 (EKS wire values in `node_groups`) to the
//! current version.

use tfplugin::{Diagnostic, Diagnostics, Schema, Value};

use super::groups;

/// Reads version-0 JSON state and returns it in the current schema: `node_groups`
/// elements become cloud-neutral (`capacity_type = "ON_DEMAND"` → `capacity =
/// "on-demand"`, `ami_type` → `image`, `arn` → `id`); every other attribute is unchanged.
pub fn v0_to_current(json: &[u8], schema: &Schema) -> Result<Value, Diagnostics> {
    let bad = |e: String| -> Diagnostics {
        Diagnostic::error(
            "Cannot upgrade gpu_node_pool state",
            format!("State of schema version 0 could not be read: {e}"),
        )
        .into()
    };
    let mut v: serde_json::Value = serde_json::from_slice(json).map_err(|e| bad(e.to_string()))?;
    if let Some(obj) = v.as_object_mut()
        && let Some(g) = obj.get("node_groups")
    {
        let upgraded = groups::upgrade_v0_json(g);
        obj.insert("node_groups".into(), upgraded);
    }
    let bytes = serde_json::to_vec(&v).map_err(|e| bad(e.to_string()))?;
    tfplugin::value::decode_json(&bytes, &schema.value_type())
        .map(|v| schema.block.with_empty_blocks(v))
        .map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V0: &str = include_str!("../../../../../acceptance/fixtures/state-v0/terraform.tfstate");

    #[test]
    fn the_checked_in_version_0_state_upgrades_to_neutral_node_groups() {
        let state: serde_json::Value = serde_json::from_str(V0).unwrap();
        let instance = &state["resources"][0]["instances"][0];
        assert_eq!(instance["schema_version"], 0);
        let attrs = serde_json::to_vec(&instance["attributes"]).unwrap();
        let schema = super::super::schema();
        assert_eq!(schema.version, 1);
        let v = v0_to_current(&attrs, &schema).unwrap();
        let groups = v
            .get_attr("node_groups")
            .and_then(Value::as_elements)
            .unwrap();
        assert_eq!(groups.len(), 2);
        let od = &groups[0];
        assert_eq!(od.get_attr("name"), Some(&Value::string("legacy-od")));
        assert_eq!(od.get_attr("capacity"), Some(&Value::string("on-demand")));
        assert_eq!(groups[1].get_attr("capacity"), Some(&Value::string("spot")));
        assert_eq!(
            od.get_attr("image"),
            Some(&Value::string("AL2023_x86_64_NVIDIA"))
        );
        let id = od.get_attr("id").and_then(Value::as_str).unwrap();
        assert!(id.starts_with("arn:aws:eks:us-east-1:"), "{id}");
        // Everything else as it was.
        assert_eq!(v.get_attr("gpu"), Some(&Value::string("H100")));
        assert_eq!(v.get_attr("name"), Some(&Value::string("legacy")));
    }

    #[test]
    fn unreadable_state_is_an_error_not_a_panic() {
        let e = v0_to_current(b"{not json", &super::super::schema()).unwrap_err();
        assert!(e.has_errors());
    }
}
