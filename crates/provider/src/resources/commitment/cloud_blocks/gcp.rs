//! The commitment on Google Cloud (no block of its own): where a Compute Engine
//! reservation is addressed (its zone), the committed-use type of a machine family, and
//! the Compute Engine orders: a reservation and a committed use discount with its
//! reservation.

use gpu_core::catalog::Catalog;
use gpu_core::commitment::{CommitmentKind, Order};
use gpu_core::offer::Cloud;

use super::Planned;
use crate::model_values::text;
use crate::resources::commitment::model::CommitmentModel;

/// Where a commitment of `kind` is addressed: a reservation by its zone (Compute names
/// reservations by zone), a committed use discount by its region; lower case.
pub(super) fn location(m: &CommitmentModel, kind: CommitmentKind) -> String {
    let pick = if kind == CommitmentKind::GcpReservation {
        &m.zone
    } else {
        &m.region
    };
    text(pick).trim().to_ascii_lowercase()
}

/// The Compute Engine commitment type of a machine family (`a3-highgpu-8g` →
/// `ACCELERATOR_OPTIMIZED_A3`), `None` for a family without a known type.
pub fn commitment_type(machine: &str) -> Option<&'static str> {
    let m = machine.to_ascii_lowercase();
    Some(if m.starts_with("a3-megagpu") {
        "ACCELERATOR_OPTIMIZED_A3_MEGA"
    } else if m.starts_with("a3-ultragpu") {
        "ACCELERATOR_OPTIMIZED_A3_ULTRA"
    } else if m.starts_with("a3-") {
        "ACCELERATOR_OPTIMIZED_A3"
    } else if m.starts_with("a2-") {
        "ACCELERATOR_OPTIMIZED"
    } else if m.starts_with("g2-") {
        "GRAPHICS_OPTIMIZED"
    } else {
        return None;
    })
}

/// The Compute Engine order of `p`: a zonal reservation, or a committed use discount
/// sized from the catalog's row of its machine type (vCPUs, memory, GPUs) with the
/// reservation it covers.
pub(super) fn order(p: &Planned<'_>, catalog: &Catalog) -> Result<Order, String> {
    let m = &p.model;
    let (region, instance_type, count) = (&p.region, &p.instance_type, p.count);
    match p.kind {
        CommitmentKind::GcpReservation => {
            let zone = text(&m.zone).trim().to_ascii_lowercase();
            Ok(Order::GcpReservation {
                name: p.name(&zone, ""),
                zone,
                machine_type: instance_type.clone(),
                count,
                accelerator: None, // accelerator-optimized machine types carry their GPUs
            })
        }
        CommitmentKind::GcpCommitment => {
            let term = text(&m.term).trim().to_ascii_lowercase();
            let row = catalog
                .offers()
                .iter()
                .find(|o| {
                    o.cloud == Cloud::Gcp
                        && &o.region == region
                        && &o.instance_type == instance_type
                })
                .ok_or_else(|| format!("the catalog has no {instance_type} in {region}"))?;
            let (Some(vcpus), Some(mem)) = (row.vcpus, row.memory_gib) else {
                return Err(format!(
                    "the catalog lacks the vCPUs or memory of {instance_type}"
                ));
            };
            let commitment_type = commitment_type(instance_type)
                .ok_or_else(|| format!("no committed-use type is known for {instance_type}"))?;
            let gpus = row.gpu_count.unwrap_or(0.0) as u32;
            let accelerator = gpu_core::gpu::gke_accelerator(row.gpu, instance_type)
                .map(|t| (t.to_string(), gpus * count));
            let zone = text(&m.zone).trim().to_ascii_lowercase();
            Ok(Order::GcpCommitment {
                reservation: Some((zone, instance_type.clone(), count)),
                name: p.name(region, &term),
                plan: if term == "3y" {
                    "THIRTY_SIX_MONTH"
                } else {
                    "TWELVE_MONTH"
                }
                .to_string(),
                commitment_type: commitment_type.to_string(),
                vcpus: vcpus as u32 * count,
                memory_mb: (mem * 1024.0) as u64 * u64::from(count),
                accelerator,
                region: region.clone(),
            })
        }
        other => Err(format!("{other} is not a Google Cloud commitment")),
    }
}
