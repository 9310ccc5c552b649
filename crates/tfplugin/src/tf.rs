//! Typed values: [`Tf<T>`], a Terraform value that may be null, unknown (decided only at
//! apply) or known, and [`decode`] / [`encode`], the serde bridge with errors as
//! diagnostics on the attribute path.
//!
//! `Option<T>` reads null as `None` but fails on an unknown, which is what configuration
//! holds at validate and plan time whenever a value depends on another resource. A field
//! of type `Tf<T>` decodes all three states, so a whole configuration can be read into a
//! struct before apply.

use crate::diag::{AttributePath, Diagnostic, Diagnostics, PathStep};
use crate::value::{self, Type, Value, ValueError};
use serde::de::{self, DeserializeOwned, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// A Terraform value of Rust type `T`: null, unknown until apply, or known. Decoded
/// objects carry every attribute; for structs decoded from hand-built values that may
/// lack one, mark the field `#[serde(default)]` (absent is then null).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Tf<T> {
    /// Not set (null).
    #[default]
    Null,
    /// Not known until apply.
    Unknown,
    /// A known value.
    Known(T),
}

impl<T> Tf<T> {
    /// True when null.
    pub fn is_null(&self) -> bool {
        matches!(self, Tf::Null)
    }

    /// True when unknown.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Tf::Unknown)
    }

    /// True when known (and so not null).
    pub fn is_known(&self) -> bool {
        matches!(self, Tf::Known(_))
    }

    /// The known value, if any.
    pub fn known(&self) -> Option<&T> {
        match self {
            Tf::Known(v) => Some(v),
            _ => None,
        }
    }

    /// The known value, if any, by value.
    pub fn into_known(self) -> Option<T> {
        match self {
            Tf::Known(v) => Some(v),
            _ => None,
        }
    }

    /// A `Tf` of a reference to the known value.
    pub fn as_ref(&self) -> Tf<&T> {
        match self {
            Tf::Null => Tf::Null,
            Tf::Unknown => Tf::Unknown,
            Tf::Known(v) => Tf::Known(v),
        }
    }

    /// Maps the known value, keeping null and unknown.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Tf<U> {
        match self {
            Tf::Null => Tf::Null,
            Tf::Unknown => Tf::Unknown,
            Tf::Known(v) => Tf::Known(f(v)),
        }
    }

    /// The known value, or `default` when null; `None` when unknown.
    pub fn known_or(self, default: T) -> Option<T> {
        match self {
            Tf::Null => Some(default),
            Tf::Unknown => None,
            Tf::Known(v) => Some(v),
        }
    }
}

impl<T> From<Option<T>> for Tf<T> {
    /// `None` is null, `Some` is known.
    fn from(o: Option<T>) -> Self {
        o.map_or(Tf::Null, Tf::Known)
    }
}

impl<T: Serialize> Serialize for Tf<T> {
    /// Null as none, known as the value, unknown as an unknown [`Value`] under
    /// [`value::to_value`] (and as null under any other serializer).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tf::Null => s.serialize_none(),
            Tf::Unknown => s.serialize_unit_struct(value::TF_UNKNOWN),
            Tf::Known(v) => s.serialize_some(v),
        }
    }
}

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for Tf<T> {
    /// From a [`Value`] all three states; from any other format null or known.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(value::TF_NEWTYPE, TfVisitor(PhantomData))
    }
}

struct TfVisitor<T>(PhantomData<T>);

impl<'de, T: de::Deserialize<'de>> Visitor<'de> for TfVisitor<T> {
    type Value = Tf<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value that may be null or unknown")
    }

    /// Formats other than [`Value`]: null or known, through `Option`.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        <Option<T> as de::Deserialize>::deserialize(d).map(Tf::from)
    }

    /// [`value::ValueDeserializer`] answers with the state as the variant name.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        let (state, content): (String, A::Variant) = data.variant()?;
        match state.as_str() {
            "null" => Ok(Tf::Null),
            "unknown" => Ok(Tf::Unknown),
            _ => content.newtype_variant::<T>().map(Tf::Known),
        }
    }
}

/// Converts a codec path into a diagnostic's attribute path.
pub fn attribute_path(steps: &[value::PathStep]) -> AttributePath {
    AttributePath(
        steps
            .iter()
            .map(|s| match s {
                value::PathStep::Attr(a) => PathStep::Attr(a.clone()),
                value::PathStep::Key(k) => PathStep::Key(k.clone()),
                value::PathStep::Index(i) => PathStep::Index(i64::try_from(*i).unwrap_or(i64::MAX)),
            })
            .collect(),
    )
}

/// A decoding error as a diagnostic on the attribute it is about.
pub fn value_error_diagnostic(e: &ValueError) -> Diagnostic {
    let path = attribute_path(&e.path);
    let summary = if e.is_not_known() {
        "Value not yet known"
    } else {
        "Invalid value"
    };
    let detail = if path.is_empty() {
        e.message.clone()
    } else {
        format!("`{path}`: {}", e.message)
    };
    let d = Diagnostic::error(summary, detail);
    if path.is_empty() { d } else { d.at(path) }
}

/// Decodes `v` into `T`; a failure is an error diagnostic naming the attribute.
pub fn decode<T: DeserializeOwned>(v: &Value) -> Result<T, Diagnostics> {
    value::from_value(v).map_err(|e| value_error_diagnostic(&e).into())
}

/// Like [`decode`], but a null `v` (no prior state, a destroy) is `None`.
pub fn decode_opt<T: DeserializeOwned>(v: &Value) -> Result<Option<T>, Diagnostics> {
    if v.is_null() {
        return Ok(None);
    }
    decode(v).map(Some)
}

/// Encodes `v` as a value of the schema type `ty` (a block's `value_type()`).
pub fn encode<T: Serialize + ?Sized>(v: &T, ty: &Type) -> Result<Value, Diagnostics> {
    value::to_value(v, ty).map_err(|e| {
        Diagnostic::error(
            "Provider produced an invalid value",
            format!("The provider's value does not fit its schema: {e}."),
        )
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, serde::Serialize, PartialEq)]
    struct Config {
        name: Tf<String>,
        count: Tf<u32>,
        tags: Tf<Vec<String>>,
    }

    fn ty() -> Type {
        Type::object([
            ("name", Type::String),
            ("count", Type::Number),
            ("tags", Type::list(Type::String)),
        ])
    }

    #[test]
    fn decodes_null_unknown_and_known() {
        let v = Value::object([
            ("name", Value::string("a")),
            ("count", Value::unknown()),
            ("tags", Value::Null),
        ]);
        let c: Config = decode(&v).unwrap();
        assert_eq!(c.name, Tf::Known("a".to_string()));
        assert_eq!(c.count, Tf::Unknown);
        assert_eq!(c.tags, Tf::Null);
    }

    #[test]
    fn an_unknown_in_a_dynamic_wrapper_or_refined_is_still_unknown() {
        let v: Tf<String> = decode(&Value::Unknown(value::Unknown::not_null())).unwrap();
        assert!(v.is_unknown());
        let v: Tf<String> =
            decode(&Value::Dynamic(Type::String, Box::new(Value::string("x")))).unwrap();
        assert_eq!(v, Tf::Known("x".into()));
    }

    #[test]
    fn a_wrong_type_inside_is_an_error_on_its_path() {
        let v = Value::object([
            ("name", Value::string("a")),
            ("count", Value::string("many")),
            ("tags", Value::Null),
        ]);
        let d = decode::<Config>(&v).unwrap_err();
        assert_eq!(d.0[0].attribute, Some(AttributePath::attr("count")));
        assert_eq!(d.0[0].summary, "Invalid value");
    }

    #[test]
    fn option_still_refuses_unknown_with_the_path() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Strict {
            name: Option<String>,
        }
        let d = decode::<Strict>(&Value::object([("name", Value::unknown())])).unwrap_err();
        assert_eq!(d.0[0].summary, "Value not yet known");
        assert_eq!(d.0[0].attribute, Some(AttributePath::attr("name")));
    }

    #[test]
    fn encodes_unknown_as_unknown_and_round_trips() {
        let c = Config {
            name: Tf::Known("a".into()),
            count: Tf::Unknown,
            tags: Tf::Null,
        };
        let v = encode(&c, &ty()).unwrap();
        assert_eq!(v.get_attr("count"), Some(&Value::unknown()));
        assert_eq!(v.get_attr("tags"), Some(&Value::Null));
        assert_eq!(decode::<Config>(&v).unwrap(), c);
    }

    #[test]
    fn other_formats_see_null_or_known() {
        let t: Tf<u8> = serde_json::from_str("null").unwrap();
        assert!(t.is_null());
        let t: Tf<u8> = serde_json::from_str("7").unwrap();
        assert_eq!(t, Tf::Known(7));
        assert_eq!(serde_json::to_string(&Tf::<u8>::Unknown).unwrap(), "null");
    }

    #[test]
    fn absent_fields_need_serde_default() {
        #[derive(Debug, Deserialize)]
        struct Partial {
            #[serde(default)]
            a: Tf<String>,
        }
        let p: Partial = decode(&Value::Object(Default::default())).unwrap();
        assert!(p.a.is_null());
    }

    #[test]
    fn helpers() {
        assert_eq!(Tf::<u8>::Null.known_or(3), Some(3));
        assert_eq!(Tf::<u8>::Unknown.known_or(3), None);
        assert_eq!(Tf::Known(2).map(|x: u8| x * 2).into_known(), Some(4));
        assert_eq!(Tf::from(Some(1)), Tf::Known(1));
        assert_eq!(decode_opt::<Config>(&Value::Null).unwrap(), None);
    }
}
