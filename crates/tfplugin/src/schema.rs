//! Schemas: what a provider, resource or data source accepts and returns, built in code
//! and sent to Terraform in `GetProviderSchema`.

use crate::validators::Validator;
use crate::value::{ObjectType, Type, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How a description is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DescriptionKind {
    /// Plain text.
    #[default]
    Plain,
    /// Markdown.
    Markdown,
}

/// A versioned schema of one provider, resource or data source.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    /// The schema version; bump it when stored state needs an upgrade.
    pub version: i64,
    /// The top-level block.
    pub block: Block,
}

impl Schema {
    /// A version-0 schema with the given top-level block.
    pub fn new(block: Block) -> Self {
        Schema { version: 0, block }
    }

    /// The same schema with another version.
    pub fn version(mut self, version: i64) -> Self {
        self.version = version;
        self
    }

    /// The cty type of values conforming to this schema.
    pub fn value_type(&self) -> Type {
        self.block.value_type()
    }
}

/// A configuration block: attributes and nested blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    /// Attributes, in declaration order.
    pub attributes: Vec<Attribute>,
    /// Nested block types, in declaration order.
    pub blocks: Vec<NestedBlock>,
    /// What this block is for.
    pub description: String,
    /// How `description` is written.
    pub description_kind: DescriptionKind,
    /// Whether the whole block is deprecated.
    pub deprecated: bool,
}

impl Block {
    /// `v` (an object of this block) with every list or set block that is absent (null)
    /// as an empty collection, as Terraform holds it: a state written before a block
    /// existed then compares equal to a configuration without that block.
    pub fn with_empty_blocks(&self, v: Value) -> Value {
        let Value::Object(mut m) = v else { return v };
        for nb in &self.blocks {
            let entry = m.entry(nb.type_name.clone()).or_insert(Value::Null);
            match (nb.nesting, &mut *entry) {
                (Nesting::List, x @ Value::Null) => *x = Value::List(Vec::new()),
                (Nesting::Set, x @ Value::Null) => *x = Value::Set(Vec::new()),
                (Nesting::List, Value::List(items)) | (Nesting::Set, Value::Set(items)) => {
                    for item in items.iter_mut() {
                        *item = nb
                            .block
                            .with_empty_blocks(std::mem::replace(item, Value::Null));
                    }
                }
                (Nesting::Single | Nesting::Group, x @ Value::Object(_)) => {
                    *x = nb
                        .block
                        .with_empty_blocks(std::mem::replace(x, Value::Null));
                }
                _ => {}
            }
        }
        Value::Object(m)
    }

    /// An empty block with a description (Markdown).
    pub fn new(description: impl Into<String>) -> Self {
        Block {
            description: description.into(),
            description_kind: DescriptionKind::Markdown,
            ..Block::default()
        }
    }

    /// Adds an attribute.
    pub fn attribute(mut self, attribute: Attribute) -> Self {
        self.attributes.push(attribute);
        self
    }

    /// Adds a nested block type.
    pub fn block(mut self, block: NestedBlock) -> Self {
        self.blocks.push(block);
        self
    }

    /// Marks the block deprecated.
    pub fn deprecated(mut self) -> Self {
        self.deprecated = true;
        self
    }

    /// The attribute called `name`, if any.
    pub fn find_attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The cty object type of this block's values.
    pub fn value_type(&self) -> Type {
        let mut attributes = BTreeMap::new();
        for a in &self.attributes {
            attributes.insert(a.name.clone(), a.value_type());
        }
        for b in &self.blocks {
            attributes.insert(b.type_name.clone(), b.value_type());
        }
        Type::Object(ObjectType {
            attributes,
            optional: BTreeSet::new(),
        })
    }
}

/// How nested blocks or nested attributes repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// At most one, as an object (or null).
    Single,
    /// Like `Single`, but never null: absent means all attributes null.
    Group,
    /// An ordered list.
    List,
    /// An unordered set.
    Set,
    /// A map keyed by the block label.
    Map,
}

impl Nesting {
    fn wrap(self, object: Type) -> Type {
        match self {
            Nesting::Single | Nesting::Group => object,
            Nesting::List => Type::List(Box::new(object)),
            Nesting::Set => Type::Set(Box::new(object)),
            Nesting::Map => Type::Map(Box::new(object)),
        }
    }
}

/// A nested block type, e.g. `aws { ... }` inside the provider block.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedBlock {
    /// The block type name as written in configuration.
    pub type_name: String,
    /// The block's own schema.
    pub block: Block,
    /// How it repeats.
    pub nesting: Nesting,
    /// Fewest occurrences (list and set nesting only).
    pub min_items: i64,
    /// Most occurrences (list and set nesting only); 0 means no limit.
    pub max_items: i64,
}

impl NestedBlock {
    /// A block that appears at most once.
    pub fn single(type_name: impl Into<String>, block: Block) -> Self {
        NestedBlock {
            type_name: type_name.into(),
            block,
            nesting: Nesting::Single,
            min_items: 0,
            max_items: 0,
        }
    }

    /// A block that may repeat, kept in order.
    pub fn list(type_name: impl Into<String>, block: Block) -> Self {
        NestedBlock {
            nesting: Nesting::List,
            ..NestedBlock::single(type_name, block)
        }
    }

    /// A block that may repeat, unordered.
    pub fn set(type_name: impl Into<String>, block: Block) -> Self {
        NestedBlock {
            nesting: Nesting::Set,
            ..NestedBlock::single(type_name, block)
        }
    }

    /// Sets the occurrence bounds (list and set nesting).
    pub fn items(mut self, min: i64, max: i64) -> Self {
        self.min_items = min;
        self.max_items = max;
        self
    }

    /// The cty type of this block's value inside its parent object.
    pub fn value_type(&self) -> Type {
        self.nesting.wrap(self.block.value_type())
    }
}

/// What an attribute holds: a plain cty type, or nested attributes.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeType {
    /// A value of a cty type.
    Plain(Type),
    /// An object (or collection of objects) of nested attributes.
    Nested {
        /// The nested attributes.
        attributes: Vec<Attribute>,
        /// How the objects repeat.
        nesting: Nesting,
    },
}

/// Whether the user must, may, or may not set an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// The user must set it.
    Required,
    /// The user may set it; the provider does not fill it in.
    Optional,
    /// Only the provider sets it.
    Computed,
    /// The user may set it; if not, the provider fills it in.
    OptionalComputed,
}

/// One attribute of a block.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The attribute name.
    pub name: String,
    /// What it holds.
    pub ty: AttributeType,
    /// What it means, for users and for the generated docs.
    pub description: String,
    /// How `description` is written.
    pub description_kind: DescriptionKind,
    /// Required, optional or computed.
    pub presence: Presence,
    /// Terraform hides the value in plans and output.
    pub sensitive: bool,
    /// Deprecated attribute.
    pub deprecated: bool,
    /// Never stored in state or plan (Terraform 1.11+).
    pub write_only: bool,
    /// Checks of the value, run on every validate (see [`Block::check`]) and said in docs.
    pub validators: Vec<Arc<Validator>>,
    /// A change of the value replaces the resource (see [`Block::replace_paths`]).
    pub requires_replace: bool,
}

impl Attribute {
    fn new(name: impl Into<String>, ty: AttributeType, presence: Presence) -> Self {
        Attribute {
            name: name.into(),
            ty,
            description: String::new(),
            description_kind: DescriptionKind::Markdown,
            presence,
            sensitive: false,
            deprecated: false,
            write_only: false,
            validators: Vec::new(),
            requires_replace: false,
        }
    }

    /// A required attribute of type `ty`.
    pub fn required(name: impl Into<String>, ty: Type) -> Self {
        Attribute::new(name, AttributeType::Plain(ty), Presence::Required)
    }

    /// An optional attribute of type `ty`.
    pub fn optional(name: impl Into<String>, ty: Type) -> Self {
        Attribute::new(name, AttributeType::Plain(ty), Presence::Optional)
    }

    /// A computed (provider-set) attribute of type `ty`.
    pub fn computed(name: impl Into<String>, ty: Type) -> Self {
        Attribute::new(name, AttributeType::Plain(ty), Presence::Computed)
    }

    /// An optional attribute the provider fills in when unset.
    pub fn optional_computed(name: impl Into<String>, ty: Type) -> Self {
        Attribute::new(name, AttributeType::Plain(ty), Presence::OptionalComputed)
    }

    /// An attribute of nested attributes, e.g. `budget = { max_monthly_usd = 1 }`.
    pub fn nested(
        name: impl Into<String>,
        nesting: Nesting,
        attributes: Vec<Attribute>,
        presence: Presence,
    ) -> Self {
        Attribute::new(
            name,
            AttributeType::Nested {
                attributes,
                nesting,
            },
            presence,
        )
    }

    /// Sets the description (Markdown).
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Marks the value sensitive.
    pub fn sensitive(mut self) -> Self {
        self.sensitive = true;
        self
    }

    /// Marks the attribute write-only (never persisted).
    pub fn write_only(mut self) -> Self {
        self.write_only = true;
        self
    }

    /// Marks the attribute deprecated.
    pub fn deprecated(mut self) -> Self {
        self.deprecated = true;
        self
    }

    /// Adds a check of the value, run at every validate and said in the docs.
    pub fn validate(mut self, validator: Validator) -> Self {
        self.validators.push(Arc::new(validator));
        self
    }

    /// Marks the attribute as one whose change replaces the resource.
    pub fn requires_replace(mut self) -> Self {
        self.requires_replace = true;
        self
    }

    /// The user must set it.
    pub fn is_required(&self) -> bool {
        self.presence == Presence::Required
    }

    /// The user may set it.
    pub fn is_optional(&self) -> bool {
        matches!(
            self.presence,
            Presence::Optional | Presence::OptionalComputed
        )
    }

    /// The provider may set it.
    pub fn is_computed(&self) -> bool {
        matches!(
            self.presence,
            Presence::Computed | Presence::OptionalComputed
        )
    }

    /// The cty type of this attribute's value.
    pub fn value_type(&self) -> Type {
        match &self.ty {
            AttributeType::Plain(t) => t.clone(),
            AttributeType::Nested {
                attributes,
                nesting,
            } => {
                let mut attrs = BTreeMap::new();
                let mut optional = BTreeSet::new();
                for a in attributes {
                    attrs.insert(a.name.clone(), a.value_type());
                    if !a.is_required() {
                        optional.insert(a.name.clone());
                    }
                }
                nesting.wrap(Type::Object(ObjectType {
                    attributes: attrs,
                    optional,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_list_and_set_blocks_read_as_empty_and_nested_ones_too() {
        let inner = Block::new("inner").block(NestedBlock::list("rule", Block::new("rule")));
        let b = Block::new("top")
            .block(NestedBlock::list("failover", Block::new("place")))
            .block(NestedBlock::single("aws", inner));
        let v = Value::object([
            ("failover", Value::Null),
            ("aws", Value::object([("rule", Value::Null)])),
        ]);
        let filled = b.with_empty_blocks(v);
        assert_eq!(filled.get_attr("failover"), Some(&Value::List(Vec::new())));
        assert_eq!(
            filled.get_attr("aws").and_then(|a| a.get_attr("rule")),
            Some(&Value::List(Vec::new()))
        );
        // A present block, or a null single block, is left as it is.
        let kept = b.with_empty_blocks(Value::object([("aws", Value::Null)]));
        assert_eq!(kept.get_attr("aws"), Some(&Value::Null));
    }

    #[test]
    fn implied_type_covers_blocks_and_nested_attributes() {
        let block = Block::new("root")
            .attribute(Attribute::optional("name", Type::String).describe("n"))
            .attribute(Attribute::nested(
                "budget",
                Nesting::Single,
                vec![Attribute::optional("max", Type::Number).describe("m")],
                Presence::Optional,
            ))
            .block(NestedBlock::list(
                "rule",
                Block::new("r").attribute(Attribute::required("x", Type::Bool)),
            ));
        let Type::Object(obj) = block.value_type() else {
            panic!("block type must be an object");
        };
        assert_eq!(obj.attributes["name"], Type::String);
        let Type::Object(budget) = &obj.attributes["budget"] else {
            panic!("single nested attribute must be an object");
        };
        assert!(budget.optional.contains("max"));
        assert!(matches!(obj.attributes["rule"], Type::List(_)));
    }
}
