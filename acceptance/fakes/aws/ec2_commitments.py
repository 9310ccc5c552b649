"""A fake of the EC2 Query API for the two kinds of capacity commitment moto does not have,
Capacity Blocks for ML and On-Demand Capacity Reservations, in front of a moto server that
answers every other EC2 action (and anything else sent here).

    moto = aws_emulator.start_moto(tmp)
    ec2 = Ec2Commitments(moto.url).start()          # the provider's aws.endpoints.ec2
    ec2.seed_offerings("us-east-1", [{"instance_type": "p5.48xlarge",
                                      "availability_zone": "us-east-1a", "instance_count": 2,
                                      "start": "2027-01-04T11:30:00Z", "duration_hours": 48,
                                      "upfront_fee": "12345.67"}])   # or POST /_fake/offerings
    ... boto3.client("ec2", endpoint_url=ec2.url, ...) ...
    ec2.set_clock(advance_hours=48)                  # or POST /_fake/clock
    ec2.set_usage("us-east-1", "cr-…", 1)            # or POST /_fake/usage
    ec2.state()["regions"]["us-east-1"]["reservations"]           # or GET /_fake/state

Served here, in EC2's XML: DescribeCapacityBlockOfferings, PurchaseCapacityBlock,
CreateCapacityReservation, DescribeCapacityReservations, CancelCapacityReservation. Every
other request goes to moto unchanged and moto's answer comes back unchanged (logged with
`forwarded: true`). A SigV4 `Authorization` header is required (its signature is not
checked); the region of its credential scope selects the state, which is kept per region.
Faults match the action name (`{"path": "^PurchaseCapacityBlock$", ...}`). Parameter names
follow the botocore service model `ec2/2016-11-15`; see ../README.md for the references of
every behaviour and for what is a guess.
"""

from __future__ import annotations

import datetime as _dt
import http.client
import re
from urllib.parse import urlsplit

from .. import CloudClock, FakeServer, Request, Response
from .common import (ACCOUNT, Ec2Error, bool_param, check_params, client_token, dry_run,
                     ec2_answer, ec2_time, enum_param, error_response, injected_error, int_param,
                     log_request, members, new_id, paginate, parse_time, query_params, scalars,
                     signed_query, token_fingerprint, xml)

# Query parameter names (first segment of the serialized name) per action, from the
# botocore model: those the fake emulates, and valid ones it refuses as not emulated.
PARAMS = {
    "DescribeCapacityBlockOfferings": (
        {"DryRun", "InstanceType", "InstanceCount", "StartDateRange", "EndDateRange",
         "CapacityDurationHours", "NextToken", "MaxResults"},
        {"UltraserverType", "UltraserverCount", "AllAvailabilityZones",
         "InstanceTypePreference"}),
    "PurchaseCapacityBlock": (
        {"DryRun", "TagSpecification", "CapacityBlockOfferingId", "InstancePlatform"},
        set()),
    "CreateCapacityReservation": (
        {"ClientToken", "InstanceType", "InstancePlatform", "AvailabilityZone",
         "AvailabilityZoneId", "Tenancy", "InstanceCount", "EbsOptimized", "EphemeralStorage",
         "EndDate", "EndDateType", "InstanceMatchCriteria", "TagSpecifications", "DryRun"},
        {"OutpostArn", "PlacementGroupArn", "StartDate", "CommitmentDuration",
         "DeliveryPreference"}),
    "DescribeCapacityReservations": (
        {"CapacityReservationId", "NextToken", "MaxResults", "Filter", "DryRun"}, set()),
    "CancelCapacityReservation": (
        {"CapacityReservationId", "DryRun"}, {"ApplyCancellationCharges", "QuoteId"}),
}
REQUIRED = {
    "DescribeCapacityBlockOfferings": ("CapacityDurationHours",),
    "PurchaseCapacityBlock": ("CapacityBlockOfferingId", "InstancePlatform"),
    "CreateCapacityReservation": ("InstanceType", "InstancePlatform", "InstanceCount"),
    "DescribeCapacityReservations": (),
    "CancelCapacityReservation": ("CapacityReservationId",),
}
# Enum CapacityReservationInstancePlatform of the model.
PLATFORMS = (
    "Linux/UNIX", "Red Hat Enterprise Linux", "SUSE Linux", "Windows", "Windows with SQL Server",
    "Windows with SQL Server Enterprise", "Windows with SQL Server Standard",
    "Windows with SQL Server Web", "Linux with SQL Server Standard",
    "Linux with SQL Server Web", "Linux with SQL Server Enterprise",
    "RHEL with SQL Server Standard", "RHEL with SQL Server Enterprise",
    "RHEL with SQL Server Web", "RHEL with HA", "RHEL with HA and SQL Server Standard",
    "RHEL with HA and SQL Server Enterprise", "Ubuntu Pro")
# User guide, "Capacity Blocks for ML", supported platforms.
CAPACITY_BLOCK_PLATFORMS = ("Linux/UNIX", "Red Hat Enterprise Linux", "RHEL with HA",
                            "SUSE Linux", "Ubuntu Pro")
ENUMS = {"Tenancy": ("default", "dedicated"), "EndDateType": ("unlimited", "limited"),
         "InstanceMatchCriteria": ("open", "targeted")}
FILTERS = ("instance-type", "owner-id", "instance-platform", "availability-zone", "tenancy",
           "outpost-arn", "state", "start-date", "end-date", "end-date-type",
           "instance-match-criteria", "placement-group-arn")
INSTANCE_TYPE_RE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")
RESERVATION_ID_RE = re.compile(r"cr-[0-9a-f]{17}")
OFFERING_ID_RE = re.compile(r"cb-[0-9a-f]{17}")
# The zone of a CreateCapacityReservation: a ClientToken retry may name another one.
ZONE_PARAMS = ("AvailabilityZone", "AvailabilityZoneId")
HOP_BY_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
              "trailer", "upgrade", "proxy-authorization", "proxy-authenticate", "expect"}
MAX_START_AHEAD = _dt.timedelta(weeks=8)


def _page(items: list, params: dict, action: str) -> tuple[list, str | None]:
    """`MaxResults` (1-1000) and `NextToken` paging."""
    return paginate(items, params, action,
                    int_param(params, "MaxResults", 1, 1000, code="InvalidMaxResults"))


class Ec2Commitments(CloudClock, FakeServer):
    """The fake EC2 endpoint (`url` replaces https://ec2.<region>.amazonaws.com), forwarding
    to `moto_url`. Settings (`POST /_fake/faults` or `configure`): `payment_pending_reads`
    (DescribeCapacityReservations answers that show a purchased block `payment-pending`
    before its payment clears, default 1), `fail_next_payment` (the next purchase ends
    `payment-failed`)."""

    name = "ec2-commitments"

    def __init__(self, moto_url: str, time_scale=None):
        super().__init__(time_scale)
        self.moto_url = moto_url.rstrip("/")
        self.zone_cache: dict[str, list[tuple[str, str]]] = {}
        self.reset_state()

    def reset_state(self) -> None:
        self.regions: dict[str, dict] = {}
        self.clock_offset = _dt.timedelta(0)
        self.payment_pending_reads, self.fail_next_payment = 1, False

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        if "payment_pending_reads" in s:
            self.payment_pending_reads = max(0, int(s.pop("payment_pending_reads")))
        if "fail_next_payment" in s:
            self.fail_next_payment = bool(s.pop("fail_next_payment"))
        super().configure(s)

    # --- clock, regions, zones -------------------------------------------------------------

    def set_clock(self, advance_hours: float | None = None, now: str | None = None) -> dict:
        """Moves the clock forward by `advance_hours`, or to the instant `now`. Any move
        also clears every pending Capacity Block payment (time has passed for it)."""
        with self.lock:
            self.move_clock(None if now is None else parse_time(now, "now"),
                            hours=advance_hours)
            for region in self.regions.values():
                for r in region["reservations"].values():
                    if r["payment"] == "pending":
                        self._settle_payment(r)
            return {"now": ec2_time(self.now())}

    def _region(self, name: str) -> dict:
        return self.regions.setdefault(name, {"offerings": {}, "consumed": {},
                                              "reservations": {}, "tokens": {},
                                              "no_capacity": set()})

    def zones(self, region: str) -> list[tuple[str, str]]:
        """(zone name, zone id) of `region` as moto's DescribeAvailabilityZones lists them,
        so the fake and moto agree on zones; asked once per region."""
        if region not in self.zone_cache:
            status, _, body = self._moto("POST", "/", *signed_query(
                region, "DescribeAvailabilityZones", {}))
            text = body.decode("utf-8", "replace")
            if status != 200:
                raise Ec2Error("InternalError", f"moto did not list zones: {status} {text}")
            self.zone_cache[region] = re.findall(
                r"<zoneName>([^<]+)</zoneName>(?:(?!</item>).)*?<zoneId>([^<]+)</zoneId>", text,
                re.S)
        return self.zone_cache[region]

    def _zone(self, region: str, name: str | None = None, zone_id: str | None = None
              ) -> tuple[str, str]:
        for zone in self.zones(region):
            if name == zone[0] or zone_id == zone[1]:
                return zone
        given = name or zone_id
        raise Ec2Error("InvalidZone.NotFound",
                       f"The zone '{given}' does not exist or is not available in {region}.")

    # --- seeding, capacity switch, state ----------------------------------------------------

    def seed_offerings(self, region: str, offerings: list[dict]) -> list[dict]:
        """Adds Capacity Block offerings to `region`: each `instance_type`,
        `availability_zone`, `instance_count`, `start`, `duration_hours` (or `end`),
        `upfront_fee`; optional `end`, `currency` (USD), `tenancy` (default), `id`
        (generated `cb-` + 17 hex digits). Returns them as the fake stores them."""
        with self.lock:
            state, out = self._region(region), []
            for spec in offerings:
                spec = dict(spec)
                zone = self._zone(region, name=spec.pop("availability_zone"))
                start = parse_time(spec.pop("start"), "start")
                hours = spec.pop("duration_hours", None)
                end = spec.pop("end", None)
                end = parse_time(end, "end") if end is not None else None
                if hours is None and end is None:
                    raise ValueError("an offering needs duration_hours or end")
                hours = int(hours) if hours is not None else \
                    int((end - start).total_seconds() // 3600)
                fee = spec.pop("upfront_fee")
                offering = {
                    "id": spec.pop("id", None) or new_id("cb"),
                    "instance_type": spec.pop("instance_type"), "zone": zone,
                    "instance_count": int(spec.pop("instance_count")), "start": start,
                    "end": end or start + _dt.timedelta(hours=hours), "duration_hours": hours,
                    "upfront_fee": fee if isinstance(fee, str) else f"{fee:.2f}",
                    "currency": spec.pop("currency", "USD"),
                    "tenancy": spec.pop("tenancy", "default")}
                if spec:
                    raise ValueError(f"unknown offering fields {sorted(spec)}")
                state["offerings"][offering["id"]] = offering
                out.append(self._offering_json(offering))
            return out

    def set_capacity(self, region: str, instance_type: str, available: bool) -> dict:
        """Makes CreateCapacityReservation of `instance_type` in `region` fail with
        InsufficientInstanceCapacity (`available` false) or succeed again (true)."""
        with self.lock:
            no_capacity = self._region(region)["no_capacity"]
            (no_capacity.discard if available else no_capacity.add)(instance_type)
            return {"region": region, "no_capacity": sorted(no_capacity)}

    def set_usage(self, region: str, reservation_id: str, used: int) -> dict:
        """Runs `used` instances in reservation `reservation_id` (as if launched into it
        outside the provider): its AvailableInstanceCount drops by that many."""
        with self.lock:
            r = self._region(region)["reservations"].get(reservation_id)
            if r is None:
                raise KeyError(f"no reservation {reservation_id} in {region}")
            if not 0 <= int(used) <= r["count"]:
                raise ValueError(f"used must be 0 to {r['count']}")
            r["used"] = int(used)
            return self._reservation_json(r)

    def snapshot(self) -> dict:
        return {
            "clock": ec2_time(self.now()),
            "settings": {"payment_pending_reads": self.payment_pending_reads,
                         "fail_next_payment": self.fail_next_payment},
            "regions": {name: {
                "offerings": [self._offering_json(o) for o in r["offerings"].values()],
                "consumed_offerings": sorted(r["consumed"]),
                "reservations": [{**self._reservation_json(c),
                                  "fake": {"payment": c["payment"],
                                           "payment_reads_left": c["payment_reads"],
                                           "client_token": c.get("client_token")}}
                                 for c in r["reservations"].values()],
                "no_capacity": sorted(r["no_capacity"]),
            } for name, r in self.regions.items()},
        }

    def control_routes(self) -> dict:
        """`POST /_fake/offerings`, `/_fake/clock` (the clock is cloud time, moved by the
        test only), `/_fake/capacity` and `/_fake/usage`."""
        return {"/_fake/offerings": lambda d: (201, {"offerings": self.seed_offerings(
                      d["region"], d["offerings"])}),
                  "/_fake/clock": lambda d: (200, self.set_clock(d.get("advance_hours"),
                                                                 d.get("now"))),
                  "/_fake/capacity": lambda d: (200, self.set_capacity(
                      d["region"], d["instance_type"], bool(d.get("available", False)))),
                  "/_fake/usage": lambda d: (200, self.set_usage(
                      d["region"], d["reservation_id"], d["used"]))}

    control_errors = (Ec2Error, *FakeServer.control_errors)

    def control_failure(self, e: Exception) -> Response:
        if isinstance(e, Ec2Error):
            return Response(400, {"error": f"{e.code}: {e.message}"})
        return super().control_failure(e)

    # --- request parsing and logging --------------------------------------------------------

    params = staticmethod(query_params)

    def fault_target(self, request: Request) -> str:
        """Logs the action, its non-secret parameters and the region; faults match the
        action name."""
        return log_request(request)

    # --- dispatch -------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        region = request.log.get("region")
        if not region:
            return error_response(Ec2Error(
                "AuthFailure", "AWS was not able to validate the provided access credentials"))
        action = request.log.get("action")
        if action not in PARAMS:
            return self._forward(request)
        params = query_params(request)
        try:
            check_params(action, params, *PARAMS[action], REQUIRED[action])
            dry_run(params)
            handler = {"DescribeCapacityBlockOfferings": self._describe_offerings,
                       "PurchaseCapacityBlock": self._purchase,
                       "CreateCapacityReservation": self._create,
                       "DescribeCapacityReservations": self._describe_reservations,
                       "CancelCapacityReservation": self._cancel}[action]
            body = handler(self._region(region), region, params)
        except Ec2Error as e:
            return error_response(e)
        return ec2_answer(action, "".join(xml(k, v) for k, v in body.items()))

    def error(self, status, code, message, retry_after=None) -> Response:
        return injected_error(status, code, message, retry_after)

    _error_response = staticmethod(error_response)

    # --- forwarding -----------------------------------------------------------------------

    def _moto(self, method: str, target: str, body: bytes, headers: dict
              ) -> tuple[int, list, bytes]:
        url = urlsplit(self.moto_url)
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=60)
        try:
            conn.request(method, target, body=body or None, headers=headers)
            answer = conn.getresponse()
            return answer.status, answer.getheaders(), answer.read()
        finally:
            conn.close()

    def _forward(self, request: Request) -> Response:
        """Sends the request to moto as it came (Host and Content-Length recomputed) and
        answers with moto's status, headers and body."""
        request.log["forwarded"] = True
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            status, answer_headers, body = self._moto(request.method, request.target or "/",
                                                      request.body, headers)
        except OSError as e:
            return error_response(Ec2Error("InternalError", f"The fake could not reach moto: {e}"))
        keep = {k: v for k, v in answer_headers
                if k.lower() not in HOP_BY_HOP | {"server", "date"}}
        return Response(status, body, keep)

    # --- Capacity Block offerings and purchases --------------------------------------------

    @staticmethod
    def _duration_valid(hours: int) -> bool:
        """1-day steps up to 14 days, 7-day steps up to 182 days."""
        days, rest = divmod(hours, 24)
        return rest == 0 and days >= 1 and (days <= 14 or (days <= 182 and days % 7 == 0))

    def _describe_offerings(self, state: dict, region: str, params: dict) -> dict:
        hours = int_param(params, "CapacityDurationHours")
        if not self._duration_valid(hours):
            raise Ec2Error("InvalidParameterValue",
                           f"Invalid value '{hours}' for CapacityDurationHours. The duration "
                           "must be in 1-day (24-hour) increments up to 14 days, or in 7-day "
                           "increments up to 182 days.")
        count = int_param(params, "InstanceCount", 1, 64)
        now = self.now()
        start = parse_time(params["StartDateRange"], "StartDateRange") \
            if "StartDateRange" in params else None
        end = parse_time(params["EndDateRange"], "EndDateRange") \
            if "EndDateRange" in params else None
        if start is not None and start > now + MAX_START_AHEAD:
            raise Ec2Error("InvalidParameterValue", "Invalid value for StartDateRange: a "
                           "Capacity Block can start at most 8 weeks in the future.")
        if start is not None and end is not None and end <= start:
            raise Ec2Error("InvalidParameterValue",
                           "EndDateRange must be later than StartDateRange.")
        matching = [o for o in sorted(state["offerings"].values(),
                                      key=lambda o: (o["start"], o["id"]))
                    if o["start"] > now and o["duration_hours"] == hours
                    and params.get("InstanceType") in (None, o["instance_type"])
                    and count in (None, o["instance_count"])
                    and (start is None or o["start"] >= start)
                    and (end is None or o["end"] <= end)]
        page, token = _page(matching, params, "DescribeCapacityBlockOfferings")
        return {"capacityBlockOfferingSet": [self._offering_xml(o) for o in page],
                "nextToken": token}

    def _purchase(self, state: dict, region: str, params: dict) -> dict:
        offering_id = params["CapacityBlockOfferingId"]
        if not OFFERING_ID_RE.fullmatch(offering_id):
            raise Ec2Error("InvalidCapacityBlockOfferingIdMalformed",
                           f"The Capacity Block offering ID '{offering_id}' is malformed.")
        platform = enum_param(params, "InstancePlatform", PLATFORMS)
        if platform not in CAPACITY_BLOCK_PLATFORMS:
            raise Ec2Error("InvalidParameterValue", f"Capacity Blocks do not support the "
                                                    f"platform '{platform}'.")
        tags = self._tags(params, "TagSpecification")
        offering = state["offerings"].get(offering_id)
        if offering is None and offering_id in state["consumed"]:
            raise Ec2Error("InvalidCapacityBlockOfferingIdExpired",
                           f"The Capacity Block offering ID '{offering_id}' is no longer "
                           "available.")
        if offering is None:
            raise Ec2Error("InvalidCapacityBlockOfferingIdNotFound",
                           f"The Capacity Block offering ID '{offering_id}' cannot be found "
                           "for this account.")
        if offering["start"] <= self.now():
            raise Ec2Error("InvalidCapacityBlockOfferingIdExpired",
                           f"The Capacity Block offering ID '{offering_id}' is no longer "
                           "available.")
        del state["offerings"][offering_id]
        state["consumed"][offering_id] = None
        r = self._new_reservation(region, {
            "reservation_type": "capacity-block", "offering_id": offering_id,
            "instance_type": offering["instance_type"], "platform": platform,
            "zone": offering["zone"], "tenancy": offering["tenancy"],
            "count": offering["instance_count"], "start": offering["start"],
            "end": offering["end"], "end_date_type": "limited",
            "match_criteria": "targeted", "ebs_optimized": False,
            "ephemeral_storage": False, "tags": tags,
            "payment": "pending", "payment_reads": self.payment_pending_reads,
            "payment_fails": self.fail_next_payment})
        self.fail_next_payment = False
        if r["payment_reads"] == 0:
            self._settle_payment(r)
        state["reservations"][r["id"]] = r
        return {"capacityReservation": self._reservation_json(r)}

    def _settle_payment(self, r: dict) -> None:
        r["payment"], r["payment_reads"] = ("failed" if r["payment_fails"] else "paid"), 0

    # --- On-Demand Capacity Reservations ---------------------------------------------------

    def _create(self, state: dict, region: str, params: dict) -> dict:
        token, made = client_token(params, state["tokens"], ZONE_PARAMS, "InvalidClientToken")
        if made is not None:
            return {"capacityReservation": self._reservation_json(state["reservations"][made])}
        instance_type = params["InstanceType"]
        if not INSTANCE_TYPE_RE.fullmatch(instance_type):
            raise Ec2Error("InvalidParameterValue",
                           f"Invalid value '{instance_type}' for InstanceType.")
        platform = enum_param(params, "InstancePlatform", PLATFORMS)
        count = int_param(params, "InstanceCount", 1, 1000)
        name, zone_id = params.get("AvailabilityZone"), params.get("AvailabilityZoneId")
        if bool(name) == bool(zone_id):
            raise Ec2Error("InvalidParameterCombination", "Specify exactly one of "
                                                          "AvailabilityZone and "
                                                          "AvailabilityZoneId.")
        zone = self._zone(region, name, zone_id)
        end_type = enum_param(params, "EndDateType", ENUMS["EndDateType"], "unlimited")
        end = parse_time(params["EndDate"], "EndDate") if "EndDate" in params else None
        if (end_type == "limited") != (end is not None):
            raise Ec2Error("InvalidParameterCombination", "EndDate must be given when, and "
                                                          "only when, EndDateType is limited.")
        if end is not None and end <= self.now():
            raise Ec2Error("InvalidParameterValue", "EndDate must be in the future.")
        tags = self._tags(params, "TagSpecifications")
        if instance_type in state["no_capacity"]:
            raise Ec2Error("InsufficientInstanceCapacity",
                           f"We currently do not have sufficient {instance_type} capacity in "
                           f"the Availability Zone you requested ({zone[0]}). Our system will "
                           "be working on provisioning additional capacity.")
        r = self._new_reservation(region, {
            "reservation_type": "default", "instance_type": instance_type,
            "platform": platform, "zone": zone,
            "tenancy": enum_param(params, "Tenancy", ENUMS["Tenancy"], "default"),
            "count": count, "start": None, "end": end, "end_date_type": end_type,
            "match_criteria": enum_param(params, "InstanceMatchCriteria",
                                    ENUMS["InstanceMatchCriteria"], "open"),
            "ebs_optimized": bool_param(params, "EbsOptimized"),
            "ephemeral_storage": bool_param(params, "EphemeralStorage"), "tags": tags,
            "payment": "none", "payment_reads": 0, "payment_fails": False})
        r["start"] = r["created"]
        state["reservations"][r["id"]] = r
        if token is not None:
            r["client_token"] = token
            state["tokens"][token] = (token_fingerprint(params, ZONE_PARAMS), r["id"])
        return {"capacityReservation": self._reservation_json(r)}

    def _describe_reservations(self, state: dict, region: str, params: dict) -> dict:
        found = []
        for rid in scalars(params, "CapacityReservationId"):
            found.append(self._lookup(state, rid))
        candidates = found or sorted(state["reservations"].values(),
                                     key=lambda r: (r["created"], r["id"]))
        filters = [(f.get("Name", ""), scalars(f, "Value")) for f in members(params, "Filter")]
        for name, _ in filters:
            if name not in FILTERS and name != "tag-key" and not name.startswith("tag:"):
                raise Ec2Error("InvalidParameterValue", f"The filter '{name}' is invalid")
        matching = [r for r in candidates
                    if all(self._filter_matches(r, n, v) for n, v in filters)]
        page, token = _page(matching, params, "DescribeCapacityReservations")
        items = [self._reservation_json(r) for r in page]
        for r in page:  # a read: a pending payment comes closer to clearing
            if r["payment"] == "pending":
                r["payment_reads"] -= 1
                if r["payment_reads"] <= 0:
                    self._settle_payment(r)
        return {"capacityReservationSet": items, "nextToken": token}

    def _filter_matches(self, r: dict, name: str, values: list[str]) -> bool:
        if name == "tag-key":
            return any(v in r["tags"] for v in values)
        if name.startswith("tag:"):
            key = name[4:]
            return key in r["tags"] and r["tags"][key] in values
        if name in ("start-date", "end-date"):
            when = r["start"] if name == "start-date" else r["end"]
            return when is not None and any(parse_time(v, name) == when for v in values)
        field = {"instance-type": "instanceType", "owner-id": "ownerId",
                 "instance-platform": "instancePlatform", "availability-zone":
                 "availabilityZone", "tenancy": "tenancy", "outpost-arn": "outpostArn",
                 "state": "state", "end-date-type": "endDateType", "instance-match-criteria":
                 "instanceMatchCriteria", "placement-group-arn": "placementGroupArn"}[name]
        return self._reservation_json(r).get(field) in values

    def _cancel(self, state: dict, region: str, params: dict) -> dict:
        r = self._lookup(state, params["CapacityReservationId"])
        if r["reservation_type"] == "capacity-block":
            raise Ec2Error("UnsupportedOperation",
                           f"Capacity Block {r['id']} cannot be cancelled: Capacity Block "
                           "cancellations aren't allowed.")
        current = self._state(r)
        if current == "expired":
            raise Ec2Error("IncorrectState", f"The Capacity Reservation {r['id']} is in state "
                                             "expired and cannot be cancelled.")
        if current != "cancelled":
            r["cancelled"] = self.now()
        return {"return": True}

    @staticmethod
    def _lookup(state: dict, rid: str) -> dict:
        if not RESERVATION_ID_RE.fullmatch(rid):
            raise Ec2Error("InvalidCapacityReservationId.Malformed",
                           f"Invalid id: \"{rid}\" (expecting \"cr-...\")")
        if rid not in state["reservations"]:
            raise Ec2Error("InvalidCapacityReservationId.NotFound",
                           f"The capacity reservation ID '{rid}' does not exist")
        return state["reservations"][rid]

    # --- shared pieces --------------------------------------------------------------------

    @staticmethod
    def _tags(params: dict, prefix: str) -> dict:
        """The tags of `prefix.N` tag specifications; only `capacity-reservation` ones."""
        tags = {}
        for spec in members(params, prefix):
            kind = spec.get("ResourceType")
            if kind != "capacity-reservation":
                raise Ec2Error("InvalidParameterValue", f"'{kind}' is not a valid taggable "
                                                        "resource type for this operation.")
            for tag in members(spec, "Tag"):
                key = tag.get("Key", "")
                if not key or key.lower().startswith("aws:"):
                    raise Ec2Error("InvalidTagKey.Malformed",
                                   f"Tag keys cannot be empty or start with 'aws:': '{key}'.")
                tags[key] = tag.get("Value", "")
        return tags

    def _new_reservation(self, region: str, fields: dict) -> dict:
        rid = new_id("cr")
        return {"id": rid, "region": region, "created": self.now(), "cancelled": None,
                "arn": f"arn:aws:ec2:{region}:{ACCOUNT}:capacity-reservation/{rid}", **fields}

    def _state(self, r: dict) -> str:
        """The state at the fake's current time."""
        if r["cancelled"]:
            return "cancelled"
        if r["payment"] == "pending":
            return "payment-pending"
        if r["payment"] == "failed":
            return "payment-failed"
        now = self.now()
        if r["end"] is not None and now >= r["end"]:
            return "expired"
        if r["start"] is not None and now < r["start"]:
            return "scheduled"
        return "active"

    def _reservation_json(self, r: dict) -> dict:
        """The CapacityReservation structure, element names as in the model."""
        return {
            "capacityReservationId": r["id"], "ownerId": ACCOUNT,
            "capacityReservationArn": r["arn"], "availabilityZoneId": r["zone"][1],
            "instanceType": r["instance_type"], "instancePlatform": r["platform"],
            "availabilityZone": r["zone"][0], "tenancy": r["tenancy"],
            "totalInstanceCount": r["count"],
            "availableInstanceCount": r["count"] - (r.get("used", 0)
                                                     if self._state(r) == "active" else 0),
            "ebsOptimized": r["ebs_optimized"], "ephemeralStorage": r["ephemeral_storage"],
            "state": self._state(r), "startDate": ec2_time(r["start"]),
            "endDate": ec2_time(r["end"]) if r["end"] else None,
            "endDateType": r["end_date_type"], "instanceMatchCriteria": r["match_criteria"],
            "createDate": ec2_time(r["created"]),
            "tagSet": [{"key": k, "value": v} for k, v in r["tags"].items()],
            "reservationType": r["reservation_type"]}

    @staticmethod
    def _offering_xml(o: dict) -> dict:
        """The CapacityBlockOffering structure, element names as in the model."""
        return {"capacityBlockOfferingId": o["id"], "instanceType": o["instance_type"],
                "availabilityZone": o["zone"][0], "instanceCount": o["instance_count"],
                "startDate": ec2_time(o["start"]), "endDate": ec2_time(o["end"]),
                "capacityBlockDurationHours": o["duration_hours"],
                "capacityBlockDurationMinutes": o["duration_hours"] * 60,
                "upfrontFee": o["upfront_fee"], "currencyCode": o["currency"],
                "tenancy": o["tenancy"], "zoneType": "availability-zone"}

    def _offering_json(self, o: dict) -> dict:
        return {**self._offering_xml(o), "availabilityZoneId": o["zone"][1]}
