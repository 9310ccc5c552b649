//! The Google Cloud driver: what the provider knows about Google Cloud. [`rules`] (always
//! built): GKE node pools as data; [`instance_rules`] (always built): Compute Engine
//! instances as data, and their paths. With the `gcp` feature, the clients over Google's REST
//! APIs with Google's credentials ([`auth`]), made per operation from one [`GcpSession`]: [`Gke`] (node pools through the Container
//! API v1, the [`crate::seam::NodeGroups`] seam), [`ComputeInstances`] (VMs,
//! [`crate::seam::Instances`]) and [`ComputeCommitments`] (reservations and committed use,
//! [`crate::seam::Commitments`]).

pub mod codes;
pub mod instance_rules;
pub mod rules;

#[cfg(feature = "gcp")]
pub mod auth;
#[cfg(feature = "gcp")]
mod commitments;
#[cfg(feature = "gcp")]
mod convert;
#[cfg(feature = "gcp")]
mod errors;
#[cfg(feature = "gcp")]
mod gke;
#[cfg(feature = "gcp")]
mod instances;
#[cfg(feature = "gcp")]
mod operations;
#[cfg(feature = "gcp")]
mod rest;
#[cfg(feature = "gcp")]
mod session;

#[cfg(feature = "gcp")]
pub use commitments::ComputeCommitments;
#[cfg(feature = "gcp")]
pub use gke::Gke;
#[cfg(feature = "gcp")]
pub use instances::{ComputeInstances, DLVM_FAMILY, DLVM_PROJECT};
#[cfg(feature = "gcp")]
pub use rest::{COMPUTE_ENDPOINT, DEFAULT_ENDPOINT};
#[cfg(feature = "gcp")]
pub use session::{GcpSession, GcpSettings};
