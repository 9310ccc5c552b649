//! Kubernetes naming rules for label keys, label values and taint keys/values.

/// Why `key` is not a valid Kubernetes label (or taint) key, or `None` when it is.
///
/// A key is an optional DNS-subdomain prefix (≤ 253 chars) and `/`, then a name of
/// 1–63 characters `[A-Za-z0-9-_.]` starting and ending alphanumeric.
pub fn label_key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(why) = prefix.and_then(prefix_problem) {
        return Some(why);
    }
    name_problem(name).map(|why| format!("the name part {why}"))
}

/// Why `value` is not a valid Kubernetes label value, or `None` when it is.
///
/// A value is empty, or 1–63 characters `[A-Za-z0-9-_.]` starting and ending alphanumeric.
pub fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    name_problem(value)
}

/// Checks the name part of a key, or a non-empty value.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".to_string());
    }
    if name.len() > 63 {
        return Some(format!(
            "is {} characters; at most 63 are allowed",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "contains {c:?}; only letters, digits, `-`, `_` and `.` are allowed"
        ));
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alnum(name.chars().next()) || !alnum(name.chars().last()) {
        return Some("must start and end with a letter or digit".to_string());
    }
    None
}

/// Checks a key prefix: a lower-case DNS subdomain.
fn prefix_problem(prefix: &str) -> Option<String> {
    if prefix.is_empty() || prefix.len() > 253 {
        return Some(format!(
            "the prefix before `/` must be 1–253 characters, not {}",
            prefix.len()
        ));
    }
    for part in prefix.split('.') {
        let ok = !part.is_empty()
            && part.len() <= 63
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !part.starts_with('-')
            && !part.ends_with('-');
        if !ok {
            return Some(format!(
                "the prefix `{prefix}` is not a DNS subdomain (lower-case letters, digits, \
                 `-` and `.`, e.g. `example.com`)"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        for ok in ["team", "example.com/team", "a", "a.b_c-d", "k8s.io/x"] {
            assert_eq!(label_key_problem(ok), None, "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "Example.com/x",
            "a/b/c",
            "/x",
            "x/",
            &"a".repeat(64),
        ] {
            assert!(label_key_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn values() {
        for ok in ["", "ml", "A.b-c_d", &"v".repeat(63)] {
            assert_eq!(label_value_problem(ok), None, "{ok}");
        }
        for bad in ["-x", "x y", "x/", &"v".repeat(64)] {
            assert!(label_value_problem(bad).is_some(), "{bad}");
        }
    }
}
