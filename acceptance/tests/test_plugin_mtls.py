"""The go-plugin handshake and AutoMTLS, driven by hand as Terraform drives them."""

import base64
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from plugin import (MAX_PORT, MIN_PORT, Plugin, connect, grpc_unary, health_check,
                    make_client_cert, plugin_env, probe)


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

