//! The durations of the watcher's flags (`--interval 30s`, `--lease-duration 15s`),
//! written as Go and Terraform write them: the same syntax and error texts as the
//! provider's `timeouts` block (tfplugin's `timeouts::parse_duration`), kept here because
//! the operator depends on core only, not on the plugin protocol.

use std::time::Duration;

/// Why a duration does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// A unit other than `h`, `m` or `s`.
    #[error("unknown unit {0:?} (use h, m or s)")]
    UnknownUnit(char),
    /// A unit with no number before it.
    #[error("a number must come before {0:?}")]
    MissingNumber(char),
    /// Digits at the end with no unit.
    #[error("{0:?} has no unit")]
    MissingUnit(String),
    /// More seconds than fit in a `u64`.
    #[error("too long")]
    TooLong,
    /// Empty, or zero in total.
    #[error("it must be longer than zero")]
    NotPositive,
}

/// Parses `<whole number><unit>` parts, units `h`, `m`, `s`: `45m`, `1h30m`, `90s`. At
/// least one part, total above zero.
pub fn parse(s: &str) -> Result<Duration, DurationError> {
    let mut total = 0u64;
    let mut digits = String::new();
    let mut parts = 0;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            other => return Err(DurationError::UnknownUnit(other)),
        };
        let n: u64 = digits.parse().map_err(|_| match digits.is_empty() {
            true => DurationError::MissingNumber(c),
            false => DurationError::TooLong,
        })?;
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or(DurationError::TooLong)?;
        digits.clear();
        parts += 1;
    }
    if !digits.is_empty() {
        return Err(DurationError::MissingUnit(digits));
    }
    if parts == 0 || total == 0 {
        return Err(DurationError::NotPositive);
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_rejects_garbage() {
        assert_eq!(parse("45m"), Ok(Duration::from_secs(2700)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse(" 2h "), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("5d"), Err(DurationError::UnknownUnit('d')));
        assert_eq!(parse("m"), Err(DurationError::MissingNumber('m')));
        assert_eq!(parse("10"), Err(DurationError::MissingUnit("10".into())));
        assert_eq!(parse("0s"), Err(DurationError::NotPositive));
        assert_eq!(parse(""), Err(DurationError::NotPositive));
        assert_eq!(parse("99999999999999999999h"), Err(DurationError::TooLong));
        for bad in ["1.5h", "-1m"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn error_texts_are_the_timeouts_block_ones() {
        assert_eq!(
            parse("5d").unwrap_err().to_string(),
            "unknown unit 'd' (use h, m or s)"
        );
        assert_eq!(parse("10").unwrap_err().to_string(), "\"10\" has no unit");
    }
}
