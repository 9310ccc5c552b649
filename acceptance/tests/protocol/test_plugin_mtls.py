"""The go-plugin handshake and AutoMTLS, driven by hand as Terraform drives them: the
handshake line is right, only Terraform's exact client certificate is accepted, the
`plugin` health service serves, `GRPCController/Shutdown` stops the plugin, and
`PLUGIN_PROTOCOL_VERSIONS=5` is refused.

- the handshake line (`1|6|tcp|127.0.0.1:PORT|grpc|<cert>`, the certificate unpadded
  base64 with SAN localhost);
- mTLS with a client certificate shaped like Terraform's (P-521, SHA-512, CA,
  O=HashiCorp, CN/SAN localhost): accepted; another certificate of the same shape, a P-256
  one, or none: refused;
- `test_only_terraforms_certificate_is_accepted`: three rounds of no certificate, another
  self-signed one of the same shape, a P-256 one, a leaf issued by Terraform's certificate
  (which is a CA: go-plugin's own server would take it, ours pins the exact certificate)
  and another certificate with Terraform's sent as intermediate, each refused by the
  server (one `refused TLS client` warning per attempt), Terraform's accepted between
  rounds, no RPC for a refused client.

`test_only_terraforms_certificate_is_accepted` writes the reliability row "plugin
connections refused without Terraform's client cert" (`make reliability`).
"""

import base64
import datetime
import ssl
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

import reliability
from plugin import (MAX_PORT, MIN_PORT, ClientCert, Plugin, connect, grpc_unary,
                    health_check, make_client_cert, plugin_env, probe)


@pytest.fixture
def certs(tmp_path):
    return {
        "terraform": make_client_cert(tmp_path, "terraform"),
        "other": make_client_cert(tmp_path, "other"),   # same shape, different key
    }


@pytest.fixture
def plugin(provider_bin, certs):
    p = Plugin(provider_bin, plugin_env(certs["terraform"]))
    yield p
    p.kill()


def test_handshake_line(plugin):
    hs = plugin.handshake()
    assert hs.core_version == "1", hs.line
    assert hs.protocol_version == "6", hs.line
    assert hs.network == "tcp", hs.line
    assert hs.host == "127.0.0.1", hs.line
    assert MIN_PORT <= hs.port <= MAX_PORT, hs.line
    assert hs.protocol == "grpc", hs.line
    assert "=" not in hs.server_cert_b64, "base64 must be unpadded"
    assert base64.b64encode(hs.server_cert_der).decode().rstrip("=") == hs.server_cert_b64
    cert = x509.load_der_x509_certificate(hs.server_cert_der)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in san.get_values_for_type(x509.DNSName)
    assert plugin.proc.poll() is None, "plugin exited after the handshake"


def test_terraforms_certificate_is_accepted(plugin, certs):
    hs = plugin.handshake()
    with connect(hs, certs["terraform"]) as sock:
        assert sock.selected_alpn_protocol() == "h2"
        assert sock.getpeercert(binary_form=True) == hs.server_cert_der
    assert probe(hs, certs["terraform"]) == "accepted"


def test_health_service_serving(plugin, certs):
    hs = plugin.handshake()
    assert health_check(hs, certs["terraform"], "plugin") == 1  # SERVING


def test_other_certificate_is_refused(plugin, certs):
    hs = plugin.handshake()
    assert probe(hs, certs["other"]).startswith("refused"), "accepted a certificate Terraform did not pass"
    # and the right one still works afterwards
    assert probe(hs, certs["terraform"]) == "accepted"


def test_p256_certificate_is_refused(plugin, tmp_path):
    hs = plugin.handshake()
    p256 = make_client_cert(tmp_path, "p256", ec.SECP256R1())
    assert probe(hs, p256).startswith("refused")


def test_no_certificate_is_refused(plugin, certs):
    hs = plugin.handshake()
    assert probe(hs, None).startswith("refused"), "accepted a client without a certificate"
    assert probe(hs, certs["terraform"]) == "accepted"


def test_controller_shutdown(plugin, certs):
    """GRPCController.Shutdown (go-plugin) makes the plugin exit."""
    hs = plugin.handshake()
    # go-plugin's own server stops at once and may drop the reply; Terraform ignores it.
    try:
        status, _ = grpc_unary(hs, certs["terraform"], "/plugin.GRPCController/Shutdown", b"")
    except (OSError, ssl.SSLError):
        status = "connection closed"
    assert status in ("0", "?", "connection closed"), f"Shutdown answered grpc-status {status}"
    assert plugin.wait(10) == 0


def test_protocol_5_only_is_refused(provider_bin, certs):
    with Plugin(provider_bin, plugin_env(certs["terraform"], versions="5")) as p:
        line = p.read_line(timeout=20)
        assert line is None or not line.startswith("1|"), f"served: {line}"
        code = p.wait(10)
        assert code != 0
        msg = (line or "") + p.stderr
        assert "protocol" in msg.lower(), msg



def issued_by(issuer: ClientCert, directory, name: str) -> ClientCert:
    """A client certificate (P-521, CN/SAN localhost) signed by `issuer`'s key: it chains
    to Terraform's certificate, which is a CA. go-plugin's own server would accept it (it
    uses the client certificate as a root pool); ours pins the exact certificate, so it
    must not (only Terraform holds that key anyway)."""
    issuer_cert = x509.load_pem_x509_certificate(issuer.cert_pem)
    issuer_key = serialization.load_pem_private_key(issuer.key_pem, None)
    key = ec.generate_private_key(ec.SECP521R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "HashiCorp"),
            x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
        ]))
        .issuer_name(issuer_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(issuer_key, hashes.SHA512())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    # The issuer goes along as the chain, as a client that wants it to verify would send it.
    cert_path.write_bytes(cert_pem + issuer.cert_pem)
    key_path.write_bytes(key_pem)
    return ClientCert(cert_pem, key_pem, cert_path, key_path)


def behind(leaf: ClientCert, extra: ClientCert, directory, name: str) -> ClientCert:
    """`leaf` (with its key) presented with `extra`'s certificate as an intermediate."""
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(leaf.cert_pem + extra.cert_pem)
    key_path.write_bytes(leaf.key_pem)
    return ClientCert(leaf.cert_pem, leaf.key_pem, cert_path, key_path)


def test_only_terraforms_certificate_is_accepted(plugin, certs, tmp_path):
    """Every way in without Terraform's exact client certificate is refused, repeatedly,
    and Terraform's own is accepted before, between and after them (a refusal must not
    stop the server)."""
    hs = plugin.handshake()
    wrong = {
        "no certificate": None,
        "another self-signed certificate of the same shape": certs["other"],
        "a P-256 certificate": make_client_cert(tmp_path, "p256", ec.SECP256R1()),
        "a certificate issued by Terraform's (a CA)": issued_by(certs["terraform"], tmp_path,
                                                                 "issued"),
        "another certificate with Terraform's as intermediate": behind(
            certs["other"], certs["terraform"], tmp_path, "behind"),
    }
    rounds = 3
    assert probe(hs, certs["terraform"]) == "accepted"
    attempts = refused = 0
    accepted_wrong = []
    for _ in range(rounds):
        for what, cert in wrong.items():
            attempts += 1
            answer = probe(hs, cert)
            if answer.startswith("refused"):
                refused += 1
            else:
                accepted_wrong.append(f"{what}: {answer}")
        assert probe(hs, certs["terraform"]) == "accepted", "Terraform's certificate refused"
    # Each refusal is the server's (it logs one warning per refused TLS client), not a
    # client-side failure to load a certificate.
    deadline = time.monotonic() + 5
    while plugin.stderr.count("refused TLS client") < attempts and time.monotonic() < deadline:
        time.sleep(0.05)
    logged = plugin.stderr.count("refused TLS client")
    assert logged == attempts, f"{logged} server-side refusals for {attempts} attempts:\n{plugin.stderr}"
    # A refused client gets no RPC either, and the right one still does.
    with pytest.raises((OSError, ssl.SSLError, AssertionError)):
        grpc_unary(hs, certs["other"], "/grpc.health.v1.Health/Check", b"")
    assert health_check(hs, certs["terraform"], "plugin") == 1
    assert plugin.proc.poll() is None, "plugin exited after refusing clients"

    reliability.record(
        "plugin connections refused without Terraform's client cert", refused, attempts,
        "all", refused == attempts,
        f"{rounds} rounds of: {', '.join(wrong)}; Terraform's certificate accepted "
        f"before and after each round")
    assert refused == attempts, f"accepted without Terraform's certificate: {accepted_wrong}"
