//! Managed resources of the `gpu` provider, one module each.

pub mod node_pool;
