"""What every fake Azure Resource Manager endpoint shares, whatever resource provider it
serves: ARM's error body, bearer-token checks against the `AzureAD` fake's registry, the
answer to an injected fault, and the api-version checks ARM makes before a request reaches
a resource provider. Used by `arm_aks.py` (AKS) and `arm_commitments.py` (reservation
orders, capacity reservations); see README.md for the reference behind each message.
"""

from __future__ import annotations

import datetime as _dt
import re
import time

from . import Request, Response, request_id
from .tokens import TokenRegistry

# Audiences ARM accepts in a token (the resource the `.default` scope named).
ARM_AUDIENCES = ("https://management.core.windows.net/", "https://management.core.windows.net",
                 "https://management.azure.com/", "https://management.azure.com")
API_VERSION_RE = re.compile(r"\d{4}-\d{2}-\d{2}(-preview)?")


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
    return arm_error(status, code or dcode, message or dmessage,
                     {} if retry_after is None else {"Retry-After": str(retry_after)})


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
