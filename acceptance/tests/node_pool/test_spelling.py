"""A spelling that means the same thing is never a change (real Terraform against moto).

Regressions of issue 13: `gpu = "H100"` applied, then `gpu = "h100"` planned "must be
replaced" (every GPU node deleted for a letter's case); reordering pinned
`instance_types` forced a replacement too; and `cloud = "AWS"` was never read live, so a
node group deleted outside Terraform never showed. Each case runs under every Terraform
version of the suite and is checked through boto3 (same node group ARNs, nothing deleted).
"""

from __future__ import annotations

from aws_emulator import create_eks_prerequisites, node_groups
from tests.node_pool.test_node_pool import ADDR, aws_tf, names, planned, pool_workdir  # noqa: F401

L4_TYPES = ["g6.xlarge", "g6.2xlarge"]


def pool_override(**attrs) -> str:
    """An override file for the example's pool setting `attrs` (strings and lists)."""
    def hcl(v):
        if isinstance(v, list):
            return "[" + ", ".join(f'"{x}"' for x in v) + "]"
        return f'"{v}"' if isinstance(v, str) else str(v)
    body = "".join(f"  {k} = {hcl(v)}\n" for k, v in attrs.items())
    return f'resource "gpu_node_pool" "train" {{\n{body}}}\n'


def arns(moto, cluster: str) -> dict[str, str]:
    return {n: g["nodegroupArn"] for n, g in node_groups(moto, cluster).items()}


def assert_no_op(wd, what: str):
    change = planned(wd)
    assert change["change"]["actions"] == ["no-op"], (what, change["change"])
    text = wd.run("show", "-no-color", "tfplan").stdout
    assert "must be replaced" not in text and "forces replacement" not in text, (what, text)
    assert wd.plan_is_empty(), (what, wd.run("plan", rc=None))


def test_re_spelling_cloud_gpu_and_region_plans_no_change(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "spell")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("apply")
    before = arns(moto, cluster_name)
    assert set(before) == {f"{pool}-od", f"{pool}-spot"}, before
    override = wd.path / "spelling_override.tf"
    for attrs in ({"gpu": "h100"}, {"gpu": "NVIDIA H100"}, {"cloud": "AWS"},
                  {"region": "US-EAST-1"},
                  {"gpu": "h100", "cloud": "Aws", "region": "Us-East-1"}):
        override.write_text(pool_override(**attrs))
        assert_no_op(wd, attrs)
        wd.run("apply")
        assert arns(moto, cluster_name) == before, (attrs, "node groups were recreated")
    # The state keeps the spelling it had: a re-spelling is not a change of value.
    state = wd.resource(ADDR)
    assert (state["gpu"], state["cloud"], state["region"]) == ("H100", "aws", "us-east-1"), state


def test_reordering_pinned_instance_types_plans_no_change(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "order")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    override = wd.path / "types_override.tf"
    override.write_text(pool_override(gpu="L4", gpu_count=1, instance_types=L4_TYPES))
    wd.run("apply")
    before = arns(moto, cluster_name)
    spot = node_groups(moto, cluster_name)[f"{pool}-spot"]
    assert spot["instanceTypes"] == L4_TYPES, spot
    for types in (list(reversed(L4_TYPES)), [t.upper() for t in reversed(L4_TYPES)]):
        override.write_text(pool_override(gpu="L4", gpu_count=1, instance_types=types))
        assert_no_op(wd, types)
    # Another set of types is a real change (a replacement today).
    override.write_text(pool_override(gpu="L4", gpu_count=1,
                                      instance_types=["g6.xlarge", "g6.4xlarge"]))
    change = planned(wd)
    assert change["change"]["actions"] != ["no-op"], change["change"]
    assert arns(moto, cluster_name) == before, "a plan changed node groups"


def test_cloud_spelled_upper_case_is_read_live_and_drift_shows(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "upper")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    (wd.path / "cloud_override.tf").write_text(pool_override(cloud="AWS"))
    wd.run("apply")
    assert wd.resource(ADDR)["cloud"] == "AWS"
    assert wd.plan_is_empty(), wd.run("plan", rc=None)
    eks = moto.client("eks")
    eks.delete_nodegroup(clusterName=cluster_name, nodegroupName=f"{pool}-spot")
    assert set(node_groups(moto, cluster_name)) == {f"{pool}-od"}
    change = planned(wd)
    assert change["change"]["actions"] == ["update"], change["change"]
    spot_before = [g for g in change["change"]["before"]["node_groups"]]
    assert [g["name"] for g in spot_before] == [f"{pool}-od"], spot_before
    wd.run("apply", "tfplan")
    assert set(node_groups(moto, cluster_name)) == {f"{pool}-od", f"{pool}-spot"}
    assert wd.plan_is_empty(), wd.run("plan", rc=None)
