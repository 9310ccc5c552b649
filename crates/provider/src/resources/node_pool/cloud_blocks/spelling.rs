//! Spellings of cloud block values: read in any letter case, compared in the cloud's own
//! spelling, and shown back in the user's words.

use tfplugin::Value;

pub(super) fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `value` spelled as in `allowed` (compared in any letter case).
pub(super) fn canonical<'a>(value: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value.trim()))
        .copied()
}

/// `value` mapped through `table` (its first column compared in any letter case).
pub(super) fn mapped(value: &str, table: &[(&str, &'static str)]) -> Option<&'static str> {
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(value.trim()))
        .map(|(_, v)| *v)
}

/// The user's word for the cloud's `value` in `table` (`Install` → `install`).
pub(super) fn unmapped(value: &str, table: &[(&'static str, &str)]) -> String {
    table
        .iter()
        .find(|(_, v)| v.eq_ignore_ascii_case(value))
        .map_or_else(|| value.to_string(), |(k, _)| (*k).to_string())
}

/// A set of zones read into its canonical form (trimmed, lower case, sorted, no
/// duplicates); `None` unless every element is a known string.
pub(super) fn canonical_set(v: &Value) -> Option<Vec<String>> {
    let mut all: Vec<String> = v
        .as_elements()?
        .iter()
        .map(|e| e.as_str().map(|s| s.trim().to_ascii_lowercase()))
        .collect::<Option<_>>()?;
    all.sort();
    all.dedup();
    Some(all)
}
