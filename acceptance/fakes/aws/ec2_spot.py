"""A fake of the EC2 Query API for single GPU VMs as `gpu_instance` launches them: on-demand or
spot through RunInstances, spot ones as a persistent Spot Instance request whose interruption
behaviour is `stop` (or one-time + `terminate`), which EC2 stops on a reclaim, keeps with its
volumes and restarts itself once capacity is back. It extends `Ec2Commitments`, so one
endpoint also serves the capacity commitments; every other action goes to a moto server.

    moto = aws_emulator.start_moto(tmp)
    ec2 = Ec2Spot(moto.url).start()                     # the provider's aws.endpoints.ec2
    ec2.seed_images("us-east-1", [{"name": "Deep Learning Base OSS Nvidia Driver GPU AMI "
                                   "(Ubuntu 22.04) 20250101", "creation_date": "2025-01-02"}])
    ... boto3.client("ec2", endpoint_url=ec2.url, ...).run_instances(...) ...
    ec2.reclaim(instance_id, short=2)                   # or POST /_fake/reclaim
    ec2.set_short("us-east-1", "g5.xlarge", 0)          # or POST /_fake/capacity {"short": 0}
    ec2.tick()                                          # or POST /_fake/tick; also on every
                                                        # DescribeInstances
    ec2.set_placement_score("us-east-1", "use1-az4", "g5.xlarge", 9)   # or POST
                                                        # /_fake/placement_scores
    ec2.state()["regions"]["us-east-1"]["instances"]     # or GET /_fake/state

Served here, in EC2's XML: RunInstances, DescribeInstances, StartInstances, StopInstances,
TerminateInstances, DescribeSpotInstanceRequests, CancelSpotInstanceRequests, CreateTags,
DeleteTags, DescribeImages, DescribeVolumes, GetSpotPlacementScores. The instances, volumes,
spot requests and images the fake made are its own; Describe* answers add moto's (moto's
answer without paging, then filtered and paged here), and ids the fake does not know (in
Start/Stop/Terminate, CreateTags, ...) go to moto, so instances launched in moto keep working.
Subnets, security groups, key pairs, instance types, zones and moto's own AMIs are asked from
moto. Spot placement scores are whatever `set_placement_score` configured (see the class).
Requests need a SigV4 `Authorization` header (signature not checked); state is per region of
its credential scope. Faults match the action name. See ../README.md for the references and for
what is a guess.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import ipaddress
import re
import secrets
import string
import xml.etree.ElementTree as ET

from .. import Request, Response
from .common import (ACCOUNT, Ec2Error, bool_param, check_params, client_token, dry_run,
                     ec2_answer, ec2_time, enum_param, error_response, int_param, members, new_id,
                     paginate, parse_time, query_params, scalars, signed_query,
                     token_fingerprint, xml)
from .ec2_commitments import INSTANCE_TYPE_RE, Ec2Commitments

DLAMI_OWNER = "898082745236"  # Amazon's AMI account (owner of the DLAMIs), alias "amazon"
STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48,
               "stopping": 64, "stopped": 80}
USER_SHUTDOWN = ("Client.UserInitiatedShutdown",
                 "Client.UserInitiatedShutdown: User initiated shutdown")
SPOT_SHUTDOWN = ("Server.SpotInstanceShutdown", "Server.SpotInstanceShutdown: Spot instance "
                 "shutdown")
SPOT_TERMINATION = ("Server.SpotInstanceTermination", "Server.SpotInstanceTermination: Spot "
                    "instance termination")
STATUS_MESSAGES = {
    "pending-evaluation": "Your Spot request has been submitted for review, and is pending "
                          "evaluation.",
    "fulfilled": "Your spot request is fulfilled.",
    "capacity-not-available": "There is no Spot capacity available that matches your request.",
    "marked-for-stop": "Your Spot Instance is marked for stop.",
    "marked-for-termination": "Your Spot Instance is marked for termination.",
    "instance-stopped-no-capacity": "Your Spot instance was stopped because there is no Spot "
                                    "capacity available that matches your request.",
    "instance-stopped-by-price": "Your Spot instance was stopped because your maximum price is "
                                 "lower than the Spot price.",
    "instance-stopped-by-user": "Your Spot instance was stopped by a user.",
    "instance-terminated-no-capacity": "Your Spot instance was terminated because there is no "
                                       "Spot capacity available that matches your request.",
    "instance-terminated-by-price": "Your Spot instance was terminated because your maximum "
                                    "price is lower than the Spot price.",
    "instance-terminated-by-user": "Your Spot instance was terminated by a user.",
    "instance-terminated-by-service": "Your Spot instance was terminated from a stopped state.",
    "request-canceled-and-instance-running": "Your Spot request is canceled, but your instance "
                                             "is still running.",
    "canceled-before-fulfillment": "Your Spot request was canceled before it was fulfilled.",
}
INTERRUPTED = {"instance-stopped-no-capacity", "instance-stopped-by-price"}

# Query parameter names (first segment) per action, from the botocore model: those the fake
# emulates, and valid ones it refuses as not emulated (UnsupportedOperation).
SPOT_PARAMS = {
    "RunInstances": (
        {"ImageId", "InstanceType", "MinCount", "MaxCount", "ClientToken", "Placement",
         "SubnetId", "SecurityGroupId", "KeyName", "UserData", "BlockDeviceMapping",
         "TagSpecification", "InstanceMarketOptions", "DryRun", "EbsOptimized", "Monitoring"},
        {"AdditionalInfo", "CapacityReservationSpecification", "CpuOptions",
         "CreditSpecification", "DisableApiStop", "DisableApiTermination",
         "ElasticGpuSpecification", "ElasticInferenceAccelerator", "EnablePrimaryIpv6",
         "EnclaveOptions", "HibernationOptions", "IamInstanceProfile",
         "InstanceInitiatedShutdownBehavior", "Ipv6Address", "Ipv6AddressCount", "KernelId",
         "LaunchTemplate", "LicenseSpecification", "MaintenanceOptions", "MetadataOptions",
         "NetworkInterface", "NetworkPerformanceOptions", "Operator", "PrivateDnsNameOptions",
         "PrivateIpAddress", "RamdiskId", "SecondaryInterface", "SecurityGroup"}),
    "DescribeInstances": ({"DryRun", "Filter", "InstanceId", "MaxResults", "NextToken"},
                          {"IncludeManagedResources"}),
    "StartInstances": ({"DryRun", "InstanceId"}, {"AdditionalInfo"}),
    "StopInstances": ({"DryRun", "InstanceId", "Force", "Hibernate"}, {"SkipOsShutdown"}),
    "TerminateInstances": ({"DryRun", "InstanceId", "Force"}, {"SkipOsShutdown"}),
    "DescribeSpotInstanceRequests": (
        {"DryRun", "Filter", "MaxResults", "NextToken", "SpotInstanceRequestId"}, set()),
    "CancelSpotInstanceRequests": ({"DryRun", "SpotInstanceRequestId"}, set()),
    "CreateTags": ({"DryRun", "ResourceId", "Tag"}, set()),
    "DeleteTags": ({"DryRun", "ResourceId", "Tag"}, set()),
    "DescribeImages": ({"DryRun", "Filter", "ImageId", "Owner", "MaxResults", "NextToken",
                        "IncludeDeprecated", "IncludeDisabled"}, {"ExecutableBy"}),
    "DescribeVolumes": ({"DryRun", "Filter", "VolumeId", "MaxResults", "NextToken"},
                        {"IncludeManagedResources"}),
    "GetSpotPlacementScores": (
        {"InstanceType", "TargetCapacity", "TargetCapacityUnitType", "SingleAvailabilityZone",
         "RegionName", "MaxResults", "NextToken", "DryRun"},
        {"InstanceRequirementsWithMetadata", "IncludeLocalZones"}),
}
SPOT_REQUIRED = {"RunInstances": ("MinCount", "MaxCount", "ImageId"),
                 "StartInstances": ("InstanceId.1",), "StopInstances": ("InstanceId.1",),
                 "TerminateInstances": ("InstanceId.1",),
                 "CancelSpotInstanceRequests": ("SpotInstanceRequestId.1",),
                 "CreateTags": ("ResourceId.1", "Tag.1.Key"), "DeleteTags": ("ResourceId.1",),
                 "GetSpotPlacementScores": ("TargetCapacity",)}
# Sub-parameters of the structured RunInstances parameters the fake reads; any other valid one
# is not emulated.
NESTED = {
    "Placement": {"AvailabilityZone", "Tenancy"},
    "InstanceMarketOptions": {"MarketType", "SpotOptions.SpotInstanceType",
                              "SpotOptions.InstanceInterruptionBehavior",
                              "SpotOptions.MaxPrice", "SpotOptions.ValidUntil"},
    "Monitoring": {"Enabled"},
}
BDM_FIELDS = {"DeviceName", "Ebs.VolumeSize", "Ebs.VolumeType", "Ebs.DeleteOnTermination",
              "Ebs.Iops", "Ebs.Throughput", "Ebs.Encrypted", "Ebs.SnapshotId"}
VOLUME_TYPES = ("standard", "io1", "io2", "gp2", "sc1", "st1", "gp3")
TAGGABLE = ("instance", "volume", "spot-instances-request", "network-interface")
# Filters per action: name -> path in the answer's item ("a/b" nests, lists are walked).
INSTANCE_FILTERS = {
    "instance-id": "instanceId", "instance-state-name": "instanceState/name",
    "instance-state-code": "instanceState/code", "instance-type": "instanceType",
    "availability-zone": "placement/availabilityZone", "instance-lifecycle":
    "instanceLifecycle", "spot-instance-request-id": "spotInstanceRequestId",
    "image-id": "imageId", "subnet-id": "subnetId", "vpc-id": "vpcId", "key-name": "keyName",
    "client-token": "clientToken", "state-reason-code": "stateReason/code",
    "root-device-name": "rootDeviceName", "architecture": "architecture",
    "block-device-mapping.volume-id": "blockDeviceMapping/ebs/volumeId",
    "block-device-mapping.device-name": "blockDeviceMapping/deviceName",
    "private-ip-address": "privateIpAddress", "instance.group-id": "groupSet/groupId"}
VOLUME_FILTERS = {
    "volume-id": "volumeId", "status": "status", "size": "size", "volume-type": "volumeType",
    "availability-zone": "availabilityZone", "snapshot-id": "snapshotId",
    "encrypted": "encrypted", "attachment.instance-id": "attachmentSet/instanceId",
    "attachment.status": "attachmentSet/status", "attachment.device": "attachmentSet/device",
    "attachment.delete-on-termination": "attachmentSet/deleteOnTermination"}
IMAGE_FILTERS = {
    "name": "name", "description": "description", "architecture": "architecture",
    "state": "imageState", "owner-id": "imageOwnerId", "owner-alias": "imageOwnerAlias",
    "image-id": "imageId", "image-type": "imageType", "is-public": "isPublic",
    "root-device-name": "rootDeviceName", "root-device-type": "rootDeviceType",
    "virtualization-type": "virtualizationType", "hypervisor": "hypervisor",
    "platform-details": "platformDetails"}
REQUEST_FILTERS = {
    "spot-instance-request-id": "spotInstanceRequestId", "state": "state",
    "status-code": "status/code", "status-message": "status/message",
    "instance-id": "instanceId", "type": "type",
    "launched-availability-zone": "launchedAvailabilityZone",
    "launch.instance-type": "launchSpecification/instanceType",
    "launch.image-id": "launchSpecification/imageId",
    "product-description": "productDescription"}
ID_RE = {"instance": re.compile(r"i-([0-9a-f]{8}|[0-9a-f]{17})"),
         "volume": re.compile(r"vol-([0-9a-f]{8}|[0-9a-f]{17})"),
         "image": re.compile(r"ami-([0-9a-f]{8}|[0-9a-f]{17})"),
         "request": re.compile(r"sir-[0-9a-z]{8}")}
ID_MALFORMED = {"instance": ("InvalidInstanceID.Malformed", "i-"),
                "volume": ("InvalidVolumeID.Malformed", "vol-"),
                "image": ("InvalidAMIID.Malformed", "ami-"),
                "request": ("InvalidSpotInstanceRequestID.Malformed", "sir-")}
# MaxResults ranges (EC2 API reference pages; DescribeVolumes 5-500, the others 5-1000;
# GetSpotPlacementScores 10-1000, shape SpotPlacementScoresMaxResults of the botocore model).
MAX_RESULTS = {"DescribeInstances": (5, 1000), "DescribeVolumes": (5, 500),
               "DescribeImages": (5, 1000), "DescribeSpotInstanceRequests": (5, 1000),
               "GetSpotPlacementScores": (10, 1000)}
# GetSpotPlacementScores (botocore model): TargetCapacity 1..2000000000, TargetCapacityUnitType
# enum, at most 10 RegionName and 1000 InstanceType values; the answer holds the top 10.
PLACEMENT_UNIT_TYPES = ("vcpu", "memory-mib", "units")
PLACEMENT_MAX_CAPACITY = 2_000_000_000
PLACEMENT_MAX_REGIONS, PLACEMENT_MAX_TYPES, PLACEMENT_TOP = 10, 1000, 10
REGION_RE = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
# The zone of a RunInstances: a ClientToken retry may name another one.
ZONE_PARAMS = ("Placement.AvailabilityZone",)


def _sir_id() -> str:
    return "sir-" + "".join(secrets.choice(string.ascii_lowercase + string.digits)
                            for _ in range(8))


def _nested_ok(name: str, rest: str) -> bool:
    """Whether the fake emulates sub-parameter `name.rest` of RunInstances."""
    if name in NESTED and rest not in NESTED[name]:
        return False
    return name != "BlockDeviceMapping" or re.sub(r"^\d+\.", "", rest) in BDM_FIELDS


def _gmt(when: _dt.datetime) -> str:
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S GMT")


def _wild(pattern: str) -> re.Pattern:
    """An EC2 filter value: `*` any run of characters, `?` one character."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                              for c in pattern), re.S)


def _values(item, path: str) -> list[str]:
    """The leaf values at `path` ("a/b") in an answer item, lists walked; as EC2 prints them."""
    found = [item]
    for key in path.split("/"):
        nxt = []
        for node in found:
            node = node.get(key) if isinstance(node, dict) else None
            if isinstance(node, list):
                nxt.extend(node)
            elif node is not None:
                nxt.append(node)
        found = nxt
    return ["true" if v is True else "false" if v is False else str(v) for v in found]


def _tags_of(item) -> dict:
    return {t.get("key"): t.get("value") or "" for t in item.get("tagSet") or []}


def _matches(item, filters: list[tuple[str, list[str]]], paths: dict) -> bool:
    for name, wanted in filters:
        patterns = [_wild(v) for v in wanted]
        if name.startswith("tag:"):
            have = [v for k, v in _tags_of(item).items() if k == name[4:]]
        elif name == "tag-key":
            have = list(_tags_of(item))
        elif name == "tag-value":
            have = list(_tags_of(item).values())
        else:
            have = _values(item, paths[name])
        if not any(p.fullmatch(h) for p in patterns for h in have):
            return False
    return True


def _to_obj(elem: ET.Element):
    """An answer element of moto's XML as the fake's own item form: `<item>` children become a
    list, other children a dict, leaves their text."""
    children = list(elem)
    if not children:
        return elem.text or ""
    if all(c.tag == "item" for c in children):
        return [_to_obj(c) for c in children]
    return {c.tag: _to_obj(c) for c in children}


def _strip_ns(elem: ET.Element) -> ET.Element:
    for e in elem.iter():
        e.tag = e.tag.rsplit("}", 1)[-1]
    return elem


class Ec2Spot(Ec2Commitments):
    """The fake EC2 endpoint for `gpu_instance` (and the commitments), forwarding to
    `moto_url`. Settings (`POST /_fake/faults` or `configure`): `tick_on_describe` (default
    true: every DescribeInstances first does one `tick`), plus those of Ec2Commitments.

    GetSpotPlacementScores (`InstanceType.N`, `TargetCapacity`, `TargetCapacityUnitType`,
    `SingleAvailabilityZone`, `RegionName.N`, `MaxResults` 10-1000, `NextToken`, `DryRun`)
    answers from the scores set with `set_placement_score(region, zone_id, instance_type,
    score)` (or `POST /_fake/placement_scores`): per requested region (every region with a
    score when none is named) one `{region, score}` item, the best requested type's
    region-level score or else its best zone's; with SingleAvailabilityZone one
    `{region, availabilityZoneId, score}` per zone with a score. Places without a score are
    left out; best first (then region, zone), at most 10 (the API's "top 10"). Real scores are
    AWS's own computation; the rule that one or two instance types always score low is not
    emulated, nor `InstanceRequirementsWithMetadata` or `IncludeLocalZones`
    (`UnsupportedOperation`). Decoded requests are kept in `placement_score_requests`."""

    name = "ec2-spot"

    def __init__(self, moto_url: str, time_scale=None):
        self.type_cache: dict[tuple[str, str], bool] = {}
        super().__init__(moto_url, time_scale)

    def reset_state(self) -> None:
        super().reset_state()
        self.spot_regions: dict[str, dict] = {}
        self.tick_on_describe = True
        # (region, zone id or None, instance type) -> score 1..10; what GetSpotPlacementScores
        # answers from, and the requests it decoded.
        self.placement_scores: dict[tuple[str, str | None, str], int] = {}
        self.placement_score_requests: list[dict] = []

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        if "tick_on_describe" in s:
            self.tick_on_describe = bool(s.pop("tick_on_describe"))
        super().configure(s)

    def _spot(self, region: str) -> dict:
        return self.spot_regions.setdefault(region, {
            "instances": {}, "volumes": {}, "requests": {}, "images": {}, "tokens": {},
            "short": {}, "ips": 0})

    # --- test control ------------------------------------------------------------------------

    def seed_images(self, region: str, images: list[dict]) -> list[dict]:
        """Adds AMIs to `region`: each `name`, `creation_date` (ISO 8601); optional `image_id`
        (generated), `architecture` (x86_64), `root_device_name` (/dev/sda1), `root_size_gb`
        (75), `owner_id` (898082745236), `owner_alias` (amazon), `state` (available),
        `description`. Returns them as DescribeImages answers them."""
        with self.lock:
            state, out = self._spot(region), []
            for spec in images:
                spec = dict(spec)
                image = {"id": spec.pop("image_id", None) or new_id("ami"),
                         "name": spec.pop("name"),
                         "created": parse_time(spec.pop("creation_date"), "creation_date"),
                         "architecture": spec.pop("architecture", "x86_64"),
                         "root_device": spec.pop("root_device_name", "/dev/sda1"),
                         "root_size": int(spec.pop("root_size_gb", 75)),
                         "owner_id": spec.pop("owner_id", DLAMI_OWNER),
                         "owner_alias": spec.pop("owner_alias", "amazon"),
                         "state": spec.pop("state", "available"),
                         "description": spec.pop("description", None),
                         "snapshot": new_id("snap")}
                if spec:
                    raise ValueError(f"unknown image fields {sorted(spec)}")
                if not ID_RE["image"].fullmatch(image["id"]):
                    raise ValueError(f"image_id {image['id']!r} is not ami- + 17 hex digits")
                state["images"][image["id"]] = image
                out.append(self._image_json(image))
            return out

    def set_short(self, region: str, instance_type: str, short) -> dict:
        """The next `short` launches, starts and EC2 restarts of `instance_type` in `region`
        fail for lack of capacity (`true` or a negative number: until set again; 0: capacity
        is back)."""
        with self.lock:
            shortage = self._spot(region)["short"]
            n = -1 if short is True else int(short)
            if n == 0:
                shortage.pop(instance_type, None)
            else:
                shortage[instance_type] = n
            return {"region": region, "short": dict(shortage)}

    def set_placement_score(self, region: str, zone_id: str | None, instance_type: str,
                            score: int | None) -> dict:
        """The Spot placement score (1..10) GetSpotPlacementScores gives `instance_type` in
        `region`: in the zone `zone_id` (a zone id as moto lists it, e.g. `use1-az4`), or,
        with `zone_id` None, at the region level. `score` None forgets it. Returns every
        configured score."""
        with self.lock:
            if not isinstance(region, str) or not REGION_RE.fullmatch(region):
                raise ValueError(f"region {region!r} is not a region name")
            if not isinstance(instance_type, str) or not INSTANCE_TYPE_RE.fullmatch(
                    instance_type):
                raise ValueError(f"instance_type {instance_type!r} is not an instance type")
            if zone_id is not None:
                zone_id = self._zone(region, zone_id=str(zone_id))[1]
            key = (region, zone_id, instance_type)
            if score is None:
                self.placement_scores.pop(key, None)
            elif isinstance(score, bool) or not isinstance(score, int) \
                    or not 1 <= score <= 10:
                raise ValueError(f"score {score!r} is not an integer from 1 to 10")
            else:
                self.placement_scores[key] = score
            return {"placement_scores": self._placement_scores_json()}

    def _placement_scores_json(self) -> list[dict]:
        return [{"region": r, "zone_id": z, "instance_type": t, "score": score}
                for (r, z, t), score in sorted(self.placement_scores.items(),
                                               key=lambda kv: (kv[0][0], kv[0][1] or "",
                                                               kv[0][2]))]

    def reclaim(self, instance_id: str, short=True, cause: str = "capacity") -> dict:
        """EC2 interrupts the spot instance: with interruption behaviour `stop` it goes
        `stopping` (state reason Server.SpotInstanceShutdown, request `marked-for-stop`), with
        `terminate` `shutting-down` (Server.SpotInstanceTermination, `marked-for-termination`).
        The instance type is then short of capacity in that region as `set_short(short)` says
        (default: until told otherwise). `cause` "capacity" or "price" picks the status code."""
        with self.lock:
            if cause not in ("capacity", "price"):
                raise ValueError("cause must be capacity or price")
            region, state, i = self._find_instance(instance_id)
            if i["lifecycle"] != "spot":
                raise ValueError(f"{instance_id} is not a spot instance")
            if i["state"] != "running":
                raise ValueError(f"{instance_id} is {i['state']}, not running")
            r = state["requests"][i["request"]]
            now = self.now()
            i["interrupted"], i["transition"] = cause, f"Service initiated ({_gmt(now)})"
            if r["behavior"] == "stop":
                self._set_state(i, "stopping", SPOT_SHUTDOWN)
                self._status(r, "active", "marked-for-stop")
            else:
                self._set_state(i, "shutting-down", SPOT_TERMINATION)
                self._status(r, r["state"] if r["type"] == "persistent" else "closed",
                             "marked-for-termination")
            if short is not False and short is not None:
                self.set_short(region, i["type"], short)
            return {"instance_id": instance_id, "region": region, "state": i["state"],
                    "spot_instance_request_id": r["id"]}

    def tick(self) -> dict:
        """EC2 does its own work once, in every region: (1) restarts interrupted stopped
        instances of `disabled` persistent requests, and launches a new instance for `open`
        persistent requests whose instance is gone, when capacity allows (each attempt uses up
        one of a shortage's failures); (2) spot requests take the state their instance's last
        transition called for (one tick late, as EC2's request updates lag); (3) instances move
        on: pending -> running, stopping -> stopped, shutting-down -> terminated (volumes with
        DeleteOnTermination deleted, others detached)."""
        with self.lock:
            moved = []
            for region, state in self.spot_regions.items():
                for r in list(state["requests"].values()):
                    self._ec2_attempt(region, state, r, moved)
                for r in state["requests"].values():
                    if r.get("next"):
                        self._status(r, *r.pop("next"))
                fresh = {m["instance_id"] for m in moved}  # moved in (1): not again now
                for i in list(state["instances"].values()):
                    if i["id"] not in fresh:
                        self._progress(state, i, moved)
            return {"now": ec2_time(self.now()), "moved": moved}

    def _ec2_attempt(self, region: str, state: dict, r: dict, moved: list) -> None:
        if r["type"] != "persistent":
            return
        i = state["instances"].get(r["instance_id"])
        if r["state"] == "disabled" and r["status_code"] in INTERRUPTED and i \
                and i["state"] == "stopped":
            if self._take_capacity(state, i["type"]):
                self._set_state(i, "pending", None)
                i["interrupted"], i["transition"] = None, ""
                self._status(r, "active", "fulfilled")
                moved.append({"instance_id": i["id"], "to": "pending", "by": "ec2-restart"})
        elif r["state"] == "open" and (i is None or i["state"] == "terminated") \
                and r["status_code"] in ("pending-evaluation", "capacity-not-available"):
            if self._take_capacity(state, r["spec"]["type"]):
                new = self._launch(region, state, r["spec"], r, None)
                self._status(r, "active", "fulfilled")
                moved.append({"instance_id": new["id"], "to": "pending", "by": "ec2-relaunch"})
            elif r["status_code"] != "capacity-not-available":
                self._status(r, "open", "capacity-not-available")

    def _progress(self, state: dict, i: dict, moved: list) -> None:
        r = state["requests"].get(i["request"]) if i["request"] else None
        before = i["state"]
        if before == "pending":
            self._set_state(i, "running", i["reason"])
            if r and r["state"] in ("open", "active"):
                self._status(r, "active", "fulfilled")
        elif before == "stopping":
            self._set_state(i, "stopped", i["reason"])
            if r and r["state"] not in ("cancelled", "closed"):
                code = {"capacity": "instance-stopped-no-capacity",
                        "price": "instance-stopped-by-price"}.get(i["interrupted"],
                                                                 "instance-stopped-by-user")
                r["next"] = ("disabled", code)
        elif before == "shutting-down":
            self._set_state(i, "terminated", i["reason"])
            for device, vid in i["devices"]:
                v = state["volumes"][vid]
                if v["attachment"]["dot"]:
                    v["state"] = "deleted"
                else:
                    v["state"], v["attachment"] = "available", None
            if r and r["state"] != "cancelled" and r["instance_id"] == i["id"]:
                if i["interrupted"]:
                    code = {"capacity": "instance-terminated-no-capacity",
                            "price": "instance-terminated-by-price"}[i["interrupted"]]
                    r["next"] = ("open" if r["type"] == "persistent" else "closed", code)
                elif r["type"] == "persistent":
                    r["next"] = ("open", "pending-evaluation")
        else:
            return
        moved.append({"instance_id": i["id"], "from": before, "to": i["state"]})

    def _take_capacity(self, state: dict, instance_type: str) -> bool:
        """True when a launch or start of `instance_type` may go ahead; a failure uses up one
        of the shortage's counted failures."""
        n = state["short"].get(instance_type, 0)
        if n == 0:
            return True
        if n > 0:
            if n == 1:
                del state["short"][instance_type]
            else:
                state["short"][instance_type] = n - 1
        return False

    def _find_instance(self, instance_id: str) -> tuple[str, dict, dict]:
        for region, state in self.spot_regions.items():
            if instance_id in state["instances"]:
                return region, state, state["instances"][instance_id]
        raise LookupError(f"no instance {instance_id} launched through the fake")

    def snapshot(self) -> dict:
        out = super().snapshot()
        for name, s in self.spot_regions.items():
            region = out["regions"].setdefault(name, {})
            region.update({
                "instances": [{**self._instance_json(i),
                               "fake": {"interrupted": i["interrupted"],
                                        "user_data": i["spec"]["user_data"] is not None}}
                              for i in s["instances"].values()],
                "volumes": [{**self._volume_json(v), "fake": {"state": v["state"]}}
                            for v in s["volumes"].values()],
                "spot_requests": [{**self._request_json(r),
                                   "fake": {"next": r.get("next")}}
                                  for r in s["requests"].values()],
                "images": [self._image_json(m) for m in s["images"].values()],
                "capacity_short": dict(s["short"]),
                "client_tokens": {t: iid for t, (_, iid) in s["tokens"].items()}})
        out["settings"]["tick_on_describe"] = self.tick_on_describe
        out["placement_scores"] = self._placement_scores_json()
        out["placement_score_requests"] = [dict(r) for r in self.placement_score_requests]
        return out

    def control_routes(self) -> dict:
        """Adds `POST /_fake/images`, `/_fake/reclaim`, `/_fake/tick`,
        `/_fake/placement_scores` and the `short` form of `/_fake/capacity` to the control
        surface of Ec2Commitments."""
        routes = super().control_routes()
        capacity = routes["/_fake/capacity"]
        return {**routes,
                "/_fake/images": lambda d: (201, {"images": self.seed_images(
                    d["region"], d["images"])}),
                "/_fake/reclaim": lambda d: (200, self.reclaim(
                    d["instance_id"], d.get("short", True), d.get("cause", "capacity"))),
                "/_fake/tick": lambda d: (200, self.tick()),
                "/_fake/placement_scores": lambda d: (200, self.set_placement_score(
                    d["region"], d.get("zone_id"), d["instance_type"], d["score"])),
                "/_fake/capacity": lambda d: (200, self.set_short(
                    d["region"], d["instance_type"], d["short"])) if isinstance(d, dict)
                and "short" in d else capacity(d)}

    # --- dispatch ----------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        region, action = request.log.get("region"), request.log.get("action")
        if not region or action not in SPOT_PARAMS:
            return super().handle(request)
        params = query_params(request)
        try:
            check_params(action, params, *SPOT_PARAMS[action], SPOT_REQUIRED.get(action, ()),
                         _nested_ok if action == "RunInstances" else None)
            dry_run(params)
            handler = {"RunInstances": self._run, "DescribeInstances": self._describe_instances,
                       "StartInstances": self._start, "StopInstances": self._stop,
                       "TerminateInstances": self._terminate,
                       "DescribeSpotInstanceRequests": self._describe_requests,
                       "CancelSpotInstanceRequests": self._cancel_requests,
                       "CreateTags": self._create_tags, "DeleteTags": self._delete_tags,
                       "DescribeImages": self._describe_images,
                       "DescribeVolumes": self._describe_volumes,
                       "GetSpotPlacementScores": self._placement_scores}[action]
            inner = handler(self._spot(region), region, params)
        except Ec2Error as e:
            return error_response(e)
        return ec2_answer(action, inner)

    # --- moto --------------------------------------------------------------------------------

    def _moto_query(self, region: str, action: str, params: dict) -> ET.Element:
        """One EC2 Query request to moto (signed with a dummy SigV4 header for `region`); the
        answer's root element without namespaces, or moto's error as an Ec2Error."""
        status, _, text = self._moto("POST", "/", *signed_query(region, action, params))
        try:
            root = _strip_ns(ET.fromstring(text))
        except ET.ParseError:
            raise Ec2Error("InternalError", f"moto answered {status}: {text[:300]!r}",
                           500) from None
        if status != 200:
            raise Ec2Error(root.findtext(".//Code") or "InternalError",
                           root.findtext(".//Message") or "", status)
        return root

    def _moto_items(self, region: str, action: str, params: dict, set_name: str,
                    id_name: str | None = None, ids: list | None = None) -> list:
        """moto's items of a Describe* answer, all pages, as dicts. `ids`: only these (none:
        no call). Filters are sent as given; if moto cannot apply them (a 5xx) it is asked
        again without, since the fake filters moto's items itself anyway."""
        if ids is not None and not ids:
            return []
        query = {k: v for k, v in params.items()
                 if k not in ("Action", "Version", "MaxResults", "NextToken", "DryRun")
                 and not (id_name and k.startswith(id_name + "."))}
        for n, value in enumerate(ids or [], 1):
            query[f"{id_name}.{n}"] = value
        try:
            root = self._moto_query(region, action, query)
        except Ec2Error as e:
            if e.status < 500 or not any(k.startswith("Filter.") for k in query):
                raise
            root = self._moto_query(region, action, {k: v for k, v in query.items()
                                                     if not k.startswith("Filter.")})
        found = root.find(set_name)
        return [] if found is None else [_to_obj(e) for e in found]

    def _moto_forward(self, region: str, action: str, params: dict, id_name: str,
                      ids: list, set_name: str | None = None) -> list:
        """A write for the ids the fake does not own, sent to moto; the answer's items."""
        if not ids:
            return []
        query = {k: v for k, v in params.items() if k not in ("Action", "Version")
                 and not k.startswith(id_name + ".")}
        for n, value in enumerate(ids, 1):
            query[f"{id_name}.{n}"] = value
        root = self._moto_query(region, action, query)
        found = root.find(set_name) if set_name else None
        return [] if found is None else [_to_obj(e) for e in found]

    def _subnet(self, region: str, subnet_id: str | None, zone: str | None) -> dict | None:
        query = {"SubnetId.1": subnet_id} if subnet_id else {
            "Filter.1.Name": "default-for-az", "Filter.1.Value.1": "true",
            "Filter.2.Name": "availability-zone", "Filter.2.Value.1": zone}
        found = self._moto_query(region, "DescribeSubnets", query).find("subnetSet")
        items = [] if found is None else [_to_obj(e) for e in found]
        return items[0] if items else None

    def _instance_type_known(self, region: str, instance_type: str) -> bool:
        key = (region, instance_type)
        if key not in self.type_cache:
            try:
                self._moto_query(region, "DescribeInstanceTypes",
                                 {"InstanceType.1": instance_type})
                self.type_cache[key] = True
            except Ec2Error as e:
                if e.status >= 500:
                    raise
                self.type_cache[key] = False
        return self.type_cache[key]

    # --- RunInstances ------------------------------------------------------------------------

    def _run(self, state: dict, region: str, params: dict) -> str:
        token, made = client_token(params, state["tokens"], ZONE_PARAMS,
                                   "InvalidParameterValue")
        if made is not None:
            return self._reservation_xml(state["instances"][made], top=True)
        low, high = int_param(params, "MinCount"), int_param(params, "MaxCount")
        if low < 1 or high < low:
            raise Ec2Error("InvalidParameterValue", f"Value ({low}) for parameter minCount is "
                           "invalid. Expected a value between 1 and maxCount.")
        if high != 1:
            raise Ec2Error("UnsupportedOperation", "The fake launches one instance per "
                                                   "RunInstances (MinCount = MaxCount = 1).")
        image = self._launch_image(state, region, params["ImageId"])
        instance_type = params.get("InstanceType", "m1.small")
        if not self._instance_type_known(region, instance_type):
            raise Ec2Error("InvalidParameterValue",
                           f"Invalid value '{instance_type}' for InstanceType.")
        if enum_param(params, "Placement.Tenancy", ("default",), "default") != "default":
            raise Ec2Error("UnsupportedOperation", "The fake only launches default tenancy.")
        spec = {"image": image, "type": instance_type, "key": params.get("KeyName"),
                "user_data": self._user_data(params.get("UserData")),
                "monitoring": bool_param(params, "Monitoring.Enabled"),
                "ebs_optimized": bool_param(params, "EbsOptimized")}
        spec.update(self._network(region, params))
        spec["devices"] = self._block_devices(image, params)
        spec["tags"] = self._tag_specs(params)
        market = self._market(params)
        if spec["key"] is not None:
            try:
                self._moto_query(region, "DescribeKeyPairs", {"KeyName.1": spec["key"]})
            except Ec2Error as e:
                if e.status >= 500:
                    raise
                raise Ec2Error("InvalidKeyPair.NotFound",
                               f"The key pair '{spec['key']}' does not exist") from None
        if not self._take_capacity(state, instance_type):
            if market is not None:
                raise Ec2Error("InsufficientInstanceCapacity",
                               STATUS_MESSAGES["capacity-not-available"])
            raise Ec2Error("InsufficientInstanceCapacity",
                           f"We currently do not have sufficient {instance_type} capacity in "
                           f"the Availability Zone you requested ({spec['zone'][0]}). Our "
                           "system will be working on provisioning additional capacity.")
        request = None
        if market is not None:
            request = {"id": _sir_id(), "region": region, "created": self.now(),
                       "spec": spec, "tags": dict(spec["tags"].get("spot-instances-request",
                                                                   {})),
                       "instance_id": None, **market}
            self._status(request, "open", "pending-evaluation")
            state["requests"][request["id"]] = request
        instance = self._launch(region, state, spec, request, token)
        if request is not None:
            self._status(request, "active", "fulfilled")
        if token is not None:
            state["tokens"][token] = (token_fingerprint(params, ZONE_PARAMS), instance["id"])
        return self._reservation_xml(instance, top=True)

    def _launch_image(self, state: dict, region: str, image_id: str) -> dict:
        self._check_id("image", image_id)
        if image_id in state["images"]:
            m = state["images"][image_id]
            if m["state"] != "available":
                raise Ec2Error("InvalidAMIID.Unavailable",
                               f"The image id '[{image_id}]' is no longer available")
            return {"id": m["id"], "root_device": m["root_device"], "root_size": m["root_size"],
                    "root_type": "gp3", "snapshot": m["snapshot"],
                    "architecture": m["architecture"]}
        try:
            found = self._moto_query(region, "DescribeImages", {"ImageId.1": image_id})
        except Ec2Error as e:
            if e.status >= 500:
                raise
            found = None
        items = [] if found is None or found.find("imagesSet") is None else \
            [_to_obj(e) for e in found.find("imagesSet")]
        if not items:
            raise Ec2Error("InvalidAMIID.NotFound",
                           f"The image id '[{image_id}]' does not exist")
        m = items[0]
        root = m.get("rootDeviceName") or "/dev/sda1"
        ebs = next((d.get("ebs") or {} for d in m.get("blockDeviceMapping") or []
                    if isinstance(d, dict) and d.get("deviceName") == root), {})
        return {"id": image_id, "root_device": root,
                "root_size": int(ebs.get("volumeSize") or 8), "snapshot": ebs.get("snapshotId"),
                "root_type": ebs.get("volumeType") or "gp2",
                "architecture": m.get("architecture") or "x86_64"}

    def _network(self, region: str, params: dict) -> dict:
        zone_name = params.get("Placement.AvailabilityZone")
        zone = None
        if zone_name is not None:
            try:
                zone = self._zone(region, name=zone_name)
            except Ec2Error:
                raise Ec2Error("InvalidParameterValue",
                               f"Invalid availability zone: [{zone_name}]") from None
        subnet_id = params.get("SubnetId")
        subnet = self._subnet(region, subnet_id, (zone or self.zones(region)[0])[0])
        if subnet is not None:
            subnet_zone = self._zone(region, name=subnet["availabilityZone"])
            if zone is not None and subnet_zone != zone:
                raise Ec2Error("InvalidParameterCombination",
                               f"The subnet '{subnet['subnetId']}' is in Availability Zone "
                               f"{subnet_zone[0]}, not in the requested {zone[0]}.")
            zone = subnet_zone
        zone = zone or self.zones(region)[0]
        group_ids = scalars(params, "SecurityGroupId")
        vpc_id = subnet["vpcId"] if subnet else None
        if group_ids:
            found = self._moto_query(region, "DescribeSecurityGroups", {
                f"GroupId.{n}": g for n, g in enumerate(group_ids, 1)}).find("securityGroupInfo")
        elif vpc_id:
            found = self._moto_query(region, "DescribeSecurityGroups", {
                "Filter.1.Name": "vpc-id", "Filter.1.Value.1": vpc_id,
                "Filter.2.Name": "group-name", "Filter.2.Value.1": "default"}
            ).find("securityGroupInfo")
        else:
            found = None
        groups = [] if found is None else [_to_obj(e) for e in found]
        for g in groups:
            if vpc_id and g.get("vpcId") not in (None, "", vpc_id):
                raise Ec2Error("InvalidParameter", f"Security group {g['groupId']} and subnet "
                                                   f"{subnet['subnetId']} belong to different "
                                                   "networks.")
        return {"zone": zone, "subnet": subnet["subnetId"] if subnet else None,
                "vpc": vpc_id, "cidr": subnet["cidrBlock"] if subnet else "172.31.0.0/20",
                "groups": [{"groupId": g["groupId"], "groupName": g.get("groupName")}
                           for g in groups]}

    @staticmethod
    def _user_data(value: str | None) -> str | None:
        if value is None:
            return None
        try:
            raw = base64.b64decode(value.encode(), validate=True)
        except (binascii.Error, ValueError):
            raise Ec2Error("InvalidParameterValue",
                           "Invalid BASE64 encoding of user data.") from None
        if len(raw) > 16384:
            raise Ec2Error("InvalidParameterValue", "User data is limited to 16384 bytes")
        return value

    @staticmethod
    def _block_devices(image: dict, params: dict) -> list[dict]:
        devices = {image["root_device"]: {"size": image["root_size"], "type": image["root_type"],
                                          "dot": True, "iops": None, "throughput": None,
                                          "snapshot": image["snapshot"], "encrypted": False}}
        for m in members(params, "BlockDeviceMapping"):
            name = m.get("DeviceName")
            if not name:
                raise Ec2Error("MissingParameter", "The request must contain the parameter "
                                                   "BlockDeviceMapping.DeviceName")
            dev = devices.get(name) or {"size": None, "type": "gp2", "dot": True, "iops": None,
                                        "throughput": None, "snapshot": None,
                                        "encrypted": False}
            size = int_param(m, "Ebs.VolumeSize", 1, 65536)
            if size is not None:
                dev["size"] = size
            dev["type"] = enum_param(m, "Ebs.VolumeType", VOLUME_TYPES, dev["type"])
            if "Ebs.DeleteOnTermination" in m:
                dev["dot"] = bool_param(m, "Ebs.DeleteOnTermination")
            if "Ebs.Encrypted" in m:
                dev["encrypted"] = bool_param(m, "Ebs.Encrypted")
            dev["iops"] = int_param(m, "Ebs.Iops", 100, 256000) or dev["iops"]
            dev["throughput"] = int_param(m, "Ebs.Throughput", 125, 2000) or dev["throughput"]
            dev["snapshot"] = m.get("Ebs.SnapshotId", dev["snapshot"])
            if dev["size"] is None:
                raise Ec2Error("InvalidBlockDeviceMapping",
                               f"The volume size must be specified for device {name}.")
            if name == image["root_device"] and dev["size"] < image["root_size"]:
                raise Ec2Error("InvalidBlockDeviceMapping",
                               f"Volume of size {dev['size']}GB is smaller than snapshot "
                               f"'{image['snapshot']}', expect size >= {image['root_size']}GB")
            devices[name] = dev
        for dev in devices.values():
            if dev["type"] == "gp3":
                dev["iops"] = dev["iops"] or 3000
                dev["throughput"] = dev["throughput"] or 125
        return [{"device": name, **dev} for name, dev in devices.items()]

    @staticmethod
    def _tag_specs(params: dict) -> dict:
        tags: dict[str, dict] = {}
        for spec in members(params, "TagSpecification"):
            kind = spec.get("ResourceType")
            if kind not in TAGGABLE:
                raise Ec2Error("InvalidParameterValue", f"'{kind}' is not a valid taggable "
                                                        "resource type for this operation.")
            if kind in tags:
                raise Ec2Error("InvalidParameterValue", "The same resource type may not be "
                                                        "specified more than once in tag "
                                                        "specifications.")
            tags[kind] = Ec2Spot._tag_list(members(spec, "Tag"))
        return tags

    @staticmethod
    def _tag_list(members: list[dict], need_value: bool = True) -> dict:
        tags = {}
        for tag in members:
            key = tag.get("Key", "")
            if not key or len(key) > 128:
                raise Ec2Error("InvalidParameterValue", f"Tag key must be 1 to 128 characters: "
                                                        f"'{key}'.")
            if key.lower().startswith("aws:"):
                raise Ec2Error("InvalidParameterValue", "Tag keys starting with 'aws:' are "
                                                        "reserved for internal use")
            if len(tag.get("Value", "")) > 256:
                raise Ec2Error("InvalidParameterValue", f"Tag value of '{key}' is longer than "
                                                        "256 characters.")
            tags[key] = tag.get("Value", "") if need_value else tag.get("Value")
        if len(tags) > 50:
            raise Ec2Error("TagLimitExceeded", "The maximum number of tags is 50.")
        return tags

    def _market(self, params: dict) -> dict | None:
        market = params.get("InstanceMarketOptions.MarketType")
        spot_keys = [k for k in params if k.startswith("InstanceMarketOptions.SpotOptions.")]
        if market is None and not spot_keys:
            return None
        if market != "spot":
            raise Ec2Error("UnsupportedOperation" if market in (
                "capacity-block", "interruptible-capacity-reservation", "on-demand")
                else "InvalidParameterValue",
                f"The fake emulates InstanceMarketOptions.MarketType spot only, not {market}.")
        p = "InstanceMarketOptions.SpotOptions."
        kind = enum_param(params, p + "SpotInstanceType", ("one-time", "persistent"), "one-time")
        behavior = enum_param(params, p + "InstanceInterruptionBehavior",
                         ("hibernate", "stop", "terminate"), "terminate")
        if behavior == "hibernate":
            raise Ec2Error("UnsupportedOperation", "The fake does not emulate hibernation.")
        if kind == "one-time" and behavior != "terminate":
            raise Ec2Error("InvalidParameterCombination", f"The request with type 'one-time' is "
                           f"not supported when instanceInterruptionBehavior is set to "
                           f"'{behavior}'.")
        if kind == "persistent" and behavior == "terminate":
            raise Ec2Error("InvalidParameterCombination", "For RunInstances, persistent Spot "
                           "Instance requests are only supported when "
                           "InstanceInterruptionBehavior is set to either hibernate or stop.")
        until = params.get(p + "ValidUntil")
        if until is not None and kind != "persistent":
            raise Ec2Error("InvalidParameterCombination",
                           "ValidUntil is supported only for persistent requests.")
        price = params.get(p + "MaxPrice")
        if price is not None:
            try:
                if float(price) <= 0.001:
                    raise ValueError
            except ValueError:
                raise Ec2Error("InvalidParameterValue", f"Invalid value '{price}' for "
                                                        "MaxPrice: it must be more than USD "
                                                        "$0.001.") from None
        return {"type": kind, "behavior": behavior, "max_price": price,
                "valid_until": parse_time(until, "ValidUntil") if until else None}

    def _launch(self, region: str, state: dict, spec: dict, request: dict | None,
                token: str | None) -> dict:
        now = self.now()
        state["ips"] += 1
        net = ipaddress.ip_network(spec["cidr"], strict=False)
        ip = str(net.network_address + 10 + state["ips"] % max(1, net.num_addresses - 16))
        instance = {"id": new_id("i"), "reservation": new_id("r"), "region": region,
                    "spec": spec, "type": spec["type"], "state": "pending", "reason": None,
                    "transition": "", "launched": now, "ip": ip, "devices": [],
                    "lifecycle": "spot" if request else None,
                    "request": request["id"] if request else None,
                    "tags": dict(spec["tags"].get("instance", {})), "token": token or "",
                    "interrupted": None}
        for dev in spec["devices"]:
            vid = new_id("vol")
            state["volumes"][vid] = {
                "id": vid, "zone": spec["zone"], "size": dev["size"], "type": dev["type"],
                "iops": dev["iops"], "throughput": dev["throughput"],
                "snapshot": dev["snapshot"], "encrypted": dev["encrypted"], "created": now,
                "state": "in-use", "tags": dict(spec["tags"].get("volume", {})),
                "attachment": {"instance": instance["id"], "device": dev["device"],
                               "time": now, "dot": dev["dot"]}}
            instance["devices"].append((dev["device"], vid))
        state["instances"][instance["id"]] = instance
        if request is not None:
            request["instance_id"] = instance["id"]
        return instance

    # --- Start, Stop, Terminate --------------------------------------------------------------

    def _split(self, state: dict, kind: str, ids: list[str]) -> tuple[list, list]:
        table = {"instance": state["instances"], "request": state["requests"]}[kind]
        for i in ids:
            self._check_id(kind, i)
        return [i for i in ids if i in table], [i for i in ids if i not in table]

    @staticmethod
    def _check_id(kind: str, value: str) -> None:
        if not ID_RE[kind].fullmatch(value):
            code, prefix = ID_MALFORMED[kind]
            raise Ec2Error(code, f'Invalid id: "{value}" (expecting "{prefix}...")')

    def _state_changes(self, action: str, state: dict, region: str, params: dict,
                       act) -> str:
        ours, others = self._split(state, "instance", scalars(params, "InstanceId"))
        plan = [(state["instances"][i], act(state["instances"][i], dry=True)) for i in ours]
        items = self._moto_forward(region, action, params, "InstanceId", others, "instancesSet")
        for i, _ in plan:
            before = i["state"]
            act(i, dry=False)
            items.append({"instanceId": i["id"],
                          "currentState": {"code": STATE_CODES[i["state"]], "name": i["state"]},
                          "previousState": {"code": STATE_CODES[before], "name": before}})
        return xml("instancesSet", items)

    def _start(self, state: dict, region: str, params: dict) -> str:
        def act(i: dict, dry: bool) -> None:
            if i["state"] in ("pending", "running"):
                return
            if i["state"] != "stopped":
                raise Ec2Error("IncorrectInstanceState", f"The instance '{i['id']}' is not in "
                                                         "a state from which it can be started.")
            r = state["requests"].get(i["request"]) if i["request"] else None
            if r is not None and r["state"] == "disabled" and r["status_code"] in INTERRUPTED:
                raise Ec2Error("IncorrectSpotRequestState", "Only Amazon EC2 can restart an "
                                                            "interrupted stopped Spot Instance.")
            if r is not None and r["state"] != "disabled":
                raise Ec2Error("IncorrectSpotRequestState",
                               f"You can't start the Spot Instance '{i['id']}' because the "
                               "associated Spot Instance request is not in an appropriate "
                               "state to support start.")
            if dry:
                return
            if not self._take_capacity(state, i["type"]):
                raise Ec2Error("InsufficientInstanceCapacity",
                               f"We currently do not have sufficient {i['type']} capacity in "
                               f"the Availability Zone you requested ({i['spec']['zone'][0]}). "
                               "Our system will be working on provisioning additional "
                               "capacity.")
            self._set_state(i, "pending", None)
            i["transition"] = ""
            if r is not None:
                self._status(r, "open", "pending-evaluation")
        return self._state_changes("StartInstances", state, region, params, act)

    def _stop(self, state: dict, region: str, params: dict) -> str:
        if bool_param(params, "Hibernate"):
            raise Ec2Error("UnsupportedOperation", "The fake does not emulate hibernation.")

        def act(i: dict, dry: bool) -> None:
            if i["state"] in ("stopping", "stopped"):
                return
            if i["state"] != "running":
                raise Ec2Error("IncorrectInstanceState", f"This instance '{i['id']}' is not in "
                                                         "a state from which it can be stopped.")
            r = state["requests"].get(i["request"]) if i["request"] else None
            if r is not None and r["type"] == "one-time":
                raise Ec2Error("UnsupportedOperation",
                               f"You can't stop the Spot Instance '{i['id']}' because it is "
                               "associated with a one-time Spot Instance request. You can only "
                               "stop Spot Instances associated with persistent Spot Instance "
                               "requests.")
            if dry:
                return
            self._set_state(i, "stopping", USER_SHUTDOWN)
            i["interrupted"], i["transition"] = None, f"User initiated ({_gmt(self.now())})"
            if r is not None and r["state"] != "cancelled":
                self._status(r, "active", "marked-for-stop")
        return self._state_changes("StopInstances", state, region, params, act)

    def _terminate(self, state: dict, region: str, params: dict) -> str:
        def act(i: dict, dry: bool) -> None:
            if dry or i["state"] in ("shutting-down", "terminated"):
                return
            self._set_state(i, "shutting-down", USER_SHUTDOWN)
            i["interrupted"], i["transition"] = None, f"User initiated ({_gmt(self.now())})"
            r = state["requests"].get(i["request"]) if i["request"] else None
            if r is not None and r["instance_id"] == i["id"]:
                new_state = {"cancelled": "cancelled", "closed": "closed"}.get(
                    r["state"], "open" if r["type"] == "persistent" else "closed")
                self._status(r, new_state, "instance-terminated-by-user")
                r.pop("next", None)
        return self._state_changes("TerminateInstances", state, region, params, act)

    def _set_state(self, i: dict, name: str, reason: tuple | None) -> None:
        i["state"], i["reason"] = name, reason

    def _status(self, r: dict, state: str, code: str) -> None:
        if r.get("state") != state or r.get("status_code") != code:
            r["status_time"] = self.now()
        r["state"], r["status_code"] = state, code

    # --- spot requests -----------------------------------------------------------------------

    def _cancel_requests(self, state: dict, region: str, params: dict) -> str:
        ours, others = self._split(state, "request", scalars(params, "SpotInstanceRequestId"))
        items = self._moto_forward(region, "CancelSpotInstanceRequests", params,
                                   "SpotInstanceRequestId", others, "spotInstanceRequestSet")
        for rid in ours:
            r = state["requests"][rid]
            i = state["instances"].get(r["instance_id"])
            if r["state"] in ("open", "active", "disabled"):
                r.pop("next", None)
                if i is not None and i["state"] in ("pending", "running"):
                    self._status(r, "cancelled", "request-canceled-and-instance-running")
                elif i is not None and i["state"] in ("stopping", "stopped"):
                    # "If you cancel a Spot Instance request, Amazon EC2 terminates any
                    # associated Spot Instances that are stopped."
                    self._set_state(i, "shutting-down", i["reason"])
                    i["transition"] = f"Service initiated ({_gmt(self.now())})"
                    self._status(r, "cancelled", "instance-terminated-by-service")
                elif i is None:
                    self._status(r, "cancelled", "canceled-before-fulfillment")
                else:
                    self._status(r, "cancelled", r["status_code"])
            items.append({"spotInstanceRequestId": rid, "state": r["state"]})
        return xml("spotInstanceRequestSet", items)

    # --- tags --------------------------------------------------------------------------------

    def _tagged(self, state: dict, rid: str) -> dict | None:
        for table in ("instances", "volumes", "requests"):
            found = state[table].get(rid)
            if found is not None and found.get("state") != "deleted":
                return found
        return state["images"].get(rid)

    def _create_tags(self, state: dict, region: str, params: dict) -> str:
        tags = self._tag_list(members(params, "Tag"))
        ids = scalars(params, "ResourceId")
        ours = [r for r in ids if self._tagged(state, r) is not None]
        for rid in ours:
            if len({**self._tagged(state, rid).setdefault("tags", {}), **tags}) > 50:
                raise Ec2Error("TagLimitExceeded", f"The maximum number of tags for resource "
                                                   f"{rid} is 50.")
        self._moto_forward(region, "CreateTags", params, "ResourceId",
                           [r for r in ids if r not in ours])
        for rid in ours:
            self._tagged(state, rid)["tags"].update(tags)
        return "<return>true</return>"

    def _delete_tags(self, state: dict, region: str, params: dict) -> str:
        wanted = self._tag_list(members(params, "Tag"), need_value=False)
        ids = scalars(params, "ResourceId")
        ours = [r for r in ids if self._tagged(state, r) is not None]
        self._moto_forward(region, "DeleteTags", params, "ResourceId",
                           [r for r in ids if r not in ours])
        for rid in ours:
            tags = self._tagged(state, rid).setdefault("tags", {})
            if not members(params, "Tag"):
                tags.clear()  # "If you omit this parameter, we delete all user-defined tags"
            for key, value in wanted.items():
                if key in tags and (value is None or tags[key] == value):
                    del tags[key]
        return "<return>true</return>"

    # --- Describe* ---------------------------------------------------------------------------

    def _filters(self, action: str, params: dict, known: dict) -> list:
        filters = [(f.get("Name", ""), scalars(f, "Value")) for f in members(params, "Filter")]
        for name, _ in filters:
            if name not in known and name not in ("tag-key", "tag-value") \
                    and not name.startswith("tag:"):
                raise Ec2Error("InvalidParameterValue", f"The filter '{name}' is invalid")
        return filters

    def _paged(self, action: str, params: dict, items: list, set_name: str) -> str:
        low, high = MAX_RESULTS[action]
        size = int_param(params, "MaxResults")
        if size is not None and not low <= size <= high:
            raise Ec2Error("InvalidParameterValue", f"Value ( {size} ) for parameter maxResults "
                                                    f"is invalid. Expecting a value between "
                                                    f"{low} and {high}.")
        items, token = paginate(items, params, action, size)
        return xml(set_name, items) + xml("nextToken", token)

    def _describe_instances(self, state: dict, region: str, params: dict) -> str:
        if self.tick_on_describe:
            self.tick()
        ids = scalars(params, "InstanceId")
        if ids and "MaxResults" in params:
            raise Ec2Error("InvalidParameterCombination", "The parameter instancesSet cannot be "
                                                          "used with the parameter maxResults")
        filters = self._filters("DescribeInstances", params, INSTANCE_FILTERS)
        ours, others = self._split(state, "instance", ids)
        mine = [state["instances"][i] for i in ours] if ids else \
            sorted(state["instances"].values(), key=lambda i: (i["launched"], i["id"]))
        reservations = [self._reservation_json(i) for i in mine]
        reservations += self._moto_items(region, "DescribeInstances", params, "reservationSet",
                                         "InstanceId", others if ids else None)
        kept = []
        for res in reservations:
            instances = [i for i in res.get("instancesSet") or []
                         if _matches(i, filters, INSTANCE_FILTERS)]
            if instances:
                kept.append({**res, "instancesSet": instances})
        return self._paged("DescribeInstances", params, kept, "reservationSet")

    def _describe_volumes(self, state: dict, region: str, params: dict) -> str:
        ids = scalars(params, "VolumeId")
        for v in ids:
            self._check_id("volume", v)
        filters = self._filters("DescribeVolumes", params, VOLUME_FILTERS)
        live = {k: v for k, v in state["volumes"].items() if v["state"] != "deleted"}
        ours = [v for v in ids if v in live]
        others = [v for v in ids if v not in live]
        gone = [v for v in others if v in state["volumes"]]
        if gone:
            raise Ec2Error("InvalidVolume.NotFound", f"The volume '{gone[0]}' does not exist.")
        mine = [live[v] for v in ours] if ids else \
            sorted(live.values(), key=lambda v: (v["created"], v["id"]))
        items = [self._volume_json(v) for v in mine]
        items += self._moto_items(region, "DescribeVolumes", params, "volumeSet", "VolumeId",
                                  others if ids else None)
        items = [v for v in items if _matches(v, filters, VOLUME_FILTERS)]
        return self._paged("DescribeVolumes", params, items, "volumeSet")

    def _describe_requests(self, state: dict, region: str, params: dict) -> str:
        ids = scalars(params, "SpotInstanceRequestId")
        filters = self._filters("DescribeSpotInstanceRequests", params, REQUEST_FILTERS)
        ours, others = self._split(state, "request", ids)
        mine = [state["requests"][r] for r in ours] if ids else \
            sorted(state["requests"].values(), key=lambda r: (r["created"], r["id"]))
        items = [self._request_json(r) for r in mine]
        try:
            items += self._moto_items(region, "DescribeSpotInstanceRequests", params,
                                      "spotInstanceRequestSet", "SpotInstanceRequestId",
                                      others if ids else None)
        except Ec2Error as e:
            if others and e.status < 500:  # moto's message names its own code; EC2's form:
                raise Ec2Error("InvalidSpotInstanceRequestID.NotFound",
                               f"The spot instance request ID '{others[0]}' does not "
                               "exist") from None
            raise
        items = [r for r in items if _matches(r, filters, REQUEST_FILTERS)]
        return self._paged("DescribeSpotInstanceRequests", params, items,
                           "spotInstanceRequestSet")

    def _describe_images(self, state: dict, region: str, params: dict) -> str:
        ids = scalars(params, "ImageId")
        for m in ids:
            self._check_id("image", m)
        owners = scalars(params, "Owner")
        filters = self._filters("DescribeImages", params, IMAGE_FILTERS)
        ours = [m for m in ids if m in state["images"]]
        others = [m for m in ids if m not in state["images"]]
        mine = [state["images"][m] for m in ours] if ids else list(state["images"].values())
        mine = [m for m in mine if not owners or m["owner_id"] in owners
                or m["owner_alias"] in owners or ("self" in owners and m["owner_id"] == ACCOUNT)]
        items = [self._image_json(m) for m in mine]
        items += self._moto_items(region, "DescribeImages", params, "imagesSet", "ImageId",
                                  others if ids else None)
        items = [m for m in items if _matches(m, filters, IMAGE_FILTERS)]
        return self._paged("DescribeImages", params, items, "imagesSet")

    # --- GetSpotPlacementScores ----------------------------------------------------------------

    def _placement_scores(self, state: dict, region: str, params: dict) -> str:
        """Scores from `set_placement_score`: per region (or, SingleAvailabilityZone, per zone
        id) the highest score among the requested instance types; places without one are
        left out; best first, the top 10, then paged."""
        capacity = int_param(params, "TargetCapacity", 1, PLACEMENT_MAX_CAPACITY)
        unit = enum_param(params, "TargetCapacityUnitType", PLACEMENT_UNIT_TYPES)
        single = bool_param(params, "SingleAvailabilityZone")
        types = scalars(params, "InstanceType")
        regions = scalars(params, "RegionName")
        if not types:
            raise Ec2Error("MissingParameter", "The request must contain the parameter "
                                               "InstanceType or "
                                               "InstanceRequirementsWithMetadata")
        if len(types) > PLACEMENT_MAX_TYPES:
            raise Ec2Error("InvalidParameterValue", f"The parameter InstanceType takes at most "
                                                    f"{PLACEMENT_MAX_TYPES} values.")
        for t in types:
            if not INSTANCE_TYPE_RE.fullmatch(t):
                raise Ec2Error("InvalidParameterValue", f"Invalid value '{t}' for "
                                                        "InstanceType.")
        if len(regions) > PLACEMENT_MAX_REGIONS:
            raise Ec2Error("InvalidParameterValue", f"The parameter RegionName takes at most "
                                                    f"{PLACEMENT_MAX_REGIONS} values.")
        for r in regions:
            if not REGION_RE.fullmatch(r):
                raise Ec2Error("InvalidParameterValue", f"Invalid value '{r}' for RegionName.")
        self.placement_score_requests.append({
            "instance_types": types, "regions": regions, "single_az": single,
            "target_capacity": capacity, "target_capacity_unit_type": unit,
            "endpoint_region": region})
        wanted = set(types)
        scored: dict[tuple[str, str | None], int] = {}  # the best requested type's score
        for (r, z, t), score in self.placement_scores.items():
            if t in wanted:
                scored[(r, z)] = max(score, scored.get((r, z), 0))
        places = list(dict.fromkeys(regions)) if regions else sorted({r for r, _ in scored})
        items = []
        for r in places:
            zones = {z: s for (rr, z), s in scored.items() if rr == r and z is not None}
            if single:
                items += [{"region": r, "availabilityZoneId": z, "score": s}
                          for z, s in zones.items()]
            elif (r, None) in scored or zones:
                items.append({"region": r, "score": scored.get((r, None),
                                                               max(zones.values(), default=0))})
        items.sort(key=lambda i: (-i["score"], i["region"], i.get("availabilityZoneId", "")))
        return self._paged("GetSpotPlacementScores", params, items[:PLACEMENT_TOP],
                           "spotPlacementScoreSet")

    # --- answer items (element names as in the botocore model) --------------------------------

    def _reservation_json(self, i: dict) -> dict:
        return {"reservationId": i["reservation"], "ownerId": ACCOUNT, "groupSet": [],
                "instancesSet": [self._instance_json(i)]}

    def _reservation_xml(self, i: dict, top: bool = False) -> str:
        res = self._reservation_json(i)
        return "".join(xml(k, v) for k, v in res.items()) if top else xml("item", res)

    def _instance_json(self, i: dict) -> dict:
        spec, state = i["spec"], self.spot_regions[i["region"]]
        gone = i["state"] == "terminated"
        zone = spec["zone"]
        suffix = "ec2.internal" if i["region"] == "us-east-1" else \
            f"{i['region']}.compute.internal"
        return {
            "instanceId": i["id"], "imageId": spec["image"]["id"],
            "instanceState": {"code": STATE_CODES[i["state"]], "name": i["state"]},
            "privateDnsName": "" if gone else f"ip-{i['ip'].replace('.', '-')}.{suffix}",
            "dnsName": "", "reason": i["transition"], "keyName": spec["key"],
            "amiLaunchIndex": 0, "productCodes": None, "instanceType": i["type"],
            "launchTime": ec2_time(i["launched"]),
            "placement": {"availabilityZone": zone[0], "availabilityZoneId": zone[1],
                          "groupName": "", "tenancy": "default"},
            "monitoring": {"state": "enabled" if spec["monitoring"] else "disabled"},
            "subnetId": None if gone else spec["subnet"], "vpcId": None if gone else spec["vpc"],
            "privateIpAddress": None if gone else i["ip"], "sourceDestCheck": True,
            "groupSet": [] if gone else spec["groups"],
            "stateReason": {"code": i["reason"][0], "message": i["reason"][1]}
            if i["reason"] else None,
            "architecture": spec["image"]["architecture"], "rootDeviceType": "ebs",
            "rootDeviceName": spec["image"]["root_device"],
            "blockDeviceMapping": [] if gone else [
                {"deviceName": device, "ebs": {
                    "volumeId": vid, "status": "attached",
                    "attachTime": ec2_time(state["volumes"][vid]["attachment"]["time"]),
                    "deleteOnTermination": state["volumes"][vid]["attachment"]["dot"]}}
                for device, vid in i["devices"]],
            "instanceLifecycle": i["lifecycle"], "spotInstanceRequestId": i["request"],
            "virtualizationType": "hvm", "clientToken": i["token"],
            "tagSet": [{"key": k, "value": v} for k, v in i["tags"].items()] or None,
            "hypervisor": "xen", "ebsOptimized": spec["ebs_optimized"], "enaSupport": True,
            "platformDetails": "Linux/UNIX", "usageOperation": "RunInstances"}

    def _volume_json(self, v: dict) -> dict:
        a = v["attachment"]
        return {"volumeId": v["id"], "size": v["size"], "snapshotId": v["snapshot"] or "",
                "availabilityZone": v["zone"][0], "availabilityZoneId": v["zone"][1],
                "status": v["state"], "createTime": ec2_time(v["created"]),
                "attachmentSet": [] if a is None else [{
                    "volumeId": v["id"], "instanceId": a["instance"], "device": a["device"],
                    "status": "attached", "attachTime": ec2_time(a["time"]),
                    "deleteOnTermination": a["dot"]}],
                "volumeType": v["type"], "iops": v["iops"], "throughput": v["throughput"],
                "encrypted": v["encrypted"], "multiAttachEnabled": False,
                "tagSet": [{"key": k, "value": x} for k, x in v["tags"].items()] or None}

    def _request_json(self, r: dict) -> dict:
        spec = r["spec"]
        return {
            "spotInstanceRequestId": r["id"], "spotPrice": r["max_price"], "type": r["type"],
            "state": r["state"],
            "status": {"code": r["status_code"], "updateTime": ec2_time(r["status_time"]),
                       "message": STATUS_MESSAGES.get(r["status_code"], "")},
            "launchSpecification": {
                "imageId": spec["image"]["id"], "keyName": spec["key"],
                "groupSet": spec["groups"], "instanceType": spec["type"],
                "placement": {"availabilityZone": spec["zone"][0]},
                "subnetId": spec["subnet"], "monitoring": {"enabled": spec["monitoring"]}},
            "instanceId": r["instance_id"], "createTime": ec2_time(r["created"]),
            "productDescription": "Linux/UNIX",
            "tagSet": [{"key": k, "value": v} for k, v in r["tags"].items()] or None,
            "launchedAvailabilityZone": spec["zone"][0] if r["instance_id"] else None,
            "instanceInterruptionBehavior": r["behavior"],
            "validUntil": ec2_time(r["valid_until"]) if r["valid_until"] else None}

    @staticmethod
    def _image_json(m: dict) -> dict:
        return {"imageId": m["id"], "imageLocation": f"amazon/{m['name']}",
                "imageState": m["state"], "imageOwnerId": m["owner_id"],
                "creationDate": ec2_time(m["created"]), "isPublic": True,
                "architecture": m["architecture"], "imageType": "machine", "name": m["name"],
                "description": m["description"], "imageOwnerAlias": m["owner_alias"],
                "rootDeviceType": "ebs", "rootDeviceName": m["root_device"],
                "blockDeviceMapping": [{"deviceName": m["root_device"], "ebs": {
                    "snapshotId": m["snapshot"], "volumeSize": m["root_size"],
                    "deleteOnTermination": True, "volumeType": "gp3", "encrypted": False}}],
                "virtualizationType": "hvm", "hypervisor": "xen", "enaSupport": True,
                "sriovNetSupport": "simple", "platformDetails": "Linux/UNIX",
                "usageOperation": "RunInstances", "bootMode": "uefi-preferred",
                "tagSet": [{"key": k, "value": v} for k, v in m.get("tags", {}).items()]
                or None}
