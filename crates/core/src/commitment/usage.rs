//! How well a bought commitment is used: what its unused share costs a month, and when
//! that is worth a warning.

use super::price::HOURS_PER_MONTH;
pub use crate::seam::commitments::CommitmentUse;

/// Below this share in use, a commitment's plan warns (the idle money is most of it).
pub const LOW_USE: f64 = 0.5;

/// What a commitment costs a month, spread evenly: its recurring charge when nothing is
/// paid up front (exact), else its effective price per GPU-hour (the up-front fee spread
/// over the term, plus any recurring charge) for all its GPUs over 730 hours.
pub fn monthly_equivalent_usd(
    monthly_usd: Option<f64>,
    upfront_usd: Option<f64>,
    effective_usd_per_gpu_hour: Option<f64>,
    gpus: Option<f64>,
) -> Option<f64> {
    match (monthly_usd, upfront_usd.unwrap_or(0.0)) {
        (Some(monthly), 0.0) => Some(monthly),
        _ => Some(effective_usd_per_gpu_hour? * gpus? * HOURS_PER_MONTH),
    }
}

/// What the unused share of a commitment costs a month, out of its monthly equivalent.
/// For a reservation billed at the on-demand rate this is the idle part of its bill; for
/// a prepaid block or a committed-use discount, the fee paid for capacity that ran empty.
pub fn idle_monthly_usd(monthly_equivalent_usd: f64, in_use: &CommitmentUse) -> f64 {
    let idle_share = (1.0 - in_use.utilization).clamp(0.0, 1.0);
    monthly_equivalent_usd * idle_share
}

/// Whether `in_use` is low enough to warn about.
pub fn is_low(in_use: &CommitmentUse) -> bool {
    in_use.utilization < LOW_USE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_use_is_a_share_of_what_is_held() {
        let u = CommitmentUse::counted(1, 4).unwrap();
        assert_eq!((u.used_instances, u.utilization), (1, 0.25));
        assert!(is_low(&u));
        assert_eq!(CommitmentUse::counted(0, 0), None, "nothing held, no share");
        let over = CommitmentUse::counted(9, 4).unwrap();
        assert_eq!((over.used_instances, over.utilization), (4, 1.0));
        assert!(
            !is_low(&CommitmentUse::counted(2, 4).unwrap()),
            "half is not low"
        );
    }

    #[test]
    fn a_measured_percentage_gives_a_rounded_instance_count() {
        let u = CommitmentUse::from_percent(37.5, 4).unwrap();
        assert_eq!((u.used_instances, u.utilization), (2, 0.375));
        assert_eq!(CommitmentUse::from_percent(f64::NAN, 4), None);
        assert_eq!(CommitmentUse::from_percent(-1.0, 4), None);
    }

    #[test]
    fn idle_money_is_the_unused_share_of_the_monthly_equivalent() {
        // Prepaid: 8 GPUs at $3/GPU-hour is $17,520 a month; a quarter used leaves $13,140.
        let prepaid = monthly_equivalent_usd(Some(0.0), Some(5000.0), Some(3.0), Some(8.0));
        assert_eq!(prepaid, Some(17_520.0));
        let u = CommitmentUse::counted(1, 4).unwrap();
        assert!((idle_monthly_usd(17_520.0, &u) - 13_140.0).abs() < 1e-9);
        let full = CommitmentUse::counted(4, 4).unwrap();
        assert_eq!(idle_monthly_usd(17_520.0, &full), 0.0);
        // Billed monthly: the charge itself, not a rounded effective rate.
        let monthly = monthly_equivalent_usd(Some(129_195.4), Some(0.0), Some(11.0617), Some(16.0));
        assert_eq!(monthly, Some(129_195.4));
        assert_eq!(
            monthly_equivalent_usd(None, Some(10.0), None, Some(8.0)),
            None
        );
    }
}
