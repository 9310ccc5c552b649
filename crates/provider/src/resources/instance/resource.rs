//! `gpu_instance` as a `tfplugin::Resource`: thin glue to plan, apply and read.

use std::sync::Arc;

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use tfplugin::provider::{
    ApplyResourceChangeResponse, ImportResourceStateResponse, PlanResourceChangeResponse,
    ReadResourceResponse,
};
use tfplugin::resource::{
    ApplyRequest, ImportRequest, PlanRequest, ReadRequest, ValidateRequest, imported,
};
use tfplugin::{Diagnostic, Diagnostics, Resource, Schema, Value};

use super::{TYPE_NAME, apply, import, plan, schema};

/// What instances need of the configured provider block.
pub trait InstanceProvider: Send + Sync + std::fmt::Debug {
    /// The settings of an operation starting now.
    fn instance_settings(&self) -> super::Settings;
}

/// The `gpu_instance` resource, configured through the provider block.
#[derive(Debug, Clone)]
pub struct InstanceResource {
    provider: Arc<dyn InstanceProvider>,
}

impl InstanceResource {
    /// The resource, configured through `provider`.
    pub fn new(provider: Arc<dyn InstanceProvider>) -> Self {
        InstanceResource { provider }
    }
}

#[async_trait]
impl Resource for InstanceResource {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    fn identity(&self) -> Option<tfplugin::IdentitySchema> {
        Some(crate::resources::identity::schema(import::ID_SHAPES))
    }

    /// The VM's `id`, with its region in front on AWS (an instance id names none).
    fn identity_of(&self, state: &Value) -> Option<Value> {
        use crate::resources::identity::{of, text};
        let id = text(state, "id")?;
        match text(state, "cloud")?.as_str() {
            "aws" => of(Some(format!("aws/{}/{id}", text(state, "region")?))),
            _ => of(Some(id)),
        }
    }

    fn import_id_of(&self, identity: &Value) -> Result<String, Diagnostics> {
        crate::resources::identity::import_id(identity)
    }

    /// Every input problem on its attribute, before any cloud call.
    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        plan::validate_config(
            request.config(),
            &self.provider.instance_settings(),
            Catalog::embedded(),
        )
    }

    /// A destroy is planned here, to show the saving.
    fn plans_destroy(&self) -> bool {
        true
    }

    async fn plan(&self, request: PlanRequest) -> PlanResourceChangeResponse {
        let settings = self.provider.instance_settings();
        plan::plan(
            request.raw(),
            &settings,
            Catalog::embedded(),
            &settings.base.clouds,
        )
        .await
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResourceChangeResponse {
        let mut settings = self.provider.instance_settings();
        settings.base.clouds = crate::resources::audit_context::for_apply(
            settings.base.clouds,
            super::TYPE_NAME,
            request.prior(),
            request.planned(),
        );
        // The plan took an import's unreadable inputs from the configuration: so does apply.
        let adopted = (request.planned_private() == import::IMPORTED)
            .then(|| import::adopt(request.prior(), request.planned(), Catalog::embedded()).0);
        let mut r = apply::apply(
            adopted.as_ref().unwrap_or(request.prior()),
            request.planned(),
            &settings,
            Catalog::embedded(),
            &settings.base.clouds,
        )
        .await;
        r.diagnostics.extend(settings.base.clouds.audit_warnings());
        r
    }

    async fn read(&self, request: ReadRequest) -> ReadResourceResponse {
        let settings = self.provider.instance_settings();
        let mut r = apply::read(request.current(), &settings, &settings.base.clouds).await;
        r.private = request.private().to_vec();
        r
    }

    /// `terraform import gpu_instance.x <id>`: `aws/<region>/<i-…>`, an Azure VM's ARM id,
    /// or `projects/<p>/zones/<z>/instances/<name>`; the read that follows fills the rest.
    async fn import(&self, request: ImportRequest) -> ImportResourceStateResponse {
        let settings = self.provider.instance_settings();
        match import::import_state(
            request.id(),
            &schema().value_type(),
            settings.base.clouds.azure_subscription(),
            settings.base.clouds.gcp_project(),
        ) {
            Ok(state) => {
                let mut r = imported(state);
                if let Some(first) = r.imported.first_mut() {
                    first.private = import::IMPORTED.to_vec();
                }
                r
            }
            Err(why) => Diagnostics::from(Diagnostic::error("Invalid import id", why)).into(),
        }
    }
}
