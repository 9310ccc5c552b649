//! gpu-core: multi-cloud GPU offers and the money behind them. Knows clouds and prices,
//! nothing of Terraform.
//!
//! - [`gpu`]: the GPU model registry and name lookup.
//! - [`model`]: the neutral vocabulary of capacity, node counts and taints.
//! - [`offer`]: one priced instance type in one place ([`offer::Offer`]) and its key.
//! - [`catalog`]: a set of offers with its origin; the embedded snapshot.
//! - [`query`]: filter and rank offers by price per GPU-hour, and explain empty results.
//! - [`commitment`]: sizing a commitment to the floor of demand.
//! - [`instance`]: one GPU VM (`gpu_instance`): its checked spec and the cloud seam for VMs.
//! - [`reclaim`]: reclaim without loss: stop causes, the start schedule, watcher events, one watcher pass.
//! - [`retry`] and [`cancel`]: the one retry policy of cloud calls, and the stop signal.
//! - [`pace`]: the one clock of every wait, and the test-only time scale.

pub mod audit;
pub mod availability;
pub mod cancel;
pub mod catalog;
pub mod clouds;
pub mod commitment;
pub mod cost;
pub mod freshness;
pub mod gpu;
pub mod instance;
pub mod inventory;
pub mod model;
pub mod offer;
pub mod pace;
pub mod pool;
pub mod query;
pub mod reclaim;
pub mod record;
pub mod region_group;
pub mod registry;
pub mod retry;
pub mod seam;
pub mod time;

#[cfg(test)]
mod test_support;
