//! Reclaim without loss, the parts every cloud shares: why a VM stopped ([`cause`]),
//! when to try starting it again and when to give up ([`schedule`]), the events a
//! watcher writes as JSON lines ([`events`]) and their summary ([`summary`]).
//!
//! [`watch`] is one pass of the watcher (`terraform-provider-gpu watch`) over the VMs an
//! [`crate::instance::Instances`] adapter manages.

pub mod cause;
pub mod events;
pub mod schedule;
pub mod summary;
pub mod watch;

pub use cause::{StopCause, ec2_stop_cause, gce_stop_cause};
pub use events::{Event, EventKind};
pub use schedule::{Next, StartSchedule};
pub use summary::{Summary, SummaryRow};
pub use watch::Watcher;
