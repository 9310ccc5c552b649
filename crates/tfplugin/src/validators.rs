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

/// The check inside a [`Validator`]: the diagnostics for one known, non-null value at a path.
type Check = dyn Fn(&AttributePath, &Value) -> Vec<Diagnostic> + Send + Sync;

/// A check of one known, non-null value, with a sentence saying it for the docs.
pub struct Validator {
    check: Box<Check>,
    description: String,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Validator({:?})", self.description)
    }
}

/// Two validators are the same when they say the same (closures cannot be compared).
impl PartialEq for Validator {
    fn eq(&self, other: &Self) -> bool {
        self.description == other.description
    }
}

impl Validator {
    /// A validator from a function returning the problem (`"must be ...; got ..."`),
    /// which the diagnostic puts after the attribute's path.
    pub fn new(check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Validator::with_detail(move |path, v| check(v).map_err(|p| format!("`{path}` {p}.")))
    }

    /// A validator from a function given the attribute's path as written and returning
    /// the diagnostic's whole detail; the summary is `Invalid <path>`.
    pub fn with_detail(
        check: impl Fn(&str, &Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        Validator::diagnosing(move |path, v| {
            let written = path.to_string();
            match check(&written, v) {
                Ok(()) => Vec::new(),
                Err(detail) => {
                    vec![Diagnostic::error(format!("Invalid {written}"), detail).at(path.clone())]
                }
            }
        })
    }

    /// A validator from a function returning every diagnostic for the value at a path
    /// (for checks with their own summaries, or several problems at once).
    pub fn diagnosing(
        check: impl Fn(&AttributePath, &Value) -> Vec<Diagnostic> + Send + Sync + 'static,
    ) -> Self {
        Validator {
            check: Box::new(check),
            description: String::new(),
        }
    }

    /// This check applied to each element of a list, set or tuple (path `[i]`) or each
    /// value of a map (path `["key"]`) instead of to the whole collection.
    /// Its description says so: "Must be ..." becomes "Each must be ...".
    pub fn each(self) -> Self {
        let description = match self.description.strip_prefix("Must ") {
            Some(rest) => format!("Each must {rest}"),
            None => self.description.clone(),
        };
        let inner = self;
        Validator::diagnosing(move |path, v| {
            let mut out = Vec::new();
            if let Value::Map(entries) = v {
                for (k, e) in entries {
                    out.extend(inner.check(&path.clone().then_key(k.clone()), e));
                }
            } else if let Some(elements) = v.as_elements() {
                for (i, e) in elements.iter().enumerate() {
                    out.extend(inner.check(&path.clone().then_index(i as i64), e));
                }
            }
            out
        })
        .describe(description)
    }

    /// Sets the sentence the docs print for this check (Markdown, e.g. "Must be `a` or `b`.").
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The sentence the docs print for this check; empty when it has none.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Checks the value at `path`: error diagnostics on that path (or inside it), none
    /// when the value is fine, null or unknown.
    pub fn check(&self, path: &AttributePath, value: &Value) -> Vec<Diagnostic> {
        let value = value.unwrap_dynamic();
        if value.is_null() || !value.is_known() {
            return Vec::new();
        }
        (self.check)(path, value)
    }
}

/// A string that must be one of `allowed` (exactly, letter case included).
pub fn one_of(allowed: &[&str]) -> Validator {
    let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    let said = format!("Must be one of {}.", backticked(&allowed));
    Validator::new(move |v| match v.as_str() {
        Some(s) if allowed.iter().any(|a| a == s) => Ok(()),
        Some(s) => Err(format!(
            "must be one of {}; got {s:?}",
            backticked(&allowed)
        )),
        None => Err(format!("must be a string; got a {}", v.kind_name())),
    })
    .describe(said)
}

/// `a`, `b` and `c` as "`a`, `b`, `c`".
fn backticked(words: &[String]) -> String {
    words
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
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
    .describe(format!("Must be a whole number from {min} to {max}."))
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
    .describe(format!("Must be from {min} to {max}."))
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
    .describe(if max == usize::MAX {
        format!("Must have at least {min} elements (characters for a string).")
    } else {
        format!("Must have {min} to {max} elements (characters for a string).")
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
    .describe("Must not be empty.")
}

/// A string for which `ok` holds; `expected` completes "must be ..." (e.g.
/// `"lower case"`).
pub fn string_matches(ok: fn(&str) -> bool, expected: &'static str) -> Validator {
    Validator::new(move |v| match v.as_str() {
        Some(s) if ok(s) => Ok(()),
        Some(s) => Err(format!("must be {expected}; got {s:?}")),
        None => Err(format!("must be a string; got a {}", v.kind_name())),
    })
    .describe(format!("Must be {expected}."))
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
    .describe(format!("Must be {expected}."))
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
            if let Some(v) = path.lookup(config) {
                for diag in validator.check(path, v) {
                    d.push(diag);
                }
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(v: &Validator, value: Value) -> Option<String> {
        v.check(&AttributePath::attr("a"), &value)
            .into_iter()
            .next()
            .map(|d| d.detail)
    }

    #[test]
    fn each_checks_list_elements_and_map_values_on_their_own_paths() {
        let v = one_of(&["x"]).each();
        let list = Value::List(vec![
            Value::string("x"),
            Value::string("z"),
            Value::unknown(),
        ]);
        let d = v.check(&AttributePath::attr("a"), &list);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].attribute.as_ref().unwrap().to_string(), "a[1]");
        let map = Value::map([("k", Value::string("z"))]);
        let d = v.check(&AttributePath::attr("m"), &map);
        assert_eq!(d[0].detail, "`m[\"k\"]` must be one of `x`; got \"z\".");
        assert_eq!(v.description(), "Each must be one of `x`.");
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
