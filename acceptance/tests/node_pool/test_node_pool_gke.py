"""`gpu_node_pool` on GKE where only GKE has it, against the Container API and Google OAuth
fakes (`fakes/`), through the provider's real Google credential chain (Application Default
Credentials from a service account key file): with `GPU_TF_EVENTS_FILE`, a stockout and then
a create that succeeds are recorded (request, capacity, request, ready, and the audit of each
call), the state's `time_to_ready_seconds` is the ready line's, and `report time-to-gpu` and
`report capacity` read the file.

The promises GKE shares with AKS (apply holds a floor and a spot pool and plans empty,
in-place changes, a roll of the machine type without outage, import, throttling and slow
operations, a capacity refusal at create) are tested once for both clouds in
`test_node_pool_aks_gke.py`, on the fixtures and helpers defined here (`gcp`, `gcp_tf`,
`names`, `workdir`, `by_capacity`).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from cloud_fakes import pool_config, start_gcp

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
