//! `gpu-operator`: what keeps running between Terraform runs. Today that is the reclaim
//! watcher, [`watch`] (the provider binary's
//! `watch` subcommand calls [`watch::run`]): each pass brings back the VMs a spot reclaim
//! stopped. Beside the pass: leader election among replicas through a Kubernetes Lease
//! ([`lease`] decides, [`kube`] talks to the API, [`elector`] holds the flags and one
//! round, [`guard`] checks the lease before each start) and Prometheus metrics
//! ([`metrics`], served by [`serve`]). A Kubernetes controller will grow here.
//!
//! It reaches the clouds through `gpu-core` only (its sessions and seams), never through
//! the provider or the plugin protocol.

pub mod duration;
pub mod elector;
pub mod guard;
pub mod kube;
pub mod lease;
pub mod metrics;
pub mod serve;
pub mod watch;
