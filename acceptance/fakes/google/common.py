"""What every fake Google API shares: Google's error body (`{"error": {"code", "message",
["errors"], "status", ["details"]}}`, `GoogleError`, `error_response`), bearer-token checks
against the token registry (`authenticate`: an OAuth token the `GoogleOAuth` fake issued,
or a JWT self-signed by one of its service accounts), proto-JSON field names, and
long-running `Operation` resources (`GoogleOperations`: RUNNING for `polls` reads of
`operations.get`/`wait`, then DONE). Used by `gke.py` (GKE) and `compute.py`/
`compute_instances.py` (Compute Engine); see ../README.md for the references.
"""

from __future__ import annotations

import re
import secrets
import time

from .. import Request, Response

# google.rpc.Code: HTTP status and number of each canonical status.
CODES = {"INVALID_ARGUMENT": (400, 3), "FAILED_PRECONDITION": (400, 9),
         "UNAUTHENTICATED": (401, 16), "PERMISSION_DENIED": (403, 7),
         "NOT_FOUND": (404, 5), "ALREADY_EXISTS": (409, 6), "ABORTED": (409, 10),
         "RESOURCE_EXHAUSTED": (429, 8), "INTERNAL": (500, 13), "UNAVAILABLE": (503, 14)}
# google.rpc.Code names of the HTTP statuses an injected fault answers with.
STATUS_OF_HTTP = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                  404: "NOT_FOUND", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED",
                  500: "INTERNAL", 503: "UNAVAILABLE"}

# What Google's API front end answers a request without valid credentials.
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'}
MISSING_CREDENTIALS = (
    "Request is missing required authentication credential. Expected OAuth 2 access token, "
    "login cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project.")
INVALID_CREDENTIALS = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project.")
INSUFFICIENT_SCOPES = "Request had insufficient authentication scopes."


class GoogleError(Exception):
    """An error answer: the canonical `status` (e.g. NOT_FOUND; None for a Compute error
    without one), `message`, `details` (google.rpc error details), the HTTP status (`http`,
    by default the status's), and for Compute's `errors[]` item its `reason`, `location`
    (location, locationType) and message (`item`, by default `message`)."""

    def __init__(self, status: str | None, message: str, details: list | None = None, *,
                 http: int | None = None, reason: str | None = None,
                 headers: dict | None = None, location: tuple[str, str] | None = None,
                 item: str | None = None):
        super().__init__(message)
        self.status, self.message, self.details = status, message, details or []
        self.http = http if http is not None else CODES[status][0]
        self.reason, self.headers = reason, headers or {}
        self.location, self.item = location, item or message


def error_response(e: GoogleError, errors: bool = False) -> Response:
    """`e` in Google's error body; `errors`: with Compute's `errors[]` item (message,
    domain, reason, location)."""
    body = {"code": e.http, "message": e.message}
    if errors:
        item = {"message": e.item, "domain": "global", "reason": e.reason}
        if e.location:
            item.update(location=e.location[0], locationType=e.location[1])
        body["errors"] = [item]
    if e.status:
        body["status"] = e.status
    if e.details:
        body["details"] = e.details
    return Response(e.http, {"error": body}, e.headers)


def error_info(reason: str, service: str, domain: str = "googleapis.com",
               metadata: dict | None = None) -> dict:
    """A `google.rpc.ErrorInfo` detail."""
    return {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
            "domain": domain, "metadata": {"service": service} if metadata is None else metadata}


def authenticate(registry, request: Request, service: str, *check) -> GoogleError | None:
    """None when `request` carries a bearer token that may call `service` (the token
    registry's `google_bearer(token, *check)`: GKE's scopes unless `check` names others),
    else the error Google's front end answers: 401 without a token or with an unknown,
    expired or forged one, 403 with one that lacks the scopes. Logs `auth`: how the token
    was accepted (`opaque`, `self-signed-jwt`) or None."""
    token = request.bearer()
    if token is None:
        return GoogleError("UNAUTHENTICATED", MISSING_CREDENTIALS,
                           [error_info("CREDENTIALS_MISSING", service)], headers=CHALLENGE,
                           reason="required", location=("Authorization", "header"),
                           item="Login Required.")
    kind, why = registry.google_bearer(token, *check)
    request.log["auth"] = kind
    if kind is None and (why == "insufficient scopes" or why.startswith("neither a")):
        return GoogleError("PERMISSION_DENIED", INSUFFICIENT_SCOPES,
                           [error_info("ACCESS_TOKEN_SCOPE_INSUFFICIENT", service)],
                           reason="insufficientPermissions")
    if kind is None:
        return GoogleError("UNAUTHENTICATED", INVALID_CREDENTIALS, headers=CHALLENGE,
                           reason="authError", location=("Authorization", "header"),
                           item="Invalid Credentials")
    return None


def snake(name: str) -> str:
    """A proto field's json_name as its field name (`diskSizeGb` -> `disk_size_gb`)."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def camel(name: str) -> str:
    """A proto field name as its json_name (`disk_size_gb` -> `diskSizeGb`)."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def message_fields(obj: dict, names, refuse) -> dict:
    """The fields of the JSON object `obj` by json_name (proto JSON accepts the proto field
    names too); `refuse(key)` makes the error raised for a name not in `names`, as Google's
    JSON parser refuses one."""
    out = {}
    for key, value in obj.items():
        name = camel(key)
        if name not in names:
            raise refuse(key)
        out[name] = value
    return out


def operation_name(prefix: str = "operation", suffix: str | None = None) -> str:
    """A Google operation name: `<prefix>-<epoch ms>-<suffix>` (by default Compute's
    `<13 hex>-<8 hex>-<8 hex>`)."""
    if suffix is None:
        suffix = (f"{secrets.token_hex(7)[:13]}-{secrets.token_hex(4)}-"
                  f"{secrets.token_hex(4)}")
    return f"{prefix}-{int(time.time() * 1000)}-{suffix}"


class GoogleOperations:
    """Long-running `Operation` resources, for a `FakeServer` with `operations` ({name:
    {"public": the Operation as served, ...}}), the settings `polls` and `fail_next` and a
    `_finish(op)` that makes one DONE. An operation stays RUNNING for `polls` reads
    (`_poll`: `operations.get`, or each poll an `operations.wait` stands for), then ends;
    where `op_seconds` is set (GKE) it also ends once it has run that long, polled or not
    (`_tick`), and one with its own `seconds` (a hold) only then. Both are cloud time,
    waited out at the fake's time scale."""

    op_seconds: float | None = None  # None: only reads (or `complete`) end an operation

    def _add_operation(self, public: dict, fields: dict) -> dict:
        """Keeps a new RUNNING operation (`public`: what the API serves; `fields`: what
        the fake keeps besides) that takes `fail_next` with it."""
        op = {"public": public, **fields, "polls_left": self.polls, "fail": self.fail_next,
              "started": time.monotonic()}
        self.fail_next = None
        self.operations[public["name"]] = op
        return op

    def complete(self) -> int:
        with self.lock:
            running = [op for op in self.operations.values()
                       if op["public"]["status"] != "DONE"]
            for op in running:
                self._finish(op)
            return len(running)

    def _tick(self) -> None:
        """Ends every operation that has run its `seconds` or `op_seconds` (scaled): the
        service finishes its operations whether or not a client polls them (a client
        whose answer was lost never knows the operation's name)."""
        for op in self.operations.values():
            limit = op.get("seconds", self.op_seconds)
            if op["public"]["status"] != "DONE" and limit is not None \
                    and self.has_run(op["started"], limit):
                self._finish(op)

    def _poll(self, op: dict) -> None:
        """One read of a running operation: a poll used up, or the end."""
        if op["public"]["status"] != "DONE":
            if op["polls_left"] > 0:
                op["polls_left"] -= 1
            else:
                self._finish(op)
