"""Small fake cloud APIs for the acceptance suite: Azure Resource Manager with AKS agent
pools (`azure/aks.py`), the GKE Container API v1 (`google/gke.py`), the two token endpoints
their credentials come from (`azure/tokens.py`, `google/tokens.py`, with the registry of
what they issued in `tokens.py`), and EC2 Capacity Blocks and Capacity Reservations in
front of moto (`aws/ec2_commitments.py`). See README.md in this directory for what each
serves and which public reference every behaviour comes from.

This module holds what the fakes share:

- `FakeServer`: a `ThreadingHTTPServer` on 127.0.0.1 (a free port unless told otherwise,
  plain HTTP, or HTTPS when given an `ssl.SSLContext`), one lock around all state, a log of
  every request (method, path, query, whether a bearer token came, the status answered),
  injected faults, and the test-control surface under `/_fake/` that no cloud client would
  call: `GET /_fake/state`, `POST /_fake/faults`, `POST /_fake/reset`,
  `POST /_fake/complete` and `POST /_fake/clusters` (the last three where the fake has
  clusters and operations).
- `tls_context(directory)`: a self-signed certificate for 127.0.0.1/localhost, for clients
  that refuse bearer tokens over plain HTTP (azure_core's `BearerTokenAuthorizationPolicy`
  does).
- `time_scale()`/`scaled()`: the test-only time scale `GPU_TF_TIME_SCALE` (a number in
  (0, 1], default 1 = real time) that every fake applies to what it does after real
  seconds (README.md, "Time scale"); `FakeServer(time_scale=...)` overrides it per fake.
- `retry_after_header()`, `route()`: small pieces every cloud's fakes use.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import json
import math
import os
import random
import re
import ssl
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit


TIME_SCALE_VAR = "GPU_TF_TIME_SCALE"


def time_scale(value=None) -> float:
    """The time scale: `value` when given, else the environment's `GPU_TF_TIME_SCALE`
    (unset or empty: 1, real time). A number greater than 0 and at most 1, by which the
    fakes multiply every span of cloud time they wait out in real time, as the provider
    multiplies its own waits (crates/core/src/pace.rs); ValueError for anything else."""
    text = os.environ.get(TIME_SCALE_VAR, "") if value is None else value
    if isinstance(text, str) and not text.strip():
        return 1.0
    try:
        factor = float(text)
    except (TypeError, ValueError):
        factor = math.nan
    if not (math.isfinite(factor) and 0.0 < factor <= 1.0):
        raise ValueError(f"{TIME_SCALE_VAR}={text!r} is not a time scale: it must be a number "
                         "greater than 0 and at most 1 (such as 0.01)")
    return factor


_time_scale = time_scale  # for FakeServer, whose argument has the same name


def scaled(seconds: float, scale=None) -> float:
    """The real seconds that `seconds` of cloud time take at `scale` (default: the
    environment's)."""
    return float(seconds) * time_scale(scale)


def retry_after_header(retry_after) -> dict:
    """`{"Retry-After": "<seconds>"}`, or `{}` when `retry_after` is None. The value is
    cloud time and never scaled: the client scales its own wait."""
    return {} if retry_after is None else {"Retry-After": str(retry_after)}


def route(routes, path: str):
    """The first `(kind, pattern)` of `routes` whose pattern matches all of `path`:
    (kind, match), or (None, None)."""
    for kind, pattern in routes:
        m = pattern.fullmatch(path)
        if m:
            return kind, m
    return None, None


class CloudClock:
    """The clock of a fake whose resources change with the date (commitments that start,
    renew and expire): the wall clock plus an offset only the test moves (`/_fake/clock`,
    `move_clock`). It is cloud time, the time of the dates in answers, and the time scale
    never speeds it up: dates must stay comparable with the client's own clock."""

    clock_offset = _dt.timedelta(0)

    def now(self) -> _dt.datetime:
        """The fake's clock: real time moved by the test."""
        return _dt.datetime.now(_dt.timezone.utc) + self.clock_offset

    def move_clock(self, to: _dt.datetime | None = None, **forward) -> None:
        """Sets the clock to the aware instant `to` (if given), then moves it forward by
        `forward` (`days=`, `hours=`; None is no move)."""
        if to is not None:
            self.clock_offset = to - _dt.datetime.now(_dt.timezone.utc)
        self.clock_offset += _dt.timedelta(**{k: float(v) for k, v in forward.items()
                                              if v is not None})


def set_capacity_switches(switches: dict[str, str], changes: dict) -> None:
    """Applies `changes` ({cluster name or location: "stockout" | "quota" | None}) to a
    fake's capacity `switches`; None removes a switch."""
    for where, outcome in changes.items():
        if outcome is None:
            switches.pop(where, None)
        elif outcome in ("stockout", "quota"):
            switches[where] = outcome
        else:
            raise ValueError(f"capacity must be stockout or quota, not {outcome!r}")


def now_rfc3339() -> str:
    """UTC now as RFC 3339 with a `Z`, the form both clouds use for timestamps."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds").replace(
        "+00:00", "Z")


@dataclass
class Response:
    """What a handler answers: a status, a body (dict/list: JSON; bytes: as is; None:
    empty) and headers."""

    status: int
    body: object = None
    headers: dict = field(default_factory=dict)


@dataclass
class Request:
    """One request as a handler sees it. `log` is its entry in the request log; handlers
    may add fields to it (never secrets)."""

    method: str
    path: str          # percent-decoded path, no query
    query: dict        # parse_qs of the query string
    headers: object    # http.client.HTTPMessage (case-insensitive get)
    body: bytes
    log: dict
    target: str = ""   # the request target as received: raw path and query, not decoded

    def bearer(self) -> str | None:
        """The token of an `Authorization: Bearer <token>` header, else None."""
        value = self.headers.get("Authorization") or ""
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return token.strip() or None

    def json(self):
        """The body parsed as JSON (ValueError when it is not)."""
        return json.loads(self.body.decode("utf-8")) if self.body else None


@dataclass
class Fault:
    """Answer `count` requests matching `method` (or "*") and the regular expression `path`
    (searched in `FakeServer.fault_target`: the decoded path unless the fake says otherwise)
    with `status`, in the cloud's error shape. With `lose_answer` the request is served
    first (its side effects happen) and the error replaces the real answer: a lost answer."""

    method: str
    path: str
    status: int
    count: int = 1
    retry_after: int | None = None
    code: str | None = None
    message: str | None = None
    lose_answer: bool = False

    def matches(self, method: str, path: str) -> bool:
        return self.count > 0 and self.method in ("*", method) and re.search(self.path, path)


FAULT_KEYS = ("method", "path", "status", "count", "retry_after", "code", "message",
              "lose_answer")


@dataclass
class RandomFault:
    """Answer a share `rate` of the requests matching `method` and `path` (as `Fault`)
    with `status`, drawn from a generator seeded with `seed` so a run can be repeated:
    the background throttling of a busy account. `lose_answer` as in `Fault`."""

    rate: float
    status: int = 429
    seed: int = 0
    method: str = "*"
    path: str = ".*"
    retry_after: int | None = None
    code: str | None = None
    message: str | None = None
    lose_answer: bool = False
    rng: random.Random = field(default=None, repr=False, compare=False)
    injected: int = 0

    def __post_init__(self):
        if not 0.0 <= float(self.rate) <= 1.0:
            raise ValueError("rate must be within 0 and 1")
        self.rate, self.status = float(self.rate), int(self.status)
        self.method = self.method.upper() if self.method != "*" else "*"
        self.rng = random.Random(int(self.seed))

    def draw(self, method: str, path: str) -> bool:
        """Whether this request is answered with the fault (draws only for matches)."""
        if self.method not in ("*", method) or not re.search(self.path, path):
            return False
        hit = self.rng.random() < self.rate
        self.injected += hit
        return hit

    def public(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "rng"}


class FakeServer:
    """Base of every fake. Subclasses implement `handle(request) -> Response`,
    `error(status, code, message, retry_after) -> Response` (their cloud's error shape) and
    `snapshot() -> dict` (their stored state), and may override `configure`, `seed`,
    `complete`, `reset_state` and `control_routes`.

    `time_scale` (default: `GPU_TF_TIME_SCALE`, else 1) multiplies every span of cloud time
    the fake waits out in real time (`scaled`, `has_run`); `time_scale=1` runs a fake at
    real time whatever the environment says. Its state shows it under `settings`."""

    name = "fake"

    def __init__(self, time_scale=None):
        self.time_scale = _time_scale(time_scale)
        self.lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.scheme = "http"
        self.requests: list[dict] = []
        self.faults: list[Fault] = []
        self.random_faults: list[RandomFault] = []

    # --- lifecycle ------------------------------------------------------------------

    def start(self, port: int = 0, ssl_context: ssl.SSLContext | None = None):
        """Serves on 127.0.0.1:`port` (0: a free one) in a daemon thread; returns self."""
        server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        server.daemon_threads = True
        server.fake = self
        if ssl_context is not None:
            server.socket = ssl_context.wrap_socket(server.socket, server_side=True)
            self.scheme = "https"
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                                        name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving and closes the socket (this server only)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def __enter__(self):
        return self if self._server else self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash)."""
        return f"{self.scheme}://127.0.0.1:{self.port}"

    # --- time -----------------------------------------------------------------------

    def scaled(self, seconds: float) -> float:
        """The real seconds `seconds` of cloud time take at this fake's time scale."""
        return float(seconds) * self.time_scale

    def has_run(self, started: float, seconds: float) -> bool:
        """Whether `seconds` of cloud time have passed since `started` (a
        `time.monotonic()` reading): the number is scaled, never the clock."""
        return time.monotonic() - started >= self.scaled(seconds)

    # --- test control (also reachable over HTTP under /_fake/) ------------------------

    def inject(self, method: str = "*", path: str = ".*", status: int = 429, count: int = 1,
               retry_after: int | None = None, code: str | None = None,
               message: str | None = None, lose_answer: bool = False) -> Fault:
        """Answers the next `count` matching requests with an error instead of serving
        them (`retry_after` adds a `Retry-After: <seconds>` header; `lose_answer` serves
        them first, so only the answer is lost)."""
        fault = Fault(method.upper() if method != "*" else "*", path, int(status), int(count),
                      None if retry_after is None else int(retry_after), code, message,
                      bool(lose_answer))
        with self.lock:
            self.faults.append(fault)
        return fault

    def inject_random(self, rate: float, status: int = 429, **options) -> RandomFault:
        """Answers a share `rate` of the matching requests (`method`, `path`) with `status`
        from now on, until `clear`ed; see `RandomFault` for the options."""
        fault = RandomFault(rate, status, **options)
        with self.lock:
            self.random_faults.append(fault)
        return fault

    def configure(self, settings: dict) -> None:
        """Applies fake-specific settings (e.g. `polls`); unknown keys are an error."""
        if settings:
            raise ValueError(f"unknown settings {sorted(settings)}")

    def seed(self, spec: dict) -> dict:
        raise LookupError("this fake has no clusters")

    def complete(self) -> int:
        """Finishes every running operation at once; returns how many."""
        return 0

    def reset(self) -> None:
        """Forgets all state, the request log and the faults."""
        with self.lock:
            self.requests.clear()
            self.faults.clear()
            self.random_faults.clear()
            self.reset_state()

    def reset_state(self) -> None:
        pass

    def state(self) -> dict:
        """What `GET /_fake/state` answers: the stored state, the request log and the
        faults still pending."""
        with self.lock:
            snapshot = self.snapshot()
            snapshot["settings"] = {**snapshot.get("settings", {}), "time_scale": self.time_scale}
            state = {**snapshot, "requests": self.requests,
                     "faults": [f.__dict__ for f in self.faults if f.count > 0],
                     "random_faults": [f.public() for f in self.random_faults]}
            return json.loads(json.dumps(state))  # a deep copy, detached from the fake

    def snapshot(self) -> dict:
        return {}

    def control_routes(self) -> dict:
        """The fake's own `POST /_fake/<name>` endpoints: path -> a function of the JSON
        body that returns (status, answer). A failure in `control_errors` answers 400 with
        `control_failure`."""
        return {}

    control_errors: tuple = (TypeError, ValueError, KeyError, LookupError)

    def control_failure(self, e: Exception) -> Response:
        return Response(400, {"error": f"{type(e).__name__}: {e}"})

    # --- dispatch -------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        raise NotImplementedError

    def error(self, status: int, code: str | None, message: str | None,
              retry_after: int | None = None) -> Response:
        raise NotImplementedError

    def fault_target(self, request: Request) -> str:
        """What a fault's `path` pattern is searched in; called first for every request.
        The decoded path here; a fake whose API names the operation elsewhere (EC2's
        `Action` parameter) overrides it."""
        return request.path

    def log_entry(self, request: Request) -> dict:
        """The request log entry; subclasses may add (non-secret) fields."""
        return request.log

    def dispatch(self, method: str, raw_path: str, headers, body: bytes) -> Response:
        url = urlsplit(raw_path)
        path = unquote(url.path)
        if path.startswith("/_fake/"):
            return self._control(method, path, body)
        auth = headers.get("Authorization") or ""
        entry = {"at": time.time(), "method": method, "path": path, "query": url.query,
                 "bearer": auth[:7].lower() == "bearer " and bool(auth[7:].strip()),
                 "status": None}
        request = Request(method, path, parse_qs(url.query, keep_blank_values=True), headers,
                          body, entry, raw_path)
        with self.lock:
            self.requests.append(entry)
            target = self.fault_target(request)
            fault = next((f for f in self.faults if f.matches(method, target)), None)
            if fault is not None:
                fault.count -= 1
            else:
                fault = next((f for f in self.random_faults if f.draw(method, target)), None)
            if fault is not None:
                entry["injected"] = True
                if fault.lose_answer:
                    entry["lost_status"] = self._handle_safely(request).status
                response = self.error(fault.status, fault.code, fault.message,
                                      fault.retry_after)
            else:
                response = self._handle_safely(request)
            entry["status"] = response.status
        return response

    def _handle_safely(self, request: Request) -> Response:
        """`handle`, with a bug in the fake turned into a 500 that shows the traceback."""
        try:
            return self.handle(request)
        except Exception:  # a bug in the fake: say so loudly, as a 500
            return Response(500, {"fake_bug": traceback.format_exc()})

    def _control(self, method: str, path: str, body: bytes) -> Response:
        routes = self.control_routes() if method == "POST" else {}
        if path in routes:
            try:
                status, answer = routes[path](json.loads(body or b"{}"))
                return Response(status, answer)
            except self.control_errors as e:
                return self.control_failure(e)
        try:
            data = json.loads(body or b"{}")
        except ValueError as e:
            return Response(400, {"error": f"control body is not JSON: {e}"})
        try:
            if method == "GET" and path == "/_fake/state":
                return Response(200, self.state())
            if method == "POST" and path == "/_fake/reset":
                self.reset()
                return Response(200, {"reset": True})
            if method == "POST" and path == "/_fake/complete":
                return Response(200, {"completed": self.complete()})
            if method == "POST" and path == "/_fake/clusters":
                with self.lock:
                    return Response(201, self.seed(data))
            if method == "POST" and path == "/_fake/faults":
                faults = data.pop("faults", None) or ([data.pop("fault")] if "fault" in data
                                                      else [])
                if "status" in data:  # the body itself is one fault
                    faults.append({k: data.pop(k) for k in FAULT_KEYS if k in data})
                randoms = data.pop("random", None) or []
                if data.pop("clear", False):
                    with self.lock:
                        self.faults.clear()
                        self.random_faults.clear()
                with self.lock:
                    self.configure(data)
                for f in faults:
                    self.inject(**f)
                for f in randoms:
                    self.inject_random(**f)
                return Response(200, {"faults": [f.__dict__.copy() for f in self.faults
                                                 if f.count > 0],
                                      "random_faults": [f.public()
                                                        for f in self.random_faults]})
        except (TypeError, ValueError, KeyError, LookupError) as e:
            return Response(400, {"error": str(e)})
        return Response(404, {"error": f"no control endpoint {method} {path}"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-cloud"
    sys_version = ""

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        response = self.server.fake.dispatch(self.command, self.path, self.headers,
                                             self._body())
        body = response.body
        headers = dict(response.headers)
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json; charset=utf-8")
        else:
            data = body or b""
        self.send_response(response.status)
        for key, value in headers.items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = _serve

    def log_message(self, *args) -> None:  # the request log is in the fake's state
        pass


def request_id() -> str:
    return str(uuid.uuid4())


def tls_context(directory: Path) -> tuple[ssl.SSLContext, Path]:
    """A server `SSLContext` for 127.0.0.1 and localhost: a fresh certificate authority
    and a server certificate it signs (clients such as rustls refuse a CA certificate
    used as a server's own), and the path of the CA certificate (PEM) for clients to
    trust."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.timezone.utc)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("fake-cloud test CA"))
          .issuer_name(name("fake-cloud test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - _dt.timedelta(minutes=5))
          .not_valid_after(now + _dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False),
                         critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("127.0.0.1"))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _dt.timedelta(minutes=5))
            .not_valid_after(now + _dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    ca_path, cert_path, key_path = (directory / "fake-ca.pem", directory / "fake-cert.pem",
                                    directory / "fake-key.pem")
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, ca_path
