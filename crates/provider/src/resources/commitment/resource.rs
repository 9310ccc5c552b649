//! `gpu_commitment` as a `tfplugin::Resource`: thin glue to plan, apply and read.

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
use tfplugin::{Diagnostics, Resource, Schema};

use super::model::CommitmentModel;
use crate::model_values::text;
use gpu_core::commitment::{CommitmentKind, Commitments};
use gpu_core::seam::ConnectCommitments as _;
use tfplugin::{Diagnostic, Value};

/// The adapter of the commitment `v`'s cloud, or the diagnostic of why there is none.
async fn connect(
    settings: &super::Settings,
    v: &Value,
) -> Result<Box<dyn Commitments>, Diagnostics> {
    let m = CommitmentModel::of(v);
    let cloud = text(&m.kind)
        .parse::<CommitmentKind>()
        .map(CommitmentKind::cloud)
        .map_err(|e| Diagnostics::from(Diagnostic::error("Invalid kind", e.to_string())))?;
    let region = text(&m.region).trim().to_ascii_lowercase();
    settings
        .clouds
        .commitments(cloud, &region)
        .await
        .map_err(|e| Diagnostic::error(format!("Cannot connect to {cloud}"), e.to_string()).into())
}
use super::{TYPE_NAME, apply, plan, schema};

/// What commitments need of the configured provider block.
pub trait CommitmentProvider: Send + Sync + std::fmt::Debug {
    /// The settings of an operation starting now.
    fn commitment_settings(&self) -> super::Settings;
}

/// The `gpu_commitment` resource, configured through the provider block.
#[derive(Debug, Clone)]
pub struct CommitmentResource {
    provider: Arc<dyn CommitmentProvider>,
}

impl CommitmentResource {
    /// The resource, configured through `provider`.
    pub fn new(provider: Arc<dyn CommitmentProvider>) -> Self {
        CommitmentResource { provider }
    }
}

#[async_trait]
impl Resource for CommitmentResource {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema()
    }

    fn identity(&self) -> Option<tfplugin::IdentitySchema> {
        Some(crate::resources::identity::schema(super::import::FORMS))
    }

    /// `<kind>/<location>/<id>` from the commitment's kind, zone or region and cloud id;
    /// none before it is bought.
    fn identity_of(&self, state: &Value) -> Option<Value> {
        use crate::resources::identity::{of, text};
        let kind = text(state, "kind")?.parse::<CommitmentKind>().ok()?;
        let id = text(state, "commitment_id")?;
        let (zone, region) = (text(state, "zone"), text(state, "region")?);
        of(Some(gpu_core::inventory::commitment_import_id_of(
            kind,
            zone.as_deref(),
            &region,
            &id,
        )))
    }

    fn import_id_of(&self, identity: &Value) -> Result<String, Diagnostics> {
        crate::resources::identity::import_id(identity)
    }

    /// Every input problem on its attribute, before any cloud call (dates are checked
    /// against the clock at plan, only for a purchase).
    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        plan::validate_config(request.config(), Catalog::embedded())
    }

    /// A destroy is planned here: a commitment that cannot be cancelled refuses it at plan.
    fn plans_destroy(&self) -> bool {
        true
    }

    async fn plan(&self, request: PlanRequest) -> PlanResourceChangeResponse {
        let settings = self.provider.commitment_settings();
        plan::plan(
            request.raw(),
            &settings,
            Catalog::embedded(),
            &settings.clouds,
        )
        .await
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResourceChangeResponse {
        let mut settings = self.provider.commitment_settings();
        settings.clouds = crate::resources::audit_context::for_apply(
            settings.clouds,
            super::TYPE_NAME,
            request.prior(),
            request.planned(),
        );
        let live = if request.planned().is_null() {
            request.prior()
        } else {
            request.planned()
        };
        let store = match connect(&settings, live).await {
            Ok(s) => s,
            Err(d) => {
                return ApplyResourceChangeResponse {
                    new_state: request.prior().clone(),
                    private: Vec::new(),
                    diagnostics: d,
                };
            }
        };
        let mut r = apply::apply(
            request.prior(),
            request.planned(),
            &settings,
            store.as_ref(),
        )
        .await;
        r.diagnostics.extend(settings.clouds.audit_warnings());
        r
    }

    /// `<kind>/<location>/<id>`: read from the cloud, never bought or changed.
    async fn import(&self, request: ImportRequest) -> ImportResourceStateResponse {
        let settings = self.provider.commitment_settings();
        match super::import::import(request.id(), &settings).await {
            Ok(state) => imported(state),
            Err(d) => d.into(),
        }
    }

    async fn read(&self, request: ReadRequest) -> ReadResourceResponse {
        let settings = self.provider.commitment_settings();
        let store = match connect(&settings, request.current()).await {
            Ok(s) => s,
            Err(d) => {
                return ReadResourceResponse {
                    new_state: request.current().clone(),
                    private: request.private().to_vec(),
                    diagnostics: d,
                };
            }
        };
        let mut r = apply::read(request.current(), store.as_ref()).await;
        r.private = request.private().to_vec();
        r
    }
}
