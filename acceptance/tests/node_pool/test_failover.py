"""examples/failover applied for real: a pool whose own place (a GKE cluster) answers
with a stockout lands on its failover place (an AKS cluster), with the GKE and AKS fakes'
own state checked after each step; the next plan is empty and warns where the pool runs;
every place out is one error listing each attempt, with nothing left anywhere; and
`failback = "on_apply"` moves the pool back new-before-old once GKE has capacity again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

import reliability
from cloud_fakes import start_azure, start_gcp
from conftest import at_real_time

# Mostly waits (alone, 120 s wall, 28 s of CPU: a capacity_wait and Ctrl-C at real time):
# `make acceptance` runs it with more workers than cores (README.md, "Scheduling").
pytestmark = pytest.mark.waits

# Across the Terraform versions: the reliability rows count every run.
_rows = {"landed": 0, "landed_runs": 0, "clean": 0, "clean_runs": 0}

EXAMPLE = "failover"
ADDR = "gpu_node_pool.train"
# The catalog's 8x H100 sizes in eastus, allowed in the fake's cluster.
AZURE_H100 = ["Standard_ND96is_H100_v5", "Standard_ND96is_flex_H100_v5",
              "Standard_ND96is_noIB_H100_v5", "Standard_ND96isf_H100_v5",
              "Standard_ND96isr_H100_v5"]


@pytest.fixture(scope="module")
def clouds(tmp_path_factory):
    azure = start_azure(tmp_path_factory.mktemp("azure"))
    azure.arm.configure({"polls": 1, "retry_after": 1})
    gcp = start_gcp(tmp_path_factory.mktemp("gcp"))
    gcp.gke.configure({"polls": 0})
    yield azure, gcp
    for f in (azure.arm, azure.aad, gcp.gke, gcp.oauth):
        f.stop()


def flat(res) -> str:
    """The output with Terraform's line wrapping and box margins folded into spaces."""
    return " ".join(res.output.replace("│", " ").split())


def gpu_pools(pools: dict) -> set[str]:
    """The names of a cluster's pools made by the provider (the seeded system pools left
    out: they carry no GPU)."""
    out = set()
    for name, p in pools.items():
        props = p.get("properties", p)
        config = p.get("config", {})
        if config.get("accelerators") or props.get("tags", {}).get("gpu-tf-pool"):
            out.add(name)
    return out


def setup(terraform, clouds, tmp_path, what: str, **variables):
    azure, gcp = clouds
    v = terraform.version.replace(".", "")
    terraform.env = gcp.env(azure.env(terraform.env))
    events = tmp_path / "events.jsonl"
    terraform.env = {**terraform.env, "GPU_TF_EVENTS_FILE": str(events)}
    gke_name, aks_name = f"{what}-gke-tf{v}", f"{what}-aks-tf{v}"
    gke_id = gcp.cluster(gke_name)
    aks_id = azure.cluster(aks_name, vm_sizes=AZURE_H100)
    tfvars = {"gke_cluster": gke_id, "aks_cluster_id": aks_id,
              "azure_endpoint": azure.arm.url, "gcp_endpoint": gcp.gke.url, **variables}
    wd = terraform.workdir(EXAMPLE, files={"terraform.tfvars.json": json.dumps(tfvars)})
    return wd, gke_name, aks_name, gke_id, aks_id, events


def test_a_stockout_on_gke_lands_on_aks_and_later_plans_are_empty(terraform, clouds,
                                                                  tmp_path):
    azure, gcp = clouds
    wd, gke, aks, gke_id, aks_id, events = setup(terraform, clouds, tmp_path, "fo")
    plan = wd.run("plan")
    print("plan output:\n", plan.output)
    text = flat(plan)
    assert "at gcp us-central1" in text and "if it fails over to azure eastus" in text, text
    assert "gcp us-central1 → azure eastus" in text, text

    gcp.gke.configure({"capacity": {gke: "stockout"}})
    try:
        res = wd.run("apply")
    finally:
        gcp.gke.configure({"capacity": {gke: None}})
    state = wd.resource(ADDR)
    # Where it landed, and what each place answered.
    assert state["placement"]["cloud"] == "azure", state["placement"]
    assert state["placement"]["cluster"] == aks_id
    assert state["placement"]["instance_type"].startswith("Standard_ND96"), state["placement"]
    assert state["placement"]["since"], state["placement"]
    outcomes = [(a["cloud"], a["region"], a["outcome"]) for a in state["attempts"]]
    assert outcomes == [("gcp", "us-central1", "stockout"), ("azure", "eastus", "ready")], \
        state["attempts"]
    assert "GCE_STOCKOUT" in state["attempts"][0]["detail"], state["attempts"]
    # The user's own place stays as written; the pool is AKS's.
    assert state["cloud"] == "gcp" and state["cluster"] == gke_id
    assert state["id"].startswith("azure/"), state["id"]
    assert state["time_to_ready_seconds"] > 0
    # GKE was left as it was, AKS holds the pool's two agent pools.
    assert gpu_pools(gcp.pools(gke)) == set(), gcp.pools(gke)
    assert len(gpu_pools(azure.pools(aks))) == 2, azure.pools(aks)
    print("apply output:\n", res.output)
    print("attempts:", json.dumps(state["attempts"], indent=2))

    # Sticky: the next plan is empty, with a warning that says where and why.
    plan = wd.run("plan", "-detailed-exitcode", rc=0)
    text = flat(plan)
    assert "runs on its failover place azure eastus" in text, text
    assert "gcp us-central1 answered stockout" in text, text
    # The failover place in another spelling is the same place: still no change.
    main = wd.path / "main.tf"
    original = main.read_text()
    respelled = original.replace('cloud   = "azure"', 'cloud   = "AZURE"').replace(
        'region  = "eastus"', 'region  = "EastUS"')
    assert respelled != original
    main.write_text(respelled)
    wd.run("plan", "-detailed-exitcode", rc=0)
    main.write_text(original)

    # The record: request and stockout at GKE, failover, request and ready at AKS.
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    lines = [e for e in lines if e["event"] != "audit"]
    assert [(e["event"], e["cloud"]) for e in lines] == [
        ("request", "gcp"), ("capacity", "gcp"), ("failover", "azure"),
        ("request", "azure"), ("ready", "azure")], lines
    assert lines[1]["outcome"] == "stockout"
    assert lines[-1]["seconds"] == state["time_to_ready_seconds"]
    print("events file:", events)

    wd.run("destroy")
    assert gpu_pools(azure.pools(aks)) == set(), azure.pools(aks)
    assert wd.state_resources() == []
    _rows["landed_runs"] += 1
    _rows["landed"] += 1
    reliability.record(
        "Failover: a stockout at the first place lands the pool on the next", _rows["landed"],
        _rows["landed_runs"], "all", True,
        "GKE answering GCE_STOCKOUT on create; the pool up on AKS, nothing left on GKE, "
        "the next plan empty, over each Terraform version")


def test_every_place_out_is_one_error_and_nothing_is_left_anywhere(terraform, clouds,
                                                                   tmp_path):
    azure, gcp = clouds
    wd, gke, aks, gke_id, aks_id, _ = setup(terraform, clouds, tmp_path, "fx")
    gcp.gke.configure({"capacity": {gke: "stockout"}})
    azure.arm.configure({"capacity": {aks: "quota"}})
    try:
        res = wd.fails("apply")
    finally:
        gcp.gke.configure({"capacity": {gke: None}})
        azure.arm.configure({"capacity": {aks: None}})
    text = flat(res)
    assert "No GPU capacity for gpu_node_pool `train` at any of its 2 places" in text, text
    assert f"gcp us-central1 (cluster {gke_id}): stockout" in text, text
    assert f"azure eastus (cluster {aks_id}): quota" in text, text
    assert text.count("Error:") == 1, text
    assert gpu_pools(gcp.pools(gke)) == set(), gcp.pools(gke)
    assert gpu_pools(azure.pools(aks)) == set(), azure.pools(aks)
    assert wd.state_resources() == []
    _rows["clean_runs"] += 1
    _rows["clean"] += 1
    reliability.record(
        "Failover: every place out leaves nothing anywhere", _rows["clean"],
        _rows["clean_runs"], "all", True,
        "GKE stockout and AKS QuotaExceeded on create: one error, no pool of ours in either "
        "cluster, nothing in state")


def test_failback_on_apply_returns_new_before_old(terraform, clouds, tmp_path):
    azure, gcp = clouds
    wd, gke, aks, gke_id, aks_id, events = setup(terraform, clouds, tmp_path, "fb",
                                                 failback="on_apply")
    gcp.gke.configure({"capacity": {gke: "stockout"}})
    try:
        wd.run("apply")
        assert wd.resource(ADDR)["placement"]["cloud"] == "azure"
        # GKE still out: the plan says it tries to return; the apply stays and says so.
        plan = wd.run("plan", "-detailed-exitcode", rc=2)
        assert "tries to return to gcp us-central1" in flat(plan), plan.output
        res = wd.run("apply")
        assert "stays on azure eastus" in flat(res), res.output
        assert wd.resource(ADDR)["placement"]["cloud"] == "azure"
        assert gpu_pools(gcp.pools(gke)) == set(), gcp.pools(gke)
    finally:
        gcp.gke.configure({"capacity": {gke: None}})
    # GKE has capacity again: created there first, then deleted from AKS.
    wd.run("apply")
    state = wd.resource(ADDR)
    assert state["placement"]["cloud"] == "gcp", state["placement"]
    assert [a["outcome"] for a in state["attempts"]] == ["ready"]
    assert len(gpu_pools(gcp.pools(gke))) == 2, gcp.pools(gke)
    assert gpu_pools(azure.pools(aks)) == set(), azure.pools(aks)
    # New before old: the last GKE create came before the first AKS delete of the move.
    gke_creates = [r["at"] for r in gcp.requests(gke)
                   if r["method"] == "POST" and r["path"].endswith("/nodePools")]
    aks_deletes = [r["at"] for r in azure.requests(aks) if r["method"] == "DELETE"]
    assert gke_creates and aks_deletes and max(gke_creates) < min(aks_deletes), \
        (gke_creates, aks_deletes)
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert any(e["event"] == "failback" and e["cloud"] == "gcp" for e in lines), lines
    # Home again: plans are empty, failback or not.
    wd.assert_plan_empty()
    wd.run("destroy")
    assert gpu_pools(gcp.pools(gke)) == set()


def test_a_floor_not_up_within_capacity_wait_is_a_timeout_and_the_next_place_is_tried(
        terraform, clouds, tmp_path):
    """GKE's create operations run for four times `capacity_wait`: GKE counts as `timeout`,
    what was made there is deleted (once GKE lets a delete in), and the pool lands on AKS.
    Under Terraform 1.15 the provider and the fakes run in real time
    (`GPU_TF_TIME_SCALE=1`, `capacity_wait` 5 s): the suite's `capacity_wait` timeout that
    proves real time. Under 1.0 at the suite's scale, with `capacity_wait` 60 s: an
    attempt's seconds are cloud time, and at 0.01 every real millisecond of Terraform,
    the provider and the fakes counts as 0.1 s of it, so a 5 s wait (50 ms of real time)
    would leave AKS no time to answer."""
    azure, gcp = clouds
    real = terraform.version == "1.15"
    wait = 5 if real else 60
    wd, gke, aks, gke_id, aks_id, _ = setup(terraform, clouds, tmp_path, "ft",
                                            capacity_wait=f"{wait}s")
    scales = (gcp.gke.time_scale, azure.arm.time_scale)
    if real:
        wd.tf.env = at_real_time(wd.tf.env)
        gcp.gke.time_scale = azure.arm.time_scale = 1.0
    gcp.gke.configure({"polls": 10_000, "op_seconds": 4 * wait})
    try:
        wd.run("apply", timeout=600)
    finally:
        gcp.gke.configure({"polls": 0, "op_seconds": 10})
        gcp.gke.time_scale, azure.arm.time_scale = scales
    state = wd.resource(ADDR)
    assert [a["outcome"] for a in state["attempts"]] == ["timeout", "ready"], state["attempts"]
    assert wait <= state["attempts"][0]["seconds"] < wait + 55, state["attempts"]
    assert state["placement"]["cloud"] == "azure"
    assert gpu_pools(gcp.pools(gke)) == set(), gcp.pools(gke)
    assert len(gpu_pools(azure.pools(aks))) == 2
    wd.assert_plan_empty()
    wd.run("destroy")


def _start_apply(wd) -> subprocess.Popen:
    return subprocess.Popen(
        [str(wd.tf.bin), "apply", "-no-color", "-input=false", "-auto-approve"],
        cwd=wd.path, env=wd.tf.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait_for(cond, what: str, timeout: float = 120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGKILL"])
def test_ctrl_c_or_sigkill_mid_failover_leaves_state_matching_the_clouds(
        terraform, clouds, tmp_path, signal_name):
    """GKE says stockout, and AKS is slow: the apply is interrupted while it waits at AKS.
    Ctrl-C (Terraform's StopProvider) fails the apply with the AKS pools that exist in
    state at their placement; SIGKILL of the provider leaves no state, and the next apply
    deletes what the killed one made before it makes the pool again. Either way the next
    apply converges, nothing of the pool is left on GKE, and only the state's pools on
    AKS."""
    azure, gcp = clouds
    wd, gke, aks, gke_id, aks_id, _ = setup(terraform, clouds, tmp_path,
                                            "fi" if signal_name == "SIGINT" else "fk")
    gcp.gke.configure({"capacity": {gke: "stockout"}})
    # AKS never finishes while the apply runs (cloud time: 100 minutes).
    azure.arm.configure({"polls": 10_000, "op_seconds": 6000})
    try:
        proc = _start_apply(wd)
        try:
            _wait_for(lambda: len(gpu_pools(azure.pools(aks))) >= 1, "an AKS pool being made")
            time.sleep(1)
            if signal_name == "SIGINT":
                os.killpg(proc.pid, signal.SIGINT)
            else:
                for pid in _provider_pids(proc.pid):
                    os.kill(pid, signal.SIGKILL)
            out, _ = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode != 0, out
        made = gpu_pools(azure.pools(aks))
        resources = wd.state_resources()
        if signal_name == "SIGINT":
            state = wd.resource(ADDR)
            assert state["placement"]["cloud"] == "azure", state
            assert {g["name"] for g in state["node_groups"]} == made, (state, made)
        else:
            assert resources == [], resources
        assert gpu_pools(gcp.pools(gke)) == set(), gcp.pools(gke)
    finally:
        azure.arm.configure({"polls": 1, "op_seconds": 10})
    # The next apply converges (GKE still out: the pool stays on AKS).
    try:
        wd.run("apply", timeout=600)
    finally:
        gcp.gke.configure({"capacity": {gke: None}})
    state = wd.resource(ADDR)
    assert state["placement"]["cloud"] == "azure"
    assert {g["name"] for g in state["node_groups"]} == gpu_pools(azure.pools(aks))
    assert len(gpu_pools(azure.pools(aks))) == 2
    assert gpu_pools(gcp.pools(gke)) == set()
    wd.assert_plan_empty()
    wd.run("destroy")


def _provider_pids(ancestor: int) -> list[int]:
    """The provider processes under `ancestor` (Terraform starts the plugin as a child)."""
    from tests.node_pool.test_interrupt import provider_pids
    return provider_pids(ancestor)
