"""The fake Compute Engine instances, disks and images (`fakes/google/compute_instances.py`),
exercised over plain HTTP with urllib only, as `test_fake_compute.py` does for reservations:
a Spot VM with termination action STOP is preempted, stays stopped with its disk, fails to
start while capacity is short and then starts as the same instance with the same disk.
"""

from __future__ import annotations

import re
import uuid
from urllib.parse import urlencode

import pytest

from fakes.google.compute_instances import EMPTY_LABEL_FINGERPRINT, ComputeInstances
from fakes.testing import Reply, call, control

PROJECT, ZONE = "fake-project", "us-central1-a"
ZONE_PATH = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}"
DLVM = "deeplearning-platform-release"
FAMILY = "common-cu129-ubuntu-2204-nvidia-580"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-0[78]:00")


@pytest.fixture
def gce(registry):
    with ComputeInstances(registry) as server:
        control(server, "/_fake/images", {"project": DLVM, "images": [
            {"name": f"{FAMILY}-v20250101", "family": FAMILY,
             "creationTimestamp": "2025-01-01T00:00:00Z", "diskSizeGb": 50},
            {"name": f"{FAMILY}-v20250301", "family": FAMILY,
             "creationTimestamp": "2025-03-01T00:00:00Z", "diskSizeGb": 50},
            {"name": f"{FAMILY}-v20250401", "family": FAMILY,
             "creationTimestamp": "2025-04-01T00:00:00Z", "diskSizeGb": 50,
             "deprecated": {"state": "DEPRECATED"}}]})
        yield server


@pytest.fixture
def auth(gce, oauth):
    account = oauth.create_service_account(PROJECT)
    return {"Authorization": "Bearer " + account.self_signed_jwt()}


def vm_body(name="vm1", machine="a2-highgpu-1g", spot=True, action="STOP", **overrides):
    body = {
        "name": name,
        "machineType": f"zones/{ZONE}/machineTypes/{machine}",
        "disks": [{"boot": True, "autoDelete": True, "initializeParams": {
            "diskSizeGb": "200", "diskType": f"zones/{ZONE}/diskTypes/pd-balanced",
            "sourceImage": f"projects/{DLVM}/global/images/family/{FAMILY}"}}],
        "networkInterfaces": [{"network": "global/networks/default",
                               "accessConfigs": [{"type": "ONE_TO_ONE_NAT"}]}],
        "scheduling": {"provisioningModel": "SPOT" if spot else "STANDARD",
                       "instanceTerminationAction": action, "onHostMaintenance": "TERMINATE",
                       "automaticRestart": False},
        "labels": {"gpu-tf-instance": name, "team": "ml"},
        "metadata": {"items": [{"key": "user-data", "value": "#cloud-config\n"}]},
        "serviceAccounts": [{"email": "default",
                             "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}],
    }
    if not spot:
        del body["scheduling"]["instanceTerminationAction"]
    body.update(overrides)
    return body


def poll(url: str, headers: dict, limit: int = 10) -> dict:
    for _ in range(limit):
        reply = call("GET", url, headers=headers)
        assert reply.status == 200, reply.raw
        if reply.json["status"] == "DONE":
            return reply.json
    raise AssertionError("operation never DONE")


def write(gce, auth, method: str, path: str, body=None, request_id=None) -> Reply:
    query = f"?requestId={request_id}" if request_id else ""
    return call(method, f"{gce.url}{ZONE_PATH}{path}{query}", body, auth)


def done(gce, auth, method: str, path: str, body=None) -> dict:
    reply = write(gce, auth, method, path, body)
    assert reply.status == 200, reply.raw
    return poll(reply.json["selfLink"], auth)


def get(gce, auth, path: str) -> Reply:
    return call("GET", f"{gce.url}{path}", headers=auth)


def create(gce, auth, body=None) -> dict:
    op = done(gce, auth, "POST", "/instances", body or vm_body())
    assert "error" not in op, op
    return get(gce, auth, f"{ZONE_PATH}/instances/{(body or vm_body())['name']}").json


def operations(gce, auth, filter_text: str, **params) -> list:
    query = urlencode({"filter": filter_text, **params})
    reply = get(gce, auth, f"{ZONE_PATH}/operations?{query}")
    assert reply.status == 200, reply.raw
    assert reply.json["kind"] == "compute#operationList"
    return reply.json.get("items", [])


# --- the reclaim story --------------------------------------------------------------------

def test_spot_vm_reclaimed_stays_stopped_and_starts_again_as_the_same_vm(gce, auth):
    reply = write(gce, auth, "POST", "/instances", vm_body())
    assert reply.status == 200, reply.raw
    op = reply.json
    assert op["kind"] == "compute#operation" and op["operationType"] == "insert"
    assert op["status"] == "RUNNING" and op["zone"].endswith(f"/zones/{ZONE}")
    provisioning = get(gce, auth, f"{ZONE_PATH}/instances/vm1").json
    assert provisioning["status"] == "PROVISIONING"
    assert "error" not in poll(op["selfLink"], auth)

    vm = get(gce, auth, f"{ZONE_PATH}/instances/vm1").json
    assert vm["kind"] == "compute#instance" and vm["status"] == "RUNNING"
    assert re.fullmatch(r"\d{19}", vm["id"]) and op["targetId"] == vm["id"]
    assert vm["machineType"] == f"{gce.url}{ZONE_PATH}/machineTypes/a2-highgpu-1g"
    assert vm["zone"] == f"{gce.url}{ZONE_PATH}"
    assert vm["scheduling"] == {"onHostMaintenance": "TERMINATE", "automaticRestart": False,
                                "preemptible": True, "provisioningModel": "SPOT",
                                "instanceTerminationAction": "STOP"}
    assert vm["guestAccelerators"] == [{
        "acceleratorType": f"{gce.url}{ZONE_PATH}/acceleratorTypes/nvidia-tesla-a100",
        "acceleratorCount": 1}]
    assert TIMESTAMP.fullmatch(vm["lastStartTimestamp"])
    assert vm["labels"] == {"gpu-tf-instance": "vm1", "team": "ml"}
    boot = vm["disks"][0]
    assert boot["boot"] and boot["autoDelete"] and boot["deviceName"] == "persistent-disk-0"
    assert boot["source"] == f"{gce.url}{ZONE_PATH}/disks/vm1"
    disk = get(gce, auth, f"{ZONE_PATH}/disks/vm1").json
    assert disk["status"] == "READY" and disk["sizeGb"] == "200"
    assert disk["users"] == [vm["selfLink"]]
    assert disk["sourceImage"].endswith(f"/projects/{DLVM}/global/images/{FAMILY}-v20250301")

    # Compute preempts it: STOPPING, then TERMINATED, disks kept, an operation recorded.
    preempted = control(gce, "/_fake/reclaim", {"project": PROJECT, "zone": ZONE,
                                                "instance": "vm1"})
    assert preempted["operationType"] == "compute.instances.preempted"
    assert preempted["status"] == "DONE" and preempted["name"].startswith("systemevent-")
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").json["status"] == "STOPPING"
    stopped = get(gce, auth, f"{ZONE_PATH}/instances/vm1").json
    assert stopped["status"] == "TERMINATED" and stopped["id"] == vm["id"]
    assert TIMESTAMP.fullmatch(stopped["lastStopTimestamp"])
    assert get(gce, auth, f"{ZONE_PATH}/disks/vm1").json["id"] == disk["id"]

    found = operations(gce, auth, f'(targetId = "{vm["id"]}") AND '
                                  '(operationType = "compute.instances.preempted")')
    assert [o["name"] for o in found] == [preempted["name"]]
    assert found[0]["targetLink"] == vm["selfLink"]
    assert found[0]["statusMessage"] == "Instance was preempted."
    assert found[0]["user"] == "system@google.com" and found[0]["progress"] == 100
    assert operations(gce, auth, "operationType eq compute.instances.preempted") == found
    latest = operations(gce, auth, f'targetId = "{vm["id"]}"',
                        orderBy="creationTimestamp desc", maxResults=1)
    assert latest[0]["operationType"] == "compute.instances.preempted"

    # Capacity short for two starts: both operations fail, the VM stays TERMINATED.
    control(gce, "/_fake/capacity", {"zone": ZONE, "machine_type": "a2-highgpu-1g",
                                     "short": 2})
    for _ in range(2):
        failed = done(gce, auth, "POST", "/instances/vm1/start")
        assert failed["operationType"] == "start"
        error = failed["error"]["errors"][0]
        assert error["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"
        assert f"'projects/{PROJECT}/zones/{ZONE}' does not have enough resources" \
            in error["message"]
        assert failed["httpErrorStatusCode"] == 503
        assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").json["status"] == "TERMINATED"
    started = done(gce, auth, "POST", "/instances/vm1/start")
    assert "error" not in started
    again = get(gce, auth, f"{ZONE_PATH}/instances/vm1").json
    assert again["status"] == "RUNNING" and again["id"] == vm["id"]
    assert again["disks"][0]["source"] == boot["source"]
    assert get(gce, auth, f"{ZONE_PATH}/disks/vm1").json["id"] == disk["id"]
    assert gce.state()["capacity_short"] == []


def test_a_persons_stop_is_a_stop_operation(gce, auth):
    vm = create(gce, auth)
    reply = write(gce, auth, "POST", "/instances/vm1/stop")
    assert reply.status == 200 and reply.json["operationType"] == "stop"
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").json["status"] == "STOPPING"
    poll(reply.json["selfLink"], auth)
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").json["status"] == "TERMINATED"
    latest = operations(gce, auth, f'targetId = "{vm["id"]}"',
                        orderBy="creationTimestamp desc")
    assert latest[0]["operationType"] == "stop"
    assert latest[0]["user"].endswith(".iam.gserviceaccount.com")
    assert operations(gce, auth, f'(targetId = "{vm["id"]}") AND '
                                 '(operationType = "compute.instances.preempted")') == []
    assert operations(gce, auth, 'operationType != "insert"')[0]["operationType"] == "stop"


def test_reclaim_with_delete_action_deletes_the_vm_and_its_disk(gce, auth):
    create(gce, auth, vm_body(action="DELETE"))
    control(gce, "/_fake/reclaim", {"project": PROJECT, "zone": ZONE, "instance": "vm1"})
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").status == 404
    assert get(gce, auth, f"{ZONE_PATH}/disks/vm1").status == 404
    assert len(operations(gce, auth, 'operationType = "compute.instances.preempted"')) == 1


def test_reclaim_refuses_a_standard_vm(gce, auth):
    create(gce, auth, vm_body(spot=False))
    reply = call("POST", gce.url + "/_fake/reclaim", {"project": PROJECT, "zone": ZONE,
                                                      "instance": "vm1"})
    assert reply.status == 400 and "not a Spot" in reply.json["error"]


def test_insert_stockout_removes_the_vm_and_its_disk(gce, auth):
    control(gce, "/_fake/faults", {"stockout_code": "ZONE_RESOURCE_POOL_EXHAUSTED"})
    control(gce, "/_fake/capacity", {"zone": ZONE, "machine_type": "a2-highgpu-1g",
                                     "short": 1})
    op = done(gce, auth, "POST", "/instances", vm_body())
    assert op["error"]["errors"][0]["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    assert "Try a different zone, or try again later." in op["error"]["errors"][0]["message"]
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").status == 404
    assert get(gce, auth, f"{ZONE_PATH}/disks/vm1").status == 404
    create(gce, auth)  # the shortage was one attempt long


def test_delete_takes_the_autodelete_boot_disk(gce, auth):
    create(gce, auth)
    op = done(gce, auth, "DELETE", "/instances/vm1")
    assert op["operationType"] == "delete" and "error" not in op
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").status == 404
    missing = get(gce, auth, f"{ZONE_PATH}/disks/vm1")
    assert missing.status == 404
    assert missing.json["error"]["errors"][0]["reason"] == "notFound"
    assert missing.json["error"]["message"] == (
        f"The resource 'projects/{PROJECT}/zones/{ZONE}/disks/vm1' was not found")


def test_request_id_makes_a_repeated_insert_return_the_same_operation(gce, auth):
    rid = str(uuid.uuid4())
    first = write(gce, auth, "POST", "/instances", vm_body(), request_id=rid)
    second = write(gce, auth, "POST", "/instances", vm_body(), request_id=rid)
    assert first.status == second.status == 200
    assert first.json["name"] == second.json["name"]
    assert second.json["clientOperationId"] == rid
    assert len(gce.state()["instances"]) == 1
    conflict = write(gce, auth, "POST", "/instances", vm_body())
    assert conflict.status == 409
    assert conflict.json["error"]["errors"][0]["reason"] == "alreadyExists"


def test_label_filters_list_and_page(gce, auth):
    for name in ("vm-a", "vm-b", "vm-c"):
        create(gce, auth, vm_body(name=name))
    create(gce, auth, vm_body(name="other", labels={"team": "ml"}))
    def names(filter_text, **params):
        query = urlencode({"filter": filter_text, **params})
        reply = get(gce, auth, f"{ZONE_PATH}/instances?{query}")
        assert reply.status == 200, reply.raw
        return reply.json
    assert [i["name"] for i in names("labels.gpu-tf-instance:*")["items"]] == [
        "vm-a", "vm-b", "vm-c"]
    assert [i["name"] for i in names("labels.gpu-tf-instance=vm-b")["items"]] == ["vm-b"]
    assert [i["name"] for i in names('labels.gpu-tf-instance = "vm-c"')["items"]] == ["vm-c"]
    assert "items" not in names("labels.gpu-tf-instance=nope")
    page = names("labels.gpu-tf-instance:*", maxResults=2)
    assert [i["name"] for i in page["items"]] == ["vm-a", "vm-b"]
    rest = names("labels.gpu-tf-instance:*", maxResults=2, pageToken=page["nextPageToken"])
    assert [i["name"] for i in rest["items"]] == ["vm-c"] and "nextPageToken" not in rest
    assert page["kind"] == "compute#instanceList"


def test_get_from_family_is_the_newest_non_deprecated_image(gce, auth):
    image = get(gce, auth, f"/compute/v1/projects/{DLVM}/global/images/family/{FAMILY}").json
    assert image["name"] == f"{FAMILY}-v20250301" and image["status"] == "READY"
    assert image["family"] == FAMILY and image["kind"] == "compute#image"
    assert image["selfLink"] == (f"{gce.url}/compute/v1/projects/{DLVM}/global/images/"
                                 f"{image['name']}")
    assert TIMESTAMP.fullmatch(image["creationTimestamp"])
    missing = get(gce, auth, f"/compute/v1/projects/{DLVM}/global/images/family/nope")
    assert missing.status == 404
    by_name = get(gce, auth, f"/compute/v1/projects/{DLVM}/global/images/{FAMILY}-v20250401")
    assert by_name.json["deprecated"]["state"] == "DEPRECATED"


def test_set_labels_checks_the_fingerprint(gce, auth):
    vm = create(gce, auth)
    stale = vm["labelFingerprint"]
    op = done(gce, auth, "POST", "/instances/vm1/setLabels",
              {"labels": {"gpu-tf-instance": "vm1", "team": "infra"},
               "labelFingerprint": stale})
    assert op["operationType"] == "setLabels" and "error" not in op
    now = get(gce, auth, f"{ZONE_PATH}/instances/vm1").json
    assert now["labels"]["team"] == "infra" and now["labelFingerprint"] != stale
    refused = write(gce, auth, "POST", "/instances/vm1/setLabels",
                    {"labels": {}, "labelFingerprint": stale})
    assert refused.status == 412
    error = refused.json["error"]
    assert error["errors"][0]["reason"] == "conditionNotMet"
    assert error["message"] == ("Labels fingerprint either invalid or resource labels have "
                                "changed")
    done(gce, auth, "POST", "/instances/vm1/setLabels",
         {"labels": {}, "labelFingerprint": now["labelFingerprint"]})
    cleared = get(gce, auth, f"{ZONE_PATH}/instances/vm1").json
    assert cleared["labels"] == {} and cleared["labelFingerprint"] == EMPTY_LABEL_FINGERPRINT


@pytest.mark.parametrize("mutate, status, reason, text", [
    (lambda b: b.update(bogus=1), 400, "invalid", 'Unknown name "bogus" at \'instance_resource\''),
    (lambda b: b["scheduling"].update(spotty=True), 400, "invalid",
     "at 'instance_resource.scheduling': Cannot find field"),
    (lambda b: b["disks"][0]["initializeParams"].update(size=1), 400, "invalid",
     "at 'instance_resource.disks[0].initialize_params'"),
    (lambda b: b["scheduling"].update(provisioningModel="CHEAP"), 400, "invalid",
     "Scheduling.ProvisioningModel"),
    (lambda b: b.update(scheduling={"provisioningModel": "STANDARD"}), 400, "invalid",
     "Instances with guest accelerators do not support live migration."),
    (lambda b: b["scheduling"].update(automaticRestart=True), 400, "invalid",
     "'resource.scheduling.automaticRestart'"),
    (lambda b: b.update(machineType=f"zones/{ZONE}/machineTypes/n9-huge"), 400, "invalid",
     "Machine type with name 'n9-huge' does not exist in zone"),
    (lambda b: b["disks"][0]["initializeParams"].update(diskSizeGb="10"), 400, "invalid",
     "Requested disk size cannot be smaller than the image size (50 GB)"),
    (lambda b: b["disks"][0]["initializeParams"].update(
        sourceImage="projects/nobody/global/images/family/none"), 404, "notFound",
     "The resource 'projects/nobody/global/images/family/none' was not found"),
    (lambda b: b.update(labels={"Bad": "x"}), 400, "invalid", "Label key 'Bad' violates"),
    (lambda b: b.update(name="Bad_Name"), 400, "invalid", "Must be a match of regex"),
    (lambda b: b.pop("networkInterfaces"), 400, "required",
     "Required field 'resource.networkInterfaces' not specified"),
])
def test_insert_validation(gce, auth, mutate, status, reason, text):
    body = vm_body()
    mutate(body)
    reply = write(gce, auth, "POST", "/instances", body)
    assert reply.status == status, reply.raw
    assert reply.json["error"]["errors"][0]["reason"] == reason
    assert text in reply.json["error"]["message"]
    assert gce.state()["instances"] == []


def test_unknown_field_in_set_labels_is_refused(gce, auth):
    vm = create(gce, auth)
    reply = write(gce, auth, "POST", "/instances/vm1/setLabels",
                  {"labels": {}, "labelFingerprint": vm["labelFingerprint"], "force": True})
    assert reply.status == 400
    assert reply.json["error"]["status"] == "INVALID_ARGUMENT"
    assert "Unknown name \"force\"" in reply.json["error"]["message"]


def test_n1_with_attached_gpus_and_full_url_machine_type(gce, auth):
    control(gce, "/_fake/projects", {"project": PROJECT, "regions": {"us-central1": ["a"]},
                                     "machine_types": {ZONE: {"n1-standard-8": None}}})
    body = vm_body(name="n1", machine="n1-standard-8",
                   guestAccelerators=[{"acceleratorType": f"projects/{PROJECT}/zones/{ZONE}/"
                                                          "acceleratorTypes/nvidia-tesla-t4",
                                       "acceleratorCount": 1}])
    body["machineType"] = ("https://compute.googleapis.com/compute/v1/projects/"
                           f"{PROJECT}/zones/{ZONE}/machineTypes/n1-standard-8")
    vm = create(gce, auth, body)
    assert vm["guestAccelerators"][0]["acceleratorType"].endswith("/nvidia-tesla-t4")
    assert vm["machineType"].endswith("/machineTypes/n1-standard-8")


def test_start_of_a_running_vm_changes_nothing_and_auth_is_required(gce, auth):
    vm = create(gce, auth)
    op = done(gce, auth, "POST", "/instances/vm1/start")
    assert "error" not in op
    assert get(gce, auth, f"{ZONE_PATH}/instances/vm1").json["lastStartTimestamp"] == \
        vm["lastStartTimestamp"]
    anonymous = call("GET", f"{gce.url}{ZONE_PATH}/instances/vm1")
    assert anonymous.status == 401
    assert get(gce, auth, f"{ZONE_PATH}/instances/{vm['id']}").json["name"] == "vm1"


def test_state_and_reset(gce, auth):
    create(gce, auth)
    state = gce.state()
    assert [i["name"] for i in state["instances"]] == ["vm1"]
    assert [d["name"] for d in state["disks"]] == ["vm1"]
    assert len(state["images"]) == 3 and state["settings"]["reclaim_reads"] == 1
    control(gce, "/_fake/reset", {})
    assert gce.state()["instances"] == [] and gce.state()["images"] == []
