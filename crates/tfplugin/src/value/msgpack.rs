//! The MessagePack encoding of values (the `msgpack` field of
//! `DynamicValue`), including unknowns as extension values and refinements
//! as the extension-12 payload.

use std::collections::BTreeMap;

use super::MAX_DEPTH;
use super::error::{PathStep, ValueError, invalid, mismatch};
use super::number::{Number, Repr};
use super::types::Type;
use super::value::{NumberBound, Refinements, Unknown, Value};

/// Extension code Terraform uses for refined unknowns.
const EXT_REFINED: i8 = 12;
/// Refinement payloads larger than this are rejected (as Terraform does).
const MAX_REFINEMENT_LEN: usize = 1024;
/// The plain unknown: fixext1, type 0, one zero byte.
const PLAIN_UNKNOWN: [u8; 3] = [0xd4, 0, 0];

const KEY_NULLNESS: u64 = 1;
const KEY_STRING_PREFIX: u64 = 2;
const KEY_NUMBER_MIN: u64 = 3;
const KEY_NUMBER_MAX: u64 = 4;
const KEY_LENGTH_MIN: u64 = 5;
const KEY_LENGTH_MAX: u64 = 6;

/// Decodes a msgpack `DynamicValue` against the schema type `ty`.
pub fn decode_msgpack(bytes: &[u8], ty: &Type) -> Result<Value, ValueError> {
    let mut d = Decoder {
        r: Reader { buf: bytes, pos: 0 },
        path: Vec::new(),
    };
    let v = d.value(ty, 0)?;
    if d.r.pos != bytes.len() {
        return Err(invalid(&[], "unexpected trailing bytes after value"));
    }
    Ok(v)
}

/// Encodes `v` as msgpack against the schema type `ty`.
///
/// Every attribute of an object type is written (null when absent from the
/// value); values in `dynamic` slots are written as `[type JSON, value]`.
pub fn encode_msgpack(v: &Value, ty: &Type) -> Result<Vec<u8>, ValueError> {
    let mut e = Encoder {
        out: Vec::new(),
        path: Vec::new(),
    };
    e.value(v, ty, 0)?;
    Ok(e.out)
}

/// One msgpack item header, with scalar payloads already read.
enum Head<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    Ext(i8, &'a [u8]),
}

impl Head<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Head::Nil => "nil",
            Head::Bool(_) => "bool",
            Head::Int(_) | Head::UInt(_) => "integer",
            Head::Float(_) => "float",
            Head::Str(_) => "string",
            Head::Bin(_) => "binary",
            Head::Array(_) => "array",
            Head::Map(_) => "map",
            Head::Ext(..) => "extension",
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.remaining() {
            return Err("unexpected end of msgpack data".into());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn len8(&mut self) -> Result<usize, String> {
        Ok(usize::from(self.byte()?))
    }

    fn len16(&mut self) -> Result<usize, String> {
        Ok(usize::from(u16::from_be_bytes(self.be()?)))
    }

    fn len32(&mut self) -> Result<usize, String> {
        usize::try_from(u32::from_be_bytes(self.be()?)).map_err(|_| "length too large".into())
    }

    fn head(&mut self) -> Result<Head<'a>, String> {
        let m = self.byte()?;
        Ok(match m {
            0x00..=0x7f => Head::Int(i64::from(m)),
            0x80..=0x8f => Head::Map(usize::from(m & 0x0f)),
            0x90..=0x9f => Head::Array(usize::from(m & 0x0f)),
            0xa0..=0xbf => Head::Str(self.take(usize::from(m & 0x1f))?),
            0xc0 => Head::Nil,
            0xc1 => return Err("reserved msgpack marker 0xc1".into()),
            0xc2 => Head::Bool(false),
            0xc3 => Head::Bool(true),
            0xc4 => {
                let n = self.len8()?;
                Head::Bin(self.take(n)?)
            }
            0xc5 => {
                let n = self.len16()?;
                Head::Bin(self.take(n)?)
            }
            0xc6 => {
                let n = self.len32()?;
                Head::Bin(self.take(n)?)
            }
            0xc7..=0xc9 => {
                let n = match m {
                    0xc7 => self.len8()?,
                    0xc8 => self.len16()?,
                    _ => self.len32()?,
                };
                let code = self.byte()? as i8;
                Head::Ext(code, self.take(n)?)
            }
            0xca => Head::Float(f64::from(f32::from_be_bytes(self.be()?))),
            0xcb => Head::Float(f64::from_be_bytes(self.be()?)),
            0xcc => Head::Int(i64::from(self.byte()?)),
            0xcd => Head::Int(i64::from(u16::from_be_bytes(self.be()?))),
            0xce => Head::Int(i64::from(u32::from_be_bytes(self.be()?))),
            0xcf => {
                let u = u64::from_be_bytes(self.be()?);
                match i64::try_from(u) {
                    Ok(i) => Head::Int(i),
                    Err(_) => Head::UInt(u),
                }
            }
            0xd0 => Head::Int(i64::from(i8::from_be_bytes(self.be()?))),
            0xd1 => Head::Int(i64::from(i16::from_be_bytes(self.be()?))),
            0xd2 => Head::Int(i64::from(i32::from_be_bytes(self.be()?))),
            0xd3 => Head::Int(i64::from_be_bytes(self.be()?)),
            0xd4..=0xd8 => {
                let n = 1usize << (m - 0xd4);
                let code = self.byte()? as i8;
                Head::Ext(code, self.take(n)?)
            }
            0xd9 => {
                let n = self.len8()?;
                Head::Str(self.take(n)?)
            }
            0xda => {
                let n = self.len16()?;
                Head::Str(self.take(n)?)
            }
            0xdb => {
                let n = self.len32()?;
                Head::Str(self.take(n)?)
            }
            0xdc => Head::Array(self.len16()?),
            0xdd => Head::Array(self.len32()?),
            0xde => Head::Map(self.len16()?),
            0xdf => Head::Map(self.len32()?),
            0xe0..=0xff => Head::Int(i64::from(m as i8)),
        })
    }

    /// Skips one complete item.
    fn skip(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("msgpack data is nested too deeply".into());
        }
        match self.head()? {
            Head::Array(n) => {
                for _ in 0..n {
                    self.skip(depth + 1)?;
                }
            }
            Head::Map(n) => {
                for _ in 0..n {
                    self.skip(depth + 1)?;
                    self.skip(depth + 1)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

struct Decoder<'a> {
    r: Reader<'a>,
    path: Vec<PathStep>,
}

fn utf8<'a>(bytes: &'a [u8], path: &[PathStep]) -> Result<&'a str, ValueError> {
    std::str::from_utf8(bytes).map_err(|_| invalid(path, "string is not valid UTF-8"))
}

fn number_from_head(h: &Head<'_>) -> Result<Number, String> {
    match h {
        Head::Int(i) => Ok(Number::from(*i)),
        Head::UInt(u) => Ok(Number::from(*u)),
        Head::Float(f) if f.is_nan() => Err("NaN is not a valid number".into()),
        Head::Float(f) => Ok(Number::from(*f)),
        Head::Str(s) => std::str::from_utf8(s)
            .ok()
            .and_then(|s| Number::parse(s).ok())
            .ok_or_else(|| "expected number, found a string that is not a number".into()),
        other => Err(format!("expected number, found {}", other.kind())),
    }
}

impl<'a> Decoder<'a> {
    fn head(&mut self) -> Result<Head<'a>, ValueError> {
        self.r.head().map_err(|m| invalid(&self.path, m))
    }

    fn err(&self, msg: impl Into<String>) -> ValueError {
        invalid(&self.path, msg)
    }

    fn value(&mut self, ty: &Type, depth: usize) -> Result<Value, ValueError> {
        if depth > MAX_DEPTH {
            return Err(self.err("value is nested too deeply"));
        }
        let h = self.head()?;
        match h {
            Head::Ext(code, payload) => {
                return Ok(Value::Unknown(self.unknown(code, payload, ty)?));
            }
            Head::Nil => return Ok(Value::Null),
            _ => {}
        }
        let expected = |h: &Head<'_>| format!("expected {ty}, found {}", h.kind());
        match ty {
            Type::Dynamic => {
                if !matches!(h, Head::Array(2)) {
                    return Err(self.err(format!(
                        "a dynamic value must be a two-element array, found {}",
                        h.kind()
                    )));
                }
                let tj = match self.head()? {
                    Head::Bin(b) | Head::Str(b) => b,
                    other => {
                        return Err(self.err(format!(
                            "a dynamic value's type must be JSON bytes, found {}",
                            other.kind()
                        )));
                    }
                };
                let t = Type::from_json_bytes(tj)
                    .map_err(|e| self.err(format!("invalid dynamic type: {}", e.message)))?;
                let inner = self.value(&t, depth + 1)?;
                Ok(Value::Dynamic(t, Box::new(inner)))
            }
            Type::Bool => match h {
                Head::Bool(b) => Ok(Value::Bool(b)),
                other => Err(self.err(expected(&other))),
            },
            Type::Number => number_from_head(&h)
                .map(Value::Number)
                .map_err(|m| self.err(m)),
            Type::String => match h {
                Head::Str(s) | Head::Bin(s) => Ok(Value::String(utf8(s, &self.path)?.to_string())),
                other => Err(self.err(expected(&other))),
            },
            Type::List(et) | Type::Set(et) => {
                let Head::Array(n) = h else {
                    return Err(self.err(expected(&h)));
                };
                let vs = self.elements(n, |_| et, depth)?;
                Ok(if matches!(ty, Type::List(_)) {
                    Value::List(vs)
                } else {
                    Value::Set(vs)
                })
            }
            Type::Tuple(ts) => {
                let Head::Array(n) = h else {
                    return Err(self.err(expected(&h)));
                };
                if n != ts.len() {
                    return Err(self.err(format!(
                        "expected a tuple of {} elements, found {n}",
                        ts.len()
                    )));
                }
                Ok(Value::Tuple(self.elements(n, |i| &ts[i], depth)?))
            }
            Type::Map(et) => {
                let Head::Map(n) = h else {
                    return Err(self.err(expected(&h)));
                };
                let mut m = BTreeMap::new();
                for _ in 0..n {
                    let k = self.key()?;
                    if m.contains_key(&k) {
                        return Err(self.err(format!("duplicate map key {k:?}")));
                    }
                    self.path.push(PathStep::Key(k.clone()));
                    let v = self.value(et, depth + 1)?;
                    self.path.pop();
                    m.insert(k, v);
                }
                Ok(Value::Map(m))
            }
            Type::Object(o) => {
                let Head::Map(n) = h else {
                    return Err(self.err(expected(&h)));
                };
                let mut m = BTreeMap::new();
                for _ in 0..n {
                    let k = self.key()?;
                    let Some(at) = o.attributes.get(&k) else {
                        return Err(self.err(format!("unsupported attribute {k:?}")));
                    };
                    if m.contains_key(&k) {
                        return Err(self.err(format!("duplicate attribute {k:?}")));
                    }
                    self.path.push(PathStep::Attr(k.clone()));
                    let v = self.value(at, depth + 1)?;
                    self.path.pop();
                    m.insert(k, v);
                }
                for name in o.attributes.keys() {
                    if !m.contains_key(name) {
                        m.insert(name.clone(), Value::Null);
                    }
                }
                Ok(Value::Object(m))
            }
        }
    }

    fn elements<'t>(
        &mut self,
        n: usize,
        ty_at: impl Fn(usize) -> &'t Type,
        depth: usize,
    ) -> Result<Vec<Value>, ValueError> {
        // Each element takes at least one byte: never reserve beyond that.
        let mut vs = Vec::with_capacity(n.min(self.r.remaining()));
        for i in 0..n {
            self.path.push(PathStep::Index(i as u64));
            let v = self.value(ty_at(i), depth + 1)?;
            self.path.pop();
            vs.push(v);
        }
        Ok(vs)
    }

    fn key(&mut self) -> Result<String, ValueError> {
        match self.head()? {
            Head::Str(s) | Head::Bin(s) => Ok(utf8(s, &self.path)?.to_string()),
            other => Err(self.err(format!("map keys must be strings, found {}", other.kind()))),
        }
    }

    fn unknown(&self, code: i8, payload: &[u8], ty: &Type) -> Result<Unknown, ValueError> {
        // Any extension is an unknown; only code 12 with a body carries
        // refinements, and `dynamic` unknowns are never refined.
        if code != EXT_REFINED || payload.len() <= 1 || *ty == Type::Dynamic {
            return Ok(Unknown::new());
        }
        if payload.len() > MAX_REFINEMENT_LEN {
            return Err(self.err("oversize unknown value refinement"));
        }
        let bad = |m: &str| self.err(format!("invalid unknown value refinement: {m}"));
        let mut r = Reader {
            buf: payload,
            pos: 0,
        };
        let Ok(Head::Map(n)) = r.head() else {
            return Err(bad("not a map"));
        };
        let mut rf = Refinements::default();
        for _ in 0..n {
            let key = match r.head().map_err(|m| bad(&m))? {
                Head::Int(i) if i >= 0 => i as u64,
                Head::UInt(u) => u,
                Head::Int(_) => u64::MAX,
                _ => return Err(bad("non-integer key")),
            };
            match key {
                KEY_NULLNESS => match r.head().map_err(|m| bad(&m))? {
                    Head::Bool(is_null) => rf.not_null = Some(!is_null),
                    _ => return Err(bad("nullness is not a bool")),
                },
                KEY_STRING_PREFIX => {
                    if *ty != Type::String {
                        return Err(bad("string prefix for a non-string type"));
                    }
                    match r.head().map_err(|m| bad(&m))? {
                        Head::Str(s) => {
                            let s = std::str::from_utf8(s)
                                .map_err(|_| bad("string prefix is not valid UTF-8"))?;
                            rf.string_prefix = (!s.is_empty()).then(|| s.to_string());
                        }
                        _ => return Err(bad("string prefix is not a string")),
                    }
                }
                KEY_NUMBER_MIN | KEY_NUMBER_MAX => {
                    if *ty != Type::Number {
                        return Err(bad("number bound for a non-number type"));
                    }
                    let Ok(Head::Array(2)) = r.head() else {
                        return Err(bad("number bound must be a [number, bool] array"));
                    };
                    let value = r
                        .head()
                        .map_err(|m| bad(&m))
                        .and_then(|h| number_from_head(&h).map_err(|m| bad(&m)))?;
                    let Ok(Head::Bool(inclusive)) = r.head() else {
                        return Err(bad("number bound must be a [number, bool] array"));
                    };
                    let b = Some(NumberBound { value, inclusive });
                    if key == KEY_NUMBER_MIN {
                        rf.number_lower = b;
                    } else {
                        rf.number_upper = b;
                    }
                }
                KEY_LENGTH_MIN | KEY_LENGTH_MAX => {
                    if !ty.is_collection() {
                        return Err(bad("length bound for a non-collection type"));
                    }
                    let n = match r.head().map_err(|m| bad(&m))? {
                        Head::Int(i) if i >= 0 => i as u64,
                        Head::UInt(u) => u,
                        _ => return Err(bad("length bound must be a non-negative integer")),
                    };
                    if key == KEY_LENGTH_MIN {
                        rf.length_lower = Some(n);
                    } else {
                        rf.length_upper = Some(n);
                    }
                }
                // Unknown refinements are for future protocol versions.
                _ => r.skip(0).map_err(|m| bad(&m))?,
            }
        }
        Ok(Unknown { refinements: rf })
    }
}

struct Encoder {
    out: Vec<u8>,
    path: Vec<PathStep>,
}

fn len32(n: usize, path: &[PathStep]) -> Result<u32, ValueError> {
    u32::try_from(n).map_err(|_| invalid(path, "too many elements for msgpack"))
}

impl Encoder {
    fn value(&mut self, v: &Value, ty: &Type, depth: usize) -> Result<(), ValueError> {
        if depth > MAX_DEPTH {
            return Err(invalid(&self.path, "value is nested too deeply"));
        }
        if *ty == Type::Dynamic {
            return match v {
                Value::Null => {
                    self.out.push(0xc0);
                    Ok(())
                }
                Value::Unknown(_) => {
                    self.out.extend_from_slice(&PLAIN_UNKNOWN);
                    Ok(())
                }
                Value::Dynamic(t, inner) => self.dynamic(t, inner, depth),
                other => self.dynamic(&other.implied_type(), other, depth),
            };
        }
        let v = match v {
            Value::Dynamic(_, inner) => inner.unwrap_dynamic(),
            v => v,
        };
        let found = |v: &Value| format!("expected {ty}, found {}", v.kind_name());
        match (v, ty) {
            (Value::Null, _) => {
                self.out.push(0xc0);
                Ok(())
            }
            (Value::Unknown(u), _) => self.unknown(u, ty),
            (Value::Bool(b), Type::Bool) => {
                self.out.push(if *b { 0xc3 } else { 0xc2 });
                Ok(())
            }
            (Value::Number(n), Type::Number) => self.number(n),
            (Value::String(s), Type::String) => self.str(s),
            (Value::List(vs) | Value::Set(vs) | Value::Tuple(vs), Type::Set(et)) => {
                // Sets are written in the order of their encoded elements, so
                // equal sets always produce identical bytes.
                let mut items = Vec::with_capacity(vs.len());
                for (i, ev) in vs.iter().enumerate() {
                    let mut sub = Encoder {
                        out: Vec::new(),
                        path: self.path.clone(),
                    };
                    sub.path.push(PathStep::Index(i as u64));
                    sub.value(ev, et, depth + 1)?;
                    items.push(sub.out);
                }
                items.sort();
                self.array_len(items.len())?;
                for item in items {
                    self.out.extend_from_slice(&item);
                }
                Ok(())
            }
            (Value::List(vs) | Value::Set(vs) | Value::Tuple(vs), Type::List(et)) => {
                self.array_len(vs.len())?;
                for (i, ev) in vs.iter().enumerate() {
                    self.path.push(PathStep::Index(i as u64));
                    self.value(ev, et, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            (Value::List(vs) | Value::Tuple(vs), Type::Tuple(ts)) => {
                if vs.len() != ts.len() {
                    return Err(mismatch(
                        &self.path,
                        format!(
                            "expected a tuple of {} elements, found {}",
                            ts.len(),
                            vs.len()
                        ),
                    ));
                }
                self.array_len(vs.len())?;
                for (i, (ev, et)) in vs.iter().zip(ts).enumerate() {
                    self.path.push(PathStep::Index(i as u64));
                    self.value(ev, et, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            (Value::Map(m) | Value::Object(m), Type::Map(et)) => {
                self.map_len(m.len())?;
                for (k, ev) in m {
                    self.str(k)?;
                    self.path.push(PathStep::Key(k.clone()));
                    self.value(ev, et, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            (Value::Object(m) | Value::Map(m), Type::Object(o)) => {
                if let Some(extra) = m.keys().find(|k| !o.attributes.contains_key(*k)) {
                    return Err(mismatch(
                        &self.path,
                        format!("unsupported attribute {extra:?}"),
                    ));
                }
                self.map_len(o.attributes.len())?;
                for (name, at) in &o.attributes {
                    self.str(name)?;
                    self.path.push(PathStep::Attr(name.clone()));
                    self.value(m.get(name).unwrap_or(&Value::Null), at, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            (v, _) => Err(mismatch(&self.path, found(v))),
        }
    }

    fn dynamic(&mut self, t: &Type, v: &Value, depth: usize) -> Result<(), ValueError> {
        self.out.push(0x92);
        self.bin(&t.to_json_bytes())?;
        self.value(v, t, depth + 1)
    }

    fn unknown(&mut self, u: &Unknown, ty: &Type) -> Result<(), ValueError> {
        let rf = &u.refinements;
        let mut body = Encoder {
            out: Vec::new(),
            path: Vec::new(),
        };
        let mut count = 0usize;
        if let Some(not_null) = rf.not_null {
            count += 1;
            body.uint(KEY_NULLNESS);
            body.out.push(if not_null { 0xc2 } else { 0xc3 });
        }
        match ty {
            Type::String => {
                if let Some(p) = rf.string_prefix.as_deref().filter(|p| !p.is_empty()) {
                    count += 1;
                    body.uint(KEY_STRING_PREFIX);
                    body.str(p)?;
                }
            }
            Type::Number => {
                for (key, b) in [
                    (KEY_NUMBER_MIN, &rf.number_lower),
                    (KEY_NUMBER_MAX, &rf.number_upper),
                ] {
                    if let Some(b) = b {
                        count += 1;
                        body.uint(key);
                        body.out.push(0x92);
                        body.number(&b.value)?;
                        body.out.push(if b.inclusive { 0xc3 } else { 0xc2 });
                    }
                }
            }
            t if t.is_collection() => {
                for (key, n) in [
                    (KEY_LENGTH_MIN, rf.length_lower),
                    (KEY_LENGTH_MAX, rf.length_upper),
                ] {
                    if let Some(n) = n {
                        count += 1;
                        body.uint(key);
                        body.uint(n);
                    }
                }
            }
            _ => {}
        }
        if count == 0 {
            self.out.extend_from_slice(&PLAIN_UNKNOWN);
            return Ok(());
        }
        let mut payload = Encoder {
            out: Vec::new(),
            path: Vec::new(),
        };
        payload.map_len(count)?;
        payload.out.extend_from_slice(&body.out);
        let len = payload.out.len();
        match len {
            1 => self.out.push(0xd4),
            2 => self.out.push(0xd5),
            4 => self.out.push(0xd6),
            8 => self.out.push(0xd7),
            16 => self.out.push(0xd8),
            0..=255 => self.out.extend_from_slice(&[0xc7, len as u8]),
            256..=65535 => {
                self.out.push(0xc8);
                self.out.extend_from_slice(&(len as u16).to_be_bytes());
            }
            _ => {
                self.out.push(0xc9);
                self.out
                    .extend_from_slice(&len32(len, &self.path)?.to_be_bytes());
            }
        }
        self.out.push(EXT_REFINED as u8);
        self.out.extend_from_slice(&payload.out);
        Ok(())
    }

    fn number(&mut self, n: &Number) -> Result<(), ValueError> {
        match n.repr() {
            Repr::Int(i) => self.int(*i),
            Repr::UInt(u) => self.uint(*u),
            Repr::Float(f) if f.is_nan() => {
                return Err(mismatch(&self.path, "NaN is not a valid number"));
            }
            Repr::Float(f) => {
                self.out.push(0xcb);
                self.out.extend_from_slice(&f.to_be_bytes());
            }
            Repr::Big(s) => self.str(s)?,
        }
        Ok(())
    }

    fn uint(&mut self, u: u64) {
        match u {
            0..=0x7f => self.out.push(u as u8),
            0x80..=0xff => self.out.extend_from_slice(&[0xcc, u as u8]),
            0x100..=0xffff => {
                self.out.push(0xcd);
                self.out.extend_from_slice(&(u as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                self.out.push(0xce);
                self.out.extend_from_slice(&(u as u32).to_be_bytes());
            }
            _ => {
                self.out.push(0xcf);
                self.out.extend_from_slice(&u.to_be_bytes());
            }
        }
    }

    fn int(&mut self, i: i64) {
        if i >= 0 {
            self.uint(i as u64);
        } else if i >= -32 {
            self.out.push(i as u8);
        } else if i >= i64::from(i8::MIN) {
            self.out.extend_from_slice(&[0xd0, i as u8]);
        } else if i >= i64::from(i16::MIN) {
            self.out.push(0xd1);
            self.out.extend_from_slice(&(i as i16).to_be_bytes());
        } else if i >= i64::from(i32::MIN) {
            self.out.push(0xd2);
            self.out.extend_from_slice(&(i as i32).to_be_bytes());
        } else {
            self.out.push(0xd3);
            self.out.extend_from_slice(&i.to_be_bytes());
        }
    }

    fn str(&mut self, s: &str) -> Result<(), ValueError> {
        let n = s.len();
        match n {
            0..=31 => self.out.push(0xa0 | n as u8),
            32..=255 => self.out.extend_from_slice(&[0xd9, n as u8]),
            256..=65535 => {
                self.out.push(0xda);
                self.out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                self.out.push(0xdb);
                self.out
                    .extend_from_slice(&len32(n, &self.path)?.to_be_bytes());
            }
        }
        self.out.extend_from_slice(s.as_bytes());
        Ok(())
    }

    fn bin(&mut self, b: &[u8]) -> Result<(), ValueError> {
        let n = b.len();
        match n {
            0..=255 => self.out.extend_from_slice(&[0xc4, n as u8]),
            256..=65535 => {
                self.out.push(0xc5);
                self.out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                self.out.push(0xc6);
                self.out
                    .extend_from_slice(&len32(n, &self.path)?.to_be_bytes());
            }
        }
        self.out.extend_from_slice(b);
        Ok(())
    }

    fn array_len(&mut self, n: usize) -> Result<(), ValueError> {
        self.container_len(n, 0x90, 0xdc, 0xdd)
    }

    fn map_len(&mut self, n: usize) -> Result<(), ValueError> {
        self.container_len(n, 0x80, 0xde, 0xdf)
    }

    fn container_len(&mut self, n: usize, fix: u8, m16: u8, m32: u8) -> Result<(), ValueError> {
        match n {
            0..=15 => self.out.push(fix | n as u8),
            16..=65535 => {
                self.out.push(m16);
                self.out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                self.out.push(m32);
                self.out
                    .extend_from_slice(&len32(n, &self.path)?.to_be_bytes());
            }
        }
        Ok(())
    }
}
