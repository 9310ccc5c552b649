//! Attribute validators: small checks of one attribute's value that answer with an error
//! diagnostic on the attribute's path. Null and unknown values are skipped (a required
//! attribute is Terraform's to enforce, and an unknown is checked again at apply).
//!
//! ```
//! use tfplugin::validators::{Rules, int_between, one_of};
//! use tfplugin::Value;
//! let rules = Rules::new()
//!     .attr("size", one_of(&["small", "large"]))
//!     .attr("count", int_between(1, 10));
//! let config = Value::object([("size", Value::string("huge")), ("count", Value::unknown())]);
//! let diags = rules.check(&config);
//! assert_eq!(diags.0[0].detail, "`size` must be one of `small`, `large`; got \"huge\".");
//! ```

use crate::diag::{AttributePath, Diagnostic, Diagnostics};
use crate::value::Value;

/// The check inside a [`Validator`]: `Err` carries the problem, phrased to follow the
/// attribute's name (`must be ...; got ...`).
type Check = dyn Fn(&Value) -> Result<(), String> + Send + Sync;

/// A check of one known, non-null value.
pub struct Validator {
    check: Box<Check>,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// A validator from a function returning the problem (`"must be ...; got ..."`).
    pub fn new(check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Validator {
            check: Box::new(check),
        }
    }

    /// Checks the value at `path`: an error diagnostic on that path, or `None` when the
    /// value is fine, null or unknown.
    pub fn check(&self, path: &AttributePath, value: &Value) -> Option<Diagnostic> {
        let value = value.unwrap_dynamic();
        if value.is_null() || !value.is_known() {
            return None;
        }
        let problem = (self.check)(value).err()?;
        Some(
            Diagnostic::error(format!("Invalid {path}"), format!("`{path}` {problem}."))
                .at(path.clone()),
        )
    }
}

/// A string that must be one of `allowed` (exactly, letter case included).
pub fn one_of(allowed: &[&str]) -> Validator {
    let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    Validator::new(move |v| match v.as_str() {
        Some(s) if allowed.iter().any(|a| a == s) => Ok(()),
        Some(s) => Err(format!(
            "must be one of {}; got {s:?}",
            allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Err(format!("must be a string; got a {}", v.kind_name())),
    })
}

/// A whole number in `min..=max`.
pub fn int_between(min: i64, max: i64) -> Validator {
    Validator::new(move |v| {
        let Some(n) = v.as_number() else {
            return Err(format!("must be a number; got a {}", v.kind_name()));
        };
        match n.to_i128() {
            Some(i) if n.is_integer() && (i128::from(min)..=i128::from(max)).contains(&i) => Ok(()),
            _ => Err(format!(
                "must be a whole number from {min} to {max}; got {n}"
            )),
        }
    })
}

/// A number (whole or not) in `min..=max`.
pub fn number_between(min: f64, max: f64) -> Validator {
    Validator::new(move |v| {
        let Some(n) = v.as_number() else {
            return Err(format!("must be a number; got a {}", v.kind_name()));
        };
        if (min..=max).contains(&n.as_f64()) {
            Ok(())
        } else {
            Err(format!("must be from {min} to {max}; got {n}"))
        }
    })
}

/// A string of `min..=max` characters, or a list, set or map of `min..=max` elements.
pub fn length_between(min: usize, max: usize) -> Validator {
    Validator::new(move |v| {
        let (len, unit) = match v {
            Value::String(s) => (s.chars().count(), "characters"),
            Value::Map(m) => (m.len(), "entries"),
            _ => match v.as_elements() {
                Some(vs) => (vs.len(), "elements"),
                None => return Ok(()),
            },
        };
        if (min..=max).contains(&len) {
            Ok(())
        } else if max == usize::MAX {
            Err(format!("must have at least {min} {unit}; got {len}"))
        } else {
            Err(format!("must have {min} to {max} {unit}; got {len}"))
        }
    })
}

/// A non-empty string, list, set or map.
pub fn not_empty() -> Validator {
    Validator::new(|v| {
        let empty = match v {
            Value::String(s) => s.is_empty(),
            Value::Map(m) => m.is_empty(),
            _ => v.as_elements().is_some_and(<[Value]>::is_empty),
        };
        if empty {
            Err("must not be empty".to_string())
        } else {
            Ok(())
        }
    })
}

/// A string for which `ok` holds; `expected` completes "must be ..." (e.g.
/// `"lower case"`).
pub fn string_matches(ok: fn(&str) -> bool, expected: &'static str) -> Validator {
    Validator::new(move |v| match v.as_str() {
        Some(s) if ok(s) => Ok(()),
        Some(s) => Err(format!("must be {expected}; got {s:?}")),
        None => Err(format!("must be a string; got a {}", v.kind_name())),
    })
}

/// Any value for which `ok` holds; `expected` completes "must be ...".
pub fn predicate(ok: fn(&Value) -> bool, expected: &'static str) -> Validator {
    Validator::new(move |v| {
        if ok(v) {
            Ok(())
        } else {
            Err(format!("must be {expected}"))
        }
    })
}

/// Validators by attribute path, checked together against one configuration.
#[derive(Debug, Default)]
pub struct Rules {
    rules: Vec<(AttributePath, Validator)>,
}

impl Rules {
    /// No rules.
    pub fn new() -> Self {
        Rules::default()
    }

    /// Adds a validator of the top-level attribute `name`.
    pub fn attr(self, name: &str, validator: Validator) -> Self {
        self.at(AttributePath::attr(name), validator)
    }

    /// Adds a validator of the value at `path` (e.g. an attribute of a single block).
    pub fn at(mut self, path: AttributePath, validator: Validator) -> Self {
        self.rules.push((path, validator));
        self
    }

    /// Every problem in `config`, in rule order; absent values are skipped.
    pub fn check(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        for (path, validator) in &self.rules {
            if let Some(v) = path.lookup(config)
                && let Some(diag) = validator.check(path, v)
            {
                d.push(diag);
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(v: &Validator, value: Value) -> Option<String> {
        v.check(&AttributePath::attr("a"), &value).map(|d| d.detail)
    }

    #[test]
    fn one_of_names_the_choices() {
        let v = one_of(&["x", "y"]);
        assert_eq!(err(&v, Value::string("x")), None);
        assert_eq!(
            err(&v, Value::string("X")).unwrap(),
            "`a` must be one of `x`, `y`; got \"X\"."
        );
    }

    #[test]
    fn null_and_unknown_are_skipped() {
        for v in [one_of(&["x"]), int_between(1, 2), not_empty()] {
            assert_eq!(err(&v, Value::Null), None);
            assert_eq!(err(&v, Value::unknown()), None);
        }
    }

    #[test]
    fn ranges_are_inclusive_and_whole() {
        let v = int_between(1, 10);
        assert_eq!(err(&v, Value::from(1)), None);
        assert_eq!(err(&v, Value::from(10)), None);
        assert!(
            err(&v, Value::from(11))
                .unwrap()
                .contains("from 1 to 10; got 11")
        );
        assert!(err(&v, Value::from(0)).is_some());
        assert!(err(&v, Value::from(1.5)).is_some());
        let v = number_between(0.5, 1.0);
        assert_eq!(err(&v, Value::from(0.75)), None);
        assert!(err(&v, Value::from(1.25)).is_some());
    }

    #[test]
    fn lengths_count_characters_and_elements() {
        let v = length_between(2, 3);
        assert_eq!(err(&v, Value::string("ää")), None);
        assert!(
            err(&v, Value::string("a"))
                .unwrap()
                .contains("2 to 3 characters; got 1")
        );
        assert!(err(&v, Value::List(vec![Value::Null; 4])).is_some());
        assert!(err(&not_empty(), Value::Map(Default::default())).is_some());
        assert_eq!(err(&not_empty(), Value::string("x")), None);
        assert!(
            err(&length_between(1, usize::MAX), Value::string(""))
                .unwrap()
                .contains("at least 1")
        );
    }

    #[test]
    fn predicates_use_the_expectation() {
        let lower = string_matches(|s| s == s.to_lowercase(), "lower case");
        assert_eq!(err(&lower, Value::string("ab")), None);
        assert_eq!(
            err(&lower, Value::string("Ab")).unwrap(),
            "`a` must be lower case; got \"Ab\"."
        );
        let even = predicate(|v| v.as_i64().is_some_and(|i| i % 2 == 0), "even");
        assert!(
            err(&even, Value::from(3))
                .unwrap()
                .ends_with("must be even.")
        );
    }

    #[test]
    fn rules_point_at_nested_paths() {
        let config = Value::object([
            ("name", Value::string("")),
            (
                "limits",
                Value::object([("cpu", Value::from(64)), ("mem", Value::unknown())]),
            ),
        ]);
        let d = Rules::new()
            .attr("name", not_empty())
            .at(
                AttributePath::attr("limits").then_attr("cpu"),
                int_between(1, 32),
            )
            .at(
                AttributePath::attr("limits").then_attr("mem"),
                int_between(1, 32),
            )
            .attr("absent", not_empty())
            .check(&config);
        let paths: Vec<String> =
            d.0.iter()
                .map(|d| d.attribute.clone().unwrap().to_string())
                .collect();
        assert_eq!(paths, ["name", "limits.cpu"]);
        assert_eq!(d.0[1].summary, "Invalid limits.cpu");
    }
}
