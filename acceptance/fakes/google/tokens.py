"""Google's OAuth 2.0 token endpoint; what it issued and the service accounts it made go to
the shared registry (`fakes/tokens.py`), which the GKE and Compute Engine fakes consult.

- `GoogleOAuth`: Google's OAuth 2.0 token endpoint, `POST /token` with
  `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and an RS256 `assertion` signed
  by a service-account key it generated (`create_service_account`, `write_key_file`).
  `google-cloud-auth` does not call it for a service-account key (see `fakes/tokens.py`).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa

from .. import FakeServer, Request, Response
from ..tokens import JWT_BEARER, ServiceAccount, TokenRegistry, _form, oauth_error


class GoogleOAuth(FakeServer):
    """Google's OAuth 2.0 token endpoint (`POST /token`, jwt-bearer grant) and the
    service accounts whose keys it trusts."""

    name = "google-oauth"

    def __init__(self, registry: TokenRegistry, time_scale=None):
        super().__init__(time_scale)
        self.registry = registry

    @property
    def token_uri(self) -> str:
        return f"{self.url}/token"

    def create_service_account(self, project_id: str = "fake-project",
                               name: str = "gpu-tf") -> ServiceAccount:
        """A new service account with a fresh 2048-bit RSA key, trusted from now on."""
        account = ServiceAccount(
            email=f"{name}@{project_id}.iam.gserviceaccount.com", project_id=project_id,
            key_id=secrets.token_hex(20), client_id=str(10**20 + secrets.randbelow(10**20)),
            private_key=rsa.generate_private_key(public_exponent=65537, key_size=2048))
        self.registry.add_account(account)
        return account

    def write_key_file(self, account: ServiceAccount, path: Path) -> Path:
        """Writes the account's JSON key file (token_uri = this fake) with mode 0600."""
        path = Path(path)
        path.write_text(json.dumps(account.key_json(self.token_uri), indent=2))
        path.chmod(0o600)
        return path

    def error(self, status, code, message, retry_after=None) -> Response:
        return oauth_error(status, code or ("internal_failure" if status >= 500
                                            else "rate_limit_exceeded"), message, retry_after)

    def _fail(self, error: str, description: str, status: int = 400) -> Response:
        return Response(status, {"error": error, "error_description": description})

    def handle(self, request: Request) -> Response:
        if request.path != "/token":
            return Response(404, b"")
        if request.method != "POST":
            return self._fail("invalid_request", f"Invalid request method: {request.method}",
                              405)
        form = _form(request)
        request.log.update(form_fields=sorted(form), grant_type=form.get("grant_type"))
        if form.get("grant_type") != JWT_BEARER:
            return self._fail("unsupported_grant_type",
                              f"Invalid grant_type: {form.get('grant_type', '')}")
        if not form.get("assertion"):
            return self._fail("invalid_request", "Missing required parameter: assertion")
        claims, why = self.registry.verify_jwt(form["assertion"])
        if claims is None:
            return self._fail("invalid_grant", {
                "bad-signature": "Invalid JWT Signature.",
                "unknown-key": "Invalid JWT Signature.",
                "unknown-account": "Invalid grant: account not found",
                "lifetime": "Invalid JWT: Token must be a short-lived token (60 minutes) and "
                            "in a reasonable timeframe. Check your iat and exp values in the "
                            "JWT claim.",
            }.get(why, "Invalid JWT: malformed assertion."))
        request.log["subject"] = claims["iss"]
        if claims.get("aud") != self.token_uri:
            return self._fail("invalid_grant", "Invalid JWT: Failed audience check. The right "
                                               f"audience is {self.token_uri}")
        if not str(claims.get("scope") or "").strip():
            return self._fail("invalid_scope", "Empty or missing scope not allowed.")
        issued = self.registry.issue("google", claims["scope"], claims["iss"])
        return Response(200, {"access_token": issued.token, "expires_in": 3599,
                              "token_type": "Bearer"})
