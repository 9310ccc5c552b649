//! The `tfplugin6.Provider` gRPC service: decodes each request against the provider's
//! schemas, calls the matching [`Provider`] method, and encodes the answer. RPCs the
//! provider has nothing for (ephemeral resources, list resources, state stores, actions,
//! functions it does not have) answer with an error, never a transport error or a panic.

use super::convert::{self, decode, encode};
use crate::diag::{Diagnostic, Diagnostics};
use crate::proto::tfplugin6 as pb;
use crate::proto::tfplugin6::provider_server::Provider as ProviderRpc;
use crate::provider::{self as p, Provider, ProviderSchemas};
use crate::schema::Schema;
use crate::value::Value;
use futures_util::FutureExt as _;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};

type Reply<T> = Result<Response<T>, Status>;
type EventStream<T> = Pin<Box<dyn futures_util::Stream<Item = Result<T, Status>> + Send>>;

/// The gRPC face of a [`Provider`].
pub struct ProviderService<P: Provider> {
    provider: Arc<P>,
    schemas: Arc<ProviderSchemas>,
    schema_response: Arc<pb::get_provider_schema::Response>,
}

impl<P: Provider> Clone for ProviderService<P> {
    fn clone(&self) -> Self {
        ProviderService {
            provider: self.provider.clone(),
            schemas: self.schemas.clone(),
            schema_response: self.schema_response.clone(),
        }
    }
}

/// What the server tells Terraform it supports: only what the provider implements.
fn capabilities<P: Provider>(provider: &P) -> pb::ServerCapabilities {
    pb::ServerCapabilities {
        plan_destroy: provider.supports_plan_destroy(),
        get_provider_schema_optional: true,
        move_resource_state: provider.supports_move_resource_state(),
        generate_resource_config: false,
    }
}

fn client_caps(c: Option<&pb::ClientCapabilities>) -> p::ClientCapabilities {
    c.map(|c| p::ClientCapabilities {
        deferral_allowed: c.deferral_allowed,
        write_only_attributes_allowed: c.write_only_attributes_allowed,
    })
    .unwrap_or_default()
}

/// Runs a provider method; a panic inside it becomes an error diagnostic.
async fn guarded<T>(what: &str, fut: impl Future<Output = T>) -> Result<T, Diagnostic> {
    AssertUnwindSafe(fut).catch_unwind().await.map_err(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        tracing::error!(rpc = what, "provider panicked: {msg}");
        Diagnostic::error(
            "Provider internal error",
            format!("The provider failed while handling {what}: {msg}. This is a bug in the provider; please report it."),
        )
    })
}

fn diags(d: impl Into<Diagnostics>) -> Vec<pb::Diagnostic> {
    convert::diagnostics(&d.into())
}

fn not_offered(kind: &str, name: &str) -> Vec<pb::Diagnostic> {
    diags(Diagnostic::error(
        format!("Unsupported {kind}"),
        format!("This provider has no {kind} named `{name}`."),
    ))
}

fn meta(dv: Option<&pb::DynamicValue>, schema: Option<&Schema>) -> Option<Value> {
    let schema = schema?;
    decode(dv, &schema.value_type(), "provider_meta").ok()
}

impl<P: Provider> ProviderService<P> {
    /// Wraps `provider`, computing its schemas once.
    pub fn new(provider: Arc<P>) -> Self {
        let schemas = provider.schemas();
        let response = pb::get_provider_schema::Response {
            provider: Some(convert::schema(&schemas.provider)),
            resource_schemas: schemas
                .resources
                .iter()
                .map(|(k, s)| (k.clone(), convert::schema(s)))
                .collect(),
            data_source_schemas: schemas
                .data_sources
                .iter()
                .map(|(k, s)| (k.clone(), convert::schema(s)))
                .collect(),
            provider_meta: schemas.provider_meta.as_ref().map(convert::schema),
            server_capabilities: Some(capabilities(provider.as_ref())),
            functions: convert::functions(&schemas.functions),
            ..Default::default()
        };
        ProviderService {
            provider,
            schemas: Arc::new(schemas),
            schema_response: Arc::new(response),
        }
    }

    fn resource(&self, type_name: &str) -> Result<&Schema, Vec<pb::Diagnostic>> {
        self.schemas
            .resources
            .get(type_name)
            .ok_or_else(|| not_offered("resource type", type_name))
    }

    fn data_source(&self, type_name: &str) -> Result<&Schema, Vec<pb::Diagnostic>> {
        self.schemas
            .data_sources
            .get(type_name)
            .ok_or_else(|| not_offered("data source", type_name))
    }
}

macro_rules! try_diag {
    ($e:expr, $resp:expr) => {
        match $e {
            Ok(v) => v,
            Err(d) => {
                let mut r = $resp;
                r.diagnostics = d.into_iter().map(|x| x.into_pb()).collect();
                return Ok(Response::new(r));
            }
        }
    };
}

/// Conversion of either one diagnostic or a protocol list into protocol diagnostics.
trait IntoPb {
    fn into_pb(self) -> pb::Diagnostic;
}
impl IntoPb for pb::Diagnostic {
    fn into_pb(self) -> pb::Diagnostic {
        self
    }
}
impl IntoPb for Diagnostic {
    fn into_pb(self) -> pb::Diagnostic {
        convert::diagnostic(&self)
    }
}

fn one(d: Diagnostic) -> Vec<Diagnostic> {
    vec![d]
}

#[tonic::async_trait]
impl<P: Provider> ProviderRpc for ProviderService<P> {
    async fn get_metadata(
        &self,
        _: Request<pb::get_metadata::Request>,
    ) -> Reply<pb::get_metadata::Response> {
        use pb::get_metadata as m;
        Ok(Response::new(m::Response {
            server_capabilities: Some(capabilities(self.provider.as_ref())),
            resources: self
                .schemas
                .resources
                .keys()
                .map(|k| m::ResourceMetadata {
                    type_name: k.clone(),
                })
                .collect(),
            data_sources: self
                .schemas
                .data_sources
                .keys()
                .map(|k| m::DataSourceMetadata {
                    type_name: k.clone(),
                })
                .collect(),
            ..Default::default()
        }))
    }

    async fn get_provider_schema(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> Reply<pb::get_provider_schema::Response> {
        Ok(Response::new((*self.schema_response).clone()))
    }

    async fn validate_provider_config(
        &self,
        req: Request<pb::validate_provider_config::Request>,
    ) -> Reply<pb::validate_provider_config::Response> {
        let req = req.into_inner();
        let empty = pb::validate_provider_config::Response::default();
        let ty = self.schemas.provider.value_type();
        let config = try_diag!(
            decode(req.config.as_ref(), &ty, "provider configuration").map_err(one),
            empty
        );
        let d = try_diag!(
            guarded(
                "ValidateProviderConfig",
                self.provider.validate_provider_config(&config)
            )
            .await
            .map_err(one),
            empty
        );
        Ok(Response::new(pb::validate_provider_config::Response {
            diagnostics: diags(d),
        }))
    }

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> Reply<pb::validate_resource_config::Response> {
        let req = req.into_inner();
        let empty = pb::validate_resource_config::Response::default();
        let schema = try_diag!(self.resource(&req.type_name), empty);
        let config = try_diag!(
            decode(
                req.config.as_ref(),
                &schema.value_type(),
                "resource configuration"
            )
            .map_err(one),
            empty
        );
        let d = try_diag!(
            guarded(
                "ValidateResourceConfig",
                self.provider
                    .validate_resource_config(&req.type_name, &config)
            )
            .await
            .map_err(one),
            empty
        );
        Ok(Response::new(pb::validate_resource_config::Response {
            diagnostics: diags(d),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> Reply<pb::validate_data_resource_config::Response> {
        let req = req.into_inner();
        let empty = pb::validate_data_resource_config::Response::default();
        let schema = try_diag!(self.data_source(&req.type_name), empty);
        let config = try_diag!(
            decode(
                req.config.as_ref(),
                &schema.value_type(),
                "data source configuration"
            )
            .map_err(one),
            empty
        );
        let d = try_diag!(
            guarded(
                "ValidateDataResourceConfig",
                self.provider
                    .validate_data_resource_config(&req.type_name, &config)
            )
            .await
            .map_err(one),
            empty
        );
        Ok(Response::new(pb::validate_data_resource_config::Response {
            diagnostics: diags(d),
        }))
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> Reply<pb::upgrade_resource_state::Response> {
        let req = req.into_inner();
        let empty = pb::upgrade_resource_state::Response::default();
        let schema = try_diag!(self.resource(&req.type_name), empty);
        let raw = req.raw_state.unwrap_or_default();
        let request = p::UpgradeResourceStateRequest {
            type_name: req.type_name.clone(),
            version: req.version,
            raw_json: (!raw.json.is_empty()).then_some(raw.json),
            raw_flatmap: raw.flatmap.into_iter().collect(),
        };
        let result = try_diag!(
            guarded(
                "UpgradeResourceState",
                self.provider.upgrade_resource_state(request, schema)
            )
            .await
            .map_err(one),
            empty
        );
        let state = try_diag!(result.map_err(|d| d.0), empty);
        let upgraded = try_diag!(
            encode(&state, &schema.value_type(), "upgraded state").map_err(one),
            empty
        );
        Ok(Response::new(pb::upgrade_resource_state::Response {
            upgraded_state: Some(upgraded),
            diagnostics: vec![],
        }))
    }

    async fn get_resource_identity_schemas(
        &self,
        _: Request<pb::get_resource_identity_schemas::Request>,
    ) -> Reply<pb::get_resource_identity_schemas::Response> {
        Ok(Response::new(Default::default()))
    }

    async fn upgrade_resource_identity(
        &self,
        req: Request<pb::upgrade_resource_identity::Request>,
    ) -> Reply<pb::upgrade_resource_identity::Response> {
        Ok(Response::new(pb::upgrade_resource_identity::Response {
            upgraded_identity: None,
            diagnostics: diags(p::unsupported(
                "Resource identity",
                &req.into_inner().type_name,
            )),
        }))
    }

    async fn configure_provider(
        &self,
        req: Request<pb::configure_provider::Request>,
    ) -> Reply<pb::configure_provider::Response> {
        let req = req.into_inner();
        let empty = pb::configure_provider::Response::default();
        let ty = self.schemas.provider.value_type();
        let config = try_diag!(
            decode(req.config.as_ref(), &ty, "provider configuration").map_err(one),
            empty
        );
        let request = p::ConfigureProviderRequest {
            terraform_version: req.terraform_version,
            config,
            client_capabilities: client_caps(req.client_capabilities.as_ref()),
        };
        let d = try_diag!(
            guarded(
                "ConfigureProvider",
                self.provider.configure_provider(request)
            )
            .await
            .map_err(one),
            empty
        );
        Ok(Response::new(pb::configure_provider::Response {
            diagnostics: diags(d),
        }))
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> Reply<pb::read_resource::Response> {
        let req = req.into_inner();
        let empty = pb::read_resource::Response {
            new_state: req.current_state.clone(),
            private: req.private.clone(),
            ..Default::default()
        };
        let schema = try_diag!(self.resource(&req.type_name), empty);
        let ty = schema.value_type();
        let current_state = try_diag!(
            decode(req.current_state.as_ref(), &ty, "state").map_err(one),
            empty
        );
        let request = p::ReadResourceRequest {
            type_name: req.type_name.clone(),
            current_state,
            private: req.private.clone(),
            provider_meta: meta(
                req.provider_meta.as_ref(),
                self.schemas.provider_meta.as_ref(),
            ),
        };
        let r = try_diag!(
            guarded("ReadResource", self.provider.read_resource(request))
                .await
                .map_err(one),
            empty
        );
        let new_state = try_diag!(encode(&r.new_state, &ty, "state").map_err(one), empty);
        Ok(Response::new(pb::read_resource::Response {
            new_state: Some(new_state),
            diagnostics: diags(r.diagnostics),
            private: r.private,
            ..Default::default()
        }))
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> Reply<pb::plan_resource_change::Response> {
        let req = req.into_inner();
        let empty = pb::plan_resource_change::Response::default();
        let schema = try_diag!(self.resource(&req.type_name), empty);
        let ty = schema.value_type();
        let prior_state = try_diag!(
            decode(req.prior_state.as_ref(), &ty, "prior state").map_err(one),
            empty
        );
        let proposed_new_state = try_diag!(
            decode(req.proposed_new_state.as_ref(), &ty, "proposed new state").map_err(one),
            empty
        );
        let config = try_diag!(
            decode(req.config.as_ref(), &ty, "resource configuration").map_err(one),
            empty
        );
        let request = p::PlanResourceChangeRequest {
            type_name: req.type_name.clone(),
            prior_state,
            proposed_new_state,
            config,
            prior_private: req.prior_private,
            provider_meta: meta(
                req.provider_meta.as_ref(),
                self.schemas.provider_meta.as_ref(),
            ),
            client_capabilities: client_caps(req.client_capabilities.as_ref()),
        };
        let r = try_diag!(
            guarded(
                "PlanResourceChange",
                self.provider.plan_resource_change(request)
            )
            .await
            .map_err(one),
            empty
        );
        let errored = r.diagnostics.has_errors();
        let planned = if errored {
            None
        } else {
            Some(try_diag!(
                encode(&r.planned_state, &ty, "planned state").map_err(one),
                empty
            ))
        };
        Ok(Response::new(pb::plan_resource_change::Response {
            planned_state: planned,
            requires_replace: r
                .requires_replace
                .iter()
                .map(convert::attribute_path)
                .collect(),
            planned_private: r.planned_private,
            diagnostics: diags(r.diagnostics),
            ..Default::default()
        }))
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> Reply<pb::apply_resource_change::Response> {
        let req = req.into_inner();
        // If we cannot even decode the request, nothing was changed: hand back the prior state.
        let empty = pb::apply_resource_change::Response {
            new_state: req.prior_state.clone(),
            ..Default::default()
        };
        let schema = try_diag!(self.resource(&req.type_name), empty);
        let ty = schema.value_type();
        let prior_state = try_diag!(
            decode(req.prior_state.as_ref(), &ty, "prior state").map_err(one),
            empty
        );
        let planned_state = try_diag!(
            decode(req.planned_state.as_ref(), &ty, "planned state").map_err(one),
            empty
        );
        let config = try_diag!(
            decode(req.config.as_ref(), &ty, "resource configuration").map_err(one),
            empty
        );
        let request = p::ApplyResourceChangeRequest {
            type_name: req.type_name.clone(),
            prior_state,
            planned_state,
            config,
            planned_private: req.planned_private,
            provider_meta: meta(
                req.provider_meta.as_ref(),
                self.schemas.provider_meta.as_ref(),
            ),
        };
        let r = try_diag!(
            guarded(
                "ApplyResourceChange",
                self.provider.apply_resource_change(request)
            )
            .await
            .map_err(one),
            empty
        );
        let new_state = try_diag!(encode(&r.new_state, &ty, "new state").map_err(one), empty);
        Ok(Response::new(pb::apply_resource_change::Response {
            new_state: Some(new_state),
            private: r.private,
            diagnostics: diags(r.diagnostics),
            ..Default::default()
        }))
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> Reply<pb::import_resource_state::Response> {
        let req = req.into_inner();
        let empty = pb::import_resource_state::Response::default();
        try_diag!(self.resource(&req.type_name), empty);
        let request = p::ImportResourceStateRequest {
            type_name: req.type_name,
            id: req.id,
        };
        let r = try_diag!(
            guarded(
                "ImportResourceState",
                self.provider.import_resource_state(request)
            )
            .await
            .map_err(one),
            empty
        );
        let mut imported = Vec::new();
        for i in &r.imported {
            let schema = try_diag!(self.resource(&i.type_name), empty);
            let state = try_diag!(
                encode(&i.state, &schema.value_type(), "imported state").map_err(one),
                empty
            );
            imported.push(pb::import_resource_state::ImportedResource {
                type_name: i.type_name.clone(),
                state: Some(state),
                private: i.private.clone(),
                identity: None,
            });
        }
        Ok(Response::new(pb::import_resource_state::Response {
            imported_resources: imported,
            diagnostics: diags(r.diagnostics),
            deferred: None,
        }))
    }

    async fn move_resource_state(
        &self,
        req: Request<pb::move_resource_state::Request>,
    ) -> Reply<pb::move_resource_state::Response> {
        let req = req.into_inner();
        let empty = pb::move_resource_state::Response::default();
        let schema = try_diag!(self.resource(&req.target_type_name), empty);
        let request = p::MoveResourceStateRequest {
            source_provider_address: req.source_provider_address,
            source_type_name: req.source_type_name,
            source_schema_version: req.source_schema_version,
            source_state_json: req.source_state.map(|s| s.json).unwrap_or_default(),
            target_type_name: req.target_type_name,
            source_private: req.source_private,
        };
        let r = try_diag!(
            guarded(
                "MoveResourceState",
                self.provider.move_resource_state(request)
            )
            .await
            .map_err(one),
            empty
        );
        let target_state = if r.diagnostics.has_errors() {
            None
        } else {
            Some(try_diag!(
                encode(&r.target_state, &schema.value_type(), "moved state").map_err(one),
                empty
            ))
        };
        Ok(Response::new(pb::move_resource_state::Response {
            target_state,
            diagnostics: diags(r.diagnostics),
            target_private: r.target_private,
            target_identity: None,
        }))
    }

    async fn read_data_source(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> Reply<pb::read_data_source::Response> {
        let req = req.into_inner();
        let empty = pb::read_data_source::Response::default();
        let schema = try_diag!(self.data_source(&req.type_name), empty);
        let ty = schema.value_type();
        let config = try_diag!(
            decode(req.config.as_ref(), &ty, "data source configuration").map_err(one),
            empty
        );
        let request = p::ReadDataSourceRequest {
            type_name: req.type_name.clone(),
            config,
            provider_meta: meta(
                req.provider_meta.as_ref(),
                self.schemas.provider_meta.as_ref(),
            ),
        };
        let r = try_diag!(
            guarded("ReadDataSource", self.provider.read_data_source(request))
                .await
                .map_err(one),
            empty
        );
        let state = if r.diagnostics.has_errors() {
            None
        } else {
            Some(try_diag!(
                encode(&r.state, &ty, "data source result").map_err(one),
                empty
            ))
        };
        Ok(Response::new(pb::read_data_source::Response {
            state,
            diagnostics: diags(r.diagnostics),
            deferred: None,
        }))
    }

    async fn generate_resource_config(
        &self,
        req: Request<pb::generate_resource_config::Request>,
    ) -> Reply<pb::generate_resource_config::Response> {
        Ok(Response::new(pb::generate_resource_config::Response {
            config: None,
            diagnostics: diags(p::unsupported(
                "Generating configuration",
                &req.into_inner().type_name,
            )),
        }))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> Reply<pb::validate_ephemeral_resource_config::Response> {
        Ok(Response::new(
            pb::validate_ephemeral_resource_config::Response {
                diagnostics: not_offered("ephemeral resource type", &req.into_inner().type_name),
            },
        ))
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> Reply<pb::open_ephemeral_resource::Response> {
        Ok(Response::new(pb::open_ephemeral_resource::Response {
            diagnostics: not_offered("ephemeral resource type", &req.into_inner().type_name),
            ..Default::default()
        }))
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> Reply<pb::renew_ephemeral_resource::Response> {
        Ok(Response::new(pb::renew_ephemeral_resource::Response {
            diagnostics: not_offered("ephemeral resource type", &req.into_inner().type_name),
            ..Default::default()
        }))
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> Reply<pb::close_ephemeral_resource::Response> {
        Ok(Response::new(pb::close_ephemeral_resource::Response {
            diagnostics: not_offered("ephemeral resource type", &req.into_inner().type_name),
        }))
    }

    type ListResourceStream = EventStream<pb::list_resource::Event>;

    async fn list_resource(
        &self,
        req: Request<pb::list_resource::Request>,
    ) -> Reply<Self::ListResourceStream> {
        let event = pb::list_resource::Event {
            diagnostic: not_offered("list resource type", &req.into_inner().type_name),
            ..Default::default()
        };
        Ok(Response::new(Box::pin(futures_util::stream::iter([Ok(
            event,
        )]))))
    }

    async fn validate_list_resource_config(
        &self,
        req: Request<pb::validate_list_resource_config::Request>,
    ) -> Reply<pb::validate_list_resource_config::Response> {
        Ok(Response::new(pb::validate_list_resource_config::Response {
            diagnostics: not_offered("list resource type", &req.into_inner().type_name),
        }))
    }

    async fn get_functions(
        &self,
        _: Request<pb::get_functions::Request>,
    ) -> Reply<pb::get_functions::Response> {
        Ok(Response::new(pb::get_functions::Response {
            functions: self.schema_response.functions.clone(),
            diagnostics: Vec::new(),
        }))
    }

    async fn call_function(
        &self,
        req: Request<pb::call_function::Request>,
    ) -> Reply<pb::call_function::Response> {
        let req = req.into_inner();
        let fail = |text: String, argument: Option<usize>| {
            Ok(Response::new(pb::call_function::Response {
                result: None,
                error: Some(pb::FunctionError {
                    text,
                    function_argument: argument.map(|i| i as i64),
                }),
            }))
        };
        let Some(signature) = self.schemas.functions.get(&req.name) else {
            return fail(
                format!("This provider has no function named `{}`.", req.name),
                None,
            );
        };
        if req.arguments.len() != signature.parameters.len() {
            return fail(
                format!(
                    "`{}` takes {} arguments, not {}.",
                    req.name,
                    signature.parameters.len(),
                    req.arguments.len()
                ),
                None,
            );
        }
        let mut arguments = Vec::with_capacity(req.arguments.len());
        for (i, (dv, p)) in req.arguments.iter().zip(&signature.parameters).enumerate() {
            match convert::decode(Some(dv), &p.ty, &format!("argument `{}`", p.name)) {
                Ok(v) => arguments.push(v),
                Err(d) => return fail(format!("{}: {}", d.summary, d.detail), Some(i)),
            }
        }
        let result = guarded(
            "CallFunction",
            self.provider.call_function(&req.name, arguments),
        )
        .await
        .map_err(|d| crate::function::FunctionError {
            text: format!("{}: {}", d.summary, d.detail),
            argument: None,
        })
        .and_then(|r| r);
        match result {
            Ok(v) => match convert::encode(&v, &signature.returns, "function result") {
                Ok(dv) => Ok(Response::new(pb::call_function::Response {
                    result: Some(dv),
                    error: None,
                })),
                Err(d) => fail(format!("{}: {}", d.summary, d.detail), None),
            },
            Err(e) => fail(e.text, e.argument),
        }
    }

    async fn validate_state_store_config(
        &self,
        req: Request<pb::validate_state_store::Request>,
    ) -> Reply<pb::validate_state_store::Response> {
        Ok(Response::new(pb::validate_state_store::Response {
            diagnostics: not_offered("state store", &req.into_inner().type_name),
        }))
    }

    async fn configure_state_store(
        &self,
        req: Request<pb::configure_state_store::Request>,
    ) -> Reply<pb::configure_state_store::Response> {
        Ok(Response::new(pb::configure_state_store::Response {
            diagnostics: not_offered("state store", &req.into_inner().type_name),
            capabilities: None,
        }))
    }

    type ReadStateBytesStream = EventStream<pb::read_state_bytes::Response>;

    async fn read_state_bytes(
        &self,
        req: Request<pb::read_state_bytes::Request>,
    ) -> Reply<Self::ReadStateBytesStream> {
        let chunk = pb::read_state_bytes::Response {
            diagnostics: not_offered("state store", &req.into_inner().type_name),
            ..Default::default()
        };
        Ok(Response::new(Box::pin(futures_util::stream::iter([Ok(
            chunk,
        )]))))
    }

    async fn write_state_bytes(
        &self,
        _: Request<tonic::Streaming<pb::write_state_bytes::RequestChunk>>,
    ) -> Reply<pb::write_state_bytes::Response> {
        Ok(Response::new(pb::write_state_bytes::Response {
            diagnostics: not_offered("state store", "(any)"),
        }))
    }

    async fn lock_state(
        &self,
        req: Request<pb::lock_state::Request>,
    ) -> Reply<pb::lock_state::Response> {
        Ok(Response::new(pb::lock_state::Response {
            lock_id: String::new(),
            diagnostics: not_offered("state store", &req.into_inner().type_name),
        }))
    }

    async fn unlock_state(
        &self,
        req: Request<pb::unlock_state::Request>,
    ) -> Reply<pb::unlock_state::Response> {
        Ok(Response::new(pb::unlock_state::Response {
            diagnostics: not_offered("state store", &req.into_inner().type_name),
        }))
    }

    async fn get_states(
        &self,
        req: Request<pb::get_states::Request>,
    ) -> Reply<pb::get_states::Response> {
        Ok(Response::new(pb::get_states::Response {
            state_id: vec![],
            diagnostics: not_offered("state store", &req.into_inner().type_name),
        }))
    }

    async fn delete_state(
        &self,
        req: Request<pb::delete_state::Request>,
    ) -> Reply<pb::delete_state::Response> {
        Ok(Response::new(pb::delete_state::Response {
            diagnostics: not_offered("state store", &req.into_inner().type_name),
        }))
    }

    async fn plan_action(
        &self,
        req: Request<pb::plan_action::Request>,
    ) -> Reply<pb::plan_action::Response> {
        Ok(Response::new(pb::plan_action::Response {
            diagnostics: not_offered("action", &req.into_inner().action_type),
            deferred: None,
        }))
    }

    type InvokeActionStream = EventStream<pb::invoke_action::Event>;

    async fn invoke_action(
        &self,
        req: Request<pb::invoke_action::Request>,
    ) -> Reply<Self::InvokeActionStream> {
        use pb::invoke_action::event;
        let done = pb::invoke_action::Event {
            r#type: Some(event::Type::Completed(event::Completed {
                diagnostics: not_offered("action", &req.into_inner().action_type),
            })),
        };
        Ok(Response::new(Box::pin(futures_util::stream::iter([Ok(
            done,
        )]))))
    }

    async fn validate_action_config(
        &self,
        req: Request<pb::validate_action_config::Request>,
    ) -> Reply<pb::validate_action_config::Response> {
        Ok(Response::new(pb::validate_action_config::Response {
            diagnostics: not_offered("action", &req.into_inner().type_name),
        }))
    }

    async fn stop_provider(
        &self,
        _: Request<pb::stop_provider::Request>,
    ) -> Reply<pb::stop_provider::Response> {
        let error = match guarded("StopProvider", self.provider.stop_provider()).await {
            Ok(Ok(())) => String::new(),
            Ok(Err(e)) => e,
            Err(d) => d.detail,
        };
        Ok(Response::new(pb::stop_provider::Response { error }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Attribute, Block};
    use crate::value::{Type, encode_msgpack};

    /// A provider with one data source `t_echo` and one resource `t_thing`; reading the data
    /// source with `boom = true` panics.
    struct TestProvider;

    fn thing() -> Schema {
        Schema::new(
            Block::new("thing")
                .attribute(Attribute::required("name", Type::String).describe("n"))
                .attribute(Attribute::computed("id", Type::String).describe("i")),
        )
    }

    fn echo() -> Schema {
        Schema::new(
            Block::new("echo")
                .attribute(Attribute::optional("boom", Type::Bool).describe("b"))
                .attribute(Attribute::computed("out", Type::String).describe("o")),
        )
    }

    #[async_trait::async_trait]
    impl Provider for TestProvider {
        fn schemas(&self) -> ProviderSchemas {
            ProviderSchemas {
                provider: Schema::new(Block::new("p")),
                resources: [("t_thing".to_string(), thing())].into(),
                data_sources: [("t_echo".to_string(), echo())].into(),
                provider_meta: None,
                functions: Default::default(),
            }
        }

        async fn read_data_source(&self, r: p::ReadDataSourceRequest) -> p::ReadDataSourceResponse {
            if r.config.get_attr("boom").and_then(Value::as_bool) == Some(true) {
                panic!("kaboom");
            }
            p::ReadDataSourceResponse {
                state: Value::object([("boom", Value::Null), ("out", Value::string("hi"))]),
                diagnostics: Diagnostics::new(),
            }
        }

        async fn plan_resource_change(
            &self,
            r: p::PlanResourceChangeRequest,
        ) -> p::PlanResourceChangeResponse {
            let mut planned = r.proposed_new_state.clone();
            crate::plan::unknown_computed(&mut planned, &r.config, &thing().block);
            p::PlanResourceChangeResponse {
                planned_state: planned,
                ..Default::default()
            }
        }
    }

    fn svc() -> ProviderService<TestProvider> {
        ProviderService::new(Arc::new(TestProvider))
    }

    fn dv(v: &Value, ty: &Type) -> Option<pb::DynamicValue> {
        Some(pb::DynamicValue {
            msgpack: encode_msgpack(v, ty).unwrap(),
            json: vec![],
        })
    }

    fn errors(ds: &[pb::Diagnostic]) -> Vec<String> {
        ds.iter()
            .filter(|d| d.severity == pb::diagnostic::Severity::Error as i32)
            .map(|d| format!("{}: {}", d.summary, d.detail))
            .collect()
    }

    #[tokio::test]
    async fn malformed_config_is_a_diagnostic() {
        let r = svc()
            .read_data_source(Request::new(pb::read_data_source::Request {
                type_name: "t_echo".into(),
                config: Some(pb::DynamicValue {
                    msgpack: vec![0x82, 0xa4, b'b'],
                    json: vec![],
                }),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(r.state.is_none());
        assert!(errors(&r.diagnostics)[0].starts_with("Malformed data source configuration"));
    }

    #[tokio::test]
    async fn panics_become_diagnostics() {
        let cfg = Value::object([("boom", Value::Bool(true)), ("out", Value::Null)]);
        let r = svc()
            .read_data_source(Request::new(pb::read_data_source::Request {
                type_name: "t_echo".into(),
                config: dv(&cfg, &echo().value_type()),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        let e = errors(&r.diagnostics);
        assert!(
            e[0].contains("Provider internal error") && e[0].contains("kaboom"),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn unknown_type_names_are_diagnostics() {
        let r = svc()
            .validate_resource_config(Request::new(pb::validate_resource_config::Request {
                type_name: "t_nope".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(errors(&r.diagnostics)[0].contains("no resource type named `t_nope`"));
    }

    #[tokio::test]
    async fn unknown_config_plans_computed_as_unknown() {
        let ty = thing().value_type();
        let config = Value::object([("name", Value::unknown()), ("id", Value::Null)]);
        let r = svc()
            .plan_resource_change(Request::new(pb::plan_resource_change::Request {
                type_name: "t_thing".into(),
                prior_state: dv(&Value::Null, &ty),
                proposed_new_state: dv(&config, &ty),
                config: dv(&config, &ty),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(r.diagnostics.is_empty());
        let planned = crate::value::decode_msgpack(&r.planned_state.unwrap().msgpack, &ty).unwrap();
        assert!(!planned.get_attr("name").unwrap().is_known());
        assert!(!planned.get_attr("id").unwrap().is_known());
    }

    #[tokio::test]
    async fn apply_without_implementation_keeps_prior_state() {
        let ty = thing().value_type();
        let prior = Value::object([("name", Value::string("a")), ("id", Value::string("1"))]);
        let r = svc()
            .apply_resource_change(Request::new(pb::apply_resource_change::Request {
                type_name: "t_thing".into(),
                prior_state: dv(&prior, &ty),
                planned_state: dv(&Value::Null, &ty),
                config: dv(&Value::Null, &ty),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(errors(&r.diagnostics)[0].contains("Apply is not supported"));
        let state = crate::value::decode_msgpack(&r.new_state.unwrap().msgpack, &ty).unwrap();
        assert_eq!(state, prior);
    }

    #[tokio::test]
    async fn rpcs_without_features_answer_with_diagnostics() {
        let s = svc();
        let e = s
            .open_ephemeral_resource(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(errors(&e.diagnostics).len(), 1);
        let e = s
            .validate_state_store_config(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(errors(&e.diagnostics).len(), 1);
        let e = s
            .plan_action(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(errors(&e.diagnostics).len(), 1);
        let e = s
            .call_function(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert!(e.error.is_some());
        let e = s
            .import_resource_state(Request::new(pb::import_resource_state::Request {
                type_name: "t_thing".into(),
                id: "x".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(errors(&e.diagnostics)[0].contains("Import is not supported"));
        let m = s
            .get_metadata(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(m.resources[0].type_name, "t_thing");
        let schema = s
            .get_provider_schema(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert!(schema.data_source_schemas.contains_key("t_echo"));
    }

    /// The exact texts of `(summary, detail)` of every diagnostic in `ds`.
    fn texts(ds: &[pb::Diagnostic]) -> Vec<(String, String)> {
        ds.iter()
            .map(|d| (d.summary.clone(), d.detail.clone()))
            .collect()
    }

    /// The one error diagnostic a feature-less RPC answers with, as `(summary, detail)`.
    fn refusal(kind: &str, name: &str) -> Vec<(String, String)> {
        vec![(
            format!("Unsupported {kind}"),
            format!("This provider has no {kind} named `{name}`."),
        )]
    }

    /// Feature-less RPCs answer with today's exact diagnostic texts and nothing else set.
    #[tokio::test]
    async fn unsupported_rpcs_keep_their_texts() {
        let s = svc();
        let e = s
            .validate_ephemeral_resource_config(Request::new(
                pb::validate_ephemeral_resource_config::Request {
                    type_name: "t_eph".into(),
                    ..Default::default()
                },
            ))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            texts(&e.diagnostics),
            refusal("ephemeral resource type", "t_eph")
        );
        let w = s
            .lock_state(Request::new(pb::lock_state::Request {
                type_name: "t_store".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(texts(&w.diagnostics), refusal("state store", "t_store"));
        assert!(w.lock_id.is_empty());
        let a = s
            .validate_action_config(Request::new(pb::validate_action_config::Request {
                type_name: "t_act".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(texts(&a.diagnostics), refusal("action", "t_act"));
        let l = s
            .validate_list_resource_config(Request::new(
                pb::validate_list_resource_config::Request {
                    type_name: "t_list".into(),
                    ..Default::default()
                },
            ))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            texts(&l.diagnostics),
            refusal("list resource type", "t_list")
        );
        let g = s
            .generate_resource_config(Request::new(pb::generate_resource_config::Request {
                type_name: "t_thing".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(g.config.is_none());
        assert_eq!(
            texts(&g.diagnostics),
            vec![(
                "Generating configuration is not supported for t_thing".to_string(),
                "This provider does not implement Generating configuration for `t_thing`."
                    .to_string()
            )]
        );
        let i = s
            .upgrade_resource_identity(Request::new(pb::upgrade_resource_identity::Request {
                type_name: "t_thing".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(i.upgraded_identity.is_none());
        assert_eq!(
            errors(&i.diagnostics),
            vec![
                "Resource identity is not supported for t_thing: This provider does not implement Resource identity for `t_thing`."
            ]
        );
    }

    /// Feature-less streaming RPCs yield exactly one event carrying the error.
    #[tokio::test]
    async fn streaming_rpcs_without_features_yield_one_error_event() {
        use futures_util::StreamExt as _;
        let s = svc();
        let list: Vec<_> = s
            .list_resource(Request::new(pb::list_resource::Request {
                type_name: "t_list".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner()
            .collect()
            .await;
        assert_eq!(list.len(), 1);
        let event = list.into_iter().next().unwrap().unwrap();
        assert_eq!(
            texts(&event.diagnostic),
            refusal("list resource type", "t_list")
        );
        assert!(event.resource_object.is_none() && event.display_name.is_empty());
        let chunks: Vec<_> = s
            .read_state_bytes(Request::new(pb::read_state_bytes::Request {
                type_name: "t_store".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner()
            .collect()
            .await;
        assert_eq!(chunks.len(), 1);
        let chunk = chunks.into_iter().next().unwrap().unwrap();
        assert_eq!(texts(&chunk.diagnostics), refusal("state store", "t_store"));
        assert!(chunk.bytes.is_empty());
        let events: Vec<_> = s
            .invoke_action(Request::new(pb::invoke_action::Request {
                action_type: "t_act".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner()
            .collect()
            .await;
        assert_eq!(events.len(), 1);
        match events.into_iter().next().unwrap().unwrap().r#type {
            Some(pb::invoke_action::event::Type::Completed(c)) => {
                assert_eq!(texts(&c.diagnostics), refusal("action", "t_act"));
            }
            other => panic!("expected a completed event, got {other:?}"),
        }
    }

    /// A read that fails before the provider runs keeps Terraform's state and private data.
    #[tokio::test]
    async fn a_failed_read_hands_back_the_current_state_and_private() {
        let current = pb::DynamicValue {
            msgpack: vec![0xc0],
            json: vec![],
        };
        let r = svc()
            .read_resource(Request::new(pb::read_resource::Request {
                type_name: "t_nope".into(),
                current_state: Some(current.clone()),
                private: b"p".to_vec(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.new_state, Some(current));
        assert_eq!(r.private, b"p".to_vec());
        assert_eq!(texts(&r.diagnostics), refusal("resource type", "t_nope"));
    }

    /// An apply that cannot decode its request changed nothing: the prior state comes back.
    #[tokio::test]
    async fn a_malformed_apply_hands_back_the_prior_state() {
        let prior = pb::DynamicValue {
            msgpack: vec![0x82, 0xa4, b'n'],
            json: vec![],
        };
        let r = svc()
            .apply_resource_change(Request::new(pb::apply_resource_change::Request {
                type_name: "t_thing".into(),
                prior_state: Some(prior.clone()),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.new_state, Some(prior));
        assert!(errors(&r.diagnostics)[0].starts_with("Malformed prior state from Terraform"));
    }

    /// Unknown type names are error diagnostics, and no state is sent back.
    #[tokio::test]
    async fn unknown_types_fail_upgrade_validate_and_move_without_state() {
        let s = svc();
        let u = s
            .upgrade_resource_state(Request::new(pb::upgrade_resource_state::Request {
                type_name: "t_nope".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(u.upgraded_state.is_none());
        assert_eq!(texts(&u.diagnostics), refusal("resource type", "t_nope"));
        let d = s
            .validate_data_resource_config(Request::new(
                pb::validate_data_resource_config::Request {
                    type_name: "t_nope".into(),
                    ..Default::default()
                },
            ))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(texts(&d.diagnostics), refusal("data source", "t_nope"));
        let m = s
            .move_resource_state(Request::new(pb::move_resource_state::Request {
                target_type_name: "t_nope".into(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(m.target_state.is_none());
        assert_eq!(texts(&m.diagnostics), refusal("resource type", "t_nope"));
    }
}
