"""An HTTP proxy on 127.0.0.1 in front of the AWS emulator that counts requests by AWS
operation and answers chosen ones with an injected error instead of forwarding them.

moto never fails a CreateNodegroup on its own (no quotas, no capacity), so a test that
needs "the second node group fails" puts this proxy between the provider and moto:

    proxy = FaultProxy(moto.url).start()
    proxy.fail("CreateNodegroup", after=1, status=400,
               code="ResourceLimitExceededException", message="...")
    ... point the provider's `aws.endpoints.eks` at proxy.url ...
    proxy.counts["CreateNodegroup"]  # calls seen, injected ones included

Fault mode (issue 6): `FaultProxy(moto.url, faults=RandomFaults.parse("rate=0.3,seed=7"))`
or, with no `faults` argument, the `GPU_TF_FAULTS` environment variable in the same form,
answers a share of requests with the cloud's own errors instead of forwarding them:
`throttle` (429 ThrottlingException), `server` (500 ServerException), `unavailable`
(503 ServiceUnavailableException), `reset` (the connection is reset, nothing forwarded)
and `lost` (forwarded to moto, then the connection is reset: the change happened but its
answer never arrives, which only idempotency tokens or adoption can survive). `kinds=`
picks some (`kinds=throttle+reset`), `ops=` limits them to some operations.

Two more tools for interruption tests: `hold(op, after=N)` keeps the (N+1)-th call of `op`
waiting until `release()` (so a test can kill the provider mid-apply), and
`settle_after(seconds)` makes DescribeNodegroup report a created group as CREATING for
that long (moto makes groups ACTIVE at once, so there is never a wait to interrupt). Those
seconds are cloud time: the proxy waits them out at its time scale (`time_scale=`, default
the environment's `GPU_TF_TIME_SCALE`, see fakes/README.md), as the provider scales its polls.

Operations are named as in the AWS API references: EKS is REST-JSON (method and path,
e.g. `POST /clusters/{name}/node-groups` is CreateNodegroup), EC2/IAM/STS are the query
protocol (`Action=` in the form body or the query string). Injected errors have the
REST-JSON error shape: the `X-Amzn-ErrorType` header and a `{"__type", "message"}` body.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from fakes import time_scale as _time_scale

# (method, path pattern) -> EKS operation name, from the EKS API reference.
_EKS_ROUTES = [
    ("POST", r"^/clusters/[^/]+/node-groups/[^/]+/update-config$", "UpdateNodegroupConfig"),
    ("POST", r"^/clusters/[^/]+/node-groups/[^/]+/update-version$", "UpdateNodegroupVersion"),
    ("POST", r"^/clusters/[^/]+/node-groups$", "CreateNodegroup"),
    ("GET", r"^/clusters/[^/]+/node-groups$", "ListNodegroups"),
    ("GET", r"^/clusters/[^/]+/node-groups/[^/]+$", "DescribeNodegroup"),
    ("DELETE", r"^/clusters/[^/]+/node-groups/[^/]+$", "DeleteNodegroup"),
    ("GET", r"^/clusters/[^/]+$", "DescribeCluster"),
    ("POST", r"^/clusters$", "CreateCluster"),
    ("GET", r"^/clusters$", "ListClusters"),
    ("POST", r"^/tags/.+$", "TagResource"),
    ("DELETE", r"^/tags/.+$", "UntagResource"),
    ("GET", r"^/tags/.+$", "ListTagsForResource"),
]


def operation(method: str, path: str, body: bytes) -> str:
    """The AWS operation a request is: EKS by route, query-protocol services by `Action`."""
    url = urlsplit(path)
    for m, pattern, name in _EKS_ROUTES:
        if m == method and re.match(pattern, url.path):
            return name
    params = parse_qs(url.query)
    if body and method == "POST":
        try:
            params.update(parse_qs(body.decode("utf-8", "replace")))
        except ValueError:
            pass
    action = params.get("Action", [""])[0]
    return action or f"{method} {url.path}"


@dataclass
class Fault:
    """Answer `operation` with this error after `after` calls of it pass, `times` times."""

    operation: str
    status: int
    code: str
    message: str
    after: int = 0
    times: int = 1


# kind -> (status, code, message); `reset` and `lost` have no answer at all.
_KINDS = {
    "throttle": (429, "ThrottlingException", "Rate exceeded"),
    "server": (500, "ServerException", "An internal error occurred. Try again."),
    "unavailable": (503, "ServiceUnavailableException", "Service unavailable. Try again."),
    "reset": None,
    "lost": None,
}

ENV_VAR = "GPU_TF_FAULTS"


@dataclass
class RandomFaults:
    """A share `rate` of requests (those of `ops`, or all) fail with one of `kinds`,
    drawn from a seeded generator so a run can be repeated."""

    rate: float
    kinds: tuple[str, ...] = tuple(_KINDS)
    seed: int = 0
    ops: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "RandomFaults":
        """`rate=0.3,seed=7,kinds=throttle+reset,ops=CreateNodegroup+DescribeNodegroup`."""
        fields = dict(part.split("=", 1) for part in text.split(",") if part.strip())
        unknown = set(fields) - {"rate", "seed", "kinds", "ops"}
        if unknown:
            raise ValueError(f"{ENV_VAR}: unknown fields {sorted(unknown)}")
        kinds = tuple(k for k in fields.get("kinds", "+".join(_KINDS)).split("+") if k)
        bad = [k for k in kinds if k not in _KINDS]
        if bad:
            raise ValueError(f"{ENV_VAR}: unknown kinds {bad}; valid: {sorted(_KINDS)}")
        rate = float(fields.get("rate", "0"))
        if not 0 <= rate < 1:
            raise ValueError(f"{ENV_VAR}: rate must be in [0, 1), got {rate}")
        ops = tuple(o for o in fields.get("ops", "").split("+") if o)
        return cls(rate, kinds, int(fields.get("seed", "0")), ops)

    @classmethod
    def from_env(cls) -> "RandomFaults | None":
        text = os.environ.get(ENV_VAR, "").strip()
        return cls.parse(text) if text else None


class FaultProxy:
    """The proxy; `start()` serves on a free port, `stop()` ends it. `time_scale` (default:
    `GPU_TF_TIME_SCALE`, else 1) multiplies the seconds of `settle_after`."""

    def __init__(self, upstream: str, faults: RandomFaults | None = None, time_scale=None):
        self.time_scale = _time_scale(time_scale)
        u = urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.counts: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self.injected_kinds: Counter[str] = Counter()
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.random = faults if faults is not None else RandomFaults.from_env()
        self._rng = random.Random(self.random.seed if self.random else 0)
        self._hold: tuple[str, int] | None = None
        self.held = threading.Event()      # set when a held request arrived
        self._release = threading.Event()
        self._settle_seconds = 0.0
        self._created_at: dict[str, float] = {}  # "/clusters/c/node-groups/n" -> time
        # (nodegroupName, clientRequestToken) of every CreateNodegroup that arrived, in
        # order, faulted or not: the tests check that a repeated create repeats its token.
        self.create_tokens: list[tuple[str, str | None]] = []
        # (operation, node group name) of every node-group change that arrived, in order:
        # the roll tests check that every create comes before any delete.
        self.changes: list[tuple[str, str]] = []

    def _record_create(self, body: bytes) -> None:
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            req = {}
        with self._lock:
            self.create_tokens.append((req.get("nodegroupName", ""),
                                       req.get("clientRequestToken")))

    def _record_change(self, op: str, path: str, body: bytes) -> None:
        if op == "CreateNodegroup":
            try:
                name = json.loads(body or b"{}").get("nodegroupName", "")
            except ValueError:
                name = ""
        elif op in ("DeleteNodegroup", "UpdateNodegroupConfig"):
            parts = urlsplit(path).path.split("/")
            name = parts[4] if len(parts) > 4 else ""
        else:
            return
        with self._lock:
            self.changes.append((op, name))

    def set_random(self, faults: RandomFaults | None) -> None:
        """Replaces the random fault mode (None turns it off)."""
        with self._lock:
            self.random = faults
            self._rng = random.Random(faults.seed if faults else 0)

    def hold(self, operation: str, after: int = 0) -> None:
        """Keeps the call of `operation` after `after` others waiting until `release()`;
        `held` is set when it arrives."""
        with self._lock:
            self._hold = (operation, after)
            self.held.clear()
            self._release.clear()

    def release(self) -> None:
        """Lets a held call go on (it is then forwarded)."""
        self._release.set()

    def settle_after(self, seconds: float) -> None:
        """Node groups created through the proxy read as CREATING for `seconds` of cloud
        time (`seconds * time_scale` real seconds)."""
        self._settle_seconds = seconds

    def _random_kind(self, op: str) -> str | None:
        with self._lock:
            r = self.random
            if not r or r.rate <= 0 or (r.ops and op not in r.ops):
                return None
            if self._rng.random() >= r.rate:
                return None
            kind = self._rng.choice(r.kinds)
            self.injected[op] += 1
            self.injected_kinds[kind] += 1
            return kind

    def _should_hold(self, op: str) -> bool:
        with self._lock:
            if not self._hold or self._hold[0] != op:
                return False
            if self._hold[1] > 0:
                self._hold = (op, self._hold[1] - 1)
                return False
            self._hold = None
            return True

    @property
    def url(self) -> str:
        assert self._server, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail(self, operation: str, *, status: int, code: str, message: str,
             after: int = 0, times: int = 1) -> None:
        """Queues a fault for `operation` (see `Fault`)."""
        with self._lock:
            self._faults.append(Fault(operation, status, code, message, after, times))

    def lose(self, operation: str, *, after: int = 0, times: int = 1) -> None:
        """The next `times` calls of `operation` (after `after`) are forwarded, then their
        connection is reset: done upstream, answer lost."""
        with self._lock:
            self._faults.append(Fault(operation, 0, "lost", "", after, times))

    def _fault_for(self, op: str) -> Fault | None:
        with self._lock:
            self.counts[op] += 1
            for f in self._faults:
                if f.operation != op:
                    continue
                if f.after > 0:
                    f.after -= 1
                    return None
                f.times -= 1
                if f.times <= 0:
                    self._faults.remove(f)
                self.injected[op] += 1
                return f
            return None

    def _rewrite(self, op: str, path: str, status: int, data: bytes) -> bytes:
        """Applies `settle_after` to node group answers."""
        if not self._settle_seconds or status != 200:
            return data
        url = urlsplit(path).path
        if op == "CreateNodegroup":
            try:
                name = json.loads(data)["nodegroup"]["nodegroupName"]
            except (ValueError, KeyError, TypeError):
                return data
            self._created_at.setdefault(f"{url}/{name}", time.monotonic())
            return data
        if op == "DescribeNodegroup":
            born = self._created_at.get(url)
            if born is None or \
                    time.monotonic() - born >= self._settle_seconds * self.time_scale:
                return data
            doc = json.loads(data)
            if doc.get("nodegroup", {}).get("status") == "ACTIVE":
                doc["nodegroup"]["status"] = "CREATING"
            return json.dumps(doc).encode()
        return data

    def start(self) -> FaultProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the tests read counts, not logs
                pass

            def _reset(self):
                """Drops the connection with a TCP RST and no answer."""
                self.close_connection = True
                try:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.connection.close()
                except OSError:
                    pass

            def _error(self, status: int, code: str, message: str):
                payload = json.dumps({"__type": code, "message": message}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Amzn-ErrorType", code)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                op = operation(self.command, self.path, body)
                if op == "CreateNodegroup":
                    proxy._record_create(body)
                proxy._record_change(op, self.path, body)
                fault = proxy._fault_for(op)
                kind = None if fault else proxy._random_kind(op)
                if fault and fault.status == 0:  # lose(): forward, then drop the answer
                    fault, kind = None, "lost"
                    with proxy._lock:
                        proxy.injected_kinds["lost"] += 1
                if kind == "reset":
                    return self._reset()
                if kind in _KINDS and _KINDS[kind] is not None:
                    return self._error(*_KINDS[kind])
                if proxy._should_hold(op):
                    proxy.held.set()
                    proxy._release.wait()
                if fault:
                    return self._error(fault.status, fault.code, fault.message)
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items()
                               if k.lower() not in ("connection", "keep-alive")}
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    if kind == "lost":
                        return self._reset()
                    data = proxy._rewrite(op, self.path, resp.status, data)
                    self.send_response(resp.status)
                    for k, v in resp.getheaders():
                        if k.lower() not in ("connection", "keep-alive", "transfer-encoding",
                                             "content-length"):
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a reset connection is the point of some faults, not news

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
