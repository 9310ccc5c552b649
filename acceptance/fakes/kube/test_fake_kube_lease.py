"""The fake Kubernetes Lease API (`fakes/kube/kube_lease.py`) driven with urllib only: create,
read, replace with optimistic concurrency, and the Status errors a client must handle."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from fakes.kube.kube_lease import KubeLease

NS, NAME = "gpu", "gpu-watch"
MICRO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def call(api, method: str, path: str, body=None, token: str | None = None):
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(api.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


ITEM = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/{NAME}"
COLLECTION = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"


def lease(holder: str, renew: str = "2026-12-05T10:00:00.123456Z", **spec) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 30,
                     "acquireTime": renew, "renewTime": renew, "leaseTransitions": 0, **spec}}


@pytest.fixture
def api():
    with KubeLease() as server:
        yield server


def test_create_read_replace_with_optimistic_concurrency(api):
    token = api.add_token("system:serviceaccount:gpu:watcher")
    status, body = call(api, "GET", ITEM, token=token)
    assert status == 404 and body["kind"] == "Status" and body["reason"] == "NotFound", body
    assert body["message"] == f'leases.coordination.k8s.io "{NAME}" not found'
    assert body["details"] == {"name": NAME, "group": "coordination.k8s.io", "kind": "leases"}

    status, created = call(api, "POST", COLLECTION, lease("a"), token)
    assert status == 201, created
    rv = created["metadata"]["resourceVersion"]
    assert rv and created["metadata"]["uid"] and created["metadata"]["creationTimestamp"]
    assert MICRO.fullmatch(created["spec"]["renewTime"]), created
    status, again = call(api, "POST", COLLECTION, lease("b"), token)
    assert status == 409 and again["reason"] == "AlreadyExists", again

    status, read = call(api, "GET", ITEM, token=token)
    assert status == 200 and read == created

    # Two replicas replace from the same read: the first wins, the second is stale.
    first = json.loads(json.dumps(read))
    first["spec"]["holderIdentity"] = "b"
    second = json.loads(json.dumps(read))
    second["spec"]["holderIdentity"] = "c"
    status, won = call(api, "PUT", ITEM, first, token)
    assert status == 200 and won["spec"]["holderIdentity"] == "b", won
    assert won["metadata"]["resourceVersion"] != rv
    assert won["metadata"]["uid"] == created["metadata"]["uid"]
    status, lost = call(api, "PUT", ITEM, second, token)
    assert status == 409 and lost["reason"] == "Conflict" and lost["code"] == 409, lost
    assert "the object has been modified" in lost["message"]
    assert api.lease(NS, NAME)["spec"]["holderIdentity"] == "b"

    # No resourceVersion: Leases allow no unconditional update.
    del second["metadata"]["resourceVersion"]
    status, invalid = call(api, "PUT", ITEM, second, token)
    assert status == 422 and invalid["reason"] == "Invalid", invalid
    assert invalid["details"]["causes"][0]["field"] == "metadata.resourceVersion"


def test_times_are_micro_time_and_the_spec_is_validated(api):
    token = api.add_token()
    status, body = call(api, "POST", COLLECTION, lease("a", renew="2026-12-05T10:00:00Z"), token)
    assert status == 201 and body["spec"]["renewTime"] == "2026-12-05T10:00:00.000000Z", body
    zero = lease("a", leaseDurationSeconds=0)
    zero["metadata"]["name"] = "other"
    status, body = call(api, "PUT", ITEM.replace(NAME, "other"), zero, token)
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.leaseDurationSeconds"
    status, body = call(api, "PUT", ITEM.replace(NAME, "other"), lease("a"), token)
    assert status == 400 and "does not match the name on the URL" in body["message"], body
    status, body = call(api, "POST", COLLECTION, lease("a", renew="yesterday"), token)
    assert status == 400 and body["reason"] == "BadRequest", body
    # PUT creates a Lease that does not exist yet (Lease's strategy allows it).
    other = lease("a")
    other["metadata"]["name"] = "other"
    status, body = call(api, "PUT", ITEM.replace(NAME, "other"), other, token)
    assert status == 201, body


def test_tokens_and_verbs(api):
    status, body = call(api, "GET", ITEM)
    assert status == 401 and body["reason"] == "Unauthorized", body
    status, body = call(api, "GET", ITEM, token="not-a-token")
    assert status == 401
    reader = api.add_token("system:serviceaccount:gpu:reader", verbs=("get",))
    status, body = call(api, "POST", COLLECTION, lease("a"), reader)
    assert status == 403 and body["reason"] == "Forbidden", body
    assert 'cannot create resource "leases" in API group "coordination.k8s.io"' in body["message"]
    log = api.state()["requests"]
    assert [r["status"] for r in log] == [401, 401, 403]
    assert all("not-a-token" not in json.dumps(r) for r in log)
