//! The router: a [`Provider`] assembled from a provider block ([`ProviderBlock`]) and
//! typed [`Resource`]s and [`DataSource`]s, dispatching every resource and data source
//! RPC by type name.
//!
//! ```no_run
//! # use tfplugin::{Block, Schema, router::Router};
//! # async fn run() {
//! let provider = Router::new(Schema::new(Block::new("A provider with no settings.")));
//!     // .resource(MyResource).data_source(MyDataSource)
//! tfplugin::server::serve(provider).await.unwrap();
//! # }
//! ```

use crate::diag::{Diagnostic, Diagnostics, Severity};
use crate::generate;
use crate::list::{ListRequest, ListResource};
use crate::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, ConfigureProviderRequest,
    ImportResourceStateRequest, ImportResourceStateResponse, ListResourceRequest,
    ListResourceResponse, ListedResource, MoveResourceStateRequest, MoveResourceStateResponse,
    PlanResourceChangeRequest, PlanResourceChangeResponse, Provider, ProviderSchemas,
    ReadDataSourceRequest, ReadDataSourceResponse, ReadResourceRequest, ReadResourceResponse,
    UpgradeResourceStateRequest,
};
use crate::resource::{
    ApplyRequest, DataSource, ImportRequest, PlanRequest, ReadDataRequest, ReadRequest, Resource,
    ValidateRequest,
};
use crate::schema::Schema;
use crate::value::Value;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The provider-level part of a provider: the `provider` block's schema, its checks and
/// configuration, and `StopProvider`. A [`Schema`] alone is a provider block with no
/// behaviour.
#[async_trait]
pub trait ProviderBlock: Send + Sync + 'static {
    /// The `provider "x" { ... }` block's schema.
    fn schema(&self) -> Schema;

    /// The `provider_meta` schema, if modules may set one (default: none).
    fn meta_schema(&self) -> Option<Schema> {
        None
    }

    /// `ValidateProviderConfig`: static checks; values may be unknown. Default: none.
    async fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// `ConfigureProvider`: keep what resources need (share it with them, e.g. through
    /// an `Arc` both hold). Default: nothing.
    async fn configure(&self, _request: ConfigureProviderRequest) -> Diagnostics {
        Diagnostics::new()
    }

    /// `StopProvider`: cancel in-flight work soon. Default: nothing to stop.
    async fn stop(&self) -> Result<(), String> {
        Ok(())
    }
}

#[async_trait]
impl ProviderBlock for Schema {
    fn schema(&self) -> Schema {
        self.clone()
    }
}

#[async_trait]
impl<P: ProviderBlock> ProviderBlock for Arc<P> {
    fn schema(&self) -> Schema {
        (**self).schema()
    }
    fn meta_schema(&self) -> Option<Schema> {
        (**self).meta_schema()
    }
    async fn validate(&self, config: &Value) -> Diagnostics {
        (**self).validate(config).await
    }
    async fn configure(&self, request: ConfigureProviderRequest) -> Diagnostics {
        (**self).configure(request).await
    }
    async fn stop(&self) -> Result<(), String> {
        (**self).stop().await
    }
}

/// A resource with the schema it gave at registration.
struct Registered<T: ?Sized> {
    schema: Schema,
    handler: Box<T>,
}

/// A [`Provider`] made of a provider block and resources and data sources by type name.
pub struct Router<P: ProviderBlock = Schema> {
    provider: P,
    resources: BTreeMap<String, Registered<dyn Resource>>,
    data_sources: BTreeMap<String, Registered<dyn DataSource>>,
    lists: BTreeMap<String, Registered<dyn ListResource>>,
    functions: BTreeMap<String, Box<dyn crate::function::Function>>,
}

/// What [`Router::config_of_state`] makes of a state: the configuration, the sensitive
/// paths left for the user to write, and the validation that still fails on it.
#[derive(Debug, Clone)]
pub struct GeneratedConfig {
    /// The configuration value (state-shaped; what a user cannot write is null).
    pub config: Value,
    /// Paths of sensitive attributes that held a value, not written.
    pub withheld: Vec<String>,
    /// The resource's validation of `config` after unsetting what it refused.
    pub validation: Diagnostics,
}

/// The list of known names for an "unknown type" message.
fn known(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

impl<P: ProviderBlock> Router<P> {
    /// A router with the provider block `provider` and no types yet.
    pub fn new(provider: P) -> Self {
        Router {
            provider,
            resources: BTreeMap::new(),
            data_sources: BTreeMap::new(),
            lists: BTreeMap::new(),
            functions: BTreeMap::new(),
        }
    }

    /// Adds a provider-defined function. Panics if its name is already registered.
    pub fn function(mut self, function: impl crate::function::Function) -> Self {
        let name = function.name().to_string();
        assert!(
            !self.functions.contains_key(&name),
            "function `{name}` registered twice"
        );
        self.functions.insert(name, Box::new(function));
        self
    }

    /// Adds a resource type. Panics if its type name is already registered.
    pub fn resource(mut self, resource: impl Resource) -> Self {
        let name = resource.type_name().to_string();
        assert!(
            !self.resources.contains_key(&name),
            "resource type `{name}` registered twice"
        );
        let schema = resource.schema();
        self.resources.insert(
            name,
            Registered {
                schema,
                handler: Box::new(resource),
            },
        );
        self
    }

    /// Adds a data source type. Panics if its type name is already registered.
    pub fn data_source(mut self, data_source: impl DataSource) -> Self {
        let name = data_source.type_name().to_string();
        assert!(
            !self.data_sources.contains_key(&name),
            "data source type `{name}` registered twice"
        );
        let schema = data_source.schema();
        self.data_sources.insert(
            name,
            Registered {
                schema,
                handler: Box::new(data_source),
            },
        );
        self
    }

    /// Adds a list resource type. Panics if it is registered twice, or if the resource
    /// type it lists is not registered first with an identity schema.
    pub fn list(mut self, list: impl ListResource) -> Self {
        let name = list.type_name().to_string();
        assert!(
            !self.lists.contains_key(&name),
            "list resource type `{name}` registered twice"
        );
        assert!(
            self.resources
                .get(&name)
                .is_some_and(|r| r.handler.identity().is_some()),
            "list resource type `{name}` lists no registered resource with an identity"
        );
        let schema = list.schema();
        self.lists.insert(
            name,
            Registered {
                schema,
                handler: Box::new(list),
            },
        );
        self
    }

    /// The configuration a user would write for `state` of `type_name`: computed-only,
    /// write-only and sensitive attributes null, then each optional-and-computed value
    /// the resource's validation refuses (written only in some forms) unset again.
    pub async fn config_of_state(&self, type_name: &str, state: &Value) -> GeneratedConfig {
        let Some(r) = self.resources.get(type_name) else {
            return GeneratedConfig {
                config: Value::Null,
                withheld: Vec::new(),
                validation: self.unknown_resource(type_name).into(),
            };
        };
        let block = &r.schema.block;
        let mut withheld = Vec::new();
        let mut config = generate::config_value(state, block, "", &mut withheld);
        let mut validation = self.validate_resource_config(type_name, &config).await;
        for _ in 0..block.attributes.len() {
            let unset = validation.0.iter().any(|d| {
                d.severity == Severity::Error
                    && d.attribute
                        .as_ref()
                        .is_some_and(|p| generate::unset_computed(&mut config, block, &p.0))
            });
            if !unset {
                break;
            }
            validation = self.validate_resource_config(type_name, &config).await;
        }
        GeneratedConfig {
            config,
            withheld,
            validation,
        }
    }

    /// The state of the object `identity` names: [`Router::read_by_id`] of the import id
    /// it stands for.
    async fn read_by_identity(
        &self,
        type_name: &str,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        let id = self.find_resource(type_name)?.import_id_of(identity)?;
        self.read_by_id(type_name, &id).await
    }

    /// The state of the object import id `id` names: the resource's import, then its
    /// read, as `terraform import` runs them (neither changes anything). An error when
    /// either fails or the object is gone.
    pub async fn read_by_id(&self, type_name: &str, id: &str) -> Result<Value, Diagnostics> {
        let imported = self
            .import_resource_state(ImportResourceStateRequest {
                type_name: type_name.to_string(),
                id: id.to_string(),
            })
            .await;
        if imported.diagnostics.has_errors() {
            return Err(imported.diagnostics);
        }
        let Some(first) = imported.imported.into_iter().next() else {
            return Err(Diagnostic::error(
                "Nothing imported",
                format!("Import of {id:?} found nothing."),
            )
            .into());
        };
        let read = self
            .read_resource(ReadResourceRequest {
                type_name: type_name.to_string(),
                current_state: first.state,
                private: first.private,
                provider_meta: None,
            })
            .await;
        if read.diagnostics.has_errors() {
            return Err(read.diagnostics);
        }
        if read.new_state.is_null() {
            return Err(Diagnostic::error("Gone", format!("{id:?} no longer exists.")).into());
        }
        Ok(read.new_state)
    }

    /// The provider block.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The error for a resource type this router does not have.
    pub fn unknown_resource(&self, type_name: &str) -> Diagnostic {
        Diagnostic::error(
            "Unknown resource type",
            format!(
                "This provider has no resource type `{type_name}`; its resource types: {}.",
                known(self.resources.keys().cloned())
            ),
        )
    }

    /// The error for a data source type this router does not have.
    pub fn unknown_data_source(&self, type_name: &str) -> Diagnostic {
        Diagnostic::error(
            "Unknown data source",
            format!(
                "This provider has no data source `{type_name}`; its data sources: {}.",
                known(self.data_sources.keys().cloned())
            ),
        )
    }

    fn find_resource(&self, type_name: &str) -> Result<&dyn Resource, Diagnostics> {
        self.resources
            .get(type_name)
            .map(|r| r.handler.as_ref())
            .ok_or_else(|| self.unknown_resource(type_name).into())
    }

    fn find_data_source(&self, type_name: &str) -> Result<&dyn DataSource, Diagnostics> {
        self.data_sources
            .get(type_name)
            .map(|r| r.handler.as_ref())
            .ok_or_else(|| self.unknown_data_source(type_name).into())
    }
}

#[async_trait]
impl<P: ProviderBlock> Provider for Router<P> {
    fn schemas(&self) -> ProviderSchemas {
        ProviderSchemas {
            provider: self.provider.schema(),
            provider_meta: self.provider.meta_schema(),
            resources: self
                .resources
                .iter()
                .map(|(n, r)| (n.clone(), r.schema.clone()))
                .collect(),
            data_sources: self
                .data_sources
                .iter()
                .map(|(n, d)| (n.clone(), d.schema.clone()))
                .collect(),
            functions: self
                .functions
                .iter()
                .map(|(n, f)| (n.clone(), f.signature()))
                .collect(),
            identities: self
                .resources
                .iter()
                .filter_map(|(n, r)| Some((n.clone(), r.handler.identity()?)))
                .collect(),
            list_resources: self
                .lists
                .iter()
                .map(|(n, l)| (n.clone(), l.schema.clone()))
                .collect(),
        }
    }

    fn identity_of(&self, type_name: &str, state: &Value) -> Option<Value> {
        self.resources.get(type_name)?.handler.identity_of(state)
    }

    async fn import_id_of_identity(
        &self,
        type_name: &str,
        identity: &Value,
    ) -> Result<String, Diagnostics> {
        self.find_resource(type_name)?.import_id_of(identity)
    }

    async fn validate_list_resource_config(&self, type_name: &str, config: &Value) -> Diagnostics {
        let Some(l) = self.lists.get(type_name) else {
            return Diagnostic::error(
                "Unknown list resource type",
                format!(
                    "This provider has no list resource `{type_name}`; its list resources: {}.",
                    known(self.lists.keys().cloned())
                ),
            )
            .into();
        };
        let mut diags = l.schema.block.check(config);
        diags.extend(
            l.handler
                .validate(ValidateRequest::new(config.clone()))
                .await,
        );
        diags
    }

    async fn list_resource(&self, request: ListResourceRequest) -> ListResourceResponse {
        let type_name = request.type_name.clone();
        let Some(l) = self.lists.get(&type_name) else {
            return ListResourceResponse {
                results: Vec::new(),
                diagnostics: crate::provider::unsupported("Listing", &type_name).into(),
            };
        };
        let limit = usize::try_from(request.limit.max(0)).unwrap_or(usize::MAX);
        let listing = l
            .handler
            .list(ListRequest {
                config: request.config,
                limit,
            })
            .await;
        let mut results = Vec::new();
        for found in listing.found.into_iter().take(limit) {
            let mut listed = ListedResource {
                identity: found.identity,
                display_name: found.display_name,
                resource_object: None,
                diagnostics: Diagnostics::new(),
            };
            if request.include_resource_object {
                match self.read_by_identity(&type_name, &listed.identity).await {
                    Ok(state) => listed.resource_object = Some(state),
                    // Not this one, with a warning that says why; the listing goes on.
                    Err(d) => {
                        let why: Vec<String> =
                            d.0.iter()
                                .map(|x| format!("{}: {}", x.summary, x.detail))
                                .collect();
                        listed.diagnostics.push(Diagnostic::warning(
                            format!("Cannot read {}", listed.display_name),
                            why.join("; "),
                        ));
                        listed.identity = Value::Null;
                    }
                }
            }
            results.push(listed);
        }
        ListResourceResponse {
            results,
            diagnostics: listing.diagnostics,
        }
    }

    fn supports_generate_resource_config(&self) -> bool {
        !self.lists.is_empty()
    }

    async fn generate_resource_config(
        &self,
        type_name: &str,
        state: Value,
    ) -> Result<Value, Diagnostics> {
        self.find_resource(type_name)?;
        Ok(self.config_of_state(type_name, &state).await.config)
    }

    async fn call_function(
        &self,
        name: &str,
        arguments: Vec<Value>,
    ) -> Result<Value, crate::function::FunctionError> {
        match self.functions.get(name) {
            Some(f) => f.call(arguments).await,
            None => Err(crate::function::FunctionError {
                text: format!(
                    "This provider has no function named `{name}`; its functions: {}.",
                    known(self.functions.keys().cloned())
                ),
                argument: None,
            }),
        }
    }

    async fn validate_provider_config(&self, config: &Value) -> Diagnostics {
        let mut diags = self.provider.schema().block.check(config);
        diags.extend(self.provider.validate(config).await);
        diags
    }

    async fn configure_provider(&self, request: ConfigureProviderRequest) -> Diagnostics {
        self.provider.configure(request).await
    }

    async fn stop_provider(&self) -> Result<(), String> {
        self.provider.stop().await
    }

    async fn validate_resource_config(&self, type_name: &str, config: &Value) -> Diagnostics {
        let Some(r) = self.resources.get(type_name) else {
            return self.unknown_resource(type_name).into();
        };
        // The schema kept at registration: its attribute validators first, then the
        // resource's own checks.
        let mut diags = r.schema.block.check(config);
        diags.extend(
            r.handler
                .validate(ValidateRequest::new(config.clone()))
                .await,
        );
        diags
    }

    async fn validate_data_resource_config(&self, type_name: &str, config: &Value) -> Diagnostics {
        let Some(d) = self.data_sources.get(type_name) else {
            return self.unknown_data_source(type_name).into();
        };
        let mut diags = d.schema.block.check(config);
        diags.extend(
            d.handler
                .validate(ValidateRequest::new(config.clone()))
                .await,
        );
        diags
    }

    async fn upgrade_resource_state(
        &self,
        request: UpgradeResourceStateRequest,
        schema: &Schema,
    ) -> Result<Value, Diagnostics> {
        self.find_resource(&request.type_name)?
            .upgrade_state(request, schema)
            .await
    }

    async fn read_resource(&self, request: ReadResourceRequest) -> ReadResourceResponse {
        match self.find_resource(&request.type_name) {
            Ok(r) => r.read(ReadRequest::new(request)).await,
            Err(diagnostics) => ReadResourceResponse {
                new_state: request.current_state,
                private: request.private,
                diagnostics,
            },
        }
    }

    async fn plan_resource_change(
        &self,
        request: PlanResourceChangeRequest,
    ) -> PlanResourceChangeResponse {
        match self.find_resource(&request.type_name) {
            // A destroy is planned by the resource only when it asks to be.
            Ok(r) if request.proposed_new_state.is_null() && !r.plans_destroy() => {
                PlanResourceChangeResponse::default()
            }
            Ok(r) => r.plan(PlanRequest::new(request)).await,
            Err(diagnostics) => PlanResourceChangeResponse {
                diagnostics,
                ..Default::default()
            },
        }
    }

    async fn apply_resource_change(
        &self,
        request: ApplyResourceChangeRequest,
    ) -> ApplyResourceChangeResponse {
        match self.find_resource(&request.type_name) {
            Ok(r) => r.apply(ApplyRequest::new(request)).await,
            Err(diagnostics) => ApplyResourceChangeResponse {
                new_state: request.prior_state,
                diagnostics,
                ..Default::default()
            },
        }
    }

    async fn import_resource_state(
        &self,
        request: ImportResourceStateRequest,
    ) -> ImportResourceStateResponse {
        let type_name = request.type_name.clone();
        match self.find_resource(&type_name) {
            Ok(r) => {
                let mut response = r.import(ImportRequest::new(request)).await;
                for i in &mut response.imported {
                    if i.type_name.is_empty() {
                        i.type_name = type_name.clone();
                    }
                }
                response
            }
            Err(diagnostics) => ImportResourceStateResponse {
                imported: Vec::new(),
                diagnostics,
            },
        }
    }

    fn supports_move_resource_state(&self) -> bool {
        self.resources
            .values()
            .any(|r| r.handler.supports_move_state())
    }

    fn supports_plan_destroy(&self) -> bool {
        self.resources.values().any(|r| r.handler.plans_destroy())
    }

    async fn move_resource_state(
        &self,
        request: MoveResourceStateRequest,
    ) -> MoveResourceStateResponse {
        match self.find_resource(&request.target_type_name) {
            Ok(r) => r.move_state(request).await,
            Err(diagnostics) => MoveResourceStateResponse {
                diagnostics,
                ..Default::default()
            },
        }
    }

    async fn read_data_source(&self, request: ReadDataSourceRequest) -> ReadDataSourceResponse {
        match self.find_data_source(&request.type_name) {
            Ok(d) => d.read(ReadDataRequest::new(request)).await,
            Err(diagnostics) => ReadDataSourceResponse {
                state: Value::Null,
                diagnostics,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ClientCapabilities;
    use crate::resource::imported;
    use crate::schema::{Attribute, Block};
    use crate::value::Type;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Thing;

    #[async_trait]
    impl Resource for Thing {
        fn type_name(&self) -> &str {
            "t_thing"
        }
        fn schema(&self) -> Schema {
            Schema::new(
                Block::new("thing")
                    .attribute(Attribute::required("name", Type::String))
                    .attribute(
                        Attribute::optional("size", Type::String)
                            .validate(crate::validators::one_of(&["s", "l"])),
                    ),
            )
            .version(2)
        }
        async fn validate(&self, r: ValidateRequest) -> Diagnostics {
            match r.config().get_attr("name").and_then(Value::as_str) {
                Some("") => Diagnostic::error("empty", "").into(),
                _ => Diagnostics::new(),
            }
        }
        async fn apply(&self, r: ApplyRequest) -> ApplyResourceChangeResponse {
            ApplyResourceChangeResponse {
                new_state: r.planned().clone(),
                ..Default::default()
            }
        }
        async fn import(&self, r: ImportRequest) -> ImportResourceStateResponse {
            imported(Value::object([("name", Value::string(r.id()))]))
        }
    }

    struct Movable;

    #[async_trait]
    impl Resource for Movable {
        fn type_name(&self) -> &str {
            "t_movable"
        }
        fn schema(&self) -> Schema {
            Schema::new(Block::new("movable"))
        }
        async fn apply(&self, _r: ApplyRequest) -> ApplyResourceChangeResponse {
            ApplyResourceChangeResponse::default()
        }
        fn supports_move_state(&self) -> bool {
            true
        }
        async fn move_state(&self, _r: MoveResourceStateRequest) -> MoveResourceStateResponse {
            MoveResourceStateResponse {
                target_state: Value::object([("moved", Value::Bool(true))]),
                ..Default::default()
            }
        }
    }

    /// A resource whose plan always warns, and which may ask to plan destroys.
    struct Loud {
        plans_destroy: bool,
    }

    #[async_trait]
    impl Resource for Loud {
        fn type_name(&self) -> &str {
            "t_loud"
        }
        fn schema(&self) -> Schema {
            Schema::new(Block::new("loud"))
        }
        async fn plan(&self, r: PlanRequest) -> PlanResourceChangeResponse {
            let mut out = r.proposed_response();
            out.diagnostics
                .push(Diagnostic::warning("planned by the resource", "x"));
            out
        }
        fn plans_destroy(&self) -> bool {
            self.plans_destroy
        }
        async fn apply(&self, _r: ApplyRequest) -> ApplyResourceChangeResponse {
            ApplyResourceChangeResponse::default()
        }
    }

    struct Echo;

    #[async_trait]
    impl DataSource for Echo {
        fn type_name(&self) -> &str {
            "t_echo"
        }
        fn schema(&self) -> Schema {
            Schema::new(Block::new("echo"))
        }
        async fn read(&self, r: ReadDataRequest) -> ReadDataSourceResponse {
            ReadDataSourceResponse {
                state: r.config().clone(),
                diagnostics: Diagnostics::new(),
            }
        }
    }

    #[derive(Default)]
    struct Counting {
        configured: AtomicUsize,
        stopped: AtomicUsize,
    }

    #[async_trait]
    impl ProviderBlock for Counting {
        fn schema(&self) -> Schema {
            Schema::new(Block::new("counting"))
        }
        async fn configure(&self, _r: ConfigureProviderRequest) -> Diagnostics {
            self.configured.fetch_add(1, Ordering::SeqCst);
            Diagnostics::new()
        }
        async fn stop(&self) -> Result<(), String> {
            self.stopped.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    fn router() -> Router {
        Router::new(Schema::new(Block::new("p")))
            .resource(Thing)
            .data_source(Echo)
    }

    fn plan_request(type_name: &str, prior: Value, proposed: Value) -> PlanResourceChangeRequest {
        PlanResourceChangeRequest {
            type_name: type_name.into(),
            prior_state: prior,
            proposed_new_state: proposed.clone(),
            config: proposed,
            prior_private: b"{\"k\":1}".to_vec(),
            provider_meta: None,
            client_capabilities: ClientCapabilities::default(),
        }
    }

    #[tokio::test]
    async fn attribute_validators_run_with_the_resources_own_checks() {
        let r = router();
        let bad = Value::object([("name", Value::string("")), ("size", Value::string("m"))]);
        let d = r.validate_resource_config("t_thing", &bad).await;
        let summaries: Vec<&str> = d.0.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(summaries, ["Invalid size", "empty"]);
        let fine = Value::object([("name", Value::string("a")), ("size", Value::string("l"))]);
        assert!(
            r.validate_resource_config("t_thing", &fine)
                .await
                .is_empty()
        );
    }

    #[test]
    fn schemas_are_keyed_by_type_name() {
        let s = router().schemas();
        assert_eq!(s.resources.keys().collect::<Vec<_>>(), ["t_thing"]);
        assert_eq!(s.resources["t_thing"].version, 2);
        assert_eq!(s.data_sources.keys().collect::<Vec<_>>(), ["t_echo"]);
        assert_eq!(s.provider.block.description, "p");
    }

    #[tokio::test]
    async fn dispatches_by_type_name() {
        let r = router();
        let bad = Value::object([("name", Value::string(""))]);
        assert!(
            r.validate_resource_config("t_thing", &bad)
                .await
                .has_errors()
        );
        let v = Value::object([("x", Value::string("y"))]);
        let out = r
            .read_data_source(ReadDataSourceRequest {
                type_name: "t_echo".into(),
                config: v.clone(),
                provider_meta: None,
            })
            .await;
        assert_eq!(out.state, v);
    }

    #[tokio::test]
    async fn default_plan_is_the_proposal_with_private_kept() {
        let proposed = Value::object([("name", Value::string("n"))]);
        let out = router()
            .plan_resource_change(plan_request("t_thing", Value::Null, proposed.clone()))
            .await;
        assert_eq!(out.planned_state, proposed);
        assert_eq!(out.planned_private, b"{\"k\":1}");
        assert!(out.diagnostics.is_empty());
    }

    #[tokio::test]
    async fn unknown_types_name_the_type_and_the_known_ones() {
        let r = router();
        let out = r
            .plan_resource_change(plan_request("t_nope", Value::Null, Value::Null))
            .await;
        let d = &out.diagnostics.0[0];
        assert_eq!(d.summary, "Unknown resource type");
        assert!(
            d.detail.contains("`t_nope`") && d.detail.contains("`t_thing`"),
            "{}",
            d.detail
        );
        let d = r
            .validate_data_resource_config("t_gone", &Value::Null)
            .await;
        assert!(d.0[0].detail.contains("`t_gone`") && d.0[0].detail.contains("`t_echo`"));
        let empty = Router::new(Schema::default());
        assert!(
            empty.unknown_resource("x").detail.ends_with("types: none."),
            "{}",
            empty.unknown_resource("x").detail
        );
    }

    #[tokio::test]
    async fn import_fills_the_type_name_and_default_refuses() {
        let r = router();
        let out = r
            .import_resource_state(ImportResourceStateRequest {
                type_name: "t_thing".into(),
                id: "abc".into(),
            })
            .await;
        assert_eq!(out.imported[0].type_name, "t_thing");
        assert_eq!(
            out.imported[0].state.get_attr("name"),
            Some(&Value::string("abc"))
        );
        let r = Router::new(Schema::default()).resource(Movable);
        let out = r
            .import_resource_state(ImportResourceStateRequest {
                type_name: "t_movable".into(),
                id: "abc".into(),
            })
            .await;
        assert!(out.imported.is_empty());
        assert_eq!(
            out.diagnostics.0[0].summary,
            "Import is not supported for t_movable"
        );
    }

    #[tokio::test]
    async fn upgrade_defaults_to_decoding_the_current_version() {
        let r = router();
        let schema = &r.schemas().resources["t_thing"];
        let request = |version| UpgradeResourceStateRequest {
            type_name: "t_thing".into(),
            version,
            raw_json: Some(br#"{"name":"a"}"#.to_vec()),
            raw_flatmap: BTreeMap::new(),
        };
        let v = r.upgrade_resource_state(request(2), schema).await.unwrap();
        assert_eq!(v.get_attr("name"), Some(&Value::string("a")));
        let e = r
            .upgrade_resource_state(request(1), schema)
            .await
            .unwrap_err();
        assert_eq!(e.0[0].summary, "Unsupported state version");
    }

    #[tokio::test]
    async fn destroys_are_planned_by_the_resources_that_ask_and_by_the_router_otherwise() {
        assert!(!router().supports_plan_destroy());
        let prior = Value::object([("id", Value::string("a"))]);
        for asks in [false, true] {
            let r = Router::new(Schema::new(Block::new("p"))).resource(Loud {
                plans_destroy: asks,
            });
            assert_eq!(r.supports_plan_destroy(), asks);
            let out = r
                .plan_resource_change(plan_request("t_loud", prior.clone(), Value::Null))
                .await;
            assert!(out.planned_state.is_null());
            assert_eq!(out.diagnostics.0.len(), usize::from(asks), "{asks}");
            // An update is always the resource's.
            let out = r
                .plan_resource_change(plan_request("t_loud", prior.clone(), prior.clone()))
                .await;
            assert_eq!(out.diagnostics.0.len(), 1);
        }
    }

    #[tokio::test]
    async fn move_is_advertised_only_when_a_resource_implements_it() {
        assert!(!router().supports_move_resource_state());
        let r = router().resource(Movable);
        assert!(r.supports_move_resource_state());
        let request = |target: &str| MoveResourceStateRequest {
            source_provider_address: "x".into(),
            source_type_name: "old".into(),
            source_schema_version: 0,
            source_state_json: b"{}".to_vec(),
            target_type_name: target.into(),
            source_private: Vec::new(),
        };
        let out = r.move_resource_state(request("t_movable")).await;
        assert_eq!(out.target_state.get_attr("moved"), Some(&Value::Bool(true)));
        let out = r.move_resource_state(request("t_thing")).await;
        assert!(out.diagnostics.has_errors());
    }

    #[tokio::test]
    async fn provider_block_gets_configure_and_stop_through_an_arc() {
        let block = Arc::new(Counting::default());
        let r = Router::new(block.clone()).resource(Thing);
        r.configure_provider(ConfigureProviderRequest {
            terraform_version: "1.15.0".into(),
            config: Value::Null,
            client_capabilities: ClientCapabilities::default(),
        })
        .await;
        r.stop_provider().await.unwrap();
        assert_eq!(block.configured.load(Ordering::SeqCst), 1);
        assert_eq!(block.stopped.load(Ordering::SeqCst), 1);
        assert_eq!(r.schemas().provider.block.description, "counting");
    }

    #[test]
    fn failure_answers_keep_what_exists() {
        let diags: Diagnostics = Diagnostic::error("boom", "").into();
        let prior = Value::object([("name", Value::string("a"))]);
        let apply = ApplyRequest::new(ApplyResourceChangeRequest {
            type_name: "t_thing".into(),
            prior_state: prior.clone(),
            planned_state: Value::object([("name", Value::string("b"))]),
            config: Value::Null,
            planned_private: b"p".to_vec(),
            provider_meta: None,
        });
        let out = apply.failed(diags.clone());
        assert_eq!(
            (out.new_state, out.private, out.diagnostics),
            (prior.clone(), b"p".to_vec(), diags.clone())
        );
        let read = ReadRequest::new(ReadResourceRequest {
            type_name: "t_thing".into(),
            current_state: prior.clone(),
            private: b"q".to_vec(),
            provider_meta: None,
        });
        let out = read.failed(diags.clone());
        assert_eq!((out.new_state, out.private), (prior, b"q".to_vec()));
        assert!(
            PlanResourceChangeResponse::from(diags.clone())
                .diagnostics
                .has_errors()
        );
        assert!(
            ImportResourceStateResponse::from(diags.clone())
                .imported
                .is_empty()
        );
        assert!(ReadDataSourceResponse::from(diags).state.is_null());
    }

    #[test]
    #[should_panic(expected = "registered twice")]
    fn a_type_registered_twice_panics() {
        let _ = router().resource(Thing);
    }

    struct Double;

    #[async_trait]
    impl crate::function::Function for Double {
        fn name(&self) -> &str {
            "double"
        }
        fn signature(&self) -> crate::function::FunctionSignature {
            crate::function::FunctionSignature {
                summary: "twice x".into(),
                description: String::new(),
                parameters: vec![crate::function::Parameter::new("x", Type::Number, "x")],
                returns: Type::Number,
            }
        }
        async fn call(&self, a: Vec<Value>) -> Result<Value, crate::function::FunctionError> {
            let x = a[0].as_number().map(|n| n.as_f64()).unwrap_or_default();
            if x < 0.0 {
                return Err(crate::function::FunctionError::argument(
                    0,
                    "x must be 0 or more",
                ));
            }
            Ok(Value::number(2.0 * x))
        }
    }

    #[tokio::test]
    async fn functions_are_listed_and_called_by_name() {
        let r = router().function(Double);
        assert_eq!(r.schemas().functions.keys().collect::<Vec<_>>(), ["double"]);
        assert_eq!(
            r.call_function("double", vec![Value::number(2.0)]).await,
            Ok(Value::number(4.0))
        );
        let e = r
            .call_function("double", vec![Value::number(-1.0)])
            .await
            .unwrap_err();
        assert_eq!(e.argument, Some(0));
        let e = r.call_function("triple", vec![]).await.unwrap_err();
        assert!(
            e.text.contains("`triple`") && e.text.contains("`double`"),
            "{}",
            e.text
        );
    }
}
