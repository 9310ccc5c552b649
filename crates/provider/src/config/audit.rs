//! The provider block's `audit {}` face: where audit events go besides the events file
//! (an OpenTelemetry collector over OTLP/HTTP), and the sinks that become.

use std::collections::BTreeMap;
use std::sync::Arc;

use gpu_core::audit::AuditSink;
use serde::Deserialize;
use tfplugin::Type;
use tfplugin::schema::{Attribute, Block, NestedBlock};
use tfplugin::validators::Validator;

/// The `audit` block's schema.
pub fn block() -> NestedBlock {
    NestedBlock::single(
        "audit",
        Block::new("Where the audit log goes besides `events_file`: every mutating cloud call (node groups, VMs, commitments) is an audit event with `at`, `actor` (the caller as the cloud names it), `action`, `target` (the cloud id), `resource`, `result` and `monthly_delta_usd`. A sink that fails never fails an apply: it warns, and the events file keeps the line.")
            .attribute(Attribute::optional("otlp_endpoint", Type::String).describe("Base URL of an OpenTelemetry collector's OTLP/HTTP receiver, e.g. `http://otel-collector:4318` (`/v1/logs` is added). Each audit event is sent as a log record (protobuf), its fields as attributes of the same names; the batch is delivered at the end of each apply.").validate(endpoint_url()))
            .attribute(Attribute::optional("headers", Type::map(Type::String)).sensitive().describe("HTTP headers sent with each export, such as a collector's API key (`{ \"x-api-key\" = var.key }`). Sensitive: never shown in plans, logs or errors.")),
    )
}

/// An `http://` or `https://` URL with a host and no spaces.
fn endpoint_url() -> Validator {
    Validator::with_detail(|name, v| {
        let s = v.as_str().unwrap_or_default().trim();
        let rest = s
            .strip_prefix("http://")
            .or_else(|| s.strip_prefix("https://"));
        let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or_default());
        match host {
            Some(h) if !h.is_empty() && !s.contains(char::is_whitespace) => Ok(()),
            _ => Err(format!(
                "`{name}` must be the collector's http:// or https:// URL with a host, such as \"http://otel-collector:4318\"; got {s:?}."
            )),
        }
    })
    .describe("An `http://` or `https://` URL with a host.")
}

/// The `audit` block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct AuditConfig {
    /// The collector's base URL.
    pub otlp_endpoint: Option<String>,
    /// Headers of each export.
    pub headers: Option<BTreeMap<String, String>>,
}

impl AuditConfig {
    /// The OTLP sink this block names, if any, made when the first event is sent.
    pub fn otlp_sink(&self) -> Option<Arc<dyn AuditSink>> {
        let endpoint = self.otlp_endpoint.as_deref()?;
        Some(Arc::new(gpu_core::audit::otlp::LazyOtlpSink::new(
            endpoint,
            &self.headers.clone().unwrap_or_default(),
            env!("CARGO_PKG_VERSION"),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfplugin::Value;

    #[test]
    fn an_endpoint_must_be_a_url_with_a_host() {
        let check = |s: &str| {
            let b = block();
            let cfg = Value::Object(
                [
                    ("otlp_endpoint".to_string(), Value::string(s)),
                    ("headers".to_string(), Value::Null),
                ]
                .into(),
            );
            b.block.check(&cfg)
        };
        assert!(!check("http://otel-collector:4318").has_errors());
        assert!(!check("https://collector.example.com/v1/logs").has_errors());
        for bad in ["otel-collector:4318", "http://", "ftp://c", "http://a b"] {
            let d = check(bad);
            assert!(d.has_errors(), "{bad} must be refused");
            assert!(format!("{d:?}").contains("otlp_endpoint"), "{d:?}");
        }
    }
}
