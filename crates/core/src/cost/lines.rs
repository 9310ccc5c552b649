//! The one pricing function: a list of (priced offer, count, capacity) lines to hourly
//! and monthly totals at the floor and at the ceiling. Pools price their on-demand and
//! spot groups through it; GPU instances and commitments will add their own lines.

use crate::model::CapacityType;
use crate::pool::PriceRow;

/// Hours in the month every monthly figure uses (365 × 24 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// The catalog row one kind of capacity is priced at.
#[derive(Debug, Clone, PartialEq)]
pub struct PricedAs {
    /// The instance type.
    pub instance_type: String,
    /// Whether the row's spot price was used (`false`: its on-demand price).
    pub spot_price: bool,
    /// The row: price, zone, source, as-of.
    pub row: PriceRow,
}

/// One line of a bill: `count_min`..=`count_max` machines of one priced offer.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceLine {
    /// The offer's row the machines are priced at.
    pub priced: PricedAs,
    /// Machines at the floor.
    pub count_min: u32,
    /// Machines at the ceiling.
    pub count_max: u32,
    /// What the machines run on (reserved capacity is priced at its commitment's row).
    pub capacity: CapacityType,
}

/// The totals of a set of lines, in USD.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    /// Per hour at the floor.
    pub hourly_min: f64,
    /// Per hour at the ceiling.
    pub hourly_max: f64,
}

impl Totals {
    /// Per month (730 h) at the floor.
    pub fn monthly_min(&self) -> f64 {
        self.hourly_min * HOURS_PER_MONTH
    }

    /// Per month (730 h) at the ceiling.
    pub fn monthly_max(&self) -> f64 {
        self.hourly_max * HOURS_PER_MONTH
    }
}

/// Sums `lines`: each line's hourly price times its counts.
pub fn total(lines: &[PriceLine]) -> Totals {
    lines.iter().fold(Totals::default(), |t, l| {
        let usd = l.priced.row.usd_per_hour;
        Totals {
            hourly_min: t.hourly_min + usd * f64::from(l.count_min),
            hourly_max: t.hourly_max + usd * f64::from(l.count_max),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::PriceRow;

    fn line(usd: f64, min: u32, max: u32, capacity: CapacityType) -> PriceLine {
        PriceLine {
            priced: PricedAs {
                instance_type: "t".into(),
                spot_price: capacity == CapacityType::Spot,
                row: PriceRow {
                    usd_per_hour: usd,
                    zone: None,
                    origin: Default::default(),
                },
            },
            count_min: min,
            count_max: max,
            capacity,
        }
    }

    #[test]
    fn lines_add_up_at_the_floor_and_the_ceiling() {
        let t = total(&[
            line(10.0, 1, 1, CapacityType::OnDemand),
            line(3.0, 0, 4, CapacityType::Spot),
            line(7.0, 2, 2, CapacityType::Reserved),
        ]);
        assert_eq!((t.hourly_min, t.hourly_max), (24.0, 36.0));
        assert_eq!(t.monthly_max(), 36.0 * 730.0);
        assert_eq!(total(&[]), Totals::default());
    }
}
