//! Commitments (capacity blocks, reservations, committed use): how much to commit to
//! ([`sizing`]), what a commitment is ([`spec`]; its kind and the seam the clouds buy,
//! read and cancel through are `crate::seam`'s), what it costs ([`price`]), buying one
//! at most once ([`purchase`]) and how well it is used ([`usage`]).

pub mod price;
pub mod purchase;
pub mod rates;
pub mod sizing;
pub mod spec;
#[cfg(test)]
mod tests;
pub mod usage;

use std::collections::BTreeMap;

pub use crate::seam::commitment_kind::{CommitmentKind, TermStyle};
pub use crate::seam::commitments::{
    CapacityBlockOffering, CommitmentStatus, CommitmentUse, Commitments, LiveCommitment,
    MARKER_TAG, OfferingQuery, Order, PriceQuote,
};
pub use price::CommitmentQuote;
pub use purchase::{Purchased, purchase_once, rank_offerings};
pub use sizing::{Commitment, Sizing, SizingError, SizingInput, parse_csv, size};
pub use spec::{CommitmentConfig, CommitmentSpec, OnDestroy, Term};

/// The marker of one purchase: the same order with the same tags always gets the same key,
/// so an apply that lost the answer (or was interrupted) finds what it bought. Named
/// orders (Compute Engine) are their name.
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
        // Named orders are found again by their name, chosen stably by the caller.
        Order::GcpReservation { name, .. } | Order::GcpCommitment { name, .. } => {
            return name.clone();
        }
        Order::AzureReservation { order_id, .. } => return order_id.clone(),
        Order::AzureCapacityReservation {
            resource_group,
            group,
            name,
            ..
        } => return format!("{resource_group}/{group}/{name}"),
    };
    for (k, v) in tags {
        s.push('\u{1f}');
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    format!("gc-{:016x}", crate::pool::stable_hash::fnv1a(&s))
}

/// A stable resource name for a named commitment (`gpu-tf-` and 16 hex digits) from the
/// words that identify it: legal on Compute Engine (RFC 1035, 23 characters).
pub fn stable_name(parts: &[&str]) -> String {
    format!(
        "gpu-tf-{:016x}",
        crate::pool::stable_hash::fnv1a(&parts.join("\u{1f}"))
    )
}
