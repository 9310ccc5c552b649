"""State written by the schema-version-0 provider (EKS-shaped `node_groups`) upgrades to
version 1 and plans no change, under every Terraform version of the suite.

The state in fixtures/state-v0/ was written by the provider as of commit ace9733 (see its
README). The test recreates exactly those node groups in moto with boto3 (not with the
provider), points the state's ids at them, and lets the current provider read it.
"""

from __future__ import annotations

import json
from pathlib import Path

from aws_emulator import create_eks_prerequisites, node_groups
from tests.node_pool.test_node_pool import ADDR, aws_tf, names, planned, pool_workdir  # noqa: F401

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "state-v0"


def recreate_groups(moto, cluster) -> dict[str, str]:
    """The fixture's node groups in `cluster`, as moto described them; new ARN by name."""
    eks = moto.client("eks")
    arns = {}
    for name, g in json.loads((FIXTURE / "node_groups.json").read_text()).items():
        out = eks.create_nodegroup(
            clusterName=cluster.name, nodegroupName=name,
            scalingConfig=g["scalingConfig"], instanceTypes=g["instanceTypes"],
            amiType=g["amiType"], capacityType=g["capacityType"],
            labels=g["labels"], taints=g["taints"], tags=g["tags"],
            nodeRole=cluster.node_role_arn, subnets=cluster.subnet_ids)
        arns[name] = out["nodegroup"]["nodegroupArn"]
    return arns


def test_a_version_0_state_upgrades_and_plans_no_change(aws_tf, moto):
    cluster_name, _ = names(aws_tf, "upgrade")
    cluster = create_eks_prerequisites(moto, cluster_name)
    arns = recreate_groups(moto, cluster)
    old = json.loads((FIXTURE / "cluster.json").read_text())
    text = (FIXTURE / "terraform.tfstate").read_text()
    state = json.loads(text)
    for g in state["resources"][0]["instances"][0]["attributes"]["node_groups"]:
        text = text.replace(g["arn"], arns[g["name"]])
    for before, after in zip(old["subnet_ids"], cluster.subnet_ids):
        text = text.replace(before, after)
    text = text.replace(old["name"], cluster_name)
    state = json.loads(text)
    assert state["resources"][0]["instances"][0]["schema_version"] == 0
    # An older Terraform refuses state written by a newer one; the format is the same.
    if aws_tf.version == "1.0":
        state["terraform_version"] = "1.0.3"

    wd = pool_workdir(aws_tf, moto, cluster, "legacy")
    (wd.path / "terraform.tfstate").write_text(json.dumps(state, indent=2))
    # The pool plans no change. (The example's `node_groups` output now prints the neutral
    # capacity, `on-demand`, so the outputs saved by the old example differ: not the pool.)
    change = planned(wd)
    assert change["change"]["actions"] == ["no-op"], change["change"]
    wd.run("apply", "-refresh-only")
    raw = json.loads((wd.path / "terraform.tfstate").read_text())
    instance = raw["resources"][0]["instances"][0]
    assert instance["schema_version"] == 1, instance["schema_version"]
    groups = sorted(instance["attributes"]["node_groups"], key=lambda g: g["name"])
    assert [(g["name"], g["capacity"], g["image"]) for g in groups] == [
        ("legacy-od", "on-demand", "AL2023_x86_64_NVIDIA"),
        ("legacy-spot", "spot", "AL2023_x86_64_NVIDIA"),
    ], groups
    assert {g["id"] for g in groups} == set(arns.values()), groups
    assert "capacity_type" not in groups[0] and "arn" not in groups[0], groups[0]
    assert set(node_groups(moto, cluster_name)) == {"legacy-od", "legacy-spot"}
    assert wd.plan_is_empty(), wd.run("plan", rc=None)
    assert wd.resource(ADDR)["id"] == f"aws/us-east-1/{cluster_name}/legacy"
