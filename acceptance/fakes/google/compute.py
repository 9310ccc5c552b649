"""A fake of the Compute Engine API v1 (`compute.googleapis.com`) for zonal reservations and
regional resource-based commitments (committed use discounts), and the zonal and regional
operations their inserts and deletes return.

    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account("my-project")
    compute = Compute(tokens).start()                 # the provider's gcp compute endpoint
    ... POST compute.url + "/compute/v1/projects/my-project/zones/us-central1-a/reservations"
    compute.set_capacity("us-central1-a", "a3-highgpu-8g", False)   # or POST /_fake/capacity
    compute.set_clock(advance_days=1)                 # or POST /_fake/clock
    compute.set_usage("my-project", "us-central1-a", "r1", 1)      # or POST /_fake/usage
    compute.state()["reservations"]                   # or GET /_fake/state

Served (paths from the v1 REST reference; everything else answers the Google front end's
HTML 404, as an unknown URL does):

- `reservations.insert/get/list/delete`: `/compute/v1/projects/{p}/zones/{z}/reservations[/{r}]`
- `regionCommitments.insert/get/list`: `/compute/v1/projects/{p}/regions/{r}/commitments[/{c}]`
  (there is no delete: a commitment cannot be cancelled)
- `zoneOperations.get/wait`, `regionOperations.get/wait`: `.../operations/{op}[/wait]`

A bearer token is required, checked as the GKE fake checks it (`TokenRegistry.google_bearer`)
with Compute's scopes: writes need cloud-platform or compute, reads also accept
compute.readonly; a self-signed JWT may name the audience `https://compute.googleapis.com/`.
Every insert and delete answers a `compute#operation` that stays RUNNING for `polls` GETs and
then ends DONE (with `error.errors[]` when it failed). Errors have Compute's shape
`{"error": {"code", "message", "errors": [{"message", "domain", "reason"}], ...}}`; the ones
the API front end raises (authentication, JSON parsing, throttling) also carry `status` and
`details`. Unknown JSON fields are refused. Time is the fake's clock (real time moved by
`set_clock`), shown in US Pacific time as Compute shows it. See ../README.md for the references
of every behaviour and for what is a guess.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import re
import secrets

from .. import CloudClock, FakeServer, Request, Response, retry_after_header
from ..tokens import CLOUD_PLATFORM, TokenRegistry
from .common import (STATUS_OF_HTTP, GoogleError, GoogleOperations, authenticate, error_info,
                     error_response, message_fields, operation_name, snake)

UTC = _dt.timezone.utc
COMPUTE_SCOPE = "https://www.googleapis.com/auth/compute"
COMPUTE_READONLY = "https://www.googleapis.com/auth/compute.readonly"
# Discovery document `scopes` of the methods served: inserts and deletes, then gets, lists
# and operations.get/wait.
WRITE_SCOPES = frozenset({CLOUD_PLATFORM, COMPUTE_SCOPE})
READ_SCOPES = WRITE_SCOPES | {COMPUTE_READONLY}
AUDIENCES = frozenset({"https://compute.googleapis.com/", "https://compute.googleapis.com"})
SERVICE = "compute.googleapis.com"

# Path parameter patterns of the discovery document (compute.v1.json).
PROJECT_PATTERN = (r"(?:(?:[-a-z0-9]{1,63}\.)*(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?):)?"
                   r"(?:[0-9]{1,19}|(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?))")
LOCATION_PATTERN = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
RESOURCE_PATTERN = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?|[1-9][0-9]{0,19}"
# The `name` of a Reservation or Commitment (RFC 1035, 1-63 characters).
NAME_PATTERN = r"(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)"
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{12}")
ZERO_UUID = "00000000-0000-0000-0000-000000000000"

DEFAULT_REGIONS = {"us-central1": ["a", "b", "c", "f"], "us-east4": ["a", "b", "c"],
                   "europe-west4": ["a", "b", "c"]}
# Machine type -> the GPUs it comes with (accelerator type, count); None: no GPUs.
GPU_MACHINES = {"a3-highgpu-8g": ("nvidia-h100-80gb", 8),
                "a2-highgpu-1g": ("nvidia-tesla-a100", 1),
                "a2-ultragpu-8g": ("nvidia-a100-80gb", 8),
                "g2-standard-8": ("nvidia-l4", 1)}

# Field names (json_name) of the request messages read, from the v1 discovery document
# (revision 20250126). Any other name is refused as Google's JSON parser refuses it.
FIELDS = {
    "Reservation": {"aggregateReservation", "commitment", "creationTimestamp", "description",
                    "id", "kind", "name", "resourcePolicies", "resourceStatus",
                    "satisfiesPzs", "selfLink", "shareSettings", "specificReservation",
                    "specificReservationRequired", "status", "zone"},
    "AllocationSpecificSKUReservation": {"assuredCount", "count", "inUseCount",
                                         "instanceProperties", "sourceInstanceTemplate"},
    "AllocationSpecificSKUAllocationReservedInstanceProperties": {
        "guestAccelerators", "localSsds", "locationHint", "machineType", "minCpuPlatform"},
    "AcceleratorConfig": {"acceleratorCount", "acceleratorType"},
    "AllocationSpecificSKUAllocationAllocatedInstancePropertiesReservedDisk": {
        "diskSizeGb", "interface"},
    "ShareSettings": {"projectMap", "shareType"},
    "ShareSettingsProjectConfig": {"projectId"},
    "Commitment": {"autoRenew", "category", "creationTimestamp", "customEndTimestamp",
                   "description", "endTimestamp", "existingReservations", "id", "kind",
                   "licenseResource", "mergeSourceCommitments", "name", "plan", "region",
                   "reservations", "resourceStatus", "resources", "selfLink",
                   "splitSourceCommitment", "startTimestamp", "status", "statusMessage",
                   "type"},
    "ResourceCommitment": {"acceleratorType", "amount", "type"},
}
ENUMS = {
    "Commitment.Plan": ("INVALID", "THIRTY_SIX_MONTH", "TWELVE_MONTH"),
    "Commitment.Category": ("CATEGORY_UNSPECIFIED", "LICENSE", "MACHINE"),
    "Commitment.Type": (
        "ACCELERATOR_OPTIMIZED", "ACCELERATOR_OPTIMIZED_A3", "ACCELERATOR_OPTIMIZED_A3_MEGA",
        "ACCELERATOR_OPTIMIZED_A3_ULTRA", "COMPUTE_OPTIMIZED", "COMPUTE_OPTIMIZED_C2D",
        "COMPUTE_OPTIMIZED_C3", "COMPUTE_OPTIMIZED_C3D", "COMPUTE_OPTIMIZED_H3",
        "GENERAL_PURPOSE", "GENERAL_PURPOSE_C4", "GENERAL_PURPOSE_C4A", "GENERAL_PURPOSE_E2",
        "GENERAL_PURPOSE_N2", "GENERAL_PURPOSE_N2D", "GENERAL_PURPOSE_N4",
        "GENERAL_PURPOSE_T2D", "GRAPHICS_OPTIMIZED", "MEMORY_OPTIMIZED", "MEMORY_OPTIMIZED_M3",
        "MEMORY_OPTIMIZED_X4_16TB", "MEMORY_OPTIMIZED_X4_24TB", "MEMORY_OPTIMIZED_X4_32TB",
        "STORAGE_OPTIMIZED_Z3", "TYPE_UNSPECIFIED"),
    "ResourceCommitment.Type": ("ACCELERATOR", "LOCAL_SSD", "MEMORY", "UNSPECIFIED", "VCPU"),
    "ShareSettings.ShareType": ("LOCAL", "ORGANIZATION", "SHARE_TYPE_UNSPECIFIED",
                                "SPECIFIC_PROJECTS"),
    "AllocationSpecificSKUAllocationAllocatedInstancePropertiesReservedDisk.Interface":
        ("NVME", "SCSI"),
}
PLAN_YEARS = {"TWELVE_MONTH": 1, "THIRTY_SIX_MONTH": 3}
STATUS_MESSAGES = {  # a guess at Compute's wording, see README
    "NOT_YET_ACTIVE": "The commitment is not yet active (its startTimestamp is in the "
                      "future). It will not apply to current resource usage.",
    "ACTIVE": "The commitment is active, and so will apply to current resource usage.",
    "EXPIRED": "The commitment has expired, and will not apply to current resource usage.",
}
NOT_FOUND_HTML = (
    '<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <meta name=viewport '
    'content="initial-scale=1, minimum-scale=1, width=device-width">\n  <title>Error 404 (Not '
    'Found)!!1</title>\n  <a href=//www.google.com/><span id=logo aria-label=Google></span>'
    '</a>\n  <p><b>404.</b> <ins>That\u2019s an error.</ins>\n  <p>The requested URL <code>'
    '{path}</code> was not found on this server.  <ins>That\u2019s all we know.</ins>\n')


class ComputeError(GoogleError):
    """An error answer: HTTP status, Compute `reason`, message; `status` (canonical name)
    and `details` only for errors of the API front end."""

    def __init__(self, http: int, reason: str, message: str, status: str | None = None,
                 details: list | None = None, headers: dict | None = None,
                 location: tuple[str, str] | None = None, item: str | None = None):
        super().__init__(status, message, details, http=http, reason=reason, headers=headers,
                         location=location, item=item)


def _invalid(field: str, value, why: str = "") -> ComputeError:
    text = f"Invalid value for field '{field}': '{value}'." + (f" {why}" if why else "")
    return ComputeError(400, "invalid", text)


def _required(field: str) -> ComputeError:
    return ComputeError(400, "required", f"Required field '{field}' not specified")


def _not_found(what: str) -> ComputeError:
    return ComputeError(404, "notFound", f"The resource '{what}' was not found")


def _parse_error(where: str, text: str) -> ComputeError:
    """A JSON payload the API front end refuses: INVALID_ARGUMENT with a field violation."""
    return ComputeError(400, "invalid", text, "INVALID_ARGUMENT", [
        {"@type": "type.googleapis.com/google.rpc.BadRequest",
         "fieldViolations": [{"field": where, "description": text}]}])


def _message(obj, message: str, where: str) -> dict:
    """`obj` as a `message` with camelCase keys (proto field names accepted too); an unknown
    name is refused as Google's JSON parser refuses it."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise _parse_error(where, f"Invalid value at '{where}' "
                                  f"(type.googleapis.com/google.cloud.compute.v1.{message}), "
                                  f"{json.dumps(obj)}")
    return message_fields(obj, FIELDS[message], lambda key: _parse_error(
        where, f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot "
               "find field."))


def _enum(value, enum: str, where: str) -> str:
    if isinstance(value, str) and value in ENUMS[enum]:
        return value
    raise _parse_error(where, f"Invalid value at '{where}' "
                              f"(type.googleapis.com/google.cloud.compute.v1.{enum}), "
                              f"{json.dumps(value)}")


def _int(value, where: str, kind: str = "TYPE_INT64") -> int:
    """An int64 (JSON string or number) or int32 (number, or string) as proto JSON reads."""
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _parse_error(where, f"Invalid value at '{where}' ({kind}), {json.dumps(value)}")


def _bool(value, where: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _parse_error(where, f"Invalid value at '{where}' (TYPE_BOOL), {json.dumps(value)}")


def _string(value, where: str) -> str:
    if isinstance(value, str):
        return value
    raise _parse_error(where, f"Invalid value at '{where}' (TYPE_STRING), {json.dumps(value)}")


def _list(value, where: str) -> list:
    if isinstance(value, list):
        return value
    raise _parse_error(where, f"Invalid value at '{where}' (TYPE_MESSAGE), "
                              f"{json.dumps(value)}")


# --- US Pacific time (Compute's timestamps, and when commitments start) -------------------

def _nth_sunday(year: int, month: int, n: int) -> _dt.date:
    first = _dt.date(year, month, 1)
    return first + _dt.timedelta(days=(6 - first.weekday()) % 7, weeks=n - 1)


def _pacific_dst(utc: _dt.datetime) -> bool:
    """US daylight saving time (second Sunday of March 2:00 PST to first Sunday of November
    2:00 PDT, the rule since 2007) at the UTC instant `utc`."""
    start = _dt.datetime.combine(_nth_sunday(utc.year, 3, 2), _dt.time(10), UTC)
    end = _dt.datetime.combine(_nth_sunday(utc.year, 11, 1), _dt.time(9), UTC)
    return start <= utc < end


def pacific(utc: _dt.datetime) -> _dt.datetime:
    return utc.astimezone(_dt.timezone(_dt.timedelta(hours=-7 if _pacific_dst(utc) else -8)))


def pacific_midnight(day: _dt.date) -> _dt.datetime:
    """12 AM US Pacific time on `day`, as a UTC instant."""
    naive = _dt.datetime.combine(day, _dt.time(0), UTC)
    return naive + _dt.timedelta(hours=7 if _pacific_dst(naive + _dt.timedelta(hours=7))
                                 else 8)


def timestamp(utc: _dt.datetime) -> str:
    """RFC 3339 in US Pacific time with milliseconds, e.g. 2024-06-26T11:42:22.006-07:00."""
    return pacific(utc).isoformat(timespec="milliseconds")


def _add_years(day: _dt.date, years: int) -> _dt.date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, month=3, day=1)


class Compute(GoogleOperations, CloudClock, FakeServer):
    """The fake Compute Engine API (`url` replaces https://compute.googleapis.com).
    Settings (`POST /_fake/faults` or `configure`): `polls` (RUNNING answers of
    operations.get before DONE, default 2), `wait_polls` (how many polls one
    operations.wait stands for; default none: it waits until DONE), `fail_next_operation`
    ({code, message}: the next insert/delete operation ends DONE with that error),
    `require_gpu_reservations` (default true: a commitment to GPUs or Local SSD needs
    reservations), `request_id_minutes` (how long a requestId is remembered, default 60)."""

    name = "compute"

    def __init__(self, registry: TokenRegistry, time_scale=None):
        super().__init__(time_scale)
        self.registry = registry
        self.reset_state()

    def reset_state(self) -> None:
        self.projects: dict[str, dict] = {}
        self.reservations: dict[tuple[str, str, str], dict] = {}
        self.commitments: dict[tuple[str, str, str], dict] = {}
        self.operations: dict[str, dict] = {}
        self.request_ids: dict[tuple[str, str], dict] = {}
        self.no_capacity: set[tuple[str, str]] = set()
        self.clock_offset = _dt.timedelta(0)
        self.polls, self.wait_polls, self.fail_next = 2, None, None
        self.require_gpu_reservations, self.request_id_minutes = True, 60

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        if "polls" in s:
            self.polls = max(0, int(s.pop("polls")))
        if "wait_polls" in s:
            value = s.pop("wait_polls")
            self.wait_polls = None if value is None else max(1, int(value))
        if "fail_next_operation" in s:
            self.fail_next = s.pop("fail_next_operation")
        if "require_gpu_reservations" in s:
            self.require_gpu_reservations = bool(s.pop("require_gpu_reservations"))
        if "request_id_minutes" in s:
            self.request_id_minutes = float(s.pop("request_id_minutes"))
        super().configure(s)

    # --- clock, catalog, capacity ------------------------------------------------------

    def set_clock(self, advance_days: float | None = None, advance_hours: float | None = None,
                  now: str | None = None) -> dict:
        """Moves the clock to the instant `now` (RFC 3339) and/or forward by days/hours."""
        with self.lock:
            when = None
            if now is not None:
                when = _dt.datetime.fromisoformat(str(now).replace("Z", "+00:00"))
                if when.tzinfo is None:
                    raise ValueError("now needs a UTC offset")
            self.move_clock(when, days=advance_days or 0, hours=advance_hours or 0)
            return {"now": timestamp(self.now())}

    def seed_project(self, project: str, regions: dict | None = None,
                     machine_types: dict | None = None) -> dict:
        """The catalog of `project`: `regions` {region: [zone names or suffixes]} (default
        us-central1 a/b/c/f, us-east4 a/b/c, europe-west4 a/b/c) and `machine_types`
        {zone: [names] or {name: {gpu, count} or null}} (default, per zone, the four GPU
        machine types of GPU_MACHINES). Unseeded projects have the defaults."""
        with self.lock:
            regions = regions if regions is not None else DEFAULT_REGIONS
            zones: dict[str, list[str]] = {}
            for region, names in regions.items():
                zones[region] = [z if z.startswith(region + "-") else f"{region}-{z}"
                                 for z in names]
            catalog: dict[str, dict] = {}
            for zone in (z for names in zones.values() for z in names):
                given = (machine_types or {}).get(zone)
                if given is None:
                    catalog[zone] = dict(GPU_MACHINES)
                elif isinstance(given, dict):
                    catalog[zone] = {m: (None if g is None else (g["gpu"], int(g["count"])))
                                     for m, g in given.items()}
                else:
                    catalog[zone] = {m: GPU_MACHINES.get(m) for m in given}
            unknown = set(machine_types or {}) - set(catalog)
            if unknown:
                raise ValueError(f"machine_types for zones not in regions: {sorted(unknown)}")
            self.projects[project] = {"regions": zones, "machine_types": catalog}
            return self._project_json(project)

    def _project(self, project: str) -> dict:
        if project not in self.projects:
            self.seed_project(project)
        return self.projects[project]

    def _project_json(self, project: str) -> dict:
        p = self.projects[project]
        return {"project": project, "regions": p["regions"],
                "machine_types": {z: {m: (None if g is None else {"gpu": g[0], "count": g[1]})
                                      for m, g in types.items()}
                                  for z, types in p["machine_types"].items()}}

    def set_capacity(self, zone: str, machine_type: str, available: bool) -> dict:
        """Makes reservations of `machine_type` in `zone` end in a stockout (`available`
        false) or succeed again (true), in every project."""
        with self.lock:
            (self.no_capacity.discard if available else self.no_capacity.add)(
                (zone, machine_type))
            return {"no_capacity": sorted([z, m] for z, m in self.no_capacity)}

    def set_usage(self, project: str, zone: str, name: str, used: int) -> dict:
        """Runs `used` instances in reservation `name` (as if VMs consumed it outside the
        provider): its `specificReservation.inUseCount`."""
        with self.lock:
            r = self.reservations.get((project, zone, name))
            if r is None:
                raise KeyError(f"no reservation {name} in {project}/{zone}")
            spec = r["public"]["specificReservation"]
            if not 0 <= int(used) <= int(spec["count"]):
                raise ValueError(f"used must be 0 to {spec['count']}")
            spec["inUseCount"] = str(int(used))  # int64: a JSON string
            return self._reservation_json(r)

    def snapshot(self) -> dict:
        return {
            "clock": timestamp(self.now()),
            "settings": {"polls": self.polls, "wait_polls": self.wait_polls,
                         "fail_next_operation": self.fail_next,
                         "require_gpu_reservations": self.require_gpu_reservations,
                         "request_id_minutes": self.request_id_minutes},
            "projects": [self._project_json(p) for p in self.projects],
            "no_capacity": sorted([z, m] for z, m in self.no_capacity),
            "reservations": [{**self._reservation_json(r), "fake": {
                                 "project": r["project"], "zone": r["zone"]}}
                             for r in self.reservations.values()],
            "commitments": [{**self._commitment_json(c), "fake": {
                                "project": c["project"], "region": c["region"]}}
                            for c in self.commitments.values()],
            "operations": [{**op["public"], "fake": {"project": op["project"],
                                                     "polls_left": op["polls_left"]}}
                           for op in self.operations.values()],
            "request_ids": [{"project": p, "requestId": rid, "operation": v["operation"]}
                            for (p, rid), v in self.request_ids.items()],
        }

    def control_routes(self) -> dict:
        """`POST /_fake/projects`, `/_fake/capacity`, `/_fake/clock` (the clock is cloud
        time, moved by the test only) and `/_fake/usage`."""
        return {
            "/_fake/projects": lambda d: (201, self.seed_project(
                d["project"], d.get("regions"), d.get("machine_types"))),
            "/_fake/capacity": lambda d: (200, self.set_capacity(
                d["zone"], d["machine_type"], bool(d.get("available", False)))),
            "/_fake/clock": lambda d: (200, self.set_clock(
                d.get("advance_days"), d.get("advance_hours"), d.get("now"))),
            "/_fake/usage": lambda d: (200, self.set_usage(
                d["project"], d["zone"], d["name"], d["used"])),
        }

    # --- shapes ---------------------------------------------------------------------------

    def _base(self, project: str) -> str:
        return f"{self.url}/compute/v1/projects/{project}"

    @staticmethod
    def _new_id() -> str:
        return str(10 ** 18 + secrets.randbelow(9 * 10 ** 18))

    def _reservation_json(self, r: dict) -> dict:
        return {k: v for k, v in r["public"].items() if v is not None}

    def _commitment_status(self, c: dict) -> str:
        if c["creating"]:
            return "CREATING"
        now = self.now()
        if now < c["start"]:
            return "NOT_YET_ACTIVE"
        if now < c["end"]:
            return "ACTIVE"
        if c["public"].get("autoRenew"):
            years = PLAN_YEARS[c["public"]["plan"]]
            while c["end"] <= now:  # renewed for another term at each end
                c["end"] = pacific_midnight(_add_years(pacific(c["end"]).date(), years))
            return "ACTIVE"
        return "EXPIRED"

    def _commitment_json(self, c: dict) -> dict:
        status = self._commitment_status(c)
        out = dict(c["public"])
        out.update(status=status, startTimestamp=timestamp(c["start"]),
                   endTimestamp=timestamp(c["end"]))
        if status in STATUS_MESSAGES:
            out["statusMessage"] = STATUS_MESSAGES[status]
        if c["reservations"]:
            out["reservations"] = [self._reservation_json(self.reservations[k])
                                   for k in c["reservations"] if k in self.reservations]
        return out

    @staticmethod
    def _compute_error(e: GoogleError) -> Response:
        return error_response(e, errors=True)

    def error(self, status, code, message, retry_after=None) -> Response:
        """An injected fault. `code` is a canonical status (RESOURCE_EXHAUSTED) or a
        Compute reason (rateLimitExceeded); 429 and 403 default to throttling (Compute
        documents 403 `rateLimitExceeded` for its rate quotas)."""
        headers = retry_after_header(retry_after)
        canonical = code if code and code.isupper() else None
        reason = code if code and not code.isupper() else None
        if status in (429, 403) and reason in (None, "rateLimitExceeded", "userRateLimitExceeded"):
            reason = reason or "rateLimitExceeded"
            text = message or ("Quota exceeded for quota metric 'Queries' and limit 'Queries "
                               f"per minute' of service '{SERVICE}' for consumer "
                               "'project_number:123456789012'.")
            details = [error_info("RATE_LIMIT_EXCEEDED", SERVICE, metadata={
                           "service": SERVICE, "quota_metric": f"{SERVICE}/default",
                           "quota_limit": "defaultPerMinutePerProject",
                           "consumer": "projects/123456789012"}),
                       {"@type": "type.googleapis.com/google.rpc.Help", "links": [
                           {"description": "Request a higher quota limit.",
                            "url": "https://cloud.google.com/docs/quotas/help/request_increase"}]}]
            return self._compute_error(ComputeError(
                status, reason, text, canonical or ("RESOURCE_EXHAUSTED" if status == 429
                                                    else "PERMISSION_DENIED"),
                details, headers))
        text = message or {
            500: "Internal error. Please try again or contact Google Support. "
                 f"(Code: '{secrets.token_hex(7).upper()}')",
            503: "The service is currently unavailable.",
        }.get(status, "Injected by the fake.")
        default_reason = {400: "invalid", 401: "authError", 403: "forbidden",
                          404: "notFound", 409: "conflict", 500: "backendError",
                          503: "backendError"}.get(status, "backendError")
        return self._compute_error(ComputeError(
            status, reason or default_reason, text,
            canonical or STATUS_OF_HTTP.get(status, "UNKNOWN"), None, headers))

    # --- dispatch -------------------------------------------------------------------------

    _P = r"/compute/v1/projects/(?P<project>[^/]+)"
    _Z = _P + r"/zones/(?P<zone>[^/]+)"
    _R = _P + r"/regions/(?P<region>[^/]+)"
    ROUTES = [
        ("POST", re.compile(_Z + r"/reservations"), "insert_reservation", True),
        ("GET", re.compile(_Z + r"/reservations"), "list_reservations", False),
        ("GET", re.compile(_P + r"/aggregated/reservations"), "aggregated_reservations", False),
        ("GET", re.compile(_Z + r"/reservations/(?P<name>[^/]+)"), "get_reservation", False),
        ("DELETE", re.compile(_Z + r"/reservations/(?P<name>[^/]+)"), "delete_reservation",
         True),
        ("GET", re.compile(_Z + r"/operations/(?P<op>[^/]+)"), "get_operation", False),
        ("POST", re.compile(_Z + r"/operations/(?P<op>[^/]+)/wait"), "wait_operation", False),
        ("POST", re.compile(_R + r"/commitments"), "insert_commitment", True),
        ("GET", re.compile(_R + r"/commitments"), "list_commitments", False),
        ("GET", re.compile(_R + r"/commitments/(?P<name>[^/]+)"), "get_commitment", False),
        ("GET", re.compile(_R + r"/operations/(?P<op>[^/]+)"), "get_operation", False),
        ("POST", re.compile(_R + r"/operations/(?P<op>[^/]+)/wait"), "wait_operation", False),
    ]

    def handle(self, request: Request) -> Response:
        for method, pattern, handler, writes in self.ROUTES:
            m = pattern.fullmatch(request.path)
            if m and method == request.method:
                break
        else:  # the Google front end's answer to a URL no method is mapped to
            return Response(404, NOT_FOUND_HTML.format(path=request.path).encode(),
                            {"Content-Type": "text/html; charset=UTF-8"})
        try:
            user = self._authenticate(request, writes)
            params = m.groupdict()
            self._check_path(params)
            return getattr(self, "_" + handler)(request, params, user)
        except GoogleError as e:
            return self._compute_error(e)

    def _authenticate(self, request: Request, writes: bool) -> str:
        """The account calling, or a GoogleError as Google answers it."""
        request.log["auth"] = None
        failure = authenticate(self.registry, request, SERVICE,
                               READ_SCOPES if not writes else WRITE_SCOPES, AUDIENCES, "Compute")
        if failure:
            raise failure
        return self.registry.google_subject(request.bearer()) or ""

    @staticmethod
    def _check_path(params: dict) -> None:
        checks = {"project": PROJECT_PATTERN, "zone": LOCATION_PATTERN,
                  "region": LOCATION_PATTERN, "name": RESOURCE_PATTERN}
        for key, pattern in checks.items():
            value = params.get(key)
            if value is not None and not re.fullmatch(pattern, value):
                field = {"name": "resource"}.get(key, key)
                raise _invalid(field, value, f"Must be a match of regex '{pattern}'")

    def _zone(self, project: str, zone: str) -> str:
        if not any(zone in zones for zones in self._project(project)["regions"].values()):
            raise _invalid("zone", zone, "Unknown zone.")
        return zone

    def _region(self, project: str, region: str) -> list[str]:
        zones = self._project(project)["regions"].get(region)
        if zones is None:
            raise _invalid("region", region, "Unknown region.")
        return zones

    @staticmethod
    def _body(request: Request):
        try:
            body = request.json()
        except ValueError as e:
            raise _parse_error("", f"Invalid JSON payload received. {e}")
        if body is None or body == {}:
            raise _required("resource")
        request.log["json"] = body
        return body

    @staticmethod
    def _request_id(request: Request) -> str | None:
        """The `requestId` query parameter, checked; None when absent."""
        values = request.query.get("requestId")
        if not values:
            return None
        rid = values[-1]
        if not UUID_RE.fullmatch(rid) or rid == ZERO_UUID:
            raise _invalid("requestId", rid, "Must be a valid UUID other than the zero UUID.")
        return rid.lower()

    def _repeat(self, project: str, rid: str | None) -> Response | None:
        """The operation an earlier request with the same requestId started, if remembered."""
        if rid is None:
            return None
        seen = self.request_ids.get((project, rid))
        if seen is None:
            return None
        if self.now() - seen["at"] > _dt.timedelta(minutes=self.request_id_minutes):
            del self.request_ids[(project, rid)]
            return None
        return Response(200, dict(self.operations[seen["operation"]]["public"]))

    # --- reservations ---------------------------------------------------------------------

    def _reservation(self, project: str, zone: str, name: str) -> dict:
        r = self.reservations.get((project, zone, name))
        if r is None and name.isdigit():
            r = next((x for (p, z, _), x in self.reservations.items()
                      if p == project and z == zone and x["public"]["id"] == name), None)
        if r is None:
            raise _not_found(f"projects/{project}/zones/{zone}/reservations/{name}")
        return r

    def _check_reservation(self, project: str, zone: str, body, where: str,
                           field: str) -> dict:
        """A Reservation message checked against the zone's catalog; returns the stored
        (public) fields. `where` is the proto path, `field` the Compute field path."""
        res = _message(body, "Reservation", where)
        name = res.get("name")
        if name is None or name == "":
            raise _required(f"{field}.name")
        name = _string(name, f"{where}.name")
        if not re.fullmatch(NAME_PATTERN, name):
            raise _invalid(f"{field}.name", name, f"Must be a match of regex '{NAME_PATTERN}'")
        for key in ("aggregateReservation", "resourcePolicies"):
            if key in res:
                raise _invalid(f"{field}.{key}", json.dumps(res[key]),
                               "The fake does not emulate this field.")
        if "specificReservation" not in res:
            raise _required(f"{field}.specificReservation")
        sr = _message(res["specificReservation"], "AllocationSpecificSKUReservation",
                      f"{where}.specific_reservation")
        if "sourceInstanceTemplate" in sr:
            raise _invalid(f"{field}.specificReservation.sourceInstanceTemplate",
                           sr["sourceInstanceTemplate"],
                           "The fake does not emulate this field.")
        if "count" not in sr:
            raise _required(f"{field}.specificReservation.count")
        count = _int(sr["count"], f"{where}.specific_reservation.count")
        if count < 1 or count > 1000:
            raise _invalid(f"{field}.specificReservation.count", count,
                           "Must be between 1 and 1000.")
        props_where = f"{where}.specific_reservation.instance_properties"
        props_field = f"{field}.specificReservation.instanceProperties"
        props = _message(sr.get("instanceProperties"),
                         "AllocationSpecificSKUAllocationReservedInstanceProperties",
                         props_where)
        machine = props.get("machineType")
        if not machine:
            raise _required(f"{props_field}.machineType")
        machine = _string(machine, f"{props_where}.machine_type")
        catalog = self._project(project)["machine_types"].get(zone, {})
        if machine not in catalog:
            raise _invalid(f"{props_field}.machineType", machine,
                           f"Machine type with name '{machine}' does not exist in zone "
                           f"'{zone}'.")
        bundled = catalog[machine]
        accelerators = []
        for i, item in enumerate(_list(props.get("guestAccelerators", []),
                                       f"{props_where}.guest_accelerators")):
            at = f"{props_where}.guest_accelerators[{i}]"
            acc = _message(item, "AcceleratorConfig", at)
            kind = _string(acc.get("acceleratorType", ""), f"{at}.accelerator_type")
            number = _int(acc.get("acceleratorCount", 0), f"{at}.accelerator_count",
                          "TYPE_INT32")
            if not kind or number < 1:
                raise _invalid(f"{props_field}.guestAccelerators[{i}]", json.dumps(item),
                               "acceleratorType and a positive acceleratorCount are required.")
            if bundled is not None and (kind.rsplit("/", 1)[-1], number) != bundled:
                raise _invalid(f"{props_field}.guestAccelerators[{i}].acceleratorType", kind,
                               f"Machine type '{machine}' comes with {bundled[1]} "
                               f"{bundled[0]}; other accelerators cannot be attached.")
            accelerators.append({"acceleratorType": kind, "acceleratorCount": number})
        disks = []
        for i, item in enumerate(_list(props.get("localSsds", []),
                                       f"{props_where}.local_ssds")):
            at = f"{props_where}.local_ssds[{i}]"
            disk = _message(item, "AllocationSpecificSKUAllocationAllocatedInstance"
                                  "PropertiesReservedDisk", at)
            size = _int(disk.get("diskSizeGb", 0), f"{at}.disk_size_gb")
            if size < 1:
                raise _invalid(f"{props_field}.localSsds[{i}].diskSizeGb", size)
            entry = {"diskSizeGb": str(size)}
            if "interface" in disk:
                entry["interface"] = _enum(
                    disk["interface"], "AllocationSpecificSKUAllocationAllocatedInstance"
                    "PropertiesReservedDisk.Interface", f"{at}.interface")
            disks.append(entry)
        instance = {"machineType": machine}
        if accelerators:
            instance["guestAccelerators"] = accelerators
        if disks:
            instance["localSsds"] = disks
        for key in ("minCpuPlatform", "locationHint"):
            if key in props:
                instance[key] = _string(props[key], f"{props_where}.{snake(key)}")
        out = {"name": name, "specificReservation": {"instanceProperties": instance,
                                                     "count": str(count), "inUseCount": "0"}}
        if "description" in res:
            out["description"] = _string(res["description"], f"{where}.description")
        out["specificReservationRequired"] = _bool(
            res.get("specificReservationRequired", False),
            f"{where}.specific_reservation_required")
        if "shareSettings" in res:
            share = _message(res["shareSettings"], "ShareSettings", f"{where}.share_settings")
            settings = {"shareType": _enum(share.get("shareType", "LOCAL"),
                                           "ShareSettings.ShareType",
                                           f"{where}.share_settings.share_type")}
            if "projectMap" in share:
                pm = share["projectMap"]
                if not isinstance(pm, dict):
                    raise _parse_error(f"{where}.share_settings.project_map",
                                       f"Invalid value at '{where}.share_settings.project_map'"
                                       f" (TYPE_MAP), {json.dumps(pm)}")
                settings["projectMap"] = {
                    k: _message(v, "ShareSettingsProjectConfig",
                                f"{where}.share_settings.project_map[{k}]")
                    for k, v in pm.items()}
            out["shareSettings"] = settings
        return out

    def _new_reservation(self, project: str, zone: str, fields: dict,
                         commitment: str | None = None) -> dict:
        name = fields["name"]
        public = {"kind": "compute#reservation", "id": self._new_id(),
                  "creationTimestamp": timestamp(self.now()),
                  "selfLink": f"{self._base(project)}/zones/{zone}/reservations/{name}",
                  "zone": f"{self._base(project)}/zones/{zone}", **fields,
                  "commitment": commitment, "status": "CREATING"}
        return {"project": project, "zone": zone, "public": public}

    def _insert_reservation(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        rid = self._request_id(request)
        again = self._repeat(project, rid)
        if again:
            return again
        fields = self._check_reservation(project, zone, self._body(request),
                                         "reservation_resource", "resource")
        key = (project, zone, fields["name"])
        if key in self.reservations:
            raise ComputeError(409, "alreadyExists", f"The resource 'projects/{project}/zones/"
                                                     f"{zone}/reservations/{fields['name']}' "
                                                     "already exists")
        r = self._new_reservation(project, zone, fields)
        self.reservations[key] = r
        return self._start(project, ("zones", zone), "insert", r["public"], user, rid,
                           {"kind": "reservation", "key": key})

    def _get_reservation(self, request: Request, p: dict, user: str) -> Response:
        zone = self._zone(p["project"], p["zone"])
        return Response(200, self._reservation_json(self._reservation(p["project"], zone,
                                                                      p["name"])))

    def _delete_reservation(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        rid = self._request_id(request)
        again = self._repeat(project, rid)
        if again:
            return again
        r = self._reservation(project, zone, p["name"])
        if r["public"]["status"] != "READY":
            raise ComputeError(400, "resourceNotReady",
                               f"The resource 'projects/{project}/zones/{zone}/reservations/"
                               f"{r['public']['name']}' is not ready")
        r["public"]["status"] = "DELETING"
        return self._start(project, ("zones", zone), "delete", r["public"], user, rid,
                           {"kind": "reservation",
                            "key": (project, zone, r["public"]["name"])})

    def _list_reservations(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        items = [self._reservation_json(r) for (pr, z, _), r in self.reservations.items()
                 if pr == project and z == zone]
        return self._list(request, items, "compute#reservationList",
                          f"projects/{project}/zones/{zone}/reservations",
                          f"{self._base(project)}/zones/{zone}/reservations")

    def _aggregated_reservations(self, request: Request, p: dict, user: str) -> Response:
        """`reservations.aggregatedList`: every zone's reservations under `items`, keyed
        `zones/<zone>` (zones without any are left out; one page)."""
        project = p["project"]
        self._project(project)
        items: dict[str, dict] = {}
        for (pr, zone, _), r in sorted(self.reservations.items()):
            if pr == project:
                items.setdefault(f"zones/{zone}", {"reservations": []})["reservations"].append(
                    self._reservation_json(r))
        return Response(200, {"kind": "compute#reservationAggregatedList",
                              "id": f"projects/{project}/aggregated/reservations",
                              "items": items,
                              "selfLink": f"{self._base(project)}/aggregated/reservations"})

    # --- commitments ----------------------------------------------------------------------

    def _commitment(self, project: str, region: str, name: str) -> dict:
        c = self.commitments.get((project, region, name))
        if c is None and name.isdigit():
            c = next((x for (pr, rg, _), x in self.commitments.items()
                      if pr == project and rg == region and x["public"]["id"] == name), None)
        if c is None:
            raise _not_found(f"projects/{project}/regions/{region}/commitments/{name}")
        return c

    def _insert_commitment(self, request: Request, p: dict, user: str) -> Response:
        project, region = p["project"], p["region"]
        zones = self._region(project, region)
        rid = self._request_id(request)
        again = self._repeat(project, rid)
        if again:
            return again
        body = _message(self._body(request), "Commitment", "commitment_resource")
        name = body.get("name")
        if not name:
            raise _required("resource.name")
        name = _string(name, "commitment_resource.name")
        if not re.fullmatch(NAME_PATTERN, name):
            raise _invalid("resource.name", name, f"Must be a match of regex '{NAME_PATTERN}'")
        for key in ("customEndTimestamp", "licenseResource", "mergeSourceCommitments",
                    "splitSourceCommitment"):
            if key in body:
                raise _invalid(f"resource.{key}", json.dumps(body[key]),
                               "The fake does not emulate this field.")
        if "plan" not in body:
            raise _required("resource.plan")
        plan = _enum(body["plan"], "Commitment.Plan", "commitment_resource.plan")
        if plan not in PLAN_YEARS:
            raise _invalid("resource.plan", plan, "The plan must be TWELVE_MONTH or "
                                                  "THIRTY_SIX_MONTH.")
        category = _enum(body.get("category", "MACHINE"), "Commitment.Category",
                         "commitment_resource.category")
        if category == "LICENSE":
            raise _invalid("resource.category", category,
                           "The fake does not emulate license commitments.")
        kind = _enum(body.get("type", "GENERAL_PURPOSE"), "Commitment.Type",
                     "commitment_resource.type")
        if kind == "TYPE_UNSPECIFIED":
            raise _invalid("resource.type", kind, "A MACHINE commitment needs a type.")
        resources = []
        for i, item in enumerate(_list(body.get("resources", []),
                                       "commitment_resource.resources")):
            at = f"commitment_resource.resources[{i}]"
            rc = _message(item, "ResourceCommitment", at)
            rtype = _enum(rc.get("type", "UNSPECIFIED"), "ResourceCommitment.Type",
                          f"{at}.type")
            if rtype == "UNSPECIFIED":
                raise _invalid(f"resource.resources[{i}].type", rtype)
            amount = _int(rc.get("amount", 0), f"{at}.amount")
            if amount < 1:
                raise _invalid(f"resource.resources[{i}].amount", amount,
                               "Must be greater than 0.")
            if rtype == "MEMORY" and amount % 256:
                raise _invalid(f"resource.resources[{i}].amount", amount,
                               "Memory must be a multiple of 256 MB.")
            entry = {"type": rtype, "amount": str(amount)}
            if rtype == "ACCELERATOR":
                if not rc.get("acceleratorType"):
                    raise _required(f"resource.resources[{i}].acceleratorType")
                entry["acceleratorType"] = _string(rc["acceleratorType"],
                                                   f"{at}.accelerator_type")
            elif "acceleratorType" in rc:
                raise _invalid(f"resource.resources[{i}].acceleratorType",
                               rc["acceleratorType"],
                               "Only ACCELERATOR resources have an acceleratorType.")
            resources.append(entry)
        if not resources:
            raise _required("resource.resources")
        created = []
        for i, item in enumerate(_list(body.get("reservations", []),
                                       "commitment_resource.reservations")):
            where, field = f"commitment_resource.reservations[{i}]", f"resource.reservations[{i}]"
            zone_value = (item or {}).get("zone") if isinstance(item, dict) else None
            if not zone_value:
                raise _required(f"{field}.zone")
            zone = _string(zone_value, f"{where}.zone").rsplit("/", 1)[-1]
            if zone not in zones:
                raise _invalid(f"{field}.zone", zone_value,
                               f"The zone must be in region '{region}'.")
            fields = self._check_reservation(project, zone, item, where, field)
            key = (project, zone, fields["name"])
            if key in self.reservations or key in [k for k, _ in created]:
                raise ComputeError(409, "alreadyExists", f"The resource 'projects/{project}/"
                                                         f"zones/{zone}/reservations/"
                                                         f"{fields['name']}' already exists")
            created.append((key, fields))
        existing = []
        for i, value in enumerate(_list(body.get("existingReservations", []),
                                        "commitment_resource.existing_reservations")):
            text = _string(value, f"commitment_resource.existing_reservations[{i}]")
            m = re.search(r"(?:projects/(?P<p>[^/]+)/)?zones/(?P<z>[^/]+)/reservations/"
                          r"(?P<n>[^/]+)$", text)
            key = (m["p"] or project, m["z"], m["n"]) if m else None
            r = self.reservations.get(key) if key else None
            if r is None or key[0] != project or key[1] not in zones:
                raise _invalid(f"resource.existingReservations[{i}]", text,
                               f"No such reservation in region '{region}'.")
            if r["public"].get("commitment"):
                raise _invalid(f"resource.existingReservations[{i}]", text,
                               "The reservation is already attached to a commitment.")
            existing.append(key)
        needs = [r["type"] for r in resources if r["type"] in ("ACCELERATOR", "LOCAL_SSD")]
        if needs and self.require_gpu_reservations and not (created or existing):
            raise _invalid("resource.reservations", "[]",
                           "Commitments for GPUs or Local SSD disks must have reservations "
                           "attached: set reservations or existingReservations.")
        key = (project, region, name)
        if key in self.commitments:
            raise ComputeError(409, "alreadyExists", f"The resource 'projects/{project}/"
                                                     f"regions/{region}/commitments/{name}' "
                                                     "already exists")
        link = f"{self._base(project)}/regions/{region}/commitments/{name}"
        start = pacific_midnight(pacific(self.now()).date() + _dt.timedelta(days=1))
        end = pacific_midnight(_add_years(pacific(start).date(), PLAN_YEARS[plan]))
        public = {"kind": "compute#commitment", "id": self._new_id(),
                  "creationTimestamp": timestamp(self.now()), "name": name,
                  "region": f"{self._base(project)}/regions/{region}", "selfLink": link,
                  "plan": plan, "resources": resources, "type": kind, "category": category,
                  "autoRenew": _bool(body.get("autoRenew", False),
                                     "commitment_resource.auto_renew")}
        if "description" in body:
            public["description"] = _string(body["description"],
                                            "commitment_resource.description")
        if existing:
            public["existingReservations"] = [
                f"{self._base(k[0])}/zones/{k[1]}/reservations/{k[2]}" for k in existing]
        reservation_keys = []
        for rkey, fields in created:
            self.reservations[rkey] = self._new_reservation(rkey[0], rkey[1], fields, link)
            reservation_keys.append(rkey)
        c = {"project": project, "region": region, "public": public, "start": start,
             "end": end, "creating": True, "reservations": reservation_keys,
             "existing": existing}
        self.commitments[key] = c
        return self._start(project, ("regions", region), "insert", public, user, rid,
                           {"kind": "commitment", "key": key})

    def _get_commitment(self, request: Request, p: dict, user: str) -> Response:
        self._region(p["project"], p["region"])
        return Response(200, self._commitment_json(self._commitment(p["project"], p["region"],
                                                                    p["name"])))

    def _list_commitments(self, request: Request, p: dict, user: str) -> Response:
        project, region = p["project"], p["region"]
        self._region(project, region)
        items = [self._commitment_json(c) for (pr, rg, _), c in self.commitments.items()
                 if pr == project and rg == region]
        return self._list(request, items, "compute#commitmentList",
                          f"projects/{project}/regions/{region}/commitments",
                          f"{self._base(project)}/regions/{region}/commitments")

    # --- lists ----------------------------------------------------------------------------

    def _list(self, request: Request, items: list, kind: str, list_id: str,
              link: str) -> Response:
        q = {k: v[-1] for k, v in request.query.items()}
        raw = q.get("maxResults", "500") or "500"
        if not re.fullmatch(r"\d+", raw) or int(raw) > 500:
            raise _invalid("maxResults", raw, "Must be between 0 and 500.")
        size = int(raw) or 500
        order = q.get("orderBy", "")
        if order in ("", "name"):
            items.sort(key=lambda i: i["name"])
        elif order == "creationTimestamp desc":
            # operations carry insertTime (their creationTimestamp is deprecated)
            items.sort(key=lambda i: (i.get("creationTimestamp") or i.get("insertTime", ""),
                                      i["name"]), reverse=True)
        else:
            raise _invalid("orderBy", order, "Only sorting by name or 'creationTimestamp desc' "
                                             "is supported.")
        if q.get("filter"):
            test = _filter(q["filter"])
            items = [i for i in items if test(i)]
        start = 0
        if q.get("pageToken"):
            try:
                token = json.loads(base64.urlsafe_b64decode(q["pageToken"].encode()))
                start = int(token["offset"])
                if token["list"] != list_id or start < 0:
                    raise ValueError(token)
            except (ValueError, KeyError, TypeError):
                raise _invalid("pageToken", q["pageToken"], "Invalid page token.")
        page = items[start:start + size]
        out = {"kind": kind, "id": list_id, "selfLink": link}
        if page:
            out["items"] = page
        if start + size < len(items):
            out["nextPageToken"] = base64.urlsafe_b64encode(json.dumps(
                {"list": list_id, "offset": start + size}).encode()).decode()
        return Response(200, out)

    # --- operations -----------------------------------------------------------------------

    def _start(self, project: str, scope: tuple[str, str], op_type: str, target: dict,
               user: str, rid: str | None, action: dict) -> Response:
        now = self.now()
        name = operation_name()
        where = f"{self._base(project)}/{scope[0]}/{scope[1]}"
        public = {"kind": "compute#operation", "id": self._new_id(), "name": name,
                  scope[0][:-1]: where, "operationType": op_type,
                  "targetLink": target["selfLink"], "targetId": target["id"],
                  "status": "RUNNING", "user": user, "progress": 0,
                  "insertTime": timestamp(now), "startTime": timestamp(now),
                  "selfLink": f"{where}/operations/{name}"}
        if rid:
            public["clientOperationId"] = rid
            self.request_ids[(project, rid)] = {"operation": name, "at": now}
        self._add_operation(public, {"project": project, "scope": scope, "action": action})
        return Response(200, dict(public))

    def _stockout(self, project: str, zone: str, machine: str) -> dict:
        return {"code": "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
                "message": f"The zone 'projects/{project}/zones/{zone}' does not have enough "
                           "resources available to fulfill the request.  "
                           "'(resource type:compute)'.",
                "errorDetails": [
                    {"help": {"links": [{"description": "Troubleshooting documentation",
                                         "url": "https://cloud.google.com/compute/docs/"
                                                "resource-error"}]}},
                    {"errorInfo": {"reason": "resource_availability",
                                   "domain": SERVICE,
                                   "metadatas": {"vmType": machine, "zone": zone}}}]}

    def _done(self, op: dict) -> tuple:
        """Marks `op` DONE now: (the error `fail_next_operation` gave it, or None; the HTTP
        status and message an error is reported with)."""
        op["public"].update(status="DONE", progress=100, endTime=timestamp(self.now()))
        fail = op["fail"]
        if not fail:
            return None, (503, "SERVICE UNAVAILABLE")
        return ({"code": fail.get("code", "RESOURCE_OPERATION_RATE_EXCEEDED"),
                 "message": fail.get("message", "Injected operation failure.")},
                (int(fail.get("http", 400)), fail.get("httpMessage", "BAD REQUEST")))

    @staticmethod
    def _failed(public: dict, error: dict | None, http: tuple) -> None:
        """Writes `error` (if any) into the operation `public`, as Compute reports one."""
        if error is not None:
            public["error"] = {"errors": [error]}
            public["httpErrorStatusCode"], public["httpErrorMessage"] = http

    def _finish(self, op: dict) -> None:
        public, action = op["public"], op["action"]
        error, http = self._done(op)
        if action["kind"] == "reservation":
            r = self.reservations.get(action["key"])
            if r is None:
                return
            if public["operationType"] == "delete":
                if error is None:
                    del self.reservations[action["key"]]
                else:
                    r["public"]["status"] = "READY"
            else:
                machine = r["public"]["specificReservation"]["instanceProperties"][
                    "machineType"]
                if error is None and (r["zone"], machine) in self.no_capacity:
                    error = self._stockout(r["project"], r["zone"], machine)
                if error is None:
                    r["public"]["status"] = "READY"
                else:
                    del self.reservations[action["key"]]
        else:
            c = self.commitments.get(action["key"])
            if c is None:
                return
            if error is None:
                for key in c["reservations"]:
                    r = self.reservations[key]
                    machine = r["public"]["specificReservation"]["instanceProperties"][
                        "machineType"]
                    if (r["zone"], machine) in self.no_capacity:
                        error = self._stockout(r["project"], r["zone"], machine)
                        break
            if error is None:
                c["creating"] = False
                for key in c["reservations"]:
                    self.reservations[key]["public"]["status"] = "READY"
                for key in c["existing"]:
                    if key in self.reservations:
                        self.reservations[key]["public"]["commitment"] = c["public"][
                            "selfLink"]
            else:
                for key in c["reservations"]:
                    self.reservations.pop(key, None)
                del self.commitments[action["key"]]
        self._failed(public, error, http)

    def _operation(self, p: dict) -> dict:
        scope = ("zones", p["zone"]) if p.get("zone") else ("regions", p["region"])
        if scope[0] == "zones":
            self._zone(p["project"], scope[1])
        else:
            self._region(p["project"], scope[1])
        op = self.operations.get(p["op"])
        if op is None or op["project"] != p["project"] or op["scope"] != scope:
            raise _not_found(f"projects/{p['project']}/{scope[0]}/{scope[1]}/operations/"
                             f"{p['op']}")
        return op

    def _get_operation(self, request: Request, p: dict, user: str) -> Response:
        op = self._operation(p)
        self._poll(op)
        return Response(200, dict(op["public"]))

    def _wait_operation(self, request: Request, p: dict, user: str) -> Response:
        """operations.wait: returns when the operation is DONE or at its deadline; here one
        call stands for `wait_polls` polls (all of them by default)."""
        op = self._operation(p)
        for _ in range(self.wait_polls or op["polls_left"] + 1):
            self._poll(op)
        return Response(200, dict(op["public"]))


# --- list filters -----------------------------------------------------------------------

_TERM = re.compile(r"\s*(?P<field>[A-Za-z][\w.-]*)\s*(?P<op>!=|=|:|\beq\b|\bne\b)\s*"
                   r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s()]+)\s*")


def _filter(text: str):
    """A predicate for a Compute list `filter`: one `field op value` term (`=`, `!=`, `:`,
    or the regular-expression `eq`/`ne`), or parenthesized terms joined by spaces or `AND`.
    Anything else (OR, nesting) is refused."""
    parts = re.findall(r"\(([^()]*)\)", text)
    rest = re.sub(r"\(([^()]*)\)", " ", text).replace(" AND ", " ").strip()
    if parts and rest not in ("", "AND"):
        raise _invalid("filter", text, "Invalid list filter expression.")
    terms = parts or [text]
    checks = []
    for term in terms:
        m = _TERM.fullmatch(term)
        if m is None or " OR " in f" {term} ":
            raise _invalid("filter", text, "Invalid list filter expression.")
        value = m["value"]
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
        checks.append((m["field"].split("."), m["op"], value))

    def get(item, path):
        for key in path:
            if not isinstance(item, dict) or key not in item:
                return None
            item = item[key]
        return item

    def test(item) -> bool:
        for path, op, value in checks:
            got = get(item, path)
            text_value = json.dumps(got) if isinstance(got, bool) else (
                None if got is None else str(got))
            if op == ":":
                ok = got is not None if value == "*" else text_value == value
            elif op in ("=", "!="):
                ok = (text_value == value) == (op == "=")
            else:
                ok = bool(text_value is not None and re.fullmatch(value, text_value))
                ok = ok if op == "eq" else not ok
            if not ok:
                return False
        return True

    return test
