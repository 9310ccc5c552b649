//! Logs go to stderr, where Terraform collects them (`TF_LOG_PROVIDER`, else `TF_LOG`).
//!
//! Only this provider's own crates log at the level Terraform asks for. Dependencies are
//! clamped, because with `TF_LOG=trace` everything we print lands in Terraform's log file,
//! which people attach to bug reports:
//!
//! - The AWS SDK (`aws_*`) logs credentials at `trace`: `aws_sigv4` prints the canonical
//!   request (with the `x-amz-security-token` header, i.e. the session token),
//!   `aws_smithy_runtime` prints every request with its headers and every response body
//!   (an STS/SSO answer *is* a set of credentials) and the resolved identity, and
//!   `aws_config` prints credential-process commands unredacted. Its `debug` events are
//!   endpoints, attempts, retry decisions and which credential provider answered, which
//!   is what one needs to debug a credential chain, so the SDK is capped at `debug`.
//!   (`acceptance/tests/protocol/test_secrets.py` found the session token 44 times in the log of
//!   one apply/plan/refresh/destroy before this cap.)
//! - The HTTP and TLS stacks (`hyper*`, `h2`, `tower`, `tonic`, `rustls`, `reqwest`,
//!   `quinn`) log every frame of every plugin RPC and cloud call at `debug` and below:
//!   noise, and bodies we do not control; capped at `info`.
//! - Any other dependency is capped at `debug`, so a new one cannot start printing
//!   request internals at `trace` unnoticed.

use tracing_subscriber::filter::LevelFilter;

/// Targets of this provider (prefixes): these log at the requested level.
const OURS: &[&str] = &["terraform_provider_gpu", "tfplugin", "gpu_core"];

/// Dependency targets (prefixes, as `EnvFilter` matches them) and the most they may log.
const CLAMPED: &[(&str, LevelFilter)] = &[
    ("aws_", LevelFilter::DEBUG), // aws_sigv4, aws_smithy_*, aws_config, aws_runtime, aws_sdk_*
    ("hyper", LevelFilter::INFO), // hyper, hyper_util, hyper_rustls
    ("h2", LevelFilter::INFO),
    ("tower", LevelFilter::INFO),
    ("tonic", LevelFilter::INFO),
    ("rustls", LevelFilter::INFO),
    ("tokio_rustls", LevelFilter::INFO),
    ("reqwest", LevelFilter::INFO),
    ("quinn", LevelFilter::INFO),
];

/// The most any other dependency may log.
const OTHERS: LevelFilter = LevelFilter::DEBUG;

/// The level `TF_LOG_PROVIDER`/`TF_LOG` asks for (default: warn).
fn requested(value: &str) -> LevelFilter {
    match value.to_ascii_lowercase().as_str() {
        "trace" | "json" => LevelFilter::TRACE,
        "debug" => LevelFilter::DEBUG,
        "info" => LevelFilter::INFO,
        "error" => LevelFilter::ERROR,
        _ => LevelFilter::WARN,
    }
}

/// The `EnvFilter` directives for a requested level: ours at `level`, every dependency at
/// `level` or its cap, whichever is less verbose.
fn directives(level: LevelFilter) -> String {
    let mut parts = vec![level.min(OTHERS).to_string()];
    parts.extend(
        CLAMPED
            .iter()
            .map(|(target, cap)| format!("{target}={}", level.min(*cap))),
    );
    parts.extend(OURS.iter().map(|target| format!("{target}={level}")));
    parts.join(",").to_ascii_lowercase()
}

fn env_filter(level: LevelFilter) -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::new(directives(level))
}

/// Installs the stderr logger at the level Terraform's environment asks for (default: warn).
pub fn init() {
    let value = std::env::var("TF_LOG_PROVIDER")
        .or_else(|_| std::env::var("TF_LOG"))
        .unwrap_or_default();
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(env_filter(requested(&value)))
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the logger of `level` prints for one event of each kind.
    fn logged(level: LevelFilter) -> String {
        let buf = Buf::default();
        let writer = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_target(true)
            .with_env_filter(env_filter(level))
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            // What aws-sigv4 and aws-smithy-runtime print at trace (see the module docs).
            tracing::trace!(target: "aws_sigv4::http_request::sign", "x-amz-security-token:SIGV4-TOKEN");
            tracing::trace!(target: "aws_smithy_runtime::client::orchestrator", "transmitting request SMITHY-HEADERS");
            tracing::trace!(target: "aws_sdk_sts::operation", "STS-BODY");
            tracing::debug!(target: "aws_config::meta::credentials::chain", "loaded credentials AWS-DEBUG");
            tracing::debug!(target: "h2::codec::framed_write", "send frame H2-DEBUG");
            tracing::info!(target: "h2::proto", "H2-INFO");
            tracing::trace!(target: "some_new_dependency", "OTHER-TRACE");
            tracing::debug!(target: "some_new_dependency", "OTHER-DEBUG");
            tracing::trace!(target: "terraform_provider_gpu::resources", "OURS-TRACE");
            tracing::trace!(target: "tfplugin::server", "TFPLUGIN-TRACE");
            tracing::trace!(target: "gpu_core::pool", "CORE-TRACE");
            tracing::warn!(target: "gpu_core::pool", "CORE-WARN");
        });
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn trace_keeps_our_events_and_drops_the_sdks_credentials() {
        let out = logged(requested("TRACE"));
        for secret in ["SIGV4-TOKEN", "SMITHY-HEADERS", "STS-BODY", "OTHER-TRACE"] {
            assert!(!out.contains(secret), "{secret} logged at trace:\n{out}");
        }
        assert!(
            !out.contains("H2-DEBUG"),
            "h2 debug logged at trace:\n{out}"
        );
        for kept in [
            "AWS-DEBUG",
            "H2-INFO",
            "OTHER-DEBUG",
            "OURS-TRACE",
            "TFPLUGIN-TRACE",
            "CORE-TRACE",
            "CORE-WARN",
        ] {
            assert!(out.contains(kept), "{kept} missing at trace:\n{out}");
        }
    }

    #[test]
    fn json_is_trace_and_caps_never_raise_a_lower_level() {
        assert_eq!(requested("json"), LevelFilter::TRACE);
        assert_eq!(requested(""), LevelFilter::WARN);
        assert_eq!(requested("bogus"), LevelFilter::WARN);
        let out = logged(requested("warn"));
        assert!(out.contains("CORE-WARN"), "{out}");
        for quiet in ["AWS-DEBUG", "H2-INFO", "OTHER-DEBUG", "OURS-TRACE"] {
            assert!(!out.contains(quiet), "{quiet} logged at warn:\n{out}");
        }
        let d = directives(LevelFilter::WARN);
        assert!(d.starts_with("warn,"), "{d}");
        assert!(d.contains("aws_=warn") && d.contains("h2=warn"), "{d}");
        let d = directives(LevelFilter::TRACE);
        assert!(d.starts_with("debug,"), "{d}");
        assert!(d.contains("aws_=debug") && d.contains("h2=info"), "{d}");
        assert!(d.contains("terraform_provider_gpu=trace"), "{d}");
    }
}
