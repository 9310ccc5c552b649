//! The dynamic value tree: what a decoded `DynamicValue` looks like.

use std::collections::BTreeMap;

use super::error::PathStep;
use super::number::Number;
use super::types::{ObjectType, Type};

/// A cty value. Which variants are valid is decided by the schema type the
/// value is encoded against (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A null of whatever type the slot has.
    Null,
    /// A value only decided during apply, possibly with refinements.
    Unknown(Unknown),
    /// A known bool.
    Bool(bool),
    /// A known number.
    Number(Number),
    /// A known string.
    String(String),
    /// A known list.
    List(Vec<Value>),
    /// A known set (order as received; encoding keeps this order).
    Set(Vec<Value>),
    /// A known map.
    Map(BTreeMap<String, Value>),
    /// A known object; absent attributes encode as null.
    Object(BTreeMap<String, Value>),
    /// A known tuple.
    Tuple(Vec<Value>),
    /// A value in a `dynamic` schema slot together with its concrete type, as
    /// received on the wire; re-encoded with that type.
    Dynamic(Type, Box<Value>),
}

/// An unknown value and what is known about its eventual value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unknown {
    /// Constraints on the eventual value (all `None` for a plain unknown).
    pub refinements: Refinements,
}

/// Refinements of an unknown value (Terraform 1.6+, msgpack extension 12).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Refinements {
    /// `Some(true)`: definitely not null; `Some(false)`: definitely null;
    /// `None`: may or may not be null.
    pub not_null: Option<bool>,
    /// Strings only: the eventual string starts with this prefix.
    pub string_prefix: Option<String>,
    /// Numbers only: lower bound.
    pub number_lower: Option<NumberBound>,
    /// Numbers only: upper bound.
    pub number_upper: Option<NumberBound>,
    /// Lists, sets and maps only: inclusive lower bound on the length.
    pub length_lower: Option<u64>,
    /// Lists, sets and maps only: inclusive upper bound on the length.
    pub length_upper: Option<u64>,
}

/// One end of a number range refinement.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberBound {
    /// The bound.
    pub value: Number,
    /// Whether the bound itself is a possible value.
    pub inclusive: bool,
}

impl Refinements {
    /// True when no refinement is set (encodes as a plain unknown).
    pub fn is_empty(&self) -> bool {
        *self == Refinements::default()
    }
}

impl Unknown {
    /// A plain unknown with no refinements.
    pub fn new() -> Unknown {
        Unknown::default()
    }

    /// An unknown known not to be null.
    pub fn not_null() -> Unknown {
        Unknown {
            refinements: Refinements {
                not_null: Some(true),
                ..Refinements::default()
            },
        }
    }
}

impl Value {
    /// A plain unknown value.
    pub fn unknown() -> Value {
        Value::Unknown(Unknown::new())
    }

    /// A string value.
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// A number value.
    pub fn number(n: impl Into<Number>) -> Value {
        Value::Number(n.into())
    }

    /// An object value from `(name, value)` pairs.
    pub fn object(attrs: impl IntoIterator<Item = (impl Into<String>, Value)>) -> Value {
        Value::Object(attrs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A map value from `(key, value)` pairs.
    pub fn map(entries: impl IntoIterator<Item = (impl Into<String>, Value)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// The value inside any [`Value::Dynamic`] wrappers.
    pub fn unwrap_dynamic(&self) -> &Value {
        let mut v = self;
        while let Value::Dynamic(_, inner) = v {
            v = inner;
        }
        v
    }

    /// True for a (possibly dynamic-wrapped) null.
    pub fn is_null(&self) -> bool {
        matches!(self.unwrap_dynamic(), Value::Null)
    }

    /// True unless this value itself is unknown (nested values may be).
    pub fn is_known(&self) -> bool {
        !matches!(self.unwrap_dynamic(), Value::Unknown(_))
    }

    /// True if neither this value nor anything inside it is unknown.
    pub fn is_wholly_known(&self) -> bool {
        match self.unwrap_dynamic() {
            Value::Unknown(_) => false,
            Value::List(vs) | Value::Set(vs) | Value::Tuple(vs) => {
                vs.iter().all(Value::is_wholly_known)
            }
            Value::Map(m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    /// An attribute of an object; `None` if absent or not an object.
    pub fn get_attr(&self, name: &str) -> Option<&Value> {
        match self.unwrap_dynamic() {
            Value::Object(m) => m.get(name),
            _ => None,
        }
    }

    /// An element of a map.
    pub fn get_key(&self, key: &str) -> Option<&Value> {
        match self.unwrap_dynamic() {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// An element of a list, set or tuple.
    pub fn get_index(&self, i: usize) -> Option<&Value> {
        self.as_elements().and_then(|vs| vs.get(i))
    }

    /// Follows a path of steps; `None` if any step does not exist.
    pub fn get_path(&self, path: &[PathStep]) -> Option<&Value> {
        let mut v = self;
        for step in path {
            v = match step {
                PathStep::Attr(a) => v.get_attr(a)?,
                PathStep::Key(k) => v.get_key(k)?,
                PathStep::Index(i) => v.get_index(usize::try_from(*i).ok()?)?,
            };
        }
        Some(v)
    }

    /// The string, if this is a known string.
    pub fn as_str(&self) -> Option<&str> {
        match self.unwrap_dynamic() {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bool, if this is a known bool.
    pub fn as_bool(&self) -> Option<bool> {
        match self.unwrap_dynamic() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is a known number.
    pub fn as_number(&self) -> Option<&Number> {
        match self.unwrap_dynamic() {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The number as `i64`, if this is a known integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The elements of a list, set or tuple.
    pub fn as_elements(&self) -> Option<&[Value]> {
        match self.unwrap_dynamic() {
            Value::List(vs) | Value::Set(vs) | Value::Tuple(vs) => Some(vs),
            _ => None,
        }
    }

    /// The entries of a map or the attributes of an object.
    pub fn as_entries(&self) -> Option<&BTreeMap<String, Value>> {
        match self.unwrap_dynamic() {
            Value::Map(m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The unknown marker, if this value is unknown.
    pub fn as_unknown(&self) -> Option<&Unknown> {
        match self.unwrap_dynamic() {
            Value::Unknown(u) => Some(u),
            _ => None,
        }
    }

    /// Equality that compares sets as unordered collections (the derived
    /// `==` compares set elements in order).
    pub fn semantically_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Set(x), Value::Set(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                let mut used = vec![false; y.len()];
                x.iter().all(|xv| {
                    let hit = (0..y.len()).find(|&j| !used[j] && xv.semantically_equal(&y[j]));
                    hit.map(|j| used[j] = true).is_some()
                })
            }
            (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.semantically_equal(b))
            }
            (Value::Map(x), Value::Map(y)) | (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((ka, va), (kb, vb))| ka == kb && va.semantically_equal(vb))
            }
            (Value::Dynamic(ta, va), Value::Dynamic(tb, vb)) => {
                ta == tb && va.semantically_equal(vb)
            }
            _ => self == other,
        }
    }

    /// A short name of the variant for messages: `string`, `null`, ...
    pub fn kind_name(&self) -> &'static str {
        match self.unwrap_dynamic() {
            Value::Null => "null",
            Value::Unknown(_) => "unknown value",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::Map(_) => "map",
            Value::Object(_) => "object",
            Value::Tuple(_) => "tuple",
            Value::Dynamic(..) => "dynamic",
        }
    }

    /// The type a value would have if put into a `dynamic` slot without a
    /// [`Value::Dynamic`] wrapper. Nulls and unknowns give `Dynamic`; lists,
    /// sets and maps take their element type from the first element that is
    /// not null or unknown (`Dynamic` if none).
    pub fn implied_type(&self) -> Type {
        match self {
            Value::Null | Value::Unknown(_) => Type::Dynamic,
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(vs) => Type::list(implied_element(vs.iter())),
            Value::Set(vs) => Type::set(implied_element(vs.iter())),
            Value::Map(m) => Type::map(implied_element(m.values())),
            Value::Object(m) => Type::Object(ObjectType::new(
                m.iter().map(|(k, v)| (k.clone(), v.implied_type())),
            )),
            Value::Tuple(vs) => Type::Tuple(vs.iter().map(Value::implied_type).collect()),
            Value::Dynamic(t, _) => t.clone(),
        }
    }
}

fn implied_element<'a>(mut it: impl Iterator<Item = &'a Value>) -> Type {
    it.find(|v| !matches!(v, Value::Null | Value::Unknown(_)))
        .map(Value::implied_type)
        .unwrap_or(Type::Dynamic)
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n.into())
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(n.into())
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n.into())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors() {
        let v = Value::object([
            ("name", Value::string("a")),
            ("count", Value::from(3)),
            ("tags", Value::List(vec![Value::unknown()])),
            (
                "dyn",
                Value::Dynamic(Type::String, Box::new(Value::string("x"))),
            ),
        ]);
        assert!(v.is_known());
        assert!(!v.is_wholly_known());
        assert_eq!(v.get_attr("name").and_then(Value::as_str), Some("a"));
        assert_eq!(v.get_attr("count").and_then(Value::as_i64), Some(3));
        assert_eq!(v.get_attr("dyn").and_then(Value::as_str), Some("x"));
        assert!(v.get_attr("missing").is_none());
        let p = [PathStep::Attr("tags".into()), PathStep::Index(0)];
        assert!(!v.get_path(&p).unwrap().is_known());
        assert_eq!(
            v.implied_type(),
            Type::object([
                ("name", Type::String),
                ("count", Type::Number),
                ("tags", Type::list(Type::Dynamic)),
                ("dyn", Type::String),
            ])
        );
    }
}
