//! Small checks on configuration values that may be unknown at plan time: each skips
//! unknown and null values and reports problems with the attribute's path.

use gpu_core::pool::kube::{label_key_problem, label_value_problem};
use tfplugin::{AttributePath, Diagnostics, Value};

/// The known number at `v`, if any.
pub fn known_f64(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_number).map(|n| n.as_f64())
}

/// The known string at `v`, if any.
pub fn known_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// Errors unless the number at `v` is zero or more.
pub fn non_negative(diags: &mut Diagnostics, v: Option<&Value>, path: AttributePath) {
    if let Some(n) = known_f64(v)
        && !(n >= 0.0 && n.is_finite())
    {
        let name = path.to_string();
        diags.attr_error(
            path,
            format!("Invalid {name}"),
            format!("`{name}` must be zero or a positive number; got {n}."),
        );
    }
}

/// Errors unless the string at `v` is a price age such as `90d` or `12w`.
pub fn price_age(diags: &mut Diagnostics, v: Option<&Value>, path: AttributePath) {
    if let Some(s) = known_str(v)
        && let Err(e) = s.parse::<gpu_core::freshness::MaxPriceAge>()
    {
        let name = path.to_string();
        diags.attr_error(path, format!("Invalid {name}"), format!("`{name}`: {e}."));
    }
}

/// Errors unless the string at `v` is one of `allowed`.
pub fn one_of(diags: &mut Diagnostics, v: Option<&Value>, path: AttributePath, allowed: &[&str]) {
    if let Some(s) = known_str(v)
        && !allowed.contains(&s)
    {
        let name = path.to_string();
        diags.attr_error(
            path,
            format!("Invalid {name}"),
            format!(
                "`{name}` is {s:?}; valid values are: {}.",
                allowed
                    .iter()
                    .map(|a| format!("{a:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
}

/// Errors unless the string at `v` is an http(s) URL.
pub fn http_url(diags: &mut Diagnostics, v: Option<&Value>, path: AttributePath) {
    if let Some(s) = known_str(v)
        && !(s.starts_with("http://") || s.starts_with("https://"))
    {
        let name = path.to_string();
        diags.attr_error(
            path,
            format!("Invalid {name}"),
            format!("`{name}` must be an http:// or https:// URL; got {s:?}."),
        );
    }
}

/// Checks every key and value of the label map at `v`; each error names the entry's path
/// (`default_labels["Team Name"]`) in its summary and detail.
pub fn labels(diags: &mut Diagnostics, v: Option<&Value>, path: AttributePath) {
    let Some(entries) = v.and_then(Value::as_entries) else {
        return;
    };
    for (key, value) in entries {
        let at = path.clone().then_key(key.clone());
        let name = at.to_string();
        if let Some(why) = label_key_problem(key) {
            diags.attr_error(
                at.clone(),
                format!("Invalid label key in {name}"),
                format!("`{name}`: label key {key:?} is not a valid Kubernetes label key: {why}."),
            );
        }
        if let Some(why) = value.as_str().and_then(label_value_problem) {
            diags.attr_error(
                at,
                format!("Invalid label value in {name}"),
                format!("`{name}`: the value of label {key:?} is not a valid Kubernetes label value: {why}."),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn checks_skip_unknown_and_report_paths() {
        let mut d = Diagnostics::new();
        non_negative(&mut d, Some(&Value::unknown()), AttributePath::attr("x"));
        one_of(&mut d, Some(&Value::Null), AttributePath::attr("y"), &["a"]);
        assert!(d.is_empty());
        non_negative(&mut d, Some(&Value::number(-1)), AttributePath::attr("x"));
        one_of(
            &mut d,
            Some(&Value::string("b")),
            AttributePath::attr("y"),
            &["a"],
        );
        assert_eq!(d.0.len(), 2);
        assert!(d.0[1].detail.contains("valid values are: \"a\""));
        assert_eq!(d.0[0].attribute, Some(AttributePath::attr("x")));
    }

    #[test]
    fn label_errors_name_the_entry() {
        let mut d = Diagnostics::new();
        let v = Value::map([
            ("Team Name", Value::string("ml")),
            ("team", Value::string("-ml-")),
            ("ok", Value::string("fine")),
        ]);
        labels(&mut d, Some(&v), AttributePath::attr("default_labels"));
        assert_eq!(d.0.len(), 2, "{d:?}");
        for (diag, key) in d.0.iter().zip(["Team Name", "team"]) {
            let name = format!("default_labels[\"{key}\"]");
            assert_eq!(diag.attribute.as_ref().unwrap().to_string(), name);
            assert!(diag.summary.contains(&name), "{diag:?}");
            assert!(diag.detail.contains(&format!("`{name}`")), "{diag:?}");
        }
        assert!(d.0[0].detail.contains("only letters, digits"), "{d:?}");
    }
}
