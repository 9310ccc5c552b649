//! Resource identity (protocol 6.10, Terraform 1.12 and later): a small versioned object
//! that names one remote object. Terraform keeps it beside the state, imports by it
//! (`import { identity = { … } }`) and reads it from `terraform query` listings.

use crate::value::{Type, Value};

/// One attribute of an identity.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentityAttribute {
    /// Its name.
    pub name: String,
    /// Its type (a primitive or a list of one).
    pub ty: Type,
    /// An import by identity must give it.
    pub required_for_import: bool,
    /// An import by identity may leave it out (the provider fills it in).
    pub optional_for_import: bool,
    /// What it holds, in Markdown.
    pub description: String,
}

/// The identity of a resource type: its version and attributes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IdentitySchema {
    /// Bumped whenever the attributes change (Terraform then asks for an upgrade).
    pub version: i64,
    /// The attributes, in the order they are declared.
    pub attributes: Vec<IdentityAttribute>,
}

impl IdentitySchema {
    /// An identity of version `version` with no attributes yet.
    pub fn new(version: i64) -> Self {
        IdentitySchema {
            version,
            attributes: Vec::new(),
        }
    }

    /// Adds a string attribute an import by identity must give.
    pub fn required_string(mut self, name: &str, description: &str) -> Self {
        self.attributes.push(IdentityAttribute {
            name: name.into(),
            ty: Type::String,
            required_for_import: true,
            optional_for_import: false,
            description: description.into(),
        });
        self
    }

    /// The object type identity values have.
    pub fn value_type(&self) -> Type {
        Type::object(
            self.attributes
                .iter()
                .map(|a| (a.name.clone(), a.ty.clone())),
        )
    }

    /// An identity value from `(name, value)` pairs; attributes not given are null.
    pub fn value<'a>(&self, pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
        let mut given: std::collections::BTreeMap<String, Value> =
            pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Value::Object(
            self.attributes
                .iter()
                .map(|a| {
                    let v = given.remove(&a.name).unwrap_or(Value::Null);
                    (a.name.clone(), v)
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_declared_attributes() {
        let s = IdentitySchema::new(0)
            .required_string("import_id", "the id")
            .required_string("other", "more");
        assert_eq!(
            s.value_type(),
            Type::object([("import_id", Type::String), ("other", Type::String)])
        );
        let v = s.value([
            ("import_id", Value::string("a/b")),
            ("stray", Value::Bool(true)),
        ]);
        assert_eq!(v.get_attr("import_id"), Some(&Value::string("a/b")));
        assert_eq!(v.get_attr("other"), Some(&Value::Null));
        assert_eq!(v.get_attr("stray"), None, "only declared attributes");
    }
}
