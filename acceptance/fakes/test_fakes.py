"""The fake clouds of `acceptance/fakes/` (ARM with AKS agent pools, GKE v1 node pools,
the Entra ID and Google OAuth token endpoints), exercised over plain HTTP with urllib
only: no provider, no Terraform, no cloud SDK. Each test starts its own servers on
127.0.0.1 and reads the fakes' stored state through `GET /_fake/state`, so every check is
against what a client would see or what the fake holds, never against the fake's Python
objects.

Entra ID and Google token issuance and refusal (wrong secret, bad JWT signature,
self-signed service-account JWTs), bearer required, ARM's api-version check; an agent pool
create polled through `Azure-AsyncOperation` to Succeeded and then read, 409
`OperationNotAllowed` while an operation runs, delete, 404 shapes, name rules, injected 429
with `Retry-After`; GKE operations polled to DONE, `FAILED_PRECONDITION` on a concurrent
mutation, `setSize`/`setAutoscaling`/update, spot pools read back; the control state shows
exactly what was stored (see fakes/README.md).
"""

from __future__ import annotations

import base64
import json
import time

import pytest

from fakes import tls_context
from fakes.azure.aks import API_VERSION, OPERATION_API_VERSION, SPOT_LABEL, SPOT_TAINT, ArmAks
from fakes.azure.tokens import AzureAD
from fakes.google.gke import Gke
from fakes.google.tokens import GoogleOAuth
from fakes.testing import Reply, call, state
from fakes.tokens import CLOUD_PLATFORM, JWT_BEARER, TokenRegistry

# Mostly waits (alone, 9.2 s wall, 2.9 s of CPU: operations waited out in real seconds):
# `make acceptance` runs it with more workers than cores (README.md, "Scheduling").
pytestmark = pytest.mark.waits

SUB = "3f1c6a4e-8d2b-4c1a-9e57-0b6d2f7a9c11"
TENANT = "b5d0e9a2-7c34-4f1e-8a6b-2c9d1e0f3a44"
CLIENT = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
SECRET = "fake-secret-Qx7~1d"
RG, CLUSTER, REGION = "gpu-rg", "aks1", "eastus"
PROJECT, LOCATION, GKE_CLUSTER = "fake-project", "us-central1", "gke1"
ARM_SCOPE = "https://management.azure.com/.default"


# --- fixtures -----------------------------------------------------------------------------

@pytest.fixture
def aad(registry):
    with AzureAD(registry, TENANT, CLIENT, SECRET) as server:
        yield server


@pytest.fixture
def arm(registry):
    with ArmAks(registry, time_scale=1) as server:  # these tests wait out real seconds
        reply = call("POST", server.url + "/_fake/clusters",
                     {"subscription": SUB, "resource_group": RG, "name": CLUSTER,
                      "location": REGION, "tenant_id": TENANT})
        assert reply.status == 201, reply.raw
        yield server


def azure_token(aad, scope=ARM_SCOPE, secret=SECRET) -> Reply:
    return call("POST", f"{aad.url}/{TENANT}/oauth2/v2.0/token",
                form={"client_id": CLIENT, "client_secret": secret,
                      "grant_type": "client_credentials", "scope": scope})


@pytest.fixture
def auth(aad, arm):
    reply = azure_token(aad)
    assert reply.status == 200, reply.raw
    return {"Authorization": "Bearer " + reply.json["access_token"]}


def cluster_url(arm, suffix="", api=API_VERSION, sub=SUB, rg=RG, cluster=CLUSTER) -> str:
    query = f"?api-version={api}" if api else ""
    return (f"{arm.url}/subscriptions/{sub}/resourceGroups/{rg}/providers/"
            f"Microsoft.ContainerService/managedClusters/{cluster}{suffix}{query}")


def gpu_pool(**overrides) -> dict:
    props = {"vmSize": "Standard_NC24ads_A100_v4", "count": 1, "mode": "User",
             "osType": "Linux", "osSKU": "Ubuntu", "nodeLabels": {"gpu.tf/pool": "train"},
             "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"],
             "tags": {"team": "ml"}, "gpuProfile": {"driver": "Install"},
             "availabilityZones": ["1", "2"]}
    props.update(overrides)
    return {"properties": props}


def poll(url: str, headers: dict, until=lambda r: True, limit: int = 10) -> list[Reply]:
    replies = []
    for _ in range(limit):
        replies.append(call("GET", url, headers=headers))
        if until(replies[-1]):
            return replies
    raise AssertionError(f"never finished: {[r.status for r in replies]}")


def aks_op_done(reply: Reply) -> bool:
    return reply.json["status"] != "InProgress"


def create_pool(arm, auth, name="gpu1", body=None) -> Reply:
    reply = call("PUT", cluster_url(arm, f"/agentPools/{name}"), body or gpu_pool(),
                 headers=auth)
    assert reply.status == 201, reply.raw
    poll(reply.headers["Azure-AsyncOperation"], auth, aks_op_done)
    return reply


# --- Entra ID token endpoint --------------------------------------------------------------

def test_azure_token_is_issued_for_the_right_secret_and_opens_arm(aad, arm):
    reply = azure_token(aad)
    assert reply.status == 200
    assert reply.json["token_type"] == "Bearer"
    assert reply.json["expires_in"] == 3599
    token = reply.json["access_token"]
    cluster = call("GET", cluster_url(arm), headers={"Authorization": f"Bearer {token}"})
    assert cluster.status == 200
    assert cluster.json["location"] == REGION
    assert cluster.json["properties"]["agentPoolProfiles"][0]["mode"] == "System"
    log = state(aad)["requests"]
    assert log[0]["form_fields"] == ["client_id", "client_secret", "grant_type", "scope"]
    assert SECRET not in json.dumps(state(aad)), "the fake must not log the secret"


@pytest.mark.parametrize("case, status, error, code", [
    ("wrong secret", 401, "invalid_client", 7000215),
    ("unknown tenant", 400, "invalid_request", 90002),
    ("unknown client", 400, "unauthorized_client", 700016),
    ("scope without /.default", 400, "invalid_scope", 1002012),
    ("password grant", 400, "unsupported_grant_type", 70003),
    ("no scope", 400, "invalid_request", 900144),
])
def test_azure_token_refusals_have_entra_error_bodies(aad, case, status, error, code):
    form = {"client_id": CLIENT, "client_secret": SECRET, "grant_type": "client_credentials",
            "scope": ARM_SCOPE}
    tenant = TENANT
    if case == "wrong secret":
        form["client_secret"] = "not-the-secret"
    elif case == "unknown tenant":
        tenant = "00000000-0000-0000-0000-00000000dead"
    elif case == "unknown client":
        form["client_id"] = "11111111-2222-3333-4444-555555555555"
    elif case == "scope without /.default":
        form["scope"] = "https://management.azure.com/user_impersonation"
    elif case == "password grant":
        form["grant_type"] = "password"
    else:
        del form["scope"]
    reply = call("POST", f"{aad.url}/{tenant}/oauth2/v2.0/token", form=form)
    assert reply.status == status
    assert reply.json["error"] == error
    assert reply.json["error_codes"] == [code]
    assert reply.json["error_description"].startswith(f"AADSTS{code}: ")
    assert "access_token" not in reply.json


def test_azure_token_accepts_client_secret_basic(aad):
    basic = base64.b64encode(f"{CLIENT}:{SECRET}".encode()).decode()
    reply = call("POST", f"{aad.url}/{TENANT}/oauth2/v2.0/token",
                 form={"grant_type": "client_credentials", "scope": ARM_SCOPE},
                 headers={"Authorization": f"Basic {basic}"})
    assert reply.status == 200 and reply.json["access_token"]


# --- ARM: authentication and api-version ------------------------------------------------

def test_arm_refuses_missing_foreign_expired_and_wrong_audience_tokens(aad, arm, registry):
    missing = call("GET", cluster_url(arm))
    assert missing.status == 401
    assert missing.json["error"]["code"] == "AuthenticationFailed"
    assert 'error="invalid_token"' in missing.headers["WWW-Authenticate"]
    garbage = call("GET", cluster_url(arm), headers={"Authorization": "Bearer abc.def"})
    assert garbage.json["error"]["code"] == "InvalidAuthenticationToken"
    google = registry.issue("google", CLOUD_PLATFORM, "sa@x.iam.gserviceaccount.com").token
    assert call("GET", cluster_url(arm), headers={"Authorization": f"Bearer {google}"}
                ).json["error"]["code"] == "InvalidAuthenticationToken"
    graph = azure_token(aad, scope="https://graph.microsoft.com/.default").json["access_token"]
    wrong = call("GET", cluster_url(arm), headers={"Authorization": f"Bearer {graph}"})
    assert wrong.status == 401
    assert wrong.json["error"]["code"] == "InvalidAuthenticationTokenAudience"
    token = azure_token(aad).json["access_token"]
    registry.expire(token)
    expired = call("GET", cluster_url(arm), headers={"Authorization": f"Bearer {token}"})
    assert expired.status == 401
    assert expired.json["error"]["code"] == "ExpiredAuthenticationToken"
    assert [r["bearer"] for r in state(arm)["requests"]] == [False, True, True, True, True]


def test_arm_refuses_a_token_of_another_tenant(aad, arm, registry):
    aad.add_app("other-tenant", CLIENT, SECRET)
    reply = call("POST", f"{aad.url}/other-tenant/oauth2/v2.0/token",
                 form={"client_id": CLIENT, "client_secret": SECRET,
                       "grant_type": "client_credentials", "scope": ARM_SCOPE})
    token = reply.json["access_token"]
    refused = call("GET", cluster_url(arm), headers={"Authorization": f"Bearer {token}"})
    assert refused.status == 401
    assert refused.json["error"]["code"] == "InvalidAuthenticationTokenTenant"


def test_arm_checks_the_api_version(arm, auth):
    missing = call("GET", cluster_url(arm, "/agentPools", api=None), headers=auth)
    assert missing.status == 400
    assert missing.json["error"]["code"] == "MissingApiVersionParameter"
    old = call("GET", cluster_url(arm, "/agentPools", api="2019-02-01"), headers=auth)
    assert old.status == 400
    assert old.json["error"]["code"] == "NoRegisteredProviderFound"
    assert f"'{API_VERSION}'" in old.json["error"]["message"]
    assert "managedClusters/agentPools" in old.json["error"]["message"]
    bad = call("GET", cluster_url(arm, api="latest"), headers=auth)
    assert bad.json["error"]["code"] == "InvalidApiVersionParameter"
    assert call("GET", cluster_url(arm, "/agentPools"), headers=auth).status == 200


# --- AKS agent pools -------------------------------------------------------------------------

def test_aks_create_is_a_long_running_operation_polled_to_succeeded(arm, auth):
    put = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    assert put.status == 201
    assert put.json["properties"]["provisioningState"] == "Creating"
    assert put.headers["Retry-After"] == "1"
    status_url = put.headers["Azure-AsyncOperation"]
    assert status_url.startswith(f"{arm.url}/subscriptions/{SUB}/providers/"
                                 f"Microsoft.ContainerService/locations/{REGION}/operations/")
    assert status_url.endswith(f"?api-version={OPERATION_API_VERSION}")
    assert "/operationresults/" in put.headers["Location"]
    during = call("GET", cluster_url(arm, "/agentPools/gpu1"), headers=auth)
    assert during.json["properties"]["provisioningState"] == "Creating"
    replies = poll(status_url, auth, aks_op_done)
    assert [r.json["status"] for r in replies] == ["InProgress", "InProgress", "Succeeded"]
    assert replies[0].headers["Retry-After"] == "1"
    assert "endTime" in replies[-1].json and "endTime" not in replies[0].json
    got = call("GET", cluster_url(arm, "/agentPools/gpu1"), headers=auth)
    assert got.status == 200
    props = got.json["properties"]
    assert props["provisioningState"] == "Succeeded"
    assert got.json["id"].endswith(f"/managedClusters/{CLUSTER}/agentPools/gpu1")
    stored = state(arm)["clusters"][0]["agentPools"]["gpu1"]["properties"]
    assert stored == props
    assert {k: stored[k] for k in ("vmSize", "count", "mode", "osSKU", "nodeLabels",
                                   "nodeTaints", "tags", "gpuProfile", "availabilityZones",
                                   "orchestratorVersion")} == {
        "vmSize": "Standard_NC24ads_A100_v4", "count": 1, "mode": "User", "osSKU": "Ubuntu",
        "nodeLabels": {"gpu.tf/pool": "train"},
        "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"], "tags": {"team": "ml"},
        "gpuProfile": {"driver": "Install"}, "availabilityZones": ["1", "2"],
        "orchestratorVersion": "1.31.7"}
    assert "scaleSetPriority" not in stored and "spotMaxPrice" not in stored
    listed = call("GET", cluster_url(arm, "/agentPools"), headers=auth).json["value"]
    assert sorted(p["name"] for p in listed) == ["gpu1", "nodepool1"]


def test_aks_location_polling_answers_202_then_the_pool(arm, auth):
    arm.configure({"polls": 1})
    put = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    first = call("GET", put.headers["Location"], headers=auth)
    assert first.status == 202 and first.raw == b""
    assert "/operationresults/" in first.headers["Location"]
    final = call("GET", put.headers["Location"], headers=auth)
    assert final.status == 200
    assert final.json["properties"]["provisioningState"] == "Succeeded"


def test_aks_update_answers_200_updating_and_replaces_the_properties(arm, auth):
    create_pool(arm, auth)
    body = gpu_pool(count=3, nodeLabels={"gpu.tf/pool": "serve"}, tags={"team": "infra"})
    put = call("PUT", cluster_url(arm, "/agentPools/gpu1"), body, headers=auth)
    assert put.status == 200
    assert put.json["properties"]["provisioningState"] == "Updating"
    poll(put.headers["Azure-AsyncOperation"], auth, aks_op_done)
    stored = state(arm)["clusters"][0]["agentPools"]["gpu1"]["properties"]
    assert (stored["count"], stored["nodeLabels"], stored["tags"]) == (
        3, {"gpu.tf/pool": "serve"}, {"team": "infra"})
    assert stored["provisioningState"] == "Succeeded"


def test_aks_allows_one_operation_per_cluster(arm, auth):
    first = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    assert first.status == 201
    second = call("PUT", cluster_url(arm, "/agentPools/gpu2"), gpu_pool(), headers=auth)
    assert second.status == 409
    assert second.json["error"]["code"] == "OperationNotAllowed"
    assert "(gpu1 - Creating) is in progress" in second.json["error"]["message"]
    busy_delete = call("DELETE", cluster_url(arm, "/agentPools/nodepool1"), headers=auth)
    assert busy_delete.status == 409
    assert "gpu2" not in state(arm)["clusters"][0]["agentPools"]
    poll(first.headers["Azure-AsyncOperation"], auth, aks_op_done)
    again = call("PUT", cluster_url(arm, "/agentPools/gpu2"), gpu_pool(), headers=auth)
    assert again.status == 201


def test_aks_operations_end_by_themselves_and_refusals_are_logged_as_busy(arm, auth):
    call("POST", arm.url + "/_fake/faults", {"polls": 100, "op_seconds": 0.3})
    first = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    assert first.status == 201
    refused = call("PUT", cluster_url(arm, "/agentPools/gpu2"), gpu_pool(), headers=auth)
    assert refused.status == 409
    time.sleep(0.4)  # nobody polled the first operation: it ends by itself
    assert call("PUT", cluster_url(arm, "/agentPools/gpu2"), gpu_pool(),
                headers=auth).status == 201
    log = state(arm)["requests"]
    assert [r.get("busy", False) for r in log if r["method"] == "PUT"] == [False, True, False]


def test_aks_hold_is_someone_elses_operation_for_a_while(arm, auth):
    call("POST", arm.url + "/_fake/faults", {"hold": {"cluster": CLUSTER, "seconds": 0.5}})
    refused = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    assert refused.status == 409
    assert "(nodepool1 - Updating) is in progress" in refused.json["error"]["message"]
    time.sleep(0.6)
    assert call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(),
                headers=auth).status == 201


def test_random_faults_are_a_seeded_share_of_the_matching_requests(arm, auth):
    def statuses(seed):
        call("POST", arm.url + "/_fake/reset")
        arm.seed_cluster(SUB, RG, CLUSTER, REGION, tenant_id=TENANT)
        call("POST", arm.url + "/_fake/faults", {"random": [
            {"rate": 0.3, "status": 429, "seed": seed, "path": "/agentPools$",
             "retry_after": 1}]})
        return [call("GET", cluster_url(arm, "/agentPools"), headers=auth).status
                for _ in range(60)]

    first = statuses(7)
    assert first == statuses(7), "the same seed, the same pattern"
    assert first != statuses(8)
    share = first.count(429) / len(first)
    assert 0.1 < share < 0.5, first
    assert set(first) == {200, 429}
    # Only matching requests draw: the cluster itself is never throttled.
    assert all(call("GET", cluster_url(arm), headers=auth).status == 200 for _ in range(20))
    listed = state(arm)["random_faults"]
    assert listed[0]["injected"] == first.count(429) and "rng" not in listed[0]


def test_aks_delete_flow(arm, auth):
    create_pool(arm, auth)
    delete = call("DELETE", cluster_url(arm, "/agentPools/gpu1"), headers=auth)
    assert delete.status == 202 and delete.raw == b""
    assert "/operations/" in delete.headers["Azure-AsyncOperation"]
    during = call("GET", cluster_url(arm, "/agentPools/gpu1"), headers=auth)
    assert during.json["properties"]["provisioningState"] == "Deleting"
    replies = poll(delete.headers["Location"], auth, lambda r: r.status != 202)
    assert [r.status for r in replies] == [202, 202, 204]
    gone = call("GET", cluster_url(arm, "/agentPools/gpu1"), headers=auth)
    assert gone.status == 404
    assert gone.json["error"]["code"] == "ResourceNotFound"
    assert "gpu1" not in state(arm)["clusters"][0]["agentPools"]
    again = call("DELETE", cluster_url(arm, "/agentPools/gpu1"), headers=auth)
    assert again.status == 204


def test_aks_404_shapes(arm, auth):
    cases = [
        (cluster_url(arm, cluster="nope"), "ResourceNotFound"),
        (cluster_url(arm, "/agentPools/gpu1", cluster="nope"), "ParentResourceNotFound"),
        (cluster_url(arm, rg="nope"), "ResourceGroupNotFound"),
        (cluster_url(arm, sub="00000000-0000-0000-0000-000000000000"), "SubscriptionNotFound"),
    ]
    for url, code in cases:
        reply = call("GET", url, headers=auth)
        assert reply.status == 404, url
        assert reply.json["error"]["code"] == code
        assert reply.json["error"]["message"]


@pytest.mark.parametrize("name", ["GPU1", "1gpu", "gpu-1", "gpu.1", "gpupool123456"])
def test_aks_pool_name_rules(arm, auth, name):
    reply = call("PUT", cluster_url(arm, f"/agentPools/{name}"), gpu_pool(), headers=auth)
    assert reply.status == 400, reply.raw
    assert reply.json["error"]["code"] == "InvalidParameter"
    assert reply.json["error"]["target"] == "agentPoolName"
    assert list(state(arm)["clusters"][0]["agentPools"]) == ["nodepool1"]


def test_aks_windows_pool_names_are_at_most_six_characters(arm, auth):
    body = gpu_pool(osType="Windows", osSKU="Windows2022")
    assert call("PUT", cluster_url(arm, "/agentPools/win1234"), body,
                headers=auth).status == 400
    assert call("PUT", cluster_url(arm, "/agentPools/win123"), body,
                headers=auth).status == 201


@pytest.mark.parametrize("overrides, code, target", [
    ({"vmSize": None}, "InvalidParameter", "vmSize"),
    ({"vmSize": "Standard_ND999_v9"}, "BadRequest", "vmSize"),
    ({"scaleSetEvictionPolicy": "Delete"}, "InvalidParameter", "scaleSetEvictionPolicy"),
    ({"scaleSetPriority": "Spot", "spotMaxPrice": 0}, "InvalidParameter", "spotMaxPrice"),
    ({"scaleSetPriority": "Spot", "scaleSetEvictionPolicy": "Stop"}, "InvalidParameter",
     "scaleSetEvictionPolicy"),
    ({"scaleSetPriority": "Spot", "mode": "System"}, "InvalidParameter", "scaleSetPriority"),
    ({"scaleSetPriority": "Cheap"}, "InvalidParameter", "scaleSetPriority"),
    ({"enableAutoScaling": True, "minCount": 3, "maxCount": 2}, "InvalidParameter",
     "minCount"),
    ({"enableAutoScaling": True, "minCount": 1, "maxCount": 2, "count": 5},
     "InvalidParameter", "count"),
    ({"enableAutoScaling": True, "count": 1}, "InvalidParameter", "minCount"),
    ({"count": 1001}, "InvalidParameter", "count"),
    ({"mode": "Batch"}, "InvalidParameter", "mode"),
    ({"nodeTaints": ["nvidia.com/gpu=present:NoScheduleX"]}, "InvalidParameter",
     "nodeTaints"),
    ({"gpuProfile": {"driver": "Skip"}}, "InvalidParameter", "gpuProfile.driver"),
    ({"osSKU": "Debian"}, "InvalidParameter", "osSKU"),
    ({"availabilityZones": ["4"]}, "InvalidParameter", "availabilityZones"),
    ({"vnetSubnetID": "subnet-1"}, "InvalidParameter", "vnetSubnetID"),
    ({"nodeLabels": {"gpu": 1}}, "InvalidParameter", "nodeLabels"),
])
def test_aks_body_validation(arm, auth, overrides, code, target):
    reply = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(**overrides),
                 headers=auth)
    assert reply.status == 400, reply.raw
    assert reply.json["error"]["code"] == code
    assert reply.json["error"]["target"] == target
    assert "gpu1" not in state(arm)["clusters"][0]["agentPools"]


def test_aks_unknown_vm_size_error_is_arms(arm, auth):
    reply = call("PUT", cluster_url(arm, "/agentPools/gpu1"),
                 gpu_pool(vmSize="Standard_ND999_v9"), headers=auth)
    assert reply.json["error"]["message"].startswith(
        "The VM size of AgentPoolProfile:gpu1 is not allowed in your subscription in "
        f"location '{REGION}'.")


def test_aks_spot_pool_reads_back_with_the_label_and_taint_aks_adds(arm, auth):
    body = gpu_pool(scaleSetPriority="Spot", enableAutoScaling=True, minCount=0, maxCount=4,
                    count=0)
    create_pool(arm, auth, "spot1", body)
    props = call("GET", cluster_url(arm, "/agentPools/spot1"), headers=auth).json["properties"]
    assert props["scaleSetPriority"] == "Spot"
    assert props["scaleSetEvictionPolicy"] == "Delete"
    assert props["spotMaxPrice"] == -1
    assert props["nodeLabels"] == {"gpu.tf/pool": "train", SPOT_LABEL: "spot"}
    assert props["nodeTaints"] == ["nvidia.com/gpu=present:NoSchedule", SPOT_TAINT]
    assert (props["enableAutoScaling"], props["minCount"], props["maxCount"]) == (True, 0, 4)
    deallocate = gpu_pool(scaleSetPriority="Spot", scaleSetEvictionPolicy="Deallocate",
                          spotMaxPrice=1.25)
    create_pool(arm, auth, "spot2", deallocate)
    props = state(arm)["clusters"][0]["agentPools"]["spot2"]["properties"]
    assert (props["scaleSetEvictionPolicy"], props["spotMaxPrice"]) == ("Deallocate", 1.25)


@pytest.mark.parametrize("change", [{"vmSize": "Standard_NC48ads_A100_v4"},
                                    {"scaleSetPriority": "Spot"},
                                    {"availabilityZones": ["3"]}])
def test_aks_immutable_properties(arm, auth, change):
    create_pool(arm, auth)
    reply = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(**change), headers=auth)
    assert reply.status == 400
    assert reply.json["error"]["code"] == "PropertyChangeNotAllowed"
    props = state(arm)["clusters"][0]["agentPools"]["gpu1"]["properties"]
    assert props["vmSize"] == "Standard_NC24ads_A100_v4"
    assert props["provisioningState"] == "Succeeded"


def test_aks_put_needs_json_and_honours_if_match(arm, auth):
    text = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(),
                headers={**auth, "Content-Type": "text/plain"})
    assert text.status == 415
    assert text.json["error"]["code"] == "UnsupportedMediaType"
    create_pool(arm, auth)
    stale = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(count=2),
                 headers={**auth, "If-Match": "not-the-etag"})
    assert stale.status == 412
    etag = state(arm)["clusters"][0]["agentPools"]["gpu1"]["properties"]["eTag"]
    fresh = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(count=2),
                 headers={**auth, "If-Match": etag})
    assert fresh.status == 200


def test_aks_injected_throttling_then_success(arm, auth):
    reply = call("POST", arm.url + "/_fake/faults",
                 {"fault": {"method": "GET", "path": "/agentPools$", "status": 429,
                            "count": 2, "retry_after": 3}})
    assert reply.status == 200
    statuses = []
    for _ in range(3):
        r = call("GET", cluster_url(arm, "/agentPools"), headers=auth)
        statuses.append(r.status)
        if r.status == 429:
            assert r.headers["Retry-After"] == "3"
            assert r.json["error"]["code"] == "TooManyRequests"
    assert statuses == [429, 429, 200]
    log = [(r["method"], r["status"], r.get("injected", False)) for r in state(arm)["requests"]]
    assert log == [("GET", 429, True), ("GET", 429, True), ("GET", 200, False)]
    server_error = arm.inject("PUT", "/agentPools/gpu1$", 500, count=1)
    assert server_error.count == 1
    failed = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    assert failed.status == 500 and failed.json["error"]["code"] == "InternalServerError"
    assert "gpu1" not in state(arm)["clusters"][0]["agentPools"]


def test_aks_failed_operation(arm, auth):
    arm.configure({"fail_next_operation": {"code": "OverconstrainedAllocationRequest",
                                           "message": "Allocation failed."}, "polls": 0})
    put = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    status = call("GET", put.headers["Azure-AsyncOperation"], headers=auth).json
    assert status["status"] == "Failed"
    assert status["error"] == {"code": "OverconstrainedAllocationRequest",
                               "message": "Allocation failed."}
    result = call("GET", put.headers["Location"], headers=auth)
    assert result.status == 400
    assert result.json["error"]["code"] == "OverconstrainedAllocationRequest"
    props = state(arm)["clusters"][0]["agentPools"]["gpu1"]["properties"]
    assert props["provisioningState"] == "Failed"
    assert state(arm)["clusters"][0]["running_operation"] is None


def test_aks_flat_error_shape_option(arm, auth):
    arm.configure({"rp_error_shape": "flat"})
    reply = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(vmSize=None),
                 headers=auth)
    assert reply.status == 400
    assert reply.json["code"] == "InvalidParameter" and "error" not in reply.json
    assert call("GET", cluster_url(arm, api=None), headers=auth
                ).json["error"]["code"] == "MissingApiVersionParameter"


def test_control_reset_and_complete(arm, auth):
    call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=auth)
    assert call("POST", arm.url + "/_fake/complete").json == {"completed": 1}
    assert state(arm)["clusters"][0]["agentPools"]["gpu1"]["properties"][
        "provisioningState"] == "Succeeded"
    assert call("POST", arm.url + "/_fake/reset").status == 200
    after = state(arm)
    assert after["clusters"] == [] and after["requests"] == [] and after["operations"] == []
    assert call("GET", cluster_url(arm), headers=auth).json["error"]["code"] == \
        "SubscriptionNotFound"


def test_arm_fake_serves_tls_when_given_a_context(registry, aad, tmp_path):
    context, cert = tls_context(tmp_path)
    with ArmAks(registry).start(ssl_context=context) as server:
        server.seed_cluster(SUB, RG, CLUSTER, REGION)
        token = azure_token(aad).json["access_token"]
        assert server.url.startswith("https://127.0.0.1:")
        reply = call("GET", cluster_url(server), headers={"Authorization": f"Bearer {token}"},
                     cafile=cert)
        assert reply.status == 200 and reply.json["name"] == CLUSTER


# --- Google OAuth token endpoint and service-account keys ------------------------------

@pytest.fixture
def gke(registry):
    with Gke(registry, time_scale=1) as server:  # these tests wait out real seconds
        reply = call("POST", server.url + "/_fake/clusters",
                     {"project": PROJECT, "location": LOCATION, "name": GKE_CLUSTER})
        assert reply.status == 201, reply.raw
        yield server


@pytest.fixture
def gauth(gke, account):
    return {"Authorization": "Bearer " + account.self_signed_jwt()}


def test_service_account_key_file(oauth, account, tmp_path):
    path = oauth.write_key_file(account, tmp_path / "key.json")
    key = json.loads(path.read_text())
    assert key["type"] == "service_account"
    assert key["project_id"] == PROJECT
    assert key["client_email"] == f"gpu-tf@{PROJECT}.iam.gserviceaccount.com"
    assert key["token_uri"] == f"{oauth.url}/token"
    assert key["private_key"].startswith("-----BEGIN PRIVATE KEY-----\n")
    assert len(key["private_key_id"]) == 40 and key["client_id"].isdigit()
    assert path.stat().st_mode & 0o777 == 0o600


def test_google_token_endpoint_issues_a_token_for_a_valid_assertion(oauth, account, gke):
    reply = call("POST", oauth.token_uri,
                 form={"grant_type": JWT_BEARER, "assertion": account.assertion(oauth.token_uri)})
    assert reply.status == 200, reply.raw
    assert reply.json["token_type"] == "Bearer" and reply.json["expires_in"] == 3599
    token = reply.json["access_token"]
    got = call("GET", f"{gke.url}/v1/projects/{PROJECT}/locations/{LOCATION}/clusters/"
                      f"{GKE_CLUSTER}", headers={"Authorization": f"Bearer {token}"})
    assert got.status == 200 and got.json["name"] == GKE_CLUSTER
    assert state(gke)["requests"][0]["auth"] == "opaque"
    assert state(oauth)["requests"][0]["form_fields"] == ["assertion", "grant_type"]


def test_google_token_endpoint_refusals(oauth, account, registry):
    stranger = GoogleOAuth(TokenRegistry()).create_service_account(PROJECT, "stranger")
    forged = stranger.sign_jwt({**json.loads(base64.urlsafe_b64decode(
        account.assertion(oauth.token_uri).split(".")[1] + "==")), "iss": account.email})
    cases = {
        "bad signature": (forged, "invalid_grant", "Invalid JWT Signature."),
        "unknown account": (stranger.assertion(oauth.token_uri), "invalid_grant",
                            "Invalid grant: account not found"),
        "two hours": (account.assertion(oauth.token_uri, lifetime=7200), "invalid_grant",
                      "Invalid JWT: Token must be a short-lived token"),
        "wrong audience": (account.assertion("https://example.com/token"), "invalid_grant",
                           "Invalid JWT: Failed audience check"),
        "no scope": (account.assertion(oauth.token_uri, scope=""), "invalid_scope",
                     "Empty or missing scope not allowed."),
    }
    for case, (assertion, error, text) in cases.items():
        reply = call("POST", oauth.token_uri, form={"grant_type": JWT_BEARER,
                                                    "assertion": assertion})
        assert reply.status == 400, case
        assert reply.json["error"] == error, case
        assert reply.json["error_description"].startswith(text), case
    grant = call("POST", oauth.token_uri, form={"grant_type": "client_credentials"})
    assert grant.json["error"] == "unsupported_grant_type"


# --- GKE ---------------------------------------------------------------------------------

def gke_url(gke, suffix="", cluster=GKE_CLUSTER) -> str:
    return f"{gke.url}/v1/projects/{PROJECT}/locations/{LOCATION}/clusters/{cluster}{suffix}"


def gpu_node_pool(name="gpu-a100", **overrides) -> dict:
    pool = {"name": name, "initialNodeCount": 1,
            "config": {"machineType": "a2-highgpu-1g", "spot": False,
                       "labels": {"gpu.tf/pool": "train"},
                       "resourceLabels": {"team": "ml"},
                       "serviceAccount": f"nodes@{PROJECT}.iam.gserviceaccount.com",
                       "imageType": "COS_CONTAINERD",
                       "accelerators": [{"acceleratorCount": 1,
                                         "acceleratorType": "nvidia-tesla-a100",
                                         "gpuDriverInstallationConfig": {
                                             "gpuDriverVersion": "LATEST"}}]},
            "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 3,
                            "locationPolicy": "ANY"},
            "locations": [f"{LOCATION}-a"]}
    pool.update(overrides)
    return {"nodePool": pool}


def gke_done(reply: Reply) -> bool:
    return reply.json["status"] == "DONE"


def gke_create(gke, gauth, body=None) -> dict:
    reply = call("POST", gke_url(gke, "/nodePools"), body or gpu_node_pool(), headers=gauth)
    assert reply.status == 200, reply.raw
    poll(reply.json["selfLink"], gauth, gke_done)
    return reply.json


def gke_pool(gke, name="gpu-a100") -> dict:
    return state(gke)["clusters"][0]["nodePools"][name]


def test_gke_accepts_self_signed_jwts_of_known_keys_only(gke, account, registry):
    url = gke_url(gke)
    missing = call("GET", url)
    assert missing.status == 401
    assert missing.json["error"]["status"] == "UNAUTHENTICATED"
    assert missing.json["error"]["details"][0]["reason"] == "CREDENTIALS_MISSING"
    assert call("GET", url, headers={"Authorization": "Bearer " + account.self_signed_jwt()}
                ).status == 200
    stranger = GoogleOAuth(TokenRegistry()).create_service_account(PROJECT)
    forged = call("GET", url, headers={"Authorization": "Bearer " + stranger.self_signed_jwt()})
    assert forged.status == 401 and forged.json["error"]["code"] == 401
    tampered = account.self_signed_jwt()[:-4] + "AAAA"
    assert call("GET", url, headers={"Authorization": f"Bearer {tampered}"}).status == 401
    narrow = account.self_signed_jwt(scope="https://www.googleapis.com/auth/devstorage.read_only")
    denied = call("GET", url, headers={"Authorization": f"Bearer {narrow}"})
    assert denied.status == 403 and denied.json["error"]["status"] == "PERMISSION_DENIED"
    azure = registry.issue("azure", "https://management.azure.com", CLIENT, TENANT).token
    assert call("GET", url, headers={"Authorization": f"Bearer {azure}"}).status == 401
    assert [r["auth"] for r in state(gke)["requests"][1:]] == [
        "self-signed-jwt", None, None, None, None]


def test_gke_create_is_an_operation_polled_to_done(gke, gauth):
    reply = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(), headers=gauth)
    assert reply.status == 200
    op = reply.json
    assert op["operationType"] == "CREATE_NODE_POOL" and op["status"] == "RUNNING"
    assert op["name"].startswith("operation-")
    assert op["selfLink"] == (f"{gke.url}/v1/projects/{PROJECT}/locations/{LOCATION}/"
                              f"operations/{op['name']}")
    assert op["targetLink"].endswith(f"/clusters/{GKE_CLUSTER}/nodePools/gpu-a100")
    assert call("GET", gke_url(gke, "/nodePools/gpu-a100"), headers=gauth
                ).json["status"] == "PROVISIONING"
    replies = poll(op["selfLink"], gauth, gke_done)
    assert [r.json["status"] for r in replies] == ["RUNNING", "RUNNING", "DONE"]
    assert "endTime" in replies[-1].json and "error" not in replies[-1].json
    pool = call("GET", gke_url(gke, "/nodePools/gpu-a100"), headers=gauth).json
    assert pool["status"] == "RUNNING"
    assert pool == gke_pool(gke)
    config = pool["config"]
    assert config["accelerators"] == [{
        "acceleratorCount": "1", "acceleratorType": "nvidia-tesla-a100",
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]
    assert config["labels"] == {"gpu.tf/pool": "train"}
    assert config["resourceLabels"] == {"team": "ml"}
    assert config["taints"] == [{"key": "nvidia.com/gpu", "value": "present",
                                 "effect": "NO_SCHEDULE"}]
    assert pool["autoscaling"] == {"enabled": True, "minNodeCount": 0, "maxNodeCount": 3,
                                   "locationPolicy": "ANY"}
    assert pool["locations"] == [f"{LOCATION}-a"]
    names = [p["name"] for p in call("GET", gke_url(gke, "/nodePools"), headers=gauth
                                     ).json["nodePools"]]
    assert names == ["default-pool", "gpu-a100"]


def test_gke_gpu_taint_only_when_the_cluster_has_a_non_gpu_pool(gke, gauth):
    call("POST", gke.url + "/_fake/clusters", {"project": PROJECT, "location": LOCATION,
                                               "name": "gpu-only", "default_pool": False})
    empty = call("GET", gke_url(gke, "/nodePools", cluster="gpu-only"), headers=gauth)
    assert empty.status == 200 and empty.json == {}
    reply = call("POST", gke_url(gke, "/nodePools", cluster="gpu-only"), gpu_node_pool(),
                 headers=gauth)
    assert reply.status == 200
    stored = state(gke)["clusters"][1]["nodePools"]["gpu-a100"]
    assert "taints" not in stored["config"]


def test_gke_refuses_a_second_mutation_while_an_operation_runs(gke, gauth):
    first = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(), headers=gauth).json
    second = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool("gpu-b"), headers=gauth)
    assert second.status == 400
    error = second.json["error"]
    assert error["status"] == "FAILED_PRECONDITION" and error["code"] == 400
    assert error["message"] == f"Cluster is running incompatible operation {first['name']}."
    assert error["details"][0]["reason"] == "CLUSTER_ALREADY_HAS_OPERATION"
    resize = call("POST", gke_url(gke, "/nodePools/default-pool:setSize"), {"nodeCount": 2},
                  headers=gauth)
    assert resize.status == 400
    assert "gpu-b" not in state(gke)["clusters"][0]["nodePools"]
    poll(first["selfLink"], gauth, gke_done)
    assert call("POST", gke_url(gke, "/nodePools"), gpu_node_pool("gpu-b"),
                headers=gauth).status == 200


def test_gke_set_size_set_autoscaling_and_update(gke, gauth):
    gke_create(gke, gauth)
    size = call("POST", gke_url(gke, "/nodePools/gpu-a100:setSize"), {"nodeCount": 2},
                headers=gauth).json
    assert size["operationType"] == "SET_NODE_POOL_SIZE"
    assert gke_pool(gke)["status"] == "RECONCILING"
    poll(size["selfLink"], gauth, gke_done)
    assert state(gke)["clusters"][0]["node_counts"]["gpu-a100"] == 2
    assert gke_pool(gke)["initialNodeCount"] == 1
    scaling = call("POST", gke_url(gke, "/nodePools/gpu-a100:setAutoscaling"),
                   {"autoscaling": {"enabled": True, "totalMinNodeCount": 1,
                                    "totalMaxNodeCount": 6}}, headers=gauth).json
    assert scaling["operationType"] == "UPDATE_CLUSTER"
    poll(scaling["selfLink"], gauth, gke_done)
    assert gke_pool(gke)["autoscaling"] == {"enabled": True, "totalMinNodeCount": 1,
                                            "totalMaxNodeCount": 6}
    update = call("PUT", gke_url(gke, "/nodePools/gpu-a100"), {
        "nodeVersion": "-", "imageType": "COS_CONTAINERD",
        "labels": {"labels": {"gpu.tf/pool": "serve"}},
        "taints": {"taints": [{"key": "dedicated", "value": "ml", "effect": "NO_EXECUTE"}]},
        "resourceLabels": {"labels": {"team": "infra"}}}, headers=gauth).json
    assert update["operationType"] == "UPGRADE_NODES"
    poll(update["selfLink"], gauth, gke_done)
    pool = gke_pool(gke)
    assert pool["config"]["labels"] == {"gpu.tf/pool": "serve"}
    assert pool["config"]["taints"] == [{"key": "dedicated", "value": "ml",
                                         "effect": "NO_EXECUTE"}]
    assert pool["config"]["resourceLabels"] == {"team": "infra"}
    assert pool["status"] == "RUNNING"
    clear = call("PUT", gke_url(gke, "/nodePools/gpu-a100"),
                 {"labels": {"labels": {}}}, headers=gauth).json
    poll(clear["selfLink"], gauth, gke_done)
    assert "labels" not in gke_pool(gke)["config"]


def test_gke_delete_flow(gke, gauth):
    gke_create(gke, gauth)
    op = call("DELETE", gke_url(gke, "/nodePools/gpu-a100"), headers=gauth).json
    assert op["operationType"] == "DELETE_NODE_POOL"
    assert gke_pool(gke)["status"] == "STOPPING"
    poll(op["selfLink"], gauth, gke_done)
    gone = call("GET", gke_url(gke, "/nodePools/gpu-a100"), headers=gauth)
    assert gone.status == 404
    assert gone.json["error"]["status"] == "NOT_FOUND"
    assert gone.json["error"]["message"] == (
        f"Not found: projects/{PROJECT}/locations/{LOCATION}/clusters/{GKE_CLUSTER}/"
        "nodePools/gpu-a100.")
    assert "gpu-a100" not in state(gke)["clusters"][0]["nodePools"]
    assert call("DELETE", gke_url(gke, "/nodePools/gpu-a100"), headers=gauth).status == 404


def test_gke_404_for_missing_cluster_and_operation(gke, gauth):
    cluster = call("GET", gke_url(gke, cluster="nope"), headers=gauth)
    assert cluster.status == 404 and cluster.json["error"]["status"] == "NOT_FOUND"
    op = call("GET", f"{gke.url}/v1/projects/{PROJECT}/locations/{LOCATION}/operations/"
                     "operation-1-nope", headers=gauth)
    assert op.status == 404 and op.json["error"]["code"] == 404


@pytest.mark.parametrize("name", ["GPU", "1gpu", "gpu-", "gpu_a100", "a" * 41, ""])
def test_gke_pool_name_rules(gke, gauth, name):
    reply = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(name), headers=gauth)
    assert reply.status == 400
    assert reply.json["error"]["status"] == "INVALID_ARGUMENT"
    assert reply.json["error"]["message"].startswith(
        'Invalid value for field "node_pool.name"')
    assert "(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)" in reply.json["error"]["message"]
    assert list(state(gke)["clusters"][0]["nodePools"]) == ["default-pool"]


def test_gke_forty_character_name_and_duplicates(gke, gauth):
    name = "a" + "-b" * 19 + "c"
    assert len(name) == 40
    gke_create(gke, gauth, gpu_node_pool(name))
    again = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(name), headers=gauth)
    assert again.status == 409 and again.json["error"]["status"] == "ALREADY_EXISTS"


@pytest.mark.parametrize("mutate, text", [
    (lambda p: p["config"]["accelerators"][0]["gpuDriverInstallationConfig"].update(
        gpuDriverVersion="NEWEST"),
     "Invalid value at 'node_pool.config.accelerators[0].gpu_driver_installation_config."
     "gpu_driver_version'"),
    (lambda p: p["config"].update(taints=[{"key": "a", "value": "b", "effect": "NoSchedule"}]),
     "Invalid value at 'node_pool.config.taints[0].effect'"),
    (lambda p: p["config"].update(gpuCount=1),
     "Invalid JSON payload received. Unknown name \"gpuCount\" at 'node_pool.config'"),
    (lambda p: p.update(minNodes=1), "Unknown name \"minNodes\" at 'node_pool'"),
    (lambda p: p["autoscaling"].update(minNodeCount=4), "Autoscaling limits are invalid"),
    (lambda p: p["autoscaling"].update(totalMaxNodeCount=4), "cannot set both"),
    (lambda p: p["config"]["accelerators"][0].update(acceleratorCount=0),
     "accelerator_count must be positive"),
    (lambda p: p.update(locations=["europe-west4-a"]), "must be a subset"),
    (lambda p: p["config"].update(spot="yes"), "Invalid value at 'node_pool.config.spot'"),
])
def test_gke_body_validation(gke, gauth, mutate, text):
    body = gpu_node_pool()
    mutate(body["nodePool"])
    reply = call("POST", gke_url(gke, "/nodePools"), body, headers=gauth)
    assert reply.status == 400, reply.raw
    assert reply.json["error"]["status"] == "INVALID_ARGUMENT"
    assert text in reply.json["error"]["message"]
    assert reply.json["error"]["details"][-1]["@type"] == \
        "type.googleapis.com/google.rpc.RequestInfo"
    assert "gpu-a100" not in state(gke)["clusters"][0]["nodePools"]


def test_gke_accepts_proto_field_names_and_integer_enums(gke, gauth):
    body = {"node_pool": {"name": "snake", "initial_node_count": "2", "config": {
        "machine_type": "g2-standard-8", "accelerators": [{
            "accelerator_count": "1", "accelerator_type": "nvidia-l4",
            "gpu_driver_installation_config": {"gpu_driver_version": 1}}]}}}
    gke_create(gke, gauth, body)
    pool = gke_pool(gke, "snake")
    assert pool["initialNodeCount"] == 2
    assert pool["config"]["machineType"] == "g2-standard-8"
    assert pool["config"]["accelerators"][0]["gpuDriverInstallationConfig"] == {
        "gpuDriverVersion": "INSTALLATION_DISABLED"}


def test_gke_spot_pool_reads_back_as_written(gke, gauth):
    body = gpu_node_pool("spot-a100")
    body["nodePool"]["config"]["spot"] = True
    gke_create(gke, gauth, body)
    config = call("GET", gke_url(gke, "/nodePools/spot-a100"), headers=gauth).json["config"]
    assert config["spot"] is True
    assert config["labels"] == {"gpu.tf/pool": "train"}, "GKE's spot label is a node label"
    assert [t["key"] for t in config["taints"]] == ["nvidia.com/gpu"]


def test_gke_injected_throttling_then_success(gke, gauth):
    call("POST", gke.url + "/_fake/faults", {"method": "POST", "path": "/nodePools$",
                                             "status": 429, "count": 1})
    throttled = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(), headers=gauth)
    assert throttled.status == 429
    assert throttled.json["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert throttled.json["error"]["code"] == 429
    assert "gpu-a100" not in state(gke)["clusters"][0]["nodePools"]
    assert call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(), headers=gauth
                ).status == 200
    assert [r["status"] for r in state(gke)["requests"]] == [429, 200]


def test_gke_operations_end_by_themselves_and_hold_refuses_for_a_while(gke, gauth):
    call("POST", gke.url + "/_fake/faults", {"polls": 100, "op_seconds": 0.3})
    first = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool("first"), headers=gauth)
    assert first.status == 200
    refused = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool("second"),
                   headers=gauth)
    assert refused.status == 400 and refused.json["error"]["status"] == "FAILED_PRECONDITION"
    time.sleep(0.4)  # nobody polled the first operation: it ends by itself
    assert call("GET", first.json["selfLink"], headers=gauth).json["status"] == "DONE"
    held = gke.hold(GKE_CLUSTER, 0.5)
    again = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool("second"), headers=gauth)
    assert again.status == 400
    assert again.json["error"]["message"] == f"Cluster is running incompatible operation {held}."
    time.sleep(0.6)
    assert call("POST", gke_url(gke, "/nodePools"), gpu_node_pool("second"),
                headers=gauth).status == 200
    log = [r for r in state(gke)["requests"] if r["method"] == "POST"]
    assert [r.get("busy", False) for r in log] == [False, True, True, False]


def test_gke_failed_operation(gke, gauth):
    call("POST", gke.url + "/_fake/faults", {"polls": 0, "fail_next_operation": {
        "status": "RESOURCE_EXHAUSTED", "message": "Insufficient quota for NVIDIA_A100_GPUS."}})
    op = call("POST", gke_url(gke, "/nodePools"), gpu_node_pool(), headers=gauth).json
    done = call("GET", op["selfLink"], headers=gauth).json
    assert done["status"] == "DONE"
    assert done["error"] == {"code": 8, "message": "Insufficient quota for NVIDIA_A100_GPUS."}
    pool = gke_pool(gke)
    assert pool["status"] == "ERROR"
    assert pool["statusMessage"] == "Insufficient quota for NVIDIA_A100_GPUS."
    assert state(gke)["clusters"][0]["running_operation"] is None
