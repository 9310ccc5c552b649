//! Errors raised by the value codecs and the serde bridge, with the path of
//! the offending value inside the whole document.

use std::fmt;

/// One step of a path into a value: an object attribute, a map key or a
/// list/set/tuple index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathStep {
    /// An attribute of an object.
    Attr(String),
    /// A key of a map.
    Key(String),
    /// An index into a list, set or tuple.
    Index(u64),
}

/// Renders a path like `.spec.gpus[0]["key"]`; the empty path renders as
/// the empty string.
pub fn format_path(path: &[PathStep]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            PathStep::Attr(name) => {
                out.push('.');
                out.push_str(name);
            }
            PathStep::Key(key) => {
                out.push('[');
                // serde_json escapes the key the way a reader expects.
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(']');
            }
            PathStep::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// The broad class of a [`ValueError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input bytes are malformed or do not match the expected type.
    Invalid,
    /// A value does not conform to the type it is encoded or converted
    /// against.
    Mismatch,
    /// A value is unknown (not decided until apply) where a known value is
    /// required.
    NotKnown,
    /// A message raised by serde (for example by a derived `Deserialize`).
    Custom,
}

/// An error from decoding, encoding or converting a value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ValueError {
    /// What kind of failure this is.
    pub kind: ErrorKind,
    /// Where in the value the failure happened (empty for the root).
    pub path: Vec<PathStep>,
    /// A human-readable description, without the path.
    pub message: String,
    /// Whether `path` has been filled in (used by the serde bridge so that
    /// the innermost location wins).
    pub(crate) located: bool,
}

impl ValueError {
    /// Creates an error of the given kind at the given path.
    pub fn new(kind: ErrorKind, path: &[PathStep], message: impl Into<String>) -> ValueError {
        ValueError {
            kind,
            path: path.to_vec(),
            message: message.into(),
            located: true,
        }
    }

    /// Creates an error whose path is not yet known.
    pub(crate) fn unlocated(kind: ErrorKind, message: impl Into<String>) -> ValueError {
        ValueError {
            kind,
            path: Vec::new(),
            message: message.into(),
            located: false,
        }
    }

    /// Sets the path if none was recorded yet.
    pub(crate) fn locate(mut self, path: &[PathStep]) -> ValueError {
        if !self.located {
            self.path = path.to_vec();
            self.located = true;
        }
        self
    }

    /// True when the error is caused by an unknown value.
    pub fn is_not_known(&self) -> bool {
        self.kind == ErrorKind::NotKnown
    }

    /// The path rendered like `.spec.gpu_count`.
    pub fn path_string(&self) -> String {
        format_path(&self.path)
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", format_path(&self.path), self.message)
        }
    }
}

impl serde::de::Error for ValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ValueError::unlocated(ErrorKind::Custom, msg.to_string())
    }
}

impl serde::ser::Error for ValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ValueError::unlocated(ErrorKind::Custom, msg.to_string())
    }
}

/// Shorthand for an [`ErrorKind::Invalid`] error at `path`.
pub(crate) fn invalid(path: &[PathStep], message: impl Into<String>) -> ValueError {
    ValueError::new(ErrorKind::Invalid, path, message)
}

/// Shorthand for an [`ErrorKind::Mismatch`] error at `path`.
pub(crate) fn mismatch(path: &[PathStep], message: impl Into<String>) -> ValueError {
    ValueError::new(ErrorKind::Mismatch, path, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_path() {
        let e = mismatch(
            &[
                PathStep::Attr("spec".into()),
                PathStep::Attr("gpu_count".into()),
            ],
            "expected number, found string",
        );
        assert_eq!(
            e.to_string(),
            "at .spec.gpu_count: expected number, found string"
        );
        let e = invalid(
            &[
                PathStep::Attr("m".into()),
                PathStep::Key("a\"b".into()),
                PathStep::Index(3),
            ],
            "x",
        );
        assert_eq!(e.to_string(), "at .m[\"a\\\"b\"][3]: x");
        assert_eq!(invalid(&[], "root").to_string(), "root");
    }
}
