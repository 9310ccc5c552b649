//! The provider's attribute validators, attached to schema attributes (so the router runs
//! them at every validate and the docs say them). Unknown and null values are skipped (a
//! value known only at apply is checked then); a problem names the attribute's path.

use gpu_core::pool::kube::{label_key_problem, label_value_problem};
use tfplugin::validators::Validator;
use tfplugin::{Diagnostic, Value};

/// A number of zero or more.
pub fn non_negative() -> Validator {
    Validator::with_detail(|name, v| match number(v) {
        Some(n) if n >= 0.0 && n.is_finite() => Ok(()),
        n => Err(format!(
            "`{name}` must be zero or a positive number; got {}.",
            shown(n, v)
        )),
    })
    .describe("Must be zero or more.")
}

/// A share from 0 to 1.
pub fn fraction() -> Validator {
    Validator::with_detail(|name, v| match number(v) {
        Some(n) if (0.0..=1.0).contains(&n) => Ok(()),
        n => Err(format!(
            "`{name}` must be from 0 to 1 (e.g. 0.5); got {}.",
            shown(n, v)
        )),
    })
    .describe("Must be from 0 to 1.")
}

/// A string with something in it besides spaces.
pub fn not_blank() -> Validator {
    Validator::with_detail(|name, v| {
        if v.as_str().is_some_and(|s| !s.trim().is_empty()) {
            Ok(())
        } else {
            Err(format!(
                "`{name}` is empty; give a file path, or leave it unset."
            ))
        }
    })
    .describe("Must not be empty.")
}

/// A number above zero.
pub fn positive() -> Validator {
    Validator::with_detail(|name, v| match number(v) {
        Some(n) if n > 0.0 => Ok(()),
        n => Err(format!(
            "`{name}` must be more than 0; got {}.",
            shown(n, v)
        )),
    })
    .describe("Must be more than 0.")
}

/// A price age such as `365d` or `52w`.
pub fn price_age() -> Validator {
    Validator::with_detail(|name, v| {
        let s = v.as_str().unwrap_or_default();
        match s.parse::<gpu_core::freshness::MaxPriceAge>() {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("`{name}`: {e}.")),
        }
    })
    .describe("Must be a number of days or weeks, such as `\"365d\"` or `\"52w\"`.")
}

/// A string that is one of `allowed`.
pub fn one_of(allowed: &[&str]) -> Validator {
    word_of(allowed, str::to_string, "")
}

/// A capacity word of `allowed` (written with `_`), in either spelling: `on_demand` and
/// `on-demand` mean the same. The message lists the `_` spellings.
pub fn capacity_word(allowed: &[&str]) -> Validator {
    word_of(allowed, canonical_capacity, " (`on-demand` works too)")
}

/// A string whose spelling by `canonical` is one of `allowed`; `note` follows the list in
/// the description.
fn word_of(allowed: &[&str], canonical: fn(&str) -> String, note: &str) -> Validator {
    let allowed: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
    let list = |f: fn(&String) -> String| allowed.iter().map(f).collect::<Vec<_>>().join(", ");
    let quoted = list(|a| format!("{a:?}"));
    let said = format!("Must be one of {}{note}.", list(|a| format!("`{a}`")));
    Validator::with_detail(move |name, v| {
        let s = v.as_str().unwrap_or_default();
        if allowed.contains(&canonical(s)) {
            Ok(())
        } else {
            Err(format!("`{name}` is {s:?}; valid values are: {quoted}."))
        }
    })
    .describe(said)
}

/// The canonical spelling of a capacity word: `on-demand` → `on_demand`; others unchanged.
pub fn canonical_capacity(s: &str) -> String {
    s.replace('-', "_")
}

/// A duration such as `15m`, `1h30m` or `90s`, above zero.
pub fn duration() -> Validator {
    Validator::with_detail(|name, v| {
        let s = v.as_str().unwrap_or_default();
        match tfplugin::timeouts::parse_duration(s) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!(
                "`{name}` is {s:?}: {e}; write a duration such as \"15m\", \"1h30m\" or \"90s\"."
            )),
        }
    })
    .describe("Must be a duration above zero such as `\"15m\"`, `\"1h30m\"` or `\"90s\"`.")
}

/// An http(s) URL.
pub fn http_url() -> Validator {
    Validator::with_detail(|name, v| {
        let s = v.as_str().unwrap_or_default();
        if s.starts_with("http://") || s.starts_with("https://") {
            Ok(())
        } else {
            Err(format!(
                "`{name}` must be an http:// or https:// URL; got {s:?}."
            ))
        }
    })
    .describe("Must be an `http://` or `https://` URL.")
}

/// A map of Kubernetes labels: each key and known value checked, each error naming the
/// entry's path (`default_labels["Team Name"]`) in its summary and detail.
pub fn labels() -> Validator {
    Validator::diagnosing(|path, v| {
        let mut out = Vec::new();
        for (key, value) in v.as_entries().into_iter().flatten() {
            let at = path.clone().then_key(key.clone());
            let name = at.to_string();
            if let Some(why) = label_key_problem(key) {
                out.push(
                    Diagnostic::error(
                        format!("Invalid label key in {name}"),
                        format!("`{name}`: label key {key:?} is not a valid Kubernetes label key: {why}."),
                    )
                    .at(at.clone()),
                );
            }
            if let Some(why) = value.as_str().and_then(label_value_problem) {
                out.push(
                    Diagnostic::error(
                        format!("Invalid label value in {name}"),
                        format!("`{name}`: the value of label {key:?} is not a valid Kubernetes label value: {why}."),
                    )
                    .at(at),
                );
            }
        }
        out
    })
    .describe("Keys and values must be valid Kubernetes label keys and values.")
}

/// A whole number of `min` or more (and at most `u32::MAX`).
pub fn whole_at_least(min: f64) -> Validator {
    Validator::with_detail(move |name, v| match number(v) {
        Some(n) if n.fract() == 0.0 && n >= min && n <= f64::from(u32::MAX) => Ok(()),
        n => Err(format!(
            "`{name}` must be a whole number of {min} or more; got {}.",
            shown(n, v)
        )),
    })
    .describe(format!("Must be a whole number of {min} or more."))
}

/// A GPU model name the catalog knows (or an alias of one).
pub fn gpu_model() -> Validator {
    Validator::diagnosing(
        |path, v| match gpu_core::gpu::lookup(v.as_str().unwrap_or_default()) {
            Ok(_) => Vec::new(),
            Err(e) => vec![
                Diagnostic::error(
                    format!("Unknown GPU model in {path}"),
                    format!("{e}. The `gpu_models` data source lists every model."),
                )
                .at(path.clone()),
            ],
        },
    )
    .describe("Must be a GPU model the `gpu_models` data source lists (or one of its aliases).")
}

/// The number a value holds, if it is one.
fn number(v: &Value) -> Option<f64> {
    v.as_number().map(|n| n.as_f64())
}

/// The value as the error quotes it: the number, else its kind.
fn shown(n: Option<f64>, v: &Value) -> String {
    n.map_or_else(|| format!("a {}", v.kind_name()), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfplugin::AttributePath;

    fn check(v: &Validator, at: &str, value: Value) -> Vec<Diagnostic> {
        v.check(&AttributePath::attr(at), &value)
    }

    #[test]
    fn unknown_and_null_are_skipped_and_problems_name_the_path() {
        assert!(check(&non_negative(), "x", Value::unknown()).is_empty());
        assert!(check(&one_of(&["a"]), "y", Value::Null).is_empty());
        assert!(check(&http_url(), "u", Value::unknown()).is_empty());
        let d = check(&non_negative(), "x", Value::number(-1.0));
        assert_eq!(d[0].attribute, Some(AttributePath::attr("x")));
        assert_eq!(
            d[0].detail,
            "`x` must be zero or a positive number; got -1."
        );
        let d = check(&one_of(&["a"]), "y", Value::string("b"));
        assert_eq!(d[0].detail, "`y` is \"b\"; valid values are: \"a\".");
        let d = check(&price_age(), "age", Value::string("soon"));
        assert_eq!(d[0].summary, "Invalid age");
        assert!(check(&price_age(), "age", Value::string("90d")).is_empty());
        let d = check(&positive(), "n", Value::number(0.0));
        assert_eq!(d[0].detail, "`n` must be more than 0; got 0.");
        let d = check(&http_url(), "u", Value::string("ftp://x"));
        assert!(d[0].detail.contains("http:// or https://"), "{d:?}");
    }

    #[test]
    fn capacity_words_take_both_spellings() {
        let v = capacity_word(&["spot", "on_demand", "either"]);
        for ok in ["on_demand", "on-demand", "spot", "either"] {
            assert!(check(&v, "capacity", Value::string(ok)).is_empty(), "{ok}");
        }
        let d = check(&v, "capacity", Value::string("reserved"));
        assert_eq!(
            d[0].detail,
            "`capacity` is \"reserved\"; valid values are: \"spot\", \"on_demand\", \"either\"."
        );
        assert_eq!(canonical_capacity("on-demand"), "on_demand");
    }

    #[test]
    fn label_rules() {
        assert_eq!(label_key_problem("team"), None);
        assert_eq!(label_key_problem("gpu.tf/pool"), None);
        assert!(label_key_problem("Bad Key").is_some());
        assert!(label_key_problem("UPPER.example/x").is_some());
        assert!(label_value_problem(&"x".repeat(64)).is_some());
        assert_eq!(label_value_problem(""), None);
        assert!(label_value_problem("-lead").is_some());
    }

    #[test]
    fn label_errors_name_the_entry() {
        let v = Value::map([
            ("Team Name", Value::string("ml")),
            ("team", Value::string("-ml-")),
            ("ok", Value::string("fine")),
        ]);
        let d = check(&labels(), "default_labels", v);
        assert_eq!(d.len(), 2, "{d:?}");
        for (diag, key) in d.iter().zip(["Team Name", "team"]) {
            let name = format!("default_labels[\"{key}\"]");
            assert_eq!(diag.attribute.as_ref().unwrap().to_string(), name);
            assert!(diag.summary.contains(&name), "{diag:?}");
            assert!(diag.detail.contains(&format!("`{name}`")), "{diag:?}");
        }
        assert!(d[0].detail.contains("only letters, digits"), "{d:?}");
    }

    #[test]
    fn unknown_label_values_are_skipped() {
        let m = Value::map([
            ("Team Name", Value::string("ml")),
            ("team", Value::unknown()),
        ]);
        let d = check(&labels(), "default_labels", m);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].summary.contains("default_labels[\"Team Name\"]"));
    }
}
