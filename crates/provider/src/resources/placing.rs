//! What `gpu_node_pool` and `gpu_instance` share about failover: the `capacity_wait` and
//! `failback` settings, the `attempts` list and its type, and the time a placement starts.

use std::time::Duration;

use gpu_core::pool::failover::Attempt;
use tfplugin::{Type, Value};

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
