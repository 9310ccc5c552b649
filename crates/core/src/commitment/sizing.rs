//! How many GPUs to commit to, from a demand history: the floor (a percentile of demand,
//! the GPUs certain to be used) and the optimum (the count `N` that minimises
//! `N·commit·hours + Σ max(0, demand − N)·burst`), with the money of each against running
//! everything on demand or on spot, and the whole cost curve.
//!
//! The cost is convex in `N` (each extra committed GPU costs `commit·hours` and saves
//! `burst` for every hour demand is above it), so the curve is computed for every whole `N`
//! from 0 to the peak from the sorted demand and its prefix sums, and the optimum is its
//! lowest point (the smallest `N` among equals: less money locked in).

use thiserror::Error;

/// What [`size`] needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SizingInput {
    /// Concurrent GPUs in use, one number per hour.
    pub hourly_gpus: Vec<f64>,
    /// Price of one committed GPU-hour (paid whether used or not).
    pub commit_usd_per_gpu_hour: f64,
    /// Price of one GPU-hour above the commitment (spot or on-demand).
    pub burst_usd_per_gpu_hour: f64,
    /// The floor: this percentile of hourly demand (0 = the minimum), rounded down.
    pub floor_percentile: f64,
    /// On-demand price per GPU-hour, for the all-on-demand comparison (if known).
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    /// Spot price per GPU-hour, for the all-spot comparison (if known).
    pub spot_usd_per_gpu_hour: Option<f64>,
}

/// The money of committing to `gpus` GPUs over the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Commitment {
    /// GPUs committed.
    pub gpus: u32,
    /// Committed GPU-hours' cost: `gpus × commit × hours`.
    pub commit_usd: f64,
    /// Burst cost: every GPU-hour of demand above `gpus`, at the burst price.
    pub burst_usd: f64,
    /// `commit_usd + burst_usd`.
    pub total_usd: f64,
    /// Share of committed GPU-hours used (`None` when nothing is committed).
    pub utilization: Option<f64>,
    /// What this saves against running all demand on demand (if that price is known).
    pub savings_vs_on_demand_usd: Option<f64>,
    /// What this saves against running all demand on spot (if that price is known).
    pub savings_vs_spot_usd: Option<f64>,
}

/// The answer of [`size`].
#[derive(Debug, Clone, PartialEq)]
pub struct Sizing {
    /// Hours of history.
    pub hours: usize,
    /// GPU-hours of demand in the history.
    pub demand_gpu_hours: f64,
    /// Committing to the floor.
    pub floor: Commitment,
    /// Committing to the cheapest count.
    pub optimal: Commitment,
    /// Every GPU-hour on demand (if the price is known).
    pub all_on_demand_usd: Option<f64>,
    /// Every GPU-hour on spot (if the price is known).
    pub all_spot_usd: Option<f64>,
    /// Share of committed hours that must be used for a commitment to beat bursting:
    /// `commit / burst`.
    pub break_even_utilization: f64,
    /// Total cost for every whole count from 0 to the peak: `(gpus, total_usd)`.
    pub curve: Vec<(u32, f64)>,
}

/// Why a history or a price cannot be sized.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SizingError {
    /// No hours.
    #[error("the demand history is empty: give at least one hour")]
    Empty,
    /// A negative, infinite or NaN hour.
    #[error(
        "hour {hour} of the demand history is {value}: each hour is a number of GPUs, 0 or more"
    )]
    BadHour {
        /// Index of the hour (0-based).
        hour: usize,
        /// Its value.
        value: f64,
    },
    /// A price that is negative, infinite or NaN (or a burst price of 0).
    #[error("`{name}` is {value}: {why}")]
    BadPrice {
        /// The input's name.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What a valid one is.
        why: &'static str,
    },
    /// A percentile outside 0..=100.
    #[error("`floor_percentile` is {0}: a percentile from 0 (the minimum) to 100 (the peak)")]
    BadPercentile(f64),
    /// A peak too large to size GPU by GPU.
    #[error("the demand history peaks at {0} GPUs: at most {MAX_PEAK} can be sized")]
    TooLarge(f64),
}

/// The largest peak sized (the curve has one point per whole GPU).
pub const MAX_PEAK: u32 = 1_000_000;

/// Reads an hourly demand history written as CSV text: one hour per line, the number of
/// GPUs in its last column (`2026-11-01T00:00Z,12` or just `12`); a first line that is not
/// a number is a header; empty lines are skipped. Errors name the line (1-based).
pub fn parse_csv(text: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let field = line
            .rsplit(',')
            .next()
            .unwrap_or(line)
            .trim()
            .trim_matches('"');
        match field.parse::<f64>() {
            Ok(v) => out.push(v),
            Err(_) if i == 0 => {} // a header
            Err(_) => {
                return Err(format!(
                    "line {}: {field:?} is not a number of GPUs (the last column of each line is the hour's GPUs)",
                    i + 1
                ));
            }
        }
    }
    Ok(out)
}

/// Sizes a commitment for `input`.
pub fn size(input: &SizingInput) -> Result<Sizing, SizingError> {
    check(input)?;
    let mut sorted = input.hourly_gpus.clone();
    sorted.sort_by(f64::total_cmp);
    let hours = sorted.len();
    let mut prefix = Vec::with_capacity(hours + 1);
    prefix.push(0.0);
    for d in &sorted {
        prefix.push(prefix.last().copied().unwrap_or(0.0) + d);
    }
    let total = prefix[hours];
    let peak = sorted[hours - 1];
    if peak > f64::from(MAX_PEAK) {
        return Err(SizingError::TooLarge(peak));
    }
    let c = Curve {
        sorted: &sorted,
        prefix: &prefix,
        input,
    };
    let top = peak.ceil() as u32;
    let curve: Vec<(u32, f64)> = (0..=top).map(|n| (n, c.at(n).total_usd)).collect();
    let best = curve
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map_or(0, |p| p.0);
    let rank = (input.floor_percentile / 100.0 * (hours - 1) as f64).floor() as usize;
    let floor = sorted[rank.min(hours - 1)].floor() as u32;
    let times = |p: Option<f64>| p.map(|p| total * p);
    Ok(Sizing {
        hours,
        demand_gpu_hours: total,
        floor: c.at(floor),
        optimal: c.at(best),
        all_on_demand_usd: times(input.on_demand_usd_per_gpu_hour),
        all_spot_usd: times(input.spot_usd_per_gpu_hour),
        break_even_utilization: input.commit_usd_per_gpu_hour / input.burst_usd_per_gpu_hour,
        curve,
    })
}

/// Refuses what cannot be sized, naming it.
fn check(input: &SizingInput) -> Result<(), SizingError> {
    if input.hourly_gpus.is_empty() {
        return Err(SizingError::Empty);
    }
    if let Some((hour, &value)) = input
        .hourly_gpus
        .iter()
        .enumerate()
        .find(|(_, d)| !d.is_finite() || **d < 0.0)
    {
        return Err(SizingError::BadHour { hour, value });
    }
    let price = |name: &'static str, value: f64, positive: bool| {
        let ok = value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 };
        if ok {
            Ok(())
        } else {
            Err(SizingError::BadPrice {
                name,
                value,
                why: if positive {
                    "a price in USD per GPU-hour, more than 0"
                } else {
                    "a price in USD per GPU-hour, 0 or more"
                },
            })
        }
    };
    price(
        "commit_usd_per_gpu_hour",
        input.commit_usd_per_gpu_hour,
        false,
    )?;
    price("burst_usd_per_gpu_hour", input.burst_usd_per_gpu_hour, true)?;
    if let Some(p) = input.on_demand_usd_per_gpu_hour {
        price("on_demand_usd_per_gpu_hour", p, false)?;
    }
    if let Some(p) = input.spot_usd_per_gpu_hour {
        price("spot_usd_per_gpu_hour", p, false)?;
    }
    if !(0.0..=100.0).contains(&input.floor_percentile) {
        return Err(SizingError::BadPercentile(input.floor_percentile));
    }
    Ok(())
}

/// The cost of each count, from the sorted history and its prefix sums.
struct Curve<'a> {
    sorted: &'a [f64],
    prefix: &'a [f64],
    input: &'a SizingInput,
}

impl Curve<'_> {
    fn at(&self, gpus: u32) -> Commitment {
        let n = f64::from(gpus);
        let hours = self.sorted.len();
        // Hours with demand above the commitment, and their demand.
        let below = self.sorted.partition_point(|d| *d <= n);
        let above = hours - below;
        let above_sum = self.prefix[hours] - self.prefix[below];
        let burst_gpu_hours = (above_sum - n * above as f64).max(0.0);
        let commit_usd = n * self.input.commit_usd_per_gpu_hour * hours as f64;
        let burst_usd = burst_gpu_hours * self.input.burst_usd_per_gpu_hour;
        let total_usd = commit_usd + burst_usd;
        let used = self.prefix[below] + n * above as f64;
        let total_demand = self.prefix[hours];
        Commitment {
            gpus,
            commit_usd,
            burst_usd,
            total_usd,
            utilization: (gpus > 0).then(|| used / (n * hours as f64)),
            savings_vs_on_demand_usd: self
                .input
                .on_demand_usd_per_gpu_hour
                .map(|p| total_demand * p - total_usd),
            savings_vs_spot_usd: self
                .input
                .spot_usd_per_gpu_hour
                .map(|p| total_demand * p - total_usd),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn input(hourly: &[f64], commit: f64, burst: f64) -> SizingInput {
        SizingInput {
            hourly_gpus: hourly.to_vec(),
            commit_usd_per_gpu_hour: commit,
            burst_usd_per_gpu_hour: burst,
            floor_percentile: 0.0,
            on_demand_usd_per_gpu_hour: None,
            spot_usd_per_gpu_hour: None,
        }
    }

    /// The cost of `n`, hour by hour: the definition, not the prefix sums.
    fn brute(hourly: &[f64], n: u32, commit: f64, burst: f64) -> f64 {
        let n = f64::from(n);
        hourly
            .iter()
            .map(|d| n * commit + (d - n).max(0.0) * burst)
            .sum()
    }

    #[test]
    fn flat_demand_is_all_committed_and_a_commit_price_at_burst_or_above_is_zero() {
        let s = size(&input(&[8.0; 100], 2.0, 3.0)).unwrap();
        assert_eq!((s.floor.gpus, s.optimal.gpus), (8, 8));
        assert_eq!(s.optimal.utilization, Some(1.0));
        assert_eq!(s.optimal.burst_usd, 0.0);
        for commit in [3.0, 4.0] {
            let s = size(&input(&[1.0, 5.0, 8.0], commit, 3.0)).unwrap();
            assert_eq!(s.optimal.gpus, 0, "commit {commit} ≥ burst 3");
        }
    }

    #[test]
    fn the_optimum_commits_to_what_is_used_often_enough_to_pay() {
        // 4 GPUs always, 10 for a quarter of the hours. Committing a GPU costs 0.5 of a
        // burst hour per hour, so it pays where demand reaches it at least half the time.
        let mut hourly = vec![4.0; 75];
        hourly.extend([10.0; 25]);
        let mut i = input(&hourly, 1.0, 2.0);
        i.on_demand_usd_per_gpu_hour = Some(2.0);
        i.spot_usd_per_gpu_hour = Some(1.2);
        let s = size(&i).unwrap();
        assert_eq!(s.optimal.gpus, 4);
        assert_eq!(s.floor.gpus, 4);
        assert_eq!(s.break_even_utilization, 0.5);
        assert_eq!(s.curve.len(), 11);
        assert_eq!(s.demand_gpu_hours, 550.0);
        assert_eq!(s.all_on_demand_usd, Some(1100.0));
        // 4 × 1 × 100 + 6 × 25 × 2.
        assert_eq!(s.optimal.total_usd, 700.0);
        assert_eq!(s.optimal.savings_vs_on_demand_usd, Some(400.0));
        assert_eq!(s.optimal.savings_vs_spot_usd, Some(550.0 * 1.2 - 700.0));
        // The 90th percentile floor commits to the peak, and pays for idle hours.
        i.floor_percentile = 90.0;
        let s = size(&i).unwrap();
        assert_eq!(s.floor.gpus, 10);
        assert_eq!(s.floor.utilization, Some(550.0 / 1000.0));
    }

    #[test]
    fn bad_histories_and_prices_are_named() {
        assert_eq!(size(&input(&[], 1.0, 2.0)), Err(SizingError::Empty));
        assert!(matches!(
            size(&input(&[1.0, -2.0], 1.0, 2.0)),
            Err(SizingError::BadHour { hour: 1, .. })
        ));
        assert!(matches!(
            size(&input(&[1.0], 1.0, 0.0)),
            Err(SizingError::BadPrice {
                name: "burst_usd_per_gpu_hour",
                ..
            })
        ));
        let mut i = input(&[1.0], 1.0, 2.0);
        i.floor_percentile = 101.0;
        assert_eq!(size(&i), Err(SizingError::BadPercentile(101.0)));
    }

    #[test]
    fn csv_histories_take_the_last_column_and_skip_a_header() {
        let text = "hour,gpus\n2026-11-01T00:00Z,12\n2026-11-01T01:00Z, 8.5\n\n3\n";
        assert_eq!(parse_csv(text).unwrap(), vec![12.0, 8.5, 3.0]);
        let e = parse_csv("4\n5\nmany\n").unwrap_err();
        assert!(e.starts_with("line 3: \"many\""), "{e}");
    }

    proptest! {
        #[test]
        fn the_curve_and_the_optimum_match_brute_force(
            hourly in proptest::collection::vec(0u32..40, 1..80),
            halves in proptest::collection::vec(0u32..4, 0..80),
            commit in 0.0f64..5.0,
            burst in 0.01f64..5.0,
        ) {
            // Whole and half GPUs (a fractional average over the hour).
            let hourly: Vec<f64> = hourly
                .iter()
                .zip(halves.iter().chain(std::iter::repeat(&0)))
                .map(|(d, h)| f64::from(*d) + f64::from(*h % 2) * 0.5)
                .collect();
            let s = size(&input(&hourly, commit, burst)).unwrap();
            let peak = hourly.iter().copied().fold(0.0, f64::max).ceil() as u32;
            prop_assert_eq!(s.curve.len() as u32, peak + 1);
            let mut best = (0u32, f64::INFINITY);
            for n in 0..=peak + 2 {
                let b = brute(&hourly, n, commit, burst);
                if n <= peak {
                    prop_assert!((s.curve[n as usize].1 - b).abs() < 1e-6 * (1.0 + b));
                }
                if b < best.1 - 1e-9 {
                    best = (n, b);
                }
            }
            prop_assert!((s.optimal.total_usd - best.1).abs() < 1e-6 * (1.0 + best.1));
            prop_assert!(s.optimal.total_usd <= s.floor.total_usd + 1e-9);
        }
    }
}
