//! The cty value model of Terraform and its two wire encodings.
//!
//! A [`Value`] is always read and written against a schema [`Type`]:
//! [`decode_msgpack`] / [`encode_msgpack`] handle the `msgpack` field of a
//! `DynamicValue` (what Terraform normally sends and what providers must
//! send back), [`decode_json`] / [`encode_json`] the `json` field and raw
//! state JSON. [`from_value`] / [`to_value`] bridge to Rust types via serde.
//!
//! How the special cases surface:
//! * null is [`Value::Null`] whatever the slot's type;
//! * unknown is [`Value::Unknown`], carrying any [`Refinements`] Terraform
//!   sent; unrefined unknowns encode as extension 0, refined ones as
//!   extension 12 (refinements that do not apply to the slot's type are
//!   dropped when encoding);
//! * a known value in a `dynamic` slot decodes as
//!   [`Value::Dynamic`]`(concrete type, value)`; null and unknown in such a
//!   slot stay plain `Null`/`Unknown`. When encoding into a `dynamic` slot an
//!   unwrapped value is accepted and its type inferred with
//!   [`Value::implied_type`]; in non-dynamic slots a `Dynamic` wrapper is
//!   ignored;
//! * objects always have every attribute of their type after decoding
//!   (absent ones become null), and encoding writes every attribute;
//! * sets keep their received order in the `Vec`, and encoding sorts the
//!   encoded elements so equal sets give identical bytes.
//!
//! Decoding never panics: malformed input, nesting deeper than
//! [`MAX_DEPTH`] and oversized length prefixes all give a [`ValueError`].

mod de;
mod error;
mod json;
mod jsonparse;
mod msgpack;
mod number;
mod ser;
mod types;
#[allow(clippy::module_inception)]
mod value;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub(crate) use de::TF_NEWTYPE;
pub use de::{ValueDeserializer, from_value};
pub use error::{ErrorKind, PathStep, ValueError, format_path};
pub use json::{decode_json, encode_json};
pub use msgpack::{decode_msgpack, encode_msgpack};
pub use number::Number;
pub(crate) use ser::TF_UNKNOWN;
pub use ser::to_value;
pub use types::{ObjectType, Type};
pub use value::{NumberBound, Refinements, Unknown, Value};

/// The deepest nesting of values (collections, objects and dynamic
/// wrappers) accepted by the decoders and produced by the encoders.
pub const MAX_DEPTH: usize = 64;

/// The schema types the fuzz targets decode against.
#[doc(hidden)]
pub fn fuzz_types() -> Vec<Type> {
    vec![
        Type::Dynamic,
        Type::String,
        Type::Number,
        Type::list(Type::Dynamic),
        Type::object([
            ("s", Type::String),
            ("n", Type::Number),
            ("b", Type::Bool),
            ("l", Type::list(Type::String)),
            (
                "set",
                Type::set(Type::object([("x", Type::Number), ("d", Type::Dynamic)])),
            ),
            ("m", Type::map(Type::list(Type::Number))),
            ("t", Type::tuple([Type::String, Type::Dynamic])),
        ]),
    ]
}

/// Fuzz entry point for msgpack: decodes `data` against each of
/// [`fuzz_types`]; whatever decodes must re-encode stably. Panics only on a
/// codec bug.
#[doc(hidden)]
pub fn fuzz_decode_msgpack(data: &[u8]) {
    for ty in fuzz_types() {
        if let Ok(v) = decode_msgpack(data, &ty) {
            let bytes = encode_msgpack(&v, &ty).expect("a decoded value re-encodes");
            let again = decode_msgpack(&bytes, &ty).expect("a re-encoded value decodes");
            let bytes2 = encode_msgpack(&again, &ty).expect("a decoded value re-encodes");
            assert_eq!(bytes, bytes2, "msgpack re-encoding is stable");
            let _ = from_value::<serde_json::Value>(&v);
        }
    }
}

/// Fuzz entry point for JSON: like [`fuzz_decode_msgpack`], and a decoded
/// JSON value must also survive a msgpack round trip.
#[doc(hidden)]
pub fn fuzz_decode_json(data: &[u8]) {
    for ty in fuzz_types() {
        if let Ok(v) = decode_json(data, &ty) {
            let bytes = encode_json(&v, &ty).expect("a decoded value re-encodes");
            let again = decode_json(&bytes, &ty).expect("a re-encoded value decodes");
            let bytes2 = encode_json(&again, &ty).expect("a decoded value re-encodes");
            assert_eq!(bytes, bytes2, "JSON re-encoding is stable");
            let msgpack = encode_msgpack(&v, &ty).expect("a JSON value encodes as msgpack");
            decode_msgpack(&msgpack, &ty).expect("and decodes back");
            let _ = from_value::<serde_json::Value>(&v);
        }
    }
}

/// Runs both fuzz entry points on `data`.
#[doc(hidden)]
pub fn fuzz_decode_all(data: &[u8]) {
    fuzz_decode_msgpack(data);
    fuzz_decode_json(data);
}
