//! How code reaches a cloud's seams: where ([`Place`]) and the connectors that hand out a
//! cloud's clients there ([`ConnectInstances`], [`ConnectCommitments`]). The registry's
//! sessions implement them for the real clouds; tests implement them with fakes.

use async_trait::async_trait;

use super::{CloudError, Commitments, Instances};
use crate::offer::Cloud;

/// Where a VM lives, as much as a connector needs to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Cloud.
    pub cloud: Cloud,
    /// Region (empty when the scope alone is enough, as for a watcher's target).
    pub region: String,
    /// The account scope the VM is in, where the cloud has one (a Google Cloud project, an
    /// Azure subscription); `None` on clouds without one.
    pub scope: Option<String>,
}

/// Gives the VM client of a place.
#[async_trait]
pub trait ConnectInstances: Sync {
    /// The client of `place`; an error when it cannot be set up.
    async fn instances(&self, place: &Place) -> Result<Box<dyn Instances>, CloudError>;
}

/// Gives the commitment client of a cloud.
#[async_trait]
pub trait ConnectCommitments: Sync {
    /// The client of `cloud` for `region`; an error when it cannot be set up (no
    /// credentials, no account scope).
    async fn commitments(
        &self,
        cloud: Cloud,
        region: &str,
    ) -> Result<Box<dyn Commitments>, CloudError>;
}
