"""What the fakes' own tests share: a request with urllib only (`call`) and its answer
(`Reply`), and the control surface (`state`, `control`). Not a test module itself (pytest
collects `test_*.py` only)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlencode


@dataclass
class Reply:
    status: int
    headers: object
    raw: bytes

    @property
    def json(self):
        return json.loads(self.raw) if self.raw else None

    @property
    def code(self) -> str:
        """The error code of a `{"error": {"code", ...}}` body."""
        return self.json["error"]["code"]


def call(method: str, url: str, body=None, headers=None, form=None, cafile=None) -> Reply:
    """One request: `body` as JSON, or `form` form-encoded; over HTTPS trusting `cafile`
    when given. An HTTP error status is a `Reply` too."""
    headers = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    if form is not None:
        data = urlencode(form).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    context = ssl.create_default_context(cafile=str(cafile)) if cafile else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as r:
            return Reply(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers, e.read())


def state(fake, cafile=None) -> dict:
    """`GET /_fake/state` of `fake`."""
    reply = call("GET", fake.url + "/_fake/state", cafile=cafile)
    assert reply.status == 200
    return reply.json


def control(fake, path: str, body: dict, cafile=None) -> dict:
    """`POST` of `body` to the control endpoint `path` of `fake`, which must accept it."""
    reply = call("POST", fake.url + path, body, cafile=cafile)
    assert reply.status in (200, 201), reply.raw
    return reply.json
