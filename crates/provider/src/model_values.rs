//! Reading typed values ([`Tf`]: null, unknown until apply, or known) the way raw values
//! were read before: shared by the resources', data sources' and provider block's typed
//! models.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use tfplugin::{Tf, Value};

/// A value of `schema`'s object type with every attribute null but those of `pairs`: a
/// configuration built by hand (a command's flags, a test), as Terraform would send it.
pub fn object_of<'a>(
    schema: &tfplugin::schema::Schema,
    pairs: impl IntoIterator<Item = (&'a str, Value)>,
) -> Value {
    let mut m: BTreeMap<String, Value> = match schema.value_type() {
        tfplugin::Type::Object(o) => o
            .attributes
            .keys()
            .map(|k| (k.clone(), Value::Null))
            .collect(),
        _ => BTreeMap::new(),
    };
    for (k, v) in pairs {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

/// `v` (a `what` object: configuration, plan or state) decoded into its typed model; null
/// (no prior state, a destroy) reads as all null, and a value off the schema (never sent
/// by Terraform) too, with a warning in the log.
pub fn decoded<T: DeserializeOwned + Default>(v: &Value, what: &str) -> T {
    tfplugin::tf::decode_opt(v)
        .map(Option::unwrap_or_default)
        .unwrap_or_else(|d| {
            tracing::warn!("{what} value off its schema: {d:?}");
            T::default()
        })
}

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

/// The known strings of a known list (unknown elements left out).
pub fn strings(t: &Tf<Vec<Tf<String>>>) -> Option<Vec<String>> {
    t.known()
        .map(|l| l.iter().filter_map(|e| e.known().cloned()).collect())
}

/// The known entries of a known map (unknown values left out).
pub fn string_map(t: &Tf<BTreeMap<String, Tf<String>>>) -> BTreeMap<String, String> {
    t.known()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.known().map(|s| (k.clone(), s.clone())))
                .collect()
        })
        .unwrap_or_default()
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

    #[test]
    fn lists_and_maps_leave_unknown_elements_out() {
        let list = Tf::Known(vec![Tf::Known("a".to_string()), Tf::Unknown]);
        assert_eq!(strings(&list), Some(vec!["a".to_string()]));
        assert_eq!(strings(&Tf::Unknown), None);
        let map = Tf::Known(BTreeMap::from([
            ("k".to_string(), Tf::Known("v".to_string())),
            ("u".to_string(), Tf::Unknown),
        ]));
        assert_eq!(string_map(&map).len(), 1);
        assert!(string_map(&Tf::Null).is_empty());
    }
}
