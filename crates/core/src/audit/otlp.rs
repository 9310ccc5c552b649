//! The audit log as OpenTelemetry logs over OTLP/HTTP (protobuf), for a collector to
//! forward to a SIEM: one log record per audit line, its fields as attributes under the
//! same names, batched on the OpenTelemetry SDK's own thread and sent with the
//! `opentelemetry-otlp` exporter. [`OtlpSink::flush`] (at the end of each apply) waits for
//! the batch and says whether it was delivered; a failure is the caller's warning.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry_otlp::{LogExporter, Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};

use super::AuditSink;
use crate::record::EventLine;

/// The signal path the collector's OTLP/HTTP receiver serves logs on.
const LOGS_PATH: &str = "/v1/logs";

/// How long one export may take before it counts as failed.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The logs URL of collector `endpoint`: the base URL with `/v1/logs`, unless it names
/// that path already.
pub fn logs_url(endpoint: &str) -> String {
    let base = endpoint.trim().trim_end_matches('/');
    if base.ends_with(LOGS_PATH) {
        base.to_string()
    } else {
        format!("{base}{LOGS_PATH}")
    }
}

/// Audit lines sent as OTLP log records.
pub struct OtlpSink {
    url: String,
    provider: SdkLoggerProvider,
    logger: SdkLogger,
}

impl std::fmt::Debug for OtlpSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers may hold a collector's API key: never shown.
        f.debug_struct("OtlpSink")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl OtlpSink {
    /// A sink sending to the collector at `endpoint` with `headers` (e.g. an API key),
    /// naming the service `terraform-provider-gpu` at `version`. Built on its own thread:
    /// the exporter's blocking HTTP client must not start inside an async runtime.
    pub fn new(
        endpoint: &str,
        headers: &BTreeMap<String, String>,
        version: &str,
    ) -> Result<Self, String> {
        let url = logs_url(endpoint);
        let headers: HashMap<String, String> = headers.clone().into_iter().collect();
        let (u, v) = (url.clone(), version.to_string());
        std::thread::spawn(move || {
            let exporter = LogExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(u.clone())
                .with_timeout(EXPORT_TIMEOUT)
                .with_headers(headers)
                .build()
                .map_err(|e| format!("OTLP exporter for {u}: {e}"))?;
            let resource = Resource::builder()
                .with_service_name("terraform-provider-gpu")
                .with_attribute(opentelemetry::KeyValue::new("service.version", v))
                .build();
            let provider = SdkLoggerProvider::builder()
                .with_resource(resource)
                .with_batch_exporter(exporter)
                .build();
            let logger = provider.logger("terraform-provider-gpu.audit");
            Ok(OtlpSink {
                url: u,
                provider,
                logger,
            })
        })
        .join()
        .map_err(|_| format!("OTLP exporter for {url}: could not be built"))?
    }

    /// The logs URL records are sent to.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// The time `at` (RFC 3339) names, or now.
fn time_of(at: &str) -> SystemTime {
    crate::time::parse_rfc3339(at)
        .and_then(|s| u64::try_from(s).ok())
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
        .unwrap_or_else(SystemTime::now)
}

impl AuditSink for OtlpSink {
    fn send(&self, line: &EventLine) -> Result<(), String> {
        let mut record = self.logger.create_log_record();
        record.set_event_name("gpu.audit");
        record.set_timestamp(time_of(&line.at));
        record.set_observed_timestamp(SystemTime::now());
        let ok = line.result.as_deref() == Some("ok");
        record.set_severity_number(if ok { Severity::Info } else { Severity::Warn });
        record.set_severity_text(if ok { "INFO" } else { "WARN" });
        record.set_body(AnyValue::from(format!(
            "{} {} {} on {}: {}",
            line.actor.as_deref().unwrap_or(super::UNKNOWN_ACTOR),
            line.action.as_deref().unwrap_or_default(),
            line.target.as_deref().unwrap_or_default(),
            line.cloud,
            line.result.as_deref().unwrap_or_default(),
        )));
        let text = [
            ("at", Some(&line.at)),
            ("event", Some(&line.event)),
            ("cloud", Some(&line.cloud)),
            ("region", Some(&line.region)),
            ("actor", line.actor.as_ref()),
            ("action", line.action.as_ref()),
            ("target", line.target.as_ref()),
            ("resource", line.resource.as_ref()),
            ("resource_address", line.resource_address.as_ref()),
            ("result", line.result.as_ref()),
            ("detail", line.detail.as_ref()),
        ];
        for (key, value) in text {
            if let Some(v) = value {
                record.add_attribute(key, AnyValue::from(v.clone()));
            }
        }
        if let Some(delta) = line.monthly_delta_usd {
            record.add_attribute("monthly_delta_usd", AnyValue::from(delta));
        }
        self.logger.emit(record);
        Ok(())
    }

    fn flush(&self) -> Result<(), String> {
        self.provider
            .force_flush()
            .map_err(|e| format!("OTLP logs to {}: {e}", self.url))
    }
}

/// An [`OtlpSink`] made on the first event sent, so a run that changes nothing (every
/// plan) starts no exporter thread or HTTP client; an exporter that cannot be made is
/// that event's error.
pub struct LazyOtlpSink {
    endpoint: String,
    headers: BTreeMap<String, String>,
    version: String,
    sink: std::sync::OnceLock<Result<OtlpSink, String>>,
}

impl std::fmt::Debug for LazyOtlpSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers may hold a collector's API key: never shown.
        f.debug_struct("LazyOtlpSink")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl LazyOtlpSink {
    /// A sink for the collector at `endpoint` with `headers`, made when first used (see
    /// [`OtlpSink::new`]).
    pub fn new(endpoint: &str, headers: &BTreeMap<String, String>, version: &str) -> Self {
        LazyOtlpSink {
            endpoint: endpoint.to_string(),
            headers: headers.clone(),
            version: version.to_string(),
            sink: std::sync::OnceLock::new(),
        }
    }

    fn sink(&self) -> &Result<OtlpSink, String> {
        self.sink
            .get_or_init(|| OtlpSink::new(&self.endpoint, &self.headers, &self.version))
    }
}

impl AuditSink for LazyOtlpSink {
    fn send(&self, line: &EventLine) -> Result<(), String> {
        self.sink().as_ref().map_err(Clone::clone)?.send(line)
    }

    fn flush(&self) -> Result<(), String> {
        match self.sink.get() {
            None => Ok(()), // nothing was sent
            Some(made) => made.as_ref().map_err(Clone::clone)?.flush(),
        }
    }
}

impl Drop for OtlpSink {
    fn drop(&mut self) {
        let _ = self.provider.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logs_path_is_added_once() {
        assert_eq!(
            logs_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/logs"
        );
        assert_eq!(logs_url("http://c:4318/"), "http://c:4318/v1/logs");
        assert_eq!(logs_url("https://c/v1/logs"), "https://c/v1/logs");
    }

    #[test]
    fn a_collector_that_is_not_there_is_a_flush_error_not_a_panic() {
        // A port nothing listens on (bound, then closed).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let sink = LazyOtlpSink::new(&format!("http://127.0.0.1:{port}"), &BTreeMap::new(), "t");
        assert!(
            sink.flush().is_ok(),
            "nothing sent, nothing made, nothing to deliver"
        );
        assert!(sink.sink.get().is_none());
        let mut line = EventLine::now("audit", "aws", "us-east-1");
        line.result = Some("ok".into());
        assert!(sink.send(&line).is_ok(), "sending only queues");
        let e = sink.flush().unwrap_err();
        assert!(e.contains(&format!("127.0.0.1:{port}/v1/logs")), "{e}");
    }
}
