"""`gpu_node_pool` on GKE against the Container API and Google OAuth fakes (`fakes/`),
through the provider's real Google credential chain (Application Default Credentials from
a service account key file): apply, what GKE then holds (read from the fake's own state),
an empty second plan, in-place changes, a roll of the machine type without outage,
import, throttling and slow operations, destroy.
"""

from __future__ import annotations

import json
import subprocess

import pytest

import reliability

from cloud_fakes import PROJECT, pool_config, start_gcp

# Across the Terraform versions: the reliability row counts every run.
_faults = {"runs": 0, "converged": 0, "faults": 0}

REGION = "us-central1"
ADDR = "gpu_node_pool.train"


@pytest.fixture(scope="module")
def gcp(tmp_path_factory):
    fakes = start_gcp(tmp_path_factory.mktemp("gcp"))
    fakes.gke.configure({"polls": 0})
    yield fakes
    fakes.gke.stop()
    fakes.oauth.stop()


@pytest.fixture
def gcp_tf(terraform, gcp):
    terraform.env = gcp.env(terraform.env)
    return terraform


def names(terraform, what: str) -> tuple[str, str]:
    v = terraform.version.replace(".", "")
    return f"{what}-tf{v}", f"{what}{v}"


def workdir(tf, gcp, cluster_id, pool, **kw):
    return tf.workdir(files={"main.tf": pool_config(
        gcp, "gcp", cluster_id, pool, region=REGION, gpu=kw.pop("gpu", "L4"),
        gpu_count=kw.pop("gpu_count", 1), **kw)})


def by_capacity(pools: dict) -> dict[str, dict]:
    """The GPU pools of a cluster by capacity (`spot` or `on-demand`); the cluster's
    default pool left out."""
    out = {}
    for name, p in pools.items():
        if not p["config"].get("accelerators"):
            continue
        cap = "spot" if p["config"].get("spot") else "on-demand"
        assert cap not in out, pools
        out[cap] = p
    return out


def test_apply_holds_a_floor_and_a_spot_pool_and_plans_empty(gcp_tf, gcp):
    cluster, pool = names(gcp_tf, "gke-apply")
    cid = gcp.cluster(cluster)
    wd = workdir(gcp_tf, gcp, cid, pool, extra=(
        '  gcp {\n    image_type         = "cos_containerd"\n'
        '    gpu_driver_version = "Latest"\n'
        '    reservation_affinity = "Specific"\n    reservation_name = "l4-floor"\n  }\n'))
    res = wd.run("apply")
    assert "Warning: gpu_node_pool." in res.output, res
    pools = by_capacity(gcp.pools(cluster))
    assert set(pools) == {"spot", "on-demand"}, pools
    od, spot = pools["on-demand"], pools["spot"]
    assert od["config"]["machineType"] == spot["config"]["machineType"] == "g2-standard-4"
    for p in (od, spot):
        acc = p["config"]["accelerators"][0]
        assert acc["acceleratorType"] == "nvidia-l4" and int(acc["acceleratorCount"]) == 1
        assert acc["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "LATEST"
        assert p["config"]["imageType"] == "COS_CONTAINERD"
        labels = p["config"]["labels"]
        assert labels["gpu.tf/cloud"] == "gcp" and labels["gpu.tf/pool"] == pool
        assert labels["workload"] == "training"
        tags = p["config"]["resourceLabels"]
        assert tags["team"] == "ml" and tags["project"] == "llm"
    assert spot["autoscaling"]["enabled"] is True
    # The floor consumes the named reservation; the spot pool is left to GKE's default.
    assert od["config"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name", "values": ["l4-floor"]}
    assert "reservationAffinity" not in spot["config"]
    state = wd.resource(ADDR)
    assert state["id"] == f"gcp/{PROJECT}/{REGION}/{cluster}/{pool}"
    assert state["monthly_usd"] > 0
    # The floor's node is up: its instance group (one per zone of the floor pool) runs it.
    assert len(od["instanceGroupUrls"]) == len(od["locations"]) == 1, od
    assert state["floor_nodes_up"] == 1, state
    # GKE's own spot label and GPU taint are not drift: the second plan is empty.
    wd.assert_plan_empty()
    # The floor's node goes (the instance group has nothing running): a refresh says so,
    # and there is still nothing to change.
    gcp.gke.set_nodes_up(od["name"], od["locations"][0], 0)
    wd.run("refresh")
    assert wd.resource(ADDR)["floor_nodes_up"] == 0
    wd.assert_plan_empty()
    gcp.gke.set_nodes_up(od["name"], od["locations"][0], None)
    reqs = gcp.requests(cluster)
    assert reqs and all(r["bearer"] for r in reqs)
    assert {r.get("auth") for r in reqs if r.get("auth")} == {"self-signed-jwt"}

    # In place: a label and the ceiling, on the same pools.
    wd.path.joinpath("main.tf").write_text(pool_config(
        gcp, "gcp", cid, pool, region=REGION, gpu="L4", gpu_count=1, max_nodes=5,
        labels={"workload": "inference"}, extra=(
            '  gcp {\n    image_type         = "COS_CONTAINERD"\n'
            '    gpu_driver_version = "latest"\n'
            '    reservation_affinity = "SPECIFIC"\n    reservation_name = "l4-floor"\n  }\n')))
    wd.run("apply")
    after = by_capacity(gcp.pools(cluster))
    assert after["spot"]["name"] == spot["name"] and after["on-demand"]["name"] == od["name"]
    assert after["spot"]["config"]["labels"]["workload"] == "inference"
    wd.assert_plan_empty()

    wd.run("destroy")
    assert by_capacity(gcp.pools(cluster)) == {}
    assert "default-pool" in gcp.pools(cluster)


def test_machine_type_roll_creates_the_new_pools_before_deleting_the_old(gcp_tf, gcp):
    cluster, pool = names(gcp_tf, "gke-roll")
    cid = gcp.cluster(cluster)
    wd = workdir(gcp_tf, gcp, cid, pool)
    wd.run("apply")
    before = by_capacity(gcp.pools(cluster))
    wd.path.joinpath("main.tf").write_text(pool_config(
        gcp, "gcp", cid, pool, region=REGION, gpu="L4", gpu_count=2))
    res = wd.run("plan")
    assert "Rolls" in res.output and "must be replaced" not in res.output, res
    wd.run("apply")
    after = by_capacity(gcp.pools(cluster))
    assert {p["config"]["machineType"] for p in after.values()} == {"g2-standard-24"}
    assert {p["name"] for p in after.values()}.isdisjoint(p["name"] for p in before.values())
    # Without outage: each new pool was created before its predecessor was deleted.
    log = []
    for r in gcp.requests(cluster):
        if r["method"] == "POST" and r["path"].endswith("/nodePools"):
            log.append(("create", ((r.get("json") or {}).get("nodePool") or {}).get("name")))
        elif r["method"] == "DELETE":
            log.append(("delete", r["path"].rsplit("/", 1)[-1]))
    for cap in ("spot", "on-demand"):
        new, old = after[cap]["name"], before[cap]["name"]
        assert log.index(("create", new)) < log.index(("delete", old)), log
    wd.assert_plan_empty()
    wd.run("destroy")


def test_import_round_trip(gcp_tf, gcp):
    cluster, pool = names(gcp_tf, "gke-import")
    cid = gcp.cluster(cluster)
    wd = workdir(gcp_tf, gcp, cid, pool)
    wd.run("apply")
    applied = wd.resource(ADDR)
    fresh = workdir(gcp_tf, gcp, cid, pool)
    fresh.run("import", ADDR, f"gcp/{PROJECT}/{REGION}/{cluster}/{pool}")
    imported = fresh.resource(ADDR)
    assert imported["region"] == REGION and imported["cluster"] == cid
    assert imported["node_groups"] == applied["node_groups"]
    assert imported["gpu"] == "L4" and imported["gpu_count"] == 1
    fresh.assert_plan_empty()
    if gcp_tf.version != "1.0":
        # An `import {}` block (Terraform >= 1.5) plans the same adoption, then applies it.
        block = f'import {{\n  to = {ADDR}\n  id = "gcp/{PROJECT}/{REGION}/{cluster}/{pool}"\n}}\n'
        by_block = gcp_tf.workdir(files={
            "main.tf": pool_config(gcp, "gcp", cid, pool, region=REGION, gpu="L4",
                                   gpu_count=1),
            "import.tf": block})
        res = by_block.run("plan")
        assert "1 to import, 0 to add, 0 to change, 0 to destroy" in res.output, res
        by_block.run("apply")
        assert by_block.resource(ADDR)["node_groups"] == applied["node_groups"]
    fresh.run("destroy")
    assert by_capacity(gcp.pools(cluster)) == {}


def test_throttling_and_slow_operations_converge(gcp_tf, gcp):
    cluster, pool = names(gcp_tf, "gke-faults")
    cid = gcp.cluster(cluster)
    gcp.gke.inject(method="POST", path=f"/clusters/{cluster}/nodePools$", status=429,
                   count=2, retry_after=1)
    gcp.gke.inject(method="GET", path=f"/clusters/{cluster}/nodePools/", status=503, count=1)
    gcp.gke.configure({"polls": 1})  # slow operations
    wd = workdir(gcp_tf, gcp, cid, pool)
    try:
        wd.run("apply")
    finally:
        gcp.gke.configure({"polls": 0})
    assert set(by_capacity(gcp.pools(cluster))) == {"spot", "on-demand"}
    injected = [r for r in gcp.requests(cluster) if r.get("injected")]
    assert len(injected) == 3, injected
    wd.assert_plan_empty()
    _faults["runs"] += 1
    _faults["converged"] += 1
    _faults["faults"] += len(injected)
    reliability.record(
        "GKE applies under throttling and slow operations converged", _faults["converged"],
        _faults["runs"], "all", True,
        f"{_faults['faults']} faults injected (429 with Retry-After on create, 503 on read) "
        f"and operations answering InProgress/RUNNING 1x, over {_faults['runs']} "
        "Terraform versions; then an empty plan")
    wd.run("destroy")


def flat(res) -> str:
    """The output with Terraform's line wrapping and box margins folded into spaces."""
    return " ".join(res.output.replace("│", " ").split())


@pytest.mark.parametrize("outcome, words", [
    ("stockout", ["GKE answered stockout", "[GCE_STOCKOUT]",
                  "does not have enough resources available"]),
    ("quota", ["GKE answered quota", "Insufficient regional quota to satisfy request",
               "NVIDIA_L4_GPUS"]),
])
def test_a_capacity_refusal_at_create_leaves_nothing_and_says_where(gcp_tf, gcp, outcome,
                                                                      words):
    """GKE refuses the floor pool for capacity: the apply fails with one error that names
    the outcome, the place and GKE's own words; no pool of ours is left in the cluster and
    nothing is in state; with capacity back the same configuration applies."""
    cluster, pool = names(gcp_tf, f"gke-{outcome}")
    cid = gcp.cluster(cluster)
    wd = workdir(gcp_tf, gcp, cid, pool)
    gcp.gke.configure({"capacity": {cluster: outcome}})
    try:
        res = wd.fails("apply")
    finally:
        gcp.gke.configure({"capacity": {cluster: None}})
    text = flat(res)
    assert (f"No GPU capacity for gpu_node_pool `{pool}` at gcp {REGION} (cluster {cid})"
            in text), res.output
    for w in words:
        assert w in text, (w, res.output)
    assert "Nothing of the pool" in text, res.output
    assert set(gcp.pools(cluster)) == {"default-pool"}, gcp.pools(cluster)
    assert wd.state_resources() == []
    wd.run("apply")
    assert set(by_capacity(gcp.pools(cluster))) == {"spot", "on-demand"}
    wd.run("destroy")


def test_the_record_says_the_refusal_and_the_time_to_ready_and_the_reports_read_it(
        gcp_tf, gcp, provider_bin, tmp_path):
    """With `GPU_TF_EVENTS_FILE`, a stockout and then a create that succeeds leave four JSON
    lines (request, capacity, request, ready); the state's `time_to_ready_seconds` is the
    ready line's; `report time-to-gpu` and `report capacity` read the file."""
    events = tmp_path / "events.jsonl"
    gcp_tf.env = {**gcp_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    cluster, pool = names(gcp_tf, "gke-record")
    cid = gcp.cluster(cluster)
    wd = workdir(gcp_tf, gcp, cid, pool)
    gcp.gke.configure({"capacity": {cluster: "stockout"}})
    try:
        wd.fails("apply")
    finally:
        gcp.gke.configure({"capacity": {cluster: None}})
    wd.run("apply")
    every = [json.loads(line) for line in events.read_text().splitlines()]
    lines = [e for e in every if e["event"] != "audit"]
    assert [e["event"] for e in lines] == ["request", "capacity", "request", "ready"], lines
    # GKE accepts the create and answers the stockout in its operation: the audit shows the
    # accepted create, the clean-up (the second group was never made), then the two
    # creates of the apply that succeeds.
    audited = [(e["action"], e["result"]) for e in every if e["event"] == "audit"]
    assert audited == [("create_node_group", "ok"), ("delete_node_group", "ok"),
                       ("delete_node_group", "not_found"), ("create_node_group", "ok"),
                       ("create_node_group", "ok")], audited
    for e in lines:
        assert (e["cloud"], e["region"], e["gpu"]) == ("gcp", REGION, "L4"), e
        assert e["resource"] == f"gpu_node_pool.{pool}" and e["at"].endswith("Z"), e
    assert lines[1]["outcome"] == "stockout" and "GCE_STOCKOUT" in lines[1]["detail"]
    ready = lines[3]["seconds"]
    assert ready >= 0
    assert wd.resource("gpu_node_pool.train")["time_to_ready_seconds"] == ready
    wd.assert_plan_empty()

    def report(*args):
        out = subprocess.run([str(provider_bin), "report", *args, "--events", str(events)],
                             capture_output=True, text=True, timeout=30, check=True)
        return out.stdout
    table = report("time-to-gpu")
    assert table.splitlines()[0].split() == ["CLOUD", "REGION", "GPU", "COUNT", "P50_S",
                                             "P90_S", "MAX_S"], table
    assert table.splitlines()[1].split()[:4] == ["gcp", REGION, "L4", "1"], table
    rows = json.loads(report("time-to-gpu", "--format", "json"))
    assert rows[0]["max"] == ready and rows[-1]["cloud"] == "all"
    capacity = report("capacity")
    assert capacity.splitlines()[1].split()[1:] == ["gcp", REGION, "-", "stockout", "1"], capacity
    wd.run("destroy")
