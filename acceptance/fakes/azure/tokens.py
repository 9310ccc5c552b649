"""Microsoft Entra ID's token endpoint; what it issued goes to the shared registry
(`fakes/tokens.py`), which the ARM fakes consult.

- `AzureAD`: Microsoft Entra ID's v2 token endpoint, `POST /{tenant}/oauth2/v2.0/token`,
  client credentials grant with a client secret, exactly what `azure_identity`'s
  `ClientSecretCredential` sends (form fields `client_id`, `client_secret`,
  `grant_type=client_credentials`, `scope`; no metadata or instance discovery first). Its
  `url` is the value for `AZURE_AUTHORITY_HOST`.
"""

from __future__ import annotations

import base64
import re
import secrets

from .. import FakeServer, Request, Response, now_rfc3339, request_id
from ..tokens import TokenRegistry, _form, oauth_error


class AzureAD(FakeServer):
    """Entra ID's token endpoint for one or more (tenant, client id, client secret) apps.
    `url` is the authority host (`AZURE_AUTHORITY_HOST`)."""

    name = "azure-ad"

    def __init__(self, registry: TokenRegistry, tenant_id: str, client_id: str,
                 client_secret: str, time_scale=None):
        super().__init__(time_scale)
        self.registry = registry
        self.tenant_id, self.client_id, self.client_secret = tenant_id, client_id, client_secret
        self.apps: dict[tuple[str, str], str] = {}
        self.add_app(tenant_id, client_id, client_secret)

    def add_app(self, tenant_id: str, client_id: str, client_secret: str) -> None:
        with self.lock:
            self.apps[(tenant_id.lower(), client_id)] = client_secret

    def _fail(self, status: int, error: str, code: int, description: str) -> Response:
        trace, correlation = request_id(), request_id()
        stamp = now_rfc3339()[:19].replace("T", " ") + "Z"
        return Response(status, {
            "error": error,
            "error_description": f"AADSTS{code}: {description} Trace ID: {trace} "
                                 f"Correlation ID: {correlation} Timestamp: {stamp}",
            "error_codes": [code], "timestamp": stamp, "trace_id": trace,
            "correlation_id": correlation, "error_uri": f"{self.url}/error?code={code}"})

    def error(self, status, code, message, retry_after=None) -> Response:
        return oauth_error(status, code or ("temporarily_unavailable" if status >= 429
                                            else "invalid_request"), message, retry_after)

    def handle(self, request: Request) -> Response:
        m = re.fullmatch(r"/([^/]+)/oauth2/v2\.0/token", request.path)
        if m is None:
            return Response(404, b"")
        if request.method != "POST":
            return self._fail(400, "invalid_request", 900561,
                              f"The endpoint only accepts POST requests. Received a "
                              f"{request.method} request.")
        form = _form(request)
        auth = request.headers.get("Authorization") or ""
        if auth[:6].lower() == "basic ":  # client_secret_basic is allowed as well
            try:
                user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            except ValueError:
                return self._fail(401, "invalid_client", 7000216,
                                  "The Authorization header could not be decoded.")
            form.setdefault("client_id", user)
            form.setdefault("client_secret", password)
        request.log.update(form_fields=sorted(form), grant_type=form.get("grant_type"),
                           client_id=form.get("client_id"), scope=form.get("scope"))
        tenant = m.group(1).lower()
        if tenant not in {t for t, _ in self.apps}:
            return self._fail(400, "invalid_request", 90002,
                              f"Tenant '{m.group(1)}' not found. Check to make sure you have "
                              "the correct tenant ID and are signing into the correct cloud.")
        for name in ("grant_type", "client_id", "scope"):
            if not form.get(name):
                return self._fail(400, "invalid_request", 900144,
                                  f"The request body must contain the following parameter: "
                                  f"'{name}'.")
        if form["grant_type"] != "client_credentials":
            return self._fail(400, "unsupported_grant_type", 70003,
                              "The app requested an unsupported grant type "
                              f"'{form['grant_type']}'.")
        secret = self.apps.get((tenant, form["client_id"]))
        if secret is None:
            return self._fail(400, "unauthorized_client", 700016,
                              f"Application with identifier '{form['client_id']}' was not "
                              f"found in the directory '{m.group(1)}'.")
        if not form.get("client_secret"):
            return self._fail(401, "invalid_client", 7000216,
                              "'client_assertion', 'client_secret' or 'request' is required "
                              "for the 'client_credentials' grant type.")
        if not secrets.compare_digest(form["client_secret"], secret):
            return self._fail(401, "invalid_client", 7000215,
                              "Invalid client secret provided. Ensure the secret being sent "
                              "in the request is the client secret value, not the client "
                              f"secret ID, for a secret added to app '{form['client_id']}'.")
        scopes = form["scope"].split()
        if len(scopes) != 1 or not scopes[0].endswith("/.default"):
            return self._fail(400, "invalid_scope", 1002012,
                              f"The provided value for scope {form['scope']} is not valid. "
                              "Client credential flows must have a scope value with /.default "
                              "suffixed to the resource identifier (application ID URI).")
        issued = self.registry.issue("azure", scopes[0][:-len("/.default")],
                                     form["client_id"], tenant)
        return Response(200, {"token_type": "Bearer", "expires_in": 3599,
                              "ext_expires_in": 3599, "access_token": issued.token})
