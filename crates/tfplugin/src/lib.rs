//! The Terraform plugin protocol (version 6) as a library and a small SDK: the go-plugin
//! handshake with AutoMTLS, cty values over msgpack and JSON, schemas, diagnostics, a
//! [`Provider`] trait whose methods map one-to-one to the protocol's RPCs, and on top of
//! it typed [`Resource`] and [`DataSource`] traits with a [`Router`] that dispatches by
//! type name, [`Tf`] for values unknown at plan time, validators, plan modifiers, import
//! ids, `timeouts` blocks and private state. It knows nothing of any particular provider.
//!
//! A provider builds a [`Router`] (or implements [`Provider`] itself) and calls
//! [`server::serve`] from `main`; see the crate's README and
//! `examples/terraform-provider-hello.rs`.

/// Generated protocol code (tfplugin6 and go-plugin services).
#[cfg(feature = "server")]
pub mod proto;

/// The cty value model and its msgpack/JSON wire codecs.
pub mod value;

pub mod attribute_rules;
pub mod diag;
pub mod function;
pub mod generate;
pub mod identity;
pub mod import_id;
pub mod list;
pub mod plan;
pub mod private;
pub mod provider;
pub mod resource;
pub mod router;
pub mod schema;
#[cfg(feature = "server")]
pub mod server;
pub mod tf;
pub mod timeouts;
pub mod validators;

pub use diag::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
pub use function::{Function, FunctionError, FunctionSignature, Parameter};
pub use identity::IdentitySchema;
pub use list::ListResource;
pub use private::PrivateState;
pub use provider::{Provider, ProviderSchemas};
pub use resource::{DataSource, Resource};
pub use router::{ProviderBlock, Router};
pub use schema::{Attribute, Block, NestedBlock, Nesting, Presence, Schema};
pub use tf::Tf;
pub use value::{Type, Value};
