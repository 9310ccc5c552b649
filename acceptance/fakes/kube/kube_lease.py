"""A fake of the Kubernetes API's `coordination.k8s.io/v1` Lease, the part leader election
uses (`terraform-provider-gpu watch --lease-name`): get, create and replace one Lease, with
`metadata.resourceVersion` optimistic concurrency, bearer-token authentication and a small
RBAC (which verbs each token may use).

    api = KubeLease().start()                          # watch --kube-endpoint api.url
    token = api.add_token("system:serviceaccount:gpu:watcher")   # all three verbs
    api.write_token_file(token, tmp / "token")         # --kube-token-file
    api.lease("gpu", "gpu-watch")                      # the stored Lease, or None
    api.state()["requests"]                            # or GET /_fake/state

Served (paths and bodies from the API reference, "Lease v1" under Cluster Resources):

- `GET    /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}`: 200 Lease, 404 Status
- `POST   /apis/coordination.k8s.io/v1/namespaces/{ns}/leases`: 201 Lease, 409 AlreadyExists
- `PUT    /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}`: 200 Lease; 201 when it
  did not exist (Lease's strategy allows create on update); 409 Conflict when
  `metadata.resourceVersion` is not the stored one; 422 Invalid when it is missing (Lease's
  strategy does not allow an unconditional update)

Errors are `Status` objects (`{kind: Status, apiVersion: v1, metadata: {}, status:
Failure, message, reason, details, code}`). Every stored write gets a new
`resourceVersion` (one counter for the whole fake, as etcd's revision), `uid` and
`creationTimestamp` on create; `acquireTime`/`renewTime` are stored and answered as
MicroTime (`2006-01-02T15:04:05.000000Z`). See ../README.md for what each behaviour rests on.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import secrets
import uuid
from pathlib import Path

from .. import FakeServer, Request, Response, now_rfc3339

GROUP = "coordination.k8s.io"
RESOURCE = f"leases.{GROUP}"
_BASE = r"/apis/coordination\.k8s\.io/v1/namespaces/(?P<ns>[^/]+)/leases"
ITEM = re.compile(_BASE + r"/(?P<name>[^/]+)")
COLLECTION = re.compile(_BASE)
VERBS = ("get", "create", "update")
SPEC_FIELDS = {"holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime",
               "leaseTransitions", "preferredHolder", "strategy"}
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
OPTIMISTIC_LOCK = ("the object has been modified; please apply your changes to the latest "
                   "version and try again")


def micro_time(value) -> str:
    """A MicroTime as the API server writes it, from any RFC 3339 time (ValueError if not)."""
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)", value)
    if not m:
        raise ValueError(f"parsing time {value!r} as \"2006-01-02T15:04:05.000000Z07:00\"")
    whole, frac, zone = m.groups()
    t = _dt.datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
    t = t.astimezone(_dt.timezone.utc)
    micros = int(((frac or "") + "000000")[:6])
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{micros:06d}Z"


def status(code: int, reason: str, message: str, details: dict | None = None) -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return Response(code, body)


class KubeLease(FakeServer):
    """Leases in memory, keyed by (namespace, name). Tokens: `add_token(user, verbs)`;
    a request without a known token is 401, a verb the token lacks 403."""

    name = "kube-lease"

    def __init__(self, time_scale=None):
        super().__init__(time_scale)  # nothing here waits: leaseDurationSeconds is cloud time
        self.leases: dict[tuple[str, str], dict] = {}
        self.tokens: dict[str, dict] = {}
        self.revision = 100

    # --- test control -----------------------------------------------------------------

    def add_token(self, user: str = "system:serviceaccount:default:watcher",
                  verbs=VERBS) -> str:
        """A new bearer token for `user`, allowed `verbs` on leases (any namespace)."""
        token = "kube-" + secrets.token_urlsafe(24)
        with self.lock:
            self.tokens[token] = {"user": user, "verbs": set(verbs)}
        return token

    @staticmethod
    def write_token_file(token: str, path: Path) -> Path:
        """The token as a pod sees it: one line in a file."""
        path = Path(path)
        path.write_text(token + "\n")
        path.chmod(0o600)
        return path

    def lease(self, namespace: str, name: str) -> dict | None:
        """The stored Lease (a copy), or None."""
        with self.lock:
            lease = self.leases.get((namespace, name))
            return json.loads(json.dumps(lease)) if lease else None

    def reset_state(self) -> None:
        self.leases.clear()

    def snapshot(self) -> dict:
        return {"leases": list(self.leases.values()),
                "users": sorted({t["user"] for t in self.tokens.values()})}

    def error(self, status_code: int, code, message, retry_after=None) -> Response:
        reasons = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
                   504: "Timeout"}
        r = status(status_code, code or reasons.get(status_code, "InternalError"),
                   message or "injected fault")
        if retry_after is not None:
            r.headers["Retry-After"] = str(retry_after)
        return r

    # --- the API ----------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        item, coll = ITEM.fullmatch(request.path), COLLECTION.fullmatch(request.path)
        token = request.bearer()
        user = self.tokens.get(token) if token else None
        if user is None:
            return status(401, "Unauthorized", "Unauthorized")
        request.log["user"] = user["user"]
        if item and request.method == "GET":
            verb = "get"
        elif item and request.method == "PUT":
            verb = "update"
        elif coll and request.method == "POST":
            verb = "create"
        elif item or coll:
            return status(405, "MethodNotAllowed",
                          "the server does not allow this method on the requested resource")
        else:
            return status(404, "NotFound", "the server could not find the requested resource")
        m = item or coll
        ns, name = m.group("ns"), m.groupdict().get("name")
        if verb not in user["verbs"]:
            what = f'{RESOURCE} "{name}"' if name else RESOURCE
            return status(403, "Forbidden",
                          f'{what} is forbidden: User "{user["user"]}" cannot {verb} resource '
                          f'"leases" in API group "{GROUP}" in the namespace "{ns}"',
                          {"name": name, "group": GROUP, "kind": "leases"} if name
                          else {"group": GROUP, "kind": "leases"})
        if verb == "get":
            lease = self.leases.get((ns, name))
            if lease is None:
                return self._not_found(name)
            return Response(200, lease)
        try:
            body = json.loads(request.body or b"null")
        except ValueError as e:
            return status(400, "BadRequest", f"the body of the request was in an unknown "
                                             f"format: {e}")
        if not isinstance(body, dict):
            return status(400, "BadRequest", "the body of the request is not an object")
        request.log["json"] = body
        if verb == "create":
            return self._create(ns, body)
        return self._update(ns, name, body)

    def _not_found(self, name: str) -> Response:
        return status(404, "NotFound", f'{RESOURCE} "{name}" not found',
                      {"name": name, "group": GROUP, "kind": "leases"})

    def _checked(self, ns: str, body: dict, url_name: str | None) -> tuple[dict, Response | None]:
        """The body as it would be stored, or the error the API server answers."""
        if body.get("kind", "Lease") != "Lease" or body.get("apiVersion", "coordination.k8s.io/v1") \
                != "coordination.k8s.io/v1":
            return body, status(400, "BadRequest",
                                f"the API version in the data ({body.get('apiVersion')}) does "
                                f"not match the expected API version (coordination.k8s.io/v1)")
        meta = body.get("metadata") or {}
        name = meta.get("name") or url_name
        if url_name is not None and meta.get("name") not in (None, url_name):
            return body, status(400, "BadRequest",
                                f"the name of the object ({meta.get('name')}) does not match "
                                f"the name on the URL ({url_name})")
        if meta.get("namespace") not in (None, "", ns):
            return body, status(400, "BadRequest",
                                "the namespace of the provided object does not match the "
                                "namespace sent on the request")
        causes = []
        if not name:
            causes.append(("metadata.name", "Required value: name or generateName is required"))
        elif len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
            causes.append(("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 '
                                            "subdomain must consist of lower case alphanumeric "
                                            "characters, '-' or '.'"))
        spec = body.get("spec") or {}
        unknown = set(spec) - SPEC_FIELDS
        if unknown:
            return body, status(400, "BadRequest",
                                f'Lease in version "v1" cannot be handled as a Lease: strict '
                                f'decoding error: unknown field "spec.{sorted(unknown)[0]}"')
        stored_spec = {}
        for key, value in spec.items():
            if value is None:
                continue
            if key in ("acquireTime", "renewTime"):
                try:
                    value = micro_time(value)
                except ValueError as e:
                    return body, status(400, "BadRequest",
                                        f'Lease in version "v1" cannot be handled as a Lease: {e}')
            if key == "leaseDurationSeconds" and (not isinstance(value, int) or value <= 0):
                causes.append(("spec.leaseDurationSeconds",
                               f"Invalid value: {value}: must be greater than 0"))
            if key == "leaseTransitions" and (not isinstance(value, int) or value < 0):
                causes.append(("spec.leaseTransitions",
                               f"Invalid value: {value}: must be greater than or equal to 0"))
            stored_spec[key] = value
        if causes:
            return body, self._invalid(name or "", causes)
        stored = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                  "metadata": {k: v for k, v in meta.items()
                               if k in ("name", "labels", "annotations", "resourceVersion")},
                  "spec": stored_spec}
        stored["metadata"]["name"] = name
        stored["metadata"]["namespace"] = ns
        return stored, None

    def _invalid(self, name: str, causes: list) -> Response:
        return status(422, "Invalid",
                      f'Lease.{GROUP} "{name}" is invalid: '
                      + ", ".join(f"{f}: {m}" for f, m in causes),
                      {"name": name, "group": GROUP, "kind": "Lease",
                       "causes": [{"reason": "FieldValueInvalid", "message": m, "field": f}
                                  for f, m in causes]})

    def _stamp(self, lease: dict) -> dict:
        self.revision += 1
        lease["metadata"]["resourceVersion"] = str(self.revision)
        return lease

    def _create(self, ns: str, body: dict) -> Response:
        lease, err = self._checked(ns, body, None)
        if err:
            return err
        name = lease["metadata"]["name"]
        if "resourceVersion" in lease["metadata"]:
            return status(500, "InternalError",
                          "resourceVersion should not be set on objects to be created")
        if (ns, name) in self.leases:
            return status(409, "AlreadyExists", f'{RESOURCE} "{name}" already exists',
                          {"name": name, "group": GROUP, "kind": "leases"})
        lease["metadata"].update(uid=str(uuid.uuid4()),
                                 creationTimestamp=now_rfc3339()[:19] + "Z")
        self.leases[(ns, name)] = self._stamp(lease)
        return Response(201, lease)

    def _update(self, ns: str, name: str, body: dict) -> Response:
        lease, err = self._checked(ns, body, name)
        if err:
            return err
        existing = self.leases.get((ns, name))
        given = lease["metadata"].pop("resourceVersion", None)
        if existing is None:  # Lease's strategy: AllowCreateOnUpdate
            if given:
                return self._not_found(name)
            lease["metadata"].update(uid=str(uuid.uuid4()),
                                     creationTimestamp=now_rfc3339()[:19] + "Z")
            self.leases[(ns, name)] = self._stamp(lease)
            return Response(201, lease)
        if not given:  # Lease's strategy: no unconditional update
            return self._invalid(name, [("metadata.resourceVersion",
                                         "Invalid value: 0x0: must be specified for an update")])
        if given != existing["metadata"]["resourceVersion"]:
            return status(409, "Conflict",
                          f'Operation cannot be fulfilled on {RESOURCE} "{name}": '
                          + OPTIMISTIC_LOCK,
                          {"name": name, "group": GROUP, "kind": "leases"})
        for key in ("uid", "creationTimestamp"):
            lease["metadata"][key] = existing["metadata"][key]
        self.leases[(ns, name)] = self._stamp(lease)
        return Response(200, lease)
