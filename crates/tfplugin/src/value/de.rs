//! Typed decoding: a serde `Deserializer` over [`Value`], so that provider
//! code can read configuration into plain Rust structs.

use std::collections::btree_map;

use serde::de::{self, DeserializeSeed, Visitor};

use super::error::{ErrorKind, PathStep, ValueError, mismatch};
use super::number::{Number, Repr};
use super::value::Value;

/// The newtype name through which [`crate::tf::Tf`] asks a [`ValueDeserializer`] for
/// the null / unknown / known state of a value (answered as an enum of those variants).
pub(crate) const TF_NEWTYPE: &str = "tfplugin::Tf";

/// Decodes a value into a Rust type (objects into structs, null into `None`,
/// lists/sets/tuples into sequences, maps into maps, numbers into ints or
/// floats with range checks).
///
/// An unknown value anywhere that the target reads gives an error of kind
/// [`ErrorKind::NotKnown`] whose path says where.
pub fn from_value<T: de::DeserializeOwned>(v: &Value) -> Result<T, ValueError> {
    T::deserialize(ValueDeserializer::new(v)).map_err(|e| e.locate(&[]))
}

/// A serde deserializer reading from a borrowed [`Value`].
pub struct ValueDeserializer<'de> {
    v: &'de Value,
    path: Vec<PathStep>,
}

impl<'de> ValueDeserializer<'de> {
    /// A deserializer for `v` at the root path.
    pub fn new(v: &'de Value) -> ValueDeserializer<'de> {
        ValueDeserializer {
            v,
            path: Vec::new(),
        }
    }

    fn child(&self, v: &'de Value, step: PathStep) -> ValueDeserializer<'de> {
        let mut path = self.path.clone();
        path.push(step);
        ValueDeserializer { v, path }
    }

    /// The value with dynamic wrappers removed; unknown is an error.
    fn known(&self) -> Result<&'de Value, ValueError> {
        let v = self.v.unwrap_dynamic();
        if let Value::Unknown(_) = v {
            return Err(ValueError::new(
                ErrorKind::NotKnown,
                &self.path,
                "value is not known yet",
            ));
        }
        Ok(v)
    }

    fn expected(&self, what: &str, v: &Value) -> ValueError {
        mismatch(
            &self.path,
            format!("expected {what}, found {}", v.kind_name()),
        )
    }

    fn number(&self) -> Result<&'de Number, ValueError> {
        match self.known()? {
            Value::Number(n) => Ok(n),
            other => Err(self.expected("number", other)),
        }
    }

    fn integer(&self, target: &str) -> Result<i128, ValueError> {
        let n = self.number()?;
        let out_of_range = || {
            mismatch(
                &self.path,
                format!("number {n} is out of range for {target}"),
            )
        };
        let fractional = || mismatch(&self.path, format!("expected a whole number, found {n}"));
        if !n.is_integer() {
            return Err(fractional());
        }
        n.to_i128().ok_or_else(out_of_range)
    }

    fn done<T>(path: &[PathStep], r: Result<T, ValueError>) -> Result<T, ValueError> {
        r.map_err(|e| e.locate(path))
    }
}

macro_rules! int_method {
    ($method:ident, $visit:ident, $t:ty) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
            let i = self.integer(stringify!($t))?;
            let x = <$t>::try_from(i).map_err(|_| {
                mismatch(
                    &self.path,
                    format!("number {i} is out of range for {}", stringify!($t)),
                )
            })?;
            Self::done(&self.path, visitor.$visit(x))
        }
    };
}

impl<'de> de::Deserializer<'de> for ValueDeserializer<'de> {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        let r = match self.known()? {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match n.repr() {
                Repr::Int(i) => visitor.visit_i64(*i),
                Repr::UInt(u) => visitor.visit_u64(*u),
                _ => visitor.visit_f64(n.as_f64()),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::List(vs) | Value::Set(vs) | Value::Tuple(vs) => {
                visitor.visit_seq(SeqAccess::new(&self, vs))
            }
            Value::Map(m) => visitor.visit_map(MapAccess::new(&self, m, false)),
            Value::Object(m) => visitor.visit_map(MapAccess::new(&self, m, true)),
            Value::Unknown(_) | Value::Dynamic(..) => unreachable_value(&self.path),
        };
        Self::done(&self.path, r)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::Bool(b) => Self::done(&self.path, visitor.visit_bool(*b)),
            other => Err(self.expected("bool", other)),
        }
    }

    int_method!(deserialize_i8, visit_i8, i8);
    int_method!(deserialize_i16, visit_i16, i16);
    int_method!(deserialize_i32, visit_i32, i32);
    int_method!(deserialize_i64, visit_i64, i64);
    int_method!(deserialize_i128, visit_i128, i128);
    int_method!(deserialize_u8, visit_u8, u8);
    int_method!(deserialize_u16, visit_u16, u16);
    int_method!(deserialize_u32, visit_u32, u32);
    int_method!(deserialize_u64, visit_u64, u64);
    int_method!(deserialize_u128, visit_u128, u128);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        let f = self.number()?.as_f64();
        Self::done(&self.path, visitor.visit_f32(f as f32))
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        let f = self.number()?.as_f64();
        Self::done(&self.path, visitor.visit_f64(f))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::String(s) => {
                let mut cs = s.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) => Self::done(&self.path, visitor.visit_char(c)),
                    _ => Err(mismatch(&self.path, "expected a single character")),
                }
            }
            other => Err(self.expected("string", other)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::String(s) => Self::done(&self.path, visitor.visit_borrowed_str(s)),
            other => Err(self.expected("string", other)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::String(s) => Self::done(&self.path, visitor.visit_borrowed_bytes(s.as_bytes())),
            Value::List(_) | Value::Tuple(_) => self.deserialize_seq(visitor),
            other => Err(self.expected("string", other)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::Null => Self::done(&self.path, visitor.visit_none()),
            _ => {
                let path = self.path.clone();
                Self::done(&path, visitor.visit_some(self))
            }
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::Null => Self::done(&self.path, visitor.visit_unit()),
            other => Err(self.expected("null", other)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        let path = self.path.clone();
        if name == TF_NEWTYPE {
            // `Tf<T>` asks through this name: answer with its three states as an enum,
            // so that an unknown value is a value rather than an error.
            let variant = match self.v.unwrap_dynamic() {
                Value::Null => "null",
                Value::Unknown(_) => "unknown",
                _ => "known",
            };
            return Self::done(
                &path,
                visitor.visit_enum(EnumAccess {
                    variant,
                    content: self,
                }),
            );
        }
        Self::done(&path, visitor.visit_newtype_struct(self))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::List(vs) | Value::Set(vs) | Value::Tuple(vs) => {
                Self::done(&self.path, visitor.visit_seq(SeqAccess::new(&self, vs)))
            }
            other => Err(self.expected("list, set or tuple", other)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::Map(m) => Self::done(
                &self.path,
                visitor.visit_map(MapAccess::new(&self, m, false)),
            ),
            Value::Object(m) => Self::done(
                &self.path,
                visitor.visit_map(MapAccess::new(&self, m, true)),
            ),
            other => Err(self.expected("map or object", other)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::Map(_) | Value::Object(_) => self.deserialize_map(visitor),
            other => Err(self.expected("object", other)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        match self.known()? {
            Value::String(s) => {
                let d = de::value::BorrowedStrDeserializer::<ValueError>::new(s);
                Self::done(&self.path, visitor.visit_enum(d))
            }
            Value::Map(m) | Value::Object(m) if m.len() == 1 => {
                let Some((k, v)) = m.iter().next() else {
                    return Err(self.expected("a single-entry object", self.v));
                };
                let content = self.child(v, PathStep::Attr(k.clone()));
                Self::done(
                    &self.path,
                    visitor.visit_enum(EnumAccess {
                        variant: k,
                        content,
                    }),
                )
            }
            other => Err(self.expected("string or single-attribute object", other)),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        visitor.visit_unit()
    }
}

fn unreachable_value<T>(path: &[PathStep]) -> Result<T, ValueError> {
    // `known()` strips dynamic wrappers and rejects unknowns first.
    Err(mismatch(path, "internal error: unexpected value wrapper"))
}

struct SeqAccess<'de> {
    parent: Vec<PathStep>,
    items: std::iter::Enumerate<std::slice::Iter<'de, Value>>,
    len: usize,
}

impl<'de> SeqAccess<'de> {
    fn new(d: &ValueDeserializer<'de>, vs: &'de [Value]) -> SeqAccess<'de> {
        SeqAccess {
            parent: d.path.clone(),
            items: vs.iter().enumerate(),
            len: vs.len(),
        }
    }
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'de> {
    type Error = ValueError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ValueError> {
        let Some((i, v)) = self.items.next() else {
            return Ok(None);
        };
        self.len -= 1;
        let mut path = self.parent.clone();
        path.push(PathStep::Index(i as u64));
        let d = ValueDeserializer {
            v,
            path: path.clone(),
        };
        seed.deserialize(d).map(Some).map_err(|e| e.locate(&path))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

struct MapAccess<'de> {
    parent: Vec<PathStep>,
    entries: btree_map::Iter<'de, String, Value>,
    pending: Option<(&'de String, &'de Value)>,
    is_object: bool,
}

impl<'de> MapAccess<'de> {
    fn new(
        d: &ValueDeserializer<'de>,
        m: &'de std::collections::BTreeMap<String, Value>,
        is_object: bool,
    ) -> MapAccess<'de> {
        MapAccess {
            parent: d.path.clone(),
            entries: m.iter(),
            pending: None,
            is_object,
        }
    }
}

impl<'de> de::MapAccess<'de> for MapAccess<'de> {
    type Error = ValueError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ValueError> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.pending = Some((k, v));
        let d = de::value::BorrowedStrDeserializer::<ValueError>::new(k);
        seed.deserialize(d)
            .map(Some)
            .map_err(|e| e.locate(&self.parent))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ValueError> {
        let Some((k, v)) = self.pending.take() else {
            return Err(ValueError::new(
                ErrorKind::Custom,
                &self.parent,
                "map value requested before its key",
            ));
        };
        let mut path = self.parent.clone();
        path.push(if self.is_object {
            PathStep::Attr(k.clone())
        } else {
            PathStep::Key(k.clone())
        });
        let d = ValueDeserializer {
            v,
            path: path.clone(),
        };
        seed.deserialize(d).map_err(|e| e.locate(&path))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

struct EnumAccess<'de> {
    variant: &'de str,
    content: ValueDeserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess<'de> {
    type Error = ValueError;
    type Variant = ValueDeserializer<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), ValueError> {
        let d = de::value::BorrowedStrDeserializer::<ValueError>::new(self.variant);
        let v = seed.deserialize(d)?;
        Ok((v, self.content))
    }
}

impl<'de> de::VariantAccess<'de> for ValueDeserializer<'de> {
    type Error = ValueError;

    fn unit_variant(self) -> Result<(), ValueError> {
        match self.known()? {
            Value::Null => Ok(()),
            other => Err(self.expected("null", other)),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, ValueError> {
        let path = self.path.clone();
        seed.deserialize(self).map_err(|e| e.locate(&path))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}
