//! The JSON encoding of values (the `json` field of `DynamicValue` and of
//! `RawState` in `UpgradeResourceState`). JSON cannot carry unknowns.

use std::collections::BTreeMap;

use super::MAX_DEPTH;
use super::error::{ErrorKind, PathStep, ValueError, invalid, mismatch};
use super::jsonparse::{self, Json};
use super::number::{Number, Repr, format_f64};
use super::types::Type;
use super::value::Value;

/// Decodes a JSON value against the schema type `ty`.
///
/// Like Terraform, this accepts strings for numbers and bools and numbers
/// and bools for strings; absent object attributes decode as null.
pub fn decode_json(bytes: &[u8], ty: &Type) -> Result<Value, ValueError> {
    let doc = jsonparse::parse(bytes).map_err(|m| invalid(&[], m))?;
    let mut path = Vec::new();
    decode(&doc, ty, 0, &mut path)
}

/// Encodes `v` as JSON against the schema type `ty`; unknown values are an
/// error of kind [`ErrorKind::NotKnown`].
pub fn encode_json(v: &Value, ty: &Type) -> Result<Vec<u8>, ValueError> {
    let mut out = String::new();
    let mut path = Vec::new();
    encode(v, ty, 0, &mut path, &mut out)?;
    Ok(out.into_bytes())
}

fn decode(
    j: &Json,
    ty: &Type,
    depth: usize,
    path: &mut Vec<PathStep>,
) -> Result<Value, ValueError> {
    if depth > MAX_DEPTH {
        return Err(invalid(path, "value is nested too deeply"));
    }
    if *j == Json::Null {
        return Ok(Value::Null);
    }
    let expected =
        |j: &Json, path: &[PathStep]| invalid(path, format!("expected {ty}, found {}", j.kind()));
    match ty {
        Type::Dynamic => {
            let Json::Object(ms) = j else {
                return Err(invalid(
                    path,
                    format!(
                        "a dynamic value must be an object with \"value\" and \"type\", found {}",
                        j.kind()
                    ),
                ));
            };
            let (mut tj, mut vj) = (None, None);
            for (k, v) in ms {
                let slot = match k.as_str() {
                    "type" => &mut tj,
                    "value" => &mut vj,
                    other => {
                        return Err(invalid(
                            path,
                            format!("invalid key {other:?} in dynamic value"),
                        ));
                    }
                };
                if slot.replace(v).is_some() {
                    return Err(invalid(
                        path,
                        format!("duplicate key {k:?} in dynamic value"),
                    ));
                }
            }
            let (Some(tj), Some(vj)) = (tj, vj) else {
                return Err(invalid(
                    path,
                    "a dynamic value needs both \"value\" and \"type\"",
                ));
            };
            let t = Type::from_json(&tj.to_serde())
                .map_err(|e| invalid(path, format!("invalid dynamic type: {}", e.message)))?;
            let inner = decode(vj, &t, depth + 1, path)?;
            Ok(Value::Dynamic(t, Box::new(inner)))
        }
        Type::Bool => match j {
            Json::Bool(b) => Ok(Value::Bool(*b)),
            Json::String(s) if s == "true" => Ok(Value::Bool(true)),
            Json::String(s) if s == "false" => Ok(Value::Bool(false)),
            other => Err(expected(other, path)),
        },
        Type::Number => match j {
            Json::Number(s) | Json::String(s) => Number::parse(s)
                .map(Value::Number)
                .map_err(|e| invalid(path, e.message)),
            other => Err(expected(other, path)),
        },
        Type::String => match j {
            Json::String(s) | Json::Number(s) => Ok(Value::String(s.clone())),
            Json::Bool(b) => Ok(Value::String(b.to_string())),
            other => Err(expected(other, path)),
        },
        Type::List(et) | Type::Set(et) => {
            let Json::Array(items) = j else {
                return Err(expected(j, path));
            };
            let vs = elements(items, |_| et, depth, path)?;
            Ok(if matches!(ty, Type::List(_)) {
                Value::List(vs)
            } else {
                Value::Set(vs)
            })
        }
        Type::Tuple(ts) => {
            let Json::Array(items) = j else {
                return Err(expected(j, path));
            };
            if items.len() != ts.len() {
                return Err(invalid(
                    path,
                    format!(
                        "expected a tuple of {} elements, found {}",
                        ts.len(),
                        items.len()
                    ),
                ));
            }
            Ok(Value::Tuple(elements(items, |i| &ts[i], depth, path)?))
        }
        Type::Map(et) => {
            let Json::Object(ms) = j else {
                return Err(expected(j, path));
            };
            let mut m = BTreeMap::new();
            for (k, v) in ms {
                if m.contains_key(k) {
                    return Err(invalid(path, format!("duplicate map key {k:?}")));
                }
                path.push(PathStep::Key(k.clone()));
                let ev = decode(v, et, depth + 1, path)?;
                path.pop();
                m.insert(k.clone(), ev);
            }
            Ok(Value::Map(m))
        }
        Type::Object(o) => {
            let Json::Object(ms) = j else {
                return Err(expected(j, path));
            };
            let mut m = BTreeMap::new();
            for (k, v) in ms {
                let Some(at) = o.attributes.get(k) else {
                    return Err(invalid(path, format!("unsupported attribute {k:?}")));
                };
                if m.contains_key(k) {
                    return Err(invalid(path, format!("duplicate attribute {k:?}")));
                }
                path.push(PathStep::Attr(k.clone()));
                let av = decode(v, at, depth + 1, path)?;
                path.pop();
                m.insert(k.clone(), av);
            }
            for name in o.attributes.keys() {
                m.entry(name.clone()).or_insert(Value::Null);
            }
            Ok(Value::Object(m))
        }
    }
}

fn elements<'t>(
    items: &[Json],
    ty_at: impl Fn(usize) -> &'t Type,
    depth: usize,
    path: &mut Vec<PathStep>,
) -> Result<Vec<Value>, ValueError> {
    let mut vs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        path.push(PathStep::Index(i as u64));
        vs.push(decode(item, ty_at(i), depth + 1, path)?);
        path.pop();
    }
    Ok(vs)
}

fn push_str(out: &mut String, s: &str) {
    // serde_json's string escaping is exactly JSON's.
    out.push_str(&serde_json::Value::from(s).to_string());
}

fn encode(
    v: &Value,
    ty: &Type,
    depth: usize,
    path: &mut Vec<PathStep>,
    out: &mut String,
) -> Result<(), ValueError> {
    if depth > MAX_DEPTH {
        return Err(invalid(path, "value is nested too deeply"));
    }
    if let Value::Unknown(_) = v {
        return Err(ValueError::new(
            ErrorKind::NotKnown,
            path,
            "value is not known yet and cannot be encoded as JSON",
        ));
    }
    if *ty == Type::Dynamic {
        let (t, inner) = match v {
            Value::Null => {
                out.push_str("null");
                return Ok(());
            }
            Value::Dynamic(t, inner) => (t.clone(), &**inner),
            other => (other.implied_type(), other),
        };
        out.push_str("{\"value\":");
        encode(inner, &t, depth + 1, path, out)?;
        out.push_str(",\"type\":");
        out.push_str(&t.to_json().to_string());
        out.push('}');
        return Ok(());
    }
    let v = v.unwrap_dynamic();
    match (v, ty) {
        (Value::Null, _) => out.push_str("null"),
        (Value::Unknown(_), _) => {
            return Err(ValueError::new(
                ErrorKind::NotKnown,
                path,
                "value is not known yet and cannot be encoded as JSON",
            ));
        }
        (Value::Bool(b), Type::Bool) => out.push_str(if *b { "true" } else { "false" }),
        (Value::Number(n), Type::Number) => match n.repr() {
            Repr::Int(i) => out.push_str(&i.to_string()),
            Repr::UInt(u) => out.push_str(&u.to_string()),
            Repr::Float(f) if !f.is_finite() => {
                return Err(mismatch(path, format!("{f} cannot be encoded as JSON")));
            }
            Repr::Float(f) => out.push_str(&format_f64(*f)),
            Repr::Big(s) => out.push_str(s),
        },
        (Value::String(s), Type::String) => push_str(out, s),
        (Value::List(vs) | Value::Set(vs) | Value::Tuple(vs), Type::Set(et)) => {
            // Sorted by encoding so equal sets give identical output.
            let mut items = Vec::with_capacity(vs.len());
            for (i, ev) in vs.iter().enumerate() {
                let mut item = String::new();
                path.push(PathStep::Index(i as u64));
                encode(ev, et, depth + 1, path, &mut item)?;
                path.pop();
                items.push(item);
            }
            items.sort();
            out.push('[');
            out.push_str(&items.join(","));
            out.push(']');
        }
        (Value::List(vs) | Value::Set(vs) | Value::Tuple(vs), Type::List(et)) => {
            out.push('[');
            for (i, ev) in vs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                path.push(PathStep::Index(i as u64));
                encode(ev, et, depth + 1, path, out)?;
                path.pop();
            }
            out.push(']');
        }
        (Value::List(vs) | Value::Tuple(vs), Type::Tuple(ts)) => {
            if vs.len() != ts.len() {
                return Err(mismatch(
                    path,
                    format!(
                        "expected a tuple of {} elements, found {}",
                        ts.len(),
                        vs.len()
                    ),
                ));
            }
            out.push('[');
            for (i, (ev, et)) in vs.iter().zip(ts).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                path.push(PathStep::Index(i as u64));
                encode(ev, et, depth + 1, path, out)?;
                path.pop();
            }
            out.push(']');
        }
        (Value::Map(m) | Value::Object(m), Type::Map(et)) => {
            out.push('{');
            for (i, (k, ev)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_str(out, k);
                out.push(':');
                path.push(PathStep::Key(k.clone()));
                encode(ev, et, depth + 1, path, out)?;
                path.pop();
            }
            out.push('}');
        }
        (Value::Object(m) | Value::Map(m), Type::Object(o)) => {
            if let Some(extra) = m.keys().find(|k| !o.attributes.contains_key(*k)) {
                return Err(mismatch(path, format!("unsupported attribute {extra:?}")));
            }
            out.push('{');
            for (i, (name, at)) in o.attributes.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_str(out, name);
                out.push(':');
                path.push(PathStep::Attr(name.clone()));
                encode(
                    m.get(name).unwrap_or(&Value::Null),
                    at,
                    depth + 1,
                    path,
                    out,
                )?;
                path.pop();
            }
            out.push('}');
        }
        (v, _) => {
            return Err(mismatch(
                path,
                format!("expected {ty}, found {}", v.kind_name()),
            ));
        }
    }
    Ok(())
}
