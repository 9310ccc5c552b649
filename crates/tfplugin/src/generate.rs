//! Configuration from state: what a user would write for an object the provider reads,
//! for `GenerateResourceConfig` (`terraform query -generate-config-out`) and for any
//! exporter. Computed-only, write-only and sensitive attributes are never written.

use crate::diag::PathStep;
use crate::schema::{Block, Nesting, Presence};
use crate::value::Value;

/// `state` with everything a configuration cannot write set to null (computed-only,
/// write-only and sensitive attributes, recursively): the configuration the body stands
/// for, to validate. The paths of sensitive attributes that held a value (`prefix` first)
/// are pushed to `withheld`, so the user can be told to write them.
pub fn config_value(
    state: &Value,
    schema: &Block,
    prefix: &str,
    withheld: &mut Vec<String>,
) -> Value {
    let Value::Object(members) = state else {
        return state.clone();
    };
    let mut out = members.clone();
    for attr in &schema.attributes {
        if attr.presence == Presence::Computed || attr.sensitive || attr.write_only {
            let held = out.insert(attr.name.clone(), Value::Null);
            if attr.sensitive && held.is_some_and(|v| !v.is_null()) {
                withheld.push(format!("{prefix}{}", attr.name));
            }
        }
    }
    for nested in &schema.blocks {
        let Some(value) = members.get(&nested.type_name) else {
            continue;
        };
        let path = |i: usize| match nested.nesting {
            Nesting::Single | Nesting::Group => format!("{prefix}{}.", nested.type_name),
            _ => format!("{prefix}{}[{i}].", nested.type_name),
        };
        let mut each = |i: usize, v: &Value| config_value(v, &nested.block, &path(i), withheld);
        let written = match value {
            Value::List(v) => Value::List(v.iter().enumerate().map(|(i, v)| each(i, v)).collect()),
            Value::Set(v) => Value::Set(v.iter().enumerate().map(|(i, v)| each(i, v)).collect()),
            Value::Null => Value::Null,
            one => each(0, one),
        };
        out.insert(nested.type_name.clone(), written);
    }
    Value::Object(out)
}

/// Sets the attribute at `path` in `config` to null when it is one the provider fills in
/// when left out (optional and computed) and holds a value; whether it did. The export
/// leaves such a value out when the configuration may not write it (a term commitment's
/// `end`, read back but written only for reservations).
pub fn unset_computed(config: &mut Value, schema: &Block, path: &[PathStep]) -> bool {
    let (Some(PathStep::Attr(name)), Value::Object(members)) = (path.first(), config) else {
        return false;
    };
    if let Some(attr) = schema.attributes.iter().find(|a| &a.name == name) {
        let fills = attr.presence == Presence::OptionalComputed;
        return match members.get_mut(name) {
            Some(v) if fills && path.len() == 1 && !v.is_null() => {
                *v = Value::Null;
                true
            }
            _ => false,
        };
    }
    let Some(nested) = schema.blocks.iter().find(|b| &b.type_name == name) else {
        return false;
    };
    match (members.get_mut(name), &path[1..]) {
        (Some(Value::List(v) | Value::Set(v)), [PathStep::Index(i), rest @ ..]) => {
            match usize::try_from(*i).ok().and_then(|i| v.get_mut(i)) {
                Some(element) => unset_computed(element, &nested.block, rest),
                None => false,
            }
        }
        (Some(one @ Value::Object(_)), rest) => unset_computed(one, &nested.block, rest),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Attribute, NestedBlock};
    use crate::{Schema, Type};

    fn schema() -> Schema {
        Schema::new(
            Block::new("")
                .attribute(Attribute::required("name", Type::String))
                .attribute(Attribute::optional("size", Type::Number))
                .attribute(Attribute::optional("note", Type::String))
                .attribute(Attribute::optional("secret", Type::String).sensitive())
                .attribute(Attribute::computed("id", Type::String))
                .attribute(Attribute::optional_computed(
                    "tags",
                    Type::map(Type::String),
                ))
                .block(NestedBlock::single(
                    "aws",
                    Block::new("").attribute(Attribute::optional("role", Type::String)),
                ))
                .block(NestedBlock::list(
                    "taint",
                    Block::new("").attribute(Attribute::required("key", Type::String)),
                )),
        )
    }

    fn state() -> Value {
        let obj = |pairs: Vec<(&str, Value)>| {
            Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        obj(vec![
            ("name", Value::string("train")),
            ("size", Value::Number(8.into())),
            ("note", Value::Null),
            ("secret", Value::string("hunter2")),
            ("id", Value::string("aws/us-east-1/c/train")),
            (
                "tags",
                Value::Map([("team".to_string(), Value::string("ml"))].into()),
            ),
            (
                "aws",
                obj(vec![("role", Value::string("arn:aws:iam::1:role/n"))]),
            ),
            (
                "taint",
                Value::List(vec![
                    obj(vec![("key", Value::string("a"))]),
                    obj(vec![("key", Value::string("b"))]),
                ]),
            ),
        ])
    }

    #[test]
    fn only_a_value_the_provider_fills_in_is_unset() {
        let s = schema();
        let mut v = config_value(&state(), &s.block, "", &mut Vec::new());
        let at = |name: &str| vec![PathStep::Attr(name.into())];
        assert!(
            !unset_computed(&mut v, &s.block, &at("size")),
            "the user's own value"
        );
        assert!(unset_computed(&mut v, &s.block, &at("tags")));
        assert!(v.get_attr("tags").unwrap().is_null());
        assert!(
            !unset_computed(&mut v, &s.block, &at("tags")),
            "already unset"
        );
        let deep = [
            PathStep::Attr("taint".into()),
            PathStep::Index(1),
            PathStep::Attr("key".into()),
        ];
        assert!(
            !unset_computed(&mut v, &s.block, &deep),
            "required in its block"
        );
    }

    #[test]
    fn the_value_to_validate_nulls_what_the_body_leaves_out() {
        let s = schema();
        let v = config_value(&state(), &s.block, "", &mut Vec::new());
        assert!(v.get_attr("id").unwrap().is_null());
        assert!(v.get_attr("secret").unwrap().is_null());
        assert_eq!(v.get_attr("name").unwrap().as_str(), Some("train"));
    }
}
