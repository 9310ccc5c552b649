//! Plan helpers and plan modifiers for `PlanResourceChange`: computed values unknown
//! until apply, keeping prior values that cannot change (use-state-for-unknown), keeping
//! the prior value where the new one means the same (semantic equality), and the
//! attributes whose change forces a replacement (requires-replace). [`Modifiers`] applies
//! any of them, by attribute path, to a plan response.

use crate::diag::AttributePath;
use crate::provider::PlanResourceChangeResponse;
use crate::schema::Block;
use crate::value::Value;

/// Sets every computed top-level attribute of `block` that the user did not set in
/// `config` to unknown in `planned`: its value is only known after apply.
pub fn unknown_computed(planned: &mut Value, config: &Value, block: &Block) {
    let Value::Object(attrs) = planned else {
        return;
    };
    for a in block.attributes.iter().filter(|a| a.is_computed()) {
        let set_by_user = config.get_attr(&a.name).is_some_and(|v| !v.is_null());
        if !set_by_user {
            attrs.insert(a.name.clone(), Value::unknown());
        }
    }
}

/// Keeps the prior value of attribute `name` where the plan left it unknown and the prior
/// state has a value (for ids and other values that never change after create).
pub fn use_state_for_unknown(planned: &mut Value, prior: &Value, name: &str) {
    let Some(old) = prior.get_attr(name).filter(|v| !v.is_null()) else {
        return;
    };
    if let Value::Object(attrs) = planned
        && attrs.get(name).is_some_and(|v| !v.is_known())
    {
        attrs.insert(name.to_string(), old.clone());
    }
}

/// The attributes among `names` whose planned value differs from the prior one, as paths
/// for `requires_replace`. Nothing is replaced when there is no prior state (a create).
pub fn requires_replace(prior: &Value, planned: &Value, names: &[&str]) -> Vec<AttributePath> {
    if prior.is_null() || planned.is_null() {
        return Vec::new();
    }
    names
        .iter()
        .filter(|n| prior.get_attr(n) != planned.get_attr(n))
        .map(|n| AttributePath::attr(*n))
        .collect()
}

/// Like [`requires_replace`], for paths into nested blocks and attributes.
pub fn requires_replace_at(
    prior: &Value,
    planned: &Value,
    paths: &[AttributePath],
) -> Vec<AttributePath> {
    if prior.is_null() || planned.is_null() {
        return Vec::new();
    }
    paths
        .iter()
        .filter(|p| p.lookup(prior) != p.lookup(planned))
        .cloned()
        .collect()
}

/// Like [`use_state_for_unknown`], for a path: where `planned` is unknown at `path` and
/// `prior` has a non-null value there, the prior value is planned. True when it did so.
pub fn use_state_for_unknown_at(planned: &mut Value, prior: &Value, path: &AttributePath) -> bool {
    let Some(old) = path.lookup(prior).filter(|v| !v.is_null()) else {
        return false;
    };
    match path.lookup_mut(planned) {
        Some(slot) if !slot.is_known() => {
            *slot = old.clone();
            true
        }
        _ => false,
    }
}

/// A user-supplied equivalence: `same(prior, planned)` says two spellings mean the same.
pub type SameFn = fn(&Value, &Value) -> bool;

/// Keeps the prior value at `path` where the planned one differs but `same` says it
/// means the same (`"H100"` for `"h100"`), so the plan shows no change. Unknown and null
/// planned values are left alone. True when it kept the prior value.
pub fn keep_equivalent(
    planned: &mut Value,
    prior: &Value,
    path: &AttributePath,
    same: SameFn,
) -> bool {
    let Some(old) = path.lookup(prior).filter(|v| !v.is_null()) else {
        return false;
    };
    match path.lookup_mut(planned) {
        Some(slot)
            if slot.is_wholly_known() && !slot.is_null() && slot != old && same(old, slot) =>
        {
            *slot = old.clone();
            true
        }
        _ => false,
    }
}

/// One plan modifier of [`Modifiers`].
#[derive(Debug, Clone)]
enum Modifier {
    UseStateForUnknown(AttributePath),
    SemanticEquality(AttributePath, SameFn),
    RequiresReplace(AttributePath),
}

/// Plan modifiers by attribute path, applied together to a plan response:
/// `Modifiers::new().use_state_for_unknown("id").requires_replace("name")`.
#[derive(Debug, Clone, Default)]
pub struct Modifiers {
    modifiers: Vec<Modifier>,
}

impl Modifiers {
    /// No modifiers.
    pub fn new() -> Self {
        Modifiers::default()
    }

    /// Keep the prior value where the plan has an unknown (ids, creation times).
    pub fn use_state_for_unknown(mut self, path: impl Into<AttributePath>) -> Self {
        self.modifiers
            .push(Modifier::UseStateForUnknown(path.into()));
        self
    }

    /// Keep the prior value where `same(prior, planned)` says the new one means the same.
    pub fn semantic_equality(mut self, path: impl Into<AttributePath>, same: SameFn) -> Self {
        self.modifiers
            .push(Modifier::SemanticEquality(path.into(), same));
        self
    }

    /// A change of this value (after the other modifiers) replaces the object.
    pub fn requires_replace(mut self, path: impl Into<AttributePath>) -> Self {
        self.modifiers.push(Modifier::RequiresReplace(path.into()));
        self
    }

    /// Applies the modifiers to `response.planned_state` against `prior`: first the ones
    /// that keep prior values, then requires-replace, whose paths are appended to
    /// `response.requires_replace` (none on a create or a destroy).
    pub fn apply(&self, prior: &Value, response: &mut PlanResourceChangeResponse) {
        for m in &self.modifiers {
            match m {
                Modifier::UseStateForUnknown(p) => {
                    use_state_for_unknown_at(&mut response.planned_state, prior, p);
                }
                Modifier::SemanticEquality(p, same) => {
                    keep_equivalent(&mut response.planned_state, prior, p, *same);
                }
                Modifier::RequiresReplace(_) => {}
            }
        }
        let paths: Vec<AttributePath> = self
            .modifiers
            .iter()
            .filter_map(|m| match m {
                Modifier::RequiresReplace(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        for p in requires_replace_at(prior, &response.planned_state, &paths) {
            if !response.requires_replace.contains(&p) {
                response.requires_replace.push(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Attribute;
    use crate::value::Type;

    fn block() -> Block {
        Block::new("r")
            .attribute(Attribute::required("name", Type::String))
            .attribute(Attribute::computed("id", Type::String))
            .attribute(Attribute::optional_computed("zone", Type::String))
    }

    #[test]
    fn computed_attributes_become_unknown_unless_configured() {
        let config = Value::object([
            ("name", Value::string("a")),
            ("id", Value::Null),
            ("zone", Value::string("z1")),
        ]);
        let mut planned = config.clone();
        unknown_computed(&mut planned, &config, &block());
        assert!(!planned.get_attr("id").unwrap().is_known());
        assert_eq!(planned.get_attr("zone"), Some(&Value::string("z1")));
        assert_eq!(planned.get_attr("name"), Some(&Value::string("a")));
    }

    #[test]
    fn prior_id_is_kept_and_name_change_replaces() {
        let prior = Value::object([
            ("name", Value::string("a")),
            ("id", Value::string("i-1")),
            ("zone", Value::Null),
        ]);
        let mut planned = Value::object([
            ("name", Value::string("b")),
            ("id", Value::unknown()),
            ("zone", Value::Null),
        ]);
        use_state_for_unknown(&mut planned, &prior, "id");
        assert_eq!(planned.get_attr("id"), Some(&Value::string("i-1")));
        assert_eq!(
            requires_replace(&prior, &planned, &["name", "zone"]),
            vec![AttributePath::attr("name")]
        );
        assert!(requires_replace(&Value::Null, &planned, &["name"]).is_empty());
    }

    fn same_ignoring_case(a: &Value, b: &Value) -> bool {
        match (a.as_str(), b.as_str()) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        }
    }

    fn prior() -> Value {
        Value::object([
            ("id", Value::string("i-1")),
            ("gpu", Value::string("H100")),
            ("name", Value::string("a")),
            ("net", Value::object([("zone", Value::string("z1"))])),
        ])
    }

    fn response(planned: Value) -> PlanResourceChangeResponse {
        PlanResourceChangeResponse {
            planned_state: planned,
            ..Default::default()
        }
    }

    fn modifiers() -> Modifiers {
        Modifiers::new()
            .use_state_for_unknown("id")
            .semantic_equality("gpu", same_ignoring_case)
            .requires_replace("name")
            .requires_replace(AttributePath::attr("net").then_attr("zone"))
            .requires_replace("gpu")
    }

    #[test]
    fn modifiers_keep_prior_values_and_replace_on_change() {
        let mut r = response(Value::object([
            ("id", Value::unknown()),
            ("gpu", Value::string("h100")),
            ("name", Value::string("a")),
            ("net", Value::object([("zone", Value::string("z2"))])),
        ]));
        modifiers().apply(&prior(), &mut r);
        assert_eq!(r.planned_state.get_attr("id"), Some(&Value::string("i-1")));
        assert_eq!(
            r.planned_state.get_attr("gpu"),
            Some(&Value::string("H100"))
        );
        assert_eq!(
            r.requires_replace,
            vec![AttributePath::attr("net").then_attr("zone")]
        );
    }

    #[test]
    fn a_real_change_is_planned_and_replaces() {
        let mut r = response(Value::object([
            ("id", Value::unknown()),
            ("gpu", Value::string("A100")),
            ("name", Value::string("b")),
            ("net", Value::object([("zone", Value::string("z1"))])),
        ]));
        modifiers().apply(&prior(), &mut r);
        assert_eq!(
            r.planned_state.get_attr("gpu"),
            Some(&Value::string("A100"))
        );
        assert_eq!(
            r.requires_replace,
            vec![AttributePath::attr("name"), AttributePath::attr("gpu")]
        );
    }

    #[test]
    fn creates_and_destroys_never_replace_and_unknowns_stay() {
        let planned = Value::object([
            ("id", Value::unknown()),
            ("gpu", Value::unknown()),
            ("name", Value::string("a")),
            ("net", Value::Null),
        ]);
        let mut r = response(planned.clone());
        modifiers().apply(&Value::Null, &mut r);
        assert_eq!(r.planned_state, planned);
        assert!(r.requires_replace.is_empty());
        let mut r = response(Value::Null);
        modifiers().apply(&prior(), &mut r);
        assert!(r.requires_replace.is_empty() && r.planned_state.is_null());
        // An unknown planned value is not "the same" as the prior one.
        let mut p = planned.clone();
        assert!(!keep_equivalent(
            &mut p,
            &prior(),
            &"gpu".into(),
            same_ignoring_case
        ));
    }
}
