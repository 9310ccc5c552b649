//! What a schema's attributes declare about their values: the validators attached to them
//! (run on every validate, before the resource's own checks) and the attributes whose
//! change replaces the resource (the requires-replace plan modifier).

use crate::diag::{AttributePath, Diagnostics};
use crate::schema::{Attribute, AttributeType, Block, Nesting};
use crate::value::Value;

impl Block {
    /// Every problem the validators attached to this block's attributes (and those of its
    /// nested blocks and nested attributes) find in `config`, on each value's path.
    pub fn check(&self, config: &Value) -> Diagnostics {
        let mut diags = Diagnostics::new();
        check_block(self, config, &AttributePath::default(), &mut diags);
        diags
    }

    /// The paths of the top-level attributes marked [`Attribute::requires_replace`].
    pub fn replace_paths(&self) -> Vec<AttributePath> {
        self.attributes
            .iter()
            .filter(|a| a.requires_replace)
            .map(|a| AttributePath::attr(&a.name))
            .collect()
    }
}

fn check_block(block: &Block, object: &Value, at: &AttributePath, diags: &mut Diagnostics) {
    for a in &block.attributes {
        let Some(v) = object.get_attr(&a.name) else {
            continue;
        };
        check_attribute(a, v, &at.clone().then_attr(&a.name), diags);
    }
    for b in &block.blocks {
        let Some(v) = object.get_attr(&b.type_name) else {
            continue;
        };
        let path = at.clone().then_attr(&b.type_name);
        each_object(b.nesting, v, &path, &mut |o, p| {
            check_block(&b.block, o, p, diags)
        });
    }
}

fn check_attribute(a: &Attribute, v: &Value, path: &AttributePath, diags: &mut Diagnostics) {
    for validator in &a.validators {
        for d in validator.check(path, v) {
            diags.push(d);
        }
    }
    if let AttributeType::Nested {
        attributes,
        nesting,
    } = &a.ty
    {
        each_object(*nesting, v, path, &mut |o, p| {
            for inner in attributes {
                if let Some(iv) = o.get_attr(&inner.name) {
                    check_attribute(inner, iv, &p.clone().then_attr(&inner.name), diags);
                }
            }
        });
    }
}

/// Calls `f` with each known object a nested block or attribute of `nesting` holds in `v`,
/// and its path: the block's own for single, `[i]` for list elements, `["key"]` for map
/// entries, and the block's own for set elements (a set element has no position).
fn each_object(
    nesting: Nesting,
    v: &Value,
    path: &AttributePath,
    f: &mut dyn FnMut(&Value, &AttributePath),
) {
    let v = v.unwrap_dynamic();
    if v.is_null() || !v.is_known() {
        return;
    }
    match nesting {
        Nesting::Single | Nesting::Group => f(v, path),
        Nesting::List => {
            for (i, o) in v.as_elements().unwrap_or_default().iter().enumerate() {
                f(o, &path.clone().then_index(i as i64));
            }
        }
        Nesting::Set => {
            for o in v.as_elements().unwrap_or_default() {
                f(o, path);
            }
        }
        Nesting::Map => {
            if let Value::Map(m) = v {
                for (k, o) in m {
                    f(o, &path.clone().then_key(k));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::schema::{Attribute, Block, NestedBlock};
    use crate::validators::{int_between, one_of};
    use crate::value::{Type, Value};

    fn block() -> Block {
        Block::new("t")
            .attribute(Attribute::required("name", Type::String).requires_replace())
            .attribute(Attribute::optional("size", Type::String).validate(one_of(&["s", "l"])))
            .block(NestedBlock::list(
                "rule",
                Block::new("r").attribute(
                    Attribute::optional("count", Type::Number).validate(int_between(1, 3)),
                ),
            ))
    }

    #[test]
    fn validators_on_attributes_and_list_blocks_report_on_their_paths() {
        let config = Value::object([
            ("name", Value::string("a")),
            ("size", Value::string("m")),
            (
                "rule",
                Value::List(vec![
                    Value::object([("count", Value::from(2))]),
                    Value::object([("count", Value::from(9))]),
                ]),
            ),
        ]);
        let d = block().check(&config);
        let paths: Vec<String> =
            d.0.iter()
                .map(|d| d.attribute.clone().unwrap().to_string())
                .collect();
        assert_eq!(paths, ["size", "rule[1].count"]);
        assert_eq!(d.0[0].detail, "`size` must be one of `s`, `l`; got \"m\".");
    }

    #[test]
    fn unknown_and_null_values_are_not_checked() {
        let config = Value::object([("size", Value::unknown()), ("rule", Value::Null)]);
        assert!(block().check(&config).is_empty());
    }

    #[test]
    fn replace_paths_are_the_marked_attributes() {
        let names: Vec<String> = block()
            .replace_paths()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(names, ["name"]);
    }
}
