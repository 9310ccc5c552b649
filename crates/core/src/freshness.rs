//! How old a price may be to count: `max_price_age` (`365d`, `52w`) and the check every
//! ranking applies with it. Undated prices never pass a limit; prices on the stale list
//! (`PriceOrigin::stale`) count only when asked for.

use std::fmt;
use std::str::FromStr;

use crate::offer::PriceOrigin;

/// The oldest a price may be, in whole days (`365d`, `52w`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxPriceAge {
    /// Days.
    pub days: u32,
}

/// A `max_price_age` that is not `<N>d` or `<N>w`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a price age; valid: a whole number of days or weeks, such as `365d` or `52w`"
)]
pub struct BadPriceAge(pub String);

impl FromStr for MaxPriceAge {
    type Err = BadPriceAge;

    /// Parses `<N>d` (days) or `<N>w` (weeks), case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadPriceAge(s.to_string());
        let t = s.trim().to_ascii_lowercase();
        let (number, per) = match t.strip_suffix('d') {
            Some(n) => (n, 1),
            None => (t.strip_suffix('w').ok_or_else(bad)?, 7),
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u32 = number.parse().map_err(|_| bad())?;
        let days = n.checked_mul(per).ok_or_else(bad)?;
        Ok(MaxPriceAge { days })
    }
}

impl fmt::Display for MaxPriceAge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}d", self.days)
    }
}

/// Which prices count, as of a given day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// The limit; `None` lets every price count, dated or not.
    pub max_age: Option<MaxPriceAge>,
    /// Today, in days since 1970-01-01.
    pub today: i64,
    /// Whether prices on the stale list count too (`include_stale_prices`).
    pub include_stale: bool,
}

impl Freshness {
    /// Every price of any age counts, except those on the stale list; `today` is the clock's.
    pub fn any() -> Self {
        Freshness {
            max_age: None,
            today: crate::time::today_days(),
            include_stale: false,
        }
    }

    /// The same, with prices on the stale list counting too when `include` is true.
    pub fn including_stale(self, include: bool) -> Self {
        Freshness {
            include_stale: include,
            ..self
        }
    }

    /// Prices at most `max_age` old count (all of them when `None`), as of today.
    pub fn at_most(max_age: Option<MaxPriceAge>) -> Self {
        Freshness {
            max_age,
            ..Freshness::any()
        }
    }

    /// These rules with a data source's own `max_price_age` and `include_stale_prices`,
    /// where set, in place of the provider's.
    pub fn overridden(self, max_age: Option<MaxPriceAge>, include_stale: Option<bool>) -> Self {
        Freshness {
            max_age: max_age.or(self.max_age),
            include_stale: include_stale.unwrap_or(self.include_stale),
            today: self.today,
        }
    }

    /// Whether a price with `origin` counts: never a stale one unless asked for; else
    /// always without a limit, and with one only a dated price no older than the limit.
    pub fn allows(&self, origin: &PriceOrigin) -> bool {
        if origin.stale.is_some() && !self.include_stale {
            return false;
        }
        match self.max_age {
            None => true,
            Some(max) => origin
                .age_days(self.today)
                .is_some_and(|age| age <= i64::from(max.days)),
        }
    }
}

impl Default for Freshness {
    fn default() -> Self {
        Freshness::any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_days_and_weeks() {
        assert_eq!("90d".parse(), Ok(MaxPriceAge { days: 90 }));
        assert_eq!(" 12W ".parse(), Ok(MaxPriceAge { days: 84 }));
        assert_eq!("0d".parse(), Ok(MaxPriceAge { days: 0 }));
        for bad in [
            "90",
            "d",
            "90 days",
            "-1d",
            "1.5w",
            "3m",
            "",
            "99999999999d",
        ] {
            let e = bad.parse::<MaxPriceAge>().unwrap_err();
            assert!(e.to_string().contains("`365d` or `52w`"), "{bad}: {e}");
        }
    }

    #[test]
    fn undated_and_old_prices_fail_a_limit() {
        let today = crate::time::days_of_date("2026-12-03").unwrap();
        let f = |max: Option<u32>| Freshness {
            max_age: max.map(|days| MaxPriceAge { days }),
            today,
            include_stale: false,
        };
        let dated = PriceOrigin::new("s", Some("2026-09-04".into())); // 90 days old
        let undated = PriceOrigin::new("s", None);
        assert!(f(None).allows(&dated) && f(None).allows(&undated));
        assert!(f(Some(90)).allows(&dated));
        assert!(!f(Some(89)).allows(&dated));
        assert!(!f(Some(100_000)).allows(&undated));
    }

    #[test]
    fn a_stale_price_counts_only_when_asked_for() {
        let mut stale = PriceOrigin::new("s", None);
        stale.stale = Some("predates a price cut".into());
        assert!(!Freshness::any().allows(&stale));
        assert!(Freshness::any().including_stale(true).allows(&stale));
        // Asking for stale prices does not lift the age limit.
        let limited = Freshness::at_most(Some(MaxPriceAge { days: 10_000 }));
        assert!(!limited.including_stale(true).allows(&stale));
    }
}
