//! Durations as Terraform `timeouts` blocks write them: `45m`, `1h30m`, `90s`, `2h`.

use std::time::Duration;

/// Parses a sequence of `<whole number><unit>` with units `h`, `m`, `s`; at least one
/// part, total above zero.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
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
            other => return Err(format!("unknown unit {other:?} (use h, m or s)")),
        };
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("a number must come before {c:?}"))?;
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or("too long")?;
        digits.clear();
        parts += 1;
    }
    if !digits.is_empty() {
        return Err(format!("{digits:?} has no unit"));
    }
    if parts == 0 || total == 0 {
        return Err("it must be longer than zero".into());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_rejects_garbage() {
        assert_eq!(parse_duration("45m"), Ok(Duration::from_secs(2700)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        for bad in ["", "10", "m", "5d", "0s", "1.5h", "-1m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
