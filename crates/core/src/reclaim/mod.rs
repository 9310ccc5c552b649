//! Reclaim without loss, the parts every cloud shares: why a VM stopped ([`cause`]),
//! when to try starting it again and when to give up ([`schedule`]), the events a
//! watcher writes as JSON lines ([`events`]) and their summary ([`summary`]).
//!
//! The watcher itself (`terraform-provider-gpu watch`) and the per-cloud VM adapters
//! build on these; they are not here yet.

pub mod cause;
pub mod events;
pub mod schedule;
pub mod summary;

pub use cause::{StopCause, ec2_stop_cause, gce_stop_cause};
pub use events::{Event, EventKind};
pub use schedule::{Next, StartSchedule};
pub use summary::{Summary, SummaryRow};
