//! Reading typed values ([`Tf`]: null, unknown until apply, or known) the way the
//! resources read raw values before: shared by the resources' typed models.

use tfplugin::{Tf, Value};

/// The known text of `t`, else empty.
pub fn text(t: &Tf<String>) -> String {
    t.known().cloned().unwrap_or_default()
}

/// The known text of `t`.
pub fn opt(t: &Tf<String>) -> Option<String> {
    t.known().cloned()
}

/// The known bool of `t`, else false.
pub fn flag(t: &Tf<bool>) -> bool {
    t.known().copied().unwrap_or(false)
}

/// The known whole number of `t` within `i64` range, as `Value::as_i64` reads it (a
/// fraction or an integer out of range reads as none).
pub fn whole(t: &Tf<f64>) -> Option<i64> {
    // 2^63 as f64; the open upper bound keeps the cast exact.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    t.known()
        .filter(|n| n.fract() == 0.0 && (-LIMIT..LIMIT).contains(*n))
        .map(|n| *n as i64)
}

/// `t` as a Terraform value (null, unknown or the string).
pub fn value_of(t: &Tf<String>) -> Value {
    match t {
        Tf::Null => Value::Null,
        Tf::Unknown => Value::unknown(),
        Tf::Known(s) => Value::string(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_read_as_value_as_i64_does() {
        for n in [0.0, 2.0, -7.0, 4e15] {
            let v = Value::number(n);
            assert_eq!(whole(&Tf::Known(n)), v.as_i64(), "{n}");
        }
        for n in [2.5, 1e19, -1e19, f64::INFINITY, f64::NAN] {
            assert_eq!(whole(&Tf::Known(n)), None, "{n}");
        }
        assert_eq!(whole(&Tf::Unknown), None);
        assert_eq!(whole(&Tf::Null), None);
    }

    #[test]
    fn text_reads_null_and_unknown_as_nothing() {
        assert_eq!(text(&Tf::Unknown), "");
        assert_eq!(opt(&Tf::Null), None);
        assert_eq!(opt(&Tf::Known("a".into())).as_deref(), Some("a"));
        assert_eq!(value_of(&Tf::Unknown), Value::unknown());
        assert_eq!(value_of(&Tf::Null), Value::Null);
        assert!(!flag(&Tf::Unknown) && flag(&Tf::Known(true)));
    }
}
