//! Commitments (capacity blocks, reservations, committed use): how much to commit to
//! ([`sizing`]), what a commitment is ([`kind`], [`spec`]), what it costs ([`price`]), and
//! the cloud seam that buys, reads and cancels them ([`store`]).

pub mod kind;
pub mod price;
pub mod sizing;
pub mod spec;
pub mod store;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use kind::{CommitmentKind, TermStyle};
pub use price::CommitmentQuote;
pub use sizing::{Commitment, Sizing, SizingError, SizingInput, parse_csv, size};
pub use spec::{CommitmentConfig, CommitmentSpec, OnDestroy, Term};
pub use store::{
    CapacityBlockOffering, CommitmentStatus, Commitments, LiveCommitment, MARKER_TAG,
    OfferingQuery, Order, Purchased, purchase_once,
};

/// The marker of one purchase: the same order with the same tags always gets the same key,
/// so an apply that lost the answer (or was interrupted) finds what it bought.
pub fn purchase_key(order: &Order, tags: &BTreeMap<String, String>) -> String {
    let mut s = match order {
        Order::CapacityBlock {
            region,
            offering_id,
            platform,
        } => format!("block\u{1f}{region}\u{1f}{offering_id}\u{1f}{platform}"),
        Order::CapacityReservation {
            region,
            zone,
            instance_type,
            instance_count,
            platform,
            match_criteria,
            end,
        } => format!(
            "odcr\u{1f}{region}\u{1f}{zone}\u{1f}{instance_type}\u{1f}{instance_count}\u{1f}{platform}\u{1f}{match_criteria}\u{1f}{}",
            end.map_or_else(String::new, |e| e.to_string())
        ),
    };
    for (k, v) in tags {
        s.push('\u{1f}');
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    format!("gc-{:016x}", crate::pool::stable_hash::fnv1a(&s))
}
