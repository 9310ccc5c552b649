//! The go-plugin handshake: checks the environment Terraform sets for a plugin and formats
//! the one line the plugin prints on stdout.

use std::collections::HashMap;

/// The cookie name go-plugin uses for Terraform providers.
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
/// The cookie value Terraform sets when it launches a provider.
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// The go-plugin core protocol version (the first field of the handshake line).
pub const CORE_PROTOCOL_VERSION: u32 = 1;
/// The plugin protocol major version this crate serves.
pub const APP_PROTOCOL_VERSION: u32 = 6;

/// Why the process cannot serve as a plugin.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HandshakeError {
    /// Started by a person, not by Terraform.
    #[error(
        "this binary is a Terraform provider plugin and is meant to be started by Terraform (or OpenTofu), not run directly; use it from a Terraform configuration, or run it with --help for its own commands"
    )]
    NotLaunchedByTerraform,
    /// Terraform does not speak protocol 6.
    #[error(
        "Terraform offered plugin protocol versions [{offered}], but this provider speaks only version 6 (Terraform 1.0 or newer, or OpenTofu)"
    )]
    NoCommonProtocol {
        /// What Terraform offered.
        offered: String,
    },
    /// A port bound is not a number, or min > max.
    #[error("invalid plugin port range {min}..{max}: {why}")]
    BadPortRange {
        /// PLUGIN_MIN_PORT as given.
        min: String,
        /// PLUGIN_MAX_PORT as given.
        max: String,
        /// What is wrong.
        why: String,
    },
    /// No client certificate: AutoMTLS is required.
    #[error(
        "PLUGIN_CLIENT_CERT is not set: this provider only serves Terraform over mutual TLS (use --debug to serve a debugging session instead)"
    )]
    NoClientCert,
}

/// What Terraform asked for, read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeConfig {
    /// Lowest port we may listen on.
    pub min_port: u16,
    /// Highest port we may listen on.
    pub max_port: u16,
    /// Terraform's client certificate (PEM), which must be the only one accepted.
    pub client_cert_pem: String,
}

impl HandshakeConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, HandshakeError> {
        let env: HashMap<String, String> = std::env::vars().collect();
        Self::from_map(&env)
    }

    /// Reads the plugin settings from `env` (the process environment in production).
    pub fn from_map(env: &HashMap<String, String>) -> Result<Self, HandshakeError> {
        if env.get(MAGIC_COOKIE_KEY).map(String::as_str) != Some(MAGIC_COOKIE_VALUE) {
            return Err(HandshakeError::NotLaunchedByTerraform);
        }
        let offered = env
            .get("PLUGIN_PROTOCOL_VERSIONS")
            .cloned()
            .unwrap_or_default();
        let speaks_six = offered
            .split(',')
            .any(|v| v.trim().parse::<u32>() == Ok(APP_PROTOCOL_VERSION));
        if !speaks_six {
            return Err(HandshakeError::NoCommonProtocol { offered });
        }
        let min = env.get("PLUGIN_MIN_PORT").cloned().unwrap_or_default();
        let max = env.get("PLUGIN_MAX_PORT").cloned().unwrap_or_default();
        let (min_port, max_port) = parse_ports(&min, &max)?;
        let client_cert_pem = env
            .get("PLUGIN_CLIENT_CERT")
            .filter(|c| !c.trim().is_empty())
            .cloned()
            .ok_or(HandshakeError::NoClientCert)?;
        Ok(HandshakeConfig {
            min_port,
            max_port,
            client_cert_pem,
        })
    }
}

fn parse_ports(min: &str, max: &str) -> Result<(u16, u16), HandshakeError> {
    let bad = |why: &str| HandshakeError::BadPortRange {
        min: min.to_string(),
        max: max.to_string(),
        why: why.to_string(),
    };
    // go-plugin treats unset bounds as "any port"; so do we.
    let lo = if min.is_empty() {
        1024
    } else {
        min.parse().map_err(|_| bad("not a port number"))?
    };
    let hi = if max.is_empty() {
        u16::MAX
    } else {
        max.parse().map_err(|_| bad("not a port number"))?
    };
    if lo > hi {
        return Err(bad("the minimum is above the maximum"));
    }
    Ok((lo, hi))
}

/// The line go-plugin reads from the plugin's stdout: core version, app version, network,
/// address, protocol, and the server certificate (DER, base64 without padding).
pub fn handshake_line(addr: std::net::SocketAddr, server_cert_der: &[u8]) -> String {
    use base64::Engine as _;
    let cert = base64::engine::general_purpose::STANDARD_NO_PAD.encode(server_cert_der);
    format!("{CORE_PROTOCOL_VERSION}|{APP_PROTOCOL_VERSION}|tcp|{addr}|grpc|{cert}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn terraform_env() -> Vec<(&'static str, &'static str)> {
        vec![
            (MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE),
            ("PLUGIN_PROTOCOL_VERSIONS", "5,6"),
            ("PLUGIN_MIN_PORT", "10000"),
            ("PLUGIN_MAX_PORT", "25000"),
            ("PLUGIN_CLIENT_CERT", "-----BEGIN CERTIFICATE-----"),
        ]
    }

    #[test]
    fn accepts_terraform_environment() {
        let cfg = HandshakeConfig::from_map(&env(&terraform_env())).unwrap();
        assert_eq!((cfg.min_port, cfg.max_port), (10000, 25000));
    }

    #[test]
    fn refuses_without_cookie_or_with_wrong_cookie() {
        let mut e = terraform_env();
        e.remove(0);
        assert_eq!(
            HandshakeConfig::from_map(&env(&e)),
            Err(HandshakeError::NotLaunchedByTerraform)
        );
        e.push((MAGIC_COOKIE_KEY, "nope"));
        assert_eq!(
            HandshakeConfig::from_map(&env(&e)),
            Err(HandshakeError::NotLaunchedByTerraform)
        );
    }

    #[test]
    fn refuses_protocol_five_only() {
        let mut e = terraform_env();
        e[1] = ("PLUGIN_PROTOCOL_VERSIONS", "5");
        let err = HandshakeConfig::from_map(&env(&e)).unwrap_err();
        assert!(err.to_string().contains("only version 6"), "{err}");
    }

    #[test]
    fn refuses_bad_ports_and_missing_cert() {
        let mut e = terraform_env();
        e[2] = ("PLUGIN_MIN_PORT", "30000");
        assert!(matches!(
            HandshakeConfig::from_map(&env(&e)),
            Err(HandshakeError::BadPortRange { .. })
        ));
        let mut e = terraform_env();
        e.pop();
        assert_eq!(
            HandshakeConfig::from_map(&env(&e)),
            Err(HandshakeError::NoClientCert)
        );
    }

    #[test]
    fn line_has_six_fields_and_unpadded_cert() {
        let line = handshake_line("127.0.0.1:12345".parse().unwrap(), &[1, 2, 3, 4]);
        assert_eq!(line, "1|6|tcp|127.0.0.1:12345|grpc|AQIDBA");
    }
}
