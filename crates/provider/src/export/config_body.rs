//! What a configuration writes for a resource, from its state as import and read left it:
//! the attributes a user may set (required and optional, not the computed-only ones), in
//! schema order, with nulls left out, and the nested blocks that are present. Sensitive
//! attributes are never written: they are named so the user can write them.

use tfplugin::schema::AttributeType;
use tfplugin::value::encode_json;
use tfplugin::{Block, Nesting, Presence, Value};

/// One block's body as a configuration writes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConfigBody {
    /// `name = value`, in schema order; values as JSON (the shape every output shares).
    pub attributes: Vec<(String, serde_json::Value)>,
    /// Nested blocks, in schema order (a repeated block once per element).
    pub blocks: Vec<(String, ConfigBody)>,
}

impl ConfigBody {
    /// The body as one JSON object: attributes as members, a single block as an object,
    /// a repeated block as a list of objects.
    pub fn to_json(&self, schema: &Block) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        for (name, value) in &self.attributes {
            out.insert(name.clone(), value.clone());
        }
        for nested in &schema.blocks {
            let mine: Vec<serde_json::Value> = self
                .blocks
                .iter()
                .filter(|(n, _)| *n == nested.type_name)
                .map(|(_, b)| b.to_json(&nested.block))
                .collect();
            match nested.nesting {
                Nesting::Single | Nesting::Group => {
                    if let Some(one) = mine.into_iter().next() {
                        out.insert(nested.type_name.clone(), one);
                    }
                }
                _ if !mine.is_empty() => {
                    out.insert(nested.type_name.clone(), serde_json::Value::Array(mine));
                }
                _ => {}
            }
        }
        serde_json::Value::Object(out)
    }
}

/// `config`'s (a [`config_value`]) attributes and blocks under `schema`, nulls left out;
/// never a computed-only, write-only or sensitive attribute.
pub fn config_body(config: &Value, schema: &Block) -> ConfigBody {
    let mut body = ConfigBody::default();
    for attr in &schema.attributes {
        if attr.presence == Presence::Computed || attr.write_only || attr.sensitive {
            continue;
        }
        let Some(value) = config.get_attr(&attr.name).filter(|v| !v.is_null()) else {
            continue;
        };
        let AttributeType::Plain(ty) = &attr.ty else {
            continue;
        };
        let json = encode_json(value, ty)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        if let Some(json) = json {
            body.attributes.push((attr.name.clone(), json));
        }
    }
    for nested in &schema.blocks {
        let Some(value) = config.get_attr(&nested.type_name).filter(|v| !v.is_null()) else {
            continue;
        };
        let elements: Vec<&Value> = match value {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.iter().collect(),
            Value::Map(m) => m.values().collect(),
            one => vec![one],
        };
        for element in elements {
            let child = config_body(element, &nested.block);
            body.blocks.push((nested.type_name.clone(), child));
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfplugin::generate::config_value;
    use tfplugin::schema::{Attribute, NestedBlock};
    use tfplugin::{Schema, Type};

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
    fn only_what_a_user_writes_is_kept_and_secrets_are_named_not_written() {
        let s = schema();
        let mut withheld = Vec::new();
        let body = config_body(
            &config_value(&state(), &s.block, "", &mut withheld),
            &s.block,
        );
        let names: Vec<&str> = body.attributes.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["name", "size", "tags"],
            "no null, computed or sensitive"
        );
        assert_eq!(
            body.attributes[1].1,
            serde_json::json!(8),
            "counts stay integers"
        );
        assert_eq!(withheld, ["secret"]);
        let blocks: Vec<&str> = body.blocks.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(blocks, ["aws", "taint", "taint"]);
        let json = body.to_json(&s.block);
        assert_eq!(json["taint"][1]["key"], "b");
        assert_eq!(json["aws"]["role"], "arn:aws:iam::1:role/n");
        assert!(!json.to_string().contains("hunter2"));
    }
}
