//! Typed resources and data sources: one object per Terraform type, with defaults for
//! everything but the schema (and apply, for resources). A [`crate::router::Router`]
//! dispatches the protocol's requests to them by type name.
//!
//! Each method receives a request that names the values it carries (`prior()`,
//! `proposed_new()`, `config()`, ...) and decodes them into Rust types
//! (`decode_config::<T>()`, with [`crate::tf::Tf`] for values that may be unknown), and
//! answers with the protocol's response type.

use crate::diag::{Diagnostic, Diagnostics};
use crate::private::PrivateState;
use crate::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, ClientCapabilities,
    ImportResourceStateRequest, ImportResourceStateResponse, ImportedResource,
    MoveResourceStateRequest, MoveResourceStateResponse, PlanResourceChangeRequest,
    PlanResourceChangeResponse, ReadDataSourceRequest, ReadDataSourceResponse, ReadResourceRequest,
    ReadResourceResponse, UpgradeResourceStateRequest, decode_stored_state, refuse_move,
    unsupported,
};
use crate::schema::Schema;
use crate::tf::{decode, decode_opt};
use crate::value::Value;
use async_trait::async_trait;
use serde::de::DeserializeOwned;

/// The private state in `bytes`, or an error diagnostic saying it is unreadable.
fn private_state(bytes: &[u8]) -> Result<PrivateState, Diagnostics> {
    PrivateState::from_bytes(bytes)
        .map_err(|e| Diagnostic::error("Unreadable private state", format!("{e}.")).into())
}

/// `ValidateResourceConfig` / `ValidateDataResourceConfig`: a block's configuration,
/// where any value may still be unknown.
#[derive(Debug, Clone)]
pub struct ValidateRequest {
    config: Value,
}

impl ValidateRequest {
    /// A request to validate `config`.
    pub fn new(config: Value) -> Self {
        ValidateRequest { config }
    }

    /// The configuration as written (unknowns possible).
    pub fn config(&self) -> &Value {
        &self.config
    }

    /// The configuration decoded as `T` (use [`crate::tf::Tf`] fields for unknowns).
    pub fn decode_config<T: DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        decode(&self.config)
    }
}

/// `PlanResourceChange` for one resource.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    raw: PlanResourceChangeRequest,
}

impl PlanRequest {
    /// Wraps the protocol request.
    pub fn new(raw: PlanResourceChangeRequest) -> Self {
        PlanRequest { raw }
    }

    /// The protocol request, for code written against it.
    pub fn raw(&self) -> &PlanResourceChangeRequest {
        &self.raw
    }

    /// The protocol request, by value.
    pub fn into_raw(self) -> PlanResourceChangeRequest {
        self.raw
    }

    /// The current state; null when creating.
    pub fn prior(&self) -> &Value {
        &self.raw.prior_state
    }

    /// Terraform's proposal (configuration over prior state); null when destroying.
    pub fn proposed_new(&self) -> &Value {
        &self.raw.proposed_new_state
    }

    /// The configuration as written (unknowns possible).
    pub fn config(&self) -> &Value {
        &self.raw.config
    }

    /// The private bytes saved with the prior state.
    pub fn prior_private(&self) -> &[u8] {
        &self.raw.prior_private
    }

    /// The private state saved with the prior state, typed.
    pub fn private_state(&self) -> Result<PrivateState, Diagnostics> {
        private_state(&self.raw.prior_private)
    }

    /// The module's `provider_meta`, if any.
    pub fn provider_meta(&self) -> Option<&Value> {
        self.raw.provider_meta.as_ref()
    }

    /// What the client can handle.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.raw.client_capabilities
    }

    /// True when there is no prior state: the plan creates the object.
    pub fn is_create(&self) -> bool {
        self.raw.prior_state.is_null()
    }

    /// True when nothing is proposed: the plan destroys the object.
    pub fn is_destroy(&self) -> bool {
        self.raw.proposed_new_state.is_null()
    }

    /// The configuration decoded as `T`.
    pub fn decode_config<T: DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        decode(&self.raw.config)
    }

    /// The proposed new state decoded as `T`; `None` when destroying.
    pub fn decode_proposed_new<T: DeserializeOwned>(&self) -> Result<Option<T>, Diagnostics> {
        decode_opt(&self.raw.proposed_new_state)
    }

    /// The prior state decoded as `T`; `None` when creating.
    pub fn decode_prior<T: DeserializeOwned>(&self) -> Result<Option<T>, Diagnostics> {
        decode_opt(&self.raw.prior_state)
    }

    /// The answer that plans the proposal unchanged and keeps the private state.
    pub fn proposed_response(&self) -> PlanResourceChangeResponse {
        PlanResourceChangeResponse {
            planned_state: self.raw.proposed_new_state.clone(),
            planned_private: self.raw.prior_private.clone(),
            ..Default::default()
        }
    }
}

/// `ApplyResourceChange` for one resource.
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    raw: ApplyResourceChangeRequest,
}

impl ApplyRequest {
    /// Wraps the protocol request.
    pub fn new(raw: ApplyResourceChangeRequest) -> Self {
        ApplyRequest { raw }
    }

    /// The protocol request, for code written against it.
    pub fn raw(&self) -> &ApplyResourceChangeRequest {
        &self.raw
    }

    /// The current state; null when creating.
    pub fn prior(&self) -> &Value {
        &self.raw.prior_state
    }

    /// The state planned; null when destroying.
    pub fn planned(&self) -> &Value {
        &self.raw.planned_state
    }

    /// The configuration, now wholly known.
    pub fn config(&self) -> &Value {
        &self.raw.config
    }

    /// The private bytes from the plan.
    pub fn planned_private(&self) -> &[u8] {
        &self.raw.planned_private
    }

    /// The private state from the plan, typed.
    pub fn private_state(&self) -> Result<PrivateState, Diagnostics> {
        private_state(&self.raw.planned_private)
    }

    /// The module's `provider_meta`, if any.
    pub fn provider_meta(&self) -> Option<&Value> {
        self.raw.provider_meta.as_ref()
    }

    /// True when there is no prior state: the apply creates the object.
    pub fn is_create(&self) -> bool {
        self.raw.prior_state.is_null()
    }

    /// True when nothing is planned: the apply destroys the object.
    pub fn is_destroy(&self) -> bool {
        self.raw.planned_state.is_null()
    }

    /// The configuration decoded as `T`.
    pub fn decode_config<T: DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        decode(&self.raw.config)
    }

    /// The answer to a failed apply: `diagnostics`, with the prior state and private
    /// state kept (nothing changed). When part of the change was made, answer with the
    /// state of what exists instead.
    pub fn failed(&self, diagnostics: Diagnostics) -> ApplyResourceChangeResponse {
        ApplyResourceChangeResponse {
            new_state: self.raw.prior_state.clone(),
            private: self.raw.planned_private.clone(),
            diagnostics,
        }
    }

    /// The planned state decoded as `T`; `None` when destroying.
    pub fn decode_planned<T: DeserializeOwned>(&self) -> Result<Option<T>, Diagnostics> {
        decode_opt(&self.raw.planned_state)
    }

    /// The prior state decoded as `T`; `None` when creating.
    pub fn decode_prior<T: DeserializeOwned>(&self) -> Result<Option<T>, Diagnostics> {
        decode_opt(&self.raw.prior_state)
    }
}

/// `ReadResource` for one resource.
#[derive(Debug, Clone)]
pub struct ReadRequest {
    raw: ReadResourceRequest,
}

impl ReadRequest {
    /// Wraps the protocol request.
    pub fn new(raw: ReadResourceRequest) -> Self {
        ReadRequest { raw }
    }

    /// The protocol request, for code written against it.
    pub fn raw(&self) -> &ReadResourceRequest {
        &self.raw
    }

    /// The state as last saved.
    pub fn current(&self) -> &Value {
        &self.raw.current_state
    }

    /// The private bytes saved with it.
    pub fn private(&self) -> &[u8] {
        &self.raw.private
    }

    /// The private state saved with it, typed.
    pub fn private_state(&self) -> Result<PrivateState, Diagnostics> {
        private_state(&self.raw.private)
    }

    /// The module's `provider_meta`, if any.
    pub fn provider_meta(&self) -> Option<&Value> {
        self.raw.provider_meta.as_ref()
    }

    /// The answer to a failed read: `diagnostics`, with the saved state and private
    /// state kept.
    pub fn failed(&self, diagnostics: Diagnostics) -> ReadResourceResponse {
        ReadResourceResponse {
            new_state: self.raw.current_state.clone(),
            private: self.raw.private.clone(),
            diagnostics,
        }
    }

    /// The saved state decoded as `T`.
    pub fn decode_current<T: DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        decode(&self.raw.current_state)
    }
}

/// `ImportResourceState` for one resource.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    raw: ImportResourceStateRequest,
}

impl ImportRequest {
    /// Wraps the protocol request.
    pub fn new(raw: ImportResourceStateRequest) -> Self {
        ImportRequest { raw }
    }

    /// The id the user gave (`terraform import ADDR ID` or an `import` block); see
    /// [`crate::import_id::ImportId`] to split it.
    pub fn id(&self) -> &str {
        &self.raw.id
    }

    /// The resource type being imported.
    pub fn type_name(&self) -> &str {
        &self.raw.type_name
    }
}

/// `ReadDataSource` for one data source.
#[derive(Debug, Clone)]
pub struct ReadDataRequest {
    raw: ReadDataSourceRequest,
}

impl ReadDataRequest {
    /// Wraps the protocol request.
    pub fn new(raw: ReadDataSourceRequest) -> Self {
        ReadDataRequest { raw }
    }

    /// The protocol request, for code written against it.
    pub fn raw(&self) -> &ReadDataSourceRequest {
        &self.raw
    }

    /// The configuration (wholly known unless the client allows deferral).
    pub fn config(&self) -> &Value {
        &self.raw.config
    }

    /// The module's `provider_meta`, if any.
    pub fn provider_meta(&self) -> Option<&Value> {
        self.raw.provider_meta.as_ref()
    }

    /// The configuration decoded as `T`.
    pub fn decode_config<T: DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        decode(&self.raw.config)
    }
}

/// The answer to an import that found one object, `state` (Terraform then reads it).
/// The router fills in the resource's type name.
pub fn imported(state: Value) -> ImportResourceStateResponse {
    ImportResourceStateResponse {
        imported: vec![ImportedResource {
            type_name: String::new(),
            state,
            private: Vec::new(),
        }],
        diagnostics: Diagnostics::new(),
    }
}

/// A managed resource type (`resource "x_thing" ...`): its schema and its part of every
/// resource RPC. Only `type_name`, `schema` and `apply` have no default.
#[async_trait]
pub trait Resource: Send + Sync + 'static {
    /// The full type name, with the provider's prefix (`hello_file`).
    fn type_name(&self) -> &str;

    /// The schema (with its version, for state upgrades). Called once, by the router.
    fn schema(&self) -> Schema;

    /// `ValidateResourceConfig`: static checks; values may be unknown. Default: none.
    async fn validate(&self, _request: ValidateRequest) -> Diagnostics {
        Diagnostics::new()
    }

    /// `PlanResourceChange`. Default: the proposed new state, private state kept.
    async fn plan(&self, request: PlanRequest) -> PlanResourceChangeResponse {
        request.proposed_response()
    }

    /// Whether [`Resource::plan`] wants destroys too (`is_destroy()`; answer a null
    /// planned state). Default `false`: the router answers a destroy's plan itself.
    fn plans_destroy(&self) -> bool {
        false
    }

    /// `ApplyResourceChange`: create, update or destroy (`planned()` null). On error,
    /// return the state of what does exist.
    async fn apply(&self, request: ApplyRequest) -> ApplyResourceChangeResponse;

    /// `ReadResource`. Default: the saved state and private state unchanged.
    async fn read(&self, request: ReadRequest) -> ReadResourceResponse {
        ReadResourceResponse {
            new_state: request.raw.current_state,
            private: request.raw.private,
            diagnostics: Diagnostics::new(),
        }
    }

    /// `ImportResourceState`. Default: an "Import is not supported" error.
    async fn import(&self, request: ImportRequest) -> ImportResourceStateResponse {
        ImportResourceStateResponse {
            imported: Vec::new(),
            diagnostics: unsupported("Import", request.type_name()).into(),
        }
    }

    /// `UpgradeResourceState`. Default: [`decode_stored_state`] (JSON of the current
    /// version only); override for older versions and fall back to it.
    async fn upgrade_state(
        &self,
        request: UpgradeResourceStateRequest,
        schema: &Schema,
    ) -> Result<Value, Diagnostics> {
        decode_stored_state(&request, schema)
    }

    /// Whether [`Resource::move_state`] is implemented (default `false`); the
    /// `move_resource_state` capability is advertised only if some resource says so.
    fn supports_move_state(&self) -> bool {
        false
    }

    /// `MoveResourceState` into this type. Default: refused.
    async fn move_state(&self, request: MoveResourceStateRequest) -> MoveResourceStateResponse {
        refuse_move(&request)
    }

    /// The identity schema, when the type has one (needed for `import { identity }` and
    /// list resources). Default: none.
    fn identity(&self) -> Option<crate::identity::IdentitySchema> {
        None
    }

    /// The identity of the object `state` describes; `None` while the state cannot say
    /// (values unknown before a create). Default: none.
    fn identity_of(&self, _state: &Value) -> Option<Value> {
        None
    }

    /// The import id `identity` stands for, so that import by identity is import by id.
    /// Default: refused.
    fn import_id_of(&self, _identity: &Value) -> Result<String, Diagnostics> {
        Err(unsupported("Import by identity", self.type_name()).into())
    }
}

/// A data source type (`data "x_thing" ...`): its schema, checks and read.
#[async_trait]
pub trait DataSource: Send + Sync + 'static {
    /// The full type name, with the provider's prefix (`hello_greeting`).
    fn type_name(&self) -> &str;

    /// The schema. Called once, by the router.
    fn schema(&self) -> Schema;

    /// `ValidateDataResourceConfig`: static checks; values may be unknown. Default: none.
    async fn validate(&self, _request: ValidateRequest) -> Diagnostics {
        Diagnostics::new()
    }

    /// `ReadDataSource`: the configuration with every computed attribute filled in.
    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse;
}
