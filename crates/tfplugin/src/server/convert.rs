//! Conversions between our types (schemas, diagnostics, values) and the generated
//! protocol messages.

use crate::diag::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
use crate::proto::tfplugin6 as pb;
use crate::schema::{
    Attribute, AttributeType, Block, DescriptionKind, NestedBlock, Nesting, Schema,
};
use crate::value::{self, Type, Value};

/// A diagnostic in protocol form.
pub fn diagnostic(d: &Diagnostic) -> pb::Diagnostic {
    pb::Diagnostic {
        severity: match d.severity {
            Severity::Error => pb::diagnostic::Severity::Error as i32,
            Severity::Warning => pb::diagnostic::Severity::Warning as i32,
        },
        summary: d.summary.clone(),
        detail: d.detail.clone(),
        attribute: d.attribute.as_ref().map(attribute_path),
    }
}

/// Diagnostics in protocol form.
pub fn diagnostics(ds: &Diagnostics) -> Vec<pb::Diagnostic> {
    ds.0.iter().map(diagnostic).collect()
}

/// An attribute path in protocol form.
pub fn attribute_path(p: &AttributePath) -> pb::AttributePath {
    use pb::attribute_path::step::Selector;
    pb::AttributePath {
        steps: p
            .0
            .iter()
            .map(|s| pb::attribute_path::Step {
                selector: Some(match s {
                    PathStep::Attr(n) => Selector::AttributeName(n.clone()),
                    PathStep::Key(k) => Selector::ElementKeyString(k.clone()),
                    PathStep::Index(i) => Selector::ElementKeyInt(*i),
                }),
            })
            .collect(),
    }
}

fn kind(k: DescriptionKind) -> i32 {
    match k {
        DescriptionKind::Plain => pb::StringKind::Plain as i32,
        DescriptionKind::Markdown => pb::StringKind::Markdown as i32,
    }
}

/// A schema in protocol form.
pub fn schema(s: &Schema) -> pb::Schema {
    pb::Schema {
        version: s.version,
        block: Some(block(&s.block, s.version)),
    }
}

fn block(b: &Block, version: i64) -> pb::schema::Block {
    pb::schema::Block {
        version,
        attributes: b.attributes.iter().map(attribute).collect(),
        block_types: b.blocks.iter().map(nested_block).collect(),
        description: b.description.clone(),
        description_kind: kind(b.description_kind),
        deprecated: b.deprecated,
    }
}

fn nested_block(nb: &NestedBlock) -> pb::schema::NestedBlock {
    use pb::schema::nested_block::NestingMode as M;
    let nesting = match nb.nesting {
        Nesting::Single => M::Single,
        Nesting::Group => M::Group,
        Nesting::List => M::List,
        Nesting::Set => M::Set,
        Nesting::Map => M::Map,
    };
    pb::schema::NestedBlock {
        type_name: nb.type_name.clone(),
        block: Some(block(&nb.block, 0)),
        nesting: nesting as i32,
        min_items: nb.min_items,
        max_items: nb.max_items,
    }
}

fn attribute(a: &Attribute) -> pb::schema::Attribute {
    let (ty, nested_type) = match &a.ty {
        AttributeType::Plain(t) => (t.to_json_bytes(), None),
        AttributeType::Nested {
            attributes,
            nesting,
        } => {
            use pb::schema::object::NestingMode as M;
            let mode = match nesting {
                Nesting::Single | Nesting::Group => M::Single,
                Nesting::List => M::List,
                Nesting::Set => M::Set,
                Nesting::Map => M::Map,
            };
            #[allow(deprecated)]
            let object = pb::schema::Object {
                attributes: attributes.iter().map(attribute).collect(),
                nesting: mode as i32,
                min_items: 0,
                max_items: 0,
            };
            (Vec::new(), Some(object))
        }
    };
    pb::schema::Attribute {
        name: a.name.clone(),
        r#type: ty,
        nested_type,
        description: a.description.clone(),
        required: a.is_required(),
        optional: a.is_optional(),
        computed: a.is_computed(),
        sensitive: a.sensitive,
        description_kind: kind(a.description_kind),
        deprecated: a.deprecated,
        write_only: a.write_only,
    }
}

/// Function signatures as the protocol's `Function` messages.
pub fn functions(
    fs: &std::collections::BTreeMap<String, crate::function::FunctionSignature>,
) -> std::collections::HashMap<String, pb::Function> {
    fs.iter()
        .map(|(name, f)| {
            (
                name.clone(),
                pb::Function {
                    parameters: f
                        .parameters
                        .iter()
                        .map(|p| pb::function::Parameter {
                            name: p.name.clone(),
                            r#type: p.ty.to_json_bytes(),
                            allow_null_value: p.allow_null,
                            allow_unknown_values: false,
                            description: p.description.clone(),
                            description_kind: pb::StringKind::Markdown as i32,
                        })
                        .collect(),
                    variadic_parameter: None,
                    r#return: Some(pb::function::Return {
                        r#type: f.returns.to_json_bytes(),
                    }),
                    summary: f.summary.clone(),
                    description: f.description.clone(),
                    description_kind: pb::StringKind::Markdown as i32,
                    deprecation_message: String::new(),
                },
            )
        })
        .collect()
}

/// Decodes a `DynamicValue` (msgpack preferred, JSON accepted) against `ty`. An absent value
/// decodes as null. A malformed one is an error diagnostic naming `what`, never a panic.
pub fn decode(dv: Option<&pb::DynamicValue>, ty: &Type, what: &str) -> Result<Value, Diagnostic> {
    let Some(dv) = dv else {
        return Ok(Value::Null);
    };
    let result = if !dv.msgpack.is_empty() {
        value::decode_msgpack(&dv.msgpack, ty)
    } else if !dv.json.is_empty() {
        value::decode_json(&dv.json, ty)
    } else {
        return Ok(Value::Null);
    };
    result.map_err(|e| {
        Diagnostic::error(
            format!("Malformed {what} from Terraform"),
            format!("The provider could not decode the {what} it received: {e}. This is a bug in the client or the provider; please report it."),
        )
    })
}

/// Encodes `v` as msgpack against `ty`. A value that does not fit the schema is a provider
/// bug, reported as an error diagnostic.
pub fn encode(v: &Value, ty: &Type, what: &str) -> Result<pb::DynamicValue, Diagnostic> {
    value::encode_msgpack(v, ty)
        .map(|msgpack| pb::DynamicValue {
            msgpack,
            json: Vec::new(),
        })
        .map_err(|e| {
            Diagnostic::error(
                format!("Provider produced an invalid {what}"),
                format!("The {what} does not match its schema: {e}. This is a bug in the provider; please report it."),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostic_carries_path_steps() {
        let d = Diagnostic::error("bad", "detail")
            .at(AttributePath::attr("budget").then_attr("max_monthly_usd"));
        let p = diagnostic(&d);
        assert_eq!(p.severity, pb::diagnostic::Severity::Error as i32);
        let steps = p.attribute.unwrap().steps;
        assert_eq!(steps.len(), 2);
        assert_eq!(
            steps[1].selector,
            Some(pb::attribute_path::step::Selector::AttributeName(
                "max_monthly_usd".into()
            ))
        );
    }

    #[test]
    fn schema_flags_and_types() {
        let s = Schema::new(
            Block::new("d")
                .attribute(Attribute::required("name", Type::String).describe("n"))
                .attribute(Attribute::optional_computed("n", Type::Number).sensitive()),
        );
        let p = schema(&s);
        let b = p.block.unwrap();
        assert!(b.attributes[0].required && !b.attributes[0].optional);
        assert_eq!(b.attributes[0].r#type, b"\"string\"".to_vec());
        assert!(b.attributes[1].optional && b.attributes[1].computed && b.attributes[1].sensitive);
        assert_eq!(b.description_kind, pb::StringKind::Markdown as i32);
    }

    #[test]
    fn malformed_value_is_a_diagnostic() {
        let dv = pb::DynamicValue {
            msgpack: vec![0xc1, 0xff, 0x00],
            json: vec![],
        };
        let err = decode(Some(&dv), &Type::String, "configuration").unwrap_err();
        assert!(err.summary.contains("Malformed configuration"));
        assert_eq!(decode(None, &Type::String, "x").unwrap(), Value::Null);
    }
}
