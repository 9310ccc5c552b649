//! `gpu_instance` as a `tfplugin::Resource`: thin glue to plan, apply and read.

use std::sync::Arc;

use async_trait::async_trait;
use gpu_core::catalog::Catalog;
use tfplugin::provider::{
    ApplyResourceChangeResponse, PlanResourceChangeResponse, ReadResourceResponse,
};
use tfplugin::resource::{ApplyRequest, PlanRequest, ReadRequest, ValidateRequest};
use tfplugin::{Diagnostics, Resource, Schema};

use super::{TYPE_NAME, apply, plan, schema};
use crate::provider::GpuProvider;

/// The `gpu_instance` resource, configured through the provider block.
#[derive(Debug, Clone)]
pub struct InstanceResource {
    provider: Arc<GpuProvider>,
}

impl InstanceResource {
    /// The resource, configured through `provider`.
    pub fn new(provider: Arc<GpuProvider>) -> Self {
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
        plan::plan(request.raw(), &settings, Catalog::embedded(), &settings).await
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResourceChangeResponse {
        let settings = self.provider.instance_settings();
        apply::apply(
            request.prior(),
            request.planned(),
            &settings,
            Catalog::embedded(),
            &settings,
        )
        .await
    }

    async fn read(&self, request: ReadRequest) -> ReadResourceResponse {
        let settings = self.provider.instance_settings();
        let mut r = apply::read(request.current(), &settings, &settings).await;
        r.private = request.private().to_vec();
        r
    }
}
