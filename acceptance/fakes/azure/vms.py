"""A fake Azure Resource Manager for `gpu_instance` on Azure: single virtual machines
(`Microsoft.Compute/virtualMachines`, api-version `2024-07-01`) with VM-managed network
interfaces (`networkProfile.networkInterfaceConfigurations`) and managed OS disks, Spot
eviction with the `Deallocate` or `Delete` policy (`simulateEviction`, or Azure itself
through `/_fake/reclaim`), the managed disks they leave (`Microsoft.Compute/disks`,
api-version `2024-03-02`), the activity log (`Microsoft.Insights`, api-version
`2015-04-01`), marketplace image versions and Spot Placement Scores
(`Microsoft.Compute/locations/{location}/placementScores/spot/generate`, api-version
`2025-06-05` or `2024-06-01-preview`), whose scores are whatever the test set.

    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT_ID, SECRET).start(ssl_context=context)
    arm = ArmVms(tokens).start(ssl_context=context)
    arm.seed_subscription(SUB, ["rg-gpu"], locations=["eastus"])     # POST /_fake/subscriptions
    arm.seed_images([{"location": "eastus", "publisher": "microsoft-dsvm",
                      "offer": "ubuntu-hpc", "sku": "2204",
                      "versions": ["22.04.2025030701"]}])              # POST /_fake/images
    arm.set_capacity("eastus", "Standard_NC24ads_A100_v4", short=2)  # POST /_fake/capacity
    arm.reclaim(vm_id)                                               # POST /_fake/reclaim
    arm.set_placement_score("eastus", "Standard_NC24ads_A100_v4", "High",
                            zone="1")                # POST /_fake/placement_scores
    arm.state()                                                      # GET /_fake/state

Requests need a bearer token from the `AzureAD` fake for the ARM audience, checked as the
other ARM fakes do (`common.py`). Writes and power actions are ARM long-running
operations (`Azure-AsyncOperation` + `Location`, `InProgress` for `polls` polls); every
operation a VM goes through is written to the activity log the way ARM writes it, and a
reclaim as Azure's own `evictSpotVM` event. `customData`, `adminPassword` and `userData`
are kept but never answered (`userData` only with `$expand=userData`, as Compute does)
and never logged. Faults (`POST /_fake/faults`) match the decoded path. ../README.md names
the reference behind every rule and lists what is a guess.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import json
import re
import secrets
import uuid
from urllib.parse import quote

from .. import Request, Response, request_id
from ..tokens import TokenRegistry
from .common import (ArmFake, ArmOperations, Refusal, Subscriptions, arm_error,
                     authenticated_route, body_location, compute_not_found, json_body,
                     normal_location, resource_group_not_found, string_map, timestamp)

COMPUTE_API_VERSION = "2024-07-01"
DISK_API_VERSION = "2024-03-02"
INSIGHTS_API_VERSION = "2015-04-01"
# Spot Placement Score (`Invoke-AzSpotPlacementScore`): the GA version and the preview one.
SPOT_PLACEMENT_API_VERSIONS = ("2025-06-05", "2024-06-01-preview")
PLACEMENT_SCORES = ("High", "Medium", "Low", "DataNotFoundOrStale", "RestrictedSkuNotAvailable")
PLACEMENT_MEMBERS = ("desiredLocations", "desiredSizes", "desiredCount", "availabilityZones")
MAX_PLACEMENT_LOCATIONS, MAX_PLACEMENT_SIZES = 8, 5  # Learn: "up to eight regions and five
#                                                      VM sizes"
UTC = _dt.timezone.utc
NETWORK_API_VERSIONS = ("2020-11-01", "2022-11-01")
STORAGE_TYPES = ("Standard_LRS", "Premium_LRS", "StandardSSD_LRS", "UltraSSD_LRS",
                 "Premium_ZRS", "StandardSSD_ZRS", "PremiumV2_LRS")
MAX_CUSTOM_DATA = 65535  # decoded bytes ("The maximum length of the binary array")
ALLOCATION_GUIDANCE = ("Read more about improving likelihood of allocation success at "
                       "http://aka.ms/allocation-guidance")
CAPACITY_CODES = ("SkuNotAvailable", "AllocationFailed", "ZonalAllocationFailed",
                  "OverconstrainedAllocationRequest")
TAG_KEY = "gpu-tf-instance"

# Activity log operation names (value, localizedValue).
OPS = {
    "write": ("Microsoft.Compute/virtualMachines/write", "Create or Update Virtual Machine"),
    "delete": ("Microsoft.Compute/virtualMachines/delete", "Delete Virtual Machine"),
    "start": ("Microsoft.Compute/virtualMachines/start/action", "Start Virtual Machine"),
    "deallocate": ("Microsoft.Compute/virtualMachines/deallocate/action",
                   "Deallocate Virtual Machine"),
    "powerOff": ("Microsoft.Compute/virtualMachines/powerOff/action",
                 "Power Off Virtual Machine"),
    "simulateEviction": ("Microsoft.Compute/virtualMachines/simulateEviction/action",
                         "Simulate Eviction of spot Virtual Machine"),
    "evictSpotVM": ("Microsoft.Compute/virtualMachines/evictSpotVM/action",
                    "Evict Spot Virtual Machine"),
}
POWER_WORDS = {"running": "VM running", "deallocated": "VM deallocated",
               "deallocating": "VM deallocating", "starting": "VM starting",
               "stopped": "VM stopped", "stopping": "VM stopping"}

# The JSON the fake reads: for each object, its type name (as Compute names it in
# "Could not find member 'x' on object of type 'T'"), the members it emulates (with the
# schema of object or list members), and the members that exist in the 2024-07-01 schema
# but are not emulated (refused with the fake's own message).
_SUB = ("SubResource", {"id": None}, ())
_IPCONF = ("VirtualMachineNetworkInterfaceIPConfiguration", {
    "name": None,
    "properties": ("VirtualMachineNetworkInterfaceIPConfigurationProperties", {
        "subnet": _SUB, "primary": None, "privateIPAddressVersion": None},
        ("publicIPAddressConfiguration", "applicationSecurityGroups",
         "applicationGatewayBackendAddressPools", "loadBalancerBackendAddressPools"))}, ())
_NICCONF = ("VirtualMachineNetworkInterfaceConfiguration", {
    "name": None,
    "properties": ("VirtualMachineNetworkInterfaceConfigurationProperties", {
        "primary": None, "deleteOption": None, "enableAcceleratedNetworking": None,
        "networkSecurityGroup": _SUB, "ipConfigurations": [_IPCONF]},
        ("disableTcpStateTracking", "enableFpga", "enableIPForwarding", "dnsSettings",
         "dscpConfiguration", "auxiliaryMode", "auxiliarySku"))}, ())
PROPERTIES_SCHEMA = ("VirtualMachineProperties", {
    "hardwareProfile": ("HardwareProfile", {"vmSize": None}, ("vmSizeProperties",)),
    "storageProfile": ("StorageProfile", {
        "imageReference": ("ImageReference", {
            "publisher": None, "offer": None, "sku": None, "version": None, "id": None,
            "exactVersion": None}, ("sharedGalleryImageId", "communityGalleryImageId")),
        "osDisk": ("OSDisk", {
            "osType": None, "name": None, "caching": None, "createOption": None,
            "diskSizeGB": None, "deleteOption": None,
            "managedDisk": ("ManagedDiskParameters", {"storageAccountType": None, "id": None},
                            ("diskEncryptionSet", "securityProfile"))},
            ("encryptionSettings", "vhd", "image", "writeAcceleratorEnabled",
             "diffDiskSettings")),
        "dataDisks": [("DataDisk", {}, ())]}, ("diskControllerType", "alignRegionalDisksToVMZone")),
    "osProfile": ("OSProfile", {
        "computerName": None, "adminUsername": None, "adminPassword": None,
        "customData": None, "secrets": [("VaultSecretGroup", {}, ())],
        "allowExtensionOperations": None, "requireGuestProvisionSignal": None,
        "linuxConfiguration": ("LinuxConfiguration", {
            "disablePasswordAuthentication": None, "provisionVMAgent": None,
            "ssh": ("SshConfiguration", {
                "publicKeys": [("SshPublicKey", {"path": None, "keyData": None}, ())]}, ())},
            ("patchSettings", "enableVMAgentPlatformUpdates"))},
        ("windowsConfiguration",)),
    "networkProfile": ("NetworkProfile", {
        "networkApiVersion": None, "networkInterfaceConfigurations": [_NICCONF]},
        ("networkInterfaces",)),
    "priority": None, "evictionPolicy": None,
    "billingProfile": ("BillingProfile", {"maxPrice": None}, ()),
    "userData": None, "vmId": None, "provisioningState": None, "timeCreated": None},
    ("scheduledEventsPolicy", "additionalCapabilities", "securityProfile", "diagnosticsProfile",
     "availabilitySet", "virtualMachineScaleSet", "proximityPlacementGroup", "host",
     "hostGroup", "instanceView", "licenseType", "extensionsTimeBudget", "platformFaultDomain",
     "scheduledEventsProfile", "capacityReservation", "applicationProfile"))
TOP_MEMBERS = ("location", "zones", "tags", "properties", "id", "name", "type", "etag")
TOP_NOT_EMULATED = ("plan", "identity", "extendedLocation")
SECRET_PATHS = (("properties", "osProfile", "customData"),
                ("properties", "osProfile", "adminPassword"), ("properties", "userData"))

_SUBP = r"/subscriptions/(?P<sub>[^/]+)"
_RG = _SUBP + r"/resourcegroups/(?P<rg>[^/]+)"
_VM = _RG + r"/providers/microsoft\.compute/virtualmachines/(?P<vm>[^/]+)"
_IMG = (_SUBP + r"/providers/microsoft\.compute/locations/(?P<loc>[^/]+)/publishers/"
        r"(?P<pub>[^/]+)/artifacttypes/vmimage/offers/(?P<offer>[^/]+)/skus/(?P<sku>[^/]+)"
        r"/versions")
ROUTES = [
    ("vms", re.compile(_RG + r"/providers/microsoft\.compute/virtualmachines", re.I)),
    ("vm", re.compile(_VM, re.I)),
    ("instance_view", re.compile(_VM + "/instanceview", re.I)),
    ("action", re.compile(_VM + r"/(?P<action>[a-z]+)", re.I)),
    ("disk", re.compile(_RG + r"/providers/microsoft\.compute/disks/(?P<disk>[^/]+)", re.I)),
    ("images", re.compile(_IMG, re.I)),
    ("image", re.compile(_IMG + r"/(?P<version>[^/]+)", re.I)),
    ("operation", re.compile(_SUBP + r"/providers/microsoft\.compute/locations/(?P<loc>[^/]+)/"
                                     r"operations/(?P<op>[^/]+)", re.I)),
    ("activity", re.compile(_SUBP + r"/providers/microsoft\.insights/eventtypes/management/"
                                    r"values", re.I)),
    ("all_vms", re.compile(_SUBP + r"/providers/microsoft\.compute/virtualmachines", re.I)),
    ("spot_scores", re.compile(_SUBP + r"/providers/microsoft\.compute/locations/(?P<loc>[^/]+)/"
                                       r"placementscores/spot/generate", re.I)),
    ("compute_unknown", re.compile(_SUBP + r"(/resourcegroups/[^/]+)?/providers/"
                                           r"microsoft\.compute(/.*)?", re.I)),
]
ACTIONS = {"start": "start", "deallocate": "deallocate", "poweroff": "powerOff",
           "simulateeviction": "simulateEviction"}
METHODS = {"vms": ("GET",), "all_vms": ("GET",), "vm": ("GET", "PUT", "PATCH", "DELETE"),
           "instance_view": ("GET",), "action": ("POST",), "disk": ("GET",),
           "images": ("GET",), "image": ("GET",), "operation": ("GET",),
           "activity": ("GET",), "spot_scores": ("POST",)}
RESOURCE_TYPES = {"vms": "virtualMachines", "all_vms": "virtualMachines", "vm": "virtualMachines",
                  "instance_view": "virtualMachines", "action": "virtualMachines",
                  "disk": "disks", "images": "locations/publishers/artifacttypes/offers/skus/"
                  "versions", "image": "locations/publishers/artifacttypes/offers/skus/"
                  "versions", "operation": "locations/operations",
                  "activity": "eventtypes/management/values",
                  "spot_scores": "locations/placementScores"}
FILTER_RE = re.compile(
    r"\s*eventTimestamp\s+ge\s+'(?P<ge>[^']+)'"
    r"(?:\s+and\s+eventTimestamp\s+le\s+'(?P<le>[^']+)')?"
    r"(?:\s+and\s+(?P<field>resourceGroupName|resourceUri|resourceId|resourceProvider|"
    r"correlationId)\s+eq\s+'(?P<value>[^']*)')?\s*", re.I)
SELECT_FIELDS = ("authorization", "claims", "correlationId", "description", "eventDataId",
                 "eventName", "eventTimestamp", "httpRequest", "level", "operationId",
                 "operationName", "properties", "resourceGroupName", "resourceProviderName",
                 "resourceId", "status", "submissionTimestamp", "subStatus", "subscriptionId",
                 "caller", "category", "resourceType", "tenantId", "id", "channels")


def _parse_time(text: str) -> _dt.datetime:
    when = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _version_key(name: str):
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.]", name))


def _bad(message: str, target: str | None = None, code: str = "InvalidParameter"):
    raise Refusal(400, code, message, target)


def _redacted(body):
    """A copy of a request body for the request log, without secrets."""
    if not isinstance(body, dict):
        return body
    out = json.loads(json.dumps(body))
    for path in SECRET_PATHS:
        node = out
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and path[-1] in node:
            node[path[-1]] = "<redacted>"
    return out


class ArmVms(Subscriptions, ArmOperations, ArmFake):
    """The fake ARM endpoint for single VMs, their disks, the activity log and marketplace
    image versions (`url` replaces https://management.azure.com). Settings (`configure`, or
    `POST /_fake/faults`): `polls` (InProgress answers before an operation ends, default 2),
    `retry_after` (default 1), `list_page_size` (VMs per list page, default 50),
    `activity_page_size` (events per page, default 50), `simulate_logs_eviction` (a
    `simulateEviction` also writes an `evictSpotVM` event, default false),
    `uppercase_disk_rg` (the VM answers its OS disk id with the resource group in capitals,
    default true), `compute_api_versions`, `disk_api_versions`, `insights_api_versions`,
    `spot_placement_api_versions`.

    Spot Placement Score (`POST .../locations/{location}/placementScores/spot/generate`,
    body `{desiredLocations: 1-8 regions, desiredSizes: 1-5 [{sku}], desiredCount >= 1,
    availabilityZones?}`, anything else 400 `InvalidParameter`) echoes the input and lists
    `placementScores`, region by region, size by size: with `availabilityZones` one
    `{sku, region, availabilityZone, score, isQuotaAvailable}` per zone given a score by
    `set_placement_score(region, sku, score, zone, quota_available)` (or
    `POST /_fake/placement_scores`), else one `{sku, region, score, isQuotaAvailable}` from
    the region-level score; a combination never set answers `DataNotFoundOrStale` with
    `isQuotaAvailable` true. Real scores are Azure's own computation; the fake only replays
    the words it was given. Decoded requests are kept in `placement_score_requests`."""

    name = "arm-vms"

    def __init__(self, registry: TokenRegistry, time_scale=None):
        super().__init__(registry, time_scale)
        self.reset_state()

    def reset_state(self) -> None:
        self.subscriptions: dict[str, dict] = {}
        self.vms: dict[tuple, dict] = {}
        self.disks: dict[tuple, dict] = {}
        self.nics: dict[str, dict] = {}
        self.events: list[dict] = []
        self.images: dict[tuple, dict] = {}
        self.capacity: dict[tuple, dict] = {}
        self.operations: dict[str, dict] = {}
        self.polls, self.retry_after = 2, 1
        self.list_page_size, self.activity_page_size = 50, 50
        self.simulate_logs_eviction, self.uppercase_disk_rg = False, True
        self.compute_api_versions = (COMPUTE_API_VERSION,)
        self.disk_api_versions = (DISK_API_VERSION,)
        self.insights_api_versions = (INSIGHTS_API_VERSION,)
        self.spot_placement_api_versions = SPOT_PLACEMENT_API_VERSIONS
        # (location, sku, zone or None), lower case -> {score, quota_available, names given}
        self.placement_scores: dict[tuple, dict] = {}
        self.placement_score_requests: list[dict] = []

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        for key in ("polls", "retry_after", "list_page_size", "activity_page_size"):
            if key in s:
                setattr(self, key, max(0 if key in ("polls", "retry_after") else 1,
                                       int(s.pop(key))))
        for key in ("simulate_logs_eviction", "uppercase_disk_rg"):
            if key in s:
                setattr(self, key, bool(s.pop(key)))
        for key in ("compute_api_versions", "disk_api_versions", "insights_api_versions",
                    "spot_placement_api_versions"):
            if key in s:
                setattr(self, key, tuple(s.pop(key)))
        super().configure(s)

    # --- seeding and test control -------------------------------------------------------

    def now(self) -> _dt.datetime:
        return _dt.datetime.now(UTC)

    def seed_images(self, images: list[dict]) -> list[dict]:
        """Marketplace image versions: each `{location, publisher, offer, sku, versions:
        [...], hyper_v_generation? = "V2", architecture? = "x64"}`; versions add to those
        already seeded. Once a location has images, a VM there must name a seeded one."""
        with self.lock:
            out = []
            for entry in images:
                e = dict(entry)
                key = (normal_location(e.pop("location")), e.pop("publisher").lower(),
                       e.pop("offer").lower(), e.pop("sku").lower())
                versions = [str(v) for v in e.pop("versions")]
                image = self.images.setdefault(key, {
                    "key": key, "names": (entry["publisher"], entry["offer"], entry["sku"]),
                    "versions": [], "hyperVGeneration": "V2", "architecture": "x64"})
                image["hyperVGeneration"] = e.pop("hyper_v_generation",
                                                  image["hyperVGeneration"])
                image["architecture"] = e.pop("architecture", image["architecture"])
                if e:
                    raise ValueError(f"unknown image fields {sorted(e)}")
                image["versions"] = sorted(set(image["versions"]) | set(versions),
                                           key=_version_key)
                out.append(self._image_seed_json(image))
            return out

    def set_capacity(self, location: str, vm_size: str, short: int, code: str = "SkuNotAvailable",
                     zone: str | None = None) -> dict:
        """The next `short` allocations (creates, and starts of deallocated VMs) of
        `vm_size` in `location` (or only in `zone`) fail with `code`; 0 clears."""
        if code not in CAPACITY_CODES:
            raise ValueError(f"code must be one of {list(CAPACITY_CODES)}")
        with self.lock:
            key = (normal_location(location), vm_size.lower(), str(zone) if zone else None)
            if int(short) <= 0:
                self.capacity.pop(key, None)
            else:
                self.capacity[key] = {"short": int(short), "code": code}
            return {"capacity": self._capacity_json()}

    def set_placement_score(self, region: str, sku: str, score: str | None,
                            zone: str | None = None, quota_available: bool = True) -> dict:
        """The Spot Placement Score `sku` gets in `region` (in `zone` "1"/"2"/"3", or at the
        region level without one): `High`, `Medium`, `Low`, `DataNotFoundOrStale` or
        `RestrictedSkuNotAvailable`, with `isQuotaAvailable` = `quota_available`. `score`
        None forgets it. Returns every configured score."""
        if not isinstance(region, str) or not region.strip():
            raise ValueError("region must be a region name")
        if not isinstance(sku, str) or not sku.strip():
            raise ValueError("sku must be a VM size")
        if zone is not None and not re.fullmatch(r"[1-9]", str(zone)):
            raise ValueError(f"zone {zone!r} is not an availability zone number")
        if score is not None and score not in PLACEMENT_SCORES:
            raise ValueError(f"score must be one of {list(PLACEMENT_SCORES)}")
        if not isinstance(quota_available, bool):
            raise ValueError("quota_available must be true or false")
        with self.lock:
            key = (normal_location(region), sku.lower(), str(zone) if zone is not None else None)
            if score is None:
                self.placement_scores.pop(key, None)
            else:
                self.placement_scores[key] = {"score": score, "quota_available": quota_available,
                                              "region": region, "sku": sku}
            return {"placement_scores": self._placement_scores_json()}

    def _placement_scores_json(self) -> list[dict]:
        return [{"region": v["region"], "sku": v["sku"], "zone": key[2], "score": v["score"],
                 "quota_available": v["quota_available"]}
                for key, v in sorted(self.placement_scores.items(),
                                     key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or ""))]

    def reclaim(self, vm_id: str) -> dict:
        """Azure evicts a running Spot VM, as the platform does: deallocated (or deleted
        with its deleteOption Delete disks and NICs, under the Delete policy), written to
        the activity log as `evictSpotVM`. Azure never starts it again by itself."""
        with self.lock:
            m = re.fullmatch(_VM, vm_id.strip(), re.I)
            vm = self.vms.get(self._vm_key(m)) if m else None
            if vm is None:
                raise LookupError(f"no VM {vm_id}")
            if vm["priority"] != "Spot":
                raise ValueError(f"{vm['name']} is not a Spot VM")
            if vm["power"] != "running" or vm["operation"]:
                raise ValueError(f"{vm['name']} is {vm['power']}"
                                 f"{' with an operation running' if vm['operation'] else ''}; "
                                 "only a running VM is evicted")
            self._evict(vm, caller=None)
            return self._vm_json(vm, instance_view=True) if self._vm_key_of(vm) in self.vms \
                else {"deleted": vm_id}

    def control_routes(self) -> dict:
        """`POST /_fake/subscriptions`, `/_fake/images`, `/_fake/capacity`, `/_fake/reclaim`
        and `/_fake/placement_scores`."""
        return {
            "/_fake/subscriptions": lambda d: (201, self.seed(d)),
            "/_fake/images": lambda d: (201, {"images": self.seed_images(
                d["images"] if "images" in d else [d])}),
            "/_fake/capacity": lambda d: (200, self.set_capacity(
                d["location"], d["vm_size"], d.get("short", 0),
                d.get("code", "SkuNotAvailable"), d.get("zone"))),
            "/_fake/reclaim": lambda d: (200, self.reclaim(d["id"])),
            "/_fake/placement_scores": lambda d: (200, self.set_placement_score(
                d["region"], d["sku"], d["score"], d.get("zone"),
                d.get("quota_available", True))),
        }

    def snapshot(self) -> dict:
        return {
            "settings": {"polls": self.polls, "retry_after": self.retry_after,
                         "list_page_size": self.list_page_size,
                         "activity_page_size": self.activity_page_size,
                         "simulate_logs_eviction": self.simulate_logs_eviction,
                         "uppercase_disk_rg": self.uppercase_disk_rg,
                         "compute_api_versions": list(self.compute_api_versions),
                         "disk_api_versions": list(self.disk_api_versions),
                         "insights_api_versions": list(self.insights_api_versions),
                         "spot_placement_api_versions": list(
                             self.spot_placement_api_versions)},
            "subscriptions": [self._subscription_json(s) for s in self.subscriptions.values()],
            "vms": [{**self._vm_json(vm, instance_view=True),
                     "fake": {"power": vm["power"], "operation": vm["operation"],
                              "has_custom_data": vm["customData"] is not None,
                              "has_admin_password": vm["adminPassword"] is not None,
                              "has_user_data": vm["userData"] is not None,
                              "evictions": vm["evictions"]}}
                    for vm in self.vms.values()],
            "disks": [self._disk_json(d) for d in self.disks.values()],
            "nics": [dict(n) for n in self.nics.values()],
            "activity_log": [dict(e) for e in self.events],
            "images": [self._image_seed_json(i) for i in self.images.values()],
            "capacity": self._capacity_json(),
            "operations": [{k: v for k, v in op.items()} for op in self.operations.values()],
            "placement_scores": self._placement_scores_json(),
            "placement_score_requests": [dict(r) for r in self.placement_score_requests],
        }

    def _capacity_json(self) -> list[dict]:
        return [{"location": loc, "vm_size": size, "zone": zone, **dict(v)}
                for (loc, size, zone), v in sorted(self.capacity.items(), key=str)]

    @staticmethod
    def _image_seed_json(image: dict) -> dict:
        loc = image["key"][0]
        pub, offer, sku = image["names"]
        return {"location": loc, "publisher": pub, "offer": offer, "sku": sku,
                "versions": list(image["versions"]),
                "hyper_v_generation": image["hyperVGeneration"],
                "architecture": image["architecture"]}

    # --- dispatch -----------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        issued, kind, m, failure = authenticated_route(self.registry, request, ROUTES)
        if failure:
            return failure
        if kind == "action" and m["action"].lower() not in ACTIONS:
            kind = "compute_unknown"
        versions = (self.disk_api_versions if kind == "disk" else self.insights_api_versions
                    if kind == "activity" else self.spot_placement_api_versions
                    if kind == "spot_scores" else self.compute_api_versions)
        vm = self.vms.get(self._vm_key(m)) if "vm" in m.groupdict() else None
        sub, failure = self._checked_subscription(
            request, issued, m, "Microsoft.Compute", versions, kind == "compute_unknown",
            RESOURCE_TYPES.get(kind), lambda locations: vm["location"] if vm else
            normal_location(m["loc"]) if kind == "spot_scores" else locations[0])
        if failure:
            return failure
        if request.method not in METHODS[kind]:
            return arm_error(405, "HttpMethodNotSupported",
                             f"The requested resource does not support http method "
                             f"'{request.method}'.")
        try:
            if kind == "operation":
                return self._operation(request, m)
            if kind == "activity":
                return self._activity(request, sub)
            if kind == "spot_scores":
                return self._spot_placement_scores(request, m, sub)
            if kind in ("images", "image"):
                return self._images(request, kind, m, sub)
            if kind == "all_vms":
                return self._list(request, sub, None)
            if m["rg"].lower() not in sub["resource_groups"]:
                return resource_group_not_found(m["rg"])
            rg = sub["resource_groups"][m["rg"].lower()]
            if kind == "vms":
                return self._list(request, sub, rg)
            if kind == "disk":
                disk = self.disks.get((sub["id"].lower(), rg.lower(), m["disk"].lower()))
                if disk is None:
                    return compute_not_found(rg, f"disks/{m['disk']}")
                return Response(200, self._disk_json(disk), {"x-ms-request-id": request_id()})
            key = self._vm_key(m)
            vm = self.vms.get(key)
            if kind == "vm" and request.method == "PUT":
                return self._put(request, issued, sub, rg, m["vm"], vm)
            if vm is None:
                if kind == "vm" and request.method == "DELETE":
                    return Response(204, None, {"x-ms-request-id": request_id()})
                return compute_not_found(rg, f"virtualMachines/{m['vm']}")
            if kind == "instance_view":
                return Response(200, self._instance_view(vm), {"x-ms-request-id": request_id()})
            if kind == "action":
                return self._action(request, issued, vm, ACTIONS[m["action"].lower()])
            if request.method == "GET":
                expand = ",".join(request.query.get("$expand", []))
                if expand and expand not in ("instanceView", "userData"):
                    _bad(f"The value '{expand}' of parameter '$expand' is invalid. Allowed "
                         "values: instanceView, userData.", "$expand")
                return Response(200, self._vm_json(vm, expand == "instanceView",
                                                   expand == "userData"),
                                {"x-ms-request-id": request_id()})
            if request.method == "PATCH":
                return self._patch(request, issued, vm)
            return self._delete(request, issued, vm)
        except Refusal as refusal:
            return refusal.response

    @staticmethod
    def _vm_key(m) -> tuple:
        return m["sub"].lower(), m["rg"].lower(), m["vm"].lower()

    @staticmethod
    def _vm_key_of(vm: dict) -> tuple:
        return vm["subscription"].lower(), vm["resource_group"].lower(), vm["name"].lower()

    @staticmethod
    def _json_body(request: Request) -> dict:
        return json_body(request, _redacted)

    # --- Spot Placement Score -----------------------------------------------------------

    def _spot_placement_scores(self, request: Request, m, sub: dict) -> Response:
        """`SpotPlacementScores_Post`: a score per desired size x desired location (x zone
        with `availabilityZones`), from `set_placement_score`; DataNotFoundOrStale where none
        was set."""
        body = self._json_body(request)
        for key in body:
            if key not in PLACEMENT_MEMBERS:
                _bad(f"Could not find member '{key}' on object of type "
                     "'SpotPlacementScoresInput'.", key)
        locations = body.get("desiredLocations")
        if not isinstance(locations, list) or not 1 <= len(locations) <= \
                MAX_PLACEMENT_LOCATIONS or not all(isinstance(x, str) and x.strip()
                                                   for x in locations):
            _bad(f"'desiredLocations' must list 1 to {MAX_PLACEMENT_LOCATIONS} region names.",
                 "desiredLocations")
        sizes = body.get("desiredSizes")
        if not isinstance(sizes, list) or not 1 <= len(sizes) <= MAX_PLACEMENT_SIZES or not all(
                isinstance(x, dict) and set(x) == {"sku"} and isinstance(x["sku"], str)
                and x["sku"].strip() for x in sizes):
            _bad(f"'desiredSizes' must list 1 to {MAX_PLACEMENT_SIZES} objects "
                 "{\"sku\": \"<VM size>\"}.", "desiredSizes")
        count = body.get("desiredCount")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            _bad("'desiredCount' must be an integer of at least 1.", "desiredCount")
        zonal = body.get("availabilityZones", False)
        if not isinstance(zonal, bool):
            _bad("'availabilityZones' must be true or false.", "availabilityZones")
        skus = [x["sku"] for x in sizes]
        self.placement_score_requests.append({
            "subscription": sub["id"], "location": m["loc"], "desired_locations": locations,
            "desired_sizes": skus, "desired_count": count, "availability_zones": zonal})
        scores = []
        for region in locations:  # region by region, then size, then zone, as Azure lists them
            for sku in skus:
                scores += self._placement_entries(region, sku, zonal)
        answer = {"desiredLocations": locations, "desiredSizes": [{"sku": s} for s in skus],
                  "desiredCount": count, "availabilityZones": zonal,
                  "placementScores": scores}
        return Response(200, answer, {"x-ms-request-id": request_id()})

    def _placement_entries(self, region: str, sku: str, zonal: bool) -> list[dict]:
        """The entries of one size in one region: zonal, one per zone with a score (none:
        one entry without a zone, DataNotFoundOrStale); else the region-level score."""
        loc, size = normal_location(region), sku.lower()
        found = {zone: v for (r, s, zone), v in self.placement_scores.items()
                 if r == loc and s == size}
        unknown = {"score": "DataNotFoundOrStale", "quota_available": True}

        def entry(zone, v):
            return {"sku": sku, "region": region,
                    **({"availabilityZone": zone} if zone is not None else {}),
                    "score": v["score"], "isQuotaAvailable": v["quota_available"]}

        if zonal:
            zones = sorted(z for z in found if z is not None)
            return [entry(z, found[z]) for z in zones] or [entry(None, unknown)]
        return [entry(None, found.get(None, unknown))]

    # --- unknown members --------------------------------------------------------------

    @staticmethod
    def _position(raw: str, key: str) -> int:
        """Where Json.NET would report `key`: one past the end of its first occurrence
        as a property name (an approximation)."""
        found = re.search(r'"%s"\s*:' % re.escape(key), raw)
        return found.end() - 1 if found else 1

    def _check_members(self, body: dict, raw: str) -> None:
        for key in body:
            if key in TOP_NOT_EMULATED:
                _bad(f"The fake does not emulate '{key}'.", key, "BadRequest")
            if key not in TOP_MEMBERS:
                raise Refusal(400, "InvalidRequestContent",
                               "The request content was invalid and could not be "
                               f"deserialized: 'Could not find member '{key}' on object of type "
                               f"'ResourceDefinition'. Path '{key}', line 1, position "
                               f"{self._position(raw, key)}.'.")
        if "properties" in body:
            self._walk(body["properties"], PROPERTIES_SCHEMA, "properties", raw)

    def _walk(self, value, schema, path: str, raw: str) -> None:
        if isinstance(schema, list):
            if value is None:
                return
            if not isinstance(value, list):
                _bad(f"'{path}' must be an array.", path, "BadRequest")
            for i, item in enumerate(value):
                self._walk(item, schema[0], f"{path}[{i}]", raw)
            return
        if schema is None or value is None:
            return
        tname, members, known = schema
        if not isinstance(value, dict):
            _bad(f"'{path}' must be an object of type '{tname}'.", path, "BadRequest")
        if not members and value:  # an object the fake accepts only empty
            _bad(f"The fake does not emulate '{path}'.", path, "BadRequest")
        for key, item in value.items():
            where = f"{path}.{key}"
            if key in known:
                _bad(f"The fake does not emulate '{where}'.", where, "BadRequest")
            if key not in members:
                _bad(f"Could not find member '{key}' on object of type '{tname}'. Path "
                     f"'{where}', line 1, position {self._position(raw, key)}.", None,
                     "BadRequest")
            self._walk(item, members[key], where, raw)

    # --- VM create / update -------------------------------------------------------------

    def _put(self, request: Request, issued, sub: dict, rg: str, name: str, vm) -> Response:
        body = self._json_body(request)
        if_none, if_match = request.headers.get("If-None-Match"), request.headers.get("If-Match")
        if (if_none == "*" and vm is not None) or (if_match and (
                vm is None or if_match not in ("*", self._etag(vm)))):
            return arm_error(412, "PreconditionFailed",
                             "The condition specified in the request headers was not met.")
        if if_none not in (None, "*"):
            _bad("Only '*' is supported as the value of the If-None-Match header.",
                 "If-None-Match")
        self._check_members(body, request.body.decode("utf-8", "replace"))
        spec = self._validate(body, sub, rg, name)
        if vm is None:
            return self._create(request, issued, sub, rg, name, spec)
        return self._update(request, issued, vm, spec)

    def _validate(self, body: dict, sub: dict, rg: str, name: str) -> dict:
        if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_])?", name):
            _bad(f"The resource name '{name}' is invalid for a virtual machine: 1 to 64 "
                 "letters, digits, '_', '.' and '-', starting with a letter or digit and "
                 "ending with a letter, digit or '_'.", "vmName", "InvalidResourceName")
        location = body_location(body)
        if sub["locations"] is not None and location not in sub["locations"]:
            raise Refusal(400, "LocationNotAvailableForResourceType",
                           f"The provided location '{location}' is not available for resource "
                           "type 'Microsoft.Compute/virtualMachines'. List of available "
                           f"regions for the resource type is '{','.join(sub['locations'])}'.")
        zones = body.get("zones") or None
        if zones is not None and (not isinstance(zones, list) or len(zones) != 1
                                  or zones[0] not in ("1", "2", "3")):
            _bad(f"The value {zones} of zones is invalid: a virtual machine takes one zone of "
                 f"location '{location}' ('1', '2' or '3').", "zones")
        tags = string_map(body)
        p = body.get("properties")
        if not isinstance(p, dict):
            _bad("Required parameter 'properties' is missing (null).", "properties")
        size = (p.get("hardwareProfile") or {}).get("vmSize")
        if not isinstance(size, str) or not size:
            _bad("Required parameter 'hardwareProfile.vmSize' is missing (null).",
                 "hardwareProfile.vmSize")
        storage = p.get("storageProfile") or {}
        image = storage.get("imageReference")
        osdisk = storage.get("osDisk")
        if not isinstance(osdisk, dict):
            _bad("Required parameter 'osDisk' is missing (null).", "osDisk")
        if osdisk.get("createOption") != "FromImage":
            _bad(f"The value '{osdisk.get('createOption')}' of osDisk.createOption is not "
                 "emulated: the fake creates OS disks FromImage only.", "osDisk.createOption")
        if not isinstance(image, dict) or not (
                image.get("id") or all(image.get(k) for k in ("publisher", "offer", "sku"))):
            _bad("Required parameter 'imageReference' is missing (null): give publisher, offer, "
                 "sku and version, or id.", "imageReference")
        exact = self._resolve_image(image, location) if not image.get("id") else None
        size_gb = osdisk.get("diskSizeGB")
        if size_gb is not None and (isinstance(size_gb, bool) or not isinstance(size_gb, int)
                                    or not 1 <= size_gb <= 4095):
            _bad(f"The value {size_gb} of osDisk.diskSizeGB is invalid: an OS disk has 1 to "
                 "4095 GB.", "osDisk.diskSizeGB")
        delete_option = osdisk.get("deleteOption") or "Detach"
        if delete_option not in ("Delete", "Detach"):
            _bad(f"The value '{delete_option}' of osDisk.deleteOption is invalid. Allowed values:"
                 " Delete, Detach.", "osDisk.deleteOption")
        sat = (osdisk.get("managedDisk") or {}).get("storageAccountType") or "Premium_LRS"
        if sat not in STORAGE_TYPES:
            _bad(f"The value '{sat}' of managedDisk.storageAccountType is invalid. Allowed "
                 f"values: {', '.join(STORAGE_TYPES)}.", "osDisk.managedDisk.storageAccountType")
        osp = p.get("osProfile")
        if not isinstance(osp, dict):
            _bad("Required parameter 'osProfile' is missing (null).", "osProfile")
        admin = osp.get("adminUsername")
        if not isinstance(admin, str) or not admin:
            _bad("Required parameter 'adminUsername' is missing (null).",
                 "osProfile.adminUsername")
        computer = osp.get("computerName") or name
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.-]{0,63}", computer) or \
                computer.isdigit():
            _bad(f"The value '{computer}' of osProfile.computerName is invalid: up to 64 "
                 "letters, digits, '.' and '-', not only digits.", "osProfile.computerName")
        custom = osp.get("customData")
        if custom is not None:
            try:
                decoded = base64.b64decode(custom, validate=True)
            except (binascii.Error, ValueError, TypeError):
                _bad("Custom data in OSProfile must be in Base64 encoding.",
                     "osProfile.customData")
            if len(decoded) > MAX_CUSTOM_DATA:
                _bad(f"Custom data in OSProfile is {len(decoded)} bytes once decoded; the "
                     f"maximum is {MAX_CUSTOM_DATA}.", "osProfile.customData")
        linux = osp.get("linuxConfiguration") or {}
        keys = ((linux.get("ssh") or {}).get("publicKeys")) or []
        for key in keys:
            if key.get("path") != f"/home/{admin}/.ssh/authorized_keys":
                _bad("Destination path for SSH public keys is currently limited to its default "
                     f"value /home/{admin}/.ssh/authorized_keys due to a known issue in Linux "
                     "provisioning agent.", "linuxConfiguration.ssh.publicKeys.path")
            if not key.get("keyData"):
                _bad("Required parameter 'keyData' is missing (null).",
                     "linuxConfiguration.ssh.publicKeys.keyData")
        no_password = linux.get("disablePasswordAuthentication", False)
        if no_password and not keys:
            _bad("Authentication using either SSH or by user name and password must be enabled "
                 "in Linux profile.", "linuxConfiguration")
        if not no_password and not osp.get("adminPassword"):
            _bad("Required parameter 'adminPassword' is missing (null).",
                 "osProfile.adminPassword")
        net = p.get("networkProfile") or {}
        confs = net.get("networkInterfaceConfigurations") or []
        if not confs:
            _bad("Required parameter 'networkProfile' is missing (null): give "
                 "networkInterfaceConfigurations.", "networkProfile")
        if net.get("networkApiVersion") not in NETWORK_API_VERSIONS:
            _bad(f"The value '{net.get('networkApiVersion')}' of networkApiVersion is invalid; "
                 "it is required with networkInterfaceConfigurations. Allowed values: "
                 f"{', '.join(NETWORK_API_VERSIONS)}.", "networkProfile.networkApiVersion")
        nics = []
        for i, conf in enumerate(confs):
            cp = conf.get("properties") or {}
            if not conf.get("name"):
                _bad("Required parameter 'name' is missing (null).",
                     f"networkInterfaceConfigurations[{i}].name")
            ipconfs = cp.get("ipConfigurations") or []
            if not ipconfs:
                _bad("Required parameter 'ipConfigurations' is missing (null).",
                     f"networkInterfaceConfigurations[{i}].ipConfigurations")
            for j, ipc in enumerate(ipconfs):
                subnet = ((ipc.get("properties") or {}).get("subnet") or {}).get("id")
                where = (f"properties.networkProfile.networkInterfaceConfigurations[{i}]."
                         f"properties.ipConfigurations[{j}].properties.subnet.id")
                if not ipc.get("name"):
                    _bad("Required parameter 'name' is missing (null).", where)
                if not isinstance(subnet, str) or not re.fullmatch(
                        r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                        r"Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+", subnet,
                        re.I):
                    raise Refusal(400, "LinkedInvalidPropertyId",
                                   f"Property id '{subnet}' at path '{where}' is invalid. Expect "
                                   "fully qualified resource Id that start with "
                                   "'/subscriptions/{subscriptionId}' or "
                                   "'/providers/{resourceProviderNamespace}/'.")
            option = cp.get("deleteOption") or "Detach"
            if option not in ("Delete", "Detach"):
                _bad(f"The value '{option}' of deleteOption is invalid. Allowed values: Delete, "
                     "Detach.", f"networkInterfaceConfigurations[{i}].deleteOption")
            nics.append({"name": conf["name"], "primary": cp.get("primary", len(confs) == 1),
                         "deleteOption": option})
        if len(confs) > 1 and sum(bool(n["primary"]) for n in nics) != 1:
            _bad("Exactly one network interface configuration must be primary.",
                 "networkProfile.networkInterfaceConfigurations")
        priority = p.get("priority") or "Regular"
        if priority not in ("Regular", "Low", "Spot"):
            _bad(f"The value '{priority}' of priority is invalid. Allowed values: Regular, Low, "
                 "Spot.", "priority")
        eviction = p.get("evictionPolicy")
        max_price = (p.get("billingProfile") or {}).get("maxPrice")
        if priority != "Spot":
            if eviction is not None:
                _bad("Eviction policy can be set only on Azure Spot Virtual Machines.",
                     "evictionPolicy", "EvictionPolicyCanBeSetOnlyOnAzureSpotVirtualMachines")
            if max_price is not None:
                _bad("Max price is supported only for Azure Spot Virtual Machines.",
                     "billingProfile.maxPrice",
                     "MaxPriceIsSupportedOnlyForAzureSpotVirtualMachines")
        else:
            eviction = eviction or "Deallocate"
            if eviction not in ("Deallocate", "Delete"):
                _bad(f"The value '{eviction}' of evictionPolicy is invalid. Allowed values: "
                     "Deallocate, Delete.", "evictionPolicy")
            max_price = -1 if max_price is None else max_price
            if isinstance(max_price, bool) or not isinstance(max_price, (int, float)) or \
                    not (max_price == -1 or max_price > 0):
                _bad("Max price value is invalid. The only supported values for max price are "
                     "-1 or a decimal greater than zero. A max price value of -1 indicates the "
                     "Azure Spot virtual machine will not be evicted for price reasons.",
                     "billingProfile.maxPrice", "MaxPriceValueInvalid")
        user_data = p.get("userData")
        if user_data is not None:
            try:
                base64.b64decode(user_data, validate=True)
            except (binascii.Error, ValueError, TypeError):
                _bad("User data must be in Base64 encoding.", "userData")
        return {"location": location, "zones": zones, "tags": tags, "size": size,
                "image": {k: v for k, v in image.items() if k != "exactVersion"},
                "exactVersion": exact, "disk_name": osdisk.get("name"),
                "disk_size": size_gb, "disk_delete": delete_option, "sat": sat,
                "caching": osdisk.get("caching") or "ReadWrite",
                "computerName": computer, "adminUsername": admin,
                "adminPassword": osp.get("adminPassword"), "customData": custom,
                "linux": {"disablePasswordAuthentication": bool(no_password),
                          "ssh": {"publicKeys": [{"path": k["path"], "keyData": k["keyData"]}
                                                 for k in keys]},
                          "provisionVMAgent": linux.get("provisionVMAgent", True)},
                "networkApiVersion": net["networkApiVersion"], "nic_confs": confs,
                "nics": nics, "priority": priority, "evictionPolicy": eviction,
                "maxPrice": max_price, "userData": user_data}

    def _resolve_image(self, image: dict, location: str) -> str | None:
        """The exact version a marketplace reference names, when images are seeded for
        `location`; a 404 `PlatformImageNotFound` when it names none of them."""
        seeded = [i for i in self.images.values() if i["key"][0] == location]
        if not seeded:
            return None if image.get("version") in (None, "latest") else image["version"]
        key = (location, image["publisher"].lower(), image["offer"].lower(),
               image["sku"].lower())
        versions = (self.images.get(key) or {}).get("versions") or []
        wanted = image.get("version") or "latest"
        exact = versions[-1] if wanted == "latest" and versions else \
            wanted if wanted in versions else None
        if exact is None:
            raise Refusal(404, "PlatformImageNotFound",
                           f"The platform image '{image['publisher']}:{image['offer']}:"
                           f"{image['sku']}:{wanted}' is not available. Verify that all fields "
                           "in the storage profile are correct. For more details about storage "
                           "profile information, please refer to https://aka.ms/"
                           "storageprofile")
        return exact

    def _create(self, request, issued, sub, rg, name, spec) -> Response:
        now = self.now()
        vm = {"subscription": sub["id"], "resource_group": rg, "name": name,
              "location": spec["location"], "zones": spec["zones"], "tags": spec["tags"],
              "vmId": str(uuid.uuid4()), "timeCreated": timestamp(now), "etag": 1,
              "provisioningState": "Creating", "power": "starting", "operation": None,
              "failure": None, "evictions": 0}
        vm.update({k: spec[k] for k in (
            "size", "image", "exactVersion", "computerName", "adminUsername", "adminPassword",
            "customData", "linux", "networkApiVersion", "priority", "evictionPolicy",
            "maxPrice", "userData")})
        vm["nic_confs"] = json.loads(json.dumps(spec["nic_confs"]))
        disk_name = spec["disk_name"] or f"{name}_OsDisk_1_{secrets.token_hex(16)}"
        disk = {"subscription": sub["id"], "resource_group": rg, "name": disk_name,
                "location": spec["location"], "zones": spec["zones"],
                "sizeGB": spec["disk_size"] or 64, "sat": spec["sat"],
                "uniqueId": str(uuid.uuid4()), "timeCreated": timestamp(now),
                "managedBy": self._vm_id(vm), "image_id": self._image_id(sub, vm),
                "hyperVGeneration": self._hyper_v(vm)}
        self.disks[(sub["id"].lower(), rg.lower(), disk_name.lower())] = disk
        vm["osDisk"] = {"name": disk_name, "caching": spec["caching"],
                        "deleteOption": spec["disk_delete"]}
        vm["nics"] = []
        for n in spec["nics"]:
            nic_id = (f"/subscriptions/{sub['id']}/resourceGroups/{rg}/providers/"
                      f"Microsoft.Network/networkInterfaces/{n['name']}")
            self.nics[nic_id.lower()] = {"id": nic_id, "managedBy": self._vm_id(vm),
                                         "primary": n["primary"],
                                         "deleteOption": n["deleteOption"]}
            vm["nics"].append(nic_id.lower())
        self.vms[(sub["id"].lower(), rg.lower(), name.lower())] = vm
        op = self._start_op(vm, "create", "write", issued, request)
        return Response(201, self._vm_json(vm), self._compute_async_headers(op, location=False))

    def _update(self, request, issued, vm: dict, spec: dict) -> Response:
        if vm["operation"]:
            return self._busy(vm, "write")
        changes = [("hardwareProfile.vmSize", vm["size"], spec["size"]),
                   ("zones", vm["zones"], spec["zones"]),
                   ("priority", vm["priority"], spec["priority"]),
                   ("evictionPolicy", vm["evictionPolicy"], spec["evictionPolicy"]),
                   ("imageReference", vm["image"], spec["image"]),
                   ("osProfile.computerName", vm["computerName"], spec["computerName"]),
                   ("osProfile.adminUsername", vm["adminUsername"], spec["adminUsername"]),
                   ("networkProfile.networkInterfaceConfigurations",
                    [c["name"] for c in vm["nic_confs"]], [c["name"] for c in spec["nic_confs"]])]
        if spec["customData"] is not None:
            changes.append(("osProfile.customData", vm["customData"], spec["customData"]))
        if spec["disk_size"] is not None:
            changes.append(("osDisk.diskSizeGB", self._os_disk(vm)["sizeGB"], spec["disk_size"]))
        for prop, old, new in changes:
            if old != new:
                raise Refusal(409, "PropertyChangeNotAllowed",
                               f"Changing property '{prop}' is not allowed.", prop)
        if spec["maxPrice"] != vm["maxPrice"] and vm["power"] != "deallocated":
            raise Refusal(409, "MaxPriceChangeNotAllowedForAllocatedVMs",
                           f"Max price change is not allowed when the VM '{vm['name']}' is "
                           "currently allocated. Please deallocate and try again.")
        vm.update(tags=spec["tags"], maxPrice=spec["maxPrice"], etag=vm["etag"] + 1)
        if spec["userData"] is not None:
            vm["userData"] = spec["userData"]
        retry = vm["provisioningState"] == "Failed" and vm["power"] == "deallocated"
        vm["provisioningState"] = "Updating"
        if retry:  # a PUT again after a failed create tries the allocation again
            vm["power"] = "starting"
        op = self._start_op(vm, "retry" if retry else "update", "write", issued, request)
        return Response(200, self._vm_json(vm), self._compute_async_headers(op, location=False))

    def _patch(self, request, issued, vm: dict) -> Response:
        body = self._json_body(request)
        extra = sorted(set(body) - {"tags"})
        if extra:
            _bad(f"The fake emulates only 'tags' in a PATCH of a virtual machine, not "
                 f"{extra}.", extra[0], "BadRequest")
        tags = string_map(body)
        if vm["operation"]:
            return self._busy(vm, "write")
        if tags is not None:
            vm["tags"] = tags
        vm["etag"] += 1
        vm["provisioningState"] = "Updating"
        op = self._start_op(vm, "update", "write", issued, request)
        return Response(200, self._vm_json(vm), self._compute_async_headers(op, location=False))

    # --- power actions and delete -------------------------------------------------------

    def _busy(self, vm: dict, action: str) -> Response:
        op = self.operations[vm["operation"]]
        if op["kind"] == "delete":
            message = (f"Operation '{action}' is not allowed on VM '{vm['name']}' since the VM "
                       "is marked for deletion. You can only retry the Delete operation (or "
                       "wait for an ongoing one to complete).")
        else:
            message = (f"Operation '{action}' is not allowed on VM '{vm['name']}' while "
                       f"operation '{op['action']}' is in progress.")
        return arm_error(409, "OperationNotAllowed", message)

    def _action(self, request: Request, issued, vm: dict, action: str) -> Response:
        request.log["json"] = None
        if vm["operation"]:
            return self._busy(vm, action)
        if action == "simulateEviction":
            if vm["priority"] != "Spot":
                return arm_error(409, "OperationNotAllowed",
                                 f"Simulate eviction is allowed only on Azure Spot Virtual "
                                 f"Machines; '{vm['name']}' has priority "
                                 f"'{vm['priority']}'.")
            if vm["power"] != "running":
                return arm_error(409, "OperationNotAllowed",
                                 f"Simulate eviction is allowed only on a running VM; "
                                 f"'{vm['name']}' is {vm['power']}.")
            corr = str(uuid.uuid4())
            self._log(vm, "simulateEviction", "Started", issued, request, corr)
            self._log(vm, "simulateEviction", "Succeeded", issued, request, corr,
                      sub_status=("NoContent", "No Content (HTTP Status Code: 204)"))
            self._evict(vm, caller="simulate")
            return Response(204, None, {"x-ms-request-id": request_id()})
        target = {"start": ("starting", "running"), "deallocate": ("deallocating",
                                                                   "deallocated"),
                  "powerOff": ("stopping", "stopped")}[action]
        allocate = action == "start" and vm["power"] == "deallocated"
        if vm["power"] != target[1]:
            vm["power"] = target[0]
            vm["provisioningState"] = "Updating"
        op = self._start_op(vm, action, action, issued, request, allocate)
        return Response(202, None, self._compute_async_headers(op))

    def _evict(self, vm: dict, caller) -> None:
        """The eviction itself: deallocated, or deleted under the Delete policy."""
        vm["evictions"] += 1
        if caller is None or self.simulate_logs_eviction:
            self._log(vm, "evictSpotVM", "Succeeded", None, None, str(uuid.uuid4()))
        if vm["evictionPolicy"] == "Delete":
            self._remove(vm)
        else:
            vm["power"], vm["provisioningState"], vm["failure"] = "deallocated", "Succeeded", None

    def _delete(self, request, issued, vm: dict) -> Response:
        request.log["json"] = None
        if vm["operation"]:
            op = self.operations[vm["operation"]]
            if op["kind"] == "delete":
                return Response(202, None, self._compute_async_headers(op))
            return self._busy(vm, "delete")
        vm["provisioningState"] = "Deleting"
        op = self._start_op(vm, "delete", "delete", issued, request)
        return Response(202, None, self._compute_async_headers(op))

    def _remove(self, vm: dict) -> None:
        """Deletes the VM; its OS disk and NICs go too when their deleteOption is Delete,
        else they stay, detached."""
        del self.vms[self._vm_key_of(vm)]
        disk_key = (vm["subscription"].lower(), vm["resource_group"].lower(),
                    vm["osDisk"]["name"].lower())
        if vm["osDisk"]["deleteOption"] == "Delete":
            self.disks.pop(disk_key, None)
        elif disk_key in self.disks:
            self.disks[disk_key]["managedBy"] = None
        for nic_key in vm["nics"]:
            nic = self.nics.get(nic_key)
            if nic and nic["deleteOption"] == "Delete":
                del self.nics[nic_key]
            elif nic:
                nic["managedBy"] = None

    # --- long-running operations --------------------------------------------------------

    def _start_op(self, vm: dict, kind: str, action: str, issued, request,
                  allocate: bool = False) -> dict:
        """An operation on `vm`, written to the activity log (Started, then Accepted); a
        create, a retried create or a start of a deallocated VM needs an allocation, which
        the capacity switch may refuse (the operation then ends Failed)."""
        corr = str(uuid.uuid4())
        fail = self._take_capacity(vm) if kind in ("create", "retry") or allocate else None
        op = self._new_operation({
            "p": secrets.token_hex(8), "kind": kind, "action": action,
            "vm": self._vm_key_of(vm), "vmId": vm["vmId"], "subscription": vm["subscription"],
            "location": vm["location"], "startTime": timestamp(self.now()), "fail": fail,
            "correlationId": corr, "caller": issued.subject if issued else None})
        vm["operation"] = op["id"]
        self._log(vm, action, "Started", issued, request, corr)
        status = 201 if kind == "create" else 200 if kind in ("update", "retry") else 202
        self._log(vm, action, "Accepted", issued, request, corr,
                  sub_status=self._sub_status(status))
        return op

    def _take_capacity(self, vm: dict):
        """One allocation: None, or the error when the capacity switch says no."""
        for zone in ((vm["zones"] or [None])[0], None):
            key = (vm["location"], vm["size"].lower(), zone)
            entry = self.capacity.get(key)
            if entry:
                entry["short"] -= 1
                if entry["short"] <= 0:
                    del self.capacity[key]
                return self._capacity_error(vm, entry["code"])
        return None

    def _capacity_error(self, vm: dict, code: str) -> dict:
        if code == "SkuNotAvailable":
            message = (f"The requested tier for resource '{self._vm_id(vm)}' is currently not "
                       f"available in location '{vm['location']}' for subscription "
                       f"'{vm['subscription']}'. Please try another tier or deploy to a "
                       "different location.")
        elif code == "OverconstrainedAllocationRequest":
            message = ("Allocation failed. VM(s) with the following constraints cannot be "
                       "allocated, because the condition is too restrictive. Please remove some "
                       "constraints and try again. Constraints applied are: VM Size, Priority "
                       f"({vm['priority']}). {ALLOCATION_GUIDANCE}")
        else:
            where = "zone" if code == "ZonalAllocationFailed" else "region"
            message = ("Allocation failed. We do not have sufficient capacity for the requested "
                       f"VM size in this {where}. {ALLOCATION_GUIDANCE}")
        return {"code": code, "message": message}

    def _finish(self, op: dict) -> None:
        self._end_operation(op, timestamp(self.now()), op["fail"] and dict(op["fail"]))
        vm = self.vms.get(op["vm"])
        if vm is not None and vm["vmId"] != op["vmId"]:
            vm = None
        if vm is None:
            return
        vm["operation"] = None
        kind = op["kind"]
        if op["fail"]:
            vm["provisioningState"], vm["power"], vm["failure"] = "Failed", "deallocated", \
                dict(op["fail"])
        elif kind == "delete":
            self._remove(vm)
        elif kind in ("create", "retry", "start"):
            vm["provisioningState"], vm["power"], vm["failure"] = "Succeeded", "running", None
        elif kind == "deallocate":
            vm["provisioningState"], vm["power"], vm["failure"] = "Succeeded", "deallocated", None
        elif kind == "powerOff":
            vm["provisioningState"], vm["power"] = "Succeeded", "stopped"
        else:  # update
            vm["provisioningState"] = "Failed" if vm["failure"] else "Succeeded"
        self._log(vm, op["action"], op["status"], None, None, op["correlationId"],
                  caller=op["caller"], error=op.get("error"),
                  sub_status=("OK", "OK (HTTP Status Code: 200)") if not op["fail"] else (
                      "Conflict", "Conflict (HTTP Status Code: 409)"))

    def _operation(self, request: Request, m) -> Response:
        return self._compute_operation(request, m, self._result)

    def _result(self, op: dict) -> Response:
        """What an ended operation's `Location` answers: the VM of a write, else empty."""
        vm = self.vms.get(op["vm"])
        if op["kind"] in ("create", "retry", "update") and vm is not None:
            return Response(200, self._vm_json(vm))
        return Response(200 if op["kind"] != "delete" else 204, None)

    # --- answers ------------------------------------------------------------------------

    @staticmethod
    def _vm_id(vm: dict) -> str:
        return (f"/subscriptions/{vm['subscription']}/resourceGroups/{vm['resource_group']}"
                f"/providers/Microsoft.Compute/virtualMachines/{vm['name']}")

    @staticmethod
    def _etag(vm: dict) -> str:
        return f'"{vm["etag"]}"'

    def _os_disk(self, vm: dict) -> dict:
        return self.disks[(vm["subscription"].lower(), vm["resource_group"].lower(),
                           vm["osDisk"]["name"].lower())]

    def _image_id(self, sub: dict, vm: dict) -> str:
        image = vm["image"]
        if image.get("id"):
            return image["id"]
        return (f"/Subscriptions/{sub['id']}/Providers/Microsoft.Compute/Locations/"
                f"{vm['location']}/Publishers/{image['publisher']}/ArtifactTypes/VMImage/Offers/"
                f"{image['offer']}/Skus/{image['sku']}/Versions/"
                f"{vm['exactVersion'] or image.get('version') or 'latest'}")

    def _hyper_v(self, vm: dict) -> str:
        image = vm["image"]
        if image.get("id"):
            return "V2"
        found = self.images.get((vm["location"], image["publisher"].lower(),
                                 image["offer"].lower(), image["sku"].lower()))
        return found["hyperVGeneration"] if found else "V2"

    def _disk_id(self, disk: dict, upper_rg: bool = False) -> str:
        rg = disk["resource_group"].upper() if upper_rg else disk["resource_group"]
        return (f"/subscriptions/{disk['subscription']}/resourceGroups/{rg}/providers/"
                f"Microsoft.Compute/disks/{disk['name']}")

    def _vm_json(self, vm: dict, instance_view: bool = False, user_data: bool = False) -> dict:
        disk = self._os_disk(vm)
        image = dict(vm["image"])
        if vm["exactVersion"]:
            image["exactVersion"] = vm["exactVersion"]
        props = {
            "vmId": vm["vmId"],
            "hardwareProfile": {"vmSize": vm["size"]},
            "storageProfile": {
                "imageReference": image,
                "osDisk": {"osType": "Linux", "name": disk["name"], "createOption": "FromImage",
                           "caching": vm["osDisk"]["caching"],
                           "managedDisk": {"storageAccountType": disk["sat"],
                                           "id": self._disk_id(disk, self.uppercase_disk_rg)},
                           "deleteOption": vm["osDisk"]["deleteOption"],
                           "diskSizeGB": disk["sizeGB"]},
                "dataDisks": []},
            "osProfile": {"computerName": vm["computerName"],
                          "adminUsername": vm["adminUsername"],
                          "linuxConfiguration": {
                              **json.loads(json.dumps(vm["linux"])),
                              "patchSettings": {"patchMode": "ImageDefault",
                                                "assessmentMode": "ImageDefault"}},
                          "secrets": [], "allowExtensionOperations": True,
                          "requireGuestProvisionSignal": True},
            "networkProfile": {
                "networkApiVersion": vm["networkApiVersion"],
                "networkInterfaceConfigurations": json.loads(json.dumps(vm["nic_confs"])),
                "networkInterfaces": [
                    {"id": self.nics[k]["id"],
                     "properties": {"primary": self.nics[k]["primary"],
                                    "deleteOption": self.nics[k]["deleteOption"]}}
                    for k in vm["nics"] if k in self.nics]},
            "priority": vm["priority"],
        }
        if vm["priority"] == "Spot":
            props["evictionPolicy"] = vm["evictionPolicy"]
            props["billingProfile"] = {"maxPrice": vm["maxPrice"]}
        props["provisioningState"] = vm["provisioningState"]
        if instance_view:
            props["instanceView"] = self._instance_view(vm)
        if user_data and vm["userData"] is not None:
            props["userData"] = vm["userData"]
        props["timeCreated"] = vm["timeCreated"]
        out = {"name": vm["name"], "id": self._vm_id(vm),
               "type": "Microsoft.Compute/virtualMachines", "location": vm["location"]}
        if vm["tags"] is not None:
            out["tags"] = vm["tags"]
        if vm["zones"]:
            out["zones"] = vm["zones"]
        out["etag"] = self._etag(vm)
        out["properties"] = props
        return out

    def _instance_view(self, vm: dict) -> dict:
        state = vm["provisioningState"]
        if state == "Failed" and vm["failure"]:
            prov = {"code": f"ProvisioningState/failed/{vm['failure']['code']}",
                    "level": "Error", "displayStatus": "Provisioning failed",
                    "message": vm["failure"]["message"], "time": timestamp(self.now())}
        else:
            prov = {"code": f"ProvisioningState/{state.lower()}",
                    "level": "Error" if state == "Failed" else "Info",
                    "displayStatus": "Provisioning succeeded" if state == "Succeeded" else state,
                    "time": timestamp(self.now())}
        disk = self._os_disk(vm)
        return {"computerName": vm["computerName"], "hyperVGeneration": disk["hyperVGeneration"],
                "disks": [{"name": disk["name"], "statuses": [
                    {"code": "ProvisioningState/succeeded", "level": "Info",
                     "displayStatus": "Provisioning succeeded", "time": disk["timeCreated"]}]}],
                "statuses": [prov, {"code": f"PowerState/{vm['power']}", "level": "Info",
                                    "displayStatus": POWER_WORDS[vm["power"]]}]}

    def _disk_json(self, disk: dict) -> dict:
        vm = None
        if disk["managedBy"]:
            m = re.fullmatch(_VM, disk["managedBy"], re.I)
            vm = self.vms.get(self._vm_key(m)) if m else None
        if vm is None:
            state = "Unattached"
        elif vm["power"] in ("deallocated",):
            state = "Reserved"
        else:
            state = "Attached"
        tier = next((t for t, gb in (("P4", 32), ("P6", 64), ("P10", 128), ("P15", 256),
                                     ("P20", 512), ("P30", 1024), ("P40", 2048), ("P50", 4096))
                     if disk["sizeGB"] <= gb), "P50")
        out = {"name": disk["name"], "id": self._disk_id(disk),
               "type": "Microsoft.Compute/disks", "location": disk["location"]}
        if disk["managedBy"]:
            out["managedBy"] = disk["managedBy"]
        out["sku"] = {"name": disk["sat"], "tier": "Premium" if disk["sat"].startswith(
            "Premium") else "Standard"}
        if disk["zones"]:
            out["zones"] = disk["zones"]
        out["properties"] = {
            "osType": "Linux", "hyperVGeneration": disk["hyperVGeneration"],
            "creationData": {"createOption": "FromImage",
                             "imageReference": {"id": disk["image_id"]}},
            "diskSizeGB": disk["sizeGB"], "diskSizeBytes": disk["sizeGB"] * 1024 ** 3,
            "uniqueId": disk["uniqueId"],
            "encryption": {"type": "EncryptionAtRestWithPlatformKey"},
            "networkAccessPolicy": "AllowAll", "publicNetworkAccess": "Enabled",
            "timeCreated": disk["timeCreated"], "provisioningState": "Succeeded",
            "diskState": state}
        if disk["sat"].startswith("Premium_"):
            out["properties"]["tier"] = tier
        return out

    def _list(self, request: Request, sub: dict, rg: str | None) -> Response:
        """The VMs of resource group `rg`, or of the whole subscription (`None`:
        `VirtualMachines_ListAll`), as the VM GET answers them without instance view."""
        if request.query.get("$filter") or request.query.get("$expand") or \
                request.query.get("statusOnly"):
            _bad("The fake does not emulate $filter, $expand or statusOnly on a VM list.",
                 "$filter", "BadRequest")
        vms = sorted((v for v in self.vms.values()
                      if v["subscription"].lower() == sub["id"].lower()
                      and (rg is None or v["resource_group"].lower() == rg.lower())),
                     key=lambda v: (v["resource_group"].lower(), v["name"].lower()))
        start = self._skip(request)
        page = vms[start:start + self.list_page_size]
        body = {"value": [self._vm_json(v) for v in page]}
        if start + self.list_page_size < len(vms):
            body["nextLink"] = self._next_link(request, start + self.list_page_size)
        return Response(200, body, {"x-ms-request-id": request_id()})

    @staticmethod
    def _skip(request: Request) -> int:
        token = (request.query.get("$skiptoken") or request.query.get("$skipToken") or ["0"])[0]
        if not token.isdigit():
            _bad(f"The skip token '{token}' is invalid.", "$skiptoken", "BadRequest")
        return int(token)

    def _next_link(self, request: Request, start: int) -> str:
        params = [f"{k}={quote(v, safe='')}" for k, vs in request.query.items()
                  for v in vs if k.lower() != "$skiptoken"]
        return f"{self.url}{quote(request.path)}?{'&'.join(params + [f'$skiptoken={start}'])}"

    # --- marketplace images -------------------------------------------------------------

    def _images(self, request: Request, kind: str, m, sub: dict) -> Response:
        location = normal_location(m["loc"])
        image = self.images.get((location, m["pub"].lower(), m["offer"].lower(),
                                 m["sku"].lower()))
        versions = list(image["versions"]) if image else []

        def item(name):
            return {"location": location, "name": name,
                    "id": (f"/Subscriptions/{sub['id']}/Providers/Microsoft.Compute/Locations/"
                           f"{location}/Publishers/{image['names'][0]}/ArtifactTypes/VMImage/"
                           f"Offers/{image['names'][1]}/Skus/{image['names'][2]}/Versions/"
                           f"{name}")}

        if kind == "image":
            if m["version"] not in versions:
                return arm_error(404, "NotFound", "Artifact: VMImage was not found.")
            return Response(200, {**item(m["version"]), "properties": {
                "hyperVGeneration": image["hyperVGeneration"],
                "architecture": image["architecture"],
                "osDiskImage": {"operatingSystem": "Linux"}, "dataDiskImages": []}})
        order = ",".join(request.query.get("$orderby", [])).strip().lower()
        if order not in ("", "name", "name asc", "name desc"):
            _bad(f"The fake orders image versions by name only, not '{order}'.", "$orderby",
                 "BadRequest")
        if order == "name desc":
            versions.reverse()
        top = (request.query.get("$top") or [None])[0]
        if top is not None:
            if not top.isdigit():
                _bad(f"The value '{top}' of $top is invalid.", "$top", "BadRequest")
            versions = versions[:int(top)]
        return Response(200, [item(v) for v in versions], {"x-ms-request-id": request_id()})

    # --- activity log -------------------------------------------------------------------

    def _log(self, vm: dict, action: str, status: str, issued, request, corr: str,
             caller=None, error=None, sub_status=None) -> None:
        now = self.now()
        value, localized = OPS[action]
        vm_id = self._vm_id(vm)
        event_id = str(uuid.uuid4())
        ticks = int((now - _dt.datetime(1, 1, 1, tzinfo=UTC)).total_seconds() * 10 ** 7)
        who = issued.subject if issued else caller
        event = {
            "channels": "Operation", "correlationId": corr, "description": "",
            "eventDataId": event_id,
            "eventName": {"value": "BeginRequest" if status == "Started" else "EndRequest",
                          "localizedValue": "Begin request" if status == "Started"
                          else "End request"},
            "category": {"value": "Administrative", "localizedValue": "Administrative"},
            "eventTimestamp": timestamp(now),
            "id": f"{vm_id}/events/{event_id}/ticks/{ticks}",
            "level": "Error" if status == "Failed" else "Informational",
            "operationId": corr,
            "operationName": {"value": value, "localizedValue": localized},
            "resourceGroupName": vm["resource_group"],
            "resourceProviderName": {"value": "Microsoft.Compute",
                                     "localizedValue": "Microsoft.Compute"},
            "resourceType": {"value": "Microsoft.Compute/virtualMachines",
                             "localizedValue": "Microsoft.Compute/virtualMachines"},
            "resourceId": vm_id,
            "status": {"value": status, "localizedValue": status},
            "subStatus": {"value": sub_status[0], "localizedValue": sub_status[1]}
            if sub_status else {"value": "", "localizedValue": ""},
            "submissionTimestamp": timestamp(now),
            "subscriptionId": vm["subscription"],
            "properties": {"eventCategory": "Administrative", "entity": vm_id,
                           "message": value, "hierarchy": ""},
        }
        if who:
            event["caller"] = who
            event["authorization"] = {"action": value, "scope": vm_id}
            event["claims"] = {"appid": who}
            if issued and issued.tenant:
                event["tenantId"] = issued.tenant
        if request is not None:
            event["httpRequest"] = {
                "clientRequestId": request.headers.get("x-ms-client-request-id") or "",
                "clientIpAddress": "127.0.0.1", "method": request.method}
        if error:
            event["properties"]["statusCode"] = "Conflict"
            event["properties"]["statusMessage"] = json.dumps({"status": "Failed",
                                                               "error": error})
        self.events.append(event)

    @staticmethod
    def _sub_status(status: int):
        return {200: ("OK", "OK (HTTP Status Code: 200)"),
                201: ("Created", "Created (HTTP Status Code: 201)"),
                202: ("Accepted", "Accepted (HTTP Status Code: 202)")}[status]

    def _activity(self, request: Request, sub: dict) -> Response:
        def refuse(message):
            return Response(400, {"code": "BadRequest", "message": message},
                            {"x-ms-request-id": request_id()})

        text = (request.query.get("$filter") or [""])[0]
        m = FILTER_RE.fullmatch(text) if text else None
        if m is None:
            return refuse(f"The $filter '{text}' is not supported. It needs eventTimestamp ge "
                          "'<start>' [and eventTimestamp le '<end>'] and at most one of "
                          "resourceGroupName, resourceUri, resourceProvider or correlationId "
                          "eq '<value>', joined by 'and'; no other syntax is allowed.")
        try:
            ge = _parse_time(m["ge"])
            le = _parse_time(m["le"]) if m["le"] else self.now()
        except ValueError:
            return refuse(f"The timestamps of the $filter '{text}' are not ISO 8601.")
        if le < ge:
            return refuse("The end time of the $filter is earlier than its start time.")
        field, value = (m["field"] or "").lower(), (m["value"] or "").lower()
        select = [s.strip() for s in ",".join(request.query.get("$select", [])).split(",")
                  if s.strip()]
        unknown = [s for s in select if s not in SELECT_FIELDS]
        if unknown:
            return refuse(f"The $select fields {unknown} are not known.")

        def wanted(e):
            when = _parse_time(e["eventTimestamp"])
            if e["subscriptionId"].lower() != sub["id"].lower() or not ge <= when <= le:
                return False
            return {"": True, "resourcegroupname": e["resourceGroupName"].lower() == value,
                    "resourceuri": e["resourceId"].lower() == value,
                    "resourceid": e["resourceId"].lower() == value,
                    "resourceprovider": value == "microsoft.compute",
                    "correlationid": e["correlationId"].lower() == value}[field]

        events = [e for e in reversed(self.events) if wanted(e)]
        start = self._skip(request)
        page = events[start:start + self.activity_page_size]
        if select:
            page = [{k: v for k, v in e.items() if k in select} for e in page]
        body = {"value": page}
        if start + self.activity_page_size < len(events):
            body["nextLink"] = self._next_link(request, start + self.activity_page_size)
        return Response(200, body, {"x-ms-request-id": request_id()})
