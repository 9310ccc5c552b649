"""The registry of what the two token endpoints the cloud credentials talk to issued
(`AzureAD` in `azure/tokens.py`, `GoogleOAuth` in `google/tokens.py`), which the ARM and
GKE fakes consult to accept or refuse a bearer token, and the service accounts whose keys
it trusts.

Note: `google-cloud-auth` (googleapis/google-cloud-rust) does *not* call `token_uri` for
a service-account key: it signs a JWT itself (`iss`=`sub`=client email, `scope`
cloud-platform, `kid`=private key id, one hour) and sends it as the bearer token. The GKE
fake therefore also accepts such self-signed JWTs (`TokenRegistry.google_bearer`), after
verifying them against the same public key.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from . import Request, Response, retry_after_header

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
# Scopes that let a token call the GKE API (the ClusterManager service's oauth_scopes).
GKE_SCOPES = {CLOUD_PLATFORM, "https://www.googleapis.com/auth/container"}
# The audience a self-signed JWT for GKE names (AIP-4111: `https://{service}/`).
GKE_AUDIENCES = {"https://container.googleapis.com/", "https://container.googleapis.com"}
# Google refuses assertions living longer than an hour; google-cloud-auth adds 10 s of
# clock-skew slack at each end, so allow a minute over.
MAX_JWT_LIFETIME = 3600 + 60


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def service_principal_id(tenant: str | None, client_id: str) -> str:
    """The object id of app `client_id`'s service principal in `tenant` (stable per app)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"entra:{tenant}:{client_id}"))


def entra_jwt(audience: str, client_id: str, tenant: str | None, lifetime: int) -> str:
    """An app-only access token shaped as Entra ID issues them for ARM: a JWT whose claims
    name the tenant, the app and its service principal's object id (`oid`). The signature
    part is random: only the fake ARM checks these tokens, by lookup."""
    now = int(time.time())
    claims = {"aud": audience, "iss": f"https://sts.windows.net/{tenant}/", "iat": now,
              "nbf": now, "exp": now + lifetime, "appid": client_id, "idtyp": "app",
              "oid": service_principal_id(tenant, client_id), "sub":
              service_principal_id(tenant, client_id), "tid": tenant, "ver": "1.0"}
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()  # noqa: E731
    return ".".join([part({"typ": "JWT", "alg": "RS256", "kid": "fake"}), part(claims),
                     secrets.token_urlsafe(32)])


@dataclass
class Issued:
    """A token a token fake issued: who issued it (`azure`/`google`), for which audience
    (ARM resource, or the Google scopes), to whom, and until when (epoch seconds)."""

    token: str
    issuer: str
    audience: str
    subject: str
    tenant: str | None
    expires_at: float


@dataclass
class ServiceAccount:
    """A Google service account with an RSA key (the private half only in its key file)."""

    email: str
    project_id: str
    key_id: str
    client_id: str
    private_key: rsa.RSAPrivateKey = field(repr=False)

    def private_key_pem(self) -> str:
        """PKCS#8 PEM (`BEGIN PRIVATE KEY`), the form Google issues and google-cloud-auth
        requires."""
        return self.private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()).decode()

    def key_json(self, token_uri: str) -> dict:
        """The JSON key file Google's IAM hands out, with `token_uri` at the fake."""
        return {
            "type": "service_account",
            "project_id": self.project_id,
            "private_key_id": self.key_id,
            "private_key": self.private_key_pem(),
            "client_email": self.email,
            "client_id": self.client_id,
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": token_uri,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/"
                                    + self.email.replace("@", "%40"),
            "universe_domain": "googleapis.com",
        }

    def sign_jwt(self, claims: dict, kid: bool = True) -> str:
        """An RS256 JWT of `claims` signed with this account's key."""
        header = {"alg": "RS256", "typ": "JWT", **({"kid": self.key_id} if kid else {})}
        signing_input = (b64url(json.dumps(header).encode()) + "."
                         + b64url(json.dumps(claims).encode()))
        signature = self.private_key.sign(signing_input.encode(), padding.PKCS1v15(),
                                          hashes.SHA256())
        return signing_input + "." + b64url(signature)

    def self_signed_jwt(self, scope: str = CLOUD_PLATFORM, lifetime: int = 3600) -> str:
        """The bearer token google-cloud-auth builds from a key file (no token_uri call)."""
        now = int(time.time())
        return self.sign_jwt({"iss": self.email, "scope": scope, "aud": None,
                              "exp": now + 10 + lifetime, "iat": now - 10, "sub": self.email})

    def assertion(self, token_uri: str, scope: str = CLOUD_PLATFORM,
                  lifetime: int = 3600) -> str:
        """A jwt-bearer grant assertion for `token_uri` (what google-auth libraries post)."""
        now = int(time.time())
        return self.sign_jwt({"iss": self.email, "scope": scope, "aud": token_uri,
                              "iat": now, "exp": now + lifetime})


class TokenRegistry:
    """Every token the token fakes issued, and the service accounts they know. Shared by
    the token fakes and the cloud fakes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens: dict[str, Issued] = {}
        self._accounts: dict[str, ServiceAccount] = {}

    def issue(self, issuer: str, audience: str, subject: str, tenant: str | None = None,
              lifetime: int = 3599) -> Issued:
        if issuer == "azure":
            token = entra_jwt(audience, subject, tenant, lifetime)
        else:
            token = "ya29." + secrets.token_urlsafe(48)
        issued = Issued(token, issuer, audience, subject, tenant, time.time() + lifetime)
        with self._lock:
            self._tokens[issued.token] = issued
        return issued

    def lookup(self, token: str) -> Issued | None:
        with self._lock:
            return self._tokens.get(token)

    def expire(self, token: str) -> None:
        """Makes an issued token expired (tests of the expiry path)."""
        with self._lock:
            self._tokens[token].expires_at = time.time() - 1

    def add_account(self, account: ServiceAccount) -> None:
        with self._lock:
            self._accounts[account.email] = account

    def account(self, email: str) -> ServiceAccount | None:
        with self._lock:
            return self._accounts.get(email)

    def verify_jwt(self, jwt: str) -> tuple[dict | None, str]:
        """Checks an RS256 JWT signed by a known service account: (claims, "") when valid,
        else (None, one of malformed/unknown-account/unknown-key/bad-signature/lifetime)."""
        parts = jwt.split(".")
        if len(parts) != 3:
            return None, "malformed"
        try:
            header = json.loads(b64url_decode(parts[0]))
            claims = json.loads(b64url_decode(parts[1]))
            signature = b64url_decode(parts[2])
        except ValueError:
            return None, "malformed"
        if not isinstance(header, dict) or not isinstance(claims, dict) \
                or header.get("alg") != "RS256":
            return None, "malformed"
        account = self.account(str(claims.get("iss")))
        if account is None:
            return None, "unknown-account"
        if "kid" in header and header["kid"] != account.key_id:
            return None, "unknown-key"
        try:
            account.private_key.public_key().verify(
                signature, f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(),
                hashes.SHA256())
        except InvalidSignature:
            return None, "bad-signature"
        iat, exp, now = claims.get("iat"), claims.get("exp"), time.time()
        if not isinstance(iat, int) or not isinstance(exp, int) or exp <= now \
                or iat > now + 300 or exp - iat > MAX_JWT_LIFETIME:
            return None, "lifetime"
        return claims, ""

    def google_bearer(self, token: str, scopes=GKE_SCOPES, audiences=GKE_AUDIENCES,
                      service: str = "GKE") -> tuple[str | None, str]:
        """Whether a bearer token may call a Google API (GKE unless told otherwise: the
        `scopes` that open it, the self-signed-JWT `audiences` it answers to):
        ("opaque"|"self-signed-jwt", "") or (None, why not). A valid token without those
        scopes is (None, "insufficient scopes") or (None, "neither a {service} scope nor
        the {service} audience")."""
        issued = self.lookup(token)
        if issued is not None:
            if issued.issuer != "google":
                return None, "not a Google token"
            if issued.expires_at <= time.time():
                return None, "expired"
            if not set(scopes) & set(issued.audience.split()):
                return None, "insufficient scopes"
            return "opaque", ""
        if token.count(".") != 2:
            return None, "unknown token"
        claims, why = self.verify_jwt(token)
        if claims is None:
            return None, why
        granted = set(str(claims.get("scope") or "").split())
        if set(scopes) & granted or claims.get("aud") in audiences:
            return "self-signed-jwt", ""
        return None, f"neither a {service} scope nor the {service} audience"

    def google_subject(self, token: str) -> str | None:
        """The account a Google bearer token speaks for (the issued token's subject, or a
        self-signed JWT's `iss`), None when it is not a valid one."""
        issued = self.lookup(token)
        if issued is not None:
            return issued.subject if issued.issuer == "google" else None
        claims, _ = self.verify_jwt(token) if token.count(".") == 2 else (None, "")
        return str(claims.get("iss")) if claims else None


def oauth_error(status: int, error: str, description: str | None,
                retry_after: int | None = None) -> Response:
    """An OAuth 2.0 error answer (RFC 6749 section 5.2: `error`, `error_description`), as
    both token fakes answer an injected fault."""
    return Response(status, {"error": error,
                             "error_description": description or "Injected by the fake."},
                    retry_after_header(retry_after))


def _form(request: Request) -> dict[str, str]:
    fields = parse_qs(request.body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[0] for k, v in fields.items()}
