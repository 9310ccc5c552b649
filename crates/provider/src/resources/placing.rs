//! What `gpu_node_pool` and `gpu_instance` share about failover: the `capacity_wait` and
//! `failback` settings, the `attempts` list and its type, and the time a placement starts.

use std::time::Duration;

use gpu_core::pool::failover::Attempt;
use tfplugin::{AttributePath, Diagnostics, Type, Value};

/// How long a place may take when `capacity_wait` is unset.
pub const DEFAULT_CAPACITY_WAIT: Duration = Duration::from_secs(15 * 60);

/// The `failback` words.
pub const FAILBACK_WORDS: [&str; 2] = ["never", "on_apply"];

/// `capacity_wait` of resource value `v`, or its default (an unparsable value was refused
/// at validate).
pub fn capacity_wait(v: &Value) -> Duration {
    v.get_attr("capacity_wait")
        .and_then(Value::as_str)
        .and_then(|s| tfplugin::timeouts::parse_duration(s).ok())
        .unwrap_or(DEFAULT_CAPACITY_WAIT)
}

/// Whether `failback = "on_apply"` in resource value `v`.
pub fn fails_back(v: &Value) -> bool {
    v.get_attr("failback").and_then(Value::as_str) == Some("on_apply")
}

/// The cty type of one `attempts` element.
pub fn attempt_type() -> Type {
    Type::object([
        ("cloud", Type::String),
        ("region", Type::String),
        ("outcome", Type::String),
        ("detail", Type::String),
        ("seconds", Type::Number),
    ])
}

/// One `attempts` element.
pub fn attempt_value(
    cloud: &str,
    region: &str,
    outcome: &str,
    detail: &str,
    seconds: Value,
) -> Value {
    Value::object([
        ("cloud", Value::string(cloud)),
        ("region", Value::string(region)),
        ("outcome", Value::string(outcome)),
        ("detail", Value::string(detail)),
        ("seconds", seconds),
    ])
}

/// `attempts` from the walk's attempts (seconds to the tenth).
pub fn attempts_value(attempts: &[Attempt]) -> Value {
    Value::List(
        attempts
            .iter()
            .map(|a| {
                attempt_value(
                    a.cloud.as_str(),
                    &a.region,
                    a.outcome.as_str(),
                    &a.detail,
                    Value::number((a.seconds * 10.0).round() / 10.0),
                )
            })
            .collect(),
    )
}

/// The attempts, one line each, for the errors and warnings that list them; `within` names
/// what an attempt's `cluster` holds (`cluster` for a pool, `zone` for a VM).
pub fn attempt_lines(attempts: &[Attempt], within: &str) -> String {
    attempts
        .iter()
        .map(|a| {
            let detail = if a.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", a.detail)
            };
            format!(
                "- {} {} ({within} {}): {} after {:.1} s{detail}",
                a.cloud,
                a.region,
                a.cluster,
                a.outcome.as_str(),
                a.seconds
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Now, RFC 3339: when a placement starts.
pub fn now() -> Value {
    Value::string(gpu_core::time::format_rfc3339(
        gpu_core::time::unix_now() as i64
    ))
}

/// What the earlier places answered, from a state's `attempts` (those not `ready`).
pub fn earlier_answers(state: &Value) -> Vec<String> {
    match state.get_attr("attempts") {
        Some(Value::List(items)) => items
            .iter()
            .filter(|a| a.get_attr("outcome").and_then(Value::as_str) != Some("ready"))
            .map(|a| {
                let s = |k: &str| a.get_attr(k).and_then(Value::as_str).unwrap_or("");
                format!(
                    "{} {} answered {} ({})",
                    s("cloud"),
                    s("region"),
                    s("outcome"),
                    s("detail")
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether resource value `v` has `failover` blocks (known or not): a new resource may
/// then land elsewhere.
pub fn has_failover(v: &Value) -> bool {
    match v.get_attr("failover") {
        Some(Value::List(blocks)) => !blocks.is_empty(),
        Some(Value::Unknown(_)) => true,
        _ => false,
    }
}

/// `placement.since` of resource value `v`, as stored (null when unknown to the provider).
pub fn since(v: &Value) -> Value {
    v.get_attr("placement")
        .and_then(|p| p.get_attr("since"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// [`since`] for a message: the time, or "an earlier apply" when it is not recorded.
pub fn since_text(v: &Value) -> String {
    since(v)
        .as_str()
        .map_or_else(|| "an earlier apply".to_string(), str::to_string)
}

/// `d` as problems at the place `label`: each detail starts `At <label>:`, and with
/// `path` each names that path (the place's `failover` block) instead of its own.
pub fn at_place(d: Diagnostics, label: &str, path: Option<&AttributePath>) -> Diagnostics {
    let mut out = Diagnostics::new();
    for mut x in d {
        x.detail = format!("At {label}: {}", x.detail);
        if let Some(path) = path {
            x.attribute = Some(path.clone());
        }
        out.push(x);
    }
    out
}

/// The first line of a walk's cost warning: the monthly cost where it is tried first, and
/// up to what if it fails over (`dearest`: the dearest failover place's monthly cost and
/// name).
pub fn walk_lead(first_usd: f64, first: &str, dearest: Option<(f64, String)>) -> String {
    let mut lead = format!(
        "{}/month at {first}",
        gpu_core::cost::format_delta(first_usd)
    );
    if let Some((usd, place)) = dearest {
        lead.push_str(&format!(
            ", up to {}/month if it fails over to {place}",
            gpu_core::cost::format_usd(usd)
        ));
    }
    lead
}
