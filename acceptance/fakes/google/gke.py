"""A fake GKE Container API v1 (`container.googleapis.com`) for node pools: cluster GET,
node pool list/get/create/update/delete, `:setSize`, `:setAutoscaling`, and the
operations every mutation returns (`RUNNING` for a configurable number of polls of
`projects.locations.operations.get`, then `DONE`).

    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account("my-project")
    oauth.write_key_file(account, tmp / "key.json")     # GOOGLE_APPLICATION_CREDENTIALS
    gke = Gke(tokens).start()
    gke.seed_cluster("my-project", "us-central1", "gke1")  # or POST /_fake/clusters
    ... the client calls gke.url + "/v1/projects/my-project/locations/us-central1/..." ...
    gke.state()["clusters"][0]["nodePools"]                # or GET /_fake/state

A bearer token is required: one the `GoogleOAuth` fake issued, or a JWT self-signed by one
of its service accounts (what google-cloud-auth sends). GKE runs one operation per
cluster: another mutation meanwhile is answered 400 FAILED_PRECONDITION ("Cluster is
running incompatible operation ..."). Errors have Google's shape
`{"error": {"code", "message", "status", "details"}}`. Unknown JSON fields are refused as
the real API refuses them. See ../README.md for the references and what is not emulated.
"""

from __future__ import annotations

import re
import secrets
import uuid

from .. import FakeServer, Request, Response, now_rfc3339, retry_after_header, route
from .. import set_capacity_switches
from ..tokens import TokenRegistry
from .common import CODES, STATUS_OF_HTTP  # noqa: F401  (re-exported)
from .common import (GoogleError, GoogleOperations, authenticate, error_response,
                     message_fields, operation_name, snake)

NAME_RE = re.compile(r"(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)")
_BASE = r"/v1/projects/(?P<project>[^/:]+)/locations/(?P<location>[^/:]+)"
_CLUSTER = _BASE + r"/clusters/(?P<cluster>[^/:]+)"
ROUTES = [
    ("cluster", re.compile(_CLUSTER)),
    ("pools", re.compile(_CLUSTER + "/nodePools")),
    ("pool", re.compile(_CLUSTER + r"/nodePools/(?P<pool>[^/:]+)")),
    ("action", re.compile(_CLUSTER + r"/nodePools/(?P<pool>[^/:]+):(?P<action>\w+)")),
    ("operation", re.compile(_BASE + r"/operations/(?P<op>[^/:]+)")),
    # Compute Engine's `instanceGroupManagers.get` for the instance groups of the pools
    # (GKE lists them in `instanceGroupUrls`); served here, since only GKE knows them.
    ("igm", re.compile(r"/compute/v1/projects/(?P<project>[^/:]+)/zones/(?P<zone>[^/:]+)"
                       r"/instanceGroupManagers/(?P<igm>[^/:]+)")),
]
ENUMS = {
    "GPUDriverInstallationConfig.GPUDriverVersion":
        ("GPU_DRIVER_VERSION_UNSPECIFIED", "INSTALLATION_DISABLED", "DEFAULT", "LATEST"),
    "NodeTaint.Effect": ("EFFECT_UNSPECIFIED", "NO_SCHEDULE", "PREFER_NO_SCHEDULE",
                         "NO_EXECUTE"),
    "NodePoolAutoscaling.LocationPolicy": ("LOCATION_POLICY_UNSPECIFIED", "BALANCED", "ANY"),
    "ReservationAffinity.Type": ("UNSPECIFIED", "NO_RESERVATION", "ANY_RESERVATION",
                                 "SPECIFIC_RESERVATION"),
}
# Field names (json_name) of the messages the fake reads; any other name is refused.
FIELDS = {
    "CreateNodePoolRequest": {"projectId", "zone", "clusterId", "nodePool", "parent"},
    "NodePool": {"name", "config", "initialNodeCount", "locations", "networkConfig",
                 "selfLink", "version", "instanceGroupUrls", "status", "statusMessage",
                 "autoscaling", "management", "maxPodsConstraint", "conditions",
                 "podIpv4CidrSize", "upgradeSettings", "placementPolicy", "updateInfo",
                 "etag", "queuedProvisioning", "bestEffortProvisioning", "autopilotConfig",
                 "nodeDrainConfig"},
    "NodeConfig": {"machineType", "diskSizeGb", "oauthScopes", "serviceAccount", "metadata",
                   "imageType", "labels", "localSsdCount", "tags", "preemptible",
                   "accelerators", "diskType", "minCpuPlatform", "workloadMetadataConfig",
                   "taints", "sandboxConfig", "nodeGroup", "reservationAffinity",
                   "shieldedInstanceConfig", "linuxNodeConfig", "kubeletConfig",
                   "bootDiskKmsKey", "gcfsConfig", "advancedMachineFeatures", "gvnic", "spot",
                   "confidentialNodes", "fastSocket", "resourceLabels", "loggingConfig",
                   "windowsNodeConfig", "localNvmeSsdBlockConfig",
                   "ephemeralStorageLocalSsdConfig", "soleTenantConfig", "containerdConfig",
                   "resourceManagerTags", "enableConfidentialStorage", "secondaryBootDisks",
                   "storagePools", "secondaryBootDiskUpdateStrategy", "maxRunDuration",
                   "localSsdEncryptionMode", "effectiveCgroupMode", "flexStart", "bootDisk",
                   "taintConfig"},
    "AcceleratorConfig": {"acceleratorCount", "acceleratorType", "gpuPartitionSize",
                          "gpuSharingConfig", "gpuDriverInstallationConfig"},
    "GPUDriverInstallationConfig": {"gpuDriverVersion"},
    "NodeTaint": {"key", "value", "effect"},
    "NodePoolAutoscaling": {"enabled", "minNodeCount", "maxNodeCount", "autoprovisioned",
                            "locationPolicy", "totalMinNodeCount", "totalMaxNodeCount"},
    "ReservationAffinity": {"consumeReservationType", "key", "values"},
    "UpdateNodePoolRequest": {
        "projectId", "zone", "clusterId", "nodePoolId", "nodeVersion", "imageType", "name",
        "image", "imageProject", "locations", "workloadMetadataConfig", "upgradeSettings",
        "tags", "taints", "labels", "linuxNodeConfig", "kubeletConfig", "nodeNetworkConfig",
        "gcfsConfig", "confidentialNodes", "gvnic", "etag", "fastSocket", "loggingConfig",
        "resourceLabels", "windowsNodeConfig", "accelerators", "machineType", "diskType",
        "diskSizeGb", "resourceManagerTags", "containerdConfig", "queuedProvisioning",
        "storagePools", "maxRunDuration", "flexStart", "bootDisk", "nodeDrainConfig",
        "consolidationDelay", "taintConfig"},
    "NodeTaints": {"taints"}, "NodeLabels": {"labels"}, "ResourceLabels": {"labels"},
    "SetNodePoolSizeRequest": {"projectId", "zone", "clusterId", "nodePoolId", "nodeCount",
                               "name"},
    "SetNodePoolAutoscalingRequest": {"projectId", "zone", "clusterId", "nodePoolId",
                                      "autoscaling", "name"},
}
# NodePool fields a client may not set (output only); dropped from what is stored.
OUTPUT_ONLY = {"selfLink", "version", "instanceGroupUrls", "status", "statusMessage",
               "conditions", "podIpv4CidrSize", "updateInfo", "etag"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def _bad_value(where: str, kind: str, value) -> GoogleError:
    message = f"Invalid value at '{where}' ({kind}), \"{value}\""
    return GoogleError("INVALID_ARGUMENT", message, [
        {"@type": "type.googleapis.com/google.rpc.BadRequest",
         "fieldViolations": [{"field": where, "description": message}]}])


def _message(obj, message: str, where: str | None) -> dict:
    """`obj` as a `message` with camelCase keys (proto JSON also accepts the proto field
    names); an unknown name is refused as Google's JSON parser refuses it."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise _bad_value(where or "", "type.googleapis.com/google.container.v1." + message, obj)

    def refuse(key: str) -> GoogleError:
        at = f" at '{where}'" if where else ""
        text = f"Invalid JSON payload received. Unknown name \"{key}\"{at}: Cannot find field."
        return GoogleError("INVALID_ARGUMENT", text, [
            {"@type": "type.googleapis.com/google.rpc.BadRequest",
             "fieldViolations": [{"field": where or "", "description": text}]}])

    return message_fields(obj, FIELDS[message], refuse)


def _enum(value, enum: str, where: str) -> str:
    names = ENUMS[enum]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    if value in names:
        return value
    raise _bad_value(where, "type.googleapis.com/google.container.v1." + enum, value)


def _int(value, where: str, kind: str = "TYPE_INT32") -> int:
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _bad_value(where, kind, value)


def _string_map(value, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _bad_value(where, "TYPE_MAP", value)
    return dict(value)


class Gke(GoogleOperations, FakeServer):
    """The fake GKE API (`url` replaces https://container.googleapis.com). Settings:
    `polls` (RUNNING answers before DONE, default 2), `op_seconds` (an operation also ends
    once it has run this long, polled or not, as GKE's own do; default 10), and
    `fail_next_operation` ({status: canonical name, message}: the next operation ends DONE
    with that error), and `capacity` ({cluster name or location: "stockout" | "quota"}: GPU
    node pools created there are refused the way GKE refuses them; a value of null removes
    the switch). A quota answers the create at once with 403 PERMISSION_DENIED
    "Insufficient regional quota to satisfy request: resource \"NVIDIA_L4_GPUS\" ..."; a
    stockout lets the create start, then ends its operation with the instance group's
    "[GCE_STOCKOUT]: ... does not have enough resources available" and leaves the pool in
    ERROR, as GKE does, when the pool asks for nodes at creation (an initial count or an
    autoscaling minimum above 0). References:
    https://cloud.google.com/kubernetes-engine/docs/troubleshooting/node-pools and
    https://cloud.google.com/compute/docs/troubleshooting/troubleshooting-resource-availability.
    `op_seconds` and `hold` seconds are cloud time, waited out at the fake's `time_scale`."""

    name = "gke"

    def __init__(self, registry: TokenRegistry, time_scale=None):
        super().__init__(time_scale)
        self.registry = registry
        self.reset_state()

    def reset_state(self) -> None:
        self.clusters: dict[tuple[str, str, str], dict] = {}
        self.operations: dict[str, dict] = {}
        self.polls, self.fail_next, self.op_seconds = 2, None, 10.0
        self.capacity: dict[str, str] = {}
        # Nodes up per (pool name, zone) where a test says fewer than the pool's count.
        self.nodes_up: dict[tuple[str, str], int] = {}

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        if "polls" in s:
            self.polls = max(0, int(s.pop("polls")))
        if "fail_next_operation" in s:
            self.fail_next = s.pop("fail_next_operation")
        if "op_seconds" in s:
            self.op_seconds = max(0.0, float(s.pop("op_seconds")))
        if "capacity" in s:
            set_capacity_switches(self.capacity, s.pop("capacity"))
        if "hold" in s:
            self.hold(**s.pop("hold"))
        super().configure(s)

    def hold(self, cluster: str, seconds: float, op_type: str = "UPGRADE_MASTER") -> str:
        """Starts an operation of someone else's on cluster `cluster` (by name), as the
        console or GKE's own upgrades do: for `seconds` (cloud time, `seconds * time_scale`
        real seconds) every node pool mutation is refused as busy. Returns the operation's
        name."""
        with self.lock:
            c = next(c for c in self.clusters.values() if c["name"] == cluster)
            if c["operation"]:
                raise ValueError(f"cluster {cluster} already runs {c['operation']}")
            link = (f"{self.url}/v1/projects/{c['project']}/locations/{c['location']}"
                    f"/clusters/{c['name']}")
            self._start(c, {"name": None, "selfLink": link}, op_type)
            op = self.operations[c["operation"]]
            op["seconds"], op["polls_left"] = float(seconds), 10**9
            return c["operation"]

    # --- seeding and state ----------------------------------------------------------

    def seed_cluster(self, project: str, location: str, name: str, **options) -> dict:
        """Adds a cluster (see `seed`); returns its JSON."""
        with self.lock:
            return self.seed({"project": project, "location": location, "name": name,
                              **options})

    def seed(self, spec: dict) -> dict:
        """`project`, `location` (region or zone), `name`; optional `kubernetes_version`,
        `locations` (the node zones; default the zone, or zones a/b/c of the region),
        `machine_types` and `accelerator_types` (the catalog; default: anything),
        `default_pool` (default true: an `e2-medium` pool without GPUs, so GKE's automatic
        GPU taint applies to GPU pools, as documented for clusters with a non-GPU pool)."""
        spec = dict(spec)
        project, location, name = spec.pop("project"), spec.pop("location"), spec.pop("name")
        zonal = re.fullmatch(r".+-\d+-[a-z]", location) is not None
        cluster = {"project": project, "location": location, "name": name,
                   "version": spec.pop("kubernetes_version", "1.31.6-gke.1020000"),
                   "locations": list(spec.pop("locations", [location] if zonal else
                                              [f"{location}-{z}" for z in "abc"])),
                   "machine_types": spec.pop("machine_types", None),
                   "accelerator_types": spec.pop("accelerator_types", None),
                   "pools": {}, "node_counts": {}, "operation": None}
        default_pool = spec.pop("default_pool", True)
        if spec:
            raise ValueError(f"unknown cluster options {sorted(spec)}")
        if default_pool:
            pool = {"name": "default-pool", "config": {
                        "machineType": "e2-medium", "diskSizeGb": 100,
                        "imageType": "COS_CONTAINERD", "serviceAccount": "default"},
                    "initialNodeCount": 1, "locations": list(cluster["locations"]),
                    "management": {"autoUpgrade": True, "autoRepair": True},
                    "version": cluster["version"], "status": "RUNNING",
                    "podIpv4CidrSize": 24, "etag": secrets.token_hex(8)}
            pool["selfLink"] = self._pool_link(cluster, "default-pool")
            cluster["pools"]["default-pool"] = pool
            cluster["node_counts"]["default-pool"] = 1
        self.clusters[(project, location, name)] = cluster
        return self._cluster_json(cluster)

    def snapshot(self) -> dict:
        return {
            "settings": {"polls": self.polls, "fail_next_operation": self.fail_next,
                         "op_seconds": self.op_seconds, "capacity": dict(self.capacity)},
            "clusters": [{
                "project": c["project"], "location": c["location"], "name": c["name"],
                "version": c["version"], "locations": c["locations"],
                "machine_types": c["machine_types"],
                "accelerator_types": c["accelerator_types"],
                "running_operation": c["operation"], "nodePools": c["pools"],
                "node_counts": c["node_counts"],
            } for c in self.clusters.values()],
            "operations": [{**op["public"], "fake": {k: v for k, v in op.items()
                                                     if k not in ("public", "cluster")}}
                           for op in self.operations.values()],
        }

    # --- shapes ------------------------------------------------------------------------

    def _pool_link(self, c: dict, pool: str) -> str:
        return (f"{self.url}/v1/projects/{c['project']}/locations/{c['location']}/clusters/"
                f"{c['name']}/nodePools/{pool}")

    def _cluster_json(self, c: dict) -> dict:
        return {"name": c["name"], "location": c["location"], "zone": c["location"],
                "locations": c["locations"], "status": "RUNNING",
                "currentMasterVersion": c["version"], "currentNodeVersion": c["version"],
                "selfLink": (f"{self.url}/v1/projects/{c['project']}/locations/"
                             f"{c['location']}/clusters/{c['name']}"),
                **({"nodePools": list(c["pools"].values())} if c["pools"] else {})}

    @staticmethod
    def _google_error(status: str, message: str, details: list | None = None,
                      headers: dict | None = None) -> Response:
        return error_response(GoogleError(status, message, details, headers=headers))

    def error(self, status, code, message, retry_after=None) -> Response:
        return error_response(GoogleError(
            code or STATUS_OF_HTTP.get(status, "INTERNAL"), message or {
                429: "Quota exceeded for quota metric 'Requests' of service "
                     "'container.googleapis.com'.",
                500: "Internal error encountered.",
                503: "The service is currently unavailable.",
            }.get(status, "Injected by the fake."), http=status,
            headers=retry_after_header(retry_after)))

    @staticmethod
    def _request_info() -> dict:
        return {"@type": "type.googleapis.com/google.rpc.RequestInfo",
                "requestId": "0x" + secrets.token_hex(8)}

    # --- request handling ---------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        self._tick()
        failure = authenticate(self.registry, request, "container.googleapis.com")
        if failure:
            return error_response(failure)
        kind, m = route(ROUTES, request.path)
        if kind is None:
            return self._google_error("NOT_FOUND", f"The fake serves no {request.method} "
                                                   f"{request.path}.")
        try:
            if kind == "operation":
                return self._operation(request, m)
            if kind == "igm":
                return self._igm(request, m)
            cluster = self.clusters.get((m["project"], m["location"], m["cluster"]))
            if cluster is None:
                raise GoogleError("NOT_FOUND", f"Not found: projects/{m['project']}/locations/"
                                               f"{m['location']}/clusters/{m['cluster']}.")
            return self._route(request, kind, m, cluster)
        except GoogleError as e:
            if any(d.get("reason") == "CLUSTER_ALREADY_HAS_OPERATION" for d in e.details):
                request.log["busy"] = True  # refused: another operation was running
            return self._google_error(e.status, e.message, e.details + [self._request_info()])

    def _route(self, request: Request, kind: str, m, cluster: dict) -> Response:
        method = request.method
        if kind == "cluster" and method == "GET":
            return Response(200, self._cluster_json(cluster))
        if kind == "pools" and method == "GET":
            pools = list(cluster["pools"].values())
            return Response(200, {"nodePools": pools} if pools else {})
        if kind == "pools" and method == "POST":
            return self._create(request, cluster)
        if kind in ("pool", "action"):
            pool = cluster["pools"].get(m["pool"])
            if pool is None:
                raise GoogleError("NOT_FOUND", f"Not found: projects/{cluster['project']}/"
                                               f"locations/{cluster['location']}/clusters/"
                                               f"{cluster['name']}/nodePools/{m['pool']}.")
            if kind == "pool" and method == "GET":
                return Response(200, pool)
            if kind == "pool" and method == "DELETE":
                self._check_idle(cluster)
                pool["status"] = "STOPPING"
                return self._start(cluster, pool, "DELETE_NODE_POOL")
            if kind == "pool" and method == "PUT":
                return self._update(request, cluster, pool)
            if kind == "action" and method == "POST" and m["action"] == "setSize":
                body = _message(self._json(request), "SetNodePoolSizeRequest", None)
                count = _int(body.get("nodeCount", 0), "node_count")
                if count < 0:
                    raise _bad_value("node_count", "TYPE_INT32", count)
                self._check_idle(cluster)
                cluster["node_counts"][pool["name"]] = count
                pool["status"] = "RECONCILING"
                return self._start(cluster, pool, "SET_NODE_POOL_SIZE")
            if kind == "action" and method == "POST" and m["action"] == "setAutoscaling":
                body = _message(self._json(request), "SetNodePoolAutoscalingRequest", None)
                if "autoscaling" not in body:
                    raise GoogleError("INVALID_ARGUMENT", "autoscaling is required.")
                autoscaling = self._autoscaling(body["autoscaling"], "autoscaling")
                self._check_idle(cluster)
                pool["autoscaling"] = autoscaling
                pool["status"] = "RECONCILING"
                return self._start(cluster, pool, "UPDATE_CLUSTER")
        raise GoogleError("NOT_FOUND", f"The fake serves no {method} {request.path}.")

    @staticmethod
    def _json(request: Request):
        try:
            return request.json() or {}
        except ValueError as e:
            raise GoogleError("INVALID_ARGUMENT", f"Invalid JSON payload received. {e}")

    def _check_idle(self, cluster: dict) -> None:
        if cluster["operation"]:
            raise GoogleError(
                "FAILED_PRECONDITION",
                f"Cluster is running incompatible operation {cluster['operation']}.",
                [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                  "reason": "CLUSTER_ALREADY_HAS_OPERATION",
                  "domain": "container.googleapis.com", "metadata": {}}])

    # --- validation ---------------------------------------------------------------------

    def _autoscaling(self, value, where: str) -> dict:
        a = _message(value, "NodePoolAutoscaling", where)
        for key in ("minNodeCount", "maxNodeCount", "totalMinNodeCount", "totalMaxNodeCount"):
            if key in a:
                a[key] = _int(a[key], f"{where}.{snake(key)}")
        if "locationPolicy" in a:
            a["locationPolicy"] = _enum(a["locationPolicy"], "NodePoolAutoscaling.LocationPolicy",
                                        f"{where}.location_policy")
        if a.get("enabled"):
            zone = "minNodeCount" in a or "maxNodeCount" in a
            total = "totalMinNodeCount" in a or "totalMaxNodeCount" in a
            if zone and total:
                raise GoogleError("INVALID_ARGUMENT", "Autoscaling config cannot set both "
                                  "per-zone (min/max_node_count) and total "
                                  "(total_min/total_max_node_count) limits.")
            lo, hi = ((a.get("totalMinNodeCount", 0), a.get("totalMaxNodeCount", 0)) if total
                      else (a.get("minNodeCount", 0), a.get("maxNodeCount", 0)))
            if lo < 0 or hi < 1 or lo > hi:
                raise GoogleError("INVALID_ARGUMENT", f"Autoscaling limits are invalid: min "
                                  f"{lo}, max {hi} (min must be >= 0, max >= 1 and >= min).")
        return a

    def _accelerators(self, cluster: dict, value, where: str) -> list:
        if not isinstance(value, list):
            raise _bad_value(where, "TYPE_MESSAGE", value)
        out = []
        for i, item in enumerate(value):
            at = f"{where}[{i}]"
            acc = _message(item, "AcceleratorConfig", at)
            count = _int(acc.get("acceleratorCount", 0), f"{at}.accelerator_count", "TYPE_INT64")
            kind = acc.get("acceleratorType")
            if count <= 0 or not isinstance(kind, str) or not kind:
                raise GoogleError("INVALID_ARGUMENT", f"{at}: accelerator_count must be "
                                  "positive and accelerator_type set.")
            catalog = cluster["accelerator_types"]
            if catalog is not None and kind not in catalog:
                raise GoogleError("INVALID_ARGUMENT", f"Accelerator type \"{kind}\" is not "
                                  f"available in the locations of cluster {cluster['name']}.")
            acc["acceleratorCount"] = str(count)  # int64: a JSON string in proto3 JSON
            if "gpuDriverInstallationConfig" in acc:
                driver = _message(acc["gpuDriverInstallationConfig"],
                                  "GPUDriverInstallationConfig",
                                  f"{at}.gpu_driver_installation_config")
                if "gpuDriverVersion" in driver:
                    driver["gpuDriverVersion"] = _enum(
                        driver["gpuDriverVersion"], "GPUDriverInstallationConfig.GPUDriverVersion",
                        f"{at}.gpu_driver_installation_config.gpu_driver_version")
                acc["gpuDriverInstallationConfig"] = driver
            out.append(acc)
        return out

    def _taints(self, value, where: str) -> list:
        if not isinstance(value, list):
            raise _bad_value(where, "TYPE_MESSAGE", value)
        out = []
        for i, item in enumerate(value):
            taint = _message(item, "NodeTaint", f"{where}[{i}]")
            if not taint.get("key"):
                raise GoogleError("INVALID_ARGUMENT", f"{where}[{i}]: taint key must be set.")
            taint["effect"] = _enum(taint.get("effect", 0), "NodeTaint.Effect",
                                    f"{where}[{i}].effect")
            out.append(taint)
        return out

    def _machine_type(self, cluster: dict, machine: str) -> str:
        catalog = cluster["machine_types"]
        if not isinstance(machine, str) or (catalog is not None and machine not in catalog):
            raise GoogleError("INVALID_ARGUMENT", f"Machine type \"{machine}\" is not "
                              f"available in the locations of cluster {cluster['name']}.")
        return machine

    def _locations(self, cluster: dict, value, where: str) -> list:
        if not isinstance(value, list) or any(z not in cluster["locations"] for z in value):
            raise GoogleError("INVALID_ARGUMENT", f"{where} {value} must be a subset of the "
                              f"cluster's node locations {cluster['locations']}.")
        return list(value)

    def _config(self, cluster: dict, value) -> dict:
        cfg = _message(value, "NodeConfig", "node_pool.config")
        cfg["machineType"] = self._machine_type(cluster, cfg.get("machineType", "e2-medium"))
        cfg.setdefault("diskSizeGb", 100)
        cfg.setdefault("imageType", "COS_CONTAINERD")
        for key in ("labels", "resourceLabels"):
            if key in cfg:
                cfg[key] = _string_map(cfg[key], f"node_pool.config.{snake(key)}")
        for key in ("spot", "preemptible"):
            if key in cfg and not isinstance(cfg[key], bool):
                raise _bad_value(f"node_pool.config.{key}", "TYPE_BOOL", cfg[key])
        if "accelerators" in cfg:
            cfg["accelerators"] = self._accelerators(cluster, cfg["accelerators"],
                                                     "node_pool.config.accelerators")
        if "taints" in cfg:
            cfg["taints"] = self._taints(cfg["taints"], "node_pool.config.taints")
        if "reservationAffinity" in cfg:
            ra = _message(cfg["reservationAffinity"], "ReservationAffinity",
                          "node_pool.config.reservation_affinity")
            ra["consumeReservationType"] = _enum(
                ra.get("consumeReservationType", 0), "ReservationAffinity.Type",
                "node_pool.config.reservation_affinity.consume_reservation_type")
            if ra["consumeReservationType"] == "SPECIFIC_RESERVATION" and not (
                    ra.get("key") and ra.get("values")):
                raise GoogleError("INVALID_ARGUMENT", "reservation_affinity: key and values "
                                  "are required for SPECIFIC_RESERVATION.")
            cfg["reservationAffinity"] = ra
        return cfg

    # --- mutations ----------------------------------------------------------------------

    def _create(self, request: Request, cluster: dict) -> Response:
        body = _message(self._json(request), "CreateNodePoolRequest", None)
        request.log["json"] = body
        if not isinstance(body.get("nodePool"), dict):
            raise GoogleError("INVALID_ARGUMENT", "node_pool must be set.")
        np = _message(body["nodePool"], "NodePool", "node_pool")
        name = np.get("name")
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise GoogleError("INVALID_ARGUMENT", f"Invalid value for field \"node_pool.name\": "
                              f"\"{name}\". Must be a match of regex "
                              "'(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' (only lowercase "
                              "alphanumerics and '-' allowed, must start with a letter and end "
                              "with an alphanumeric, and must be no longer than 40 characters).")
        if name in cluster["pools"]:
            raise GoogleError("ALREADY_EXISTS", f"Already exists: projects/{cluster['project']}/"
                              f"locations/{cluster['location']}/clusters/{cluster['name']}/"
                              f"nodePools/{name}.")
        config = self._config(cluster, np.get("config"))
        count = _int(np.get("initialNodeCount", 0), "node_pool.initial_node_count")
        if count < 0:
            raise _bad_value("node_pool.initial_node_count", "TYPE_INT32", count)
        pool = {k: v for k, v in np.items() if k not in OUTPUT_ONLY}
        if "autoscaling" in np:
            pool["autoscaling"] = self._autoscaling(np["autoscaling"], "node_pool.autoscaling")
        pool["locations"] = (self._locations(cluster, np["locations"], "node_pool.locations")
                             if np.get("locations") else list(cluster["locations"]))
        gpus = any(int(a["acceleratorCount"]) > 0 for a in config.get("accelerators", []))
        others = [p for p in cluster["pools"].values()
                  if not any(int(a.get("acceleratorCount", 0)) > 0
                             for a in p["config"].get("accelerators", []))]
        if gpus and others and not any(t["key"] == GPU_TAINT["key"]
                                       for t in config.get("taints", [])):
            config["taints"] = [*config.get("taints", []), dict(GPU_TAINT)]
        outcome = self.capacity.get(cluster["name"]) or self.capacity.get(cluster["location"])
        if gpus and outcome == "quota":
            acc = config["accelerators"][0]
            kind = acc["acceleratorType"].replace("nvidia-tesla-", "").replace("nvidia-", "")
            need = int(acc["acceleratorCount"]) * max(1, count) * len(pool["locations"])
            raise GoogleError(
                "PERMISSION_DENIED",
                f"Insufficient regional quota to satisfy request: resource "
                f"\"NVIDIA_{kind.split('-')[0].upper()}_GPUS\": request requires '{need}.0' "
                f"and is short '{need}.0'. project has a quota of '0.0' with '0.0' available. "
                "View and manage quotas at https://console.cloud.google.com/iam-admin/quotas"
                f"?usage=USED&project={cluster['project']}.")
        self._check_idle(cluster)
        pool.update(name=name, config=config, initialNodeCount=count,
                    management=np.get("management") or {"autoUpgrade": True,
                                                         "autoRepair": True},
                    selfLink=self._pool_link(cluster, name), version=cluster["version"],
                    status="PROVISIONING", podIpv4CidrSize=24, etag=secrets.token_hex(8))
        pool["instanceGroupUrls"] = [
            f"https://www.googleapis.com/compute/v1/projects/{cluster['project']}/zones/{zone}/"
            f"instanceGroupManagers/gke-{cluster['name'][:16]}-{name[:16]}-"
            f"{secrets.token_hex(4)}-grp" for zone in pool["locations"]]
        cluster["pools"][name] = pool
        cluster["node_counts"][name] = count
        asks_nodes = count > 0 or any(int(pool.get("autoscaling", {}).get(k, 0) or 0) > 0
                                      for k in ("minNodeCount", "totalMinNodeCount"))
        if gpus and outcome == "stockout" and asks_nodes:
            zone = pool["locations"][0]
            self.fail_next = {"status": "RESOURCE_EXHAUSTED", "message": (
                "Google Compute Engine: Not all instances running in IGM after 12.48s. "
                "Expected 1, running 0, transitioning 1. Current errors: [GCE_STOCKOUT]: "
                f"Instance 'gke-{cluster['name'][:15]}-{name[:15]}-{secrets.token_hex(4)}-x9zq' "
                f"creation failed: The zone 'projects/{cluster['project']}/zones/{zone}' does "
                "not have enough resources available to fulfill the request.  "
                "'(resource type:compute)'.")}
        return self._start(cluster, pool, "CREATE_NODE_POOL")

    def _update(self, request: Request, cluster: dict, pool: dict) -> Response:
        body = _message(self._json(request), "UpdateNodePoolRequest", None)
        request.log["json"] = body
        if body.get("etag") and body["etag"] != pool["etag"]:
            raise GoogleError("ABORTED", f"Node pool {pool['name']} has etag {pool['etag']}, "
                                         f"not {body['etag']}.")
        config = dict(pool["config"])
        changes = {}
        if body.get("nodeVersion"):
            changes["version"] = (cluster["version"] if body["nodeVersion"] in ("-", "latest")
                                  else body["nodeVersion"])
        if body.get("imageType"):
            config["imageType"] = body["imageType"]
        if body.get("machineType"):
            config["machineType"] = self._machine_type(cluster, body["machineType"])
        if body.get("diskType"):
            config["diskType"] = body["diskType"]
        if "diskSizeGb" in body:
            config["diskSizeGb"] = _int(body["diskSizeGb"], "disk_size_gb", "TYPE_INT64")
        if body.get("locations"):
            changes["locations"] = self._locations(cluster, body["locations"], "locations")
        if "labels" in body:
            config["labels"] = _string_map(
                _message(body["labels"], "NodeLabels", "labels").get("labels"), "labels.labels")
        if "resourceLabels" in body:
            config["resourceLabels"] = _string_map(
                _message(body["resourceLabels"], "ResourceLabels", "resource_labels")
                .get("labels"), "resource_labels.labels")
        if "taints" in body:
            config["taints"] = self._taints(
                _message(body["taints"], "NodeTaints", "taints").get("taints") or [],
                "taints.taints")
        if "accelerators" in body:
            config["accelerators"] = self._accelerators(cluster, body["accelerators"],
                                                        "accelerators")
        self._check_idle(cluster)
        pool.update(changes, config={k: v for k, v in config.items() if v not in ({}, [])},
                    status="RECONCILING", etag=secrets.token_hex(8))
        return self._start(cluster, pool, "UPGRADE_NODES")

    # --- operations ---------------------------------------------------------------------

    def _start(self, cluster: dict, pool: dict, op_type: str) -> Response:
        name = operation_name(suffix=str(uuid.uuid4()))
        base = f"{self.url}/v1/projects/{cluster['project']}/locations/{cluster['location']}"
        public = {"name": name, "zone": cluster["location"], "operationType": op_type,
                  "status": "RUNNING", "selfLink": f"{base}/operations/{name}",
                  "targetLink": pool["selfLink"], "location": cluster["location"],
                  "startTime": now_rfc3339()}
        self._add_operation(public, {"project": cluster["project"],
                                     "cluster": (cluster["project"], cluster["location"],
                                                 cluster["name"]),
                                     "pool": pool["name"]})
        cluster["operation"] = name
        return Response(200, dict(public))

    def set_nodes_up(self, pool: str, zone: str, up: int | None) -> dict:
        """Says that only `up` nodes of `pool` run in `zone` (None: as many as its count),
        as `instanceGroupManagers.get` answers in `currentActions.none`."""
        with self.lock:
            if up is None:
                self.nodes_up.pop((pool, zone), None)
            else:
                self.nodes_up[(pool, zone)] = int(up)
            return {"pool": pool, "zone": zone, "up": up}

    def _igm(self, request: Request, m) -> Response:
        """`instanceGroupManagers.get`: the group's `targetSize` (the pool's nodes per zone)
        and `currentActions.none` (those running with no action pending: all of them once the
        pool is RUNNING, unless `set_nodes_up` says fewer; none while it is provisioning)."""
        if request.method != "GET":
            return self._google_error("NOT_FOUND", f"The fake serves no {request.method} "
                                                   f"{request.path}.")
        path = request.path[len("/compute/v1/"):]
        for cluster in self.clusters.values():
            for pool in cluster["pools"].values():
                if any(u.endswith(path) for u in pool.get("instanceGroupUrls", [])):
                    size = int(cluster["node_counts"].get(pool["name"], 0))
                    running = pool.get("status") == "RUNNING"
                    up = self.nodes_up.get((pool["name"], m["zone"]), size) if running else 0
                    up = min(up, size)
                    actions = {k: 0 for k in ("abandoning", "creating",
                                              "creatingWithoutRetries", "deleting",
                                              "recreating", "refreshing", "restarting",
                                              "resuming", "starting", "stopping",
                                              "suspending", "verifying")}
                    actions["none"] = up
                    actions["creating"] = size - up
                    return Response(200, {
                        "kind": "compute#instanceGroupManager", "name": m["igm"],
                        "zone": f"https://www.googleapis.com/compute/v1/projects/"
                                f"{m['project']}/zones/{m['zone']}",
                        "targetSize": size, "currentActions": actions,
                        "status": {"isStable": up == size},
                    })
        return self._google_error("NOT_FOUND", f"The resource 'projects/{m['project']}/zones/"
                                               f"{m['zone']}/instanceGroupManagers/{m['igm']}' "
                                               "was not found")

    def _finish(self, op: dict) -> None:
        public = op["public"]
        cluster = self.clusters.get(op["cluster"])
        pool = cluster["pools"].get(op["pool"]) if cluster else None
        public.update(status="DONE", endTime=now_rfc3339())
        if op["fail"]:
            status = op["fail"].get("status", "RESOURCE_EXHAUSTED")
            message = op["fail"].get("message", "Injected operation failure.")
            public["error"] = {"code": CODES[status][1], "message": message}
            public["statusMessage"] = message
            if pool is not None:
                pool.update(status="ERROR", statusMessage=message)
        elif pool is not None and public["operationType"] == "DELETE_NODE_POOL":
            del cluster["pools"][op["pool"]]
            cluster["node_counts"].pop(op["pool"], None)
        elif pool is not None:
            pool["status"] = "RUNNING"
        if cluster is not None and cluster["operation"] == public["name"]:
            cluster["operation"] = None

    def _operation(self, request: Request, m) -> Response:
        op = self.operations.get(m["op"])
        if op is None or op["project"] != m["project"] \
                or op["public"]["location"] != m["location"]:
            raise GoogleError("NOT_FOUND", f"Not found: projects/{m['project']}/locations/"
                                           f"{m['location']}/operations/{m['op']}.")
        if request.method != "GET":
            raise GoogleError("NOT_FOUND", f"The fake serves no {request.method} "
                                           f"{request.path}.")
        self._poll(op)
        return Response(200, dict(op["public"]))
