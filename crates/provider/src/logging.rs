//! Logs go to stderr, where Terraform collects them (`TF_LOG_PROVIDER`, else `TF_LOG`).

/// Installs the stderr logger at the level Terraform's environment asks for (default: warn).
pub fn init() {
    let level = std::env::var("TF_LOG_PROVIDER")
        .or_else(|_| std::env::var("TF_LOG"))
        .unwrap_or_default()
        .to_ascii_lowercase();
    let filter = match level.as_str() {
        "trace" | "json" => "trace",
        "debug" => "debug",
        "info" => "info",
        "error" => "error",
        _ => "warn",
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .try_init();
}
