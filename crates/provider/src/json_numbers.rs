//! Whole numbers in JSON as integers (`8`, not `8.0`): serde writes every `f64` with a
//! fraction, which reads as a measurement where the field is a count.

use serde::Serializer;

/// The largest magnitude below which every whole `f64` is an exact integer (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// Writes `x` as an integer when it is whole, else as a number with a fraction.
pub fn whole<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < EXACT {
        s.serialize_i64(*x as i64)
    } else {
        s.serialize_f64(*x)
    }
}

/// [`whole`] for an optional number (`null` when absent).
pub fn whole_opt<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => whole(x, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct Counts {
        #[serde(serialize_with = "super::whole")]
        gpus: f64,
        #[serde(serialize_with = "super::whole_opt")]
        vcpus: Option<f64>,
        #[serde(serialize_with = "super::whole_opt")]
        none: Option<f64>,
    }

    #[test]
    fn whole_numbers_print_as_integers_and_fractions_stay() {
        let c = Counts {
            gpus: 8.0,
            vcpus: Some(0.5),
            none: None,
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"gpus":8,"vcpus":0.5,"none":null}"#
        );
    }
}
