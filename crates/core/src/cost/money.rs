//! Rendering USD amounts for people.

/// `$40,178.20`, with a leading `-` for negative amounts.
pub fn format_usd(usd: f64) -> String {
    let cents = (usd.abs() * 100.0).round() as u64;
    let (whole, frac) = (cents / 100, cents % 100);
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if usd < 0.0 && cents > 0 { "-" } else { "" };
    format!("{sign}${grouped}.{frac:02}")
}

/// `+$1.00` / `-$1.00` / `+$0.00`: a change with its sign.
pub fn format_delta(usd: f64) -> String {
    let s = format_usd(usd);
    if s.starts_with('-') {
        s
    } else {
        format!("+{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_usd(0.0), "$0.00");
        assert_eq!(format_usd(1234567.891), "$1,234,567.89");
        assert_eq!(format_usd(-999.999), "-$1,000.00");
        assert_eq!(format_usd(100.0), "$100.00");
        assert_eq!(format_delta(-0.001), "+$0.00");
        assert_eq!(format_delta(2.5), "+$2.50");
    }
}
