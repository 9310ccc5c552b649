//! The cty type system as used on the wire, and its compact JSON form
//! (`"string"`, `["list","number"]`, `["object",{...},["opt"]]`, ...).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::MAX_DEPTH;
use super::error::{ValueError, invalid};

/// A cty type: the type constraint a schema gives for an attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// `"bool"`.
    Bool,
    /// `"number"`: arbitrary-precision.
    Number,
    /// `"string"`.
    String,
    /// `"dynamic"`: the concrete type travels with the value.
    Dynamic,
    /// `["list", T]`.
    List(Box<Type>),
    /// `["set", T]`.
    Set(Box<Type>),
    /// `["map", T]`: string keys.
    Map(Box<Type>),
    /// `["object", {attr: T}]`, optionally with optional attribute names.
    Object(ObjectType),
    /// `["tuple", [T...]]`.
    Tuple(Vec<Type>),
}

/// The attributes of an object type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectType {
    /// Attribute names and their types.
    pub attributes: BTreeMap<String, Type>,
    /// Names of attributes marked optional (only meaningful in type
    /// constraints; always a subset of `attributes`).
    pub optional: BTreeSet<String>,
}

impl ObjectType {
    /// An object type with the given attributes and no optional ones.
    pub fn new(attrs: impl IntoIterator<Item = (impl Into<String>, Type)>) -> ObjectType {
        ObjectType {
            attributes: attrs.into_iter().map(|(k, t)| (k.into(), t)).collect(),
            optional: BTreeSet::new(),
        }
    }
}

impl Type {
    /// An object type from `(name, type)` pairs.
    pub fn object(attrs: impl IntoIterator<Item = (impl Into<String>, Type)>) -> Type {
        Type::Object(ObjectType::new(attrs))
    }

    /// An object type whose attributes named in `optional` are optional.
    pub fn object_with_optional(
        attrs: impl IntoIterator<Item = (impl Into<String>, Type)>,
        optional: impl IntoIterator<Item = impl Into<String>>,
    ) -> Type {
        let mut o = ObjectType::new(attrs);
        o.optional = optional.into_iter().map(Into::into).collect();
        Type::Object(o)
    }

    /// `["list", t]`.
    pub fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }

    /// `["set", t]`.
    pub fn set(t: Type) -> Type {
        Type::Set(Box::new(t))
    }

    /// `["map", t]`.
    pub fn map(t: Type) -> Type {
        Type::Map(Box::new(t))
    }

    /// `["tuple", [ts...]]`.
    pub fn tuple(ts: impl IntoIterator<Item = Type>) -> Type {
        Type::Tuple(ts.into_iter().collect())
    }

    /// True for list, set and map types (the ones with length refinements).
    pub fn is_collection(&self) -> bool {
        matches!(self, Type::List(_) | Type::Set(_) | Type::Map(_))
    }

    /// The element type of a list, set or map.
    pub fn element_type(&self) -> Option<&Type> {
        match self {
            Type::List(t) | Type::Set(t) | Type::Map(t) => Some(t),
            _ => None,
        }
    }

    /// The attributes of an object type.
    pub fn object_type(&self) -> Option<&ObjectType> {
        match self {
            Type::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The compact JSON form used in schemas and dynamic values.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Type::Bool => J::from("bool"),
            Type::Number => J::from("number"),
            Type::String => J::from("string"),
            Type::Dynamic => J::from("dynamic"),
            Type::List(t) => J::Array(vec![J::from("list"), t.to_json()]),
            Type::Set(t) => J::Array(vec![J::from("set"), t.to_json()]),
            Type::Map(t) => J::Array(vec![J::from("map"), t.to_json()]),
            Type::Object(o) => {
                let attrs: serde_json::Map<String, J> = o
                    .attributes
                    .iter()
                    .map(|(k, t)| (k.clone(), t.to_json()))
                    .collect();
                let mut parts = vec![J::from("object"), J::Object(attrs)];
                if !o.optional.is_empty() {
                    parts.push(J::Array(
                        o.optional.iter().map(|n| J::from(n.as_str())).collect(),
                    ));
                }
                J::Array(parts)
            }
            Type::Tuple(ts) => J::Array(vec![
                J::from("tuple"),
                J::Array(ts.iter().map(Type::to_json).collect()),
            ]),
        }
    }

    /// [`Type::to_json`] serialized to bytes (as sent in `Schema.Attribute.type`).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        self.to_json().to_string().into_bytes()
    }

    /// Parses the compact JSON form; nesting deeper than [`MAX_DEPTH`] is an
    /// error.
    pub fn from_json(v: &serde_json::Value) -> Result<Type, ValueError> {
        type_from_json(v, 0)
    }

    /// Parses the compact JSON form from bytes.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Type, ValueError> {
        let tree = super::jsonparse::parse(bytes).map_err(|m| invalid(&[], m))?;
        Type::from_json(&tree.to_serde())
    }

    /// A short human name: `string`, `list of number`, `object`, ...
    pub fn friendly_name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => f.write_str("bool"),
            Type::Number => f.write_str("number"),
            Type::String => f.write_str("string"),
            Type::Dynamic => f.write_str("dynamic"),
            Type::List(t) => write!(f, "list of {t}"),
            Type::Set(t) => write!(f, "set of {t}"),
            Type::Map(t) => write!(f, "map of {t}"),
            Type::Object(_) => f.write_str("object"),
            Type::Tuple(_) => f.write_str("tuple"),
        }
    }
}

fn type_from_json(v: &serde_json::Value, depth: usize) -> Result<Type, ValueError> {
    use serde_json::Value as J;
    if depth > MAX_DEPTH {
        return Err(invalid(&[], "type description is nested too deeply"));
    }
    match v {
        J::String(s) => match s.as_str() {
            "bool" => Ok(Type::Bool),
            "number" => Ok(Type::Number),
            "string" => Ok(Type::String),
            "dynamic" => Ok(Type::Dynamic),
            other => Err(invalid(
                &[],
                format!("invalid primitive type name {other:?}"),
            )),
        },
        J::Array(parts) => {
            let kind = parts
                .first()
                .and_then(J::as_str)
                .ok_or_else(|| invalid(&[], "invalid complex type kind name"))?;
            let arg = |n: usize| -> Result<&J, ValueError> {
                if parts.len() != n {
                    return Err(invalid(
                        &[],
                        format!("type {kind:?} needs {} arguments", n - 1),
                    ));
                }
                Ok(&parts[1])
            };
            match kind {
                "list" => Ok(Type::list(type_from_json(arg(2)?, depth + 1)?)),
                "set" => Ok(Type::set(type_from_json(arg(2)?, depth + 1)?)),
                "map" => Ok(Type::map(type_from_json(arg(2)?, depth + 1)?)),
                "tuple" => {
                    let J::Array(elems) = arg(2)? else {
                        return Err(invalid(&[], "tuple type needs an array of types"));
                    };
                    let ts = elems
                        .iter()
                        .map(|e| type_from_json(e, depth + 1))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Type::Tuple(ts))
                }
                "object" => {
                    if parts.len() != 2 && parts.len() != 3 {
                        return Err(invalid(&[], "object type needs 1 or 2 arguments"));
                    }
                    let J::Object(attrs) = &parts[1] else {
                        return Err(invalid(&[], "object type needs a JSON object of types"));
                    };
                    let mut o = ObjectType::default();
                    for (name, t) in attrs {
                        o.attributes
                            .insert(name.clone(), type_from_json(t, depth + 1)?);
                    }
                    if let Some(opt) = parts.get(2) {
                        let J::Array(names) = opt else {
                            return Err(invalid(&[], "optional attributes must be an array"));
                        };
                        for n in names {
                            let n = n.as_str().ok_or_else(|| {
                                invalid(&[], "optional attribute names must be strings")
                            })?;
                            if !o.attributes.contains_key(n) {
                                return Err(invalid(
                                    &[],
                                    format!("optional attribute {n:?} is not an attribute"),
                                ));
                            }
                            o.optional.insert(n.to_string());
                        }
                    }
                    Ok(Type::Object(o))
                }
                other => Err(invalid(&[], format!("invalid complex type kind {other:?}"))),
            }
        }
        _ => Err(invalid(&[], "invalid type description")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_forms() {
        let t = Type::object_with_optional(
            [
                ("a", Type::String),
                ("b", Type::list(Type::Number)),
                ("c", Type::tuple([Type::Bool, Type::Dynamic])),
                ("d", Type::map(Type::set(Type::String))),
            ],
            ["b"],
        );
        let j = t.to_json();
        assert_eq!(
            j,
            json!(["object", {
                "a": "string",
                "b": ["list", "number"],
                "c": ["tuple", ["bool", "dynamic"]],
                "d": ["map", ["set", "string"]],
            }, ["b"]])
        );
        assert_eq!(Type::from_json(&j).unwrap(), t);
        assert_eq!(Type::from_json_bytes(&t.to_json_bytes()).unwrap(), t);
        assert_eq!(Type::String.to_json_bytes(), b"\"string\"");
    }

    #[test]
    fn bad_forms() {
        for bad in [
            json!("str"),
            json!(["list"]),
            json!(["list", "string", "x"]),
            json!(["object", ["a"]]),
            json!(["object", {"a": "string"}, ["b"]]),
            json!(["tuple", "string"]),
            json!(3),
            json!([]),
        ] {
            assert!(Type::from_json(&bad).is_err(), "{bad}");
        }
        let mut deep = json!("string");
        for _ in 0..200 {
            deep = json!(["list", deep]);
        }
        assert!(Type::from_json(&deep).is_err());
    }
}
