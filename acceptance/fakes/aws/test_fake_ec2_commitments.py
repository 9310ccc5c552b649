"""The EC2 capacity-commitment fake (`fakes/aws/ec2_commitments.py`) in front of a real moto
server, driven by a real boto3 EC2 client (static "testing" credentials, no retries), so
requests and answers go through botocore's own Query serializer and XML parser. Stored
state is read through `GET /_fake/state` and moto is checked through its own client.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import boto3
import botocore
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from aws_emulator import CREDENTIALS
from fakes.aws.ec2_commitments import PARAMS, Ec2Commitments

REGION = "us-east-1"
NOW = dt.datetime(2027, 3, 1, 0, 0, tzinfo=dt.timezone.utc)
DAY = dt.timedelta(days=1)


# --- helpers --------------------------------------------------------------------------------

def control(fake, path: str, body=None, method: str = "POST") -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(fake.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as r:
        return json.loads(r.read())


def state(fake) -> dict:
    return control(fake, "/_fake/state", method="GET")


def ec2(fake, region: str = REGION, validate: bool = True):
    return boto3.session.Session(
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=CREDENTIALS["AWS_SESSION_TOKEN"], region_name=region,
    ).client("ec2", endpoint_url=fake.url, config=Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        parameter_validation=validate))


def raw(fake, params: dict, method: str = "POST", sign: bool = True, region: str = REGION):
    """A Query request built by hand (botocore refuses to send unknown or missing
    parameters); signed with SigV4 unless `sign` is false. Returns (status, body)."""
    params = {"Version": "2016-11-15", **params}
    body = urlencode(params).encode() if method == "POST" else b""
    url = fake.url + "/" + ("" if method == "POST" else "?" + urlencode(params))
    request = AWSRequest(method=method, url=url, data=body, headers={
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    if sign:
        SigV4Auth(Credentials("testing", "testing", "testing"), "ec2", region).add_auth(request)
    prepared = urllib.request.Request(url, data=body or None, method=method,
                                      headers=dict(request.headers.items()))
    try:
        with urllib.request.urlopen(prepared, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def error_of(call) -> tuple[str, int, str]:
    with pytest.raises(ClientError) as info:
        call()
    err = info.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"], err["Error"]["Message"]


def offering(start: dt.datetime, **overrides) -> dict:
    spec = {"instance_type": "p5.48xlarge", "availability_zone": "us-east-1a",
            "instance_count": 2, "start": start.isoformat(), "duration_hours": 48,
            "upfront_fee": "12345.67"}
    spec.update(overrides)
    return spec


def seed(fake, *offerings, region: str = REGION) -> list[dict]:
    return control(fake, "/_fake/offerings", {"region": region,
                                              "offerings": list(offerings)})["offerings"]


def tag_spec(**tags) -> list[dict]:
    return [{"ResourceType": "capacity-reservation",
             "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]


def by_tag(client, key: str, value: str) -> list[dict]:
    return client.describe_capacity_reservations(
        Filters=[{"Name": f"tag:{key}", "Values": [value]}])["CapacityReservations"]


def create(client, **overrides) -> dict:
    args = {"InstanceType": "g5.xlarge", "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": "us-east-1b", "InstanceCount": 2}
    args.update(overrides)
    args = {k: v for k, v in args.items() if v is not None}
    return client.create_capacity_reservation(**args)["CapacityReservation"]


# --- fixtures -------------------------------------------------------------------------------

def started(cls, moto):
    """A fake of class `cls` in front of `moto`, its clock at NOW."""
    with cls(moto.url) as server:
        control(server, "/_fake/clock", {"now": NOW.isoformat()})
        yield server


@pytest.fixture
def fake(moto):
    yield from started(Ec2Commitments, moto)


@pytest.fixture
def client(fake):
    return ec2(fake)


@pytest.fixture
def block_start() -> dt.datetime:
    """A Capacity Block start three days ahead of the fake clock, at 11:30 UTC."""
    return (NOW + 3 * DAY).replace(hour=11, minute=30)


# --- the botocore model ---------------------------------------------------------------------

def test_parameter_names_are_those_of_the_botocore_model():
    path = Path(botocore.__file__).parent / "data/ec2/2016-11-15/service-2.json.gz"
    model = json.loads(gzip.decompress(path.read_bytes()))
    for action, (emulated, not_emulated) in PARAMS.items():
        shape = model["shapes"][model["operations"][action]["input"]["shape"]]
        names = {m.get("locationName", name)[:1].upper() + m.get("locationName", name)[1:]
                 for name, m in shape["members"].items()}
        assert emulated | not_emulated == names, action
        assert not emulated & not_emulated
    purchase = model["shapes"]["PurchaseCapacityBlockRequest"]["members"]
    assert "ClientToken" not in purchase  # so the fake has no idempotency token for it


# --- Capacity Block offerings ---------------------------------------------------------------

def test_offerings_are_listed_filtered_and_paged(fake, client, block_start):
    a, b, c, d = seed(fake, offering(block_start),
                      offering(block_start + 2 * DAY, availability_zone="us-east-1b"),
                      offering(block_start, instance_count=4, upfront_fee=99.5),
                      offering(block_start, instance_type="p4d.24xlarge", duration_hours=24))
    assert re.fullmatch(r"cb-[0-9a-f]{17}", a["capacityBlockOfferingId"])
    listed = client.describe_capacity_block_offerings(
        CapacityDurationHours=48, InstanceType="p5.48xlarge", InstanceCount=2
    )["CapacityBlockOfferings"]
    assert [o["CapacityBlockOfferingId"] for o in listed] == [
        a["capacityBlockOfferingId"], b["capacityBlockOfferingId"]]
    first = listed[0]
    assert first["AvailabilityZone"] == "us-east-1a" and first["InstanceCount"] == 2
    assert first["StartDate"] == block_start
    assert first["EndDate"] == block_start + 2 * DAY
    assert (first["CapacityBlockDurationHours"], first["UpfrontFee"], first["CurrencyCode"],
            first["Tenancy"]) == (48, "12345.67", "USD", "default")
    # InstanceCount matches exactly; a number fee is written with two decimals.
    four = client.describe_capacity_block_offerings(CapacityDurationHours=48, InstanceCount=4)
    assert [o["UpfrontFee"] for o in four["CapacityBlockOfferings"]] == ["99.50"]
    # Dates bound the offering's start and end.
    late = client.describe_capacity_block_offerings(
        CapacityDurationHours=48, InstanceCount=2, StartDateRange=block_start + DAY)
    assert [o["AvailabilityZone"] for o in late["CapacityBlockOfferings"]] == ["us-east-1b"]
    early = client.describe_capacity_block_offerings(
        CapacityDurationHours=48, InstanceCount=2, EndDateRange=block_start + 3 * DAY)
    assert [o["AvailabilityZone"] for o in early["CapacityBlockOfferings"]] == ["us-east-1a"]
    # The duration selects: only the 24-hour p4d offering.
    day = client.describe_capacity_block_offerings(CapacityDurationHours=24)
    assert [o["InstanceType"] for o in day["CapacityBlockOfferings"]] == ["p4d.24xlarge"]
    # Paging.
    page1 = client.describe_capacity_block_offerings(CapacityDurationHours=48, MaxResults=2)
    page2 = client.describe_capacity_block_offerings(CapacityDurationHours=48, MaxResults=2,
                                                     NextToken=page1["NextToken"])
    assert len(page1["CapacityBlockOfferings"]) == 2 and "NextToken" not in page2
    ids = [o["CapacityBlockOfferingId"] for o in
           page1["CapacityBlockOfferings"] + page2["CapacityBlockOfferings"]]
    assert sorted(ids) == sorted(o["capacityBlockOfferingId"] for o in (a, b, c))
    code, status, _ = error_of(lambda: client.describe_capacity_block_offerings(
        CapacityDurationHours=48, NextToken="bogus"))
    assert (code, status) == ("InvalidNextToken", 400)


def test_offering_requests_are_validated(fake, client, block_start):
    status, body = raw(fake, {"Action": "DescribeCapacityBlockOfferings"})
    assert status == 400 and "<Code>MissingParameter</Code>" in body
    assert "CapacityDurationHours" in body and body.count("<RequestID>") == 1
    for hours in (25, 15 * 24, 189 * 24, 0):
        code, status, _ = error_of(lambda: client.describe_capacity_block_offerings(
            CapacityDurationHours=hours))
        assert (code, status) == ("InvalidParameterValue", 400), hours
    for hours in (24, 14 * 24, 21 * 24, 182 * 24):  # 1-day steps to 14 days, 7-day to 182
        client.describe_capacity_block_offerings(CapacityDurationHours=hours)
    code, _, message = error_of(lambda: client.describe_capacity_block_offerings(
        CapacityDurationHours=24, StartDateRange=NOW + dt.timedelta(weeks=9)))
    assert code == "InvalidParameterValue" and "8 weeks" in message
    code, _, _ = error_of(lambda: client.describe_capacity_block_offerings(
        CapacityDurationHours=24, InstanceCount=65))
    assert code == "InvalidParameterValue"
    status, body = raw(fake, {"Action": "DescribeCapacityBlockOfferings",
                              "CapacityDurationHours": "24", "Bogus": "1"})
    assert status == 400 and "<Code>UnknownParameter</Code>" in body


def test_offerings_whose_start_has_passed_are_not_listed(fake, client, block_start):
    seed(fake, offering(block_start))
    control(fake, "/_fake/clock", {"advance_hours": 24 * 4})
    assert client.describe_capacity_block_offerings(
        CapacityDurationHours=48)["CapacityBlockOfferings"] == []


# --- purchases ------------------------------------------------------------------------------

def test_purchase_makes_a_capacity_block_reservation_that_follows_the_clock(
        fake, client, block_start):
    (o,) = seed(fake, offering(block_start))
    oid = o["capacityBlockOfferingId"]
    bought = client.purchase_capacity_block(
        CapacityBlockOfferingId=oid, InstancePlatform="Linux/UNIX",
        TagSpecifications=tag_spec(**{"gpu.tf/pool": "train", "team": "ml"})
    )["CapacityReservation"]
    rid = bought["CapacityReservationId"]
    assert re.fullmatch(r"cr-[0-9a-f]{17}", rid)
    assert bought["CapacityReservationArn"] == \
        f"arn:aws:ec2:{REGION}:123456789012:capacity-reservation/{rid}"
    assert bought["OwnerId"] == "123456789012"
    assert (bought["ReservationType"], bought["InstanceType"], bought["AvailabilityZone"],
            bought["TotalInstanceCount"], bought["InstancePlatform"]) == \
        ("capacity-block", "p5.48xlarge", "us-east-1a", 2, "Linux/UNIX")
    assert bought["AvailabilityZoneId"] == "use1-az6"  # moto's id of us-east-1a
    assert (bought["StartDate"], bought["EndDate"]) == (block_start, block_start + 2 * DAY)
    assert (bought["EndDateType"], bought["InstanceMatchCriteria"]) == ("limited", "targeted")
    assert {t["Key"]: t["Value"] for t in bought["Tags"]} == {"gpu.tf/pool": "train",
                                                             "team": "ml"}
    # Created payment-pending; the first read still shows it, then the payment clears.
    assert bought["State"] == "payment-pending"
    states = [client.describe_capacity_reservations(CapacityReservationIds=[rid])
              ["CapacityReservations"][0]["State"] for _ in range(2)]
    assert states == ["payment-pending", "scheduled"]
    # The offering is consumed.
    assert client.describe_capacity_block_offerings(
        CapacityDurationHours=48)["CapacityBlockOfferings"] == []
    assert state(fake)["regions"][REGION]["consumed_offerings"] == [oid]
    # scheduled -> active at the start -> expired at the end, by the fake clock.
    control(fake, "/_fake/clock", {"now": (block_start + dt.timedelta(minutes=1)).isoformat()})
    assert by_tag(client, "team", "ml")[0]["State"] == "active"
    control(fake, "/_fake/clock", {"advance_hours": 48})
    (expired,) = by_tag(client, "team", "ml")
    assert expired["State"] == "expired" and expired["CapacityReservationId"] == rid


def test_an_offering_can_be_purchased_once(fake, client, block_start):
    (o,) = seed(fake, offering(block_start))
    oid = o["capacityBlockOfferingId"]
    client.purchase_capacity_block(CapacityBlockOfferingId=oid, InstancePlatform="Linux/UNIX")
    code, status, _ = error_of(lambda: client.purchase_capacity_block(
        CapacityBlockOfferingId=oid, InstancePlatform="Linux/UNIX"))
    assert (code, status) == ("InvalidCapacityBlockOfferingIdExpired", 400)
    assert len(client.describe_capacity_reservations()["CapacityReservations"]) == 1
    code, _, _ = error_of(lambda: client.purchase_capacity_block(
        CapacityBlockOfferingId="cb-0123456789abcdef0", InstancePlatform="Linux/UNIX"))
    assert code == "InvalidCapacityBlockOfferingIdNotFound"
    code, _, _ = error_of(lambda: client.purchase_capacity_block(
        CapacityBlockOfferingId="offer-1", InstancePlatform="Linux/UNIX"))
    assert code == "InvalidCapacityBlockOfferingIdMalformed"


def test_purchase_validates_platform_and_tags(fake, client, block_start):
    (o,) = seed(fake, offering(block_start))
    oid = o["capacityBlockOfferingId"]
    code, _, _ = error_of(lambda: client.purchase_capacity_block(
        CapacityBlockOfferingId=oid, InstancePlatform="Windows"))
    assert code == "InvalidParameterValue"
    code, _, _ = error_of(lambda: client.purchase_capacity_block(
        CapacityBlockOfferingId=oid, InstancePlatform="Linux/UNIX",
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "a", "Value": "b"}]}]))
    assert code == "InvalidParameterValue"
    # Refused requests consumed nothing.
    assert len(client.describe_capacity_block_offerings(
        CapacityDurationHours=48)["CapacityBlockOfferings"]) == 1


def test_a_failed_payment_ends_payment_failed(fake, client, block_start):
    (o,) = seed(fake, offering(block_start))
    control(fake, "/_fake/faults", {"fail_next_payment": True, "payment_pending_reads": 0})
    bought = client.purchase_capacity_block(CapacityBlockOfferingId=o["capacityBlockOfferingId"],
                                            InstancePlatform="Linux/UNIX")["CapacityReservation"]
    assert bought["State"] == "payment-failed"
    assert state(fake)["settings"]["fail_next_payment"] is False


# --- On-Demand Capacity Reservations --------------------------------------------------------

def test_create_is_idempotent_by_client_token(fake, client):
    first = create(client, ClientToken="pool-a-1", TagSpecifications=tag_spec(pool="a"))
    again = create(client, ClientToken="pool-a-1", TagSpecifications=tag_spec(pool="a"))
    assert again["CapacityReservationId"] == first["CapacityReservationId"]
    assert (first["ReservationType"], first["State"], first["TotalInstanceCount"],
            first["AvailableInstanceCount"], first["EndDateType"],
            first["InstanceMatchCriteria"], first["Tenancy"]) == \
        ("default", "active", 2, 2, "unlimited", "open", "default")
    assert first["CreateDate"] == first["StartDate"]
    assert abs(first["CreateDate"] - NOW) < dt.timedelta(minutes=5)  # the fake's clock
    assert len(client.describe_capacity_reservations()["CapacityReservations"]) == 1
    code, status, _ = error_of(lambda: create(client, ClientToken="pool-a-1", InstanceCount=3,
                                              TagSpecifications=tag_spec(pool="a")))
    assert (code, status) == ("IdempotentParameterMismatch", 400)
    # The idempotency page exempts the Availability Zone from the comparison.
    zone = create(client, ClientToken="pool-a-1", AvailabilityZone="us-east-1c",
                  TagSpecifications=tag_spec(pool="a"))
    assert zone["CapacityReservationId"] == first["CapacityReservationId"]
    other = create(client, ClientToken="pool-a-2", TagSpecifications=tag_spec(pool="a"))
    assert other["CapacityReservationId"] != first["CapacityReservationId"]
    assert state(fake)["regions"][REGION]["reservations"][0]["fake"]["client_token"] == "pool-a-1"


def test_no_capacity_switch_gives_insufficient_instance_capacity(fake, client):
    control(fake, "/_fake/capacity", {"region": REGION, "instance_type": "p5.48xlarge",
                                      "available": False})
    code, status, message = error_of(lambda: create(client, InstanceType="p5.48xlarge"))
    assert (code, status) == ("InsufficientInstanceCapacity", 500)
    assert "p5.48xlarge" in message and "us-east-1b" in message
    assert create(client, InstanceType="g5.xlarge")["State"] == "active"
    control(fake, "/_fake/capacity", {"region": REGION, "instance_type": "p5.48xlarge",
                                      "available": True})
    assert create(client, InstanceType="p5.48xlarge")["InstanceType"] == "p5.48xlarge"


def test_create_validates_its_parameters(fake, client):
    assert error_of(lambda: create(client, InstanceType="banana"))[0] == "InvalidParameterValue"
    assert error_of(lambda: create(client, AvailabilityZone="us-east-1z"))[0] == \
        "InvalidZone.NotFound"
    assert error_of(lambda: create(client, EndDateType="limited"))[0] == \
        "InvalidParameterCombination"
    assert error_of(lambda: create(client, EndDateType="limited", EndDate=NOW - DAY))[0] == \
        "InvalidParameterValue"
    assert error_of(lambda: create(client, InstanceCount=1001))[0] == "InvalidParameterValue"
    assert error_of(lambda: create(client, StartDate=NOW + 10 * DAY))[0] == \
        "UnsupportedOperation"
    by_id = create(client, AvailabilityZone=None, AvailabilityZoneId="use1-az1")
    assert by_id["AvailabilityZone"] == "us-east-1b"  # moto: us-east-1b is use1-az1
    assert error_of(lambda: create(client, DryRun=True))[:2] == ("DryRunOperation", 412)
    assert len(client.describe_capacity_reservations()["CapacityReservations"]) == 1


def test_a_limited_reservation_expires_at_its_end_date(fake, client):
    r = create(client, EndDateType="limited", EndDate=NOW + 2 * DAY)
    assert r["EndDate"] == NOW + 2 * DAY and r["State"] == "active"
    control(fake, "/_fake/clock", {"advance_hours": 49})
    assert client.describe_capacity_reservations(CapacityReservationIds=[
        r["CapacityReservationId"]])["CapacityReservations"][0]["State"] == "expired"


def test_describe_by_id_filters_and_paging(fake, client, block_start):
    a = create(client, TagSpecifications=tag_spec(pool="a", team="ml"))
    b = create(client, InstanceType="g6.xlarge", TagSpecifications=tag_spec(pool="b"))
    (o,) = seed(fake, offering(block_start))
    block = client.purchase_capacity_block(
        CapacityBlockOfferingId=o["capacityBlockOfferingId"], InstancePlatform="Linux/UNIX",
        TagSpecifications=tag_spec(pool="c"))["CapacityReservation"]

    def ids(**kwargs):
        return [r["CapacityReservationId"] for r in
                client.describe_capacity_reservations(**kwargs)["CapacityReservations"]]

    assert ids() == [a["CapacityReservationId"], b["CapacityReservationId"],
                     block["CapacityReservationId"]]  # both kinds
    assert ids(CapacityReservationIds=[b["CapacityReservationId"]]) == [b["CapacityReservationId"]]
    assert ids(Filters=[{"Name": "tag:pool", "Values": ["a", "c"]}]) == \
        [a["CapacityReservationId"], block["CapacityReservationId"]]
    assert ids(Filters=[{"Name": "tag-key", "Values": ["team"]}]) == [a["CapacityReservationId"]]
    assert ids(Filters=[{"Name": "instance-type", "Values": ["g6.xlarge"]}]) == \
        [b["CapacityReservationId"]]
    assert ids(Filters=[{"Name": "state", "Values": ["active"]},
                        {"Name": "availability-zone", "Values": ["us-east-1b"]}]) == \
        [a["CapacityReservationId"], b["CapacityReservationId"]]
    page = client.describe_capacity_reservations(MaxResults=2)
    rest = client.describe_capacity_reservations(MaxResults=2, NextToken=page["NextToken"])
    assert len(page["CapacityReservations"]) == 2 and len(rest["CapacityReservations"]) == 1
    assert "NextToken" not in rest
    code, status, message = error_of(lambda: client.describe_capacity_reservations(
        CapacityReservationIds=["cr-0123456789abcdef0"]))
    assert (code, status) == ("InvalidCapacityReservationId.NotFound", 400)
    assert "cr-0123456789abcdef0" in message
    assert error_of(lambda: client.describe_capacity_reservations(
        CapacityReservationIds=["cr-1"]))[0] == "InvalidCapacityReservationId.Malformed"
    code, _, message = error_of(lambda: client.describe_capacity_reservations(
        Filters=[{"Name": "reservation-type", "Values": ["default"]}]))
    assert (code, message) == ("InvalidParameterValue", "The filter 'reservation-type' is invalid")


def test_cancel_a_default_reservation_but_not_a_capacity_block(fake, client, block_start):
    r = create(client, TagSpecifications=tag_spec(pool="x"))
    assert client.cancel_capacity_reservation(
        CapacityReservationId=r["CapacityReservationId"])["Return"] is True
    (cancelled,) = by_tag(client, "pool", "x")  # still describable
    assert cancelled["State"] == "cancelled"
    (o,) = seed(fake, offering(block_start))
    block = client.purchase_capacity_block(
        CapacityBlockOfferingId=o["capacityBlockOfferingId"], InstancePlatform="Linux/UNIX",
        TagSpecifications=tag_spec(pool="y"))["CapacityReservation"]
    code, status, message = error_of(lambda: client.cancel_capacity_reservation(
        CapacityReservationId=block["CapacityReservationId"]))
    assert (code, status) == ("UnsupportedOperation", 400) and "Capacity Block" in message
    assert by_tag(client, "pool", "y")[0]["State"] != "cancelled"
    assert error_of(lambda: client.cancel_capacity_reservation(
        CapacityReservationId="cr-0123456789abcdef0"))[0] == "InvalidCapacityReservationId.NotFound"


# --- forwarding, authentication, regions, log -----------------------------------------------

def test_other_actions_are_forwarded_to_moto(fake, client, moto):
    vpc = client.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]
    seen = moto.client("ec2", REGION).describe_vpcs(VpcIds=[vpc["VpcId"]])["Vpcs"]
    assert [v["CidrBlock"] for v in seen] == ["10.77.0.0/16"]
    zones = client.describe_availability_zones()["AvailabilityZones"]
    assert [z["ZoneName"] for z in zones][:2] == ["us-east-1a", "us-east-1b"]
    (entry,) = [e for e in state(fake)["requests"] if e["action"] == "CreateVpc"]
    assert entry["forwarded"] is True and entry["status"] == 200
    assert entry["params"]["CidrBlock"] == "10.77.0.0/16"
    code, status, _ = error_of(lambda: client.describe_vpcs(VpcIds=["vpc-0000000000000000f"]))
    assert (code, status) == ("InvalidVpcID.NotFound", 400)  # moto's error, passed through


def test_requests_need_sigv4_and_state_is_per_region(fake, client):
    status, body = raw(fake, {"Action": "DescribeCapacityReservations"}, sign=False)
    assert status == 401 and "<Code>AuthFailure</Code>" in body
    assert body.count("<Response><Errors><Error>") == 1
    status, body = raw(fake, {"Action": "DescribeCapacityReservations"}, method="GET")
    assert status == 200 and "<DescribeCapacityReservationsResponse" in body
    assert "<requestId>" in body and 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"' in body
    r = create(client)
    eu = ec2(fake, "eu-west-1")
    assert eu.describe_capacity_reservations()["CapacityReservations"] == []
    assert error_of(lambda: eu.describe_capacity_reservations(CapacityReservationIds=[
        r["CapacityReservationId"]]))[0] == "InvalidCapacityReservationId.NotFound"
    assert error_of(lambda: create(eu))[0] == "InvalidZone.NotFound"  # us-east-1b
    assert create(eu, AvailabilityZone="eu-west-1b")["CapacityReservationArn"].startswith(
        "arn:aws:ec2:eu-west-1:")


def test_the_log_has_actions_and_parameters_but_no_secrets(fake, client):
    create(client, ClientToken="tok-1")
    dump = json.dumps(state(fake))
    entry = [e for e in state(fake)["requests"] if e["action"] == "CreateCapacityReservation"][0]
    assert entry["region"] == REGION and entry["forwarded"] is False
    assert entry["params"]["InstanceType"] == "g5.xlarge"
    assert entry["params"]["ClientToken"] == "tok-1"
    assert "Signature=" not in dump and "AWS4-HMAC-SHA256" not in dump
    assert "X-Amz-Security-Token" not in dump


# --- faults ---------------------------------------------------------------------------------

def test_a_throttling_fault_matches_the_action_name(fake, client):
    control(fake, "/_fake/faults", {"method": "POST", "path": "^DescribeCapacityReservations$",
                                    "status": 503, "code": "RequestLimitExceeded"})
    # Another action is not affected, and does not use the fault up.
    client.describe_capacity_block_offerings(CapacityDurationHours=24)
    code, status, message = error_of(client.describe_capacity_reservations)
    assert (code, status, message) == ("RequestLimitExceeded", 503, "Request limit exceeded.")
    assert client.describe_capacity_reservations()["CapacityReservations"] == []
    assert state(fake)["faults"] == []


def test_a_lost_answer_still_purchases(fake, client, block_start):
    (o,) = seed(fake, offering(block_start))
    control(fake, "/_fake/faults", {"fault": {"method": "POST", "path": "^PurchaseCapacityBlock$",
                                              "status": 503, "code": "ServiceUnavailable",
                                              "lose_answer": True}})
    code, status, _ = error_of(lambda: client.purchase_capacity_block(
        CapacityBlockOfferingId=o["capacityBlockOfferingId"], InstancePlatform="Linux/UNIX",
        TagSpecifications=tag_spec(**{"gpu.tf/commitment": "block-1"})))
    assert (code, status) == ("ServiceUnavailable", 503)
    (found,) = by_tag(client, "gpu.tf/commitment", "block-1")
    assert found["ReservationType"] == "capacity-block"
    assert client.describe_capacity_block_offerings(
        CapacityDurationHours=48)["CapacityBlockOfferings"] == []
    (entry,) = [e for e in state(fake)["requests"] if e["action"] == "PurchaseCapacityBlock"]
    assert entry["injected"] is True and entry["lost_status"] == 200 and entry["status"] == 503


def test_a_lost_create_answer_is_recovered_by_the_client_token(fake, client):
    control(fake, "/_fake/faults", {"method": "*", "path": "^CreateCapacityReservation$",
                                    "status": 500, "code": "InternalError",
                                    "lose_answer": True})
    assert error_of(lambda: create(client, ClientToken="retry-me"))[:2] == ("InternalError", 500)
    retried = create(client, ClientToken="retry-me")
    assert [r["CapacityReservationId"] for r in
            client.describe_capacity_reservations()["CapacityReservations"]] == \
        [retried["CapacityReservationId"]]


def test_usage_lowers_available_instances_within_the_reservation(fake, client):
    r = create(client, ClientToken="usage-1")
    rid = r["CapacityReservationId"]
    control(fake, "/_fake/usage", {"region": REGION, "reservation_id": rid, "used": 1})
    (read,) = client.describe_capacity_reservations(
        CapacityReservationIds=[rid])["CapacityReservations"]
    assert (read["TotalInstanceCount"], read["AvailableInstanceCount"]) == (2, 1)
    with pytest.raises(urllib.error.HTTPError) as refused:
        control(fake, "/_fake/usage", {"region": REGION, "reservation_id": rid, "used": 3})
    assert refused.value.code == 400
    assert "used must be 0 to 2" in json.loads(refused.value.read())["error"]
