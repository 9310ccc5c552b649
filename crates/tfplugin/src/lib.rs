//! The Terraform plugin protocol (version 6) as a library: the go-plugin handshake with
//! AutoMTLS, cty values over msgpack and JSON, schemas, diagnostics and a [`Provider`]
//! trait whose methods map one-to-one to the protocol's RPCs. It knows nothing of any
//! particular provider.
//!
//! A provider implements [`Provider`] and calls [`server::serve`] from `main`.

/// Generated protocol code (tfplugin6 and go-plugin services).
pub mod proto;

/// The cty value model and its msgpack/JSON wire codecs.
pub mod value;

pub mod diag;
pub mod plan;
pub mod provider;
pub mod schema;
pub mod server;

pub use diag::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
pub use provider::{Provider, ProviderSchemas};
pub use schema::{Attribute, Block, NestedBlock, Nesting, Presence, Schema};
pub use value::{Type, Value};
