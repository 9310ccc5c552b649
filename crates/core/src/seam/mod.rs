//! The seams: what a cloud's driver implements, and the neutral vocabulary they speak.
//! Domain code (`pool`, `commitment`, `instance`, `reclaim`, `cost`) talks to clouds only
//! through these; the drivers (`crate::clouds`) implement them and nothing here names one.
//!
//! - [`node_groups`]: [`NodeGroups`] (EKS node groups, AKS agent pools, GKE node pools).
//! - [`instances`]: [`Instances`] (single GPU VMs, stop-on-reclaim); [`instance_rules`]:
//!   each cloud's VM rules as data ([`InstanceRules`]).
//! - [`commitments`]: [`Commitments`] (capacity blocks, reservations, committed use), with
//!   the kinds in [`commitment_kind`].
//! - [`connect`]: a [`Place`] and the connectors that hand out a cloud's clients.
//! - [`error`]: [`CloudError`], the typed answer of every cloud call.
//! - [`poll`]: the one wait loop; [`choke`]: the journal of mutating calls; [`turns`]: one
//!   queue per cluster where a cloud runs one operation at a time.
//! - [`cluster`]: a cluster by its cloud's id ([`ClusterRef`]); [`traits`]: each cloud's
//!   group rules as data; [`delta`]: what differs
//!   between a live group and a desired one.

pub mod capacity;
pub mod choke;
pub mod cluster;
pub mod commitment_kind;
pub mod commitments;
pub mod connect;
pub mod delta;
pub mod error;
pub mod instance_rules;
pub mod instances;
pub mod node_groups;
pub mod poll;
pub mod traits;
pub mod turns;

pub use capacity::{CapacityAnswer, CapacityOutcome, CapacityPlace};
pub use cluster::{BadClusterRef, ClusterRef, is_guid, is_zone_of, region_of_location};
pub use commitments::Commitments;
pub use connect::{ConnectCommitments, ConnectInstances, Place};
pub use error::CloudError;
pub use instance_rules::InstanceRules;
pub use instances::Instances;
pub use node_groups::{HealthIssue, NodeGroup, NodeGroupStatus, NodeGroups, WaitTarget};
pub use traits::CloudTraits;
pub use turns::Turn;

pub use crate::model::{
    AwsClass, AzureClass, CapacityType, GcpClass, GroupSpec, NodeClass, Scaling, Taint, TaintEffect,
};
