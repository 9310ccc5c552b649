//! One GPU VM, cloud-neutral (`gpu_instance`): the configuration checked into a
//! [`InstanceSpec`] ([`config`]), the status a user reads ([`status`]) and an in-memory
//! cloud for tests ([`fake`]); the seam every cloud's driver implements, [`Instances`], is
//! `crate::seam::instances`. A spot VM with `reclaim = stop` is stopped by a reclaim, never deleted; the
//! watcher (`crate::reclaim::watch`) starts it again.

pub mod config;
pub mod fake;
pub mod status;

pub use crate::seam::instances::{
    ImageRef, InstanceClass, Instances, LaunchSpec, LiveInstance, MARKER_LABEL, MARKER_TAG,
    PowerState, ReclaimPolicy, StopCause, marker_key,
};
pub use config::{InstanceConfig, InstanceSpec};
pub use status::Status;

#[cfg(test)]
mod tests;
