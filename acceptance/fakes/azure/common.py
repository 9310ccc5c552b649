"""What every fake Azure Resource Manager endpoint shares, whatever resource provider it
serves: ARM's error bodies (`arm_error`, `Refusal`, the common 404s), bearer-token checks
against the `AzureAD` fake's registry (`authenticate`, `wrong_tenant`), the answer to an
injected fault, the api-version checks ARM makes before a request reaches a resource
provider, JSON request bodies, seeded subscriptions (`Subscriptions`) and ARM's
long-running operations (`ArmOperations`: `Azure-AsyncOperation`/`Location` status
resources, InProgress -> Succeeded/Failed, `Retry-After`). Used by `aks.py` (AKS),
`commitments.py` (reservation orders, capacity reservations) and `vms.py` (single VMs);
see ../README.md for the reference behind each message.
"""

from __future__ import annotations

import datetime as _dt
import re
import time
import uuid

from .. import FakeServer, Request, Response, request_id, retry_after_header, route
from ..tokens import TokenRegistry

# Audiences ARM accepts in a token (the resource the `.default` scope named).
ARM_AUDIENCES = ("https://management.core.windows.net/", "https://management.core.windows.net",
                 "https://management.azure.com/", "https://management.azure.com")
API_VERSION_RE = re.compile(r"\d{4}-\d{2}-\d{2}(-preview)?")
UTC = _dt.timezone.utc


def timestamp(when: _dt.datetime) -> str:
    """ARM's timestamp form: UTC, microseconds, `Z`."""
    return when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def normal_location(value: str) -> str:
    """ARM's normalised location: "West US 2" and "westus2" are the same."""
    return value.replace(" ", "").lower()


def arm_error(status: int, code: str, message: str, headers: dict | None = None,
              target: str | None = None) -> Response:
    """ARM's CloudError, `{"error": {"code", "message"[, "target"]}}`, with an
    `x-ms-request-id`."""
    body = {"code": code, "message": message, **({"target": target} if target else {})}
    return Response(status, {"error": body}, {"x-ms-request-id": request_id(), **(headers or {})})


def injected_error(status: int, code: str | None, message: str | None,
                   retry_after: int | None = None) -> Response:
    """The answer to an injected fault: ARM's error body, `TooManyRequests`/
    `InternalServerError`/`ServiceUnavailable` by default, and `Retry-After` when given."""
    default = {429: ("TooManyRequests", "The request is being throttled."),
               500: ("InternalServerError", "Encountered internal server error."),
               503: ("ServiceUnavailable", "The service is unavailable.")}
    dcode, dmessage = default.get(status, ("InjectedFault", "Injected by the fake."))
    return arm_error(status, code or dcode, message or dmessage, retry_after_header(retry_after))


def unauthorized(code: str, message: str, description: str = "") -> Response:
    """A 401 with ARM's `WWW-Authenticate: Bearer ... error="invalid_token"` challenge."""
    challenge = ('Bearer authorization_uri="https://login.microsoftonline.com/common", '
                 'error="invalid_token", error_description="'
                 + (description or "The access token is invalid.") + '"')
    return arm_error(401, code, message, {"WWW-Authenticate": challenge})


def authenticate(registry: TokenRegistry, request: Request):
    """(the `Issued` token, None) when the request carries a valid ARM bearer token from
    the `AzureAD` fake, else (None, the 401 ARM answers)."""
    if not request.headers.get("Authorization"):
        return None, unauthorized(
            "AuthenticationFailed",
            "Authentication failed. The 'Authorization' header is missing.",
            "The authentication failed because of missing 'Authorization' header.")
    token = request.bearer()
    if token is None:
        return None, unauthorized(
            "AuthenticationFailed",
            "Authentication failed. The 'Authorization' header is provided in an invalid "
            "format.")
    issued = registry.lookup(token)
    if issued is None or issued.issuer != "azure":
        return None, unauthorized("InvalidAuthenticationToken", "The access token is invalid.")
    if issued.expires_at <= time.time():
        fmt = "%m/%d/%Y %H:%M:%S"
        expiry = _dt.datetime.fromtimestamp(issued.expires_at, _dt.timezone.utc)
        return None, unauthorized(
            "ExpiredAuthenticationToken",
            f"The access token expiry UTC time '{expiry.strftime(fmt)}' is earlier than "
            f"current UTC time '{_dt.datetime.now(_dt.timezone.utc).strftime(fmt)}'.",
            "The access token expired.")
    if issued.audience not in ARM_AUDIENCES:
        allowed = ",".join(f"'{a}'" for a in ARM_AUDIENCES)
        return None, unauthorized(
            "InvalidAuthenticationTokenAudience",
            f"The access token has been obtained for wrong audience or resource "
            f"'{issued.audience}'. It should exactly match with one of the allowed "
            f"audiences {allowed}.")
    return issued, None


def wrong_tenant(issued, tenant_id: str) -> Response:
    """The 401 for a token of another tenant than the subscription's."""
    return unauthorized(
        "InvalidAuthenticationTokenTenant",
        f"The access token is from the wrong issuer 'https://sts.windows.net/"
        f"{issued.tenant}/'. It must match the tenant 'https://sts.windows.net/"
        f"{tenant_id}/' associated with this subscription.")


def api_version(request: Request) -> str:
    return (request.query.get("api-version") or [""])[0]


def api_version_form_error(request: Request, supported) -> Response | None:
    """ARM's answer to a missing (`MissingApiVersionParameter`) or malformed
    (`InvalidApiVersionParameter`) api-version, or None when it is present and well formed
    (whether it is supported is each resource provider's own check)."""
    version = api_version(request)
    if not version:
        return arm_error(400, "MissingApiVersionParameter",
                         "The api-version query parameter (?api-version=) is required for all "
                         "requests.")
    if not API_VERSION_RE.fullmatch(version):
        return arm_error(400, "InvalidApiVersionParameter",
                         f"The api-version '{version}' is invalid. The supported versions are "
                         f"'{','.join(supported)}'.")
    return None


def no_registered_provider(version: str, location: str, rtype: str, supported,
                           locations) -> Response:
    """400 `NoRegisteredProviderFound`: an api-version the resource provider of a located
    resource type does not serve."""
    return arm_error(400, "NoRegisteredProviderFound",
                     f"No registered resource provider found for location '{location}' and API "
                     f"version '{version}' for type '{rtype}'. The supported api-versions are "
                     f"'{', '.join(supported)}'. The supported locations are "
                     f"'{', '.join(locations)}'.")


def invalid_resource_type(namespace: str, version: str, rtype: str | None = None,
                          supported=()) -> Response:
    """404 `InvalidResourceType`: a resource type (or an api-version of a global one) the
    namespace does not have."""
    named = f" '{rtype}'" if rtype else ""
    tail = f" The supported api-versions are '{', '.join(supported)}'." if supported else ""
    return arm_error(404, "InvalidResourceType",
                     f"The resource type{named} could not be found in the namespace "
                     f"'{namespace}' for api version '{version}'.{tail}")


def resource_not_found_message(resource: str, rg: str) -> str:
    """ARM's words for a resource (`Namespace/type/name`) a resource group does not have."""
    return (f"The Resource '{resource}' under resource group '{rg}' was not found. For more "
            "details please go to https://aka.ms/ARMResourceNotFoundFix")


def resource_not_found(resource: str, rg: str) -> Response:
    """404 `ResourceNotFound` for `resource` (`Namespace/type/name`) in resource group `rg`."""
    return arm_error(404, "ResourceNotFound", resource_not_found_message(resource, rg))


def compute_not_found(rg: str, resource: str) -> Response:
    """404 `ResourceNotFound` for `Microsoft.Compute/<resource>` in resource group `rg`."""
    return resource_not_found(f"Microsoft.Compute/{resource}", rg)


def subscription_not_found(sub: str) -> Response:
    return arm_error(404, "SubscriptionNotFound", f"The subscription '{sub}' could not be found.")


def resource_group_not_found(rg: str) -> Response:
    return arm_error(404, "ResourceGroupNotFound", f"Resource group '{rg}' could not be found.")


def parent_not_found(name: str) -> Response:
    return arm_error(404, "ParentResourceNotFound",
                     "Can not perform requested operation on nested resource. Parent resource "
                     f"'{name}' not found.")


class Refusal(Exception):
    """A request ARM or a resource provider refuses: the ARM error to answer (`response`),
    and its `status`, `code`, `message` and `target`."""

    def __init__(self, status: int, code: str, message: str, target: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.target = status, code, message, target
        self.response = arm_error(status, code, message, target=target)


def json_body(request: Request, logged=None) -> dict:
    """The JSON object a write carries, logged in the request log (as `logged(body)` makes
    it, e.g. without secrets); a `Refusal` when its media type is not JSON (415
    `UnsupportedMediaType`) or it is not a JSON object (400 `InvalidRequestContent`)."""
    ctype = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise Refusal(415, "UnsupportedMediaType",
                      f"The content media type '{ctype}' is not supported. Only "
                      "'application/json' is supported.")
    try:
        body = request.json()
    except ValueError as e:
        body = e
    if not isinstance(body, dict):
        raise Refusal(400, "InvalidRequestContent",
                      f"The request content was invalid and could not be deserialized: '{body}'.")
    request.log["json"] = logged(body) if logged else body
    return body


def string_map(body: dict, key: str = "tags"):
    """`body[key]` when it is absent or a map of strings to strings, else a `Refusal`."""
    value = body.get(key)
    if value is not None and (not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
        raise Refusal(400, "InvalidParameter", f"{key} must be a map of strings to strings.",
                      key)
    return value


def body_location(body: dict) -> str:
    """The (normalised) `location` a PUT body must carry, else a `Refusal`."""
    location = body.get("location")
    if not isinstance(location, str) or not location:
        raise Refusal(400, "LocationRequired",
                      "The location property is required for this definition.")
    return normal_location(location)


def authenticated_route(registry: TokenRegistry, request: Request, routes):
    """Authenticates `request` and finds its `(kind, pattern)` in `routes`:
    (the `Issued` token, kind, match, None), or (issued, None, None, the ARM error)."""
    issued, failure = authenticate(registry, request)
    if failure:
        return issued, None, None, failure
    kind, m = route(routes, request.path)
    if kind is None:
        return issued, None, None, arm_error(
            404, "NotFound", f"The fake serves no {request.method} {request.path}.")
    return issued, kind, m, None


class ArmFake(FakeServer):
    """Base of the ARM fakes: the token `registry` their requests are checked against,
    injected faults answered in ARM's error body."""

    def __init__(self, registry: TokenRegistry, time_scale=None):
        super().__init__(time_scale)
        self.registry = registry

    def error(self, status, code, message, retry_after=None) -> Response:
        return injected_error(status, code, message, retry_after)


class Subscriptions:
    """Seeded subscriptions (`self.subscriptions`, by lower-case id) of an ARM fake whose
    resources live in resource groups."""

    def seed_subscription(self, subscription: str, resource_groups=(), locations=None,
                          tenant_id: str | None = None) -> dict:
        """Adds a subscription (or resource groups to a known one). `locations`: where the
        fake's resources may be created (default: anywhere); `tenant_id`: tokens of other
        tenants are refused on its resources."""
        with self.lock:
            sub = self.subscriptions.setdefault(subscription.lower(), {
                "id": subscription, "resource_groups": {}, "locations": None,
                "tenant_id": None})
            for rg in resource_groups:
                sub["resource_groups"].setdefault(str(rg).lower(), str(rg))
            if locations is not None:
                sub["locations"] = [normal_location(loc) for loc in locations]
            if tenant_id is not None:
                sub["tenant_id"] = tenant_id
            return self._subscription_json(sub)

    def seed(self, spec: dict) -> dict:
        """`POST /_fake/subscriptions` and `/_fake/clusters`: `seed_subscription`'s
        arguments as JSON."""
        spec = dict(spec)
        out = self.seed_subscription(spec.pop("subscription"), spec.pop("resource_groups", ()),
                                     spec.pop("locations", None), spec.pop("tenant_id", None))
        if spec:
            raise ValueError(f"unknown subscription options {sorted(spec)}")
        return out

    def _checked_subscription(self, request: Request, issued, m, namespace: str, versions,
                              unknown: bool, rtype: str, where):
        """ARM's checks of a request for resource type `rtype` of `namespace` in the
        subscription `m["sub"]`, in ARM's order: the api-version's form, a resource type
        the namespace does not have (`unknown`), an api-version not in `versions` (at the
        location `where(the subscription's locations)`), the subscription, the token's
        tenant. (the subscription, None) or (None, the error)."""
        failure = api_version_form_error(request, versions)
        if failure:
            return None, failure
        version = api_version(request)
        if unknown:
            return None, invalid_resource_type(namespace, version)
        sub = self.subscriptions.get(m["sub"].lower())
        if version not in versions:
            locations = (sub or {}).get("locations") or ["eastus"]
            return None, no_registered_provider(version, where(locations), rtype, versions,
                                                locations)
        if sub is None:
            return None, subscription_not_found(m["sub"])
        if sub["tenant_id"] and issued.tenant != sub["tenant_id"].lower():
            return None, wrong_tenant(issued, sub["tenant_id"])
        return sub, None

    @staticmethod
    def _subscription_json(sub: dict) -> dict:
        return {"subscription": sub["id"], "resource_groups": list(sub["resource_groups"].values()),
                "locations": sub["locations"], "tenant_id": sub["tenant_id"]}


class ArmOperations:
    """ARM's long-running operations, for a `FakeServer` with `operations` ({id: op}),
    the settings `polls` and `retry_after`, and a `_finish(op)` that ends one (calling
    `_end_operation`). A write answers with the operation's URLs; its status resource
    answers `InProgress` with `Retry-After: retry_after` for `polls` polls, then the
    operation ends `Succeeded` or `Failed` (`_poll`). Where `op_seconds` is set (AKS) an
    operation also ends once it has run that long, polled or not (`_tick`), and an
    operation with its own `seconds` (a hold) ends only then. `op_seconds` and `seconds`
    are cloud time: the fake waits them out at its time scale. `Retry-After` is cloud
    time as well and never scaled.

    Microsoft.Compute's form (capacity reservations, VMs) is here too: one URL
    `.../providers/Microsoft.Compute/locations/{l}/operations/{id}?p=..&api-version=..`
    as `Azure-AsyncOperation`, with `&monitor=true` as `Location` (`_compute_async_headers`,
    `_compute_operation`)."""

    op_seconds: float | None = None  # None: only polls (or `complete`) end an operation

    def _new_operation(self, fields: dict) -> dict:
        """Starts an operation (`fields`: what the fake keeps of it; `status`,
        `polls_left` and the monotonic `started` are added)."""
        op = {"id": str(uuid.uuid4()), **fields, "status": "InProgress",
              "polls_left": self.polls, "started": time.monotonic()}
        self.operations[op["id"]] = op
        return op

    def complete(self) -> int:
        with self.lock:
            return self._complete_operations()

    def _complete_operations(self) -> int:
        """Ends every operation still running; returns how many."""
        running = [op for op in self.operations.values() if op["status"] == "InProgress"]
        for op in running:
            self._finish(op)
        return len(running)

    def _tick(self) -> None:
        """Ends every operation that has run its `seconds` or `op_seconds` (scaled): the
        resource provider finishes its operations whether or not a client polls them (a
        client whose answer was lost never knows the operation's URL)."""
        for op in self.operations.values():
            limit = op.get("seconds", self.op_seconds)
            if op["status"] == "InProgress" and limit is not None \
                    and self.has_run(op["started"], limit):
                self._finish(op)

    @staticmethod
    def _end_operation(op: dict, end_time: str, error: dict | None) -> None:
        """Marks `op` ended at `end_time`: `Failed` with `error`, else `Succeeded`."""
        op["endTime"] = end_time
        op["status"] = "Failed" if error else "Succeeded"
        if error:
            op["error"] = error

    def _poll(self, op: dict) -> None:
        """One read of the status resource: a poll used up, or the end."""
        if op["status"] == "InProgress":
            if op["polls_left"] > 0:
                op["polls_left"] -= 1
            else:
                self._finish(op)

    def _waiting(self, op: dict) -> dict:
        return {"Retry-After": str(self.retry_after)} if op["status"] == "InProgress" else {}

    def _operation_answer(self, op: dict, status_read: bool, head, location: str, failed,
                          done) -> Response:
        """The answer to one poll of `op`. `status_read` (`Azure-AsyncOperation`): 200 with
        `head(op)` plus `endTime` and `error` once there. Else (`Location`): 202 with
        `location` while it runs, then `failed(op)` or `done(op)`."""
        self._poll(op)
        waiting = self._waiting(op)
        if status_read:
            body = head(op)
            for key in ("endTime", "error"):
                if key in op:
                    body[key] = op[key]
            return Response(200, body, waiting)
        if op["status"] == "InProgress":
            return Response(202, None, {"Location": location, **waiting})
        if op["status"] == "Failed":
            return failed(op)
        return done(op)

    def _compute_async_headers(self, op: dict, location: bool = True) -> dict:
        """The headers of a Microsoft.Compute write that started `op` (which has `p`)."""
        url = (f"{self.url}/subscriptions/{op['subscription']}/providers/Microsoft.Compute/"
               f"locations/{op['location']}/operations/{op['id']}?p={op['p']}&api-version="
               f"{self.compute_api_versions[0]}")
        headers = {"Azure-AsyncOperation": url, "Retry-After": str(self.retry_after),
                   "x-ms-request-id": request_id()}
        if location:
            headers["Location"] = url + "&monitor=true"
        return headers

    def _compute_operation(self, request: Request, m, done) -> Response:
        """GET of a Microsoft.Compute operation: its status, or with `monitor=true` 202
        until it ends, then `done(op)` or its error as 409."""
        op = self.operations.get(m["op"])
        if op is None or op["subscription"].lower() != m["sub"].lower():
            return arm_error(404, "NotFound", f"Operation {m['op']} was not found.")
        monitor = (request.query.get("monitor") or [""])[0].lower() == "true"
        return self._operation_answer(
            op, not monitor,
            lambda o: {"startTime": o["startTime"], "status": o["status"], "name": o["id"]},
            f"{self.url}{request.target}",
            lambda o: arm_error(409, o["error"]["code"], o["error"]["message"]), done)
