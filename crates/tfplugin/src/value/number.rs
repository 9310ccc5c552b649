//! Terraform numbers: arbitrary precision on the wire, kept here without
//! loss as an exact integer, an `f64`, or the decimal text as received.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use super::error::{ValueError, invalid};

/// A Terraform number.
///
/// Integers that fit `i64`/`u64` are kept exactly; values that arrived as a
/// binary float stay `f64`; anything else (huge integers, decimals that came
/// as text such as `"0.1"` or `"12345678901234567890123"`) keeps its decimal
/// text and is re-encoded as that text, so no precision is lost.
///
/// Equality compares numeric values via their shortest decimal form, so
/// `Number::from(1.5) == "1.5".parse().unwrap()`.
#[derive(Clone)]
pub struct Number(Repr);

#[derive(Clone, Debug)]
pub(crate) enum Repr {
    /// Any integer in `i64` range.
    Int(i64),
    /// An integer above `i64::MAX`.
    UInt(u64),
    /// A non-integral float, or an integral one outside `i64` range.
    Float(f64),
    /// Validated JSON-grammar decimal text that is not an `i64`/`u64` integer.
    Big(String),
}

impl Number {
    pub(crate) fn repr(&self) -> &Repr {
        &self.0
    }

    /// Parses decimal text (JSON number grammar, optional leading `+`).
    pub fn parse(text: &str) -> Result<Number, ValueError> {
        let text = text.strip_prefix('+').unwrap_or(text);
        let dec = Decimal::parse(text)
            .ok_or_else(|| invalid(&[], format!("{text:?} is not a valid number")))?;
        if let Some(i) = dec.to_i128() {
            if let Ok(v) = i64::try_from(i) {
                return Ok(Number(Repr::Int(v)));
            }
            if let Ok(v) = u64::try_from(i) {
                return Ok(Number(Repr::UInt(v)));
            }
        }
        Ok(Number(Repr::Big(text.to_string())))
    }

    /// The value as `i64` if it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            Repr::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The value as `u64` if it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            Repr::Int(i) => u64::try_from(i).ok(),
            Repr::UInt(u) => Some(u),
            _ => None,
        }
    }

    /// The exact value as `i128` if it is an integer in range.
    pub fn to_i128(&self) -> Option<i128> {
        match &self.0 {
            Repr::Int(i) => Some(i128::from(*i)),
            Repr::UInt(u) => Some(i128::from(*u)),
            Repr::Float(f) => {
                // Below 2^127 in magnitude the cast is exact for whole floats.
                (f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38).then_some(*f as i128)
            }
            Repr::Big(s) => Decimal::parse(s).and_then(|d| d.to_i128()),
        }
    }

    /// The value as `f64`, rounding if needed (huge values become infinite).
    pub fn as_f64(&self) -> f64 {
        match &self.0 {
            Repr::Int(i) => *i as f64,
            Repr::UInt(u) => *u as f64,
            Repr::Float(f) => *f,
            Repr::Big(s) => s.parse().unwrap_or(f64::NAN),
        }
    }

    /// True if the value is a whole number.
    pub fn is_integer(&self) -> bool {
        match &self.0 {
            Repr::Int(_) | Repr::UInt(_) => true,
            Repr::Float(f) => f.is_finite() && f.fract() == 0.0,
            Repr::Big(s) => Decimal::parse(s).is_some_and(|d| d.exp >= 0),
        }
    }

    /// True unless the value is NaN (which Terraform cannot represent).
    pub fn is_valid(&self) -> bool {
        !matches!(self.0, Repr::Float(f) if f.is_nan())
    }

    fn key(&self) -> Key {
        match &self.0 {
            Repr::Int(i) => Key::Finite(Decimal::parse(&i.to_string()).unwrap_or_default()),
            Repr::UInt(u) => Key::Finite(Decimal::parse(&u.to_string()).unwrap_or_default()),
            Repr::Float(f) if f.is_nan() => Key::NaN,
            Repr::Float(f) if f.is_infinite() => {
                if *f > 0.0 {
                    Key::PosInf
                } else {
                    Key::NegInf
                }
            }
            Repr::Float(f) => Key::Finite(Decimal::parse(&format!("{f:e}")).unwrap_or_default()),
            Repr::Big(s) => Key::Finite(Decimal::parse(s).unwrap_or_default()),
        }
    }
}

#[derive(PartialEq)]
enum Key {
    Finite(Decimal),
    PosInf,
    NegInf,
    NaN,
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (&self.0, &other.0) {
            (Repr::Int(a), Repr::Int(b)) => a == b,
            (Repr::UInt(a), Repr::UInt(b)) => a == b,
            (Repr::Int(_), Repr::UInt(_)) | (Repr::UInt(_), Repr::Int(_)) => false,
            _ => self.key() == other.key(),
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Int(i) => write!(f, "{i}"),
            Repr::UInt(u) => write!(f, "{u}"),
            Repr::Float(x) => f.write_str(&format_f64(*x)),
            Repr::Big(s) => f.write_str(s),
        }
    }
}

/// Formats a finite float as valid JSON number text (shortest round-trip
/// digits), using an exponent for very large or small magnitudes.
pub(crate) fn format_f64(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a != 0.0 && !(1e-7..1e21).contains(&a) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

impl FromStr for Number {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Number, ValueError> {
        Number::parse(s)
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Number {
        Number(Repr::Int(v))
    }
}

macro_rules! small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(v: $t) -> Number {
                Number(Repr::Int(v.into()))
            }
        }
    )*};
}
small_int!(i8, i16, u8, u16);

impl From<i32> for Number {
    fn from(v: i32) -> Number {
        Number(Repr::Int(v.into()))
    }
}

impl From<u32> for Number {
    fn from(v: u32) -> Number {
        Number(Repr::Int(v.into()))
    }
}

impl From<u64> for Number {
    fn from(v: u64) -> Number {
        match i64::try_from(v) {
            Ok(i) => Number(Repr::Int(i)),
            Err(_) => Number(Repr::UInt(v)),
        }
    }
}

impl From<usize> for Number {
    fn from(v: usize) -> Number {
        Number::from(v as u64)
    }
}

impl From<i128> for Number {
    fn from(v: i128) -> Number {
        if let Ok(i) = i64::try_from(v) {
            Number(Repr::Int(i))
        } else if let Ok(u) = u64::try_from(v) {
            Number(Repr::UInt(u))
        } else {
            Number(Repr::Big(v.to_string()))
        }
    }
}

impl From<u128> for Number {
    fn from(v: u128) -> Number {
        match u64::try_from(v) {
            Ok(u) => Number::from(u),
            Err(_) => Number(Repr::Big(v.to_string())),
        }
    }
}

impl From<f64> for Number {
    /// Whole floats within `i64` range become exact integers.
    fn from(v: f64) -> Number {
        // 2^63 as f64; the open upper bound keeps the cast exact.
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        if v.is_finite() && v.fract() == 0.0 && (-LIMIT..LIMIT).contains(&v) {
            Number(Repr::Int(v as i64))
        } else {
            Number(Repr::Float(v))
        }
    }
}

impl From<f32> for Number {
    fn from(v: f32) -> Number {
        Number::from(f64::from(v))
    }
}

/// A normalized finite decimal: `(-1)^neg × digits × 10^exp`, where `digits`
/// has no leading or trailing zeros (empty means zero).
#[derive(Debug, Default, PartialEq, Eq)]
struct Decimal {
    neg: bool,
    digits: String,
    exp: i64,
}

impl Decimal {
    /// Parses the JSON number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn parse(s: &str) -> Option<Decimal> {
        let b = s.as_bytes();
        let mut i = 0;
        let neg = b.first() == Some(&b'-');
        if neg {
            i += 1;
        }
        let int_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let int_part = &s[int_start..i];
        if int_part.is_empty() || (int_part.len() > 1 && int_part.starts_with('0')) {
            return None;
        }
        let mut frac_part = "";
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let fs = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            frac_part = &s[fs..i];
            if frac_part.is_empty() {
                return None;
            }
        }
        let mut exp: i64 = 0;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            let mut eneg = false;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                eneg = b[i] == b'-';
                i += 1;
            }
            let es = i;
            while i < b.len() && b[i].is_ascii_digit() {
                // Saturate: such magnitudes are only compared, never expanded.
                exp = exp
                    .saturating_mul(10)
                    .saturating_add(i64::from(b[i] - b'0'))
                    .min(1 << 40);
                i += 1;
            }
            if i == es {
                return None;
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != b.len() {
            return None;
        }
        let mut digits = String::with_capacity(int_part.len() + frac_part.len());
        digits.push_str(int_part);
        digits.push_str(frac_part);
        exp = exp.saturating_sub(frac_part.len() as i64);
        let trimmed = digits.trim_start_matches('0');
        let without_trailing = trimmed.trim_end_matches('0');
        exp = exp.saturating_add((trimmed.len() - without_trailing.len()) as i64);
        let digits = without_trailing.to_string();
        if digits.is_empty() {
            return Some(Decimal::default());
        }
        Some(Decimal { neg, digits, exp })
    }

    /// The exact integer value if it is an integer that fits `i128`.
    fn to_i128(&self) -> Option<i128> {
        if self.digits.is_empty() {
            return Some(0);
        }
        if self.exp < 0 || self.digits.len() as i64 + self.exp > 38 {
            return None;
        }
        let mut v: i128 = self.digits.parse().ok()?;
        for _ in 0..self.exp {
            v = v.checked_mul(10)?;
        }
        Some(if self.neg { -v } else { v })
    }
}

impl PartialOrd for Number {
    /// Orders by `f64` approximation; only for convenience, not exact.
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        if self == other {
            return Some(Ordering::Equal);
        }
        match (&self.0, &other.0) {
            (Repr::Int(a), Repr::Int(b)) => Some(a.cmp(b)),
            _ => self.as_f64().partial_cmp(&other.as_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_canonicalize() {
        assert_eq!(Number::parse("42").unwrap().as_i64(), Some(42));
        assert_eq!(Number::parse("4.2e1").unwrap().as_i64(), Some(42));
        assert_eq!(Number::parse("-0").unwrap().as_i64(), Some(0));
        assert_eq!(
            Number::parse("18446744073709551615").unwrap().as_u64(),
            Some(u64::MAX)
        );
        let big = Number::parse("12345678901234567890123").unwrap();
        assert!(matches!(big.repr(), Repr::Big(_)));
        assert_eq!(big.to_string(), "12345678901234567890123");
        assert!(big.is_integer());
        let tenth = Number::parse("0.1").unwrap();
        assert!(matches!(tenth.repr(), Repr::Big(_)));
        assert_eq!(tenth, Number::from(0.1));
        assert_eq!(Number::parse("+1.5").unwrap(), Number::from(1.5));
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "abc", "1e+", "0x10", "NaN", "--1",
        ] {
            assert!(Number::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn from_float() {
        assert_eq!(Number::from(3.0).as_i64(), Some(3));
        assert_eq!(Number::from(-0.0).as_i64(), Some(0));
        assert!(Number::from(1e300).as_i64().is_none());
        assert_eq!(
            Number::from(1e20),
            Number::parse("100000000000000000000").unwrap()
        );
        assert_ne!(Number::from(1.5), Number::from(2.5));
        assert_eq!(Number::from(1.5).as_f64(), 1.5);
        assert_eq!(format_f64(1e-9), "1e-9");
        assert_eq!(format_f64(0.25), "0.25");
    }
}
