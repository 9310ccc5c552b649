//! List resources (protocol 6.10, Terraform 1.14 and later): `list "x_thing" "name" {
//! config { … } }` blocks that `terraform query` runs to find remote objects of a managed
//! resource type, each by its identity. A [`ListResource`] only finds them; the router
//! reads each one through the resource's own import and read when Terraform asks for the
//! objects themselves (`include_resource = true`, `-generate-config-out`).

use crate::diag::Diagnostics;
use crate::resource::ValidateRequest;
use crate::schema::Schema;
use crate::value::Value;
use async_trait::async_trait;

/// What a `list` block asks for.
#[derive(Debug, Clone)]
pub struct ListRequest {
    /// The `config` block's value (wholly known).
    pub config: Value,
    /// At most this many results are wanted.
    pub limit: usize,
}

/// One remote object a listing found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its identity, in the managed resource type's identity schema.
    pub identity: Value,
    /// A short name a person recognizes it by.
    pub display_name: String,
}

/// What a listing found, and what it could not look at (warnings go on; errors stop the query).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The objects, in a stable order.
    pub found: Vec<Found>,
    /// Warnings (a place that could not be read) or errors.
    pub diagnostics: Diagnostics,
}

/// A list resource type. Its type name is the managed resource type it lists, which must
/// have an identity schema.
#[async_trait]
pub trait ListResource: Send + Sync + 'static {
    /// The managed resource type listed (`hello_file`).
    fn type_name(&self) -> &str;

    /// The schema of the `config` block inside `list`.
    fn schema(&self) -> Schema;

    /// `ValidateListResourceConfig`: static checks of the `config` block. Default: none.
    async fn validate(&self, _request: ValidateRequest) -> Diagnostics {
        Diagnostics::new()
    }

    /// `ListResource`: the objects the configuration selects, each by identity.
    async fn list(&self, request: ListRequest) -> Listing;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Diagnostic;
    use crate::identity::IdentitySchema;
    use crate::provider::{
        ApplyResourceChangeResponse, ImportResourceStateResponse, ListResourceRequest, Provider,
        ReadResourceResponse,
    };
    use crate::resource::{ApplyRequest, ImportRequest, ReadRequest, Resource, imported};
    use crate::router::Router;
    use crate::schema::{Attribute, Block};
    use crate::value::Type;

    /// Files by path; `gone` is listed but cannot be read.
    struct File;

    #[async_trait]
    impl Resource for File {
        fn type_name(&self) -> &str {
            "t_file"
        }
        fn schema(&self) -> Schema {
            Schema::new(
                Block::new("file")
                    .attribute(Attribute::required("path", Type::String))
                    .attribute(Attribute::optional("mode", Type::String))
                    .attribute(Attribute::optional("secret", Type::String).sensitive())
                    .attribute(Attribute::computed("size", Type::Number)),
            )
        }
        async fn apply(&self, r: ApplyRequest) -> ApplyResourceChangeResponse {
            ApplyResourceChangeResponse {
                new_state: r.planned().clone(),
                ..Default::default()
            }
        }
        async fn import(&self, r: ImportRequest) -> ImportResourceStateResponse {
            imported(Value::object([
                ("path", Value::string(r.id())),
                ("mode", Value::Null),
                ("secret", Value::Null),
                ("size", Value::Null),
            ]))
        }
        async fn read(&self, r: ReadRequest) -> ReadResourceResponse {
            let path = r.current().get_attr("path").and_then(Value::as_str);
            if path == Some("gone") {
                return ReadResourceResponse {
                    diagnostics: Diagnostic::error("Not found", "no such file").into(),
                    ..Default::default()
                };
            }
            ReadResourceResponse {
                new_state: Value::object([
                    ("path", Value::string(path.unwrap_or_default())),
                    ("mode", Value::string("0644")),
                    ("secret", Value::string("hunter2")),
                    ("size", Value::number(12)),
                ]),
                ..Default::default()
            }
        }
        fn identity(&self) -> Option<IdentitySchema> {
            Some(IdentitySchema::new(0).required_string("path", "the path"))
        }
        fn identity_of(&self, state: &Value) -> Option<Value> {
            let path = state.get_attr("path")?.as_str()?;
            Some(Value::object([("path", Value::string(path))]))
        }
        fn import_id_of(&self, identity: &Value) -> Result<String, Diagnostics> {
            match identity.get_attr("path").and_then(Value::as_str) {
                Some(p) => Ok(p.to_string()),
                None => Err(Diagnostic::error("no path", "").into()),
            }
        }
    }

    struct Files;

    #[async_trait]
    impl ListResource for Files {
        fn type_name(&self) -> &str {
            "t_file"
        }
        fn schema(&self) -> Schema {
            Schema::new(Block::new("files").attribute(Attribute::optional("dir", Type::String)))
        }
        async fn validate(&self, r: ValidateRequest) -> Diagnostics {
            match r.config().get_attr("dir").and_then(Value::as_str) {
                Some(d) if !d.starts_with('/') => Diagnostic::error("relative", d).into(),
                _ => Diagnostics::new(),
            }
        }
        async fn list(&self, r: ListRequest) -> Listing {
            let names = ["/a", "gone", "/b", "/c"];
            Listing {
                found: names
                    .iter()
                    .map(|p| Found {
                        identity: Value::object([("path", Value::string(*p))]),
                        display_name: format!("file {p}"),
                    })
                    .collect(),
                diagnostics: Diagnostic::warning(format!("limit {}", r.limit), "").into(),
            }
        }
    }

    /// A router with `t_file` (identity: `path`) and its list resource.
    pub(crate) fn router() -> Router {
        Router::new(Schema::new(Block::new("p")))
            .resource(File)
            .list(Files)
    }

    fn request(include: bool, limit: i64) -> ListResourceRequest {
        ListResourceRequest {
            type_name: "t_file".into(),
            config: Value::object([("dir", Value::string("/"))]),
            include_resource_object: include,
            limit,
        }
    }

    #[test]
    fn identities_and_list_schemas_are_served_with_their_resource() {
        let s = router().schemas();
        assert_eq!(s.identities["t_file"].attributes[0].name, "path");
        assert!(s.list_resources.contains_key("t_file"));
        assert!(router().supports_generate_resource_config());
    }

    #[tokio::test]
    async fn a_listing_stops_at_the_limit_and_objects_are_read_only_when_asked() {
        let r = router().list_resource(request(false, 3)).await;
        let names: Vec<&str> = r.results.iter().map(|x| x.display_name.as_str()).collect();
        assert_eq!(names, ["file /a", "file gone", "file /b"]);
        assert!(r.results.iter().all(|x| x.resource_object.is_none()));
        assert_eq!(
            r.diagnostics.0[0].summary, "limit 3",
            "the limit reaches the lister"
        );

        let r = router().list_resource(request(true, 10)).await;
        let a = r.results[0].resource_object.as_ref().unwrap();
        assert_eq!(
            a.get_attr("mode"),
            Some(&Value::string("0644")),
            "read, not just imported"
        );
        let gone = &r.results[1];
        assert!(gone.identity.is_null() && gone.resource_object.is_none());
        assert_eq!(gone.diagnostics.0[0].severity, crate::Severity::Warning);
        assert!(gone.diagnostics.0[0].detail.contains("no such file"));
        assert_eq!(
            r.results.len(),
            4,
            "one unreadable object does not end the listing"
        );
    }

    #[tokio::test]
    async fn list_config_gets_the_lists_own_checks() {
        let bad = Value::object([("dir", Value::string("tmp"))]);
        let d = router().validate_list_resource_config("t_file", &bad).await;
        assert_eq!(d.0[0].summary, "relative");
        let d = router()
            .validate_list_resource_config("t_nothing", &bad)
            .await;
        assert!(
            d.0[0].detail.contains("`t_file`"),
            "names the known ones: {d:?}"
        );
    }

    #[tokio::test]
    async fn generated_configuration_leaves_out_computed_and_sensitive_values() {
        let state = Value::object([
            ("path", Value::string("/a")),
            ("mode", Value::string("0644")),
            ("secret", Value::string("hunter2")),
            ("size", Value::number(12)),
        ]);
        let config = router()
            .generate_resource_config("t_file", state)
            .await
            .unwrap();
        assert_eq!(config.get_attr("mode"), Some(&Value::string("0644")));
        assert_eq!(config.get_attr("size"), Some(&Value::Null));
        assert_eq!(config.get_attr("secret"), Some(&Value::Null));
    }

    #[tokio::test]
    async fn import_by_identity_is_import_by_the_id_it_stands_for() {
        let router = router();
        let identity = Value::object([("path", Value::string("/b"))]);
        assert_eq!(
            router
                .import_id_of_identity("t_file", &identity)
                .await
                .unwrap(),
            "/b"
        );
        let state = Value::object([("path", Value::string("/b"))]);
        assert_eq!(router.identity_of("t_file", &state), Some(identity));
    }

    #[test]
    #[should_panic(expected = "lists no registered resource with an identity")]
    fn a_list_of_a_resource_without_identity_panics() {
        let _ = Router::new(Schema::new(Block::new("p"))).list(Files);
    }
}
