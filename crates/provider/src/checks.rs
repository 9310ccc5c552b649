//! Checks of typed configuration values ([`Tf`]): each skips unknown and null values (a
//! value known only at apply is checked then) and reports a problem on the attribute's
//! path.

use std::collections::BTreeMap;

use gpu_core::pool::kube::{label_key_problem, label_value_problem};
use tfplugin::{AttributePath, Diagnostics, Tf};

/// Errors unless the number is zero or more.
pub fn non_negative(diags: &mut Diagnostics, v: &Tf<f64>, path: AttributePath) {
    if let Some(n) = v.known().copied()
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

/// Errors unless the string is a price age such as `90d` or `12w`.
pub fn price_age(diags: &mut Diagnostics, v: &Tf<String>, path: AttributePath) {
    if let Some(s) = v.known()
        && let Err(e) = s.parse::<gpu_core::freshness::MaxPriceAge>()
    {
        let name = path.to_string();
        diags.attr_error(path, format!("Invalid {name}"), format!("`{name}`: {e}."));
    }
}

/// Errors unless the string is one of `allowed`.
pub fn one_of(diags: &mut Diagnostics, v: &Tf<String>, path: AttributePath, allowed: &[&str]) {
    if let Some(s) = v.known()
        && !allowed.contains(&s.as_str())
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

/// Errors unless the string is an http(s) URL.
pub fn http_url(diags: &mut Diagnostics, v: &Tf<String>, path: AttributePath) {
    if let Some(s) = v.known()
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

/// Checks every key and known value of a label map; each error names the entry's path
/// (`default_labels["Team Name"]`) in its summary and detail.
pub fn labels(diags: &mut Diagnostics, v: &Tf<BTreeMap<String, Tf<String>>>, path: AttributePath) {
    let Some(entries) = v.known() else {
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
        if let Some(why) = value.known().and_then(|v| label_value_problem(v)) {
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
    fn unknown_and_null_are_skipped_and_problems_name_the_path() {
        let mut d = Diagnostics::new();
        non_negative(&mut d, &Tf::Unknown, AttributePath::attr("x"));
        one_of(&mut d, &Tf::Null, AttributePath::attr("y"), &["a"]);
        http_url(&mut d, &Tf::Unknown, AttributePath::attr("u"));
        assert!(d.is_empty());
        non_negative(&mut d, &Tf::Known(-1.0), AttributePath::attr("x"));
        one_of(
            &mut d,
            &Tf::Known("b".into()),
            AttributePath::attr("y"),
            &["a"],
        );
        price_age(
            &mut d,
            &Tf::Known("soon".into()),
            AttributePath::attr("age"),
        );
        assert_eq!(d.0.len(), 3);
        assert_eq!(d.0[0].attribute, Some(AttributePath::attr("x")));
        assert!(d.0[1].detail.contains("valid values are: \"a\""));
        assert_eq!(d.0[2].summary, "Invalid age");
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
        let mut d = Diagnostics::new();
        let v = BTreeMap::from([
            ("Team Name".to_string(), Tf::Known("ml".to_string())),
            ("team".to_string(), Tf::Known("-ml-".to_string())),
            ("ok".to_string(), Tf::Known("fine".to_string())),
        ]);
        labels(&mut d, &Tf::Known(v), AttributePath::attr("default_labels"));
        assert_eq!(d.0.len(), 2, "{d:?}");
        for (diag, key) in d.0.iter().zip(["Team Name", "team"]) {
            let name = format!("default_labels[\"{key}\"]");
            assert_eq!(diag.attribute.as_ref().unwrap().to_string(), name);
            assert!(diag.summary.contains(&name), "{diag:?}");
            assert!(diag.detail.contains(&format!("`{name}`")), "{diag:?}");
        }
        assert!(d.0[0].detail.contains("only letters, digits"), "{d:?}");
    }

    #[test]
    fn label_maps_and_string_lists() {
        let mut d = Diagnostics::new();
        let m = BTreeMap::from([
            ("Team Name".to_string(), Tf::Known("ml".to_string())),
            ("team".to_string(), Tf::Unknown),
        ]);
        labels(&mut d, &Tf::Known(m), AttributePath::attr("default_labels"));
        assert_eq!(d.0.len(), 1, "{d:?}");
        assert!(d.0[0].summary.contains("default_labels[\"Team Name\"]"));
    }
}
