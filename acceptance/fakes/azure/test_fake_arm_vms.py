"""The fake ARM for single VMs (`fakes/azure/vms.py`): Spot VMs with the Deallocate and
Delete eviction policies, their managed OS disks, the activity log and marketplace image
versions, exercised with urllib only over HTTPS with the test CA and bearer tokens from
the `AzureAD` token fake. Each test starts its own servers on 127.0.0.1 and checks what a
client sees and what the fake stores (`GET /_fake/state`), never the fake's Python objects.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from urllib.parse import quote

import pytest

from fakes import tls_context
from fakes.azure.testing import CLIENT, SECRET, TENANT, ArmClient
from fakes.azure.tokens import AzureAD
from fakes.azure.vms import (COMPUTE_API_VERSION, DISK_API_VERSION, INSIGHTS_API_VERSION,
                           ArmVms)
from fakes.testing import Reply
from fakes.tokens import TokenRegistry

# Mostly waits (alone, 5.7 s wall, 1.9 s of CPU): `make acceptance` runs it with more
# workers than cores (README.md, "Scheduling").
pytestmark = pytest.mark.waits

SUB = "6b1f0a52-3c9d-4e7a-8f21-9d0c4b7e5a13"
RG, REGION = "rg-gpu", "eastus"
SIZE = "Standard_NC24ads_A100_v4"
SUBNET = (f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/"
          "virtualNetworks/vnet1/subnets/default")
IMAGE = {"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2204"}
VERSIONS = ["22.04.2024043001", "22.04.2025011501", "22.04.2025030701"]
CUSTOM_DATA = base64.b64encode(b"#cloud-config\nruncmd: [echo s3cr3t-token]\n").decode()
PASSWORD = "Never-echo-Me-42!"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTestsOnly gpu@test"


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return tls_context(tmp_path_factory.mktemp("arm-vms-tls"))


class Azure(ArmClient):
    def default_api(self, path: str) -> str:
        return (DISK_API_VERSION if "/disks/" in path else INSIGHTS_API_VERSION
                if "Microsoft.Insights" in path else COMPUTE_API_VERSION)


@pytest.fixture
def azure(tls):
    context, ca = tls
    registry = TokenRegistry()
    with AzureAD(registry, TENANT, CLIENT, SECRET).start(ssl_context=context) as aad, \
            ArmVms(registry).start(ssl_context=context) as arm:
        fake = Azure(aad, arm, ca)
        seeded = fake.control("/_fake/subscriptions", {
            "subscription": SUB, "resource_groups": [RG], "locations": [REGION, "westus2"],
            "tenant_id": TENANT})
        assert seeded.status == 201, seeded.raw
        images = fake.control("/_fake/images", {"images": [
            {"location": REGION, **IMAGE, "versions": VERSIONS}]})
        assert images.status == 201, images.raw
        yield fake


def vm_path(name: str = "gpu1", suffix: str = "") -> str:
    return (f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Compute/"
            f"virtualMachines/{name}{suffix}")


def vm_body(priority="Spot", eviction="Deallocate", delete_option="Delete", zone="1",
            **props) -> dict:
    properties = {
        "hardwareProfile": {"vmSize": SIZE},
        "storageProfile": {
            "imageReference": {**IMAGE, "version": "latest"},
            "osDisk": {"createOption": "FromImage", "diskSizeGB": 256,
                       "deleteOption": delete_option,
                       "managedDisk": {"storageAccountType": "Premium_LRS"}}},
        "osProfile": {
            "computerName": "gpu1", "adminUsername": "azureuser", "customData": CUSTOM_DATA,
            "adminPassword": PASSWORD,
            "linuxConfiguration": {"disablePasswordAuthentication": True, "ssh": {
                "publicKeys": [{"path": "/home/azureuser/.ssh/authorized_keys",
                                "keyData": SSH_KEY}]}}},
        "networkProfile": {
            "networkApiVersion": "2020-11-01",
            "networkInterfaceConfigurations": [{"name": "gpu1-nic", "properties": {
                "primary": True, "deleteOption": delete_option,
                "ipConfigurations": [{"name": "ipconfig1",
                                      "properties": {"subnet": {"id": SUBNET}}}]}}]},
        "priority": priority,
    }
    if priority == "Spot":
        properties["evictionPolicy"] = eviction
        properties["billingProfile"] = {"maxPrice": -1}
    properties.update(props)
    body = {"location": REGION, "tags": {"gpu-tf-instance": "gpu1"}, "properties": properties}
    if zone:
        body["zones"] = [zone]
    return body


def create(azure, name="gpu1", body=None) -> dict:
    put = azure("PUT", vm_path(name), body or vm_body(), headers={"If-None-Match": "*"})
    assert put.status == 201, put.raw
    assert azure.wait(put)["status"] == "Succeeded"
    return azure("GET", vm_path(name), query="$expand=instanceView").json


def power(vm: dict) -> str:
    return [s["code"] for s in vm["properties"]["instanceView"]["statuses"]
            if s["code"].startswith("PowerState/")][0]


def disk_of(azure, vm: dict) -> Reply:
    disk_id = vm["properties"]["storageProfile"]["osDisk"]["managedDisk"]["id"]
    name = disk_id.rsplit("/", 1)[1]
    return azure("GET", f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                        f"Microsoft.Compute/disks/{name}")


def activity(azure, resource_id: str, **extra) -> list[dict]:
    start = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    end = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=5)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    text = (f"eventTimestamp ge '{start}' and eventTimestamp le '{end}' and "
            f"resourceUri eq '{resource_id}'")
    reply = azure("GET", f"/subscriptions/{SUB}/providers/Microsoft.Insights/eventtypes/"
                         "management/values", query="$filter=" + quote(text))
    assert reply.status == 200, reply.raw
    return reply.json["value"]


def ops(events: list[dict], status="Succeeded") -> list[str]:
    return [e["operationName"]["value"] for e in reversed(events)
            if e["status"]["value"] == status]


# --- create, read, secrets ------------------------------------------------------------------

def test_create_a_spot_vm_polls_creating_to_succeeded_and_never_echoes_secrets(azure):
    put = azure("PUT", vm_path(), vm_body(), headers={"If-None-Match": "*"})
    assert put.status == 201, put.raw
    assert put.json["properties"]["provisioningState"] == "Creating"
    assert "/providers/Microsoft.Compute/locations/eastus/operations/" in \
        put.headers["Azure-AsyncOperation"]
    first = azure.get_url(put.headers["Azure-AsyncOperation"])
    assert first.json["status"] == "InProgress" and first.headers["Retry-After"] == "1"
    assert azure.wait(put)["status"] == "Succeeded"
    vm = azure("GET", vm_path(), query="$expand=instanceView").json
    props = vm["properties"]
    assert vm["id"] == vm_path() and vm["type"] == "Microsoft.Compute/virtualMachines"
    assert (vm["location"], vm["zones"], vm["tags"]) == (REGION, ["1"],
                                                       {"gpu-tf-instance": "gpu1"})
    assert len(props["vmId"]) == 36 and props["provisioningState"] == "Succeeded"
    assert (props["priority"], props["evictionPolicy"], props["billingProfile"]) == (
        "Spot", "Deallocate", {"maxPrice": -1})
    assert props["storageProfile"]["imageReference"]["exactVersion"] == VERSIONS[-1]
    osdisk = props["storageProfile"]["osDisk"]
    assert osdisk["name"].startswith("gpu1_OsDisk_1_") and osdisk["diskSizeGB"] == 256
    assert osdisk["managedDisk"]["storageAccountType"] == "Premium_LRS"
    assert osdisk["managedDisk"]["id"].lower().endswith("/disks/" + osdisk["name"].lower())
    assert [s["code"] for s in props["instanceView"]["statuses"]] == [
        "ProvisioningState/succeeded", "PowerState/running"]
    nic = props["networkProfile"]["networkInterfaces"][0]
    assert nic["id"].endswith("/Microsoft.Network/networkInterfaces/gpu1-nic")
    osp = props["osProfile"]
    assert "customData" not in osp and "adminPassword" not in osp
    assert osp["linuxConfiguration"]["ssh"]["publicKeys"][0]["keyData"] == SSH_KEY
    disk = disk_of(azure, vm)
    assert disk.status == 200
    dprops = disk.json["properties"]
    assert (dprops["diskState"], dprops["diskSizeGB"]) == ("Attached", 256)
    assert disk.json["managedBy"] == vm_path()
    assert len(dprops["uniqueId"]) == 36 and dprops["timeCreated"]
    view = azure("GET", vm_path(suffix="/instanceView"))
    assert view.status == 200 and view.json["statuses"][1]["code"] == "PowerState/running"
    everything = json.dumps([put.json, vm, azure("GET", vm_path()).json, azure.state(),
                             azure("GET", vm_path().rsplit("/", 1)[0]).json])
    assert CUSTOM_DATA not in everything and PASSWORD not in everything
    assert "s3cr3t" not in everything
    logged = [r for r in azure.state()["requests"] if r["method"] == "PUT"][0]["json"]
    assert logged["properties"]["osProfile"]["customData"] == "<redacted>"


def test_if_none_match_on_an_existing_vm_is_refused(azure):
    create(azure)
    again = azure("PUT", vm_path(), vm_body(), headers={"If-None-Match": "*"})
    assert again.status == 412 and again.code == "PreconditionFailed"
    stale = azure("PUT", vm_path(), vm_body(), headers={"If-Match": '"999"'})
    assert stale.status == 412


def test_missing_vm_and_disk_are_resource_not_found(azure):
    for path in (vm_path("nope"), vm_path("nope", "/instanceView"),
                 f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Compute/"
                 "disks/nope"):
        reply = azure("GET", path)
        assert reply.status == 404 and reply.code == "ResourceNotFound", path
    assert azure("DELETE", vm_path("nope")).status == 204


# --- eviction -------------------------------------------------------------------------------

def test_simulate_eviction_deallocates_and_keeps_the_disk(azure):
    vm = create(azure)
    disk = disk_of(azure, vm).json
    evicted = azure("POST", vm_path(suffix="/simulateEviction"))
    assert evicted.status == 204 and evicted.raw == b""
    after = azure("GET", vm_path(), query="$expand=instanceView").json
    assert power(after) == "PowerState/deallocated"
    assert after["properties"]["provisioningState"] == "Succeeded"
    kept = disk_of(azure, after).json
    assert kept["id"] == disk["id"] and kept["properties"]["uniqueId"] == \
        disk["properties"]["uniqueId"]
    assert kept["properties"]["diskState"] == "Reserved"
    events = activity(azure, vm_path())
    assert "Microsoft.Compute/virtualMachines/simulateEviction/action" in ops(events)
    simulated = [e for e in events if e["operationName"]["value"].endswith(
        "simulateEviction/action") and e["status"]["value"] == "Succeeded"][0]
    assert simulated["caller"] == CLIENT
    assert simulated["category"]["value"] == "Administrative"
    assert "evictSpotVM" not in json.dumps(events)


def test_azure_reclaim_is_logged_as_evict_spot_vm_and_nothing_restarts_it(azure):
    vm = create(azure)
    reclaimed = azure.control("/_fake/reclaim", {"id": vm["id"]})
    assert reclaimed.status == 200, reclaimed.raw
    after = azure("GET", vm_path(), query="$expand=instanceView").json
    assert power(after) == "PowerState/deallocated"
    events = activity(azure, vm_path())
    evictions = [e for e in events
                 if e["operationName"]["value"] == "Microsoft.Compute/virtualMachines/"
                                                   "evictSpotVM/action"]
    assert len(evictions) == 1
    assert evictions[0]["status"]["value"] == "Succeeded" and "caller" not in evictions[0]
    assert evictions[0]["resourceId"] == vm_path()
    azure.control("/_fake/complete")
    assert power(azure("GET", vm_path(), query="$expand=instanceView").json) == \
        "PowerState/deallocated"
    again = azure.control("/_fake/reclaim", {"id": vm["id"]})
    assert again.status == 400  # only a running VM is evicted


def test_capacity_short_for_two_starts_then_the_same_vm_comes_back(azure):
    vm = create(azure)
    disk = disk_of(azure, vm).json
    assert azure.control("/_fake/reclaim", {"id": vm["id"]}).status == 200
    short = azure.control("/_fake/capacity", {"location": REGION, "vm_size": SIZE,
                                              "short": 2})
    assert short.status == 200, short.raw
    for _ in range(2):
        start = azure("POST", vm_path(suffix="/start"))
        assert start.status == 202 and start.raw == b""
        assert "Location" in start.headers
        end = azure.wait(start)
        assert end["status"] == "Failed" and end["error"]["code"] == "SkuNotAvailable"
        assert f"location '{REGION}'" in end["error"]["message"]
        monitor = azure.get_url(start.headers["Location"])
        assert monitor.status == 409 and monitor.code == "SkuNotAvailable"
        failed = azure("GET", vm_path(), query="$expand=instanceView").json
        assert failed["properties"]["provisioningState"] == "Failed"
        statuses = [s["code"] for s in failed["properties"]["instanceView"]["statuses"]]
        assert statuses == ["ProvisioningState/failed/SkuNotAvailable",
                            "PowerState/deallocated"]
    start = azure("POST", vm_path(suffix="/start"))
    assert azure.wait(start)["status"] == "Succeeded"
    back = azure("GET", vm_path(), query="$expand=instanceView").json
    assert power(back) == "PowerState/running"
    assert back["properties"]["vmId"] == vm["properties"]["vmId"]
    assert back["properties"]["storageProfile"]["osDisk"]["managedDisk"]["id"] == \
        vm["properties"]["storageProfile"]["osDisk"]["managedDisk"]["id"]
    same = disk_of(azure, back).json
    assert same["properties"]["uniqueId"] == disk["properties"]["uniqueId"]
    assert same["properties"]["diskState"] == "Attached"
    events = activity(azure, vm_path())
    assert ops(events, "Failed") == ["Microsoft.Compute/virtualMachines/start/action"] * 2
    assert ops(events)[-1] == "Microsoft.Compute/virtualMachines/start/action"
    assert azure.state()["capacity"] == []


def test_a_person_deallocating_is_logged_as_deallocate_with_the_caller(azure):
    create(azure)
    stop = azure("POST", vm_path(suffix="/deallocate"))
    assert stop.status == 202
    mid = azure("GET", vm_path(suffix="/instanceView")).json
    assert mid["statuses"][1]["code"] == "PowerState/deallocating"
    assert azure.wait(stop)["status"] == "Succeeded"
    assert power(azure("GET", vm_path(), query="$expand=instanceView").json) == \
        "PowerState/deallocated"
    events = activity(azure, vm_path())
    done = [e for e in events if e["operationName"]["value"] ==
            "Microsoft.Compute/virtualMachines/deallocate/action"]
    assert [e["status"]["value"] for e in reversed(done)] == ["Started", "Accepted",
                                                              "Succeeded"]
    assert {e["caller"] for e in done} == {CLIENT}
    assert done[0]["operationName"]["localizedValue"] == "Deallocate Virtual Machine"
    assert "evict" not in json.dumps(events).lower()


def test_eviction_with_the_delete_policy_deletes_vm_disk_and_nic(azure):
    vm = create(azure, body=vm_body(eviction="Delete"))
    disk_name = vm["properties"]["storageProfile"]["osDisk"]["name"]
    assert azure("POST", vm_path(suffix="/simulateEviction")).status == 204
    assert azure("GET", vm_path()).status == 404
    state = azure.state()
    assert state["vms"] == [] and state["disks"] == [] and state["nics"] == []
    assert disk_name


def test_regular_vm_cannot_be_evicted(azure):
    create(azure, body=vm_body(priority="Regular"))
    reply = azure("POST", vm_path(suffix="/simulateEviction"))
    assert reply.status == 409 and reply.code == "OperationNotAllowed"


# --- delete, patch, list ----------------------------------------------------------------------

def test_delete_removes_the_disk_and_nic_with_delete_option_delete(azure):
    create(azure)
    gone = azure("DELETE", vm_path())
    assert gone.status == 202
    assert azure("GET", vm_path()).json["properties"]["provisioningState"] == "Deleting"
    assert azure.wait(gone)["status"] == "Succeeded"
    assert azure("GET", vm_path()).status == 404
    state = azure.state()
    assert state["disks"] == [] and state["nics"] == []
    assert ops(activity(azure, vm_path()))[-1] == "Microsoft.Compute/virtualMachines/delete"


def test_delete_with_detach_leaves_the_disk_unattached(azure):
    vm = create(azure, body=vm_body(delete_option="Detach"))
    assert azure.wait(azure("DELETE", vm_path()))["status"] == "Succeeded"
    disk = disk_of(azure, vm)
    assert disk.status == 200 and disk.json["properties"]["diskState"] == "Unattached"
    assert "managedBy" not in disk.json


def test_patch_tags_and_list_with_next_link(azure):
    create(azure)
    create(azure, "gpu2")
    patched = azure("PATCH", vm_path(), {"tags": {"gpu-tf-instance": "gpu1", "team": "ml"}})
    assert patched.status == 200 and patched.json["tags"]["team"] == "ml"
    assert azure.wait(patched)["status"] == "Succeeded"
    assert azure("PATCH", vm_path(), {"properties": {}}).status == 400
    azure.control("/_fake/faults", {"list_page_size": 1})
    first = azure("GET", vm_path().rsplit("/", 1)[0])
    assert first.status == 200 and [v["name"] for v in first.json["value"]] == ["gpu1"]
    second = azure.get_url(first.json["nextLink"])
    assert [v["name"] for v in second.json["value"]] == ["gpu2"]
    assert "nextLink" not in second.json


def test_the_subscription_wide_list_spans_resource_groups_with_next_link(azure):
    assert azure.control("/_fake/subscriptions", {"subscription": SUB,
                                                  "resource_groups": ["rg-more"]}).status == 201
    create(azure)
    other = vm_path("gpu3").replace(f"/resourceGroups/{RG}/", "/resourceGroups/rg-more/")
    put = azure("PUT", other, vm_body(), headers={"If-None-Match": "*"})
    assert put.status == 201, put.raw
    assert azure.wait(put)["status"] == "Succeeded"
    everything = f"/subscriptions/{SUB}/providers/Microsoft.Compute/virtualMachines"
    listed = azure("GET", everything)
    assert listed.status == 200, listed.raw
    assert [(v["id"].split("/")[4], v["name"]) for v in listed.json["value"]] == [
        (RG, "gpu1"), ("rg-more", "gpu3")]
    assert all("instanceView" not in v["properties"] for v in listed.json["value"])
    assert listed.json["value"][0]["tags"] == {"gpu-tf-instance": "gpu1"}
    azure.control("/_fake/faults", {"list_page_size": 1})
    first = azure("GET", everything)
    assert [v["name"] for v in first.json["value"]] == ["gpu1"]
    second = azure.get_url(first.json["nextLink"])
    assert [v["name"] for v in second.json["value"]] == ["gpu3"]
    assert "nextLink" not in second.json
    refused = azure("GET", everything, query="statusOnly=true")
    assert refused.status == 400 and "statusOnly" in refused.json["error"]["message"]


# --- creation failures and validation -----------------------------------------------------

def test_capacity_short_at_create_fails_the_operation_and_a_put_again_retries(azure):
    azure.control("/_fake/capacity", {"location": REGION, "vm_size": SIZE, "short": 1,
                                      "code": "ZonalAllocationFailed"})
    put = azure("PUT", vm_path(), vm_body(), headers={"If-None-Match": "*"})
    end = azure.wait(put)
    assert end["status"] == "Failed" and end["error"]["code"] == "ZonalAllocationFailed"
    failed = azure("GET", vm_path()).json
    assert failed["properties"]["provisioningState"] == "Failed"
    retry = azure("PUT", vm_path(), vm_body())
    assert retry.status == 200
    assert azure.wait(retry)["status"] == "Succeeded"
    vm = azure("GET", vm_path(), query="$expand=instanceView").json
    assert power(vm) == "PowerState/running"
    assert vm["properties"]["vmId"] == failed["properties"]["vmId"]


def nested(body: dict, *path, value):
    node = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return body


@pytest.mark.parametrize("body, status, code", [
    ({**vm_body(), "bogus": 1}, 400, "InvalidRequestContent"),
    (nested(vm_body(), "properties", "hardwareProfile", "vmSizze", value="x"), 400,
     "BadRequest"),
    (nested(vm_body(), "properties", "securityProfile", value={}), 400, "BadRequest"),
    ({**vm_body(), "identity": {"type": "SystemAssigned"}}, 400, "BadRequest"),
    (vm_body(priority="Regular", evictionPolicy="Deallocate"), 400,
     "EvictionPolicyCanBeSetOnlyOnAzureSpotVirtualMachines"),
    (vm_body(billingProfile={"maxPrice": 0}), 400, "MaxPriceValueInvalid"),
    (vm_body(priority="Regular", billingProfile={"maxPrice": 1.5}), 400,
     "MaxPriceIsSupportedOnlyForAzureSpotVirtualMachines"),
    (nested(vm_body(), "properties", "osProfile", "customData", value="not base64!"), 400,
     "InvalidParameter"),
    (nested(vm_body(), "properties", "osProfile", "linuxConfiguration", "ssh", "publicKeys",
            value=[{"path": "/root/.ssh/authorized_keys", "keyData": SSH_KEY}]), 400,
     "InvalidParameter"),
    (nested(vm_body(), "properties", "networkProfile", "networkInterfaceConfigurations", 0,
            "properties", "ipConfigurations", 0, "properties", "subnet", value={"id": "x"}),
     400, "LinkedInvalidPropertyId"),
    (nested(vm_body(), "properties", "storageProfile", "imageReference", "version",
            value="9.9.9"), 404, "PlatformImageNotFound"),
    ({**vm_body(), "location": "westeurope"}, 400, "LocationNotAvailableForResourceType"),
])
def test_vm_body_refusals(azure, body, status, code):
    reply = azure("PUT", vm_path(), body, headers={"If-None-Match": "*"})
    assert reply.status == status, reply.raw
    assert reply.code == code
    assert azure.state()["vms"] == []


def test_unknown_member_message_has_the_json_net_shape(azure):
    body = nested(vm_body(), "properties", "osProfile", "linuxConfiguration", "patchMode",
                  value="x")
    reply = azure("PUT", vm_path(), body)
    message = reply.json["error"]["message"]
    assert message.startswith("Could not find member 'patchMode' on object of type "
                              "'LinuxConfiguration'. Path 'properties.osProfile."
                              "linuxConfiguration.patchMode', line 1, position ")


def test_changing_an_immutable_property_is_refused(azure):
    create(azure)
    body = nested(vm_body(), "properties", "hardwareProfile", "vmSize",
                  value="Standard_NC48ads_A100_v4")
    reply = azure("PUT", vm_path(), body)
    assert reply.status == 409 and reply.code == "PropertyChangeNotAllowed"


# --- images, activity log grammar, ARM checks ---------------------------------------------

def test_marketplace_versions_list_order_top_and_get(azure):
    base = (f"/subscriptions/{SUB}/providers/Microsoft.Compute/locations/{REGION}/publishers/"
            "microsoft-dsvm/artifacttypes/vmimage/offers/ubuntu-hpc/skus/2204/versions")
    listed = azure("GET", base)
    assert listed.status == 200
    assert [v["name"] for v in listed.json] == VERSIONS
    assert listed.json[0]["location"] == REGION
    assert listed.json[0]["id"].endswith("/Skus/2204/Versions/" + VERSIONS[0])
    latest = azure("GET", base, query="$orderby=name%20desc&$top=1")
    assert [v["name"] for v in latest.json] == [VERSIONS[-1]]
    one = azure("GET", f"{base}/{VERSIONS[0]}")
    assert one.status == 200 and one.json["properties"]["hyperVGeneration"] == "V2"
    missing = azure("GET", f"{base}/1.2.3")
    assert missing.status == 404 and missing.code == "NotFound"
    assert azure("GET", base.replace("2204", "1804")).json == []


@pytest.mark.parametrize("text", [
    "", "resourceUri eq 'x'", "eventTimestamp ge '2026-01-01T00:00:00Z' and status eq 'Failed'",
    "eventTimestamp ge '2026-01-01T00:00:00Z' and resourceUri eq 'a' and "
    "resourceGroupName eq 'b'"])
def test_activity_log_filter_grammar_is_restricted(azure, text):
    reply = azure("GET", f"/subscriptions/{SUB}/providers/Microsoft.Insights/eventtypes/"
                         "management/values", query="$filter=" + quote(text))
    assert reply.status == 400
    assert reply.json["code"] == "BadRequest" and reply.json["message"]


def test_activity_log_by_resource_group_and_select(azure):
    create(azure)
    text = "eventTimestamp ge '2020-01-01T00:00:00Z' and resourceGroupName eq 'rg-gpu'"
    reply = azure("GET", f"/subscriptions/{SUB}/providers/Microsoft.Insights/eventtypes/"
                         "management/values",
                  query="$filter=" + quote(text) + "&$select=operationName,status")
    assert reply.status == 200
    assert reply.json["value"] and all(set(e) == {"operationName", "status"}
                                       for e in reply.json["value"])
    assert reply.json["value"][0]["status"]["value"] == "Succeeded"  # newest first


def test_api_versions_and_auth(azure):
    assert azure("GET", vm_path(), api=False).code == "MissingApiVersionParameter"
    assert azure("GET", vm_path(), api="2023-01-01").code == "NoRegisteredProviderFound"
    disk = azure("GET", f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                        "Microsoft.Compute/disks/x", api=COMPUTE_API_VERSION)
    assert disk.code == "NoRegisteredProviderFound"
    anonymous = azure("GET", vm_path(), auth=False)
    assert anonymous.status == 401 and anonymous.code == "AuthenticationFailed"
    assert azure("GET", f"/subscriptions/{SUB}/resourceGroups/other/providers/"
                        "Microsoft.Compute/virtualMachines/x").code == "ResourceGroupNotFound"


def test_reset_forgets_everything(azure):
    create(azure)
    assert azure.control("/_fake/reset").status == 200
    state = azure.state()
    assert state["vms"] == [] and state["activity_log"] == [] and state["images"] == []


# --- Spot Placement Score -------------------------------------------------------------------

SCORES_API = "2025-06-05"
A100, H100 = "Standard_NC24ads_A100_v4", "Standard_NC40ads_H100_v5"


def scores_path(location: str = REGION, sub: str = SUB) -> str:
    return (f"/subscriptions/{sub}/providers/Microsoft.Compute/locations/{location}/"
            "placementScores/spot/generate")


def set_score(azure, region, sku, score, zone=None, quota_available=True) -> dict:
    reply = azure.control("/_fake/placement_scores", {
        "region": region, "sku": sku, "score": score, "zone": zone,
        "quota_available": quota_available})
    assert reply.status == 200, reply.raw
    return reply.json


def score_body(locations=(REGION, "westus2"), sizes=(A100, H100), count=2, zones=None) -> dict:
    body = {"desiredLocations": list(locations), "desiredSizes": [{"sku": s} for s in sizes],
            "desiredCount": count}
    if zones is not None:
        body["availabilityZones"] = zones
    return body


def test_spot_placement_scores_regional_and_zonal(azure):
    set_score(azure, REGION, A100, "High", zone="1")
    set_score(azure, REGION, A100, "Low", zone="3", quota_available=False)
    set_score(azure, REGION, A100, "Medium")
    set_score(azure, "westus2", H100, "RestrictedSkuNotAvailable")
    # Regional: one entry per location x size, region by region as Azure lists them.
    reply = azure("POST", scores_path(), score_body(zones=False), api=SCORES_API)
    assert reply.status == 200, reply.raw
    assert reply.json == {
        "desiredLocations": [REGION, "westus2"],
        "desiredSizes": [{"sku": A100}, {"sku": H100}], "desiredCount": 2,
        "availabilityZones": False, "placementScores": [
            {"sku": A100, "region": REGION, "score": "Medium", "isQuotaAvailable": True},
            {"sku": H100, "region": REGION, "score": "DataNotFoundOrStale",
             "isQuotaAvailable": True},
            {"sku": A100, "region": "westus2", "score": "DataNotFoundOrStale",
             "isQuotaAvailable": True},
            {"sku": H100, "region": "westus2", "score": "RestrictedSkuNotAvailable",
             "isQuotaAvailable": True}]}
    assert reply.headers["x-ms-request-id"]
    # Zonal: one entry per zone given a score; the preview api-version answers the same.
    reply = azure("POST", scores_path("westus2"), score_body(locations=[REGION], sizes=[A100],
                                                             zones=True),
                  api="2024-06-01-preview")
    assert reply.status == 200, reply.raw
    assert reply.json["availabilityZones"] is True
    assert reply.json["placementScores"] == [
        {"sku": A100, "region": REGION, "availabilityZone": "1", "score": "High",
         "isQuotaAvailable": True},
        {"sku": A100, "region": REGION, "availabilityZone": "3", "score": "Low",
         "isQuotaAvailable": False}]
    # availabilityZones left out means regional.
    reply = azure("POST", scores_path(), score_body(locations=["EastUS"], sizes=[A100]),
                  api=SCORES_API)
    assert reply.json["availabilityZones"] is False
    assert reply.json["placementScores"] == [
        {"sku": A100, "region": "EastUS", "score": "Medium", "isQuotaAvailable": True}]
    state = azure.state()
    assert state["placement_score_requests"][1] == {
        "subscription": SUB, "location": "westus2", "desired_locations": [REGION],
        "desired_sizes": [A100], "desired_count": 2, "availability_zones": True}
    assert {"region": "westus2", "sku": H100, "zone": None,
            "score": "RestrictedSkuNotAvailable", "quota_available": True} \
        in state["placement_scores"]


@pytest.mark.parametrize("body, target", [
    (score_body(locations=[f"region{n}" for n in range(9)]), "desiredLocations"),
    (score_body(locations=[]), "desiredLocations"),
    (score_body(sizes=[f"Standard_D{n}s_v5" for n in range(6)]), "desiredSizes"),
    ({**score_body(), "desiredSizes": [{"name": A100}]}, "desiredSizes"),
    (score_body(count=0), "desiredCount"),
    ({k: v for k, v in score_body().items() if k != "desiredCount"}, "desiredCount"),
    (score_body(zones="yes"), "availabilityZones"),
    ({**score_body(), "evictionRate": True}, "evictionRate"),
])
def test_spot_placement_score_refusals(azure, body, target):
    reply = azure("POST", scores_path(), body, api=SCORES_API)
    assert reply.status == 400 and reply.code == "InvalidParameter", reply.raw
    assert reply.json["error"]["target"] == target
    assert azure.state()["placement_score_requests"] == []


def test_spot_placement_score_auth_versions_and_subscription(azure):
    anonymous = azure("POST", scores_path(), score_body(), api=SCORES_API, auth=False)
    assert anonymous.status == 401 and anonymous.code == "AuthenticationFailed"
    assert azure("POST", scores_path(), score_body(), api="2024-07-01").code == \
        "NoRegisteredProviderFound"
    assert azure("POST", scores_path(), score_body(), api=False).code == \
        "MissingApiVersionParameter"
    other = "00000000-0000-4000-8000-000000000000"
    assert azure("POST", scores_path(sub=other), score_body(), api=SCORES_API).code == \
        "SubscriptionNotFound"
    assert azure("GET", scores_path(), api=SCORES_API).status == 405
    assert azure.control("/_fake/placement_scores", {
        "region": REGION, "sku": A100, "score": "Great"}).status == 400
    assert azure.state()["placement_score_requests"] == []
