//! The cloud drivers: one folder per cloud holding everything that cloud knows. Each has
//! its node-group rules as data (`rules`, always built) and, behind the cloud's cargo
//! feature, its clients implementing the seams it has (`crate::seam`): `aws` (EKS node
//! groups, EC2 instances, capacity blocks and reservations), `azure` (AKS agent pools, VMs,
//! reservations), `gcp` (GKE node pools, Compute Engine VMs, reservations and committed
//! use). `crate::registry` maps a cloud to its driver. [`fake`] is an in-memory node-group
//! cloud serving any of their rules, for tests of code built on the seam.

pub mod aws;
pub mod azure;
pub mod fake;
pub mod gcp;
