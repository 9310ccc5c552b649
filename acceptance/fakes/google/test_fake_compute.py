"""The fake Compute Engine API (`fakes/google/compute.py`: zonal reservations, regional
commitments, their operations), exercised over plain HTTP with urllib only, as
`test_fakes.py` does for the other fakes. Each test starts its own servers on 127.0.0.1 and
checks what a client sees, or what the fake holds through `GET /_fake/state`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.error
import urllib.request
import uuid
from urllib.parse import urlencode

import pytest

from fakes.google.compute import Compute
from fakes.google.tokens import GoogleOAuth
from fakes.testing import Reply, call, control, state
from fakes.tokens import JWT_BEARER, TokenRegistry

PROJECT, ZONE, REGION = "fake-project", "us-central1-a", "us-central1"
ZONE_PATH = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}"
REGION_PATH = f"/compute/v1/projects/{PROJECT}/regions/{REGION}"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-0[78]:00")


# --- fixtures -----------------------------------------------------------------------------

@pytest.fixture
def compute(registry):
    with Compute(registry) as server:
        yield server


@pytest.fixture
def auth(compute, account):
    return {"Authorization": "Bearer " + account.self_signed_jwt()}


def reservation(name="gpu-h100", count=2, machine="a3-highgpu-8g", **overrides) -> dict:
    body = {"name": name, "description": "bought by a test",
            "specificReservation": {"count": str(count), "instanceProperties": {
                "machineType": machine,
                "guestAccelerators": [{"acceleratorType": "nvidia-h100-80gb",
                                       "acceleratorCount": 8}]}},
            "specificReservationRequired": True}
    if machine != "a3-highgpu-8g":
        del body["specificReservation"]["instanceProperties"]["guestAccelerators"]
    body.update(overrides)
    return body


def commitment(name="cud-h100", plan="TWELVE_MONTH", **overrides) -> dict:
    body = {"name": name, "description": "a test commitment", "plan": plan,
            "type": "ACCELERATOR_OPTIMIZED_A3", "category": "MACHINE",
            "resources": [{"type": "VCPU", "amount": "208"},
                          {"type": "MEMORY", "amount": str(1872 * 1024)},
                          {"type": "ACCELERATOR", "amount": "8",
                           "acceleratorType": "nvidia-h100-80gb"}],
            "reservations": [{"name": "cud-h100-res", "zone": "us-central1-b",
                              "specificReservation": {"count": "1", "instanceProperties": {
                                  "machineType": "a3-highgpu-8g"}}}]}
    body.update(overrides)
    return body


def insert_reservation(compute, auth, body=None, zone=ZONE, request_id=None) -> Reply:
    query = f"?requestId={request_id}" if request_id else ""
    return call("POST", f"{compute.url}/compute/v1/projects/{PROJECT}/zones/{zone}/"
                        f"reservations{query}", body or reservation(), auth)


def poll(url: str, headers: dict, limit: int = 10) -> list[dict]:
    answers = []
    for _ in range(limit):
        reply = call("GET", url, headers=headers)
        assert reply.status == 200, reply.raw
        answers.append(reply.json)
        if reply.json["status"] == "DONE":
            return answers
    raise AssertionError(f"never DONE: {[a['status'] for a in answers]}")


def create_reservation(compute, auth, body=None) -> dict:
    reply = insert_reservation(compute, auth, body)
    assert reply.status == 200, reply.raw
    done = poll(reply.json["selfLink"], auth)[-1]
    assert "error" not in done, done
    return done


def error_of(reply: Reply) -> dict:
    assert reply.headers.get("Content-Type", "").startswith("application/json"), reply.raw
    return reply.json["error"]


# --- reservations -------------------------------------------------------------------------

def test_reservation_insert_is_an_operation_polled_to_done_then_ready(compute, auth, account):
    rid = str(uuid.uuid4())
    reply = insert_reservation(compute, auth, request_id=rid)
    assert reply.status == 200, reply.raw
    op = reply.json
    base = f"{compute.url}/compute/v1/projects/{PROJECT}"
    assert op["kind"] == "compute#operation" and op["operationType"] == "insert"
    assert op["status"] == "RUNNING" and op["progress"] == 0
    assert re.fullmatch(r"operation-\d{13}-[0-9a-f]{13}-[0-9a-f]{8}-[0-9a-f]{8}", op["name"])
    assert op["zone"] == f"{base}/zones/{ZONE}" and "region" not in op
    assert op["selfLink"] == f"{base}/zones/{ZONE}/operations/{op['name']}"
    assert op["targetLink"] == f"{base}/zones/{ZONE}/reservations/gpu-h100"
    assert op["clientOperationId"] == rid and op["user"] == account.email
    assert TIMESTAMP.fullmatch(op["insertTime"]) and op["id"].isdigit()

    creating = call("GET", f"{compute.url}{ZONE_PATH}/reservations/gpu-h100", headers=auth)
    assert creating.status == 200 and creating.json["status"] == "CREATING"
    answers = poll(op["selfLink"], auth)
    assert [a["status"] for a in answers] == ["RUNNING", "RUNNING", "DONE"]
    done = answers[-1]
    assert done["progress"] == 100 and TIMESTAMP.fullmatch(done["endTime"])
    assert "error" not in done and "httpErrorStatusCode" not in done

    got = call("GET", f"{compute.url}{ZONE_PATH}/reservations/gpu-h100", headers=auth).json
    assert got["kind"] == "compute#reservation" and got["status"] == "READY"
    assert got["id"] == op["targetId"] and got["id"].isdigit()
    assert got["selfLink"] == op["targetLink"] and got["zone"] == op["zone"]
    assert TIMESTAMP.fullmatch(got["creationTimestamp"])
    assert got["name"] == "gpu-h100" and got["description"] == "bought by a test"
    assert got["specificReservationRequired"] is True and "commitment" not in got
    assert got["specificReservation"] == {
        "count": "2", "inUseCount": "0",  # int64: JSON strings
        "instanceProperties": {"machineType": "a3-highgpu-8g", "guestAccelerators": [
            {"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": 8}]}}  # int32
    stored = state(compute)["reservations"]
    assert [{k: v for k, v in r.items() if k != "fake"} for r in stored] == [got]
    assert call("GET", f"{compute.url}{ZONE_PATH}/reservations/{got['id']}",
                headers=auth).json["name"] == "gpu-h100", "get by numeric id"


def test_count_may_be_a_number_and_proto_field_names_are_accepted(compute, auth):
    body = {"name": "snake", "specific_reservation": {"count": 3, "instance_properties": {
        "machine_type": "g2-standard-8", "local_ssds": [{"disk_size_gb": 375,
                                                         "interface": "NVME"}]}}}
    create_reservation(compute, auth, body)
    got = call("GET", f"{compute.url}{ZONE_PATH}/reservations/snake", headers=auth).json
    assert got["specificReservation"]["count"] == "3"
    assert got["specificReservation"]["instanceProperties"] == {
        "machineType": "g2-standard-8",
        "localSsds": [{"diskSizeGb": "375", "interface": "NVME"}]}
    assert got["specificReservationRequired"] is False


def test_duplicate_reservation_name_is_409_already_exists(compute, auth):
    assert insert_reservation(compute, auth).status == 200
    creating = insert_reservation(compute, auth)  # still CREATING
    assert creating.status == 409
    error = error_of(creating)
    text = f"The resource 'projects/{PROJECT}/zones/{ZONE}/reservations/gpu-h100' already exists"
    assert error["code"] == 409 and error["message"] == text
    assert error["errors"] == [{"message": text, "domain": "global", "reason": "alreadyExists"}]
    control(compute, "/_fake/complete", {})
    assert insert_reservation(compute, auth).status == 409
    assert len(state(compute)["operations"]) == 1
    other_zone = insert_reservation(compute, auth, zone="us-central1-b")
    assert other_zone.status == 200, "names are per zone"


def test_request_id_makes_a_repeated_insert_return_the_same_operation(compute, auth):
    rid = str(uuid.uuid4())
    first = insert_reservation(compute, auth, request_id=rid).json
    again = insert_reservation(compute, auth, reservation(count=5), request_id=rid)
    assert again.status == 200, "not 409: the repeat is ignored, not acted on"
    assert again.json["name"] == first["name"]
    poll(first["selfLink"], auth)
    done = insert_reservation(compute, auth, request_id=rid.upper())
    assert done.json["name"] == first["name"] and done.json["status"] == "DONE"
    ops = state(compute)["operations"]
    assert len(ops) == 1 and len(state(compute)["reservations"]) == 1
    assert state(compute)["reservations"][0]["specificReservation"]["count"] == "2"
    fresh = insert_reservation(compute, auth, request_id=str(uuid.uuid4()))
    assert fresh.status == 409, "another requestId acts again"
    delete_rid = str(uuid.uuid4())
    url = f"{compute.url}{ZONE_PATH}/reservations/gpu-h100?requestId={delete_rid}"
    deleting = call("DELETE", url, headers=auth).json
    assert call("DELETE", url, headers=auth).json["name"] == deleting["name"]
    for bad in ("not-a-uuid", "00000000-0000-0000-0000-000000000000"):
        reply = insert_reservation(compute, auth, reservation("other"), request_id=bad)
        assert reply.status == 400 and error_of(reply)["errors"][0]["reason"] == "invalid"
        assert "requestId" in error_of(reply)["message"]


def test_request_ids_are_forgotten_after_an_hour(compute, auth):
    rid = str(uuid.uuid4())
    first = insert_reservation(compute, auth, request_id=rid).json
    control(compute, "/_fake/complete", {})
    control(compute, "/_fake/clock", {"advance_hours": 1.1})
    later = insert_reservation(compute, auth, request_id=rid)
    assert later.status == 409, later.raw  # acted on again: the name is taken
    assert first["name"] not in later.raw.decode()


def test_reservation_list_pages_sorts_and_filters(compute, auth):
    control(compute, "/_fake/faults", {"polls": 0})
    empty = call("GET", f"{compute.url}{ZONE_PATH}/reservations", headers=auth)
    assert empty.status == 200
    assert empty.json == {"kind": "compute#reservationList",
                          "id": f"projects/{PROJECT}/zones/{ZONE}/reservations",
                          "selfLink": f"{compute.url}{ZONE_PATH}/reservations"}
    for name in ("res-c", "res-a", "res-e", "res-b", "res-d"):
        create_reservation(compute, auth, reservation(name))
    url, names, pages = f"{compute.url}{ZONE_PATH}/reservations?maxResults=2", [], 0
    token = ""
    while True:
        page = call("GET", url + token, headers=auth).json
        pages += 1
        names += [r["name"] for r in page["items"]]
        assert len(page["items"]) <= 2
        if "nextPageToken" not in page:
            break
        token = "&pageToken=" + page["nextPageToken"]
    assert names == ["res-a", "res-b", "res-c", "res-d", "res-e"] and pages == 3
    one = call("GET", f"{compute.url}{ZONE_PATH}/reservations?filter=name%20%3D%20%22res-d%22",
               headers=auth).json
    assert [r["name"] for r in one["items"]] == ["res-d"]
    regex = call("GET", f"{compute.url}{ZONE_PATH}/reservations?filter=name%20ne%20res-%5Bab%5D",
                 headers=auth).json
    assert [r["name"] for r in regex["items"]] == ["res-c", "res-d", "res-e"]
    for query in ("maxResults=501", "pageToken=bm9wZQ", "orderBy=zone"):
        bad = call("GET", f"{compute.url}{ZONE_PATH}/reservations?{query}", headers=auth)
        assert bad.status == 400 and error_of(bad)["errors"][0]["reason"] == "invalid", query
    other = call("GET", f"{compute.url}/compute/v1/projects/{PROJECT}/zones/us-central1-b/"
                        "reservations", headers=auth).json
    assert "items" not in other, "lists are per zone"


def test_reservation_delete_flow(compute, auth):
    create_reservation(compute, auth)
    url = f"{compute.url}{ZONE_PATH}/reservations/gpu-h100"
    op = call("DELETE", url, headers=auth)
    assert op.status == 200 and op.json["operationType"] == "delete"
    assert op.json["targetLink"] == url
    assert call("GET", url, headers=auth).json["status"] == "DELETING"
    again = call("DELETE", url, headers=auth)
    assert again.status == 400 and error_of(again)["errors"][0]["reason"] == "resourceNotReady"
    assert "error" not in poll(op.json["selfLink"], auth)[-1]
    gone = call("GET", url, headers=auth)
    assert gone.status == 404
    text = f"The resource 'projects/{PROJECT}/zones/{ZONE}/reservations/gpu-h100' was not found"
    assert error_of(gone) == {"code": 404, "message": text, "errors": [
        {"message": text, "domain": "global", "reason": "notFound"}]}
    assert call("DELETE", url, headers=auth).status == 404
    assert state(compute)["reservations"] == []


def test_no_capacity_ends_the_operation_with_a_stockout(compute, auth):
    control(compute, "/_fake/capacity", {"zone": ZONE, "machine_type": "a3-highgpu-8g",
                                         "available": False})
    reply = insert_reservation(compute, auth)
    assert reply.status == 200, "the insert is accepted; its operation fails"
    done = poll(reply.json["selfLink"], auth)[-1]
    assert done["status"] == "DONE" and done["progress"] == 100
    error = done["error"]["errors"][0]
    assert error["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"
    assert error["message"].startswith(f"The zone 'projects/{PROJECT}/zones/{ZONE}' does not "
                                       "have enough resources available to fulfill the request.")
    assert done["httpErrorStatusCode"] == 503
    assert done["httpErrorMessage"] == "SERVICE UNAVAILABLE"
    assert call("GET", f"{compute.url}{ZONE_PATH}/reservations/gpu-h100",
                headers=auth).status == 404
    assert state(compute)["reservations"] == []
    assert create_reservation(compute, auth, reservation("l4", machine="g2-standard-8"))
    elsewhere = insert_reservation(compute, auth, zone="us-central1-b")
    assert "error" not in poll(elsewhere.json["selfLink"], auth)[-1], "only that zone"
    control(compute, "/_fake/capacity", {"zone": ZONE, "machine_type": "a3-highgpu-8g",
                                         "available": True})
    assert "error" not in create_reservation(compute, auth)


@pytest.mark.parametrize("mutate, status, reason, text", [
    (lambda b: b.update(gpuCount=8), 400, "invalid",
     "Invalid JSON payload received. Unknown name \"gpuCount\" at 'reservation_resource': "
     "Cannot find field."),
    (lambda b: b["specificReservation"]["instanceProperties"].update(vcpus=4), 400, "invalid",
     "Unknown name \"vcpus\" at 'reservation_resource.specific_reservation.instance_properties'"),
    (lambda b: b.update(name="GPU_1"), 400, "invalid",
     "Invalid value for field 'resource.name': 'GPU_1'. Must be a match of regex "
     "'(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'"),
    (lambda b: b.update(name="a" * 64), 400, "invalid", "Must be a match of regex"),
    (lambda b: b.pop("name"), 400, "required", "Required field 'resource.name' not specified"),
    (lambda b: b["specificReservation"].update(count="0"), 400, "invalid",
     "Invalid value for field 'resource.specificReservation.count': '0'."),
    (lambda b: b["specificReservation"].update(count=-3), 400, "invalid",
     "'resource.specificReservation.count': '-3'"),
    (lambda b: b["specificReservation"].update(count="two"), 400, "invalid",
     "Invalid value at 'reservation_resource.specific_reservation.count' (TYPE_INT64)"),
    (lambda b: b["specificReservation"]["instanceProperties"].update(machineType="n9-gpu-8"),
     400, "invalid", "Invalid value for field 'resource.specificReservation.instanceProperties."
                     "machineType': 'n9-gpu-8'. Machine type with name 'n9-gpu-8' does not "
                     f"exist in zone '{ZONE}'."),
    (lambda b: b["specificReservation"]["instanceProperties"]["guestAccelerators"][0].update(
        acceleratorCount=4), 400, "invalid", "comes with 8 nvidia-h100-80gb"),
    (lambda b: b.update(specificReservationRequired="yes"), 400, "invalid", "(TYPE_BOOL)"),
    (lambda b: b.update(shareSettings={"shareType": "EVERYONE"}), 400, "invalid",
     "google.cloud.compute.v1.ShareSettings.ShareType"),
])
def test_reservation_insert_validation(compute, auth, mutate, status, reason, text):
    body = reservation()
    mutate(body)
    reply = insert_reservation(compute, auth, body)
    assert reply.status == status, reply.raw
    error = error_of(reply)
    assert error["code"] == status and error["errors"][0]["reason"] == reason
    assert text in error["message"], error["message"]
    if error["message"].startswith(("Invalid JSON payload", "Invalid value at")):
        # refused by the API front end's JSON parser: canonical status and a field violation
        assert error["status"] == "INVALID_ARGUMENT"
        assert error["details"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    else:
        assert "status" not in error
    assert state(compute)["reservations"] == [] and state(compute)["operations"] == []


def test_empty_body_and_not_json(compute, auth):
    empty = call("POST", f"{compute.url}{ZONE_PATH}/reservations", {}, auth)
    assert empty.status == 400
    assert error_of(empty)["message"] == "Required field 'resource' not specified"
    request = urllib.request.Request(f"{compute.url}{ZONE_PATH}/reservations",
                                     data=b'{"name": "r1",', method="POST",
                                     headers={**auth, "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as garbage:
        urllib.request.urlopen(request, timeout=10)
    assert garbage.value.code == 400
    error = json.loads(garbage.value.read())["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"].startswith("Invalid JSON payload received.")
    assert state(compute)["operations"] == []


def test_unknown_zone_and_region(compute, auth):
    reply = insert_reservation(compute, auth, zone="us-central1-z")
    assert reply.status == 400
    assert error_of(reply) == {
        "code": 400, "message": "Invalid value for field 'zone': 'us-central1-z'. Unknown zone.",
        "errors": [{"message": "Invalid value for field 'zone': 'us-central1-z'. Unknown zone.",
                    "domain": "global", "reason": "invalid"}]}
    region = call("GET", f"{compute.url}/compute/v1/projects/{PROJECT}/regions/us-east1/"
                         "commitments", headers=auth)
    assert region.status == 400
    assert error_of(region)["message"] == "Invalid value for field 'region': 'us-east1'. " \
                                          "Unknown region."
    for zone in ("us-central1-f", "us-east4-c", "europe-west4-a"):
        assert insert_reservation(compute, auth, zone=zone).status == 200, zone


def test_seeded_project_catalog_restricts_zones_and_machine_types(compute, auth):
    seeded = control(compute, "/_fake/projects", {
        "project": PROJECT, "regions": {"asia-east1": ["a"], REGION: ["us-central1-a"]},
        "machine_types": {ZONE: ["g2-standard-8"],
                          "asia-east1-a": {"x9-gpu-2": {"gpu": "nvidia-x9", "count": 2}}}})
    assert seeded["regions"] == {"asia-east1": ["asia-east1-a"], REGION: [ZONE]}
    assert seeded["machine_types"][ZONE] == {"g2-standard-8": {"gpu": "nvidia-l4", "count": 1}}
    assert insert_reservation(compute, auth, zone="us-central1-b").status == 400
    a3 = insert_reservation(compute, auth)
    assert a3.status == 400 and "does not exist in zone" in error_of(a3)["message"]
    assert insert_reservation(compute, auth, reservation(machine="g2-standard-8")).status == 200
    custom = reservation("x9", machine="x9-gpu-2")
    assert insert_reservation(compute, auth, custom, zone="asia-east1-a").status == 200
    other = call("POST", f"{compute.url}/compute/v1/projects/another/zones/{ZONE}/reservations",
                 reservation(), auth)
    assert other.status == 200, "unseeded projects have the default catalog"


# --- commitments --------------------------------------------------------------------------

def _pacific(day: dt.date) -> str:
    try:
        from zoneinfo import ZoneInfo
        zone = ZoneInfo("America/Los_Angeles")
    except Exception:  # no tz database: the fake's own rule is then not cross-checked
        pytest.skip("no tz database")
    return dt.datetime.combine(day, dt.time(0), zone).isoformat(timespec="milliseconds")


@pytest.mark.parametrize("plan, years", [("TWELVE_MONTH", 1), ("THIRTY_SIX_MONTH", 3)])
def test_commitment_starts_at_the_next_pacific_midnight_and_expires(compute, auth, plan,
                                                                     years):
    # 12:00 PST on Saturday 13 March 2027; daylight saving time starts on the 14th at 2 AM.
    control(compute, "/_fake/clock", {"now": "2027-03-13T20:00:00Z"})
    reply = call("POST", f"{compute.url}{REGION_PATH}/commitments", commitment(plan=plan), auth)
    assert reply.status == 200, reply.raw
    op = reply.json
    assert op["region"] == f"{compute.url}{REGION_PATH}" and "zone" not in op
    assert op["selfLink"] == f"{compute.url}{REGION_PATH}/operations/{op['name']}"
    assert op["targetLink"] == f"{compute.url}{REGION_PATH}/commitments/cud-h100"
    assert op["insertTime"].startswith("2027-03-13T12:00:00."), "the fake clock, in PST"
    assert op["insertTime"].endswith("-08:00")
    url = f"{compute.url}{REGION_PATH}/commitments/cud-h100"
    assert call("GET", url, headers=auth).json["status"] == "CREATING"
    poll(op["selfLink"], auth)
    c = call("GET", url, headers=auth).json
    assert c["kind"] == "compute#commitment" and c["id"] == op["targetId"]
    assert c["status"] == "NOT_YET_ACTIVE" and "not yet active" in c["statusMessage"]
    assert c["startTimestamp"] == "2027-03-14T00:00:00.000-08:00"
    assert c["startTimestamp"] == _pacific(dt.date(2027, 3, 14))
    end = dt.date(2027 + years, 3, 14)
    assert c["endTimestamp"] == _pacific(end)
    assert c["endTimestamp"].endswith("T00:00:00.000-07:00"), "mid-March is daylight time"
    assert (c["plan"], c["type"], c["category"], c["autoRenew"]) == (
        plan, "ACCELERATOR_OPTIMIZED_A3", "MACHINE", False)
    assert c["resources"] == [{"type": "VCPU", "amount": "208"},
                              {"type": "MEMORY", "amount": "1916928"},
                              {"type": "ACCELERATOR", "amount": "8",
                               "acceleratorType": "nvidia-h100-80gb"}]
    assert c["region"] == f"{compute.url}{REGION_PATH}" and c["selfLink"] == url
    control(compute, "/_fake/clock", {"advance_days": 1})
    active = call("GET", url, headers=auth).json
    assert active["status"] == "ACTIVE" and active["statusMessage"].startswith(
        "The commitment is active")
    control(compute, "/_fake/clock", {"now": f"{end.isoformat()}T06:59:00Z"})
    assert call("GET", url, headers=auth).json["status"] == "ACTIVE", "one minute before"
    control(compute, "/_fake/clock", {"advance_hours": 1})
    expired = call("GET", url, headers=auth).json
    assert expired["status"] == "EXPIRED" and "expired" in expired["statusMessage"]
    listed = call("GET", f"{compute.url}{REGION_PATH}/commitments", headers=auth).json
    assert listed["kind"] == "compute#commitmentList"
    assert [(i["name"], i["status"]) for i in listed["items"]] == [("cud-h100", "EXPIRED")]


def test_auto_renewed_commitment_stays_active(compute, auth):
    control(compute, "/_fake/clock", {"now": "2027-06-01T20:00:00Z"})
    body = commitment(autoRenew=True)
    op = call("POST", f"{compute.url}{REGION_PATH}/commitments", body, auth).json
    poll(op["selfLink"], auth)
    control(compute, "/_fake/clock", {"advance_days": 400})
    c = call("GET", f"{compute.url}{REGION_PATH}/commitments/cud-h100", headers=auth).json
    assert c["status"] == "ACTIVE" and c["autoRenew"] is True
    assert c["endTimestamp"].startswith("2029-06-02T00:00:00.000")


def test_commitment_creates_its_reservations_attached_to_it(compute, auth):
    op = call("POST", f"{compute.url}{REGION_PATH}/commitments", commitment(), auth).json
    res_url = f"{compute.url}/compute/v1/projects/{PROJECT}/zones/us-central1-b/reservations/" \
              "cud-h100-res"
    assert call("GET", res_url, headers=auth).json["status"] == "CREATING"
    poll(op["selfLink"], auth)
    res = call("GET", res_url, headers=auth).json
    assert res["status"] == "READY"
    assert res["commitment"] == f"{compute.url}{REGION_PATH}/commitments/cud-h100"
    c = call("GET", f"{compute.url}{REGION_PATH}/commitments/cud-h100", headers=auth).json
    assert c["reservations"] == [res]


def test_commitment_attaches_existing_reservations(compute, auth):
    create_reservation(compute, auth)
    body = commitment(reservations=None, existingReservations=[
        f"projects/{PROJECT}/zones/{ZONE}/reservations/gpu-h100"])
    del body["reservations"]
    op = call("POST", f"{compute.url}{REGION_PATH}/commitments", body, auth)
    assert op.status == 200, op.raw
    poll(op.json["selfLink"], auth)
    res = call("GET", f"{compute.url}{ZONE_PATH}/reservations/gpu-h100", headers=auth).json
    assert res["commitment"].endswith(f"{REGION_PATH}/commitments/cud-h100")
    missing = commitment("cud-2", existingReservations=[f"zones/{ZONE}/reservations/nope"])
    del missing["reservations"]
    reply = call("POST", f"{compute.url}{REGION_PATH}/commitments", missing, auth)
    assert reply.status == 400 and "existingReservations[0]" in error_of(reply)["message"]


def test_commitment_fails_when_its_reservation_finds_no_capacity(compute, auth):
    control(compute, "/_fake/capacity", {"zone": "us-central1-b",
                                         "machine_type": "a3-highgpu-8g", "available": False})
    op = call("POST", f"{compute.url}{REGION_PATH}/commitments", commitment(), auth).json
    done = poll(op["selfLink"], auth)[-1]
    assert done["error"]["errors"][0]["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"
    assert call("GET", f"{compute.url}{REGION_PATH}/commitments/cud-h100",
                headers=auth).status == 404
    assert state(compute)["reservations"] == [] and state(compute)["commitments"] == []


@pytest.mark.parametrize("mutate, reason, text", [
    (lambda b: b.update(plan="TWO_YEAR"), "invalid",
     "Invalid value at 'commitment_resource.plan' "
     "(type.googleapis.com/google.cloud.compute.v1.Commitment.Plan), \"TWO_YEAR\""),
    (lambda b: b.update(plan="INVALID"), "invalid",
     "Invalid value for field 'resource.plan': 'INVALID'."),
    (lambda b: b.pop("plan"), "required", "Required field 'resource.plan' not specified"),
    (lambda b: b.update(type="ACCELERATOR_OPTIMIZED_Z9"), "invalid",
     "google.cloud.compute.v1.Commitment.Type"),
    (lambda b: b.update(resources=[]), "required",
     "Required field 'resource.resources' not specified"),
    (lambda b: b.pop("resources"), "required", "'resource.resources'"),
    (lambda b: b.pop("reservations"), "invalid",
     "Commitments for GPUs or Local SSD disks must have reservations attached"),
    (lambda b: b["resources"][1].update(amount="1000"), "invalid",
     "Memory must be a multiple of 256 MB."),
    (lambda b: b["resources"][0].update(amount="0"), "invalid",
     "'resource.resources[0].amount': '0'"),
    (lambda b: b["resources"][0].update(type="GPU"), "invalid",
     "google.cloud.compute.v1.ResourceCommitment.Type"),
    (lambda b: b["resources"][2].pop("acceleratorType"), "required",
     "'resource.resources[2].acceleratorType'"),
    (lambda b: b["resources"][0].update(acceleratorType="nvidia-l4"), "invalid",
     "Only ACCELERATOR resources have an acceleratorType."),
    (lambda b: b.update(term="1y"), "invalid",
     "Unknown name \"term\" at 'commitment_resource': Cannot find field."),
    (lambda b: b["reservations"][0].pop("zone"), "required", "'resource.reservations[0].zone'"),
    (lambda b: b["reservations"][0].update(zone="us-east4-a"), "invalid",
     "The zone must be in region 'us-central1'."),
    (lambda b: b.update(name="CUD"), "invalid", "Invalid value for field 'resource.name'"),
    (lambda b: b.update(category="LICENSE"), "invalid", "license commitments"),
])
def test_commitment_insert_validation(compute, auth, mutate, reason, text):
    body = commitment()
    mutate(body)
    reply = call("POST", f"{compute.url}{REGION_PATH}/commitments", body, auth)
    assert reply.status == 400, reply.raw
    error = error_of(reply)
    assert error["errors"][0]["reason"] == reason and text in error["message"], error
    assert state(compute)["commitments"] == [] and state(compute)["reservations"] == []


def test_vcpu_only_commitment_needs_no_reservation_and_duplicates_conflict(compute, auth):
    body = commitment("cud-cpu", type="GENERAL_PURPOSE_N2",
                      resources=[{"type": "VCPU", "amount": 4},
                                 {"type": "MEMORY", "amount": 16384}])
    del body["reservations"]
    op = call("POST", f"{compute.url}{REGION_PATH}/commitments", body, auth)
    assert op.status == 200, op.raw
    again = call("POST", f"{compute.url}{REGION_PATH}/commitments", body, auth)
    assert again.status == 409 and error_of(again)["errors"][0]["reason"] == "alreadyExists"
    assert error_of(again)["message"] == (f"The resource 'projects/{PROJECT}/regions/{REGION}/"
                                          "commitments/cud-cpu' already exists")


def test_commitments_cannot_be_deleted(compute, auth):
    op = call("POST", f"{compute.url}{REGION_PATH}/commitments", commitment(), auth).json
    poll(op["selfLink"], auth)
    url = f"{compute.url}{REGION_PATH}/commitments/cud-h100"
    for method in ("DELETE", "PUT"):
        reply = call(method, url, headers=auth)
        assert reply.status == 404, method
        assert reply.headers["Content-Type"].startswith("text/html")
        assert b"Error 404 (Not Found)" in reply.raw
        assert f"The requested URL <code>{REGION_PATH}/commitments/cud-h100</code> was not " \
               "found on this server.".encode() in reply.raw
    assert call("GET", url, headers=auth).status == 200
    assert len(state(compute)["commitments"]) == 1 and len(state(compute)["operations"]) == 1


# --- operations ---------------------------------------------------------------------------

def test_operation_wait_returns_done_and_unknown_operations_are_404(compute, auth):
    op = insert_reservation(compute, auth).json
    waited = call("POST", op["selfLink"] + "/wait", headers=auth)
    assert waited.status == 200 and waited.json["status"] == "DONE"
    control(compute, "/_fake/faults", {"wait_polls": 1, "polls": 3})
    slow = insert_reservation(compute, auth, reservation("slow")).json
    statuses = [call("POST", slow["selfLink"] + "/wait", headers=auth).json["status"]
                for _ in range(4)]
    assert statuses == ["RUNNING", "RUNNING", "RUNNING", "DONE"]
    missing = call("GET", f"{compute.url}{ZONE_PATH}/operations/operation-1-nope", headers=auth)
    assert missing.status == 404 and error_of(missing)["errors"][0]["reason"] == "notFound"
    wrong_zone = call("GET", op["selfLink"].replace(ZONE, "us-central1-b"), headers=auth)
    assert wrong_zone.status == 404, "an operation is only found in its own zone"
    regional = call("GET", f"{compute.url}{REGION_PATH}/operations/{op['name']}", headers=auth)
    assert regional.status == 404


def test_fail_next_operation_setting(compute, auth):
    control(compute, "/_fake/faults", {"fail_next_operation": {
        "code": "QUOTA_EXCEEDED", "message": "Quota 'NVIDIA_H100_GPUS' exceeded.",
        "http": 403, "httpMessage": "FORBIDDEN"}})
    op = insert_reservation(compute, auth).json
    done = poll(op["selfLink"], auth)[-1]
    assert done["error"] == {"errors": [{"code": "QUOTA_EXCEEDED",
                                         "message": "Quota 'NVIDIA_H100_GPUS' exceeded."}]}
    assert done["httpErrorStatusCode"] == 403
    assert state(compute)["reservations"] == []


# --- authentication -----------------------------------------------------------------------

def test_auth_is_refused_without_a_valid_token_with_a_compute_scope(compute, account, oauth,
                                                                    registry):
    """Tokens as the GKE fake checks them (`TokenRegistry.google_bearer`), with Compute's
    scopes (cloud-platform/compute; compute.readonly for reads) and audience."""
    url = f"{compute.url}{ZONE_PATH}/reservations"
    missing = call("GET", url)
    assert missing.status == 401
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="https://accounts.google.com/"'
    error = error_of(missing)
    assert error["status"] == "UNAUTHENTICATED" and error["code"] == 401
    assert error["message"].startswith("Request is missing required authentication credential")
    assert error["errors"] == [{"message": "Login Required.", "domain": "global",
                                "reason": "required", "location": "Authorization",
                                "locationType": "header"}]
    assert error["details"][0]["reason"] == "CREDENTIALS_MISSING"
    stranger = GoogleOAuth(TokenRegistry()).create_service_account(PROJECT, "stranger")
    forged = call("GET", url, headers={"Authorization": "Bearer " + stranger.self_signed_jwt()})
    assert forged.status == 401 and error_of(forged)["status"] == "UNAUTHENTICATED"
    assert error_of(forged)["errors"][0]["reason"] == "authError"
    azure = registry.issue("azure", "https://management.azure.com", "client", "tenant").token
    assert call("GET", url, headers={"Authorization": f"Bearer {azure}"}).status == 401
    storage = account.self_signed_jwt(
        scope="https://www.googleapis.com/auth/devstorage.read_only")
    denied = call("GET", url, headers={"Authorization": f"Bearer {storage}"})
    assert denied.status == 403 and error_of(denied)["status"] == "PERMISSION_DENIED"
    assert error_of(denied)["details"][0]["reason"] == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    readonly = {"Authorization": "Bearer " + account.self_signed_jwt(
        scope="https://www.googleapis.com/auth/compute.readonly")}
    assert call("GET", url, headers=readonly).status == 200
    write = call("POST", url, reservation(), readonly)
    assert write.status == 403, "compute.readonly cannot insert"
    form = urlencode({"grant_type": JWT_BEARER, "assertion": account.assertion(
        oauth.token_uri, scope="https://www.googleapis.com/auth/compute")}).encode()
    with urllib.request.urlopen(urllib.request.Request(oauth.token_uri, data=form),
                                timeout=10) as r:
        token = json.loads(r.read())["access_token"]
    opaque = call("POST", url, reservation(), {"Authorization": f"Bearer {token}"})
    assert opaque.status == 200 and opaque.json["user"] == account.email
    audience = account.sign_jwt({"iss": account.email, "sub": account.email,
                                 "aud": "https://compute.googleapis.com/",
                                 "iat": int(dt.datetime.now().timestamp()) - 10,
                                 "exp": int(dt.datetime.now().timestamp()) + 3600})
    assert call("GET", url, headers={"Authorization": f"Bearer {audience}"}).status == 200
    gke_only = account.sign_jwt({"iss": account.email, "aud": "https://container.googleapis.com/",
                                 "iat": int(dt.datetime.now().timestamp()) - 10,
                                 "exp": int(dt.datetime.now().timestamp()) + 3600})
    assert call("GET", url, headers={"Authorization": f"Bearer {gke_only}"}).status == 403
    assert [r["auth"] for r in state(compute)["requests"]] == [
        None, None, None, None, "self-signed-jwt", None, "opaque", "self-signed-jwt", None]
    assert len(state(compute)["reservations"]) == 1


# --- faults -------------------------------------------------------------------------------

def test_throttling_fault_answers_429_resource_exhausted_then_success(compute, auth):
    control(compute, "/_fake/faults", {"method": "POST", "path": "/reservations$",
                                       "status": 429, "count": 1, "retry_after": 2})
    throttled = insert_reservation(compute, auth)
    assert throttled.status == 429 and throttled.headers["Retry-After"] == "2"
    error = error_of(throttled)
    assert error["code"] == 429 and error["status"] == "RESOURCE_EXHAUSTED"
    assert error["message"].startswith("Quota exceeded for quota metric")
    assert error["errors"][0]["reason"] == "rateLimitExceeded"
    assert error["details"][0]["reason"] == "RATE_LIMIT_EXCEEDED"
    assert state(compute)["reservations"] == []
    assert insert_reservation(compute, auth).status == 200
    assert [r["status"] for r in state(compute)["requests"]] == [429, 200]


def test_compute_style_403_rate_limit_fault(compute, auth):
    control(compute, "/_fake/faults", {"method": "GET", "path": "/reservations$",
                                       "status": 403})
    reply = call("GET", f"{compute.url}{ZONE_PATH}/reservations", headers=auth)
    assert reply.status == 403
    assert error_of(reply)["errors"][0]["reason"] == "rateLimitExceeded"
    assert call("GET", f"{compute.url}{ZONE_PATH}/reservations", headers=auth).status == 200


def test_lost_answer_on_insert_then_the_retry_with_its_request_id(compute, auth):
    control(compute, "/_fake/faults", {"method": "POST", "path": "/reservations$",
                                       "status": 503, "lose_answer": True})
    rid = str(uuid.uuid4())
    lost = insert_reservation(compute, auth, request_id=rid)
    assert lost.status == 503 and error_of(lost)["status"] == "UNAVAILABLE"
    stored = state(compute)
    assert [r["name"] for r in stored["reservations"]] == ["gpu-h100"], "it was created"
    assert stored["requests"][0]["lost_status"] == 200
    retry = insert_reservation(compute, auth, request_id=rid)
    assert retry.status == 200 and retry.json["name"] == stored["operations"][0]["name"]
    assert "error" not in poll(retry.json["selfLink"], auth)[-1]
    assert len(state(compute)["operations"]) == 1
    blind = insert_reservation(compute, auth, request_id=str(uuid.uuid4()))
    assert blind.status == 409, "without its requestId the retry collides with itself"


def test_reset_forgets_everything(compute, auth):
    create_reservation(compute, auth)
    control(compute, "/_fake/capacity", {"zone": ZONE, "machine_type": "g2-standard-8",
                                         "available": False})
    assert call("POST", compute.url + "/_fake/reset").status == 200
    after = state(compute)
    assert after["reservations"] == [] and after["operations"] == []
    assert after["no_capacity"] == [] and after["requests"] == []
