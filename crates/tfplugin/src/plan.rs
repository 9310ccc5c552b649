//! Plan helpers for `PlanResourceChange`: computed values unknown until apply, keeping
//! prior values that cannot change (UseStateForUnknown), and the attributes whose change
//! forces a replacement (RequiresReplace).

use crate::diag::AttributePath;
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
}
