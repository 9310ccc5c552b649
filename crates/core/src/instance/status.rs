//! The `status` a user reads: the power state and, for a stopped VM, who stopped it.

use crate::seam::instances::StopCause;
use crate::seam::instances::{LiveInstance, PowerState};

/// What `gpu_instance.status` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Running.
    Running,
    /// Being created or started.
    Starting,
    /// Being stopped.
    Stopping,
    /// Stopped by a reclaim, its disks kept: not drift; the watcher (or, on AWS, the
    /// cloud) starts it again.
    StoppedByReclaim,
    /// Stopped by a person or for another reason: left alone.
    Stopped,
    /// Being deleted.
    Terminated,
}

impl Status {
    /// The VM's status.
    pub fn of(vm: &LiveInstance) -> Status {
        match vm.power {
            PowerState::Running => Status::Running,
            PowerState::Starting => Status::Starting,
            PowerState::Stopping => Status::Stopping,
            PowerState::Terminated => Status::Terminated,
            PowerState::Stopped if vm.stop_cause == Some(StopCause::Reclaim) => {
                Status::StoppedByReclaim
            }
            PowerState::Stopped => Status::Stopped,
        }
    }

    /// The word in state: `running`, `starting`, `stopping`, `stopped_by_reclaim`,
    /// `stopped`, `terminated`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Starting => "starting",
            Status::Stopping => "stopping",
            Status::StoppedByReclaim => "stopped_by_reclaim",
            Status::Stopped => "stopped",
            Status::Terminated => "terminated",
        }
    }
}
