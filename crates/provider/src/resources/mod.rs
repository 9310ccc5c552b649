//! Managed resources of the `gpu` provider, one module each.

pub mod audit_context;
pub mod commitment;
pub mod identity;
pub mod instance;
pub mod list;
pub mod node_pool;
pub mod placing;
