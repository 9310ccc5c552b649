"""What the fake EC2 endpoints share: the EC2 Query API's request parsing (the `Action` and
its parameters from the query string and the form body, the SigV4 credential's region,
the request log without secrets, parameter checks, DryRun, ClientToken idempotency),
its answers (`ec2_answer`: `<ActionResponse>` with a `requestId`; `error_response`: the
`<Response><Errors><Error>` body of `Ec2Error`, and an injected fault's), its values
(timestamps, integers, booleans, enums, flattened lists, XML, ids, `MaxResults`/`NextToken`
pages), and the dummy-signed request a fake sends moto itself. Used by `ec2_commitments.py`
and `ec2_spot.py`; see ../README.md for the references (the botocore model `ec2/2016-11-15`,
the EC2 API reference).
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import re
import secrets
import uuid
from urllib.parse import parse_qsl, urlencode, urlsplit
from xml.sax.saxutils import escape

from .. import Request, Response, retry_after_header

NAMESPACE = "http://ec2.amazonaws.com/doc/2016-11-15/"
ACCOUNT = "123456789012"  # moto's default account
UTC = _dt.timezone.utc
CREDENTIAL_RE = re.compile(r"Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/aws4_request")
SECRET_PARAM_RE = re.compile(r"secret|password|privatekey|keymaterial|userdata|sessiontoken|"
                             r"signature|credential", re.I)
SECRET_QUERY_RE = re.compile(r"((?:X-Amz-(?:Signature|Credential|Security-Token))=)[^&]*", re.I)
STATUS_OF_CODE = {"AuthFailure": 401, "DryRunOperation": 412, "InsufficientInstanceCapacity": 500,
                  "InternalError": 500, "RequestLimitExceeded": 503, "ServiceUnavailable": 503,
                  "Unavailable": 503}
CODE_OF_STATUS = {400: "InvalidParameterValue", 401: "AuthFailure", 403: "UnauthorizedOperation",
                  429: "RequestLimitExceeded", 500: "InternalError",
                  503: "RequestLimitExceeded"}
MESSAGES = {"RequestLimitExceeded": "Request limit exceeded.",
            "InternalError": "An internal error has occurred.",
            "ServiceUnavailable": "The request has failed due to a temporary failure of the "
                                  "server.",
            "UnauthorizedOperation": "You are not authorized to perform this operation."}


class Ec2Error(Exception):
    """An EC2 error answer: `code`, `message`, and the HTTP status (400 unless the code is a
    server error)."""

    def __init__(self, code: str, message: str, status: int | None = None):
        super().__init__(message)
        self.code, self.message = code, message
        self.status = status or STATUS_OF_CODE.get(code, 400)


# --- answers --------------------------------------------------------------------------------

def ec2_answer(action: str, inner: str) -> Response:
    """200 `<{action}Response>` around the XML `inner`, with a fresh `requestId`."""
    return Response(200, (f'<?xml version="1.0" encoding="UTF-8"?>\n<{action}Response '
                          f'xmlns="{NAMESPACE}"><requestId>{uuid.uuid4()}</requestId>'
                          f'{inner}</{action}Response>').encode(),
                    {"Content-Type": "text/xml;charset=UTF-8"})


def error_response(e: Ec2Error) -> Response:
    """EC2's error body for `e`."""
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
            f'<Code>{escape(e.code)}</Code><Message>{escape(e.message)}</Message>'
            f'</Error></Errors><RequestID>{uuid.uuid4()}</RequestID></Response>')
    return Response(e.status, body.encode(), {"Content-Type": "text/xml;charset=UTF-8"})


def injected_error(status: int, code: str | None, message: str | None,
                   retry_after: int | None = None) -> Response:
    """The answer to an injected fault: EC2's error body (`RequestLimitExceeded` for 429 and
    503, `InternalError` for 500 by default) and `Retry-After` when given."""
    code = code or CODE_OF_STATUS.get(status, "InternalError")
    response = error_response(Ec2Error(code, message or MESSAGES.get(
        code, "Injected by the fake."), status))
    response.headers.update(retry_after_header(retry_after))
    return response


# --- requests -------------------------------------------------------------------------------

def query_params(request: Request) -> dict:
    """The Query parameters: the query string, then a form-encoded body over it."""
    params = dict(parse_qsl(urlsplit(request.target).query, keep_blank_values=True))
    content_type = (request.headers.get("Content-Type") or "").lower()
    if request.body and "x-www-form-urlencoded" in content_type:
        params.update(parse_qsl(request.body.decode("utf-8", "replace"),
                                keep_blank_values=True))
    return params


def credential_region(request: Request) -> str | None:
    """The region of the SigV4 credential scope (header, or a presigned query)."""
    auth = request.headers.get("Authorization") or ""
    if auth.startswith("AWS4-HMAC-SHA256 "):
        m = CREDENTIAL_RE.search(auth)
        return m[3] if m else None
    credential = dict(parse_qsl(urlsplit(request.target).query)).get("X-Amz-Credential")
    parts = (credential or "").split("/")
    return parts[2] if len(parts) == 5 else None


def log_request(request: Request) -> str:
    """Logs the action, its non-secret parameters and the region; returns the action (what
    a fault's `path` matches)."""
    params = query_params(request)
    action = params.get("Action", "")
    request.log.update(
        query=SECRET_QUERY_RE.sub(r"\1<redacted>", request.log["query"]),
        action=action or None, region=credential_region(request),
        params={k: "<redacted>" if SECRET_PARAM_RE.search(k) else v
                for k, v in params.items() if k not in ("Action", "Version")},
        forwarded=False)
    return action


def check_params(action: str, params: dict, emulated, not_emulated, required,
                 nested=None) -> None:
    """Refuses a parameter the action does not have (`UnknownParameter`) or the fake does not
    emulate (`UnsupportedOperation`; `nested(name, rest)` says so of a sub-parameter
    `name.rest`), and a missing `required` one (`MissingParameter`, named by its first
    segment)."""
    for key in params:
        name, _, rest = key.partition(".")
        if name in ("Action", "Version"):
            continue
        if name in not_emulated or (name in emulated and nested and not nested(name, rest)):
            shown = name if name in not_emulated else key
            raise Ec2Error("UnsupportedOperation",
                           f"The fake does not emulate parameter {shown} of {action}.")
        if name not in emulated:
            raise Ec2Error("UnknownParameter", f"The parameter {name} is not recognized")
    for name in required:
        if not params.get(name):
            raise Ec2Error("MissingParameter", "The request must contain the parameter "
                                               f"{name.split('.')[0]}")


def dry_run(params: dict) -> None:
    """Raises `DryRunOperation` when the request is a dry run (the checks passed)."""
    if bool_param(params, "DryRun"):
        raise Ec2Error("DryRunOperation", "Request would have succeeded, but DryRun flag is set.")


def client_token(params: dict, tokens: dict, zone_params, bad_code: str):
    """(`ClientToken` or None, the id an earlier request with the same token made or None).
    `tokens`: token -> (fingerprint, id). A retry must repeat every parameter but the
    token, DryRun and `zone_params` (the idempotency page exempts Region and Availability
    Zone): `IdempotentParameterMismatch` otherwise; a malformed token is `bad_code`."""
    token = params.get("ClientToken")
    if token is not None and not (1 <= len(token) <= 64 and token.isascii()):
        raise Ec2Error(bad_code, "The client token must be 1 to 64 ASCII characters.")
    if token is not None and token in tokens:
        fingerprint, made = tokens[token]
        if fingerprint != token_fingerprint(params, zone_params):
            raise Ec2Error("IdempotentParameterMismatch",
                           f"The client token '{token}' was already used with different "
                           "parameters.")
        return token, made
    return token, None


def token_fingerprint(params: dict, zone_params) -> list:
    """What a ClientToken retry must repeat (see `client_token`)."""
    skip = {"Action", "Version", "ClientToken", "DryRun", *zone_params}
    return sorted((k, v) for k, v in params.items() if k not in skip)


def signed_query(region: str, action: str, params: dict) -> tuple[bytes, dict]:
    """The body and headers of an EC2 Query request for `region` with a dummy SigV4
    `Authorization` (moto reads only its credential scope)."""
    date = _dt.datetime.now(UTC).strftime("%Y%m%d")
    body = urlencode({"Action": action, "Version": "2016-11-15", **params}).encode()
    return body, {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
                  "Authorization": f"AWS4-HMAC-SHA256 Credential=testing/{date}/{region}/ec2/"
                                   "aws4_request, SignedHeaders=host, Signature=fake"}


# --- values ---------------------------------------------------------------------------------

def ec2_time(when: _dt.datetime) -> str:
    """EC2's timestamp form, `2026-12-10T00:00:00.000Z`."""
    when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def parse_time(text, name: str = "timestamp") -> _dt.datetime:
    """An ISO 8601 instant (`Z` or an offset; naive means UTC)."""
    if isinstance(text, _dt.datetime):
        when = text
    else:
        try:
            when = _dt.datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
        except ValueError:
            raise Ec2Error("InvalidParameterValue",
                           f"Value ({text}) for parameter {name} is invalid. "
                           "Expected an ISO 8601 timestamp.") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def int_param(params: dict, name: str, low: int | None = None, high: int | None = None,
              code: str = "InvalidParameterValue") -> int | None:
    if name not in params:
        return None
    try:
        value = int(params[name])
    except ValueError:
        raise Ec2Error("InvalidParameterValue",
                       f"Invalid value '{params[name]}' for {name}.") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise Ec2Error(code, f"Value ( {value} ) for parameter {name} is invalid. Expecting a "
                             f"value between {low} and {high}.")
    return value


def bool_param(params: dict, name: str) -> bool:
    value = params.get(name, "false").lower()
    if value not in ("true", "false"):
        raise Ec2Error("InvalidParameterValue", f"Invalid value '{params[name]}' for {name}.")
    return value == "true"


def enum_param(params: dict, name: str, allowed, default: str | None = None) -> str | None:
    value = params.get(name, default)
    if value is not None and value not in allowed:
        raise Ec2Error("InvalidParameterValue", f"Invalid value '{value}' for {name}. "
                                                f"Valid values: {', '.join(allowed)}.")
    return value


def members(params: dict, prefix: str) -> list[dict]:
    """The structures of the flattened list `prefix.N.*`, in index order, each as its own
    parameter dict (`TagSpecification.1.Tag.2.Key` -> [{"Tag.2.Key": ...}])."""
    groups: dict[int, dict] = {}
    for key, value in params.items():
        m = re.fullmatch(re.escape(prefix) + r"\.(\d+)\.(.+)", key)
        if m:
            groups.setdefault(int(m[1]), {})[m[2]] = value
    return [groups[i] for i in sorted(groups)]


def scalars(params: dict, prefix: str) -> list[str]:
    """The values of the flattened list `prefix.N`, in index order."""
    found = {int(m[1]): v for k, v in params.items()
             if (m := re.fullmatch(re.escape(prefix) + r"\.(\d+)", k))}
    return [found[i] for i in sorted(found)]


def xml(name: str, value) -> str:
    """One element: dicts nest, lists become `<item>`s, bools `true`/`false`, datetimes
    EC2 timestamps; None is left out."""
    if value is None:
        return ""
    if isinstance(value, dict):
        inner = "".join(xml(k, v) for k, v in value.items())
    elif isinstance(value, list):
        inner = "".join(xml("item", v) for v in value)
    elif isinstance(value, bool):
        inner = "true" if value else "false"
    elif isinstance(value, _dt.datetime):
        inner = ec2_time(value)
    else:
        inner = escape(str(value))
    return f"<{name}>{inner}</{name}>"


def new_id(prefix: str) -> str:
    """An EC2 id: `prefix-` and 17 hex digits."""
    return f"{prefix}-{secrets.token_hex(9)[:17]}"


def paginate(items: list, params: dict, action: str, size: int | None) -> tuple[list, str | None]:
    """`size` items (all when None) from where `NextToken` says, and the token of the
    rest (None at the end). The token is the offset, tied to the action."""
    start = 0
    if params.get("NextToken"):
        try:
            token = json.loads(base64.urlsafe_b64decode(params["NextToken"].encode()))
            start = int(token["offset"]) if token["action"] == action else -1
        except Exception:  # noqa: BLE001 - any malformed token is the same error
            start = -1
        if start < 0:
            raise Ec2Error("InvalidNextToken", "The specified NextToken is not valid.")
    end = len(items) if size is None else start + size
    token = None
    if end < len(items):
        token = base64.urlsafe_b64encode(json.dumps({"action": action, "offset": end})
                                         .encode()).decode()
    return items[start:end], token
