//! Import ids made of named parts: `ImportId::parse("east/train", &["cluster", "name"], '/')`
//! gives the parts by name, or an error that shows the expected form.

use crate::diag::Diagnostic;

/// An import id split into its named parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportId {
    parts: Vec<(String, String)>,
}

/// Why an import id does not have the expected form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The import id must look like `{expected}`; {problem} in {id:?}.")]
pub struct ImportIdError {
    /// The id as given.
    pub id: String,
    /// The expected form, e.g. `<cluster>/<name>`.
    pub expected: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ImportIdError {
    /// The error as Terraform shows it: "Invalid import id" and the expected form.
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::error("Invalid import id", self.to_string())
    }
}

/// The form an id of `names` joined by `separator` takes: `<cluster>/<name>`.
pub fn expected_form(names: &[&str], separator: char) -> String {
    names
        .iter()
        .map(|n| format!("<{n}>"))
        .collect::<Vec<_>>()
        .join(&separator.to_string())
}

impl ImportId {
    /// Splits `id` at every `separator` into exactly `names.len()` non-empty parts.
    pub fn parse(id: &str, names: &[&str], separator: char) -> Result<ImportId, ImportIdError> {
        let error = |problem: String| ImportIdError {
            id: id.to_string(),
            expected: expected_form(names, separator),
            problem,
        };
        let values: Vec<&str> = id.split(separator).collect();
        if values.len() != names.len() {
            return Err(error(format!(
                "found {} part{} separated by `{separator}` instead of {}",
                values.len(),
                if values.len() == 1 { "" } else { "s" },
                names.len()
            )));
        }
        if let Some((name, _)) = names.iter().zip(&values).find(|(_, v)| v.trim().is_empty()) {
            return Err(error(format!("`{name}` is empty")));
        }
        Ok(ImportId {
            parts: names
                .iter()
                .zip(values)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        })
    }

    /// The part called `name`; `None` if the id has no part of that name.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.parts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The parts in order, as `(name, value)`.
    pub fn parts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.parts.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_parts() {
        let id = ImportId::parse("east/train", &["cluster", "name"], '/').unwrap();
        assert_eq!(id.get("cluster"), Some("east"));
        assert_eq!(id.get("name"), Some("train"));
        assert_eq!(id.get("region"), None);
        assert_eq!(
            id.parts().collect::<Vec<_>>(),
            [("cluster", "east"), ("name", "train")]
        );
    }

    #[test]
    fn wrong_counts_and_empty_parts_show_the_form() {
        let e = ImportId::parse("east", &["cluster", "name"], '/').unwrap_err();
        assert_eq!(
            e.to_string(),
            "The import id must look like `<cluster>/<name>`; found 1 part separated by `/` instead of 2 in \"east\"."
        );
        let e = ImportId::parse("a/b/c", &["cluster", "name"], '/').unwrap_err();
        assert!(e.problem.starts_with("found 3 parts"), "{e}");
        let e = ImportId::parse("east:", &["cluster", "name"], ':').unwrap_err();
        assert_eq!(e.problem, "`name` is empty");
        assert_eq!(e.expected, "<cluster>:<name>");
        assert_eq!(e.to_diagnostic().summary, "Invalid import id");
    }
}
