"""The EC2 spot fake (`fakes/aws/ec2_spot.py`) in front of a real moto server, driven by a real
boto3 EC2 client (static "testing" credentials, no retries), so requests and answers go
through botocore's own Query serializer and XML parser. Stored state is read through
`GET /_fake/state`; the fake's clock is set through `/_fake/clock`."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import urllib.error
from pathlib import Path

import botocore
import pytest

from fakes.aws.ec2_spot import SPOT_PARAMS, Ec2Spot
from fakes.aws.test_fake_ec2_commitments import (NOW, client, control, ec2,  # noqa: F401
                                                  error_of, raw, started, state)

REGION = "us-east-1"
DLAMI = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) "
OWNER_KEY = "gpu.tf/instance"
SPOT_STOP = {"MarketType": "spot", "SpotOptions": {"SpotInstanceType": "persistent",
                                                   "InstanceInterruptionBehavior": "stop"}}
SPOT_DELETE = {"MarketType": "spot", "SpotOptions": {"SpotInstanceType": "one-time",
                                                     "InstanceInterruptionBehavior": "terminate"}}


# --- helpers --------------------------------------------------------------------------------

def seed_images(fake, *images, region: str = REGION) -> list[dict]:
    return control(fake, "/_fake/images", {"region": region, "images": list(images)})["images"]


def launch(client, ami: str, key: str = "gpu-1", market=SPOT_STOP, **overrides) -> dict:
    """RunInstances as the provider's adapter calls it."""
    args = {"ImageId": ami, "InstanceType": "g5.xlarge", "MinCount": 1, "MaxCount": 1,
            "ClientToken": f"tok-{key}", "Placement": {"AvailabilityZone": "us-east-1a"},
            "BlockDeviceMappings": [{"DeviceName": "/dev/sda1", "Ebs": {
                "VolumeSize": 100, "VolumeType": "gp3", "DeleteOnTermination": True}}],
            "TagSpecifications": [{"ResourceType": kind, "Tags": [
                {"Key": OWNER_KEY, "Value": key}, {"Key": "team", "Value": "ml"}]}
                for kind in ("instance", "volume", "spot-instances-request")],
            "UserData": "#!/bin/bash\necho hello\n", "InstanceMarketOptions": market}
    args.update(overrides)
    args = {k: v for k, v in args.items() if v is not None}
    return client.run_instances(**args)["Instances"][0]


def describe(client, instance_id: str) -> dict:
    (r,) = client.describe_instances(InstanceIds=[instance_id])["Reservations"]
    return r["Instances"][0]


def request_of(client, request_id: str) -> dict:
    (r,) = client.describe_spot_instance_requests(
        SpotInstanceRequestIds=[request_id])["SpotInstanceRequests"]
    return r


def tags(item) -> dict:
    return {t["Key"]: t["Value"] for t in item.get("Tags", [])}


# --- fixtures -------------------------------------------------------------------------------

@pytest.fixture
def fake(moto):
    yield from started(Ec2Spot, moto)


@pytest.fixture
def ami(fake) -> str:
    """Two DLAMI releases; the newer one."""
    _, newer = seed_images(fake, {"name": DLAMI + "20261001", "creation_date": "2026-10-02"},
                           {"name": DLAMI + "20261201", "creation_date": "2026-12-02"})
    return newer["imageId"]


# --- the botocore model ---------------------------------------------------------------------

def test_parameter_names_are_those_of_the_botocore_model():
    path = Path(botocore.__file__).parent / "data/ec2/2016-11-15/service-2.json.gz"
    model = json.loads(gzip.decompress(path.read_bytes()))
    for action, (emulated, not_emulated) in SPOT_PARAMS.items():
        shape = model["shapes"][model["operations"][action]["input"]["shape"]]
        names = {m.get("locationName", name)[:1].upper() + m.get("locationName", name)[1:]
                 for name, m in shape["members"].items()}
        assert emulated | not_emulated == names, action
        assert not emulated & not_emulated


# --- images ---------------------------------------------------------------------------------

def test_the_dlami_filter_finds_the_seeded_images_and_the_newest_wins(fake, client):
    seed_images(fake, {"name": DLAMI + "20261001", "creation_date": "2026-10-02T01:02:03Z"},
                {"name": DLAMI + "20261201", "creation_date": "2026-12-02T01:02:03Z"},
                {"name": "Deep Learning ARM64 Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) "
                         "20261215", "creation_date": "2026-12-16", "architecture": "arm64"},
                {"name": DLAMI + "20261220", "creation_date": "2026-12-21",
                 "architecture": "arm64"},
                {"name": "someone else's " + DLAMI + "20261230",
                 "creation_date": "2026-12-31", "owner_id": "111122223333",
                 "owner_alias": None})
    images = client.describe_images(Owners=["amazon"], Filters=[
        {"Name": "name", "Values": [DLAMI + "*"]},
        {"Name": "architecture", "Values": ["x86_64"]}])["Images"]
    assert sorted(i["Name"] for i in images) == [DLAMI + "20261001", DLAMI + "20261201"]
    newest = max(images, key=lambda i: i["CreationDate"])
    assert newest["Name"] == DLAMI + "20261201"
    assert newest["CreationDate"] == "2026-12-02T01:02:03.000Z"
    assert (newest["RootDeviceName"], newest["ImageOwnerAlias"], newest["OwnerId"],
            newest["State"]) == ("/dev/sda1", "amazon", "898082745236", "available")
    assert newest["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 75
    # By id; moto's own AMIs still answer.
    assert [i["Name"] for i in client.describe_images(ImageIds=[newest["ImageId"]])["Images"]] \
        == [DLAMI + "20261201"]
    assert len(client.describe_images(Owners=["amazon"])["Images"]) > 5
    code, _, _ = error_of(lambda: client.describe_images(ImageIds=["ami-0123456789abcdef0"]))
    assert code.startswith("InvalidAMIID")


# --- the reclaim cycle ----------------------------------------------------------------------

def test_a_reclaimed_persistent_instance_is_stopped_and_ec2_restarts_it(fake, client, ami):
    first = launch(client, ami)
    iid, sir = first["InstanceId"], first["SpotInstanceRequestId"]
    assert first["State"] == {"Code": 0, "Name": "pending"}
    assert first["InstanceLifecycle"] == "spot" and sir.startswith("sir-")
    running = describe(client, iid)
    assert running["State"]["Name"] == "running"
    assert (running["ImageId"], running["InstanceType"], running["RootDeviceName"],
            running["Placement"]["AvailabilityZone"]) == (ami, "g5.xlarge", "/dev/sda1",
                                                          "us-east-1a")
    assert running["SubnetId"].startswith("subnet-")  # the zone's default subnet in moto
    assert tags(running) == {OWNER_KEY: "gpu-1", "team": "ml"}
    assert abs(running["LaunchTime"] - NOW) < dt.timedelta(minutes=1)  # the fake's clock
    (bdm,) = running["BlockDeviceMappings"]
    vol = bdm["Ebs"]["VolumeId"]
    assert (bdm["DeviceName"], bdm["Ebs"]["Status"], bdm["Ebs"]["DeleteOnTermination"]) == \
        ("/dev/sda1", "attached", True)
    (volume,) = client.describe_volumes(VolumeIds=[vol])["Volumes"]
    assert (volume["Size"], volume["VolumeType"], volume["Iops"], volume["State"]) == \
        (100, "gp3", 3000, "in-use")
    assert tags(volume)[OWNER_KEY] == "gpu-1"
    request = request_of(client, sir)
    assert (request["Type"], request["State"], request["Status"]["Code"],
            request["InstanceInterruptionBehavior"], request["InstanceId"]) == \
        ("persistent", "active", "fulfilled", "stop", iid)
    assert tags(request)[OWNER_KEY] == "gpu-1"

    # EC2 interrupts it; the type stays short for the next two attempts.
    control(fake, "/_fake/reclaim", {"instance_id": iid, "short": 2})
    assert request_of(client, sir)["Status"]["Code"] == "marked-for-stop"
    stopped = describe(client, iid)  # tick 1: stopping -> stopped
    assert stopped["State"] == {"Code": 80, "Name": "stopped"}
    assert stopped["StateReason"]["Code"] == "Server.SpotInstanceShutdown"
    assert stopped["StateReason"]["Message"].startswith("Server.SpotInstanceShutdown: ")
    # Only EC2 may restart it.
    code, status, message = error_of(lambda: client.start_instances(InstanceIds=[iid]))
    assert (code, status) == ("IncorrectSpotRequestState", 400)
    describe(client, iid)  # tick 2: the request follows, one tick late
    request = request_of(client, sir)
    assert (request["State"], request["Status"]["Code"]) == \
        ("disabled", "instance-stopped-no-capacity")
    code, _, message = error_of(lambda: client.start_instances(InstanceIds=[iid]))
    assert code == "IncorrectSpotRequestState" and "Only Amazon EC2" in message
    # Ticks 3 and 4: no capacity, it stays stopped; tick 5: EC2 restarts it.
    seen = [describe(client, iid)["State"]["Name"] for _ in range(4)]
    assert seen == ["stopped", "stopped", "pending", "running"]
    back = describe(client, iid)
    assert back["InstanceId"] == iid and back["BlockDeviceMappings"][0]["Ebs"]["VolumeId"] == vol
    assert "StateReason" not in back
    assert client.describe_volumes(VolumeIds=[vol])["Volumes"][0]["State"] == "in-use"
    request = request_of(client, sir)
    assert (request["State"], request["Status"]["Code"], request["InstanceId"]) == \
        ("active", "fulfilled", iid)
    assert state(fake)["regions"][REGION]["capacity_short"] == {}


def test_reclaim_holds_until_capacity_is_back_by_default(fake, client, ami):
    iid = launch(client, ami)["InstanceId"]
    describe(client, iid)  # running
    control(fake, "/_fake/faults", {"tick_on_describe": False})
    control(fake, "/_fake/reclaim", {"instance_id": iid})
    for _ in range(5):
        control(fake, "/_fake/tick")
    assert describe(client, iid)["State"]["Name"] == "stopped"
    # A new launch of that type fails too while it is short.
    code, status, message = error_of(lambda: launch(client, ami, key="other"))
    assert (code, status) == ("InsufficientInstanceCapacity", 500)
    assert message == "There is no Spot capacity available that matches your request."
    control(fake, "/_fake/capacity", {"region": REGION, "instance_type": "g5.xlarge",
                                      "short": 0})
    control(fake, "/_fake/tick")
    assert describe(client, iid)["State"]["Name"] == "pending"


def test_a_person_stop_gives_the_person_reason_and_ec2_leaves_it(fake, client, ami):
    first = launch(client, ami)
    iid, sir = first["InstanceId"], first["SpotInstanceRequestId"]
    describe(client, iid)
    (change,) = client.stop_instances(InstanceIds=[iid])["StoppingInstances"]
    assert (change["PreviousState"]["Name"], change["CurrentState"]["Name"]) == \
        ("running", "stopping")
    code, _, _ = error_of(lambda: client.start_instances(InstanceIds=[iid]))
    assert code == "IncorrectInstanceState"  # still stopping
    stopped = describe(client, iid)
    assert stopped["State"]["Name"] == "stopped"
    assert stopped["StateReason"] == {"Code": "Client.UserInitiatedShutdown",
                                      "Message": "Client.UserInitiatedShutdown: User initiated "
                                                 "shutdown"}
    assert stopped["StateTransitionReason"].startswith("User initiated (2027-03-01 00:0")
    assert stopped["StateTransitionReason"].endswith(" GMT)")
    # The request is still active (marked-for-stop) for one tick: a start is refused.
    code, _, message = error_of(lambda: client.start_instances(InstanceIds=[iid]))
    assert code == "IncorrectSpotRequestState" and "appropriate state" in message
    for _ in range(4):
        assert describe(client, iid)["State"]["Name"] == "stopped"
    request = request_of(client, sir)
    assert (request["State"], request["Status"]["Code"]) == ("disabled",
                                                             "instance-stopped-by-user")
    (change,) = client.start_instances(InstanceIds=[iid])["StartingInstances"]
    assert change["CurrentState"]["Name"] == "pending"
    assert describe(client, iid)["State"]["Name"] == "running"
    assert request_of(client, sir)["Status"]["Code"] == "fulfilled"


def test_client_token_makes_run_instances_idempotent(fake, client, ami):
    a = launch(client, ami, key="idem")
    b = launch(client, ami, key="idem")
    assert a["InstanceId"] == b["InstanceId"]
    code, _, _ = error_of(lambda: launch(client, ami, key="idem", InstanceType="g5.2xlarge"))
    assert code == "IdempotentParameterMismatch"
    # A lost answer: the retry with the same token finds the first launch.
    control(fake, "/_fake/faults", {"path": "^RunInstances$", "status": 503,
                                    "lose_answer": True})
    assert error_of(lambda: launch(client, ami, key="lost"))[1] == 503
    retried = launch(client, ami, key="lost")
    found = client.describe_instances(Filters=[{"Name": f"tag:{OWNER_KEY}",
                                                "Values": ["lost"]}])["Reservations"]
    assert [r["Instances"][0]["InstanceId"] for r in found] == [retried["InstanceId"]]


def test_capacity_short_fails_launches_and_starts(fake, client, ami):
    control(fake, "/_fake/capacity", {"region": REGION, "instance_type": "g5.xlarge",
                                      "short": 1})
    code, status, _ = error_of(lambda: launch(client, ami, market=None, key="od"))
    assert (code, status) == ("InsufficientInstanceCapacity", 500)
    od = launch(client, ami, market=None, key="od")
    assert "InstanceLifecycle" not in od and "SpotInstanceRequestId" not in od
    describe(client, od["InstanceId"])  # pending -> running
    client.stop_instances(InstanceIds=[od["InstanceId"]])
    describe(client, od["InstanceId"])
    control(fake, "/_fake/capacity", {"region": REGION, "instance_type": "g5.xlarge",
                                      "short": 1})
    code, _, message = error_of(lambda: client.start_instances(InstanceIds=[od["InstanceId"]]))
    assert code == "InsufficientInstanceCapacity" and "us-east-1a" in message
    client.start_instances(InstanceIds=[od["InstanceId"]])
    assert describe(client, od["InstanceId"])["State"]["Name"] == "running"


# --- reclaim = delete, termination, cancellation ---------------------------------------------

def test_a_one_time_spot_instance_is_terminated_by_a_reclaim(fake, client, ami):
    first = launch(client, ami, market=SPOT_DELETE, key="del")
    iid, sir = first["InstanceId"], first["SpotInstanceRequestId"]
    vol = describe(client, iid)["BlockDeviceMappings"][0]["Ebs"]["VolumeId"]
    code, _, message = error_of(lambda: client.stop_instances(InstanceIds=[iid]))
    assert code == "UnsupportedOperation" and "one-time" in message
    control(fake, "/_fake/reclaim", {"instance_id": iid, "short": 0})
    gone = describe(client, iid)
    assert gone["State"]["Name"] == "terminated"
    assert gone["StateReason"]["Code"] == "Server.SpotInstanceTermination"
    describe(client, iid)
    request = request_of(client, sir)
    assert (request["Type"], request["State"], request["Status"]["Code"]) == \
        ("one-time", "closed", "instance-terminated-no-capacity")
    code, _, _ = error_of(lambda: client.describe_volumes(VolumeIds=[vol]))
    assert code == "InvalidVolume.NotFound"


def test_terminating_without_cancelling_reopens_the_persistent_request(fake, client, ami):
    first = launch(client, ami, key="reopen")
    iid, sir = first["InstanceId"], first["SpotInstanceRequestId"]
    describe(client, iid)
    client.terminate_instances(InstanceIds=[iid])
    request = request_of(client, sir)
    assert (request["State"], request["Status"]["Code"]) == ("open",
                                                             "instance-terminated-by-user")
    assert describe(client, iid)["State"]["Name"] == "terminated"
    describe(client, iid)
    assert request_of(client, sir)["Status"]["Code"] == "pending-evaluation"
    describe(client, iid)  # EC2 launches a new instance for the open request
    request = request_of(client, sir)
    assert request["State"] == "active" and request["InstanceId"] != iid
    # Cancelling the request leaves the new running instance alone ...
    (cancelled,) = client.cancel_spot_instance_requests(
        SpotInstanceRequestIds=[sir])["CancelledSpotInstanceRequests"]
    assert cancelled == {"SpotInstanceRequestId": sir, "State": "cancelled"}
    assert request_of(client, sir)["Status"]["Code"] == "request-canceled-and-instance-running"
    assert describe(client, request["InstanceId"])["State"]["Name"] == "running"


def test_cancelling_the_request_of_a_stopped_instance_terminates_it(fake, client, ami):
    first = launch(client, ami, key="cancel")
    iid, sir = first["InstanceId"], first["SpotInstanceRequestId"]
    describe(client, iid)
    control(fake, "/_fake/reclaim", {"instance_id": iid})
    describe(client, iid)
    client.cancel_spot_instance_requests(SpotInstanceRequestIds=[sir])
    assert request_of(client, sir)["Status"]["Code"] == "instance-terminated-by-service"
    assert describe(client, iid)["State"]["Name"] == "terminated"


# --- tags, filters, paging, moto's instances ------------------------------------------------

def test_tag_filters_paging_and_tag_changes(fake, client, ami, moto):
    ids = [launch(client, ami, key=f"page-{n}", ClientToken=f"page-{n}",
                  TagSpecifications=[{"ResourceType": "instance", "Tags": [
                      {"Key": OWNER_KEY, "Value": "pool"}, {"Key": "n", "Value": str(n)}]}]
                  )["InstanceId"] for n in range(6)]
    client.describe_instances()  # pending -> running
    client.stop_instances(InstanceIds=[ids[0]])
    owned = [{"Name": f"tag:{OWNER_KEY}", "Values": ["pool"]}]
    page = client.describe_instances(Filters=owned, MaxResults=5)
    rest = client.describe_instances(Filters=owned, MaxResults=5, NextToken=page["NextToken"])
    assert "NextToken" not in rest
    found = [r["Instances"][0]["InstanceId"] for r in page["Reservations"] + rest["Reservations"]]
    assert sorted(found) == sorted(ids)
    running = client.describe_instances(Filters=owned + [
        {"Name": "instance-state-name", "Values": ["running"]}])["Reservations"]
    assert sorted(r["Instances"][0]["InstanceId"] for r in running) == sorted(ids[1:])
    assert error_of(lambda: client.describe_instances(InstanceIds=ids[:1], MaxResults=5))[0] \
        == "InvalidParameterCombination"
    # CreateTags/DeleteTags on the fake's instances show in DescribeInstances.
    client.create_tags(Resources=[ids[1]], Tags=[{"Key": "extra", "Value": "1"}])
    client.delete_tags(Resources=[ids[1]], Tags=[{"Key": "n"}])
    assert tags(describe(client, ids[1])) == {OWNER_KEY: "pool", "extra": "1"}
    # An instance launched in moto itself is listed and can be stopped through the fake.
    moto_ec2 = moto.client("ec2", REGION)
    image = moto_ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    other = moto_ec2.run_instances(ImageId=image, InstanceType="t3.micro", MinCount=1,
                                   MaxCount=1)["Instances"][0]["InstanceId"]
    listed = [i["InstanceId"] for r in client.describe_instances()["Reservations"]
              for i in r["Instances"]]
    assert other in listed and set(ids) <= set(listed)
    changes = client.stop_instances(InstanceIds=[other, ids[2]])["StoppingInstances"]
    assert {c["InstanceId"] for c in changes} == {other, ids[2]}
    client.create_tags(Resources=[other], Tags=[{"Key": OWNER_KEY, "Value": "moto"}])
    mine = client.describe_instances(Filters=[{"Name": f"tag:{OWNER_KEY}",
                                               "Values": ["moto"]}])["Reservations"]
    assert [r["Instances"][0]["InstanceId"] for r in mine] == [other]
    assert error_of(lambda: client.describe_instances(
        InstanceIds=["i-0123456789abcdef0"]))[0] == "InvalidInstanceID.NotFound"


# --- refusals -------------------------------------------------------------------------------

def test_unknown_and_not_emulated_parameters_are_refused(fake, client, ami):
    status, body = raw(fake, {"Action": "DescribeInstances", "Bogus": "1"})
    assert status == 400 and "<Code>UnknownParameter</Code>" in body
    status, body = raw(fake, {"Action": "RunInstances", "ImageId": ami, "MinCount": "1",
                              "MaxCount": "1", "LaunchTemplate.LaunchTemplateId": "lt-1"})
    assert status == 400 and "<Code>UnsupportedOperation</Code>" in body
    status, body = raw(fake, {"Action": "RunInstances", "ImageId": ami, "MinCount": "1",
                              "MaxCount": "1", "Placement.HostId": "h-1"})
    assert status == 400 and "<Code>UnsupportedOperation</Code>" in body
    status, body = raw(fake, {"Action": "RunInstances", "MinCount": "1", "MaxCount": "1"})
    assert status == 400 and "<Code>MissingParameter</Code>" in body
    code, _, message = error_of(lambda: client.describe_instances(
        Filters=[{"Name": "no-such-filter", "Values": ["x"]}]))
    assert (code, message) == ("InvalidParameterValue", "The filter 'no-such-filter' is invalid")
    status, body = raw(fake, {"Action": "DescribeInstances"}, sign=False)
    assert status == 401 and "<Code>AuthFailure</Code>" in body


def test_launch_parameters_are_validated(fake, client, ami):
    bad = {"MarketType": "spot", "SpotOptions": {"SpotInstanceType": "one-time",
                                                 "InstanceInterruptionBehavior": "stop"}}
    code, _, message = error_of(lambda: launch(client, ami, market=bad, key="v1"))
    assert code == "InvalidParameterCombination" and "'one-time'" in message
    code, _, message = error_of(lambda: launch(client, ami, key="v2", BlockDeviceMappings=[
        {"DeviceName": "/dev/sda1", "Ebs": {"VolumeSize": 30, "VolumeType": "gp3"}}]))
    assert code == "InvalidBlockDeviceMapping" and ">= 75GB" in message
    assert error_of(lambda: launch(client, "ami-0123456789abcdef0", key="v3"))[0] == \
        "InvalidAMIID.NotFound"
    assert error_of(lambda: launch(client, ami, key="v4", InstanceType="g5.huge"))[0] == \
        "InvalidParameterValue"
    assert error_of(lambda: launch(client, ami, key="v5", SubnetId="subnet-0123456789abcdef0")
                    )[0] == "InvalidSubnetID.NotFound"
    assert error_of(lambda: launch(client, ami, key="v6", KeyName="nope"))[0] == \
        "InvalidKeyPair.NotFound"
    assert error_of(lambda: launch(client, ami, key="v7", Placement={
        "AvailabilityZone": "us-east-1z"}))[0] == "InvalidParameterValue"
    assert state(fake)["regions"][REGION]["instances"] == []
    entry = [e for e in state(fake)["requests"] if e["action"] == "RunInstances"][0]
    assert entry["params"]["UserData"] == "<redacted>"


# --- GetSpotPlacementScores -----------------------------------------------------------------

def set_score(fake, region: str, zone_id, instance_type: str, score) -> dict:
    return control(fake, "/_fake/placement_scores", {
        "region": region, "zone_id": zone_id, "instance_type": instance_type, "score": score})


def control_status(fake, path: str, body: dict) -> int:
    try:
        control(fake, path, body)
    except urllib.error.HTTPError as e:
        return e.code
    return 200


def zone_ids(fake, region: str) -> list[str]:
    """The zone ids of `region` as the fake and moto list them (forwarded to moto)."""
    zones = ec2(fake, region).describe_availability_zones()["AvailabilityZones"]
    return sorted(z["ZoneId"] for z in zones)


def scores(client, **args) -> list[dict]:
    return client.get_spot_placement_scores(TargetCapacity=2, **args)["SpotPlacementScores"]


def test_placement_scores_by_region_and_by_zone(fake, client):
    east, west = zone_ids(fake, "us-east-1"), zone_ids(fake, "us-west-2")
    set_score(fake, "us-east-1", east[0], "g5.xlarge", 9)
    set_score(fake, "us-east-1", east[1], "g5.xlarge", 4)
    set_score(fake, "us-east-1", east[1], "g6.xlarge", 6)
    set_score(fake, "us-west-2", None, "g5.xlarge", 7)   # a region-level score
    set_score(fake, "us-west-2", west[0], "g5.xlarge", 3)
    set_score(fake, "eu-west-1", None, "p5.48xlarge", 10)  # a type nobody asks for
    types = ["g5.xlarge", "g6.xlarge"]
    places = ["us-east-1", "us-west-2", "eu-west-1", "ap-south-1"]
    # Regions: the region-level score, else the best zone's; unscored places left out.
    assert scores(client, InstanceTypes=types, RegionNames=places) == [
        {"Region": "us-east-1", "Score": 9}, {"Region": "us-west-2", "Score": 7}]
    # Zones: per zone the best requested type's score, best first.
    assert scores(client, InstanceTypes=types, RegionNames=places,
                  SingleAvailabilityZone=True, TargetCapacityUnitType="vcpu") == [
        {"Region": "us-east-1", "AvailabilityZoneId": east[0], "Score": 9},
        {"Region": "us-east-1", "AvailabilityZoneId": east[1], "Score": 6},
        {"Region": "us-west-2", "AvailabilityZoneId": west[0], "Score": 3}]
    # Only g5.xlarge: us-east-1's second zone falls to 4.
    assert scores(client, InstanceTypes=["g5.xlarge"], SingleAvailabilityZone=True)[1] == \
        {"Region": "us-east-1", "AvailabilityZoneId": east[1], "Score": 4}
    # No RegionNames: every region with a score for the requested types.
    assert scores(client, InstanceTypes=["p5.48xlarge"]) == [{"Region": "eu-west-1",
                                                               "Score": 10}]
    assert scores(client, InstanceTypes=["m5.large"]) == []
    # The raw XML carries the botocore model's element names.
    status, body = raw(fake, {"Action": "GetSpotPlacementScores", "InstanceType.1": "g5.xlarge",
                              "TargetCapacity": "1", "RegionName.1": "us-west-2"})
    assert status == 200 and "<GetSpotPlacementScoresResponse" in body
    assert "<spotPlacementScoreSet><item><region>us-west-2</region><score>7</score></item>" \
        "</spotPlacementScoreSet>" in body
    requests = state(fake)["placement_score_requests"]
    assert requests[1] == {"instance_types": types, "regions": places, "single_az": True,
                           "target_capacity": 2, "target_capacity_unit_type": "vcpu",
                           "endpoint_region": REGION}
    assert state(fake)["placement_scores"][0] == {
        "region": "eu-west-1", "zone_id": None, "instance_type": "p5.48xlarge", "score": 10}


def test_placement_scores_keep_the_top_ten_and_page(fake, client):
    regions = ["us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1",
               "eu-west-1", "eu-west-2", "eu-central-1", "ap-south-1", "ap-northeast-1",
               "ap-southeast-1", "sa-east-1"]
    for n, region in enumerate(regions):
        set_score(fake, region, None, "g5.xlarge", 10 - n if n < 10 else 1)
    got = scores(client, InstanceTypes=["g5.xlarge"])
    assert len(got) == 10
    assert [g["Score"] for g in got] == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    assert got[-1]["Region"] == "ap-northeast-1"  # of the three 1s, the first by name
    page = client.get_spot_placement_scores(TargetCapacity=1, InstanceTypes=["g5.xlarge"],
                                            MaxResults=10)
    assert len(page["SpotPlacementScores"]) == 10 and "NextToken" not in page
    pages = client.get_paginator("get_spot_placement_scores").paginate(
        TargetCapacity=1, InstanceTypes=["g5.xlarge"], PaginationConfig={"PageSize": 10})
    assert sum(len(p["SpotPlacementScores"]) for p in pages) == 10
    loose = ec2(fake, validate=False)
    code, _, message = error_of(lambda: loose.get_spot_placement_scores(
        TargetCapacity=1, InstanceTypes=["g5.xlarge"], MaxResults=5))
    assert code == "InvalidParameterValue" and "between 10 and 1000" in message
    assert error_of(lambda: client.get_spot_placement_scores(
        TargetCapacity=1, InstanceTypes=["g5.xlarge"], NextToken="bogus"))[0] == \
        "InvalidNextToken"


def test_placement_score_refusals(fake, client):
    base = {"Action": "GetSpotPlacementScores", "InstanceType.1": "g5.xlarge"}
    status, body = raw(fake, base)
    assert status == 400 and "<Code>MissingParameter</Code>" in body and "TargetCapacity" in body
    loose = ec2(fake, validate=False)
    assert error_of(lambda: loose.get_spot_placement_scores(
        TargetCapacity=0, InstanceTypes=["g5.xlarge"]))[0] == "InvalidParameterValue"
    for extra in ({"TargetCapacityUnitType": "gpus"}, {"SingleAvailabilityZone": "maybe"},
                  {"RegionName.1": "Mars"}, {"InstanceType.2": "G5 XL"},
                  {f"RegionName.{n}": "us-east-1" for n in range(1, 12)}):
        status, body = raw(fake, {**base, "TargetCapacity": "1", **extra})
        assert status == 400 and "<Code>InvalidParameterValue</Code>" in body, extra
    status, body = raw(fake, {"Action": "GetSpotPlacementScores", "TargetCapacity": "1"})
    assert status == 400 and "<Code>MissingParameter</Code>" in body
    status, body = raw(fake, {**base, "TargetCapacity": "1", "IncludeLocalZones": "true"})
    assert status == 400 and "<Code>UnsupportedOperation</Code>" in body
    status, body = raw(fake, {**base, "TargetCapacity": "1", "Bogus": "1"})
    assert status == 400 and "<Code>UnknownParameter</Code>" in body
    assert error_of(lambda: client.get_spot_placement_scores(
        TargetCapacity=1, InstanceTypes=["g5.xlarge"], DryRun=True))[0] == "DryRunOperation"
    assert state(fake)["placement_score_requests"] == []
    # The control endpoint checks what it is given.
    assert control_status(fake, "/_fake/placement_scores", {
        "region": "us-east-1", "zone_id": None, "instance_type": "g5.xlarge", "score": 11}) == 400
    assert control_status(fake, "/_fake/placement_scores", {
        "region": "us-east-1", "zone_id": "usw2-az1", "instance_type": "g5.xlarge",
        "score": 5}) == 400
    set_score(fake, "us-east-1", None, "g5.xlarge", 5)
    assert set_score(fake, "us-east-1", None, "g5.xlarge", None) == {"placement_scores": []}
