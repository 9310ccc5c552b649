//! The cloud drivers: one folder per cloud holding everything that cloud knows (its clients,
//! wire conversions, error codes, images), each implementing the seams it has
//! (`crate::seam`): `aws` (EKS node groups, EC2 instances and capacity blocks and
//! reservations), `azure` (AKS agent pools, VMs, reservations), `gcp` (GKE node pools,
//! Compute Engine VMs, reservations and committed use). [`fake`] is an in-memory node-group
//! cloud serving any of their rules, for tests of code built on the seam.

pub mod fake;

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "azure")]
pub mod azure;
#[cfg(feature = "gcp")]
pub mod gcp;
