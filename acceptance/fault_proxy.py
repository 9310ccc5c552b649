"""An HTTP proxy on 127.0.0.1 in front of the AWS emulator that counts requests by AWS
operation and answers chosen ones with an injected error instead of forwarding them.

moto never fails a CreateNodegroup on its own (no quotas, no capacity), so a test that
needs "the second node group fails" puts this proxy between the provider and moto:

    proxy = FaultProxy(moto.url).start()
    proxy.fail("CreateNodegroup", after=1, status=400,
               code="ResourceLimitExceededException", message="...")
    ... point the provider's `aws.endpoints.eks` at proxy.url ...
    proxy.counts["CreateNodegroup"]  # calls seen, injected ones included

Operations are named as in the AWS API references: EKS is REST-JSON (method and path,
e.g. `POST /clusters/{name}/node-groups` is CreateNodegroup), EC2/IAM/STS are the query
protocol (`Action=` in the form body or the query string). Injected errors have the
REST-JSON error shape: the `X-Amzn-ErrorType` header and a `{"__type", "message"}` body.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

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


class FaultProxy:
    """The proxy; `start()` serves on a free port, `stop()` ends it."""

    def __init__(self, upstream: str):
        u = urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.counts: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail(self, operation: str, *, status: int, code: str, message: str,
             after: int = 0, times: int = 1) -> None:
        """Queues a fault for `operation` (see `Fault`)."""
        with self._lock:
            self._faults.append(Fault(operation, status, code, message, after, times))

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

    def start(self) -> FaultProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the tests read counts, not logs
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fault = proxy._fault_for(operation(self.command, self.path, body))
                if fault:
                    payload = json.dumps({"__type": fault.code,
                                          "message": fault.message}).encode()
                    self.send_response(fault.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("X-Amzn-ErrorType", fault.code)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items()
                               if k.lower() not in ("connection", "keep-alive")}
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
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

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
