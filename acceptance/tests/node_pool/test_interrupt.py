"""Interrupted applies lose nothing (issue 6): after Ctrl-C while the node groups are
CREATING, or SIGKILL of the provider while a CreateNodegroup is in flight, the state lists
what exists and the next apply converges, with no duplicate create and no orphan.

- Ctrl-C: Terraform gets SIGINT while the provider waits for the node groups to become
  ACTIVE (the proxy makes them read CREATING for a while: moto is ACTIVE at once). Terraform
  sends StopProvider; the wait ends at once (the apply stops in under 4.5 s, the poll
  interval being 5 s), the apply returns an error saying it was cancelled and the state
  lists both groups (which exist). The next apply converges.
- SIGKILL: the provider process is killed while the second CreateNodegroup is in flight
  (held by the proxy). Nothing reaches the state, but the groups carry `gpu.tf/pool`, so
  the next apply adopts what was created instead of failing or duplicating. Either the held
  request then reaches EKS (`delivered`) or it never does (`dropped`).

Afterwards no node group tagged `gpu.tf/pool` exists that the state does not list (the
orphan check), and a plan is empty. Figures go to `make reliability`.

This file proves real time, so it runs at `GPU_TF_TIME_SCALE=1` whatever the suite's scale
(`conftest.at_real_time`; the proxy at `time_scale=1`): the 4.5 s bound is about the
provider's real 5 s poll.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import reliability
from aws_emulator import create_eks_prerequisites, node_groups
from conftest import at_real_time, provider_bin_path
from fault_proxy import FaultProxy, RandomFaults
from tests.node_pool.test_node_pool import ADDR, blocks, check_groups, names, pool_workdir

_kills = {"kills": 0, "converged": 0}
_stops = {"stops": 0, "converged": 0}


@pytest.fixture
def aws_tf(terraform, moto, tmp_path):
    terraform.env = at_real_time(moto.terraform_env(terraform.env, tmp_path / "aws"))
    return terraform


def start_apply(wd) -> subprocess.Popen:
    """`terraform apply` in the background, in its own process group (as a shell runs it)."""
    return subprocess.Popen(
        [str(wd.tf.bin), "apply", "-no-color", "-input=false", "-auto-approve"],
        cwd=wd.path, env=wd.tf.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def provider_pids(ancestor: int) -> list[int]:
    """Processes running the provider binary that descend from `ancestor`."""
    want = str(provider_bin_path())
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            exe = os.readlink(d / "exe")
        except OSError:
            continue
        if exe.removesuffix(" (deleted)") != want:
            continue
        p = int(d.name)
        while p > 1 and p != ancestor:
            p = _ppid(p)
        if p == ancestor:
            pids.append(int(d.name))
    return pids


def wait_for(cond, what: str, timeout: float = 60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def orphans(moto, cluster: str, state_groups: list[str]) -> list[str]:
    """Node groups of the cluster tagged as a pool's that the state does not list."""
    return sorted(n for n, g in node_groups(moto, cluster).items()
                  if "gpu.tf/pool" in (g.get("tags") or {}) and n not in state_groups)


def state_group_names(wd) -> list[str]:
    managed = [r for r in wd.state_resources() if r["mode"] == "managed"]
    return [g["name"] for r in managed for g in r["values"].get("node_groups") or []]


def test_ctrl_c_during_the_wait_returns_state_of_what_exists(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "ctrlc")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url, faults=RandomFaults(rate=0), time_scale=1).start()
    proxy.settle_after(600)  # CREATING far longer than the test
    _stops["stops"] += 1
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        proc = start_apply(wd)
        try:
            # Both creates sent, and the first poll of the wait answered CREATING.
            wait_for(lambda: proxy.counts["CreateNodegroup"] == 2
                     and proxy.counts["DescribeNodegroup"] >= 3, "the wait to start")
            asked = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a shell
            out, _ = proc.communicate(timeout=60)
            took = time.monotonic() - asked
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == 1, out
        # The wait polls every 5 s and more: ending within that proves it was cancelled.
        assert took < 4.5, f"apply took {took:.1f} s to stop after Ctrl-C\n{out}"
        errors = [" ".join(e.split()) for e in blocks(out, "Error")]
        assert any("cancelled" in e and f"exist now: {pool}-od, {pool}-spot" in e
                   for e in errors), out
        assert "panic" not in out.lower(), out
        # The state lists both groups, which exist.
        assert sorted(state_group_names(wd)) == [f"{pool}-od", f"{pool}-spot"], out
        assert set(node_groups(moto, cluster_name)) == {f"{pool}-od", f"{pool}-spot"}

        # Capacity arrives; the next apply converges (the pool was tainted by the failed
        # create, so Terraform replaces it: delete both, create both).
        proxy.settle_after(0)
        wd.run("apply", timeout=600)
        check_groups(moto, cluster, pool, wd.resource(ADDR))
        assert orphans(moto, cluster_name, state_group_names(wd)) == []
        assert wd.plan_is_empty()
        _stops["converged"] += 1
    finally:
        proxy.stop()
        reliability.record(
            "Ctrl-C (StopProvider) during a wait, then converged", _stops["converged"],
            _stops["stops"], "all", _stops["converged"] == _stops["stops"],
            "state lists the groups that exist; the next apply converges")


@pytest.mark.parametrize("held", ["delivered", "dropped"])
def test_sigkill_mid_apply_leaves_no_orphan(aws_tf, moto, held):
    cluster_name, pool = names(aws_tf, f"kill{held[:4]}")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url, faults=RandomFaults(rate=0), time_scale=1).start()
    _kills["kills"] += 1
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        if held == "dropped":
            # The held request is answered with a reset after the kill, never forwarded.
            proxy.fail("CreateNodegroup", after=1, status=500, code="ServerException",
                       message="never delivered")
        proxy.hold("CreateNodegroup", after=1)
        proc = start_apply(wd)
        try:
            if held == "delivered":
                assert proxy.held.wait(60), "the second CreateNodegroup never came"
            else:
                wait_for(lambda: proxy.injected["CreateNodegroup"] == 1, "the second create")
            pids = wait_for(lambda: provider_pids(proc.pid), "the provider process")
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            proxy.release()
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode != 0, out
        creates = proxy.counts["CreateNodegroup"]
        want_live = ({f"{pool}-od", f"{pool}-spot"} if held == "delivered"
                     else {f"{pool}-od"})
        wait_for(lambda: set(node_groups(moto, cluster_name)) == want_live,
                 f"{want_live} in EKS", timeout=10)
        live = set(node_groups(moto, cluster_name))
        assert live == want_live, live
        # Whatever Terraform recorded, the next apply must converge without a duplicate.
        wd.run("apply", timeout=600)
        check_groups(moto, cluster, pool, wd.resource(ADDR))
        new_creates = proxy.counts["CreateNodegroup"] - creates
        assert new_creates == (0 if held == "delivered" else 1), (held, proxy.counts)
        assert orphans(moto, cluster_name, state_group_names(wd)) == []
        assert wd.plan_is_empty()
        _kills["converged"] += 1
    finally:
        proxy.stop()
        reliability.record(
            "SIGKILL of the provider mid-apply, then converged", _kills["converged"],
            _kills["kills"], "all", _kills["converged"] == _kills["kills"],
            "no orphaned node group (found by the gpu.tf/pool tag)")
