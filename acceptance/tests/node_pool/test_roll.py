"""A change EKS cannot make to a node group in place never leaves the pool without nodes
(real Terraform against moto, through the fault proxy, which records the order of every
node-group change and can hold one).

- `driver` (the AMI type) changed: the plan is an update, not a replacement, and names the
  groups that roll; the apply creates the new generation of both groups before it deletes
  any old one; while a delete is held, both generations exist (boto3); afterwards only the
  new one does, and the next plan is empty.
- `name` changed with `lifecycle { create_before_destroy = true }`: Terraform replaces the
  pool, and every create of the new pool comes before any delete of the old one.
"""

from __future__ import annotations

import threading

from aws_emulator import create_eks_prerequisites, node_groups
from fault_proxy import FaultProxy
from tests.node_pool.test_node_pool import ADDR, aws_tf, names, planned, pool_workdir  # noqa: F401

DRIVER_OVERRIDE = 'resource "gpu_node_pool" "train" {\n  driver = "bottlerocket_nvidia"\n}\n'


def creates_before_deletes(changes: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    creates = [n for op, n in changes if op == "CreateNodegroup"]
    deletes = [n for op, n in changes if op == "DeleteNodegroup"]
    assert creates and deletes, changes
    last_create = max(i for i, (op, _) in enumerate(changes) if op == "CreateNodegroup")
    first_delete = min(i for i, (op, _) in enumerate(changes) if op == "DeleteNodegroup")
    assert last_create < first_delete, f"a delete came before a create: {changes}"
    return creates, deletes


def test_an_image_change_rolls_both_groups_without_an_outage(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "roll")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url).start()
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        wd.run("apply")
        old = set(node_groups(moto, cluster_name))
        assert old == {f"{pool}-od", f"{pool}-spot"}, old

        (wd.path / "driver_override.tf").write_text(DRIVER_OVERRIDE)
        change = planned(wd)
        assert change["change"]["actions"] == ["update"], change["change"]["actions"]
        text = wd.run("show", "-no-color", "tfplan").stdout
        assert "must be replaced" not in text and "forces replacement" not in text, text
        plan_out = wd.run("plan").output
        assert f"Rolls {pool}-spot → {pool}-spot-" in " ".join(plan_out.split()), plan_out
        new = {g["name"] for g in change["change"]["after"]["node_groups"]}
        assert len(new) == 2 and not new & old, new

        # Hold the first delete: by then the new generation must be up beside the old.
        proxy.changes.clear()
        proxy.hold("DeleteNodegroup")
        result = {}
        worker = threading.Thread(target=lambda: result.update(res=wd.run("apply", "tfplan")))
        worker.start()
        try:
            assert proxy.held.wait(120), "no DeleteNodegroup arrived"
            mid = node_groups(moto, cluster_name)
            assert set(mid) == old | new, f"mid-apply both generations must exist: {set(mid)}"
            assert all(mid[n]["status"] == "ACTIVE" for n in new), mid
        finally:
            proxy.release()
            worker.join(300)
        assert not result["res"].crash_markers(), result["res"]
        creates, deletes = creates_before_deletes(proxy.changes)
        assert set(creates) == new and set(deletes) == old, proxy.changes

        after = node_groups(moto, cluster_name)
        assert set(after) == new, after
        assert all(g["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA" for g in after.values()), after
        spot = next(g for n, g in after.items() if "-spot-" in n)
        assert spot["capacityType"] == "SPOT" and spot["scalingConfig"]["minSize"] == 1, spot
        state = wd.resource(ADDR)
        assert {g["name"] for g in state["node_groups"]} == new, state["node_groups"]
        assert {g["capacity"] for g in state["node_groups"]} == {"on-demand", "spot"}
        assert wd.plan_is_empty(), wd.run("plan", rc=None)
    finally:
        proxy.stop()


CBD_OVERRIDE = '''resource "gpu_node_pool" "train" {
  name = "%s"
  lifecycle {
    create_before_destroy = true
  }
}
'''


def test_create_before_destroy_replaces_a_renamed_pool_new_first(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "cbd")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url).start()
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        (wd.path / "cbd_override.tf").write_text(CBD_OVERRIDE % pool)
        wd.run("apply")
        renamed = f"{pool}b"
        (wd.path / "cbd_override.tf").write_text(CBD_OVERRIDE % renamed)
        change = planned(wd)
        assert change["change"]["actions"] == ["create", "delete"], change["change"]["actions"]
        proxy.changes.clear()
        wd.run("apply", "tfplan")
        creates, deletes = creates_before_deletes(proxy.changes)
        assert set(creates) == {f"{renamed}-od", f"{renamed}-spot"}, proxy.changes
        assert set(deletes) == {f"{pool}-od", f"{pool}-spot"}, proxy.changes
        assert set(node_groups(moto, cluster_name)) == {f"{renamed}-od", f"{renamed}-spot"}
        assert wd.plan_is_empty(), wd.run("plan", rc=None)
    finally:
        proxy.stop()
