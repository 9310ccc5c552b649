"""`gpu_node_pool` on AKS and on GKE, each test once per cloud (ids `aks`, `gke`), against
the ARM and Container API fakes through the provider's real credential chains: apply holds
a floor and a spot pool, what the cloud then holds (read from the fake's own state), an
empty second plan, in-place changes and destroy; a roll of the machine size creates the new
pools before deleting the old; an import round trip; throttling and slow operations
converge; a capacity refusal at create leaves nothing and says where.

Each cloud is one small description below (`Aks`, `Gke`): its fixtures and helpers (from
`test_node_pool_aks.py` and `test_node_pool_gke.py`, where what only that cloud has is
tested), how its fake's pools read as the floor (`on-demand`) and the `spot` pool, its names,
its faults and its words. An assertion only one cloud makes is guarded by `cloud.id`. The
throttling test writes one reliability row per cloud ("AKS applies under throttling and
slow operations converged", "GKE ..."), counting the runs of every Terraform version.
"""

from __future__ import annotations

import pytest

from per_cloud import per_cloud
import reliability

from cloud_fakes import PROJECT, SUBSCRIPTION, pool_config
from tests.node_pool import test_node_pool_aks as aks
from tests.node_pool import test_node_pool_gke as gke
# The per-cloud fixtures, started once for this module (one fake per cloud).
from tests.node_pool.test_node_pool_aks import az_tf, azure  # noqa: F401
from tests.node_pool.test_node_pool_gke import gcp, gcp_tf  # noqa: F401

ADDR = "gpu_node_pool.train"

# Across the Terraform versions: each cloud's reliability row counts every run.
_faults = {c: {"runs": 0, "converged": 0, "faults": 0} for c in ("aks", "gke")}


class Aks:
    """AKS: agent pools of a managed cluster, read as ARM answers them."""

    id, cloud, label = "aks", "azure", "AKS"
    fixtures = ("azure", "az_tf")
    region, gpu = aks.REGION, "A100-80GB"
    machine, machine_x2 = "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"
    system_pool = "nodepool1"
    # The settings of the first apply, then the same settings re-spelled (no change).
    settings = ('  reclaim = "stop"\n'
                '  azure {\n    os_sku = "ubuntu"\n    zones  = ["2", "1"]\n  }\n')
    respelled = ('  reclaim = "stop"\n'
                 '  azure {\n    os_sku = "Ubuntu"\n    zones  = ["1", "2"]\n  }\n')
    slow_polls, polls = 3, 1
    refusals = {
        "stockout": ["AKS answered stockout", "AllocationFailed",
                     "We do not have sufficient capacity for the requested VM size"],
        "quota": ["AKS answered quota", "QuotaExceeded", "Cores quota"],
    }

    def __init__(self, fakes, tf):
        self.fakes, self.tf, self.fake = fakes, tf, fakes.arm

    def names(self, what: str) -> tuple[str, str]:
        return aks.names(self.tf, f"aks-{what}")

    def import_id(self, cluster: str, pool: str) -> str:
        return f"azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}"

    def gpu_pools(self, cluster: str) -> dict[str, dict]:
        """Our pools by capacity: `on-demand` (priority Regular) and `spot`."""
        caps = {"Regular": "on-demand", "Spot": "spot"}
        return {caps[k]: p for k, p in aks.by_priority(self.fakes.pools(cluster)).items()}

    @staticmethod
    def machine_of(p: dict) -> str:
        return p["vmSize"]

    @staticmethod
    def labels_of(p: dict) -> dict:
        return p["nodeLabels"]

    @staticmethod
    def tags_of(p: dict) -> dict:
        return p["tags"]

    def creates_and_deletes(self, cluster: str) -> list[tuple[str, str]]:
        """("create", pool) for each PUT of an agent pool, ("delete", pool) for each
        DELETE, in the order ARM received them."""
        return [({"PUT": "create", "DELETE": "delete"}[r["method"]],
                 r["path"].rsplit("/", 1)[-1]) for r in self.fakes.requests(cluster)
                if r["method"] in ("PUT", "DELETE") and "/agentPools/" in r["path"]]

    def inject_faults(self, cluster: str) -> None:
        """Two 429s with Retry-After on the create, one 503 on a read."""
        self.fake.inject(method="PUT", path=f"/managedClusters/{cluster}/agentPools/",
                         status=429, count=2, retry_after=1)
        self.fake.inject(method="GET", path=f"/managedClusters/{cluster}/agentPools",
                         status=503, count=1)

    @staticmethod
    def assert_settings_held(od: dict, spot: dict) -> None:
        """The floor has one node and no autoscaling; the spot pool scales 0..2, is
        deallocated when evicted (reclaim = "stop") at any price; both carry the OS SKU,
        the zones (in any order), the GPU driver and the GPU taint."""
        assert (od["count"], od["enableAutoScaling"]) == (1, False)
        assert (spot["enableAutoScaling"], spot["minCount"], spot["maxCount"]) == (True, 0, 2)
        assert spot["scaleSetEvictionPolicy"] == "Deallocate"  # reclaim = "stop"
        assert spot["spotMaxPrice"] == -1
        assert "scaleSetEvictionPolicy" not in od
        for p in (od, spot):
            assert p["osSKU"] == "Ubuntu" and sorted(p["availabilityZones"]) == ["1", "2"]
            assert p["gpuProfile"]["driver"] == "Install"
            assert "nvidia.com/gpu=present:NoSchedule" in p["nodeTaints"]


class Gke:
    """GKE: node pools of a regional cluster, read as the Container API answers them."""

    id, cloud, label = "gke", "gcp", "GKE"
    fixtures = ("gcp", "gcp_tf")
    region, gpu = gke.REGION, "L4"
    machine, machine_x2 = "g2-standard-4", "g2-standard-24"
    system_pool = "default-pool"
    settings = ('  gcp {\n    image_type         = "cos_containerd"\n'
                '    gpu_driver_version = "Latest"\n'
                '    reservation_affinity = "Specific"\n    reservation_name = "l4-floor"\n'
                '  }\n')
    respelled = ('  gcp {\n    image_type         = "COS_CONTAINERD"\n'
                 '    gpu_driver_version = "latest"\n'
                 '    reservation_affinity = "SPECIFIC"\n    reservation_name = "l4-floor"\n'
                 '  }\n')
    slow_polls, polls = 1, 0
    refusals = {
        "stockout": ["GKE answered stockout", "[GCE_STOCKOUT]",
                     "does not have enough resources available"],
        "quota": ["GKE answered quota", "Insufficient regional quota to satisfy request",
                  "NVIDIA_L4_GPUS"],
    }

    def __init__(self, fakes, tf):
        self.fakes, self.tf, self.fake = fakes, tf, fakes.gke

    def names(self, what: str) -> tuple[str, str]:
        return gke.names(self.tf, f"gke-{what}")

    def import_id(self, cluster: str, pool: str) -> str:
        return f"gcp/{PROJECT}/{self.region}/{cluster}/{pool}"

    def gpu_pools(self, cluster: str) -> dict[str, dict]:
        """Our pools by capacity: `on-demand` and `spot` (the default pool left out)."""
        return gke.by_capacity(self.fakes.pools(cluster))

    @staticmethod
    def machine_of(p: dict) -> str:
        return p["config"]["machineType"]

    @staticmethod
    def labels_of(p: dict) -> dict:
        return p["config"]["labels"]

    @staticmethod
    def tags_of(p: dict) -> dict:
        return p["config"]["resourceLabels"]

    def creates_and_deletes(self, cluster: str) -> list[tuple[str, str]]:
        """("create", pool) for each POST of a node pool, ("delete", pool) for each
        DELETE, in the order GKE received them."""
        log = []
        for r in self.fakes.requests(cluster):
            if r["method"] == "POST" and r["path"].endswith("/nodePools"):
                log.append(("create",
                            ((r.get("json") or {}).get("nodePool") or {}).get("name")))
            elif r["method"] == "DELETE":
                log.append(("delete", r["path"].rsplit("/", 1)[-1]))
        return log

    def inject_faults(self, cluster: str) -> None:
        """Two 429s with Retry-After on the create, one 503 on a read."""
        self.fake.inject(method="POST", path=f"/clusters/{cluster}/nodePools$", status=429,
                         count=2, retry_after=1)
        self.fake.inject(method="GET", path=f"/clusters/{cluster}/nodePools/", status=503,
                         count=1)

    @staticmethod
    def assert_settings_held(od: dict, spot: dict) -> None:
        """Both pools carry one L4 with the latest driver and the image type; the spot pool
        autoscales; the floor consumes the named reservation, the spot pool is left to
        GKE's default."""
        for p in (od, spot):
            acc = p["config"]["accelerators"][0]
            assert acc["acceleratorType"] == "nvidia-l4" and int(acc["acceleratorCount"]) == 1
            assert acc["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "LATEST"
            assert p["config"]["imageType"] == "COS_CONTAINERD"
        assert spot["autoscaling"]["enabled"] is True
        assert od["config"]["reservationAffinity"] == {
            "consumeReservationType": "SPECIFIC_RESERVATION",
            "key": "compute.googleapis.com/reservation-name", "values": ["l4-floor"]}
        assert "reservationAffinity" not in spot["config"]


each_cloud, cloud = per_cloud(Aks, Gke)

def workdir(c, cluster_id: str, pool: str, **kw):
    return c.tf.workdir(files={"main.tf": config(c, cluster_id, pool, **kw)})


def config(c, cluster_id: str, pool: str, **kw) -> str:
    return pool_config(c.fakes, c.cloud, cluster_id, pool, region=c.region,
                       gpu=kw.pop("gpu", c.gpu), gpu_count=kw.pop("gpu_count", 1), **kw)


def flat(res) -> str:
    """The output with Terraform's line wrapping and box margins folded into spaces."""
    return " ".join(res.output.replace("│", " ").split())


@each_cloud
def test_apply_holds_a_floor_and_a_spot_pool_and_plans_empty(cloud):
    c = cloud
    cluster, pool = c.names("apply")
    cid = c.fakes.cluster(cluster)
    wd = workdir(c, cid, pool, extra=c.settings)
    res = wd.run("apply")
    assert "Warning: gpu_node_pool." in res.output, res
    pools = c.gpu_pools(cluster)
    assert set(pools) == {"on-demand", "spot"}, pools
    od, spot = pools["on-demand"], pools["spot"]
    assert c.machine_of(od) == c.machine_of(spot) == c.machine
    c.assert_settings_held(od, spot)
    for p in (od, spot):
        labels, tags = c.labels_of(p), c.tags_of(p)
        assert labels["gpu.tf/cloud"] == c.cloud and labels["gpu.tf/pool"] == pool
        assert labels["workload"] == "training"
        assert tags["team"] == "ml" and tags["project"] == "llm"
        if c.id == "aks":
            assert tags["gpu-tf-pool"] == pool
    state = wd.resource(ADDR)
    assert state["id"] == c.import_id(cluster, pool)
    if c.id == "aks":
        assert {g["name"] for g in state["node_groups"]} == {od["name"], spot["name"]}
    assert state["monthly_usd"] > 0
    if c.id == "gke":
        # The floor's node is up: its instance group (one per zone of the floor pool)
        # runs it.
        assert len(od["instanceGroupUrls"]) == len(od["locations"]) == 1, od
    # The cloud's count of the floor pool once it is up: the one on-demand node.
    assert state["floor_nodes_up"] == 1, state
    # A second plan reads the cloud (its own spot label and GPU taint are not drift): no
    # change.
    wd.assert_plan_empty()
    if c.id == "gke":
        # The floor's node goes (the instance group has nothing running): a refresh says
        # so, and there is still nothing to change.
        c.fake.set_nodes_up(od["name"], od["locations"][0], 0)
        wd.run("refresh")
        assert wd.resource(ADDR)["floor_nodes_up"] == 0
        wd.assert_plan_empty()
        c.fake.set_nodes_up(od["name"], od["locations"][0], None)
    # Every call carried a bearer token from the local token endpoint; none went elsewhere.
    reqs = c.fakes.requests(cluster)
    assert reqs and all(r["bearer"] for r in reqs)
    if c.id == "gke":
        assert {r.get("auth") for r in reqs if r.get("auth")} == {"self-signed-jwt"}

    # In place: a label and the ceiling, on the same pools (the settings re-spelled).
    wd.path.joinpath("main.tf").write_text(config(
        c, cid, pool, max_nodes=5, labels={"workload": "inference"}, extra=c.respelled))
    wd.run("apply")
    after = c.gpu_pools(cluster)
    assert after["spot"]["name"] == spot["name"] and after["on-demand"]["name"] == od["name"]
    if c.id == "aks":
        assert after["spot"]["maxCount"] == 4
    assert c.labels_of(after["spot"])["workload"] == "inference"
    wd.assert_plan_empty()

    wd.run("destroy")
    assert c.gpu_pools(cluster) == {}
    assert c.system_pool in c.fakes.pools(cluster)  # the cluster's own pool is untouched


@each_cloud
def test_a_machine_size_roll_creates_the_new_pools_before_deleting_the_old(cloud):
    c = cloud
    cluster, pool = c.names("roll")
    cid = c.fakes.cluster(cluster)
    wd = workdir(c, cid, pool)
    wd.run("apply")
    before = c.gpu_pools(cluster)
    wd.path.joinpath("main.tf").write_text(config(c, cid, pool, gpu_count=2))
    res = wd.run("plan")
    assert "Rolls" in res.output and "must be replaced" not in res.output, res
    wd.run("apply")
    after = c.gpu_pools(cluster)
    assert {cap: c.machine_of(p) for cap, p in after.items()} == {
        "on-demand": c.machine_x2, "spot": c.machine_x2}, after
    assert {p["name"] for p in after.values()}.isdisjoint(p["name"] for p in before.values())
    # Without outage: each new pool was created before its predecessor was deleted.
    log = c.creates_and_deletes(cluster)
    for cap in ("on-demand", "spot"):
        new, old = after[cap]["name"], before[cap]["name"]
        assert log.index(("create", new)) < log.index(("delete", old)), log
    wd.assert_plan_empty()
    wd.run("destroy")


@each_cloud
def test_import_round_trip(cloud):
    c = cloud
    cluster, pool = c.names("import")
    cid = c.fakes.cluster(cluster)
    wd = workdir(c, cid, pool)
    wd.run("apply")
    applied = wd.resource(ADDR)
    fresh = workdir(c, cid, pool)
    fresh.run("import", ADDR, c.import_id(cluster, pool))
    imported = fresh.resource(ADDR)
    assert imported["region"] == c.region  # the cluster's location, read from the cloud
    assert imported["cluster"] == cid
    assert imported["node_groups"] == applied["node_groups"]
    assert imported["gpu"] == c.gpu and imported["gpu_count"] == 1
    fresh.assert_plan_empty()
    if c.id == "gke" and c.tf.version != "1.0":
        # An `import {}` block (Terraform >= 1.5) plans the same adoption, then applies it.
        block = f'import {{\n  to = {ADDR}\n  id = "{c.import_id(cluster, pool)}"\n}}\n'
        by_block = c.tf.workdir(files={"main.tf": config(c, cid, pool), "import.tf": block})
        res = by_block.run("plan")
        assert "1 to import, 0 to add, 0 to change, 0 to destroy" in res.output, res
        by_block.run("apply")
        assert by_block.resource(ADDR)["node_groups"] == applied["node_groups"]
    fresh.run("destroy")
    assert c.gpu_pools(cluster) == {}


@each_cloud
def test_throttling_and_slow_operations_converge(cloud):
    c = cloud
    cluster, pool = c.names("faults")
    cid = c.fakes.cluster(cluster)
    c.inject_faults(cluster)
    c.fake.configure({"polls": c.slow_polls})  # slow operations
    wd = workdir(c, cid, pool)
    try:
        wd.run("apply")
    finally:
        c.fake.configure({"polls": c.polls})
    assert set(c.gpu_pools(cluster)) == {"on-demand", "spot"}
    injected = [r for r in c.fakes.requests(cluster) if r.get("injected")]
    assert len(injected) == 3, injected
    wd.assert_plan_empty()
    f = _faults[c.id]
    f["runs"] += 1
    f["converged"] += 1
    f["faults"] += len(injected)
    reliability.record(
        f"{c.label} applies under throttling and slow operations converged", f["converged"],
        f["runs"], "all", True,
        f"{f['faults']} faults injected (429 with Retry-After on create, 503 on read) "
        f"and operations answering InProgress/RUNNING {c.slow_polls}x, over {f['runs']} "
        "Terraform versions; then an empty plan")
    wd.run("destroy")


@pytest.mark.parametrize("outcome", ["stockout", "quota"])
@each_cloud
def test_a_capacity_refusal_at_create_leaves_nothing_and_says_where(cloud, outcome):
    """The cloud refuses the floor pool for capacity: the apply fails with one error that
    names the outcome, the place and the cloud's own code and words; no pool of ours is
    left in the cluster and nothing is in state; with capacity back the same configuration
    applies."""
    c = cloud
    cluster, pool = c.names(outcome)
    cid = c.fakes.cluster(cluster)
    wd = workdir(c, cid, pool)
    before = set(c.fakes.pools(cluster))
    assert before == {c.system_pool}, before
    c.fake.configure({"capacity": {cluster: outcome}})
    try:
        res = wd.fails("apply")
    finally:
        c.fake.configure({"capacity": {cluster: None}})
    text = flat(res)
    assert (f"No GPU capacity for gpu_node_pool `{pool}` at {c.cloud} {c.region} "
            f"(cluster {cid})" in text), res.output
    for w in c.refusals[outcome]:
        assert w in text, (w, res.output)
    assert "Nothing of the pool" in text, res.output
    assert set(c.fakes.pools(cluster)) == before, c.fakes.pools(cluster)
    assert wd.state_resources() == []
    wd.run("apply")
    assert set(c.gpu_pools(cluster)) == {"spot", "on-demand"}
    wd.run("destroy")
