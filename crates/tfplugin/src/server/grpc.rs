//! The `tfplugin6.Provider` gRPC service: decodes each request against the provider's
//! schemas, calls the matching [`Provider`] method, and encodes the answer. RPCs the
//! provider has nothing for (ephemeral resources, list resources, state stores, actions,
//! functions it does not have) answer with an error, never a transport error or a panic.
//! Every decoding RPC goes through `answer`; every feature-less one through `unsupported`.

use super::convert::{self, decode, encode};
use crate::diag::{Diagnostic, Diagnostics};
use crate::proto::tfplugin6 as pb;
use crate::proto::tfplugin6::provider_server::Provider as ProviderRpc;
use crate::provider::{self as p, Provider, ProviderSchemas};
use crate::schema::Schema;
use crate::value::{Type, Value};
use futures_util::FutureExt as _;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// What every unary RPC returns.
type Reply<T> = Result<Response<T>, Status>;
/// What every streaming RPC streams.
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
        generate_resource_config: provider.supports_generate_resource_config(),
    }
}

/// The client's capabilities in our form (none when Terraform sent none).
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

/// Our diagnostics in protocol form.
fn diags(d: impl Into<Diagnostics>) -> Vec<pb::Diagnostic> {
    convert::diagnostics(&d.into())
}

/// The error for a type name (or feature) of `kind` this provider does not have.
fn not_offered(kind: &str, name: &str) -> Diagnostic {
    Diagnostic::error(
        format!("Unsupported {kind}"),
        format!("This provider has no {kind} named `{name}`."),
    )
}

/// `v` encoded as `what`, unless the provider reported errors: then Terraform gets no value.
fn unless_errors(
    d: &Diagnostics,
    v: &Value,
    ty: &Type,
    what: &str,
) -> Result<Option<pb::DynamicValue>, Diagnostic> {
    (!d.has_errors()).then(|| encode(v, ty, what)).transpose()
}

/// `identity` (of `schema`) in protocol form.
fn identity_data(
    identity: &Value,
    schema: &crate::identity::IdentitySchema,
) -> Result<pb::ResourceIdentityData, Failed> {
    let data = encode(identity, &schema.value_type(), "identity")?;
    Ok(pb::ResourceIdentityData {
        identity_data: Some(data),
    })
}

/// Diagnostics that end an RPC early; [`answer`] hands them to Terraform on the fallback.
struct Failed(Vec<pb::Diagnostic>);

impl From<Diagnostic> for Failed {
    /// One error (unknown type, malformed value, provider panic) ends the RPC.
    fn from(d: Diagnostic) -> Self {
        Failed(diags(d))
    }
}

impl From<Diagnostics> for Failed {
    /// The provider's own refusal ends the RPC.
    fn from(d: Diagnostics) -> Self {
        Failed(diags(d))
    }
}

/// A protocol response (or stream event) that carries diagnostics.
trait Answer: Default {
    /// Sets the diagnostics Terraform will read.
    fn set_diagnostics(&mut self, d: Vec<pb::Diagnostic>);

    /// `self` carrying `d`.
    fn carrying(mut self, d: Vec<pb::Diagnostic>) -> Self {
        self.set_diagnostics(d);
        self
    }
}

/// Implements [`Answer`] for the `Response` of each listed protocol module.
macro_rules! answers {
    ($($rpc:ident),* $(,)?) => {$(
        impl Answer for pb::$rpc::Response {
            fn set_diagnostics(&mut self, d: Vec<pb::Diagnostic>) {
                self.diagnostics = d;
            }
        }
    )*};
}

answers!(
    validate_provider_config,
    validate_resource_config,
    validate_data_resource_config,
    upgrade_resource_state,
    upgrade_resource_identity,
    configure_provider,
    read_resource,
    plan_resource_change,
    apply_resource_change,
    import_resource_state,
    move_resource_state,
    read_data_source,
    generate_resource_config,
    validate_ephemeral_resource_config,
    open_ephemeral_resource,
    renew_ephemeral_resource,
    close_ephemeral_resource,
    validate_list_resource_config,
    validate_state_store,
    configure_state_store,
    read_state_bytes,
    write_state_bytes,
    lock_state,
    unlock_state,
    get_states,
    delete_state,
    plan_action,
    validate_action_config,
);

impl Answer for pb::list_resource::Event {
    /// A list event names its diagnostics `diagnostic`.
    fn set_diagnostics(&mut self, d: Vec<pb::Diagnostic>) {
        self.diagnostic = d;
    }
}

impl Answer for pb::invoke_action::Event {
    /// An action event carrying diagnostics is its `Completed` event.
    fn set_diagnostics(&mut self, diagnostics: Vec<pb::Diagnostic>) {
        use pb::invoke_action::event;
        self.r#type = Some(event::Type::Completed(event::Completed { diagnostics }));
    }
}

/// The one decode → call → encode path: `body` decodes the request, calls the provider
/// through [`guarded`] and encodes its result; whatever stops it (unknown type, malformed
/// value, panic, value off its schema) is answered as `fallback` carrying the diagnostics.
async fn answer<R: Answer>(fallback: R, body: impl Future<Output = Result<R, Failed>>) -> Reply<R> {
    Ok(Response::new(match body.await {
        Ok(r) => r,
        Err(Failed(d)) => fallback.carrying(d),
    }))
}

/// The answer of an RPC this provider implements nothing for: only the error `d`.
fn unsupported<R: Answer>(d: Diagnostic) -> Reply<R> {
    Ok(Response::new(R::default().carrying(diags(d))))
}

/// [`unsupported`] for a streaming RPC: a stream of that one answer.
fn unsupported_stream<R: Answer + Send + 'static>(d: Diagnostic) -> Reply<EventStream<R>> {
    let only = R::default().carrying(diags(d));
    Ok(Response::new(Box::pin(futures_util::stream::iter([Ok(
        only,
    )]))))
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
            list_resource_schemas: schemas
                .list_resources
                .iter()
                .map(|(k, s)| (k.clone(), convert::schema(s)))
                .collect(),
            ..Default::default()
        };
        ProviderService {
            provider,
            schemas: Arc::new(schemas),
            schema_response: Arc::new(response),
        }
    }

    /// The schema of resource type `type_name`, or the error that ends the RPC.
    fn resource(&self, type_name: &str) -> Result<&Schema, Failed> {
        self.schemas
            .resources
            .get(type_name)
            .ok_or_else(|| not_offered("resource type", type_name).into())
    }

    /// The schema of data source `type_name`, or the error that ends the RPC.
    fn data_source(&self, type_name: &str) -> Result<&Schema, Failed> {
        self.schemas
            .data_sources
            .get(type_name)
            .ok_or_else(|| not_offered("data source", type_name).into())
    }

    /// The identity of `state` (of `type_name`) in protocol form: none when the type has
    /// no identity schema, the state is null, or the provider cannot say yet (unknowns).
    fn identity(
        &self,
        type_name: &str,
        state: &Value,
    ) -> Result<Option<pb::ResourceIdentityData>, Failed> {
        let Some(schema) = self.schemas.identities.get(type_name) else {
            return Ok(None);
        };
        if state.is_null() {
            return Ok(None);
        }
        let Some(identity) = self
            .provider
            .identity_of(type_name, state)
            .filter(Value::is_wholly_known)
        else {
            return Ok(None);
        };
        identity_data(&identity, schema).map(Some)
    }

    /// The events of one `ListResource`: a leading event with the listing's own
    /// diagnostics when it has any, then one per object found (at most `limit`).
    async fn list_events(
        &self,
        req: pb::list_resource::Request,
    ) -> Result<Vec<pb::list_resource::Event>, Failed> {
        use pb::list_resource::Event;
        let ty = self.list(&req.type_name)?.value_type();
        let state_ty = self.resource(&req.type_name)?.value_type();
        let Some(identity_schema) = self.schemas.identities.get(&req.type_name) else {
            return Err(p::unsupported("Resource identity", &req.type_name).into());
        };
        let request = p::ListResourceRequest {
            config: decode(req.config.as_ref(), &ty, "list configuration")?,
            type_name: req.type_name,
            include_resource_object: req.include_resource_object,
            limit: req.limit,
        };
        let r = guarded("ListResource", self.provider.list_resource(request)).await?;
        let mut events = Vec::new();
        if !r.diagnostics.0.is_empty() {
            events.push(Event::default().carrying(diags(r.diagnostics.clone())));
        }
        if r.diagnostics.has_errors() {
            return Ok(events);
        }
        let limit = usize::try_from(req.limit.max(0)).unwrap_or(usize::MAX);
        for found in r.results.into_iter().take(limit) {
            let identity = match found.identity.is_null() {
                true => None,
                false => Some(identity_data(&found.identity, identity_schema)?),
            };
            let resource_object = match &found.resource_object {
                Some(state) => Some(encode(state, &state_ty, "listed object")?),
                None => None,
            };
            events.push(Event {
                identity,
                display_name: found.display_name,
                resource_object,
                diagnostic: diags(found.diagnostics),
            });
        }
        Ok(events)
    }

    /// The schema of list resource `type_name`, or the error that ends the RPC.
    fn list(&self, type_name: &str) -> Result<&Schema, Failed> {
        self.schemas
            .list_resources
            .get(type_name)
            .ok_or_else(|| not_offered("list resource type", type_name).into())
    }

    /// The decoded `provider_meta`, if the provider has a schema for it and it decodes.
    fn meta(&self, dv: Option<&pb::DynamicValue>) -> Option<Value> {
        let schema = self.schemas.provider_meta.as_ref()?;
        decode(dv, &schema.value_type(), "provider_meta").ok()
    }
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
            list_resources: self
                .schemas
                .list_resources
                .keys()
                .map(|k| m::ListResourceMetadata {
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
        answer(Default::default(), async move {
            let ty = self.schemas.provider.value_type();
            let config = decode(req.config.as_ref(), &ty, "provider configuration")?;
            let call = self.provider.validate_provider_config(&config);
            let d = guarded("ValidateProviderConfig", call).await?;
            Ok(pb::validate_provider_config::Response {
                diagnostics: diags(d),
            })
        })
        .await
    }

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> Reply<pb::validate_resource_config::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.resource(&req.type_name)?.value_type();
            let config = decode(req.config.as_ref(), &ty, "resource configuration")?;
            let call = self
                .provider
                .validate_resource_config(&req.type_name, &config);
            let d = guarded("ValidateResourceConfig", call).await?;
            Ok(pb::validate_resource_config::Response {
                diagnostics: diags(d),
            })
        })
        .await
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> Reply<pb::validate_data_resource_config::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.data_source(&req.type_name)?.value_type();
            let config = decode(req.config.as_ref(), &ty, "data source configuration")?;
            let call = self
                .provider
                .validate_data_resource_config(&req.type_name, &config);
            let d = guarded("ValidateDataResourceConfig", call).await?;
            Ok(pb::validate_data_resource_config::Response {
                diagnostics: diags(d),
            })
        })
        .await
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> Reply<pb::upgrade_resource_state::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let schema = self.resource(&req.type_name)?;
            let raw = req.raw_state.unwrap_or_default();
            let request = p::UpgradeResourceStateRequest {
                type_name: req.type_name.clone(),
                version: req.version,
                raw_json: (!raw.json.is_empty()).then_some(raw.json),
                raw_flatmap: raw.flatmap.into_iter().collect(),
            };
            let call = self.provider.upgrade_resource_state(request, schema);
            let state = guarded("UpgradeResourceState", call).await??;
            let upgraded = encode(&state, &schema.value_type(), "upgraded state")?;
            Ok(pb::upgrade_resource_state::Response {
                upgraded_state: Some(upgraded),
                diagnostics: vec![],
            })
        })
        .await
    }

    async fn get_resource_identity_schemas(
        &self,
        _: Request<pb::get_resource_identity_schemas::Request>,
    ) -> Reply<pb::get_resource_identity_schemas::Response> {
        use pb::resource_identity_schema::IdentityAttribute;
        let identity_schemas = self
            .schemas
            .identities
            .iter()
            .map(|(name, s)| {
                let attributes = s
                    .attributes
                    .iter()
                    .map(|a| IdentityAttribute {
                        name: a.name.clone(),
                        r#type: a.ty.to_json_bytes(),
                        required_for_import: a.required_for_import,
                        optional_for_import: a.optional_for_import,
                        description: a.description.clone(),
                    })
                    .collect();
                let schema = pb::ResourceIdentitySchema {
                    version: s.version,
                    identity_attributes: attributes,
                };
                (name.clone(), schema)
            })
            .collect();
        Ok(Response::new(pb::get_resource_identity_schemas::Response {
            identity_schemas,
            diagnostics: Vec::new(),
        }))
    }

    async fn upgrade_resource_identity(
        &self,
        req: Request<pb::upgrade_resource_identity::Request>,
    ) -> Reply<pb::upgrade_resource_identity::Response> {
        let type_name = req.into_inner().type_name;
        unsupported(p::unsupported("Resource identity", &type_name))
    }

    async fn configure_provider(
        &self,
        req: Request<pb::configure_provider::Request>,
    ) -> Reply<pb::configure_provider::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.schemas.provider.value_type();
            let request = p::ConfigureProviderRequest {
                config: decode(req.config.as_ref(), &ty, "provider configuration")?,
                terraform_version: req.terraform_version,
                client_capabilities: client_caps(req.client_capabilities.as_ref()),
            };
            let d = guarded(
                "ConfigureProvider",
                self.provider.configure_provider(request),
            )
            .await?;
            Ok(pb::configure_provider::Response {
                diagnostics: diags(d),
            })
        })
        .await
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> Reply<pb::read_resource::Response> {
        let req = req.into_inner();
        let fallback = pb::read_resource::Response {
            new_state: req.current_state.clone(),
            private: req.private.clone(),
            ..Default::default()
        };
        answer(fallback, async move {
            let ty = self.resource(&req.type_name)?.value_type();
            let type_name = req.type_name.clone();
            let request = p::ReadResourceRequest {
                current_state: decode(req.current_state.as_ref(), &ty, "state")?,
                provider_meta: self.meta(req.provider_meta.as_ref()),
                type_name: req.type_name,
                private: req.private,
            };
            let r = guarded("ReadResource", self.provider.read_resource(request)).await?;
            Ok(pb::read_resource::Response {
                new_state: Some(encode(&r.new_state, &ty, "state")?),
                new_identity: self.identity(&type_name, &r.new_state)?,
                diagnostics: diags(r.diagnostics),
                private: r.private,
                ..Default::default()
            })
        })
        .await
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> Reply<pb::plan_resource_change::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.resource(&req.type_name)?.value_type();
            let type_name = req.type_name.clone();
            let request = p::PlanResourceChangeRequest {
                prior_state: decode(req.prior_state.as_ref(), &ty, "prior state")?,
                proposed_new_state: decode(
                    req.proposed_new_state.as_ref(),
                    &ty,
                    "proposed new state",
                )?,
                config: decode(req.config.as_ref(), &ty, "resource configuration")?,
                provider_meta: self.meta(req.provider_meta.as_ref()),
                client_capabilities: client_caps(req.client_capabilities.as_ref()),
                type_name: req.type_name,
                prior_private: req.prior_private,
            };
            let call = self.provider.plan_resource_change(request);
            let r = guarded("PlanResourceChange", call).await?;
            let planned_state =
                unless_errors(&r.diagnostics, &r.planned_state, &ty, "planned state")?;
            let planned_identity = match r.diagnostics.has_errors() {
                true => None,
                false => self.identity(&type_name, &r.planned_state)?,
            };
            Ok(pb::plan_resource_change::Response {
                planned_state,
                planned_identity,
                requires_replace: r
                    .requires_replace
                    .iter()
                    .map(convert::attribute_path)
                    .collect(),
                planned_private: r.planned_private,
                diagnostics: diags(r.diagnostics),
                ..Default::default()
            })
        })
        .await
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> Reply<pb::apply_resource_change::Response> {
        let req = req.into_inner();
        // If we cannot even decode the request, nothing was changed: hand back the prior state.
        let fallback = pb::apply_resource_change::Response {
            new_state: req.prior_state.clone(),
            ..Default::default()
        };
        answer(fallback, async move {
            let ty = self.resource(&req.type_name)?.value_type();
            let type_name = req.type_name.clone();
            let request = p::ApplyResourceChangeRequest {
                prior_state: decode(req.prior_state.as_ref(), &ty, "prior state")?,
                planned_state: decode(req.planned_state.as_ref(), &ty, "planned state")?,
                config: decode(req.config.as_ref(), &ty, "resource configuration")?,
                provider_meta: self.meta(req.provider_meta.as_ref()),
                type_name: req.type_name,
                planned_private: req.planned_private,
            };
            let call = self.provider.apply_resource_change(request);
            let r = guarded("ApplyResourceChange", call).await?;
            Ok(pb::apply_resource_change::Response {
                new_state: Some(encode(&r.new_state, &ty, "new state")?),
                new_identity: self.identity(&type_name, &r.new_state)?,
                private: r.private,
                diagnostics: diags(r.diagnostics),
                ..Default::default()
            })
        })
        .await
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> Reply<pb::import_resource_state::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            self.resource(&req.type_name)?;
            // Import by identity: the identity names an import id, and the import runs as
            // that id's would. Terraform wants the identity back on what it imports.
            let (id, given) = match req.identity {
                Some(given) if req.id.is_empty() && given.identity_data.is_some() => {
                    let Some(schema) = self.schemas.identities.get(&req.type_name) else {
                        return Err(p::unsupported("Import by identity", &req.type_name).into());
                    };
                    let data = given.identity_data.as_ref();
                    let identity = decode(data, &schema.value_type(), "identity")?;
                    let call = self
                        .provider
                        .import_id_of_identity(&req.type_name, &identity);
                    (guarded("ImportResourceState", call).await??, Some(given))
                }
                _ => (req.id, None),
            };
            let request = p::ImportResourceStateRequest {
                type_name: req.type_name,
                id,
            };
            let call = self.provider.import_resource_state(request);
            let r = guarded("ImportResourceState", call).await?;
            let mut imported = Vec::new();
            for i in &r.imported {
                let ty = self.resource(&i.type_name)?.value_type();
                let identity = self
                    .identity(&i.type_name, &i.state)?
                    .or_else(|| given.clone());
                imported.push(pb::import_resource_state::ImportedResource {
                    type_name: i.type_name.clone(),
                    state: Some(encode(&i.state, &ty, "imported state")?),
                    private: i.private.clone(),
                    identity,
                });
            }
            Ok(pb::import_resource_state::Response {
                imported_resources: imported,
                diagnostics: diags(r.diagnostics),
                deferred: None,
            })
        })
        .await
    }

    async fn move_resource_state(
        &self,
        req: Request<pb::move_resource_state::Request>,
    ) -> Reply<pb::move_resource_state::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.resource(&req.target_type_name)?.value_type();
            let request = p::MoveResourceStateRequest {
                source_provider_address: req.source_provider_address,
                source_type_name: req.source_type_name,
                source_schema_version: req.source_schema_version,
                source_state_json: req.source_state.map(|s| s.json).unwrap_or_default(),
                target_type_name: req.target_type_name,
                source_private: req.source_private,
            };
            let call = self.provider.move_resource_state(request);
            let r = guarded("MoveResourceState", call).await?;
            let target_state = unless_errors(&r.diagnostics, &r.target_state, &ty, "moved state")?;
            Ok(pb::move_resource_state::Response {
                target_state,
                diagnostics: diags(r.diagnostics),
                target_private: r.target_private,
                target_identity: None,
            })
        })
        .await
    }

    async fn read_data_source(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> Reply<pb::read_data_source::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.data_source(&req.type_name)?.value_type();
            let request = p::ReadDataSourceRequest {
                config: decode(req.config.as_ref(), &ty, "data source configuration")?,
                provider_meta: self.meta(req.provider_meta.as_ref()),
                type_name: req.type_name,
            };
            let r = guarded("ReadDataSource", self.provider.read_data_source(request)).await?;
            let state = unless_errors(&r.diagnostics, &r.state, &ty, "data source result")?;
            Ok(pb::read_data_source::Response {
                state,
                diagnostics: diags(r.diagnostics),
                deferred: None,
            })
        })
        .await
    }

    async fn generate_resource_config(
        &self,
        req: Request<pb::generate_resource_config::Request>,
    ) -> Reply<pb::generate_resource_config::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.resource(&req.type_name)?.value_type();
            let state = decode(req.state.as_ref(), &ty, "state")?;
            let call = self
                .provider
                .generate_resource_config(&req.type_name, state);
            let config = guarded("GenerateResourceConfig", call).await??;
            Ok(pb::generate_resource_config::Response {
                config: Some(encode(&config, &ty, "generated configuration")?),
                diagnostics: Vec::new(),
            })
        })
        .await
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> Reply<pb::validate_ephemeral_resource_config::Response> {
        let type_name = req.into_inner().type_name;
        unsupported(not_offered("ephemeral resource type", &type_name))
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> Reply<pb::open_ephemeral_resource::Response> {
        let type_name = req.into_inner().type_name;
        unsupported(not_offered("ephemeral resource type", &type_name))
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> Reply<pb::renew_ephemeral_resource::Response> {
        let type_name = req.into_inner().type_name;
        unsupported(not_offered("ephemeral resource type", &type_name))
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> Reply<pb::close_ephemeral_resource::Response> {
        let type_name = req.into_inner().type_name;
        unsupported(not_offered("ephemeral resource type", &type_name))
    }

    type ListResourceStream = EventStream<pb::list_resource::Event>;

    async fn list_resource(
        &self,
        req: Request<pb::list_resource::Request>,
    ) -> Reply<Self::ListResourceStream> {
        let req = req.into_inner();
        let events = match self.list_events(req).await {
            Ok(events) => events,
            Err(Failed(d)) => vec![pb::list_resource::Event::default().carrying(d)],
        };
        Ok(Response::new(Box::pin(futures_util::stream::iter(
            events.into_iter().map(Ok),
        ))))
    }

    async fn validate_list_resource_config(
        &self,
        req: Request<pb::validate_list_resource_config::Request>,
    ) -> Reply<pb::validate_list_resource_config::Response> {
        let req = req.into_inner();
        answer(Default::default(), async move {
            let ty = self.list(&req.type_name)?.value_type();
            let config = decode(req.config.as_ref(), &ty, "list configuration")?;
            let call = self
                .provider
                .validate_list_resource_config(&req.type_name, &config);
            let d = guarded("ValidateListResourceConfig", call).await?;
            Ok(pb::validate_list_resource_config::Response {
                diagnostics: diags(d),
            })
        })
        .await
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
        unsupported(not_offered("state store", &req.into_inner().type_name))
    }

    async fn configure_state_store(
        &self,
        req: Request<pb::configure_state_store::Request>,
    ) -> Reply<pb::configure_state_store::Response> {
        unsupported(not_offered("state store", &req.into_inner().type_name))
    }

    type ReadStateBytesStream = EventStream<pb::read_state_bytes::Response>;

    async fn read_state_bytes(
        &self,
        req: Request<pb::read_state_bytes::Request>,
    ) -> Reply<Self::ReadStateBytesStream> {
        unsupported_stream(not_offered("state store", &req.into_inner().type_name))
    }

    async fn write_state_bytes(
        &self,
        _: Request<tonic::Streaming<pb::write_state_bytes::RequestChunk>>,
    ) -> Reply<pb::write_state_bytes::Response> {
        unsupported(not_offered("state store", "(any)"))
    }

    async fn lock_state(
        &self,
        req: Request<pb::lock_state::Request>,
    ) -> Reply<pb::lock_state::Response> {
        unsupported(not_offered("state store", &req.into_inner().type_name))
    }

    async fn unlock_state(
        &self,
        req: Request<pb::unlock_state::Request>,
    ) -> Reply<pb::unlock_state::Response> {
        unsupported(not_offered("state store", &req.into_inner().type_name))
    }

    async fn get_states(
        &self,
        req: Request<pb::get_states::Request>,
    ) -> Reply<pb::get_states::Response> {
        unsupported(not_offered("state store", &req.into_inner().type_name))
    }

    async fn delete_state(
        &self,
        req: Request<pb::delete_state::Request>,
    ) -> Reply<pb::delete_state::Response> {
        unsupported(not_offered("state store", &req.into_inner().type_name))
    }

    async fn plan_action(
        &self,
        req: Request<pb::plan_action::Request>,
    ) -> Reply<pb::plan_action::Response> {
        unsupported(not_offered("action", &req.into_inner().action_type))
    }

    type InvokeActionStream = EventStream<pb::invoke_action::Event>;

    async fn invoke_action(
        &self,
        req: Request<pb::invoke_action::Request>,
    ) -> Reply<Self::InvokeActionStream> {
        unsupported_stream(not_offered("action", &req.into_inner().action_type))
    }

    async fn validate_action_config(
        &self,
        req: Request<pb::validate_action_config::Request>,
    ) -> Reply<pb::validate_action_config::Response> {
        unsupported(not_offered("action", &req.into_inner().type_name))
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
                ..Default::default()
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

    /// The identity travels with every state of a type that has one, and import by
    /// identity answers with it.
    #[tokio::test]
    async fn identities_travel_with_states_and_import_by_identity_works() {
        use futures_util::StreamExt as _;
        let s = ProviderService::new(Arc::new(crate::list::tests::router()));
        let schemas = s
            .get_resource_identity_schemas(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        let file = &schemas.identity_schemas["t_file"];
        assert_eq!(file.identity_attributes[0].name, "path");
        assert!(file.identity_attributes[0].required_for_import);
        assert_eq!(file.identity_attributes[0].r#type, b"\"string\"".to_vec());
        let meta = s
            .get_metadata(Request::new(Default::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(meta.list_resources[0].type_name, "t_file");
        assert!(meta.server_capabilities.unwrap().generate_resource_config);

        let state_ty = s.schemas.resources["t_file"].value_type();
        let id_ty = s.schemas.identities["t_file"].value_type();
        let identity = |p: &str| Value::object([("path", Value::string(p))]);
        let decode_identity = |d: Option<pb::ResourceIdentityData>| {
            decode(d.unwrap().identity_data.as_ref(), &id_ty, "identity").unwrap()
        };
        let imported = s
            .import_resource_state(Request::new(pb::import_resource_state::Request {
                type_name: "t_file".into(),
                identity: Some(pb::ResourceIdentityData {
                    identity_data: dv(&identity("/a"), &id_ty),
                }),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert!(
            imported.diagnostics.is_empty(),
            "{:?}",
            imported.diagnostics
        );
        let first = imported.imported_resources.into_iter().next().unwrap();
        assert_eq!(decode_identity(first.identity), identity("/a"));
        let read = s
            .read_resource(Request::new(pb::read_resource::Request {
                type_name: "t_file".into(),
                current_state: first.state,
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        let state = decode(read.new_state.as_ref(), &state_ty, "state").unwrap();
        assert_eq!(state.get_attr("mode"), Some(&Value::string("0644")));
        assert_eq!(decode_identity(read.new_identity), identity("/a"));

        let list_ty = s.schemas.list_resources["t_file"].value_type();
        let events: Vec<_> = s
            .list_resource(Request::new(pb::list_resource::Request {
                type_name: "t_file".into(),
                config: dv(&Value::object([("dir", Value::string("/"))]), &list_ty),
                include_resource_object: true,
                limit: 3,
            }))
            .await
            .unwrap()
            .into_inner()
            .map(Result::unwrap)
            .collect()
            .await;
        // The listing's own warning, then three objects; `gone` only as a warning.
        assert_eq!(events.len(), 4);
        assert_eq!(events[0].diagnostic[0].summary, "limit 3");
        assert_eq!(decode_identity(events[1].identity.clone()), identity("/a"));
        assert!(events[1].resource_object.is_some());
        assert!(events[2].identity.is_none() && events[2].resource_object.is_none());
        assert_eq!(events[2].diagnostic[0].summary, "Cannot read file gone");
        assert_eq!(events[3].display_name, "file /b");

        let generated = s
            .generate_resource_config(Request::new(pb::generate_resource_config::Request {
                type_name: "t_file".into(),
                state: events[1].resource_object.clone(),
            }))
            .await
            .unwrap()
            .into_inner();
        let config = decode(generated.config.as_ref(), &state_ty, "config").unwrap();
        assert_eq!(
            config.get_attr("size"),
            Some(&Value::Null),
            "computed left out"
        );
        assert_eq!(config.get_attr("path"), Some(&Value::string("/a")));
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
