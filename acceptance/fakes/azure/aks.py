"""A fake Azure Resource Manager serving AKS managed clusters (GET) and their agent pools
(list, get, create or update, delete) at the pinned stable api-version `2025-05-01`, with
ARM's long-running operations: `Azure-AsyncOperation` and `Location` headers, an operation
status resource that answers `InProgress` for a configurable number of polls and then
`Succeeded` (or `Failed`), and `Retry-After`.

    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT_ID, SECRET).start()
    arm = ArmAks(tokens).start()
    arm.seed_cluster(SUB, "rg", "aks1", "eastus")   # or POST /_fake/clusters
    ... the client gets a token from aad.url (AZURE_AUTHORITY_HOST) and calls arm.url ...
    arm.state()["clusters"][0]["agentPools"]         # or GET /_fake/state

Requests need `Authorization: Bearer <token>` from the `AzureAD` fake for the ARM audience
(`https://management.azure.com/.default`). Only one operation runs per managed cluster: a
PUT or DELETE of any of its agent pools meanwhile is answered 409 `OperationNotAllowed`,
as AKS does. What is stored is exactly what GET answers; see ../README.md for the reference
behind each rule and what the fake does not do.
"""

from __future__ import annotations

import re
import secrets

from .. import Request, Response, now_rfc3339, request_id, set_capacity_switches
from ..tokens import TokenRegistry
from .common import ARM_AUDIENCES  # noqa: F401  (re-exported: ARM's token audiences)
from .common import (ArmFake, ArmOperations, Refusal, api_version, api_version_form_error,
                     arm_error, authenticated_route, json_body, no_registered_provider,
                     parent_not_found, resource_group_not_found, resource_not_found,
                     resource_not_found_message, subscription_not_found, wrong_tenant)

API_VERSION = "2025-05-01"
# AKS hands out operation URLs with this api-version whatever the request used.
OPERATION_API_VERSION = "2017-08-31"
SPOT_LABEL = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
DEFAULT_VM_SIZES = (
    "Standard_D2s_v3", "Standard_D4s_v3", "Standard_D8s_v3", "Standard_DS2_v2",
    "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3",
    "Standard_NC64as_T4_v3", "Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3",
    "Standard_NV36ads_A10_v5", "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4",
    "Standard_NC96ads_A100_v4", "Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4",
    "Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5", "Standard_ND96isr_H100_v5")
LINUX_OS_SKUS = ("Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux", "AzureLinux3",
                 "CBLMariner")
WINDOWS_OS_SKUS = ("Windows2019", "Windows2022", "WindowsAnnual")
# Properties of ManagedClusterAgentPoolProfileProperties a PUT may carry and GET echoes;
# anything else in `properties` is dropped, as the RP does with unknown JSON.
PASSTHROUGH = (
    "osDiskSizeGB", "osDiskType", "kubeletDiskType", "workloadRuntime", "messageOfTheDay",
    "podSubnetID", "podIPAllocationMode", "maxPods", "scaleDownMode", "upgradeSettings",
    "enableNodePublicIP", "nodePublicIPPrefixID", "proximityPlacementGroupID",
    "kubeletConfig", "linuxOSConfig", "enableEncryptionAtHost", "enableUltraSSD",
    "enableFIPS", "gpuInstanceProfile", "creationData", "capacityReservationGroupID",
    "hostGroupID", "networkProfile", "windowsProfile", "securityProfile", "gatewayProfile",
    "virtualMachinesProfile")
# Changing these on an existing pool is refused.
IMMUTABLE = ("vmSize", "osType", "scaleSetPriority", "scaleSetEvictionPolicy",
             "vnetSubnetID", "availabilityZones")
TAINT_RE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?(=[-A-Za-z0-9_.]*)?"
                      r":(NoSchedule|PreferNoSchedule|NoExecute)")
SUBNET_RE = re.compile(r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                       r"Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+", re.I)
_CLUSTER = (r"/subscriptions/(?P<sub>[^/]+)/resourcegroups/(?P<rg>[^/]+)/providers/"
            r"microsoft\.containerservice/managedclusters/(?P<cluster>[^/]+)")
ROUTES = [
    ("cluster", re.compile(_CLUSTER, re.I)),
    ("pools", re.compile(_CLUSTER + "/agentpools", re.I)),
    ("pool", re.compile(_CLUSTER + "/agentpools/(?P<pool>[^/]+)", re.I)),
    ("operation", re.compile(r"/subscriptions/(?P<sub>[^/]+)/providers/"
                             r"microsoft\.containerservice/locations/(?P<loc>[^/]+)/"
                             r"(?P<kind>operations|operationresults)/(?P<op>[^/]+)", re.I)),
]
STATE_WORDS = {"create": "Creating", "update": "Updating", "delete": "Deleting"}


class ArmAks(ArmOperations, ArmFake):
    """The fake ARM endpoint (`url` is what a client uses instead of
    https://management.azure.com). Settings (`configure`, or `POST /_fake/faults`):
    `polls` (InProgress answers before an operation ends, default 2), `op_seconds` (an
    operation also ends once it has run this long, polled or not; default 10), `retry_after`
    (seconds, default 1), `fail_next_operation` ({code, message, status}: the next
    operation ends Failed), `rp_error_shape` ("wrapped" per the reference, or "flat"),
    `api_versions` (accepted api-versions, default the pinned one), and `capacity` ({cluster
    name or location: "stockout" | "quota"}: agent pools created there with nodes are
    refused the way ARM refuses a VM scale set; null removes the switch). A quota answers
    the PUT at once with 409 `QuotaExceeded` "Operation could not be completed as it results
    in exceeding approved <family> Cores quota ..."; a stockout accepts the PUT and ends its
    operation Failed with `AllocationFailed` (`ZonalAllocationFailed` for a zoned pool),
    leaving the pool Failed. `op_seconds` and `hold` seconds are cloud time, waited out
    at the fake's `time_scale` (`Retry-After` is never scaled). Reference:
    https://learn.microsoft.com/troubleshoot/azure/virtual-machines/windows/allocation-failure
    and https://learn.microsoft.com/azure/quotas/view-quotas."""

    name = "arm-aks"

    def __init__(self, registry: TokenRegistry, api_versions=(API_VERSION,), time_scale=None):
        super().__init__(registry, time_scale)
        self.default_api_versions = tuple(api_versions)
        self.reset_state()

    def reset_state(self) -> None:
        self.clusters: dict[tuple[str, str, str], dict] = {}
        self.operations: dict[str, dict] = {}
        self.polls, self.retry_after, self.fail_next = 2, 1, None
        self.op_seconds = 10.0
        self.capacity: dict[str, str] = {}
        self.rp_error_shape = "wrapped"
        self.api_versions = self.default_api_versions

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        if "polls" in s:
            self.polls = max(0, int(s.pop("polls")))
        if "retry_after" in s:
            self.retry_after = max(0, int(s.pop("retry_after")))
        if "op_seconds" in s:
            self.op_seconds = max(0.0, float(s.pop("op_seconds")))
        if "hold" in s:
            self.hold(**s.pop("hold"))
        if "fail_next_operation" in s:
            self.fail_next = s.pop("fail_next_operation")
        if "capacity" in s:
            set_capacity_switches(self.capacity, s.pop("capacity"))
        if "rp_error_shape" in s:
            shape = s.pop("rp_error_shape")
            if shape not in ("wrapped", "flat"):
                raise ValueError("rp_error_shape must be 'wrapped' or 'flat'")
            self.rp_error_shape = shape
        if "api_versions" in s:
            self.api_versions = tuple(s.pop("api_versions"))
        super().configure(s)

    def hold(self, cluster: str, seconds: float, pool: str = "nodepool1") -> str:
        """Starts an update of someone else's on agent pool `pool` of cluster `cluster` (by
        name), as the console or the cluster autoscaler do: for `seconds` (cloud time,
        `seconds * time_scale` real seconds) every agent pool PUT or DELETE of the cluster
        is refused as busy. Returns the operation's id."""
        with self.lock:
            c = next(c for c in self.clusters.values() if c["name"] == cluster)
            if c["operation"]:
                raise ValueError(f"cluster {cluster} already runs {c['operation']}")
            op = self._start(c, pool, "update")
            op["seconds"], op["polls_left"] = float(seconds), 10**9
            return op["id"]

    # --- seeding and state ----------------------------------------------------------

    def seed_cluster(self, subscription: str, resource_group: str, name: str,
                     location: str, **options) -> dict:
        """Adds a managed cluster (see `seed` for the options); returns its ARM JSON."""
        with self.lock:
            return self.seed({"subscription": subscription, "resource_group": resource_group,
                              "name": name, "location": location, **options})

    def seed(self, spec: dict) -> dict:
        """`subscription`, `resource_group`, `name`, `location`; optional
        `kubernetes_version`, `tenant_id` (tokens from another tenant are refused),
        `vm_sizes` (sizes allowed in the location), `zones`, `system_pool` (default true:
        a System pool `nodepool1`, as every AKS cluster has)."""
        spec = dict(spec)
        cluster = {"subscription": spec.pop("subscription"),
                   "resource_group": spec.pop("resource_group"), "name": spec.pop("name"),
                   "location": spec.pop("location"),
                   "kubernetes_version": spec.pop("kubernetes_version", "1.31.7"),
                   "tenant_id": spec.pop("tenant_id", None),
                   "vm_sizes": list(spec.pop("vm_sizes", DEFAULT_VM_SIZES)),
                   "zones": [str(z) for z in spec.pop("zones", ("1", "2", "3"))],
                   "pools": {}, "operation": None}
        system_pool = spec.pop("system_pool", True)
        if spec:
            raise ValueError(f"unknown cluster options {sorted(spec)}")
        if system_pool:
            cluster["pools"]["nodepool1"] = self._materialise(cluster, {
                "vmSize": "Standard_D2s_v3", "count": 1, "mode": "System", "osType": "Linux",
                "osSKU": "Ubuntu", "enableAutoScaling": False,
                "orchestratorVersion": cluster["kubernetes_version"]}, "Succeeded")
        self.clusters[self._key(cluster["subscription"], cluster["resource_group"],
                                cluster["name"])] = cluster
        return self._cluster_json(cluster)

    def snapshot(self) -> dict:
        return {
            "settings": {"polls": self.polls, "retry_after": self.retry_after,
                         "op_seconds": self.op_seconds,
                         "fail_next_operation": self.fail_next,
                         "capacity": dict(self.capacity),
                         "rp_error_shape": self.rp_error_shape,
                         "api_versions": list(self.api_versions)},
            "clusters": [{
                "subscription": c["subscription"], "resource_group": c["resource_group"],
                "name": c["name"], "location": c["location"],
                "kubernetes_version": c["kubernetes_version"], "tenant_id": c["tenant_id"],
                "vm_sizes": c["vm_sizes"], "zones": c["zones"],
                "running_operation": c["operation"],
                "agentPools": {n: self._pool_json(c, p) for n, p in c["pools"].items()},
            } for c in self.clusters.values()],
            "operations": [dict(op) for op in self.operations.values()],
        }

    # --- JSON shapes ------------------------------------------------------------------

    @staticmethod
    def _key(sub: str, rg: str, name: str) -> tuple[str, str, str]:
        return sub.lower(), rg.lower(), name.lower()

    @staticmethod
    def _cluster_id(c: dict) -> str:
        return (f"/subscriptions/{c['subscription']}/resourcegroups/{c['resource_group']}"
                f"/providers/Microsoft.ContainerService/managedClusters/{c['name']}")

    def _cluster_json(self, c: dict) -> dict:
        return {"id": self._cluster_id(c), "location": c["location"], "name": c["name"],
                "type": "Microsoft.ContainerService/ManagedClusters",
                "properties": {
                    "provisioningState": "Succeeded", "powerState": {"code": "Running"},
                    "kubernetesVersion": c["kubernetes_version"],
                    "currentKubernetesVersion": c["kubernetes_version"],
                    "dnsPrefix": c["name"],
                    "agentPoolProfiles": [{"name": n, **p} for n, p in c["pools"].items()]}}

    def _pool_json(self, c: dict, props: dict) -> dict:
        name = next(n for n, p in c["pools"].items() if p is props)
        return {"id": f"{self._cluster_id(c)}/agentPools/{name}", "name": name,
                "type": "Microsoft.ContainerService/managedClusters/agentPools",
                "properties": props}

    def _materialise(self, c: dict, props: dict, state: str) -> dict:
        """The stored (and served) properties of a pool from validated input: AKS's
        defaults and read-only fields, and for Spot pools the label and taint AKS adds."""
        p = dict(props)
        if p.get("scaleSetPriority") == "Spot":
            p["nodeLabels"] = {**(p.get("nodeLabels") or {}), SPOT_LABEL: "spot"}
            if SPOT_TAINT not in (p.get("nodeTaints") or []):
                p["nodeTaints"] = [*(p.get("nodeTaints") or []), SPOT_TAINT]
        p.setdefault("type", "VirtualMachineScaleSets")
        p.setdefault("maxPods", 110)
        p.update(provisioningState=state, powerState={"code": "Running"},
                 currentOrchestratorVersion=p["orchestratorVersion"],
                 eTag=secrets.token_hex(8))
        return p

    def _arm_error(self, status: int, code: str, message: str, headers: dict | None = None,
                   target: str | None = None) -> Response:
        return arm_error(status, code, message, headers, target)

    def _rp_error(self, status: int, code: str, message: str,
                  target: str | None = None) -> Response:
        """An error from the AKS resource provider: ARM's CloudError (`{"error": {...}}`)
        by default, or the flat `{code, message, subcode, details}` AKS has been seen to
        send, when `rp_error_shape` is "flat"."""
        if self.rp_error_shape == "flat":
            return Response(status, {"code": code, "details": None, "message": message,
                                     "subcode": "", **({"target": target} if target else {})},
                            {"x-ms-request-id": request_id()})
        return self._arm_error(status, code, message, target=target)

    # --- request handling -------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        self._tick()
        issued, kind, m, failure = authenticated_route(self.registry, request, ROUTES)
        if failure:
            return failure
        if kind == "operation":
            return self._operation(request, m)
        failure = self._check_api_version(request, kind) or self._check_parents(m, kind)
        if failure:
            return failure
        cluster = self.clusters[self._key(m["sub"], m["rg"], m["cluster"])]
        if cluster["tenant_id"] and issued.tenant != cluster["tenant_id"].lower():
            return wrong_tenant(issued, cluster["tenant_id"])
        allowed = {"cluster": ("GET",), "pools": ("GET",), "pool": ("GET", "PUT", "DELETE")}
        if request.method not in allowed[kind]:
            return self._arm_error(405, "MethodNotAllowed",
                                   f"The fake serves only {'/'.join(allowed[kind])} here.")
        if kind == "cluster":
            return Response(200, self._cluster_json(cluster))
        if kind == "pools":
            return Response(200, {"value": [self._pool_json(cluster, p)
                                            for p in cluster["pools"].values()]})
        name = m["pool"]
        if request.method == "GET":
            pool = cluster["pools"].get(name)
            if pool is None:
                return self._rp_error(404, "ResourceNotFound", resource_not_found_message(
                    f"Microsoft.ContainerService/managedClusters/{cluster['name']}/agentPools/"
                    f"{name}", cluster["resource_group"]))
            return Response(200, self._pool_json(cluster, pool))
        if request.method == "PUT":
            return self._put(request, cluster, name)
        return self._delete(cluster, name, request)

    def _check_api_version(self, request: Request, kind: str, accept=()) -> Response | None:
        failure = api_version_form_error(request, self.api_versions)
        if failure:
            return failure
        version = api_version(request)
        if version in self.api_versions or version in accept:
            return None
        locations = sorted({c["location"] for c in self.clusters.values()}) or ["eastus"]
        rtype = {"cluster": "managedClusters", "pools": "managedClusters/agentPools",
                 "pool": "managedClusters/agentPools"}.get(kind, "locations/operations")
        return no_registered_provider(version, locations[0], rtype, self.api_versions,
                                      locations)

    def _check_parents(self, m, kind: str) -> Response | None:
        sub, rg, name = m["sub"], m["rg"], m["cluster"]
        if not any(c["subscription"].lower() == sub.lower() for c in self.clusters.values()):
            return subscription_not_found(sub)
        if not any(k[:2] == (sub.lower(), rg.lower()) for k in self.clusters):
            return resource_group_not_found(rg)
        if self._key(sub, rg, name) in self.clusters:
            return None
        if kind == "cluster":
            return resource_not_found(f"Microsoft.ContainerService/managedClusters/{name}", rg)
        return parent_not_found(name)

    # --- agent pool writes --------------------------------------------------------------

    def _busy(self, cluster: dict, request: Request) -> Response | None:
        if cluster["operation"] is None:
            return None
        request.log["busy"] = True  # refused: another operation was running
        op = self.operations[cluster["operation"]]
        return self._rp_error(409, "OperationNotAllowed",
                              f"Operation is not allowed: Another agentpool operation "
                              f"({op['pool']} - {STATE_WORDS[op['kind']]}) is in progress, "
                              "please wait for it to finish before starting a new operation. "
                              "See https://aka.ms/aks-pending-operation for more details")

    def _put(self, request: Request, cluster: dict, name: str) -> Response:
        try:
            body = json_body(request)
        except Refusal as refusal:  # a body the resource provider could not read is its own
            return refusal.response if refusal.status == 415 else self._rp_error(
                refusal.status, refusal.code, refusal.message)
        existing = cluster["pools"].get(name)
        if_match = request.headers.get("If-Match")
        if_none = request.headers.get("If-None-Match")
        if (if_match and (existing is None or if_match not in ("*", existing["eTag"]))) \
                or (if_none == "*" and existing is not None):
            return self._rp_error(412, "PreconditionFailed",
                                  "The condition specified in the request headers was not met.")
        props, failure = self._validate(cluster, name, body, existing)
        if failure:
            return failure
        busy = self._busy(cluster, request)
        if busy:
            return busy
        kind = "update" if existing else "create"
        outcome = self.capacity.get(cluster["name"]) or self.capacity.get(cluster["location"])
        asks_nodes = kind == "create" and int(props.get("count") or 0) > 0
        if asks_nodes and outcome == "quota":
            family = re.sub(r"^Standard_", "standard", props["vmSize"]).replace("_", "")
            return self._rp_error(
                409, "QuotaExceeded",
                "Operation could not be completed as it results in exceeding approved "
                f"{family}Family Cores quota. Additional details - Deployment Model: Resource "
                f"Manager, Location: {cluster['location']}, Current Limit: 0, Current Usage: 0, "
                "Additional Required: 96, (Minimum) New Limit Required: 96. Submit a request "
                "for Quota increase at https://aka.ms/ProdportalCRP.")
        pool = self._materialise(cluster, props, STATE_WORDS[kind])
        cluster["pools"][name] = pool
        if asks_nodes and outcome == "stockout":
            zoned = bool(props.get("availabilityZones"))
            self.fail_next = {
                "code": "ZonalAllocationFailed" if zoned else "AllocationFailed",
                "status": 409,
                "message": "Allocation failed. We do not have sufficient capacity for the "
                           f"requested VM size in this {'zone' if zoned else 'region'}. Read "
                           "more about improving likelihood of allocation success at "
                           "http://aka.ms/allocation-guidance"}
        op = self._start(cluster, name, kind)
        return Response(200 if existing else 201, self._pool_json(cluster, pool),
                        self._async_headers(cluster, op))

    def _delete(self, cluster: dict, name: str, request: Request) -> Response:
        pool = cluster["pools"].get(name)
        if pool is None:
            return Response(204, None, {"x-ms-request-id": request_id()})
        busy = self._busy(cluster, request)
        if busy:
            return busy
        pool["provisioningState"] = "Deleting"
        op = self._start(cluster, name, "delete")
        return Response(202, None, self._async_headers(cluster, op))

    def _validate(self, c: dict, name: str, body: dict, existing: dict | None):
        """The properties to store, or (None, the 400 AKS would answer)."""
        def bad(message, target, code="InvalidParameter"):
            return None, self._rp_error(400, code, message, target)

        p_in = body.get("properties") if body.get("properties") is not None else {}
        if not isinstance(p_in, dict):
            return bad("The request content was invalid and could not be deserialized: "
                       "'properties' must be an object.", "properties", "InvalidRequestContent")
        os_type = p_in.get("osType") or "Linux"
        if os_type not in ("Linux", "Windows"):
            return bad(f"The value '{os_type}' of osType is invalid. Allowed values: Linux, "
                       "Windows.", "osType")
        limit = 12 if os_type == "Linux" else 6
        if not re.fullmatch(r"[a-z][a-z0-9]{0,%d}" % (limit - 1), name):
            return bad(f"The agent pool name '{name}' is invalid: it must start with a "
                       "lowercase letter, contain only lowercase letters and numbers, and "
                       f"be 1 to {limit} characters long for {os_type} agent pools.",
                       "agentPoolName")
        vm = p_in.get("vmSize")
        if not isinstance(vm, str) or not vm:
            return bad("Required parameter vmSize is missing (null).", "vmSize")
        sizes = {s.lower(): s for s in c["vm_sizes"]}
        if vm.lower() not in sizes:
            return bad(f"The VM size of AgentPoolProfile:{name} is not allowed in your "
                       f"subscription in location '{c['location']}'. For more details, please "
                       "visit https://aka.ms/aks/quotas-skus-regions", "vmSize", "BadRequest")
        mode = p_in.get("mode") or "User"
        if mode not in ("System", "User", "Gateway"):
            return bad(f"The value '{mode}' of mode is invalid. Allowed values: System, User, "
                       "Gateway.", "mode")
        pool_type = p_in.get("type") or "VirtualMachineScaleSets"
        if pool_type not in ("VirtualMachineScaleSets", "AvailabilitySet", "VirtualMachines"):
            return bad(f"The value '{pool_type}' of type is invalid.", "type")
        priority = p_in.get("scaleSetPriority") or "Regular"
        if priority not in ("Regular", "Spot"):
            return bad(f"The value '{priority}' of scaleSetPriority is invalid. Allowed "
                       "values: Regular, Spot.", "scaleSetPriority")
        eviction, price = p_in.get("scaleSetEvictionPolicy"), p_in.get("spotMaxPrice")
        if priority == "Regular":
            if eviction is not None:
                return bad("scaleSetEvictionPolicy cannot be specified unless "
                           "scaleSetPriority is 'Spot'.", "scaleSetEvictionPolicy")
            if price is not None:
                return bad("spotMaxPrice cannot be specified unless scaleSetPriority is "
                           "'Spot'.", "spotMaxPrice")
        else:
            eviction = eviction or "Delete"
            if eviction not in ("Delete", "Deallocate"):
                return bad(f"The value '{eviction}' of scaleSetEvictionPolicy is invalid. "
                           "Allowed values: Delete, Deallocate.", "scaleSetEvictionPolicy")
            price = -1 if price is None else price
            if isinstance(price, bool) or not isinstance(price, (int, float)) \
                    or not (price == -1 or price > 0):
                return bad(f"The value '{price}' of spotMaxPrice is invalid: it must be -1 or "
                           "a decimal greater than zero.", "spotMaxPrice")
            if mode == "System":
                return bad("A Spot agent pool cannot be a System agent pool.",
                           "scaleSetPriority")
        ints = {k: p_in.get(k) for k in ("count", "minCount", "maxCount")}
        for key, value in ints.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                return bad(f"The value of {key} must be an integer.", key)
        auto = p_in.get("enableAutoScaling")
        if auto is not None and not isinstance(auto, bool):
            return bad("The value of enableAutoScaling must be a boolean.", "enableAutoScaling")
        low = 1 if mode == "System" else 0
        count = ints["count"]
        if auto:
            lo, hi = ints["minCount"], ints["maxCount"]
            if lo is None or hi is None:
                return bad("minCount and maxCount are required when enableAutoScaling is "
                           "true.", "minCount")
            if not low <= lo <= hi <= 1000:
                return bad(f"minCount ({lo}) must be at least {low}, maxCount ({hi}) at most "
                           "1000, and minCount must not exceed maxCount.", "minCount")
            count = lo if count is None else count
            if not lo <= count <= hi:
                return bad(f"count ({count}) must be within minCount ({lo}) and maxCount "
                           f"({hi}) when autoscaling is enabled.", "count")
        count = 1 if count is None else count
        if not low <= count <= 1000:
            return bad(f"count ({count}) must be within {low} and 1000 for {mode} agent "
                       "pools.", "count")
        for key in ("nodeLabels", "tags"):
            value = p_in.get(key)
            if value is not None and (not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
                return bad(f"{key} must be a map of strings to strings.", key)
        taints = p_in.get("nodeTaints")
        if taints is not None:
            if not isinstance(taints, list):
                return bad("nodeTaints must be a list of strings.", "nodeTaints")
            for taint in taints:
                if not isinstance(taint, str) or not TAINT_RE.fullmatch(taint):
                    return bad(f"Taint '{taint}' is invalid: the form is key=value:Effect, "
                               "Effect one of NoSchedule, PreferNoSchedule, NoExecute.",
                               "nodeTaints")
        zones = p_in.get("availabilityZones")
        if zones is not None and (not isinstance(zones, list)
                                  or any(z not in c["zones"] for z in zones)):
            return bad(f"availabilityZones {zones} are not available in location "
                       f"'{c['location']}'; available: {c['zones']}.", "availabilityZones")
        subnet = p_in.get("vnetSubnetID")
        if subnet is not None and (not isinstance(subnet, str)
                                   or not SUBNET_RE.fullmatch(subnet)):
            return bad(f"vnetSubnetID '{subnet}' is not a valid subnet resource ID.",
                       "vnetSubnetID")
        os_sku = p_in.get("osSKU") or ("Ubuntu" if os_type == "Linux" else "Windows2022")
        if os_sku not in (LINUX_OS_SKUS if os_type == "Linux" else WINDOWS_OS_SKUS):
            return bad(f"The value '{os_sku}' of osSKU is invalid for osType {os_type}.",
                       "osSKU")
        gpu = p_in.get("gpuProfile")
        if gpu is not None and (not isinstance(gpu, dict)
                                or gpu.get("driver") not in (None, "Install", "None")):
            return bad(f"gpuProfile {gpu} is invalid: driver must be Install or None.",
                       "gpuProfile.driver")
        props = {k: p_in[k] for k in PASSTHROUGH if p_in.get(k) is not None}
        props.update(count=count, vmSize=sizes[vm.lower()], osType=os_type, osSKU=os_sku,
                     mode=mode, type=pool_type, enableAutoScaling=bool(auto),
                     orchestratorVersion=p_in.get("orchestratorVersion")
                     or c["kubernetes_version"])
        optional = {"minCount": ints["minCount"], "maxCount": ints["maxCount"],
                    "nodeLabels": p_in.get("nodeLabels"), "nodeTaints": taints,
                    "tags": p_in.get("tags"), "availabilityZones": zones,
                    "vnetSubnetID": subnet, "gpuProfile": gpu,
                    "scaleSetPriority": p_in.get("scaleSetPriority"),
                    "scaleSetEvictionPolicy": eviction, "spotMaxPrice": price}
        props.update({k: v for k, v in optional.items() if v is not None})
        if existing is not None:
            for key in IMMUTABLE:
                old, new = existing.get(key), props.get(key)
                if key == "scaleSetPriority":
                    old, new = old or "Regular", new or "Regular"
                if isinstance(old, str) and isinstance(new, str):
                    old, new = old.lower(), new.lower()
                if old != new:
                    return bad(f"Changing property '{key}' is not allowed.", key,
                               "PropertyChangeNotAllowed")
        return props, None

    # --- long-running operations --------------------------------------------------------

    def _start(self, cluster: dict, pool: str, kind: str) -> dict:
        op = self._new_operation({
            "kind": kind, "pool": pool,
            "cluster": self._key(cluster["subscription"], cluster["resource_group"],
                                 cluster["name"]),
            "subscription": cluster["subscription"], "location": cluster["location"],
            "startTime": now_rfc3339(), "fail": self.fail_next})
        self.fail_next = None
        cluster["operation"] = op["id"]
        return op

    def _async_headers(self, cluster: dict, op: dict) -> dict:
        base = (f"{self.url}/subscriptions/{cluster['subscription']}/providers/"
                f"Microsoft.ContainerService/locations/{cluster['location']}")
        query = f"?api-version={OPERATION_API_VERSION}"
        return {"Azure-AsyncOperation": f"{base}/operations/{op['id']}{query}",
                "Location": f"{base}/operationresults/{op['id']}{query}",
                "Retry-After": str(self.retry_after), "x-ms-request-id": request_id()}

    def _finish(self, op: dict) -> None:
        cluster = self.clusters.get(op["cluster"])
        pool = cluster["pools"].get(op["pool"]) if cluster else None
        fail = op["fail"]
        self._end_operation(op, now_rfc3339(), fail and {
            "code": fail.get("code", "InternalOperationError"),
            "message": fail.get("message", "Injected operation failure.")})
        if fail:
            if pool is not None:
                pool["provisioningState"] = "Failed"
        else:
            if pool is not None and op["kind"] == "delete":
                del cluster["pools"][op["pool"]]
            elif pool is not None:
                pool["provisioningState"] = "Succeeded"
        if cluster is not None and cluster["operation"] == op["id"]:
            cluster["operation"] = None

    def _operation(self, request: Request, m) -> Response:
        failure = self._check_api_version(request, "operation", accept=(OPERATION_API_VERSION,))
        if failure:
            return failure
        op = self.operations.get(m["op"])
        if op is None or op["subscription"].lower() != m["sub"].lower():
            return self._rp_error(404, "NotFound", f"Operation {m['op']} was not found.")
        if request.method != "GET":
            return self._arm_error(405, "MethodNotAllowed", "Operations are read with GET.")
        return self._operation_answer(  # operationresults: 202 until the end
            op, m["kind"].lower() == "operations",
            lambda o: {"id": (f"/subscriptions/{o['subscription']}/providers/"
                              f"Microsoft.ContainerService/locations/{o['location']}/"
                              f"operations/{o['id']}"),
                       "name": o["id"], "status": o["status"], "startTime": o["startTime"]},
            f"{self.url}{request.path}?{request.log['query']}",
            lambda o: self._rp_error(int(o["fail"].get("status", 400)), o["error"]["code"],
                                     o["error"]["message"]),
            self._result)

    def _result(self, op: dict) -> Response:
        """What an ended operation's `operationresults` answers: the pool, or 204."""
        cluster = self.clusters.get(op["cluster"])
        pool = cluster["pools"].get(op["pool"]) if cluster else None
        if op["kind"] == "delete" or pool is None:
            return Response(204, None)
        return Response(200, self._pool_json(cluster, pool))
