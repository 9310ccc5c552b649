//! What an apply's audit events say about the change they belong to: the resource (its
//! type and the name the user gave it; Terraform does not tell a provider the address)
//! and its monthly cost change (the plan's `monthly_delta_usd`; without one, as for a
//! commitment, the planned `monthly_usd` less the prior's; a destroy's is minus the prior
//! `monthly_usd`).

use gpu_core::audit::AuditContext;
use tfplugin::Value;

use crate::clouds::Clouds;

fn number(v: &Value, attr: &str) -> Option<f64> {
    v.get_attr(attr)
        .and_then(Value::as_number)
        .map(|n| n.as_f64())
}

/// The context of an apply of a `type_name` from `prior` to `planned` (null: a destroy).
pub fn context_of(type_name: &str, prior: &Value, planned: &Value) -> AuditContext {
    let live = if planned.is_null() { prior } else { planned };
    let name = ["name", "vm_name"]
        .iter()
        .find_map(|a| live.get_attr(a).and_then(Value::as_str))
        .filter(|n| !n.is_empty());
    AuditContext {
        resource: Some(match name {
            Some(n) => format!("{type_name}.{n}"),
            None => type_name.to_string(),
        }),
        monthly_delta_usd: if planned.is_null() {
            number(prior, "monthly_usd").map(|m| -m)
        } else {
            number(planned, "monthly_delta_usd").or_else(|| {
                let (after, before) =
                    (number(planned, "monthly_usd"), number(prior, "monthly_usd"));
                (after.is_some() || before.is_some())
                    .then(|| after.unwrap_or(0.0) - before.unwrap_or(0.0))
            })
        },
    }
}

/// `clouds` with the audit context of that apply.
pub fn for_apply(clouds: Clouds, type_name: &str, prior: &Value, planned: &Value) -> Clouds {
    clouds.auditing(context_of(type_name, prior, planned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn an_apply_carries_its_planned_change_and_a_destroy_what_it_saves() {
        let prior = obj(&[
            ("name", Value::string("train")),
            ("monthly_usd", Value::number(700)),
        ]);
        let planned = obj(&[
            ("name", Value::string("train")),
            ("monthly_delta_usd", Value::number(-50)),
        ]);
        let c = context_of("gpu_node_pool", &prior, &planned);
        assert_eq!(c.resource.as_deref(), Some("gpu_node_pool.train"));
        assert_eq!(c.monthly_delta_usd, Some(-50.0));
        let gone = context_of("gpu_node_pool", &prior, &Value::Null);
        assert_eq!(gone.monthly_delta_usd, Some(-700.0));
        let bought = context_of(
            "gpu_commitment",
            &Value::Null,
            &obj(&[("monthly_usd", Value::number(41000))]),
        );
        assert_eq!(
            bought.monthly_delta_usd,
            Some(41000.0),
            "a commitment has no delta of its own"
        );
        let unnamed = context_of("gpu_commitment", &Value::Null, &obj(&[]));
        assert_eq!(
            (unnamed.resource.as_deref(), unnamed.monthly_delta_usd),
            (Some("gpu_commitment"), None)
        );
    }
}
