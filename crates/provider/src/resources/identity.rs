//! The resource identity every managed resource of this provider has (protocol 6.10):
//! one attribute, `import_id`, the same id `terraform import` takes. Import by identity is
//! therefore import by that id, and `terraform query` lists objects by it.

use tfplugin::{Diagnostic, Diagnostics, IdentitySchema, Value};

/// The identity schema (version 0) of resource `type_name`, whose import ids look like `shapes`.
pub fn schema(shapes: &str) -> IdentitySchema {
    IdentitySchema::new(0).required_string(
        "import_id",
        &format!("The id `terraform import` takes: {shapes}."),
    )
}

/// The identity holding `import_id`; none while it is unknown or empty.
pub fn of(import_id: Option<String>) -> Option<Value> {
    let id = import_id.filter(|i| !i.is_empty())?;
    Some(Value::object([("import_id", Value::string(id))]))
}

/// The known, non-empty string attribute `name` of `state`.
pub fn text(state: &Value, name: &str) -> Option<String> {
    state
        .get_attr(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The import id an identity holds, or the error that names the attribute.
pub fn import_id(identity: &Value) -> Result<String, Diagnostics> {
    text(identity, "import_id").ok_or_else(|| {
        Diagnostics::from(Diagnostic::error(
            "Invalid identity",
            "The identity has no `import_id`: write `identity = { import_id = \"…\" }` with the id `terraform import` takes.",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_the_import_id_both_ways() {
        let identity = of(Some("aws/us-east-1/c/train".into())).unwrap();
        assert_eq!(import_id(&identity).unwrap(), "aws/us-east-1/c/train");
        assert_eq!(of(Some(String::new())), None, "an empty id is no identity");
        assert_eq!(of(None), None);
        let e = import_id(&Value::object([("import_id", Value::Null)])).unwrap_err();
        assert!(e.0[0].detail.contains("import_id"), "{e:?}");
    }

    /// Each resource's identity is the import id its own import takes.
    #[test]
    fn each_resource_names_itself_by_its_import_id() {
        use tfplugin::Provider as _;
        let router = crate::provider::new();
        let id_of = |type_name: &str, pairs: Vec<(&str, &str)>| {
            let state = Value::object(pairs.into_iter().map(|(k, v)| (k, Value::string(v))));
            router
                .identity_of(type_name, &state)
                .and_then(|i| text(&i, "import_id"))
        };
        assert_eq!(
            id_of("gpu_node_pool", vec![("id", "gcp/p/us-central1/c/train")]).as_deref(),
            Some("gcp/p/us-central1/c/train")
        );
        assert_eq!(
            id_of(
                "gpu_instance",
                vec![("cloud", "aws"), ("region", "us-east-1"), ("id", "i-0abc")]
            )
            .as_deref(),
            Some("aws/us-east-1/i-0abc"),
            "an EC2 id with its region in front"
        );
        assert_eq!(
            id_of(
                "gpu_instance",
                vec![
                    ("cloud", "gcp"),
                    ("region", "us-central1"),
                    ("id", "projects/p/zones/z/instances/v")
                ]
            )
            .as_deref(),
            Some("projects/p/zones/z/instances/v")
        );
        assert_eq!(
            id_of(
                "gpu_commitment",
                vec![
                    ("kind", "gcp_reservation"),
                    ("region", "us-central1"),
                    ("zone", "us-central1-b"),
                    ("commitment_id", "r1")
                ]
            )
            .as_deref(),
            Some("gcp_reservation/us-central1-b/r1"),
            "a reservation by its zone"
        );
        let arm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/capacityReservationGroups/g/capacityReservations/n";
        assert_eq!(
            id_of(
                "gpu_commitment",
                vec![
                    ("kind", "azure_capacity_reservation"),
                    ("region", "eastus"),
                    ("commitment_id", arm)
                ]
            )
            .as_deref(),
            Some("azure_capacity_reservation/eastus/rg/g/n")
        );
        assert_eq!(
            id_of(
                "gpu_commitment",
                vec![("kind", "gcp_reservation"), ("region", "us-central1")]
            ),
            None,
            "none before it is bought"
        );
    }
}
