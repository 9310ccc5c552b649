//! One GPU VM, cloud-neutral (`gpu_instance`): the configuration checked into a
//! [`InstanceSpec`] ([`config`]), the cloud seam [`Instances`] every adapter implements
//! ([`store`]), the status a user reads ([`status`]) and an in-memory cloud for tests
//! ([`fake`]). A spot VM with `reclaim = stop` is stopped by a reclaim, never deleted; the
//! watcher (`crate::reclaim::watch`) starts it again.

pub mod config;
pub mod fake;
pub mod status;
pub mod store;

pub use config::{InstanceConfig, InstanceSpec, ReclaimPolicy};
pub use status::Status;
pub use store::{
    ImageRef, InstanceClass, Instances, LaunchSpec, LiveInstance, MARKER_LABEL, MARKER_TAG,
    PowerState, marker_key,
};

#[cfg(test)]
mod tests;
