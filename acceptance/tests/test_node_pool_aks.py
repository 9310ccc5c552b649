"""`gpu_node_pool` on AKS against the ARM and Entra ID fakes (`fakes/`), through the
provider's real Azure credential chain (a client secret from the environment, the token
from the local Entra ID over HTTPS): apply, what ARM then holds (read from the fake's own
state), an empty second plan, in-place changes, a roll of the VM size without outage,
import, throttling and slow operations, destroy.
"""

from __future__ import annotations

import pytest

import reliability

from cloud_fakes import SUBSCRIPTION, TENANT, pool_config, start_azure
from export_check import export_and_adopt
from query_check import provider_head, query_and_adopt

# Across the Terraform versions: the reliability row counts every run.
_faults = {"runs": 0, "converged": 0, "faults": 0}

REGION = "eastus"
ADDR = "gpu_node_pool.train"


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    fakes = start_azure(tmp_path_factory.mktemp("azure"))
    fakes.arm.configure({"polls": 1, "retry_after": 1})
    yield fakes
    fakes.arm.stop()
    fakes.aad.stop()


@pytest.fixture
def az_tf(terraform, azure):
    terraform.env = azure.env(terraform.env)
    return terraform


def names(terraform, what: str) -> tuple[str, str]:
    v = terraform.version.replace(".", "")
    return f"{what}-tf{v}", f"{what[:10]}{v}"


def workdir(tf, azure, cluster_id, pool, **kw):
    return tf.workdir(files={"main.tf": pool_config(
        azure, "azure", cluster_id, pool, region=REGION, gpu=kw.pop("gpu", "A100-80GB"),
        gpu_count=kw.pop("gpu_count", 1), **kw)})


def by_priority(pools: dict) -> dict[str, dict]:
    """The user pools of a cluster by `scaleSetPriority` (the System pool left out)."""
    out = {}
    for name, p in pools.items():
        props = p["properties"]
        if props.get("mode") == "User":
            assert props["scaleSetPriority"] not in out, pools
            out[props["scaleSetPriority"]] = {"name": name, **props}
    return out


def test_apply_holds_a_floor_and_a_spot_pool_and_plans_empty(az_tf, azure):
    cluster, pool = names(az_tf, "aks-apply")
    cid = azure.cluster(cluster)
    wd = workdir(az_tf, azure, cid, pool, extra=(
        '  reclaim = "stop"\n'
        '  azure {\n    os_sku = "ubuntu"\n    zones  = ["2", "1"]\n  }\n'))
    res = wd.run("apply")
    assert "Warning: gpu_node_pool." in res.output, res
    pools = by_priority(azure.pools(cluster))
    assert set(pools) == {"Regular", "Spot"}, pools
    od, spot = pools["Regular"], pools["Spot"]
    assert od["vmSize"] == spot["vmSize"] == "Standard_NC24ads_A100_v4"
    assert (od["count"], od["enableAutoScaling"]) == (1, False)
    assert (spot["enableAutoScaling"], spot["minCount"], spot["maxCount"]) == (True, 0, 2)
    assert spot["scaleSetEvictionPolicy"] == "Deallocate"  # reclaim = "stop"
    assert spot["spotMaxPrice"] == -1
    assert "scaleSetEvictionPolicy" not in od
    for p in (od, spot):
        assert p["osSKU"] == "Ubuntu" and sorted(p["availabilityZones"]) == ["1", "2"]
        assert p["gpuProfile"]["driver"] == "Install"
        assert p["nodeLabels"]["gpu.tf/cloud"] == "azure"
        assert p["nodeLabels"]["gpu.tf/pool"] == pool
        assert p["nodeLabels"]["workload"] == "training"
        assert "nvidia.com/gpu=present:NoSchedule" in p["nodeTaints"]
        assert p["tags"]["team"] == "ml" and p["tags"]["project"] == "llm"
        assert p["tags"]["gpu-tf-pool"] == pool
    state = wd.resource(ADDR)
    assert state["id"] == f"azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}"
    assert {g["name"] for g in state["node_groups"]} == {od["name"], spot["name"]}
    assert state["monthly_usd"] > 0
    # AKS's count of the floor pool once it has Succeeded: the one on-demand node.
    assert state["floor_nodes_up"] == 1, state
    # A second plan reads ARM (AKS's own spot label and taint are not drift): no change.
    wd.assert_plan_empty()
    # Every call carried a bearer token from the local Entra ID; none went elsewhere.
    reqs = azure.requests(cluster)
    assert reqs and all(r["bearer"] for r in reqs)

    # In place: a label and the ceiling, on the same pools.
    wd.path.joinpath("main.tf").write_text(pool_config(
        azure, "azure", cid, pool, region=REGION, gpu="A100-80GB", gpu_count=1, max_nodes=5,
        labels={"workload": "inference"}, extra=(
            '  reclaim = "stop"\n'
            '  azure {\n    os_sku = "Ubuntu"\n    zones  = ["1", "2"]\n  }\n')))
    wd.run("apply")
    after = by_priority(azure.pools(cluster))
    assert after["Spot"]["name"] == spot["name"] and after["Regular"]["name"] == od["name"]
    assert after["Spot"]["maxCount"] == 4
    assert after["Spot"]["nodeLabels"]["workload"] == "inference"
    wd.assert_plan_empty()

    wd.run("destroy")
    assert by_priority(azure.pools(cluster)) == {}
    assert "nodepool1" in azure.pools(cluster)  # the cluster's System pool is untouched


def test_vm_size_roll_creates_the_new_pools_before_deleting_the_old(az_tf, azure):
    cluster, pool = names(az_tf, "aks-roll")
    cid = azure.cluster(cluster)
    wd = workdir(az_tf, azure, cid, pool)
    wd.run("apply")
    before = by_priority(azure.pools(cluster))
    wd.path.joinpath("main.tf").write_text(pool_config(
        azure, "azure", cid, pool, region=REGION, gpu="A100-80GB", gpu_count=2))
    res = wd.run("plan")
    assert "Rolls" in res.output and "must be replaced" not in res.output, res
    wd.run("apply")
    after = by_priority(azure.pools(cluster))
    assert after["Regular"]["vmSize"] == after["Spot"]["vmSize"] == "Standard_NC48ads_A100_v4"
    assert {p["name"] for p in after.values()}.isdisjoint(p["name"] for p in before.values())
    # Without outage: each new pool was created before its predecessor was deleted.
    log = [(r["method"], r["path"].rsplit("/", 1)[-1]) for r in azure.requests(cluster)
           if r["method"] in ("PUT", "DELETE") and "/agentPools/" in r["path"]]
    for cap in ("Regular", "Spot"):
        new, old = after[cap]["name"], before[cap]["name"]
        assert log.index(("PUT", new)) < log.index(("DELETE", old)), log
    wd.assert_plan_empty()
    wd.run("destroy")


def test_import_round_trip(az_tf, azure):
    cluster, pool = names(az_tf, "aks-import")
    cid = azure.cluster(cluster)
    wd = workdir(az_tf, azure, cid, pool)
    wd.run("apply")
    applied = wd.resource(ADDR)
    fresh = workdir(az_tf, azure, cid, pool)
    fresh.run("import", ADDR, f"azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}")
    imported = fresh.resource(ADDR)
    assert imported["region"] == REGION  # the cluster's location, read from ARM
    assert imported["cluster"] == cid
    assert imported["node_groups"] == applied["node_groups"]
    assert imported["gpu"] == "A100-80GB" and imported["gpu_count"] == 1
    fresh.assert_plan_empty()
    fresh.run("destroy")
    assert by_priority(azure.pools(cluster)) == {}


@pytest.mark.tf_min("1.5")
def test_export_writes_the_pool_as_an_import_and_configuration(az_tf, azure, provider_bin):
    cluster, pool = names(az_tf, "aks-export")
    cid = azure.cluster(cluster)
    wd = workdir(az_tf, azure, cid, pool)
    wd.run("apply")
    applied = wd.resource(ADDR)
    text, adopted = export_and_adopt(
        az_tf, provider_bin, az_tf.env,
        ["--clouds", "azure", "--kinds", "node_pool", "--cluster", cid,
         "--azure-subscription", SUBSCRIPTION, "--azure-tenant", TENANT,
         "--azure-endpoint", azure.arm.url], imports=1)
    assert f'id = "azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}"' in text, text
    assert "client_secret" not in text and azure.client_secret not in text
    assert adopted.resource(f"gpu_node_pool.{pool}")["node_groups"] == applied["node_groups"]
    if az_tf.version != "1.0":
        # `terraform query` lists the same pool by identity; its generated configuration
        # imports it with nothing else planned; that second state then forgets it.
        lists = ('list "gpu_node_pool" "aks" {\n  provider = gpu\n  config {\n'
                 f'    clusters = ["{cid}"]\n  }}\n}}\n')
        listing, generated, queried = query_and_adopt(az_tf, provider_head(text), lists, 1)
        assert f"import_id=azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}" in listing, listing
        assert azure.client_secret not in generated and azure.client_secret not in listing
        assert queried.resource("gpu_node_pool.aks_0")["node_groups"] == \
            applied["node_groups"]
        queried.run("state", "rm", "gpu_node_pool.aks_0")
    adopted.run("destroy")
    assert by_priority(azure.pools(cluster)) == {}


def test_throttling_and_slow_operations_converge(az_tf, azure):
    cluster, pool = names(az_tf, "aks-faults")
    cid = azure.cluster(cluster)
    azure.arm.inject(method="PUT", path=f"/managedClusters/{cluster}/agentPools/", status=429,
                     count=2, retry_after=1)
    azure.arm.inject(method="GET", path=f"/managedClusters/{cluster}/agentPools", status=503,
                     count=1)
    azure.arm.configure({"polls": 3})  # slow operations
    wd = workdir(az_tf, azure, cid, pool)
    try:
        wd.run("apply")
    finally:
        azure.arm.configure({"polls": 1})
    assert set(by_priority(azure.pools(cluster))) == {"Regular", "Spot"}
    injected = [r for r in azure.requests(cluster) if r.get("injected")]
    assert len(injected) == 3, injected
    wd.assert_plan_empty()
    _faults["runs"] += 1
    _faults["converged"] += 1
    _faults["faults"] += len(injected)
    reliability.record(
        "AKS applies under throttling and slow operations converged", _faults["converged"],
        _faults["runs"], "all", True,
        f"{_faults['faults']} faults injected (429 with Retry-After on create, 503 on read) "
        f"and operations answering InProgress/RUNNING 3x, over {_faults['runs']} "
        "Terraform versions; then an empty plan")
    wd.run("destroy")


def test_a_floor_on_a_capacity_reservation_is_placed_in_its_group(az_tf, azure):
    """`reservation` of kind azure_capacity_reservation: the on-demand agent pool carries
    the commitment's capacity reservation group, the spot pool none; the floor is priced
    at the commitment's rate; nothing changes on a second plan."""
    cluster, pool = names(az_tf, "aks-crg")
    cid = azure.cluster(cluster)
    group = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/ml/providers/Microsoft.Compute/"
             "capacityReservationGroups/gpu-tf-0123456789abcdef")
    wd = workdir(az_tf, azure, cid, pool, extra=(
        '  reservation {\n'
        f'    commitment_id    = "{group}/capacityReservations/gpu-tf-0123456789abcdef"\n'
        '    kind             = "azure_capacity_reservation"\n'
        '    usd_per_gpu_hour = 3.5\n  }\n'))
    wd.run("apply")
    pools = by_priority(azure.pools(cluster))
    assert pools["Regular"]["capacityReservationGroupID"].lower() == group.lower(), pools
    assert "capacityReservationGroupID" not in pools["Spot"], pools
    s = wd.resource(ADDR)
    assert s["hourly_usd"] == pytest.approx(3.5), s  # 1 reserved node of 1 GPU, spot min 0
    assert "1 reserved + up to 2 spot" in s["cost_summary"], s
    assert "azure_capacity_reservation" in s["price_source"], s
    wd.assert_plan_empty()
    wd.run("destroy", "-auto-approve")
    assert by_priority(azure.pools(cluster)) == {}


def flat(res) -> str:
    """The output with Terraform's line wrapping and box margins folded into spaces."""
    return " ".join(res.output.replace("│", " ").split())


@pytest.mark.parametrize("outcome, words", [
    ("stockout", ["AKS answered stockout", "AllocationFailed",
                  "We do not have sufficient capacity for the requested VM size"]),
    ("quota", ["AKS answered quota", "QuotaExceeded", "Cores quota"]),
])
def test_a_capacity_refusal_at_create_leaves_nothing_and_says_where(az_tf, azure, outcome,
                                                                      words):
    """AKS refuses the floor pool for capacity: one error naming the outcome, the place and
    ARM's own code and words; no agent pool of ours is left and nothing is in state; with
    capacity back the same configuration applies."""
    cluster, pool = names(az_tf, f"aks-{outcome}")
    cid = azure.cluster(cluster)
    wd = workdir(az_tf, azure, cid, pool)
    before = set(azure.pools(cluster))
    azure.arm.configure({"capacity": {cluster: outcome}})
    try:
        res = wd.fails("apply")
    finally:
        azure.arm.configure({"capacity": {cluster: None}})
    text = flat(res)
    assert (f"No GPU capacity for gpu_node_pool `{pool}` at azure {REGION} (cluster {cid})"
            in text), res.output
    for w in words:
        assert w in text, (w, res.output)
    assert "Nothing of the pool" in text, res.output
    assert set(azure.pools(cluster)) == before, azure.pools(cluster)
    assert wd.state_resources() == []
    wd.run("apply")
    assert set(by_priority(azure.pools(cluster))) == {"Spot", "Regular"}
    wd.run("destroy")
