//! Reclaim without loss, the parts every cloud shares: when to try starting a reclaimed
//! VM again and when to give up ([`schedule`]), the events a watcher writes as JSON lines
//! ([`events`]) and their summary ([`summary`]). Why a VM stopped is the seam's
//! [`StopCause`], which each cloud's driver reads from that cloud's own record.
//!
//! [`watch`] is one pass of the watcher (`terraform-provider-gpu watch`) over the VMs a
//! driver's [`crate::seam::instances::Instances`] manages.

pub mod events;
pub mod schedule;
pub mod summary;
pub mod watch;

pub use crate::seam::instances::StopCause;
pub use events::{Event, EventKind};
pub use schedule::{Next, StartSchedule};
pub use summary::{Summary, SummaryRow};
pub use watch::Watcher;
