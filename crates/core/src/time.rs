//! Small UTC calendar helpers (no time crate): unix seconds ⇄ civil dates, HTTP dates.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, now (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a count of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` (UTC) of a unix timestamp.
pub fn date_of(unix: u64) -> String {
    let (y, m, d) = civil_from_days((unix / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date, if it is one (month 1–12, day 1–31).
pub fn days_of_date(date: &str) -> Option<i64> {
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year: i64 = date[..4].parse().ok()?;
    let month: u32 = date[5..7].parse().ok()?;
    let day: u32 = date[8..].parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// Days since 1970-01-01 of today (UTC).
pub fn today_days() -> i64 {
    (unix_now() / 86_400) as i64
}

/// Parses an IMF-fixdate HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) to unix seconds.
pub fn parse_http_date(s: &str) -> Option<u64> {
    let mut it = s.split_whitespace();
    let _weekday = it.next()?;
    let day: u32 = it.next()?.parse().ok()?;
    let month = match it.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, mi, se) = (hms.next()??, hms.next()??, hms.next()??);
    if it.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    Some(days * 86_400 + h * 3600 + mi * 60 + se)
}

/// Unix seconds of an RFC 3339 timestamp (`2026-12-10T08:00:00Z`, fractions and `+hh:mm`
/// offsets allowed) or of a bare date (`2026-12-10`, midnight UTC); `None` otherwise.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let s = s.trim();
    let midnight = days_of_date(s.get(..10)?)? * 86_400;
    if s.len() == 10 {
        return Some(midnight);
    }
    let rest = s.get(10..)?;
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix('t'))?;
    let clock = rest.get(..8)?;
    let b = clock.as_bytes();
    if b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, mi, se): (i64, i64, i64) = (
        clock[..2].parse().ok()?,
        clock[3..5].parse().ok()?,
        clock[6..].parse().ok()?,
    );
    if h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut zone = &rest[8..];
    if let Some(frac) = zone.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        zone = &frac[digits..];
    }
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = match zone.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om) = zone[1..].split_once(':')?;
            if oh.len() != 2 || om.len() != 2 {
                return None;
            }
            sign * (oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60)
        }
    };
    Some(midnight + h * 3600 + mi * 60 + se - offset)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC) of unix seconds.
pub fn format_rfc3339(unix: i64) -> String {
    let (y, m, d) = civil_from_days(unix.div_euclid(86_400));
    let secs = unix.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(951_782_400), "2000-02-29");
        assert_eq!(date_of(1_796_083_200), "2026-12-01");
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(parse_http_date("120"), None);
        assert_eq!(days_of_date("1970-01-01"), Some(0));
        assert_eq!(days_of_date("2026-12-01"), Some(1_796_083_200 / 86_400));
        assert_eq!(days_of_date("2026-13-01"), None);
        assert_eq!(days_of_date("July 2026"), None);
    }

    #[test]
    fn rfc3339() {
        assert_eq!(parse_rfc3339("1970-01-01"), Some(0));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00Z"), Some(3600));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00.250Z"), Some(3600));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00-00:30"), Some(1800));
        assert_eq!(parse_rfc3339("1970-01-01 01:00:00Z"), None);
        assert_eq!(parse_rfc3339("1970-01-01T25:00:00Z"), None);
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00"), None);
        assert_eq!(format_rfc3339(1_796_083_200 + 3661), "2026-12-01T01:01:01Z");
        let t = 1_796_083_200 + 86_399;
        assert_eq!(parse_rfc3339(&format_rfc3339(t)), Some(t));
    }
}
