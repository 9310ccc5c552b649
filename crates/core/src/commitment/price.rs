//! The money of one commitment: what it costs up front, per hour, per month and over its
//! whole term, what a GPU-hour of it costs against on demand, and the break-even
//! utilisation. Unknown stays unknown (`None`), never $0.

/// Hours in a month, as every cost figure of the provider counts them.
pub const HOURS_PER_MONTH: f64 = 730.0;

/// The money of a commitment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommitmentQuote {
    /// Paid at purchase.
    pub upfront_usd: Option<f64>,
    /// Recurring charge per hour (0 for a commitment paid all up front).
    pub hourly_usd: Option<f64>,
    /// Recurring charge per month (730 hours).
    pub monthly_usd: Option<f64>,
    /// The whole term: up front plus the recurring charge over the term (`None` for an
    /// open-ended commitment).
    pub total_usd: Option<f64>,
    /// Length of the term in hours (`None` when open-ended).
    pub term_hours: Option<f64>,
    /// What one committed GPU-hour costs.
    pub effective_usd_per_gpu_hour: Option<f64>,
    /// What a GPU-hour of the same GPUs costs on demand in the same region.
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    /// Share of committed hours that must be used for the commitment to beat on demand:
    /// effective ÷ on-demand.
    pub break_even_utilization: Option<f64>,
}

fn ratio(effective: Option<f64>, on_demand: Option<f64>) -> Option<f64> {
    match (effective, on_demand) {
        (Some(e), Some(o)) if o > 0.0 => Some(e / o),
        _ => None,
    }
}

/// A capacity block: `upfront_usd` for `hours` of `gpus` GPUs, nothing recurring.
pub fn capacity_block(
    upfront_usd: f64,
    hours: f64,
    gpus: u32,
    on_demand_usd_per_gpu_hour: Option<f64>,
) -> CommitmentQuote {
    let gpu_hours = hours * f64::from(gpus);
    let effective = (gpu_hours > 0.0).then(|| upfront_usd / gpu_hours);
    CommitmentQuote {
        upfront_usd: Some(upfront_usd),
        hourly_usd: Some(0.0),
        monthly_usd: Some(0.0),
        total_usd: Some(upfront_usd),
        term_hours: Some(hours),
        effective_usd_per_gpu_hour: effective,
        on_demand_usd_per_gpu_hour,
        break_even_utilization: ratio(effective, on_demand_usd_per_gpu_hour),
    }
}

/// A capacity reservation billed at the on-demand rate of its instances whether they run
/// or not, until cancelled or for `hours` when it has an end.
pub fn at_on_demand_rate(
    on_demand_usd_per_instance_hour: Option<f64>,
    instances: u32,
    gpus_per_instance: u32,
    hours: Option<f64>,
) -> CommitmentQuote {
    let hourly = on_demand_usd_per_instance_hour.map(|p| p * f64::from(instances));
    let per_gpu = on_demand_usd_per_instance_hour.map(|p| p / f64::from(gpus_per_instance.max(1)));
    CommitmentQuote {
        upfront_usd: Some(0.0),
        hourly_usd: hourly,
        monthly_usd: hourly.map(|h| h * HOURS_PER_MONTH),
        total_usd: hourly.zip(hours).map(|(h, n)| h * n),
        term_hours: hours,
        effective_usd_per_gpu_hour: per_gpu,
        on_demand_usd_per_gpu_hour: per_gpu,
        break_even_utilization: ratio(per_gpu, per_gpu),
    }
}

/// A commitment at `usd_per_instance_hour` for `hours` (1 or 3 years) of `instances`,
/// paid monthly or all up front.
pub fn committed(
    usd_per_instance_hour: f64,
    instances: u32,
    gpus_per_instance: u32,
    hours: f64,
    on_demand_usd_per_gpu_hour: Option<f64>,
    upfront: bool,
) -> CommitmentQuote {
    let hourly = usd_per_instance_hour * f64::from(instances);
    let total = hourly * hours;
    let effective = usd_per_instance_hour / f64::from(gpus_per_instance.max(1));
    CommitmentQuote {
        upfront_usd: Some(if upfront { total } else { 0.0 }),
        hourly_usd: Some(if upfront { 0.0 } else { hourly }),
        monthly_usd: Some(if upfront {
            0.0
        } else {
            hourly * HOURS_PER_MONTH
        }),
        total_usd: Some(total),
        term_hours: Some(hours),
        effective_usd_per_gpu_hour: Some(effective),
        on_demand_usd_per_gpu_hour,
        break_even_utilization: ratio(Some(effective), on_demand_usd_per_gpu_hour),
    }
}

/// A term in words: `48 hours`, `14 days`, `12 months`, `until cancelled`.
pub fn describe_term(hours: Option<f64>) -> String {
    match hours {
        None => "until cancelled".to_string(),
        Some(h) if h >= 8760.0 && (h / 730.0).fract() == 0.0 => {
            format!("{} months", (h / 730.0) as u64)
        }
        Some(h) if h >= 24.0 && (h / 24.0).fract() == 0.0 && h > 48.0 => {
            format!("{} days", (h / 24.0) as u64)
        }
        Some(h) => format!("{} hours", h.round() as u64),
    }
}

/// Dollars for people: `$31,464.00`.
pub fn usd(amount: f64) -> String {
    let cents = (amount * 100.0).round() as i128;
    let (whole, frac) = (cents.abs() / 100, cents.abs() % 100);
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    format!("{}${grouped}.{frac:02}", if cents < 0 { "-" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_block_money() {
        // 1 × p5.48xlarge (8 GPUs) for 48 h at $1,500 up front, on demand $4/GPU-h.
        let q = capacity_block(1500.0, 48.0, 8, Some(4.0));
        assert_eq!(q.total_usd, Some(1500.0));
        assert_eq!(q.hourly_usd, Some(0.0));
        let eff = q.effective_usd_per_gpu_hour.unwrap();
        assert!((eff - 1500.0 / 384.0).abs() < 1e-9);
        assert!((q.break_even_utilization.unwrap() - eff / 4.0).abs() < 1e-9);
        // Unknown on-demand price: no break-even, never a made-up one.
        assert_eq!(
            capacity_block(1500.0, 48.0, 8, None).break_even_utilization,
            None
        );
    }

    #[test]
    fn reservation_at_on_demand_rate() {
        let q = at_on_demand_rate(Some(10.0), 2, 8, None);
        assert_eq!(q.hourly_usd, Some(20.0));
        assert_eq!(q.monthly_usd, Some(20.0 * 730.0));
        assert_eq!(q.total_usd, None, "open-ended: no total");
        assert_eq!(q.break_even_utilization, Some(1.0));
        assert_eq!(
            at_on_demand_rate(Some(10.0), 2, 8, Some(10.0)).total_usd,
            Some(200.0)
        );
        let unknown = at_on_demand_rate(None, 2, 8, Some(10.0));
        assert_eq!((unknown.hourly_usd, unknown.total_usd), (None, None));
    }

    #[test]
    fn committed_monthly_and_upfront() {
        let m = committed(50.0, 2, 8, 8760.0, Some(10.0), false);
        assert_eq!(m.hourly_usd, Some(100.0));
        assert_eq!(m.total_usd, Some(876_000.0));
        assert_eq!(m.upfront_usd, Some(0.0));
        assert_eq!(m.effective_usd_per_gpu_hour, Some(6.25));
        assert_eq!(m.break_even_utilization, Some(0.625));
        let u = committed(50.0, 2, 8, 8760.0, None, true);
        assert_eq!((u.upfront_usd, u.hourly_usd), (Some(876_000.0), Some(0.0)));
        assert_eq!(u.break_even_utilization, None);
    }

    #[test]
    fn words() {
        assert_eq!(describe_term(Some(48.0)), "48 hours");
        assert_eq!(describe_term(Some(24.0 * 14.0)), "14 days");
        assert_eq!(describe_term(Some(8760.0)), "12 months");
        assert_eq!(describe_term(None), "until cancelled");
        assert_eq!(usd(31464.0), "$31,464.00");
        assert_eq!(usd(0.5), "$0.50");
        assert_eq!(usd(1_234_567.891), "$1,234,567.89");
    }
}
