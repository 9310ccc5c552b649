//! `gpu_node_pool` as a `tfplugin::Resource`: thin glue from the router's typed requests
//! to the pool's plan, apply, read, import and state upgrade.

use super::{TYPE_NAME, apply, import, plan, refresh, schema, upgrade};
use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use std::sync::Arc;
use tfplugin::provider::{
    ApplyResourceChangeResponse, ImportResourceStateResponse, PlanResourceChangeResponse,
    ReadResourceResponse, UpgradeResourceStateRequest, decode_stored_state,
};
use tfplugin::resource::{
    ApplyRequest, ImportRequest, PlanRequest, ReadRequest, ValidateRequest, imported,
};
use tfplugin::{Diagnostic, Diagnostics, Resource, Schema, Type, Value};

/// What the pool resource needs of the configured provider block (the provider hands it
/// over, as a framework hands provider data to its resources).
pub trait PoolProvider: Send + Sync + std::fmt::Debug {
    /// The settings of an operation starting now.
    fn pool_settings(&self) -> super::Settings;
}

/// The `gpu_node_pool` resource, with the provider block it reads its settings from.
#[derive(Debug, Clone)]
pub struct NodePool {
    provider: Arc<dyn PoolProvider>,
}

impl NodePool {
    /// The resource, configured through `provider`.
    pub fn new(provider: Arc<dyn PoolProvider>) -> Self {
        NodePool { provider }
    }
}

#[async_trait]
impl Resource for NodePool {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    fn identity(&self) -> Option<tfplugin::IdentitySchema> {
        Some(crate::resources::identity::schema(import::SHAPES))
    }

    /// The pool's `id`, which is its import id.
    fn identity_of(&self, state: &Value) -> Option<Value> {
        crate::resources::identity::of(crate::resources::identity::text(state, "id"))
    }

    fn import_id_of(&self, identity: &Value) -> Result<String, Diagnostics> {
        crate::resources::identity::import_id(identity)
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        super::validate(request.config(), Catalog::embedded())
    }

    /// A destroy is planned here too: its warning says what the destroy saves.
    fn plans_destroy(&self) -> bool {
        true
    }

    async fn plan(&self, request: PlanRequest) -> PlanResourceChangeResponse {
        plan::plan(
            request.raw(),
            &self.provider.pool_settings(),
            Catalog::embedded(),
        )
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResourceChangeResponse {
        let mut settings = self.provider.pool_settings();
        settings.clouds = crate::resources::audit_context::for_apply(
            settings.clouds,
            super::TYPE_NAME,
            request.prior(),
            request.planned(),
        );
        let mut r = apply::apply(
            request.prior(),
            request.planned(),
            &settings,
            Catalog::embedded(),
        )
        .await;
        r.diagnostics.extend(settings.clouds.audit_warnings());
        r
    }

    async fn read(&self, request: ReadRequest) -> ReadResourceResponse {
        let mut r = refresh::read(
            request.current(),
            &self.provider.pool_settings(),
            Catalog::embedded(),
        )
        .await;
        r.private = request.private().to_vec();
        r
    }

    async fn import(&self, request: ImportRequest) -> ImportResourceStateResponse {
        let keys: Vec<String> = match schema().value_type() {
            Type::Object(o) => o.attributes.keys().cloned().collect(),
            _ => Vec::new(),
        };
        match import::import_state(request.id(), &keys, Catalog::embedded()) {
            Ok(state) => imported(state),
            Err(why) => Diagnostics::from(Diagnostic::error("Invalid import id", why)).into(),
        }
    }

    /// State of version 0 (EKS-shaped `node_groups`) is rewritten to version 1; any other
    /// version goes through tfplugin's default.
    async fn upgrade_state(
        &self,
        request: UpgradeResourceStateRequest,
        schema: &Schema,
    ) -> Result<Value, Diagnostics> {
        if request.version == 0
            && let Some(json) = &request.raw_json
        {
            return upgrade::v0_to_current(json, schema);
        }
        decode_stored_state(&request, schema)
    }
}
