"""Driving the provider binary the way Terraform's go-plugin client does, in pure Python:
the environment, the handshake line, a client certificate shaped like Terraform's, mTLS,
and small gRPC calls over HTTP/2 (h2). Used by tests/protocol/test_plugin_*.py and bench.py."""

from __future__ import annotations

import base64
import datetime
import os
import selectors
import socket
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
MIN_PORT, MAX_PORT = 10000, 25000


@dataclass
class ClientCert:
    cert_pem: bytes
    key_pem: bytes
    cert_path: Path
    key_path: Path


def make_client_cert(directory: Path, name: str = "client",
                     curve: ec.EllipticCurve | None = None) -> ClientCert:
    """A certificate like the one Terraform (go-plugin) makes for each launch: self-signed,
    CA, ECDSA P-521 signed with SHA-512, O=HashiCorp, CN=localhost, SAN localhost, EKU
    client+server auth."""
    key = ec.generate_private_key(curve or ec.SECP521R1())
    subject = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "HashiCorp"),
        x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
    ])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=True,
            data_encipherment=False, key_agreement=True, key_cert_sign=True, crl_sign=False,
            encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA512())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert_pem)
    key_path.write_bytes(key_pem)
    return ClientCert(cert_pem, key_pem, cert_path, key_path)


def plugin_env(client_cert: ClientCert | None, versions: str = "5,6", **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PLUGIN_", "TF_PLUGIN_", "TF_REATTACH"))}
    env.update({
        MAGIC_COOKIE_KEY: MAGIC_COOKIE,
        "PLUGIN_PROTOCOL_VERSIONS": versions,
        "PLUGIN_MIN_PORT": str(MIN_PORT),
        "PLUGIN_MAX_PORT": str(MAX_PORT),
    })
    if client_cert is not None:
        env["PLUGIN_CLIENT_CERT"] = client_cert.cert_pem.decode()
    env.update(extra)
    return env


@dataclass
class Handshake:
    line: str
    core_version: str
    protocol_version: str
    network: str
    address: str
    protocol: str
    server_cert_b64: str

    @property
    def host(self) -> str:
        return self.address.rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    @property
    def server_cert_der(self) -> bytes:
        b64 = self.server_cert_b64
        return base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True)


def parse_handshake(line: str) -> Handshake:
    parts = line.rstrip("\r\n").split("|")
    assert len(parts) == 6, f"handshake line must have 6 fields: {line!r}"
    return Handshake(line, *parts)


class Plugin:
    """The provider launched as a plugin. Use as a context manager: killed on exit."""

    def __init__(self, binary: Path, env: dict):
        self.started = time.monotonic()
        self.proc = subprocess.Popen([str(binary)], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._stderr = bytearray()
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self._stderr += chunk

    @property
    def stderr(self) -> str:
        return self._stderr.decode(errors="replace")

    def read_line(self, timeout: float = 20) -> str | None:
        """The first stdout line, or None if stdout closed (process exited) first."""
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no handshake line within {timeout}s; stderr: {self.stderr}")
            if not sel.select(left):
                continue
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                return buf.decode() if buf else None
            buf += chunk
        self.line_at = time.monotonic()
        return buf.split(b"\n", 1)[0].decode()

    def handshake(self, timeout: float = 20) -> Handshake:
        line = self.read_line(timeout)
        assert line is not None, (f"plugin exited (code {self.proc.wait()}) without a "
                                  f"handshake line; stderr: {self.stderr}")
        return parse_handshake(line)

    def vm_hwm_kib(self) -> int | None:
        try:
            for row in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if row.startswith("VmHWM:"):
                    return int(row.split()[1])
        except OSError:
            return None
        return None

    def wait(self, timeout: float = 10) -> int:
        return self.proc.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._stderr_thread.join(5)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def client_context(hs: Handshake, cert: ClientCert | None) -> ssl.SSLContext:
    """TLS as go-plugin's client does it: trust exactly the server certificate from the
    handshake line, server name localhost, ALPN h2, present the client certificate."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_verify_locations(cadata=hs.server_cert_der)
    if hasattr(ssl, "VERIFY_X509_PARTIAL_CHAIN"):
        ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    ctx.check_hostname = True
    ctx.set_alpn_protocols(["h2"])
    if cert is not None:
        ctx.load_cert_chain(str(cert.cert_path), str(cert.key_path))
    return ctx


def connect(hs: Handshake, cert: ClientCert | None, timeout: float = 10) -> ssl.SSLSocket:
    raw = socket.create_connection((hs.host, hs.port), timeout=timeout)
    try:
        return client_context(hs, cert).wrap_socket(raw, server_hostname="localhost")
    except BaseException:
        raw.close()
        raise


def probe(hs: Handshake, cert: ClientCert | None, timeout: float = 10) -> str:
    """'accepted' if the server speaks HTTP/2 to us (sends SETTINGS) over TLS with this
    client certificate; 'refused: …' if the handshake fails or the connection closes
    before any HTTP/2 data. Raises TimeoutError if the server does neither."""
    import h2.connection
    import h2.events
    try:
        sock = connect(hs, cert, timeout)
    except (ssl.SSLError, ConnectionError, OSError) as e:
        return f"refused: handshake: {e!r}"
    try:
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        while True:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                raise TimeoutError("server neither answered nor closed the connection")
            except (ssl.SSLError, ConnectionError, OSError) as e:
                return f"refused: after handshake: {e!r}"
            if not data:
                return "refused: closed before any HTTP/2 data"
            for ev in conn.receive_data(data):
                if isinstance(ev, h2.events.RemoteSettingsChanged):
                    return "accepted"
    finally:
        sock.close()


def grpc_unary(hs: Handshake, cert: ClientCert, path: str, message: bytes,
               timeout: float = 10) -> tuple[str, bytes]:
    """One unary gRPC call; returns (grpc-status, response message bytes)."""
    import h2.connection
    import h2.events
    sock = connect(hs, cert, timeout)
    assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
    try:
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [
            (":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
            (":path", path), ("content-type", "application/grpc"), ("te", "trailers"),
        ])
        conn.send_data(sid, b"\x00" + len(message).to_bytes(4, "big") + message,
                       end_stream=True)
        sock.sendall(conn.data_to_send())
        body, headers, done, pending = b"", {}, False, b""
        while not done:
            data = sock.recv(65536)
            if not data:
                break
            # Feed h2 one frame at a time and stop at the end of our stream or a GOAWAY:
            # a server shutting down may send GOAWAY then PING in one read, which h2
            # rejects as a protocol error (losing the events before it).
            pending += data
            frames = []
            while len(pending) >= 9 and len(pending) >= 9 + int.from_bytes(pending[:3], "big"):
                n = 9 + int.from_bytes(pending[:3], "big")
                frames.append(pending[:n])
                pending = pending[n:]
            events = []
            for frame in frames:
                events += conn.receive_data(frame)
                if any(isinstance(e, h2.events.ConnectionTerminated) for e in events):
                    break
            for ev in events:
                if isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                    headers.update({_s(k): _s(v) for k, v in ev.headers})
                elif isinstance(ev, h2.events.DataReceived):
                    body += ev.data
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset,
                                     h2.events.ConnectionTerminated)):
                    done = True  # a GOAWAY (e.g. during Shutdown) ends it too
            if done:
                break
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
        status = headers.get("grpc-status", "?")
        msg = body[5:5 + int.from_bytes(body[1:5], "big")] if len(body) >= 5 else b""
        return status, msg
    finally:
        sock.close()


def _s(v):
    return v.decode() if isinstance(v, bytes) else v


def health_check(hs: Handshake, cert: ClientCert, service: str = "plugin") -> int | None:
    """grpc.health.v1.Health/Check; returns the status enum (1 = SERVING)."""
    req = b"\x0a" + bytes([len(service)]) + service.encode()
    status, msg = grpc_unary(hs, cert, "/grpc.health.v1.Health/Check", req)
    assert status == "0", f"grpc-status {status}"
    # HealthCheckResponse { status = 1 (varint) }; an empty message means UNKNOWN (0)
    return msg[1] if len(msg) >= 2 and msg[0] == 0x08 else 0
