//! The `Provider` trait: one method per plugin RPC, in our own types (decoded values,
//! diagnostics), with defaults for everything a provider may leave out.
//!
//! The server (`crate::server`) decodes every request against the schemas the provider
//! returned from [`Provider::schemas`], so methods receive [`Value`]s that already conform.

use crate::diag::{Diagnostic, Diagnostics};
use crate::identity::IdentitySchema;
use crate::schema::Schema;
use crate::value::{self, Value};
use async_trait::async_trait;
use std::collections::BTreeMap;

/// Every schema a provider serves: its own configuration, resources and data sources.
#[derive(Debug, Clone, Default)]
pub struct ProviderSchemas {
    /// The `provider "x" { ... }` block.
    pub provider: Schema,
    /// The `provider_meta` block modules may set, if the provider has one.
    pub provider_meta: Option<Schema>,
    /// Managed resource types by full type name (`gpu_node_pool`).
    pub resources: BTreeMap<String, Schema>,
    /// Data source types by full type name (`gpu_offers`).
    pub data_sources: BTreeMap<String, Schema>,
    /// Provider-defined functions by name (Terraform 1.8 and later).
    pub functions: BTreeMap<String, crate::function::FunctionSignature>,
    /// Identity schemas of the managed resource types that have one (Terraform 1.12+).
    pub identities: BTreeMap<String, IdentitySchema>,
    /// `config` block schemas of list resource types, by the managed type they list
    /// (Terraform 1.14+).
    pub list_resources: BTreeMap<String, Schema>,
}

/// What the Terraform client says it can handle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCapabilities {
    /// The client accepts deferred responses.
    pub deferral_allowed: bool,
    /// The client understands write-only attributes.
    pub write_only_attributes_allowed: bool,
}

/// `ConfigureProvider`: the provider block, once per run, before resource calls.
#[derive(Debug, Clone)]
pub struct ConfigureProviderRequest {
    /// The calling Terraform's version string.
    pub terraform_version: String,
    /// The provider block's value (may contain unknowns).
    pub config: Value,
    /// What the client can handle.
    pub client_capabilities: ClientCapabilities,
}

/// `UpgradeResourceState`: stored state written by an older (or the same) schema version.
#[derive(Debug, Clone)]
pub struct UpgradeResourceStateRequest {
    /// The resource type.
    pub type_name: String,
    /// The schema version the state was written with.
    pub version: i64,
    /// The stored state as JSON, when in the current format.
    pub raw_json: Option<Vec<u8>>,
    /// The legacy flatmap form, when that is what is stored.
    pub raw_flatmap: BTreeMap<String, String>,
}

/// `ReadResource`: refresh one resource instance from the real world.
#[derive(Debug, Clone)]
pub struct ReadResourceRequest {
    /// The resource type.
    pub type_name: String,
    /// The state as last saved.
    pub current_state: Value,
    /// Provider-private state saved with it.
    pub private: Vec<u8>,
    /// The module's `provider_meta`, if any.
    pub provider_meta: Option<Value>,
}

/// The answer to `ReadResource`.
#[derive(Debug, Clone, Default)]
pub struct ReadResourceResponse {
    /// The state as it is now; `Value::Null` if the object is gone.
    pub new_state: Value,
    /// Provider-private state to save.
    pub private: Vec<u8>,
    /// Errors and warnings.
    pub diagnostics: Diagnostics,
}

/// `PlanResourceChange`: propose the state after a change.
#[derive(Debug, Clone)]
pub struct PlanResourceChangeRequest {
    /// The resource type.
    pub type_name: String,
    /// The current state; `Value::Null` when creating.
    pub prior_state: Value,
    /// Terraform's proposal (config merged over prior state); `Value::Null` when destroying.
    pub proposed_new_state: Value,
    /// The configuration as written (may contain unknowns).
    pub config: Value,
    /// Provider-private state saved with the prior state.
    pub prior_private: Vec<u8>,
    /// The module's `provider_meta`, if any.
    pub provider_meta: Option<Value>,
    /// What the client can handle.
    pub client_capabilities: ClientCapabilities,
}

/// The answer to `PlanResourceChange`.
#[derive(Debug, Clone, Default)]
pub struct PlanResourceChangeResponse {
    /// The planned new state; unknowns where values are known only after apply.
    pub planned_state: Value,
    /// Attributes whose change forces a replacement.
    pub requires_replace: Vec<crate::diag::AttributePath>,
    /// Provider-private state to hand to apply.
    pub planned_private: Vec<u8>,
    /// Errors and warnings (warnings show in `terraform plan`).
    pub diagnostics: Diagnostics,
}

/// `ApplyResourceChange`: make the planned change real.
#[derive(Debug, Clone)]
pub struct ApplyResourceChangeRequest {
    /// The resource type.
    pub type_name: String,
    /// The current state; `Value::Null` when creating.
    pub prior_state: Value,
    /// The state planned; `Value::Null` when destroying.
    pub planned_state: Value,
    /// The configuration, now wholly known.
    pub config: Value,
    /// Provider-private state from the plan.
    pub planned_private: Vec<u8>,
    /// The module's `provider_meta`, if any.
    pub provider_meta: Option<Value>,
}

/// The answer to `ApplyResourceChange`.
#[derive(Debug, Clone, Default)]
pub struct ApplyResourceChangeResponse {
    /// The state after the change (`Value::Null` after a destroy). On error, the state of
    /// what does exist, so that nothing is lost.
    pub new_state: Value,
    /// Provider-private state to save.
    pub private: Vec<u8>,
    /// Errors and warnings.
    pub diagnostics: Diagnostics,
}

/// `ImportResourceState`: adopt an existing object by its import id.
#[derive(Debug, Clone)]
pub struct ImportResourceStateRequest {
    /// The resource type.
    pub type_name: String,
    /// The id the user gave (`terraform import ADDR ID` or an `import` block).
    pub id: String,
}

/// One object found by an import.
#[derive(Debug, Clone)]
pub struct ImportedResource {
    /// Its resource type.
    pub type_name: String,
    /// Its state; Terraform then calls `ReadResource` on it.
    pub state: Value,
    /// Provider-private state.
    pub private: Vec<u8>,
}

/// The answer to `ImportResourceState`.
#[derive(Debug, Clone, Default)]
pub struct ImportResourceStateResponse {
    /// The imported objects.
    pub imported: Vec<ImportedResource>,
    /// Errors and warnings.
    pub diagnostics: Diagnostics,
}

/// `MoveResourceState`: state of another resource type moved to one of ours.
#[derive(Debug, Clone)]
pub struct MoveResourceStateRequest {
    /// The provider the state came from.
    pub source_provider_address: String,
    /// The resource type it came from.
    pub source_type_name: String,
    /// That type's schema version.
    pub source_schema_version: i64,
    /// The source state as JSON.
    pub source_state_json: Vec<u8>,
    /// Our resource type to move it to.
    pub target_type_name: String,
    /// Private state of the source.
    pub source_private: Vec<u8>,
}

/// The answer to `MoveResourceState`.
#[derive(Debug, Clone, Default)]
pub struct MoveResourceStateResponse {
    /// The state in the target type's schema.
    pub target_state: Value,
    /// Private state for the target.
    pub target_private: Vec<u8>,
    /// Errors and warnings.
    pub diagnostics: Diagnostics,
}

/// `ReadDataSource`: compute a data source's result.
#[derive(Debug, Clone)]
pub struct ReadDataSourceRequest {
    /// The data source type.
    pub type_name: String,
    /// The configuration (wholly known unless the client allows deferral).
    pub config: Value,
    /// The module's `provider_meta`, if any.
    pub provider_meta: Option<Value>,
}

/// The answer to `ReadDataSource`.
#[derive(Debug, Clone, Default)]
pub struct ReadDataSourceResponse {
    /// The config with every computed attribute filled in.
    pub state: Value,
    /// Errors and warnings.
    pub diagnostics: Diagnostics,
}

/// `ListResource`: a `list` block's query, run by `terraform query`.
#[derive(Debug, Clone)]
pub struct ListResourceRequest {
    /// The managed resource type listed.
    pub type_name: String,
    /// The `config` block's value.
    pub config: Value,
    /// Terraform wants each object's state too (`include_resource`, or generating config).
    pub include_resource_object: bool,
    /// At most this many results.
    pub limit: i64,
}

/// One object a list found, as Terraform receives it.
#[derive(Debug, Clone, Default)]
pub struct ListedResource {
    /// Its identity (null only on an event that carries just a warning).
    pub identity: Value,
    /// A short name a person recognizes it by.
    pub display_name: String,
    /// Its state, when asked for and readable.
    pub resource_object: Option<Value>,
    /// Warnings or errors about this one object.
    pub diagnostics: Diagnostics,
}

/// The answer to `ListResource`: the objects found, in order.
#[derive(Debug, Clone, Default)]
pub struct ListResourceResponse {
    /// What was found.
    pub results: Vec<ListedResource>,
    /// Diagnostics about the whole listing.
    pub diagnostics: Diagnostics,
}

impl From<Diagnostics> for PlanResourceChangeResponse {
    /// A failed plan: only the diagnostics (Terraform ignores the rest on error).
    fn from(diagnostics: Diagnostics) -> Self {
        PlanResourceChangeResponse {
            diagnostics,
            ..Default::default()
        }
    }
}

impl From<Diagnostics> for ImportResourceStateResponse {
    /// A failed import: nothing imported, only the diagnostics.
    fn from(diagnostics: Diagnostics) -> Self {
        ImportResourceStateResponse {
            imported: Vec::new(),
            diagnostics,
        }
    }
}

impl From<Diagnostics> for ReadDataSourceResponse {
    /// A failed data source read: a null state and the diagnostics.
    fn from(diagnostics: Diagnostics) -> Self {
        ReadDataSourceResponse {
            state: Value::Null,
            diagnostics,
        }
    }
}

/// A diagnostic for an RPC a provider does not implement for a type.
pub fn unsupported(what: &str, type_name: &str) -> Diagnostic {
    Diagnostic::error(
        format!("{what} is not supported for {type_name}"),
        format!("This provider does not implement {what} for `{type_name}`."),
    )
}

/// The answer to a `MoveResourceState` nobody implements: an error naming the source and
/// target types.
pub fn refuse_move(request: &MoveResourceStateRequest) -> MoveResourceStateResponse {
    MoveResourceStateResponse {
        diagnostics: unsupported(
            &format!("Moving state from `{}`", request.source_type_name),
            &request.target_type_name,
        )
        .into(),
        ..Default::default()
    }
}

/// Decodes stored state written with `schema`'s own version (JSON form) against it; any
/// other version, or the legacy flatmap form, is refused with a diagnostic.
pub fn decode_stored_state(
    request: &UpgradeResourceStateRequest,
    schema: &Schema,
) -> Result<Value, Diagnostics> {
    if request.version != schema.version {
        return Err(Diagnostic::error(
            "Unsupported state version",
            format!(
                "State of `{}` was written with schema version {}, and this provider only reads version {}.",
                request.type_name, request.version, schema.version
            ),
        )
        .into());
    }
    let Some(json) = &request.raw_json else {
        return Err(Diagnostic::error(
            "Unsupported state format",
            format!(
                "State of `{}` is in the legacy flatmap format, which this provider cannot read.",
                request.type_name
            ),
        )
        .into());
    };
    value::decode_json(json, &schema.value_type())
        .map(|v| schema.block.with_empty_blocks(v))
        .map_err(|e| {
            Diagnostic::error(
                "Stored state does not match the schema",
                format!("State of `{}`: {e}", request.type_name),
            )
            .into()
        })
}

/// A Terraform provider. Methods map 1:1 to the RPCs of plugin protocol 6; only
/// [`Provider::schemas`] is mandatory.
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// `GetProviderSchema` and `GetMetadata`: every schema the provider serves. Called once
    /// at start; the server keeps the result.
    fn schemas(&self) -> ProviderSchemas;

    /// `ValidateProviderConfig`: static checks of the provider block (values may be unknown).
    async fn validate_provider_config(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// `ValidateResourceConfig`: static checks of a resource block (values may be unknown).
    async fn validate_resource_config(&self, _type_name: &str, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// `ValidateDataResourceConfig`: static checks of a data block (values may be unknown).
    async fn validate_data_resource_config(
        &self,
        _type_name: &str,
        _config: &Value,
    ) -> Diagnostics {
        Diagnostics::new()
    }

    /// `UpgradeResourceState`: the default is [`decode_stored_state`] (JSON state of the
    /// current schema version; any other version refused). A provider that bumps a
    /// schema's version overrides this for its older versions and falls back to it.
    async fn upgrade_resource_state(
        &self,
        request: UpgradeResourceStateRequest,
        schema: &Schema,
    ) -> Result<Value, Diagnostics> {
        decode_stored_state(&request, schema)
    }

    /// `ConfigureProvider`: keep what the resources need (clients, defaults).
    async fn configure_provider(&self, _request: ConfigureProviderRequest) -> Diagnostics {
        Diagnostics::new()
    }

    /// `CallFunction`: arguments converted to the signature's parameter types; the default
    /// has no functions.
    async fn call_function(
        &self,
        name: &str,
        _arguments: Vec<Value>,
    ) -> Result<Value, crate::function::FunctionError> {
        Err(crate::function::FunctionError {
            text: format!("This provider has no function named `{name}`."),
            argument: None,
        })
    }

    /// `ReadResource`: the default keeps the state as it is.
    async fn read_resource(&self, request: ReadResourceRequest) -> ReadResourceResponse {
        ReadResourceResponse {
            new_state: request.current_state,
            private: request.private,
            diagnostics: Diagnostics::new(),
        }
    }

    /// `PlanResourceChange`: the default plans Terraform's proposal unchanged.
    async fn plan_resource_change(
        &self,
        request: PlanResourceChangeRequest,
    ) -> PlanResourceChangeResponse {
        PlanResourceChangeResponse {
            planned_state: request.proposed_new_state,
            planned_private: request.prior_private,
            ..Default::default()
        }
    }

    /// `ApplyResourceChange`: no default; a provider with resources must implement it.
    async fn apply_resource_change(
        &self,
        request: ApplyResourceChangeRequest,
    ) -> ApplyResourceChangeResponse {
        ApplyResourceChangeResponse {
            new_state: request.prior_state,
            diagnostics: unsupported("Apply", &request.type_name).into(),
            ..Default::default()
        }
    }

    /// `ImportResourceState`: the default refuses import.
    async fn import_resource_state(
        &self,
        request: ImportResourceStateRequest,
    ) -> ImportResourceStateResponse {
        ImportResourceStateResponse {
            imported: Vec::new(),
            diagnostics: unsupported("Import", &request.type_name).into(),
        }
    }

    /// Whether [`Provider::move_resource_state`] is implemented: the server advertises
    /// the `move_resource_state` capability only then (default `false`).
    fn supports_move_resource_state(&self) -> bool {
        false
    }

    /// Whether [`Provider::plan_resource_change`] handles destroys (a null proposed new
    /// state; Terraform 1.3 and later then plan each destroy through the provider, so it
    /// can warn, e.g. of what the destroy saves). The server advertises `plan_destroy`
    /// only then (default `false`).
    fn supports_plan_destroy(&self) -> bool {
        false
    }

    /// `MoveResourceState`: the default refuses moves from other resource types.
    async fn move_resource_state(
        &self,
        request: MoveResourceStateRequest,
    ) -> MoveResourceStateResponse {
        refuse_move(&request)
    }

    /// `ReadDataSource`: no default; a provider with data sources must implement it.
    async fn read_data_source(&self, request: ReadDataSourceRequest) -> ReadDataSourceResponse {
        ReadDataSourceResponse {
            state: Value::Null,
            diagnostics: unsupported("Read", &request.type_name).into(),
        }
    }

    /// The identity of the object `state` (of `type_name`) describes, when the type has an
    /// identity schema and the state is far enough known to say; the server sends it with
    /// every read, plan, apply and import. Default: none.
    fn identity_of(&self, _type_name: &str, _state: &Value) -> Option<Value> {
        None
    }

    /// The import id an `import { identity = … }` block's identity stands for, so import
    /// by identity runs the same path as import by id. Default: refused.
    async fn import_id_of_identity(
        &self,
        type_name: &str,
        _identity: &Value,
    ) -> Result<String, Diagnostics> {
        Err(unsupported("Import by identity", type_name).into())
    }

    /// `ValidateListResourceConfig`: static checks of a `list` block's `config`.
    async fn validate_list_resource_config(
        &self,
        _type_name: &str,
        _config: &Value,
    ) -> Diagnostics {
        Diagnostics::new()
    }

    /// `ListResource`: the objects a `list` block selects. Default: refused.
    async fn list_resource(&self, request: ListResourceRequest) -> ListResourceResponse {
        ListResourceResponse {
            results: Vec::new(),
            diagnostics: unsupported("Listing", &request.type_name).into(),
        }
    }

    /// Whether [`Provider::generate_resource_config`] is implemented: the server then
    /// advertises `generate_resource_config` (default `false`).
    fn supports_generate_resource_config(&self) -> bool {
        false
    }

    /// `GenerateResourceConfig`: the configuration a user would write for `state`.
    async fn generate_resource_config(
        &self,
        type_name: &str,
        _state: Value,
    ) -> Result<Value, Diagnostics> {
        Err(unsupported("Generating configuration", type_name).into())
    }

    /// `StopProvider`: cancel in-flight work soon; return an error text if that fails.
    async fn stop_provider(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The default value is null (absent state, nothing planned).
impl Default for Value {
    fn default() -> Self {
        Value::Null
    }
}
