//! AutoMTLS as go-plugin does it: a fresh self-signed server certificate per launch, and a
//! client verifier that accepts exactly the one certificate Terraform passed in
//! `PLUGIN_CLIENT_CERT`.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use std::sync::Arc;

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `PLUGIN_CLIENT_CERT` holds no usable certificate.
    #[error("PLUGIN_CLIENT_CERT does not hold a PEM certificate: {0}")]
    BadClientCert(String),
    /// Generating our own certificate failed.
    #[error("could not generate the server certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// A server certificate made for one launch.
pub struct ServerIdentity {
    /// The certificate, DER encoded (it goes into the handshake line).
    pub cert_der: CertificateDer<'static>,
    key_der: PrivateKeyDer<'static>,
}

impl ServerIdentity {
    /// A new self-signed certificate for `localhost` (ECDSA P-256), shaped like go-plugin's
    /// own: a CA certificate usable for server and client authentication.
    pub fn generate() -> Result<Self, TlsError> {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
            KeyUsagePurpose,
        };
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
        params
            .distinguished_name
            .push(DnType::OrganizationName, "terraform-provider");
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(30)).into();
        params.not_after = (now + std::time::Duration::from_secs(7 * 24 * 3600)).into();
        let cert = params.self_signed(&key)?;
        Ok(ServerIdentity {
            cert_der: cert.der().clone(),
            key_der: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        })
    }
}

/// The crypto provider used everywhere in the plugin (aws-lc-rs: it verifies the P-521
/// signatures of Terraform's client certificate, which ring cannot).
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The rustls server configuration: our identity, h2 ALPN (gRPC clients insist on it), and
/// a client verifier pinned to Terraform's certificate.
pub fn server_config(
    identity: &ServerIdentity,
    client_cert_pem: &str,
) -> Result<rustls::ServerConfig, TlsError> {
    let provider = crypto_provider();
    let verifier = PinnedClientVerifier::from_pem(client_cert_pem, &provider)?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(Arc::new(verifier))
        .with_single_cert(
            vec![identity.cert_der.clone()],
            identity.key_der.clone_key(),
        )?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// Accepts a client only if it presents exactly the pinned certificate and proves it holds
/// that certificate's key.
#[derive(Debug)]
pub struct PinnedClientVerifier {
    expected: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedClientVerifier {
    /// Pins the first certificate of `pem`.
    pub fn from_pem(pem: &str, provider: &CryptoProvider) -> Result<Self, TlsError> {
        let expected = CertificateDer::pem_slice_iter(pem.as_bytes())
            .next()
            .ok_or_else(|| TlsError::BadClientCert("no CERTIFICATE block".into()))?
            .map_err(|e| TlsError::BadClientCert(e.to_string()))?;
        Ok(PinnedClientVerifier {
            expected,
            algorithms: provider.signature_verification_algorithms,
        })
    }
}

impl ClientCertVerifier for PinnedClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.expected.as_ref() {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem_of(der: &[u8]) -> String {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
        for chunk in b64.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(chunk).unwrap());
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE-----\n");
        pem
    }

    #[test]
    fn pins_exactly_one_certificate() {
        let a = ServerIdentity::generate().unwrap();
        let b = ServerIdentity::generate().unwrap();
        let v = PinnedClientVerifier::from_pem(&pem_of(&a.cert_der), &crypto_provider()).unwrap();
        assert!(
            v.verify_client_cert(&a.cert_der, &[], UnixTime::now())
                .is_ok()
        );
        assert!(
            v.verify_client_cert(&b.cert_der, &[], UnixTime::now())
                .is_err()
        );
    }

    #[test]
    fn verifier_supports_p521_sha512() {
        let v = PinnedClientVerifier::from_pem(
            &pem_of(&ServerIdentity::generate().unwrap().cert_der),
            &crypto_provider(),
        )
        .unwrap();
        assert!(
            v.supported_verify_schemes()
                .contains(&SignatureScheme::ECDSA_NISTP521_SHA512)
        );
    }

    #[test]
    fn garbage_client_cert_is_an_error() {
        assert!(matches!(
            PinnedClientVerifier::from_pem("hello", &crypto_provider()),
            Err(TlsError::BadClientCert(_))
        ));
    }

    #[test]
    fn server_config_offers_h2() {
        let id = ServerIdentity::generate().unwrap();
        let cfg = server_config(&id, &pem_of(&id.cert_der)).unwrap();
        assert_eq!(cfg.alpn_protocols, vec![b"h2".to_vec()]);
    }
}
