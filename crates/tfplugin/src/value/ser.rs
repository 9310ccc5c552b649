//! Typed encoding: a serde `Serializer` that builds a [`Value`] guided by a
//! schema [`Type`], so provider code can return plain Rust structs.

use std::collections::BTreeMap;

use serde::ser::{self, Serialize};

use super::error::{PathStep, ValueError, mismatch};
use super::number::Number;
use super::types::{ObjectType, Type};
use super::value::Value;

/// The unit-struct name [`crate::tf::Tf::Unknown`] serializes as: [`to_value`] makes
/// it an unknown value, any other serializer a null.
pub(crate) const TF_UNKNOWN: &str = "tfplugin::Tf::Unknown";

/// Converts a Rust value into a [`Value`] conforming to `ty`.
///
/// Struct fields become object attributes (attributes the struct lacks
/// become null), `None` and `()` become null, sequences become lists, sets
/// or tuples as `ty` says, maps become maps or objects. In `dynamic` slots
/// the value's own shape decides (sequences become tuples, maps and structs
/// objects) and the result is wrapped in [`Value::Dynamic`]. Any mismatch is
/// an error naming the path.
pub fn to_value<T: Serialize + ?Sized>(v: &T, ty: &Type) -> Result<Value, ValueError> {
    v.serialize(Ser {
        ty: Some(ty),
        path: Vec::new(),
    })
    .map_err(|e| e.locate(&[]))
}

/// `ty: None` means "untyped": inside a dynamic slot.
struct Ser<'t> {
    ty: Option<&'t Type>,
    path: Vec<PathStep>,
}

fn wrap(v: Value) -> Value {
    match v {
        Value::Null => Value::Null,
        v => Value::Dynamic(v.implied_type(), Box::new(v)),
    }
}

impl<'t> Ser<'t> {
    fn scalar(self, v: Value, t: Type) -> Result<Value, ValueError> {
        match self.ty {
            None => Ok(v),
            Some(Type::Dynamic) => Ok(Value::Dynamic(t, Box::new(v))),
            Some(ty) if *ty == t => Ok(v),
            Some(ty) => Err(mismatch(&self.path, format!("expected {ty}, found {t}"))),
        }
    }

    fn number(self, n: Number) -> Result<Value, ValueError> {
        if !n.is_valid() {
            return Err(mismatch(&self.path, "NaN is not a valid number"));
        }
        self.scalar(Value::Number(n), Type::Number)
    }

    fn found(&self, what: &str) -> ValueError {
        match self.ty {
            Some(ty) => mismatch(&self.path, format!("expected {ty}, found {what}")),
            None => mismatch(&self.path, format!("{what} is not supported here")),
        }
    }

    fn seq(self, len: Option<usize>, what: &str) -> Result<SeqSer<'t>, ValueError> {
        let mode = match self.ty {
            None => SeqMode::Untyped { wrap: false },
            Some(Type::Dynamic) => SeqMode::Untyped { wrap: true },
            Some(Type::List(et)) => SeqMode::List(et),
            Some(Type::Set(et)) => SeqMode::Set(et),
            Some(Type::Tuple(ts)) => SeqMode::Tuple(ts),
            Some(_) => return Err(self.found(what)),
        };
        Ok(SeqSer {
            mode,
            items: Vec::with_capacity(len.unwrap_or(0).min(1024)),
            path: self.path,
        })
    }

    fn map(self, what: &str) -> Result<MapSer<'t>, ValueError> {
        let mode = match self.ty {
            None => MapMode::Untyped { wrap: false },
            Some(Type::Dynamic) => MapMode::Untyped { wrap: true },
            Some(Type::Map(et)) => MapMode::Map(et),
            Some(Type::Object(o)) => MapMode::Object(o),
            Some(_) => return Err(self.found(what)),
        };
        Ok(MapSer {
            mode,
            entries: BTreeMap::new(),
            pending: None,
            path: self.path,
        })
    }
}

impl<'t> ser::Serializer for Ser<'t> {
    type Ok = Value;
    type Error = ValueError;
    type SerializeSeq = SeqSer<'t>;
    type SerializeTuple = SeqSer<'t>;
    type SerializeTupleStruct = SeqSer<'t>;
    type SerializeTupleVariant = ser::Impossible<Value, ValueError>;
    type SerializeMap = MapSer<'t>;
    type SerializeStruct = MapSer<'t>;
    type SerializeStructVariant = ser::Impossible<Value, ValueError>;

    fn serialize_bool(self, v: bool) -> Result<Value, ValueError> {
        self.scalar(Value::Bool(v), Type::Bool)
    }
    fn serialize_i8(self, v: i8) -> Result<Value, ValueError> {
        self.number(Number::from(i64::from(v)))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, ValueError> {
        self.number(Number::from(i64::from(v)))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, ValueError> {
        self.number(Number::from(u32::from(v)))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, ValueError> {
        self.number(Number::from(u32::from(v)))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, ValueError> {
        self.number(Number::from(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, ValueError> {
        self.scalar(Value::String(v.to_string()), Type::String)
    }
    fn serialize_str(self, v: &str) -> Result<Value, ValueError> {
        self.scalar(Value::String(v.to_string()), Type::String)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Value, ValueError> {
        Err(self.found("bytes"))
    }
    fn serialize_none(self) -> Result<Value, ValueError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, ValueError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, ValueError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<Value, ValueError> {
        if name == TF_UNKNOWN {
            // `Tf::Unknown`: an unknown of whatever type the slot has.
            return Ok(Value::unknown());
        }
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, ValueError> {
        self.scalar(Value::String(variant.to_string()), Type::String)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, ValueError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, ValueError> {
        // The enum becomes an object with one non-null attribute.
        let mut m = self.map("an enum variant")?;
        ser::SerializeStruct::serialize_field(&mut m, variant, value)?;
        ser::SerializeStruct::end(m)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer<'t>, ValueError> {
        self.seq(len, "a sequence")
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer<'t>, ValueError> {
        self.seq(Some(len), "a tuple")
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqSer<'t>, ValueError> {
        self.seq(Some(len), "a tuple")
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, ValueError> {
        Err(self.found("a tuple enum variant"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapSer<'t>, ValueError> {
        self.map("a map")
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<MapSer<'t>, ValueError> {
        self.map("a struct")
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, ValueError> {
        Err(self.found("a struct enum variant"))
    }
}

enum SeqMode<'t> {
    List(&'t Type),
    Set(&'t Type),
    Tuple(&'t [Type]),
    Untyped { wrap: bool },
}

/// Collects sequence elements.
struct SeqSer<'t> {
    mode: SeqMode<'t>,
    items: Vec<Value>,
    path: Vec<PathStep>,
}

impl SeqSer<'_> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        let i = self.items.len();
        let ty = match &self.mode {
            SeqMode::List(et) | SeqMode::Set(et) => Some(*et),
            SeqMode::Tuple(ts) => match ts.get(i) {
                Some(t) => Some(t),
                None => {
                    return Err(mismatch(
                        &self.path,
                        format!("expected a tuple of {} elements, found more", ts.len()),
                    ));
                }
            },
            SeqMode::Untyped { .. } => None,
        };
        let mut path = self.path.clone();
        path.push(PathStep::Index(i as u64));
        let v = value
            .serialize(Ser {
                ty,
                path: path.clone(),
            })
            .map_err(|e| e.locate(&path))?;
        self.items.push(v);
        Ok(())
    }

    fn finish(self) -> Result<Value, ValueError> {
        Ok(match self.mode {
            SeqMode::List(_) => Value::List(self.items),
            SeqMode::Set(_) => Value::Set(self.items),
            SeqMode::Tuple(ts) => {
                if ts.len() != self.items.len() {
                    return Err(mismatch(
                        &self.path,
                        format!(
                            "expected a tuple of {} elements, found {}",
                            ts.len(),
                            self.items.len()
                        ),
                    ));
                }
                Value::Tuple(self.items)
            }
            SeqMode::Untyped { wrap: false } => Value::Tuple(self.items),
            SeqMode::Untyped { wrap: true } => wrap(Value::Tuple(self.items)),
        })
    }
}

impl ser::SerializeSeq for SeqSer<'_> {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        self.push(value)
    }
    fn end(self) -> Result<Value, ValueError> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqSer<'_> {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        self.push(value)
    }
    fn end(self) -> Result<Value, ValueError> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqSer<'_> {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        self.push(value)
    }
    fn end(self) -> Result<Value, ValueError> {
        self.finish()
    }
}

enum MapMode<'t> {
    Map(&'t Type),
    Object(&'t ObjectType),
    Untyped { wrap: bool },
}

/// Collects map entries or struct fields.
struct MapSer<'t> {
    mode: MapMode<'t>,
    entries: BTreeMap<String, Value>,
    pending: Option<String>,
    path: Vec<PathStep>,
}

impl MapSer<'_> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), ValueError> {
        let (ty, step) = match &self.mode {
            MapMode::Map(et) => (Some(*et), PathStep::Key(key.clone())),
            MapMode::Object(o) => match o.attributes.get(&key) {
                Some(t) => (Some(t), PathStep::Attr(key.clone())),
                None => {
                    return Err(mismatch(
                        &self.path,
                        format!("unsupported attribute {key:?}"),
                    ));
                }
            },
            MapMode::Untyped { .. } => (None, PathStep::Attr(key.clone())),
        };
        let mut path = self.path.clone();
        path.push(step);
        let v = value
            .serialize(Ser {
                ty,
                path: path.clone(),
            })
            .map_err(|e| e.locate(&path))?;
        if self.entries.insert(key.clone(), v).is_some() {
            return Err(mismatch(&self.path, format!("duplicate key {key:?}")));
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Value, ValueError> {
        Ok(match self.mode {
            MapMode::Map(_) => Value::Map(self.entries),
            MapMode::Object(o) => {
                for name in o.attributes.keys() {
                    self.entries.entry(name.clone()).or_insert(Value::Null);
                }
                Value::Object(self.entries)
            }
            MapMode::Untyped { wrap: false } => Value::Object(self.entries),
            MapMode::Untyped { wrap: true } => wrap(Value::Object(self.entries)),
        })
    }
}

impl ser::SerializeMap for MapSer<'_> {
    type Ok = Value;
    type Error = ValueError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ValueError> {
        let k = key.serialize(Ser {
            ty: None,
            path: self.path.clone(),
        })?;
        let k = match k {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => {
                return Err(mismatch(
                    &self.path,
                    format!("map keys must be strings, found {}", other.kind_name()),
                ));
            }
        };
        self.pending = Some(k);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        let Some(k) = self.pending.take() else {
            return Err(mismatch(&self.path, "map value without a key"));
        };
        self.entry(k, value)
    }

    fn end(self) -> Result<Value, ValueError> {
        self.finish()
    }
}

impl ser::SerializeStruct for MapSer<'_> {
    type Ok = Value;
    type Error = ValueError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ValueError> {
        self.entry(key.to_string(), value)
    }

    fn end(self) -> Result<Value, ValueError> {
        self.finish()
    }
}
