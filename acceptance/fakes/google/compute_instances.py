"""A fake of Compute Engine API v1 instances, disks and images, for `gpu_instance`: a Spot
VM whose preemption STOPS it (termination action `STOP`, disks kept), a person's stop, and
the start that brings it back. `ComputeInstances` extends `Compute` (compute.py) and shares
its zonal operations, errors, tokens, catalog, capacity switch and clock.

    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account("my-project")
    gce = ComputeInstances(tokens).start()            # the provider's gcp compute endpoint
    gce.seed_images("deeplearning-platform-release", [
        {"name": "common-cu129-ubuntu-2204-nvidia-580-v20250101",
         "family": "common-cu129-ubuntu-2204-nvidia-580"}])      # or POST /_fake/images
    ... POST gce.url + "/compute/v1/projects/my-project/zones/us-central1-a/instances"
    gce.reclaim("my-project", "us-central1-a", "vm1")  # or POST /_fake/reclaim
    gce.short_capacity("us-central1-a", "a2-highgpu-1g", 2)   # POST /_fake/capacity {short}
    gce.state()["instances"]                           # or GET /_fake/state

Served, besides everything `Compute` serves (paths from the v1 REST reference):

- `instances.insert/get/list/delete`: `/compute/v1/projects/{p}/zones/{z}/instances[/{i}]`
- `instances.aggregatedList`: `/compute/v1/projects/{p}/aggregated/instances` (filter, paging)
- `instances.start/stop/setLabels`: `.../instances/{i}/start|stop|setLabels` (POST)
- `disks.get`: `.../zones/{z}/disks/{d}`
- `zoneOperations.list`: `.../zones/{z}/operations` (filter, orderBy, paging)
- `images.get`, `images.getFromFamily`: `/compute/v1/projects/{p}/global/images/{i}`,
  `.../global/images/family/{f}`

Every write answers a `compute#operation` that stays RUNNING for `polls` GETs (the same
`polls` setting as `Compute`) and then ends DONE; the instance changes when it ends (insert:
PROVISIONING then RUNNING; start: PROVISIONING then RUNNING, or back to TERMINATED with a
stockout; stop: STOPPING then TERMINATED; delete: STOPPING then gone, with its autoDelete
disks). A preemption (`/_fake/reclaim`) records a DONE `compute.instances.preempted`
operation; with termination action STOP the VM reads STOPPING for `reclaim_reads` GETs and
then TERMINATED, disks kept; with DELETE it is gone with its autoDelete disks. Compute never
starts a stopped VM by itself. Unknown JSON fields are refused. See ../README.md for the
reference of every behaviour and for what is a guess.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import re
import secrets

from .. import Request, Response
from .compute import (FIELDS, ENUMS, NAME_PATTERN, Compute, ComputeError, _bool, _enum, _int,
                      _invalid, _list, _message, _not_found, _parse_error, _required,
                      _string, timestamp)
from .common import operation_name

# Request messages read by instances.insert and setLabels, field names (json_name) from the
# v1 reference (Instance, AttachedDisk, AttachedDiskInitializeParams, NetworkInterface,
# AccessConfig, Metadata, Items, ServiceAccount, Scheduling, InstancesSetLabelsRequest).
# Added to compute.py's FIELDS/ENUMS, which `_message`/`_enum` read.
FIELDS.update({
    "Instance": {
        "advancedMachineFeatures", "canIpForward", "confidentialInstanceConfig",
        "cpuPlatform", "creationTimestamp", "deletionProtection", "description", "disks",
        "displayDevice", "fingerprint", "guestAccelerators", "hostname", "id",
        "instanceEncryptionKey", "keyRevocationActionType", "kind", "labelFingerprint",
        "labels", "lastStartTimestamp", "lastStopTimestamp", "lastSuspendedTimestamp",
        "machineType", "metadata", "minCpuPlatform", "name", "networkInterfaces",
        "networkPerformanceConfig", "params", "privateIpv6GoogleAccess",
        "reservationAffinity", "resourcePolicies", "resourceStatus", "satisfiesPzi",
        "satisfiesPzs", "scheduling", "selfLink", "serviceAccounts", "shieldedInstanceConfig",
        "shieldedInstanceIntegrityPolicy", "sourceMachineImage",
        "sourceMachineImageEncryptionKey", "startRestricted", "status", "statusMessage",
        "tags", "zone"},
    "AttachedDisk": {
        "architecture", "autoDelete", "boot", "deviceName", "diskEncryptionKey",
        "diskSizeGb", "forceAttach", "guestOsFeatures", "index", "initializeParams",
        "interface", "kind", "licenses", "mode", "savedState", "shieldedInstanceInitialState",
        "source", "type"},
    "AttachedDiskInitializeParams": {
        "architecture", "description", "diskName", "diskSizeGb", "diskType",
        "enableConfidentialCompute", "labels", "licenses", "onUpdateAction",
        "provisionedIops", "provisionedThroughput", "replicaZones", "resourceManagerTags",
        "resourcePolicies", "sourceImage", "sourceImageEncryptionKey", "sourceSnapshot",
        "sourceSnapshotEncryptionKey", "storagePool"},
    "NetworkInterface": {
        "accessConfigs", "aliasIpRanges", "fingerprint", "internalIpv6PrefixLength",
        "ipv6AccessConfigs", "ipv6AccessType", "ipv6Address", "kind", "name", "network",
        "networkAttachment", "networkIP", "nicType", "queueCount", "stackType", "subnetwork"},
    "AccessConfig": {
        "externalIpv6", "externalIpv6PrefixLength", "kind", "name", "natIP", "networkTier",
        "publicPtrDomainName", "securityPolicy", "setPublicPtr", "type"},
    "Metadata": {"fingerprint", "items", "kind"},
    "Items": {"key", "value"},
    "ServiceAccount": {"email", "scopes"},
    "Scheduling": {
        "automaticRestart", "availabilityDomain", "hostErrorTimeoutSeconds",
        "instanceTerminationAction", "localSsdRecoveryTimeout", "locationHint",
        "maxRunDuration", "minNodeCpus", "nodeAffinities", "onHostMaintenance",
        "onInstanceStopAction", "preemptible", "provisioningModel", "skipGuestOsShutdown",
        "terminationTime"},
    "InstancesSetLabelsRequest": {"labelFingerprint", "labels"},
})
ENUMS.update({
    "Scheduling.ProvisioningModel": ("FLEX_START", "RESERVATION_BOUND", "SPOT", "STANDARD"),
    "Scheduling.InstanceTerminationAction": ("DELETE", "INSTANCE_TERMINATION_ACTION_UNSPECIFIED",
                                             "STOP"),
    "Scheduling.OnHostMaintenance": ("MIGRATE", "TERMINATE"),
    "AttachedDisk.Type": ("PERSISTENT", "SCRATCH"),
    "AttachedDisk.Mode": ("READ_ONLY", "READ_WRITE"),
    "AttachedDisk.Interface": ("NVME", "SCSI"),
})
# Fields of a request the fake refuses to pretend it honours.
NOT_EMULATED = ("sourceMachineImage", "params", "resourcePolicies", "reservationAffinity",
                "instanceEncryptionKey", "confidentialInstanceConfig")
EMPTY_LABEL_FINGERPRINT = "42WmSpB8rSM="  # Compute's fingerprint of no labels
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
METADATA_KEY = re.compile(r"[a-zA-Z0-9_-]{1,128}")
PROJECT_NUMBER = "123456789012"
PLAIN_STOCKOUT = "ZONE_RESOURCE_POOL_EXHAUSTED"
DETAILED_STOCKOUT = "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"


def fingerprint(value) -> str:
    """A Compute-style fingerprint: 8 bytes, base64 (the empty label set has Compute's own)."""
    if value in ({}, None):
        return EMPTY_LABEL_FINGERPRINT
    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).digest()
    return base64.b64encode(digest[:8]).decode()


class ComputeInstances(Compute):
    """`Compute` plus instances, disks, images and zoneOperations.list. Extra settings
    (`POST /_fake/faults` or `configure`): `reclaim_reads` (instance GETs answering STOPPING
    after a STOP preemption before TERMINATED, default 1), `stockout_code` (the operation
    error of a capacity shortage: `ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS`, the default,
    or `ZONE_RESOURCE_POOL_EXHAUSTED`)."""

    name = "compute-instances"

    def reset_state(self) -> None:
        super().reset_state()
        self.instances: dict[tuple[str, str, str], dict] = {}
        self.disks: dict[tuple[str, str, str], dict] = {}
        self.images: dict[tuple[str, str], dict] = {}
        self.capacity_short: dict[tuple[str, str], int] = {}
        self.reclaim_reads, self.stockout_code = 1, DETAILED_STOCKOUT

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        if "reclaim_reads" in s:
            self.reclaim_reads = max(0, int(s.pop("reclaim_reads")))
        if "stockout_code" in s:
            code = s.pop("stockout_code")
            if code not in (PLAIN_STOCKOUT, DETAILED_STOCKOUT):
                raise ValueError(f"stockout_code must be {PLAIN_STOCKOUT} or {DETAILED_STOCKOUT}")
            self.stockout_code = code
        super().configure(s)

    # --- test control ---------------------------------------------------------------------

    def seed_images(self, project: str, images: list[dict]) -> list[dict]:
        """Public images of `project`: each {name, family?, creationTimestamp? (RFC 3339,
        default now), diskSizeGb? (default 10), deprecated? ({state: DEPRECATED|OBSOLETE|
        DELETED, replacement?}) or state?}. Returns them as images.get answers."""
        out = []
        with self.lock:
            for spec in images:
                name = spec["name"]
                if not re.fullmatch(NAME_PATTERN, name):
                    raise ValueError(f"image name {name!r} is not a Compute name")
                created = spec.get("creationTimestamp")
                when = (_dt.datetime.fromisoformat(created.replace("Z", "+00:00"))
                        if created else self.now())
                if when.tzinfo is None:
                    when = when.replace(tzinfo=_dt.timezone.utc)
                public = {"kind": "compute#image", "id": self._new_id(),
                          "creationTimestamp": timestamp(when), "name": name,
                          "sourceType": "RAW", "status": "READY",
                          "archiveSizeBytes": str(int(spec.get("archiveSizeBytes",
                                                               3 * 2 ** 30))),
                          "diskSizeGb": str(int(spec.get("diskSizeGb", 10))),
                          "selfLink": f"{self._base(project)}/global/images/{name}",
                          "guestOsFeatures": [{"type": "UEFI_COMPATIBLE"},
                                              {"type": "VIRTIO_SCSI_MULTIQUEUE"},
                                              {"type": "GVNIC"}],
                          "architecture": "X86_64", "labelFingerprint": fingerprint({})}
                if spec.get("family"):
                    public["family"] = spec["family"]
                deprecated = spec.get("deprecated") or (
                    {"state": spec["state"]} if spec.get("state") else None)
                if deprecated:
                    public["deprecated"] = dict(deprecated)
                self.images[(project, name)] = {"project": project, "when": when,
                                                "public": public}
                out.append(dict(public))
        return out

    def short_capacity(self, zone: str, machine_type: str, short: int) -> dict:
        """The next `short` inserts/starts of `machine_type` in `zone` (every project) end in
        a stockout; 0 clears it. `set_capacity(..., False)` still means "until told"."""
        with self.lock:
            key = (zone, machine_type)
            if int(short) > 0:
                self.capacity_short[key] = int(short)
            else:
                self.capacity_short.pop(key, None)
            return {"capacity_short": self._shorts_json()}

    def reclaim(self, project: str, zone: str, instance: str) -> dict:
        """Compute preempts the Spot (or preemptible) VM: a DONE compute.instances.preempted
        operation; with instanceTerminationAction STOP the VM stops, disks kept; with DELETE it
        is deleted with its autoDelete disks. Returns the operation."""
        with self.lock:
            vm = self._instance(project, zone, instance)
            pub = vm["public"]
            sched = pub["scheduling"]
            if sched.get("provisioningModel") != "SPOT" and not sched.get("preemptible"):
                raise ValueError(f"{instance} is not a Spot or preemptible VM")
            if pub["status"] != "RUNNING":
                raise ValueError(f"{instance} is {pub['status']}, not RUNNING")
            op = self._system_event(project, zone, pub, "compute.instances.preempted",
                                    "Instance was preempted.")
            vm["stop_at"] = timestamp(self.now())
            if sched.get("instanceTerminationAction") == "DELETE":
                self._drop_instance(vm)
            else:
                pub["status"] = "STOPPING"
                vm["stopping_reads"] = self.reclaim_reads
                if vm["stopping_reads"] == 0:
                    self._stopped(vm)
            return dict(op)

    def complete(self) -> int:
        with self.lock:
            for vm in self.instances.values():
                if vm.get("stopping_reads") is not None:
                    self._stopped(vm)
            return super().complete()

    def snapshot(self) -> dict:
        out = super().snapshot()
        out["settings"].update(reclaim_reads=self.reclaim_reads,
                               stockout_code=self.stockout_code)
        out["capacity_short"] = self._shorts_json()
        out["instances"] = [{**self._instance_json(vm), "fake": {
            "project": vm["project"], "zone": vm["zone"],
            "stopping_reads": vm.get("stopping_reads")}} for vm in self.instances.values()]
        out["disks"] = [{**self._disk_json(d), "fake": {"project": d["project"],
                                                         "zone": d["zone"]}}
                        for d in self.disks.values()]
        out["images"] = [{**i["public"], "fake": {"project": i["project"]}}
                         for i in self.images.values()]
        return out

    def _shorts_json(self) -> list:
        return sorted([z, m, n] for (z, m), n in self.capacity_short.items())

    def control_routes(self) -> dict:
        """Adds `POST /_fake/reclaim`, `/_fake/images`, and `short` to `/_fake/capacity`."""
        routes = super().control_routes()
        capacity = routes["/_fake/capacity"]
        return {**routes,
                "/_fake/reclaim": lambda d: (200, self.reclaim(d["project"], d["zone"],
                                                               d["instance"])),
                "/_fake/images": lambda d: (201, {"images": self.seed_images(d["project"],
                                                                             d["images"])}),
                "/_fake/capacity": lambda d: (200, self.short_capacity(
                    d["zone"], d["machine_type"], int(d["short"]))) if "short" in d
                else capacity(d)}

    control_errors = (ComputeError, *Compute.control_errors)

    def control_failure(self, e: Exception) -> Response:
        if isinstance(e, ComputeError):
            return Response(404 if e.http == 404 else 400, {"error": e.message})
        return super().control_failure(e)

    # --- dispatch -------------------------------------------------------------------------

    _P = r"/compute/v1/projects/(?P<project>[^/]+)"
    _Z = _P + r"/zones/(?P<zone>[^/]+)"
    _I = _Z + r"/instances/(?P<name>[^/]+)"
    ROUTES = Compute.ROUTES + [
        ("POST", re.compile(_Z + r"/instances"), "insert_instance", True),
        ("GET", re.compile(_Z + r"/instances"), "list_instances", False),
        ("GET", re.compile(_P + r"/aggregated/instances"), "aggregated_instances", False),
        ("GET", re.compile(_I), "get_instance", False),
        ("DELETE", re.compile(_I), "delete_instance", True),
        ("POST", re.compile(_I + r"/start"), "start_instance", True),
        ("POST", re.compile(_I + r"/stop"), "stop_instance", True),
        ("POST", re.compile(_I + r"/setLabels"), "set_labels", True),
        ("GET", re.compile(_Z + r"/disks/(?P<name>[^/]+)"), "get_disk", False),
        ("GET", re.compile(_Z + r"/operations"), "list_operations", False),
        ("GET", re.compile(_P + r"/global/images/family/(?P<family>[^/]+)"),
         "image_from_family", False),
        ("GET", re.compile(_P + r"/global/images/(?P<name>[^/]+)"), "get_image", False),
    ]

    # --- instances ------------------------------------------------------------------------

    def _instance(self, project: str, zone: str, name: str) -> dict:
        vm = self.instances.get((project, zone, name))
        if vm is None and name.isdigit():
            vm = next((x for (p, z, _), x in self.instances.items()
                       if p == project and z == zone and x["public"]["id"] == name), None)
        if vm is None:
            raise _not_found(f"projects/{project}/zones/{zone}/instances/{name}")
        return vm

    def _link(self, project: str, rest: str) -> str:
        """An absolute URL on the fake for a partial or full Compute URL or path."""
        rest = re.sub(r"^https?://[^/]+/compute/(?:v1|beta|alpha)/", "", rest)
        return rest if rest.startswith(self.url) else (
            f"{self.url}/compute/v1/{rest}" if rest.startswith("projects/")
            else f"{self._base(project)}/{rest}")

    def _machine_type(self, project: str, zone: str, value) -> str:
        text = _string(value, "instance_resource.machine_type")
        m = re.fullmatch(r"(?:(?:https?://[^/]+/compute/v1/)?projects/(?P<p>[^/]+)/)?"
                         r"zones/(?P<z>[^/]+)/machineTypes/(?P<mt>[^/]+)", text)
        if m is None:
            raise _invalid("resource.machineType", text,
                           "Must be a URL or partial URL of a machine type, e.g. "
                           f"'zones/{zone}/machineTypes/n1-standard-1'.")
        if m["z"] != zone:
            raise _invalid("resource.machineType", text,
                           f"Machine type must be in zone '{zone}'.")
        if m["mt"] not in self._project(project)["machine_types"].get(zone, {}):
            raise _invalid("resource.machineType", text,
                           f"Machine type with name '{m['mt']}' does not exist in zone "
                           f"'{zone}'.")
        return m["mt"]

    def _image(self, project: str, value: str, field: str) -> dict:
        """The image a sourceImage names (by name or family, partial or full URL)."""
        text = re.sub(r"^https?://[^/]+/compute/v1/", "", value)
        m = re.fullmatch(r"(?:projects/(?P<p>[^/]+)/)?global/images/"
                         r"(?:family/(?P<f>[^/]+)|(?P<n>[^/]+))", text)
        if m is None:
            raise _invalid(field, value, "The URL is malformed.")
        where = m["p"] or project
        image = (self._family_image(where, m["f"]) if m["f"]
                 else self.images.get((where, m["n"])))
        if image is None:
            raise _not_found(f"projects/{where}/global/images/"
                             f"{'family/' + m['f'] if m['f'] else m['n']}")
        return image

    def _family_image(self, project: str, family: str) -> dict | None:
        live = [i for (p, _), i in self.images.items()
                if p == project and i["public"].get("family") == family
                and i["public"].get("deprecated", {}).get("state", "ACTIVE") == "ACTIVE"]
        return max(live, key=lambda i: (i["when"], i["public"]["name"]), default=None)

    def _labels(self, value, where: str, field: str) -> dict:
        if not isinstance(value, dict):
            raise _parse_error(where, f"Invalid value at '{where}' (TYPE_MAP), "
                                      f"{json.dumps(value)}")
        if len(value) > 64:
            raise _invalid(field, "", "A resource can have at most 64 labels.")
        for key, val in value.items():
            if not LABEL_KEY.fullmatch(key):
                raise _invalid(field, "", f"Label key '{key}' violates format constraints. "
                                          "The key must start with a lowercase character, "
                                          "can only contain lowercase letters, numeric "
                                          "characters, underscores and dashes. The key can "
                                          "be at most 63 characters long. International "
                                          "characters are allowed.")
            if not isinstance(val, str) or not LABEL_VALUE.fullmatch(val):
                raise _invalid(field, "", f"Label value '{val}' violates format constraints. "
                                          "The value can only contain lowercase letters, "
                                          "numeric characters, underscores and dashes. The "
                                          "value can be at most 63 characters long. "
                                          "International characters are allowed.")
        return dict(value)

    def _scheduling(self, body: dict, gpus: bool) -> dict:
        where = "instance_resource.scheduling"
        s = _message(body.get("scheduling"), "Scheduling", where)
        for key in ("nodeAffinities", "maxRunDuration", "terminationTime",
                    "onInstanceStopAction", "localSsdRecoveryTimeout"):
            if key in s:
                raise _invalid(f"resource.scheduling.{key}", json.dumps(s[key]),
                               "The fake does not emulate this field.")
        model = _enum(s.get("provisioningModel", "STANDARD"), "Scheduling.ProvisioningModel",
                      f"{where}.provisioning_model")
        if model in ("FLEX_START", "RESERVATION_BOUND"):
            raise _invalid("resource.scheduling.provisioningModel", model,
                           "The fake does not emulate this provisioning model.")
        preemptible = _bool(s.get("preemptible", False), f"{where}.preemptible")
        if preemptible and model == "SPOT":
            raise _invalid("resource.scheduling.preemptible", "true",
                           "Spot VMs are set with provisioningModel SPOT, not preemptible.")
        spot = model == "SPOT" or preemptible
        restart = _bool(s.get("automaticRestart", not spot), f"{where}.automatic_restart")
        if spot and restart:
            raise _invalid("resource.scheduling.automaticRestart", "true",
                           "Preemptible instances cannot be automatically restarted.")
        maintenance = _enum(s.get("onHostMaintenance", "TERMINATE" if spot else "MIGRATE"),
                            "Scheduling.OnHostMaintenance", f"{where}.on_host_maintenance")
        if maintenance == "MIGRATE" and spot:
            raise _invalid("resource.scheduling.onHostMaintenance", maintenance,
                           "Preemptible instances must have onHostMaintenance TERMINATE.")
        if maintenance == "MIGRATE" and gpus:
            raise _invalid("resource.scheduling.onHostMaintenance", maintenance,
                           "Instances with guest accelerators do not support live migration.")
        out = {"onHostMaintenance": maintenance, "automaticRestart": restart,
               "preemptible": spot, "provisioningModel": model}
        action = s.get("instanceTerminationAction")
        if action is not None or spot:
            action = _enum(action or "STOP", "Scheduling.InstanceTerminationAction",
                           f"{where}.instance_termination_action")
            if action == "INSTANCE_TERMINATION_ACTION_UNSPECIFIED":
                action = "STOP"
            out["instanceTerminationAction"] = action
        for key in ("minNodeCpus", "availabilityDomain", "hostErrorTimeoutSeconds"):
            if key in s:
                out[key] = _int(s[key], f"{where}.{key}", "TYPE_INT32")
        for key in ("locationHint",):
            if key in s:
                out[key] = _string(s[key], f"{where}.location_hint")
        if "skipGuestOsShutdown" in s:
            out["skipGuestOsShutdown"] = _bool(s["skipGuestOsShutdown"],
                                               f"{where}.skip_guest_os_shutdown")
        return out

    def _accelerators(self, project: str, zone: str, machine: str, body: dict) -> list:
        bundled = self._project(project)["machine_types"][zone][machine]
        out = []
        for i, item in enumerate(_list(body.get("guestAccelerators", []),
                                       "instance_resource.guest_accelerators")):
            at = f"instance_resource.guest_accelerators[{i}]"
            acc = _message(item, "AcceleratorConfig", at)
            kind = _string(acc.get("acceleratorType", ""), f"{at}.accelerator_type")
            number = _int(acc.get("acceleratorCount", 0), f"{at}.accelerator_count",
                          "TYPE_INT32")
            name = kind.rsplit("/", 1)[-1]
            if not name or number < 1:
                raise _invalid(f"resource.guestAccelerators[{i}]", json.dumps(item),
                               "acceleratorType and a positive acceleratorCount are required.")
            if bundled is not None and (name, number) != bundled:
                raise _invalid(f"resource.guestAccelerators[{i}].acceleratorType", kind,
                               f"Machine type '{machine}' comes with {bundled[1]} "
                               f"{bundled[0]}; other accelerators cannot be attached.")
            out.append((name, number))
        if bundled is not None and not out:
            out.append(bundled)  # an accelerator-optimized type reads back with its GPUs
        return [{"acceleratorType": f"{self._base(project)}/zones/{zone}/acceleratorTypes/{n}",
                 "acceleratorCount": c} for n, c in out]

    def _check_disks(self, project: str, zone: str, name: str, body: dict) -> list[dict]:
        """The AttachedDisks of an insert: (attached entry, new disk) pairs, checked."""
        items = _list(body.get("disks", []), "instance_resource.disks")
        if not items:
            raise _required("resource.disks")
        out, names = [], set()
        for i, item in enumerate(items):
            at, field = f"instance_resource.disks[{i}]", f"resource.disks[{i}]"
            d = _message(item, "AttachedDisk", at)
            kind = _enum(d.get("type", "PERSISTENT"), "AttachedDisk.Type", f"{at}.type")
            if kind == "SCRATCH" or "source" in d:
                raise _invalid(f"{field}.{'type' if kind == 'SCRATCH' else 'source'}",
                               d.get("source", kind), "The fake does not emulate this field.")
            boot = _bool(d.get("boot", False), f"{at}.boot")
            if boot != (i == 0):
                raise _invalid(f"{field}.boot", json.dumps(boot),
                               "The boot disk must be the first disk, and only one disk can "
                               "be a boot disk.")
            if "initializeParams" not in d:
                raise _required(f"{field}.initializeParams")
            ip = _message(d["initializeParams"], "AttachedDiskInitializeParams",
                          f"{at}.initialize_params")
            for key in ("sourceSnapshot", "storagePool", "replicaZones", "resourcePolicies",
                        "sourceImageEncryptionKey", "sourceSnapshotEncryptionKey"):
                if key in ip:
                    raise _invalid(f"{field}.initializeParams.{key}", json.dumps(ip[key]),
                                   "The fake does not emulate this field.")
            disk_name = _string(ip.get("diskName", name if i == 0 else f"{name}-{i}"),
                                f"{at}.initialize_params.disk_name")
            if not re.fullmatch(NAME_PATTERN, disk_name):
                raise _invalid(f"{field}.initializeParams.diskName", disk_name,
                               f"Must be a match of regex '{NAME_PATTERN}'")
            if (project, zone, disk_name) in self.disks or disk_name in names:
                raise ComputeError(409, "alreadyExists", f"The resource 'projects/{project}/"
                                                         f"zones/{zone}/disks/{disk_name}' "
                                                         "already exists")
            names.add(disk_name)
            image = None
            if "sourceImage" in ip:
                image = self._image(project, _string(ip["sourceImage"],
                                                     f"{at}.initialize_params.source_image"),
                                    f"{field}.initializeParams.sourceImage")
            elif boot:
                raise _required(f"{field}.initializeParams.sourceImage")
            floor = int(image["public"]["diskSizeGb"]) if image else 1
            size = (_int(ip["diskSizeGb"], f"{at}.initialize_params.disk_size_gb")
                    if "diskSizeGb" in ip else floor)
            if size < floor:
                raise _invalid(f"{field}.initializeParams.diskSizeGb", size,
                               "Requested disk size cannot be smaller than the image size "
                               f"({floor} GB)")
            dtype = _string(ip.get("diskType", f"zones/{zone}/diskTypes/pd-standard"),
                            f"{at}.initialize_params.disk_type")
            tm = re.search(r"(?:^|/)zones/(?P<z>[^/]+)/diskTypes/(?P<t>[^/]+)$", dtype)
            if tm is None or tm["z"] != zone:
                raise _invalid(f"{field}.initializeParams.diskType", dtype,
                               f"Must be a disk type URL in zone '{zone}'.")
            disk = {"name": disk_name, "sizeGb": str(size),
                    "type": f"{self._base(project)}/zones/{zone}/diskTypes/{tm['t']}",
                    "labels": self._labels(ip.get("labels", {}),
                                           f"{at}.initialize_params.labels",
                                           f"{field}.initializeParams.labels")}
            if image is not None:
                disk.update(sourceImage=image["public"]["selfLink"],
                            sourceImageId=image["public"]["id"])
            attached = {"type": "PERSISTENT", "boot": boot,
                        "mode": _enum(d.get("mode", "READ_WRITE"), "AttachedDisk.Mode",
                                      f"{at}.mode"),
                        "autoDelete": _bool(d.get("autoDelete", False), f"{at}.auto_delete"),
                        "deviceName": _string(d.get("deviceName", f"persistent-disk-{i}"),
                                              f"{at}.device_name"),
                        "index": i, "diskSizeGb": str(size),
                        "interface": _enum(d.get("interface", "SCSI"),
                                           "AttachedDisk.Interface", f"{at}.interface")}
            out.append({"attached": attached, "disk": disk})
        return out

    def _network_interfaces(self, project: str, zone: str, body: dict) -> list:
        items = _list(body.get("networkInterfaces", []),
                      "instance_resource.network_interfaces")
        if not items:
            raise _required("resource.networkInterfaces")
        region = zone.rsplit("-", 1)[0]
        out = []
        for i, item in enumerate(items):
            at = f"instance_resource.network_interfaces[{i}]"
            nic = _message(item, "NetworkInterface", at)
            entry = {"kind": "compute#networkInterface", "name": f"nic{i}",
                     "networkIP": f"10.128.0.{2 + len(self.instances) % 250}",
                     "stackType": "IPV4_ONLY", "fingerprint": fingerprint(nic)}
            subnet = nic.get("subnetwork")
            net = nic.get("network")
            if subnet is None and net is None:
                net = "global/networks/default"
            if net is not None:
                entry["network"] = self._link(project, _string(net, f"{at}.network"))
            if subnet is not None:
                link = self._link(project, _string(subnet, f"{at}.subnetwork"))
                if f"/regions/{region}/subnetworks/" not in link:
                    raise _invalid(f"resource.networkInterfaces[{i}].subnetwork", subnet,
                                   f"Subnetwork must be in region '{region}'.")
                entry["subnetwork"] = link
                entry.setdefault("network", f"{self._base(project)}/global/networks/default")
            configs = []
            for j, ac in enumerate(_list(nic.get("accessConfigs", []),
                                         f"{at}.access_configs")):
                c = _message(ac, "AccessConfig", f"{at}.access_configs[{j}]")
                configs.append({"kind": "compute#accessConfig",
                                "type": _string(c.get("type", "ONE_TO_ONE_NAT"),
                                                f"{at}.access_configs[{j}].type"),
                                "name": _string(c.get("name", "External NAT"),
                                                f"{at}.access_configs[{j}].name"),
                                "networkTier": _string(c.get("networkTier", "PREMIUM"),
                                                       f"{at}.access_configs[{j}].network_tier")})
            if configs:
                entry["accessConfigs"] = configs
            out.append(entry)
        return out

    def _metadata(self, body: dict) -> dict:
        where = "instance_resource.metadata"
        md = _message(body.get("metadata"), "Metadata", where)
        items, seen = [], set()
        for i, item in enumerate(_list(md.get("items", []), f"{where}.items")):
            it = _message(item, "Items", f"{where}.items[{i}]")
            key = _string(it.get("key", ""), f"{where}.items[{i}].key")
            if not METADATA_KEY.fullmatch(key):
                raise _invalid(f"resource.metadata.items[{i}].key", key,
                               f"Must be a match of regex '{METADATA_KEY.pattern}'")
            if key in seen:
                raise _invalid("resource.metadata", "",
                               f"Duplicate metadata key '{key}'.")
            seen.add(key)
            items.append({"key": key, "value": _string(it.get("value", ""),
                                                       f"{where}.items[{i}].value")})
        out = {"kind": "compute#metadata", "fingerprint": fingerprint(items)}
        if items:
            out["items"] = items
        return out

    def _service_accounts(self, project: str, body: dict) -> list:
        out = []
        for i, item in enumerate(_list(body.get("serviceAccounts", []),
                                       "instance_resource.service_accounts")):
            sa = _message(item, "ServiceAccount", f"instance_resource.service_accounts[{i}]")
            email = _string(sa.get("email", "default"),
                            f"instance_resource.service_accounts[{i}].email")
            if email == "default":
                email = f"{PROJECT_NUMBER}-compute@developer.gserviceaccount.com"
            scopes = [_string(s, f"instance_resource.service_accounts[{i}].scopes")
                      for s in _list(sa.get("scopes", []),
                                     f"instance_resource.service_accounts[{i}].scopes")]
            out.append({"email": email, "scopes": scopes})
        if len(out) > 1:
            raise _invalid("resource.serviceAccounts", "",
                           "At most one service account can be attached to an instance.")
        return out

    def _insert_instance(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        rid = self._request_id(request)
        again = self._repeat(project, rid)
        if again:
            return again
        body = _message(self._body(request), "Instance", "instance_resource")
        name = body.get("name")
        if not name:
            raise _required("resource.name")
        name = _string(name, "instance_resource.name")
        if not re.fullmatch(NAME_PATTERN, name):
            raise _invalid("resource.name", name, f"Must be a match of regex '{NAME_PATTERN}'")
        for key in NOT_EMULATED:
            if key in body:
                raise _invalid(f"resource.{key}", json.dumps(body[key]),
                               "The fake does not emulate this field.")
        if "machineType" not in body:
            raise _required("resource.machineType")
        machine = self._machine_type(project, zone, body["machineType"])
        accelerators = self._accelerators(project, zone, machine, body)
        scheduling = self._scheduling(body, bool(accelerators))
        labels = self._labels(body.get("labels", {}), "instance_resource.labels",
                              "resource.labels")
        disks = self._check_disks(project, zone, name, body)
        nics = self._network_interfaces(project, zone, body)
        metadata = self._metadata(body)
        accounts = self._service_accounts(project, body)
        key = (project, zone, name)
        if key in self.instances:
            raise ComputeError(409, "alreadyExists", f"The resource 'projects/{project}/zones/"
                                                     f"{zone}/instances/{name}' already exists")
        link = f"{self._base(project)}/zones/{zone}/instances/{name}"
        now = timestamp(self.now())
        attached = []
        for entry in disks:
            d = entry["disk"]
            dlink = f"{self._base(project)}/zones/{zone}/disks/{d['name']}"
            self.disks[(project, zone, d["name"])] = {
                "project": project, "zone": zone, "public": {
                    "kind": "compute#disk", "id": self._new_id(), "creationTimestamp": now,
                    **d, "zone": f"{self._base(project)}/zones/{zone}", "status": "CREATING",
                    "selfLink": dlink, "labelFingerprint": fingerprint(d["labels"]),
                    "physicalBlockSizeBytes": "4096", "users": [link]}}
            attached.append({"kind": "compute#attachedDisk", **entry["attached"],
                             "source": dlink})
        public = {"kind": "compute#instance", "id": self._new_id(), "creationTimestamp": now,
                  "name": name, "tags": {"fingerprint": fingerprint([])},
                  "machineType": f"{self._base(project)}/zones/{zone}/machineTypes/{machine}",
                  "status": "PROVISIONING", "zone": f"{self._base(project)}/zones/{zone}",
                  "canIpForward": False, "networkInterfaces": nics, "disks": attached,
                  "metadata": metadata, "serviceAccounts": accounts, "selfLink": link,
                  "scheduling": scheduling, "labels": labels,
                  "labelFingerprint": fingerprint(labels), "startRestricted": False,
                  "deletionProtection": _bool(body.get("deletionProtection", False),
                                              "instance_resource.deletion_protection"),
                  "fingerprint": fingerprint([name, now])}
        if accelerators:
            public["guestAccelerators"] = accelerators
        if not accounts:
            del public["serviceAccounts"]
        if "description" in body:
            public["description"] = _string(body["description"],
                                            "instance_resource.description")
        vm = {"project": project, "zone": zone, "machine": machine, "public": public}
        self.instances[key] = vm
        return self._start(project, ("zones", zone), "insert", public, user, rid,
                           {"kind": "instance", "key": key, "do": "insert"})

    def _get_instance(self, request: Request, p: dict, user: str) -> Response:
        zone = self._zone(p["project"], p["zone"])
        vm = self._instance(p["project"], zone, p["name"])
        if vm.get("stopping_reads") is not None:  # a preemption stopping the VM
            if vm["stopping_reads"] > 0:
                vm["stopping_reads"] -= 1
            else:
                self._stopped(vm)
        return Response(200, self._instance_json(vm))

    def _list_instances(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        items = [self._instance_json(vm) for (pr, z, _), vm in self.instances.items()
                 if pr == project and z == zone]
        return self._list(request, items, "compute#instanceList",
                          f"projects/{project}/zones/{zone}/instances",
                          f"{self._base(project)}/zones/{zone}/instances")

    def _aggregated_instances(self, request: Request, p: dict, user: str) -> Response:
        """instances.aggregatedList: every zone's instances (after `filter` and paging), as
        `items: {"zones/<zone>": {"instances": [...]}}`."""
        project = p["project"]
        items = [self._instance_json(vm) for (pr, _, _), vm in self.instances.items()
                 if pr == project]
        flat = self._list(request, items, "compute#instanceAggregatedList",
                          f"projects/{project}/aggregated/instances",
                          f"{self._base(project)}/aggregated/instances").body
        grouped: dict = {}
        for vm in flat.pop("items", []):
            zone = vm["zone"].rsplit("/", 1)[-1]
            grouped.setdefault(f"zones/{zone}", {"instances": []})["instances"].append(vm)
        flat["items"] = grouped
        return Response(200, flat)

    def _instance_write(self, request: Request, p: dict) -> tuple:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        rid = self._request_id(request)
        return project, zone, rid, self._repeat(project, rid)

    def _start_instance(self, request: Request, p: dict, user: str) -> Response:
        project, zone, rid, again = self._instance_write(request, p)
        if again:
            return again
        vm = self._instance(project, zone, p["name"])
        pub, do = vm["public"], "start"
        if pub["status"] in ("STOPPING", "SUSPENDING"):
            raise self._not_ready(vm)
        if pub["status"] != "TERMINATED":
            do = "noop"  # already running or starting: the operation changes nothing
        else:
            pub["status"] = "PROVISIONING"
        return self._start(project, ("zones", zone), "start", pub, user, rid,
                           {"kind": "instance", "key": self._key(vm), "do": do})

    def _stop_instance(self, request: Request, p: dict, user: str) -> Response:
        project, zone, rid, again = self._instance_write(request, p)
        if again:
            return again
        vm = self._instance(project, zone, p["name"])
        pub, do = vm["public"], "stop"
        if pub["status"] in ("PROVISIONING", "STAGING"):
            raise self._not_ready(vm)
        if pub["status"] in ("TERMINATED", "STOPPING"):
            do = "noop"
        else:
            vm["before"], pub["status"] = pub["status"], "STOPPING"
        return self._start(project, ("zones", zone), "stop", pub, user, rid,
                           {"kind": "instance", "key": self._key(vm), "do": do})

    def _delete_instance(self, request: Request, p: dict, user: str) -> Response:
        project, zone, rid, again = self._instance_write(request, p)
        if again:
            return again
        vm = self._instance(project, zone, p["name"])
        pub = vm["public"]
        if pub.get("deletionProtection"):
            raise ComputeError(400, "resourceInUseByAnotherResource",
                               f"The resource 'projects/{project}/zones/{zone}/instances/"
                               f"{pub['name']}' is protected against deletion "
                               "(deletionProtection).")
        vm["before"], pub["status"] = pub["status"], "STOPPING"
        return self._start(project, ("zones", zone), "delete", pub, user, rid,
                           {"kind": "instance", "key": self._key(vm), "do": "delete"})

    def _set_labels(self, request: Request, p: dict, user: str) -> Response:
        project, zone, rid, again = self._instance_write(request, p)
        if again:
            return again
        vm = self._instance(project, zone, p["name"])
        where = "instances_set_labels_request_resource"
        body = _message(self._body(request), "InstancesSetLabelsRequest", where)
        labels = self._labels(body.get("labels", {}), f"{where}.labels", "labels")
        given = _string(body.get("labelFingerprint", ""), f"{where}.label_fingerprint")
        pub = vm["public"]
        if given != pub["labelFingerprint"]:
            raise ComputeError(412, "conditionNotMet", "Labels fingerprint either invalid or "
                                                       "resource labels have changed")
        pub["labels"], pub["labelFingerprint"] = labels, fingerprint(labels)
        return self._start(project, ("zones", zone), "setLabels", pub, user, rid,
                           {"kind": "instance", "key": self._key(vm), "do": "noop"})

    @staticmethod
    def _key(vm: dict) -> tuple:
        return vm["project"], vm["zone"], vm["public"]["name"]

    def _not_ready(self, vm: dict) -> ComputeError:
        return ComputeError(400, "resourceNotReady",
                            f"The resource 'projects/{vm['project']}/zones/{vm['zone']}/"
                            f"instances/{vm['public']['name']}' is not ready")

    # --- disks, images, operations --------------------------------------------------------

    def _get_disk(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        d = self.disks.get((project, zone, p["name"]))
        if d is None and p["name"].isdigit():
            d = next((x for (pr, z, _), x in self.disks.items()
                      if pr == project and z == zone and x["public"]["id"] == p["name"]), None)
        if d is None:
            raise _not_found(f"projects/{project}/zones/{zone}/disks/{p['name']}")
        return Response(200, self._disk_json(d))

    def _get_image(self, request: Request, p: dict, user: str) -> Response:
        image = self.images.get((p["project"], p["name"]))
        if image is None and p["name"].isdigit():
            image = next((i for (pr, _), i in self.images.items()
                          if pr == p["project"] and i["public"]["id"] == p["name"]), None)
        if image is None:
            raise _not_found(f"projects/{p['project']}/global/images/{p['name']}")
        return Response(200, dict(image["public"]))

    def _image_from_family(self, request: Request, p: dict, user: str) -> Response:
        image = self._family_image(p["project"], p["family"])
        if image is None:
            raise _not_found(f"projects/{p['project']}/global/images/family/{p['family']}")
        return Response(200, dict(image["public"]))

    def _list_operations(self, request: Request, p: dict, user: str) -> Response:
        project, zone = p["project"], self._zone(p["project"], p["zone"])
        items = [dict(op["public"]) for op in self.operations.values()
                 if op["project"] == project and op["scope"] == ("zones", zone)]
        return self._list(request, items, "compute#operationList",
                          f"projects/{project}/zones/{zone}/operations",
                          f"{self._base(project)}/zones/{zone}/operations")

    def _system_event(self, project: str, zone: str, target: dict, op_type: str,
                      message: str) -> dict:
        """An operation Compute itself records, already DONE (a preemption)."""
        now = timestamp(self.now())
        name = operation_name("systemevent")
        where = f"{self._base(project)}/zones/{zone}"
        public = {"kind": "compute#operation", "id": self._new_id(), "name": name,
                  "zone": where, "operationType": op_type, "targetLink": target["selfLink"],
                  "targetId": target["id"], "status": "DONE", "statusMessage": message,
                  "user": "system@google.com", "progress": 100, "insertTime": now,
                  "startTime": now, "endTime": now, "selfLink": f"{where}/operations/{name}"}
        self.operations[name] = {"public": public, "project": project,
                                 "scope": ("zones", zone), "polls_left": 0,
                                 "action": {"kind": "system"}, "fail": None}
        return public

    # --- state changes --------------------------------------------------------------------

    def _short(self, zone: str, machine: str) -> bool:
        """Whether this insert/start of `machine` in `zone` meets a stockout (uses one)."""
        key = (zone, machine)
        if key in self.no_capacity:
            return True
        if self.capacity_short.get(key, 0) > 0:
            self.capacity_short[key] -= 1
            if self.capacity_short[key] == 0:
                del self.capacity_short[key]
            return True
        return False

    def _stockout(self, project: str, zone: str, machine: str) -> dict:
        if self.stockout_code == PLAIN_STOCKOUT:
            return {"code": PLAIN_STOCKOUT,
                    "message": f"The zone 'projects/{project}/zones/{zone}' does not have "
                               "enough resources available to fulfill the request.  Try a "
                               "different zone, or try again later."}
        return super()._stockout(project, zone, machine)

    def _stopped(self, vm: dict) -> None:
        vm.pop("stopping_reads", None)
        pub = vm["public"]
        pub["status"] = "TERMINATED"
        pub["lastStopTimestamp"] = vm.pop("stop_at", None) or timestamp(self.now())
        for nic in pub["networkInterfaces"]:
            for ac in nic.get("accessConfigs", []):
                ac.pop("natIP", None)  # an ephemeral external IP goes with the stop

    def _running(self, vm: dict) -> None:
        pub = vm["public"]
        pub["status"], pub["lastStartTimestamp"] = "RUNNING", timestamp(self.now())
        pub["cpuPlatform"] = "Intel Cascade Lake"
        for nic in pub["networkInterfaces"]:
            for ac in nic.get("accessConfigs", []):
                ac["natIP"] = f"34.{secrets.randbelow(256)}.{secrets.randbelow(256)}." \
                              f"{1 + secrets.randbelow(254)}"
        for a in pub["disks"]:
            d = self.disks.get(self._disk_key(vm, a))
            if d is not None:
                d["public"]["status"] = "READY"
                d["public"]["lastAttachTimestamp"] = d["public"].get(
                    "lastAttachTimestamp") or pub["lastStartTimestamp"]

    def _disk_key(self, vm: dict, attached: dict) -> tuple:
        return vm["project"], vm["zone"], attached["source"].rsplit("/", 1)[-1]

    def _drop_instance(self, vm: dict) -> None:
        """The instance is gone: autoDelete disks with it, the others detached."""
        for a in vm["public"]["disks"]:
            key = self._disk_key(vm, a)
            if a["autoDelete"]:
                self.disks.pop(key, None)
            elif key in self.disks:
                d = self.disks[key]["public"]
                d["users"] = [u for u in d.get("users", []) if u != vm["public"]["selfLink"]]
                d["lastDetachTimestamp"] = timestamp(self.now())
        self.instances.pop(self._key(vm), None)

    def _finish(self, op: dict) -> None:
        action = op["action"]
        if action["kind"] not in ("instance", "system"):
            return super()._finish(op)
        public = op["public"]
        error, http = self._done(op)
        vm = self.instances.get(action.get("key"))
        if vm is None or action["do"] == "noop" and not op["fail"]:
            return
        do, pub = action["do"], vm["public"]
        if do in ("insert", "start") and error is None and self._short(vm["zone"],
                                                                        vm["machine"]):
            error = self._stockout(vm["project"], vm["zone"], vm["machine"])
        if error is None:
            if do in ("insert", "start"):
                self._running(vm)
            elif do == "stop":
                self._stopped(vm)
            elif do == "delete":
                self._drop_instance(vm)
        elif do == "insert":
            for a in pub["disks"]:
                self.disks.pop(self._disk_key(vm, a), None)
            self.instances.pop(self._key(vm), None)
        elif do == "start":
            pub["status"] = "TERMINATED"
        elif do in ("stop", "delete"):
            pub["status"] = vm.pop("before", pub["status"])
        self._failed(public, error, http)

    # --- shapes ---------------------------------------------------------------------------

    def _instance_json(self, vm: dict) -> dict:
        return json.loads(json.dumps(vm["public"]))

    def _disk_json(self, d: dict) -> dict:
        out = json.loads(json.dumps(d["public"]))
        if not out.get("users"):
            out.pop("users", None)
        if not out.get("labels"):
            out.pop("labels", None)
        return out
