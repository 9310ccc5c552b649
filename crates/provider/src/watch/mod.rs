//! The jobs of `watch` beside the pass itself (`watch_cli` runs the loop): leader
//! election among replicas through a Kubernetes Lease ([`lease`] decides, [`kube`] talks
//! to the API, [`elector`] holds the flags and one round, [`guard`] checks the lease
//! before each start) and Prometheus metrics ([`metrics`], served by [`serve`]).

pub mod elector;
pub mod guard;
pub mod kube;
pub mod lease;
pub mod metrics;
pub mod serve;
