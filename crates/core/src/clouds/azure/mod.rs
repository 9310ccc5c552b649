//! The Azure driver: what the provider knows about Azure. [`rules`] (always built): AKS
//! agent pools as data; [`instance_rules`] (always built): VMs as data, and their ids. With the `azure` feature, the clients over Azure Resource Manager
//! REST with Azure's usual credential chain ([`auth`]), made per operation from one
//! [`AzureSession`]: [`Aks`] (agent pools, the
//! [`crate::seam::NodeGroups`] seam), [`AzureVms`] (VMs, [`crate::seam::Instances`]) and
//! [`AzureCommitments`] (reservations and capacity reservations,
//! [`crate::seam::Commitments`]).

pub mod instance_rules;
pub mod rules;

#[cfg(feature = "azure")]
mod aks;
#[cfg(feature = "azure")]
mod arm;
#[cfg(feature = "azure")]
pub mod auth;
#[cfg(feature = "azure")]
mod commitments;
#[cfg(feature = "azure")]
mod convert;
#[cfg(feature = "azure")]
mod errors;
#[cfg(feature = "azure")]
mod instances;
#[cfg(feature = "azure")]
mod placement_scores;
#[cfg(feature = "azure")]
mod session;

#[cfg(feature = "azure")]
pub use aks::{API_VERSION, Aks, DEFAULT_ENDPOINT};
#[cfg(feature = "azure")]
pub use commitments::AzureCommitments;
#[cfg(feature = "azure")]
pub use instances::{
    AzureVms, HPC_IMAGE_OFFER, HPC_IMAGE_PUBLISHER, HPC_IMAGE_SKU, VM_API_VERSION,
};
#[cfg(feature = "azure")]
pub use placement_scores::{
    API_VERSION as PLACEMENT_SCORE_API_VERSION, AzurePlacementScores,
    score_of as placement_score_of,
};
#[cfg(feature = "azure")]
pub use session::{AzureSession, AzureSettings};
