//! Diagnostics: the errors and warnings a provider returns to Terraform, each optionally
//! pointing at the attribute it is about.

use crate::value::Value;
use std::fmt;

/// One step of an [`AttributePath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// An attribute (or nested block) of an object, by name.
    Attr(String),
    /// An element of a map, by key.
    Key(String),
    /// An element of a list or tuple, by position.
    Index(i64),
}

/// Where in a configuration or state value a diagnostic points, e.g. `budget.max_monthly_usd`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AttributePath(pub Vec<PathStep>);

impl AttributePath {
    /// The path of one top-level attribute.
    pub fn attr(name: impl Into<String>) -> Self {
        AttributePath(vec![PathStep::Attr(name.into())])
    }

    /// This path extended by an attribute name.
    pub fn then_attr(mut self, name: impl Into<String>) -> Self {
        self.0.push(PathStep::Attr(name.into()));
        self
    }

    /// This path extended by a map key.
    pub fn then_key(mut self, key: impl Into<String>) -> Self {
        self.0.push(PathStep::Key(key.into()));
        self
    }

    /// This path extended by a list index.
    pub fn then_index(mut self, index: i64) -> Self {
        self.0.push(PathStep::Index(index));
        self
    }

    /// True when the path has no steps (it points at the whole value).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value this path points at inside `root`, if it is there (through objects,
    /// maps, and lists, sets or tuples by position).
    pub fn lookup<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        self.0.iter().try_fold(root, |v, step| match step {
            PathStep::Attr(name) => v.get_attr(name),
            PathStep::Key(key) => v.get_key(key),
            PathStep::Index(i) => usize::try_from(*i).ok().and_then(|i| v.get_index(i)),
        })
    }

    /// The value this path points at inside `root`, mutably (as [`AttributePath::lookup`]).
    pub fn lookup_mut<'v>(&self, root: &'v mut Value) -> Option<&'v mut Value> {
        self.0.iter().try_fold(root, |v, step| match (step, v) {
            (PathStep::Attr(name), Value::Object(m)) => m.get_mut(name),
            (PathStep::Key(key), Value::Map(m)) => m.get_mut(key),
            (PathStep::Index(i), Value::List(vs) | Value::Set(vs) | Value::Tuple(vs)) => {
                usize::try_from(*i).ok().and_then(|i| vs.get_mut(i))
            }
            (_, Value::Dynamic(_, inner)) => {
                AttributePath(vec![step.clone()]).lookup_mut(inner.as_mut())
            }
            _ => None,
        })
    }
}

impl From<&str> for AttributePath {
    /// The path of one top-level attribute.
    fn from(name: &str) -> Self {
        AttributePath::attr(name)
    }
}

impl fmt::Display for AttributePath {
    /// Formats the path the way Terraform users write it: `a.b["k"][0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                PathStep::Attr(name) if i == 0 => write!(f, "{name}")?,
                PathStep::Attr(name) => write!(f, ".{name}")?,
                PathStep::Key(key) => write!(f, "[{key:?}]")?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The operation failed.
    Error,
    /// The operation went on; the user should read this.
    Warning,
}

/// One error or warning for Terraform to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A short, one-line summary.
    pub summary: String,
    /// The full explanation: what is wrong and what would be valid.
    pub detail: String,
    /// The attribute the diagnostic is about, if any.
    pub attribute: Option<AttributePath>,
}

impl Diagnostic {
    /// An error with a summary and a detail.
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    /// A warning with a summary and a detail.
    pub fn warning(summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(summary, detail)
        }
    }

    /// The same diagnostic, pointing at `path`.
    pub fn at(mut self, path: AttributePath) -> Self {
        self.attribute = Some(path);
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// An ordered collection of diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// No diagnostics.
    pub fn new() -> Self {
        Diagnostics(Vec::new())
    }

    /// Adds one diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    /// Adds an error about the attribute at `path`.
    pub fn attr_error(
        &mut self,
        path: AttributePath,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.push(Diagnostic::error(summary, detail).at(path));
    }

    /// Appends all of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// True if any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_displays_like_hcl() {
        let p = AttributePath::attr("aws")
            .then_index(0)
            .then_attr("endpoints")
            .then_key("ec2");
        assert_eq!(p.to_string(), "aws[0].endpoints[\"ec2\"]");
    }

    #[test]
    fn lookup_follows_attributes_keys_and_indexes() {
        let mut v = Value::object([(
            "aws",
            Value::List(vec![Value::object([(
                "endpoints",
                Value::map([("ec2", Value::string("http://x"))]),
            )])]),
        )]);
        let p = AttributePath::attr("aws")
            .then_index(0)
            .then_attr("endpoints")
            .then_key("ec2");
        assert_eq!(p.lookup(&v), Some(&Value::string("http://x")));
        assert_eq!(AttributePath::attr("aws").then_index(1).lookup(&v), None);
        assert_eq!(AttributePath::from("gcp").lookup(&v), None);
        *p.lookup_mut(&mut v).unwrap() = Value::string("y");
        assert_eq!(p.lookup(&v), Some(&Value::string("y")));
    }

    #[test]
    fn errors_are_detected() {
        let mut d = Diagnostics::new();
        d.push(Diagnostic::warning("w", ""));
        assert!(!d.has_errors());
        d.attr_error(AttributePath::attr("x"), "bad", "worse");
        assert!(d.has_errors());
        assert_eq!(d.0[1].attribute, Some(AttributePath::attr("x")));
    }
}
