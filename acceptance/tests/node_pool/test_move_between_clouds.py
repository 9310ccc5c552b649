"""examples/move-between-clouds applied for real: the same pool on EKS (moto), then AKS
(the ARM fake), then GKE (the GKE fake), one `-var cloud=` at a time. Each move plans a
replacement whose warning names the monthly delta, creates the new pool before the old
one is destroyed (`create_before_destroy`), and leaves nothing behind on the old cloud.
"""

from __future__ import annotations

import json
import re

import pytest

from aws_emulator import create_eks_prerequisites, node_groups
from cloud_fakes import start_azure, start_gcp

EXAMPLE = "move-between-clouds"
ADDR = "gpu_node_pool.train"
# The catalog's 8x H100 sizes in eastus, allowed in the fake's cluster.
AZURE_H100 = ["Standard_ND96is_H100_v5", "Standard_ND96is_flex_H100_v5",
              "Standard_ND96is_noIB_H100_v5", "Standard_ND96isf_H100_v5",
              "Standard_ND96isr_H100_v5"]
_REPLACES = re.compile(r"Replaces the pool \((\$[\d,.]+)/month now → (\$[\d,.]+)/month\)")
# The change is the money in the warning's title.
_CHANGE = re.compile(r"Warning: gpu_node_pool\.train: ([+-]\$[\d,.]+)/month")


@pytest.fixture(scope="module")
def clouds(tmp_path_factory):
    azure = start_azure(tmp_path_factory.mktemp("azure"))
    azure.arm.configure({"polls": 1, "retry_after": 1})
    gcp = start_gcp(tmp_path_factory.mktemp("gcp"))
    gcp.gke.configure({"polls": 0})
    yield azure, gcp
    for f in (azure.arm, azure.aad, gcp.gke, gcp.oauth):
        f.stop()


def cost_line(output: str) -> str:
    """The pool's cost warning: its title (the money) and its first line, unwrapped."""
    text = output.split("Warning: gpu_node_pool.train:", 1)[1]
    title = text.split("\n", 1)[0].strip()
    for para in re.split(r"\n\s*\n", text)[1:]:
        if "with gpu_node_pool" not in para and " in " in para:
            return f"{title}; {' '.join(para.split())}"
    raise AssertionError(output)


def test_the_pool_moves_aws_azure_gcp_with_the_delta_in_each_plan(terraform, moto, clouds,
                                                                   tmp_path):
    azure, gcp = clouds
    v = terraform.version.replace(".", "")
    terraform.env = gcp.env(azure.env(moto.terraform_env(terraform.env, tmp_path / "aws")))
    eks = create_eks_prerequisites(moto, f"move-tf{v}")
    aks_id = azure.cluster(f"move-tf{v}", vm_sizes=AZURE_H100)
    gke_id = gcp.cluster(f"move-tf{v}")
    tfvars = {"eks_cluster": eks.name, "node_role_arn": eks.node_role_arn,
              "aws_endpoint": moto.url, "aks_cluster_id": aks_id,
              "azure_endpoint": azure.arm.url, "gke_cluster": gke_id,
              "gcp_endpoint": gcp.gke.url}
    wd = terraform.workdir(EXAMPLE, files={"terraform.tfvars.json": json.dumps(tfvars)})

    lines = {}
    res = wd.run("apply", "-var", "cloud=aws")
    lines["aws"] = cost_line(res.output)
    assert set(node_groups(moto, eks.name)) == {"train-od", "train-spot"}
    monthly = {"aws": wd.resource(ADDR)["monthly_usd"]}

    for cloud in ("azure", "gcp"):
        plan = wd.run("plan", "-var", f"cloud={cloud}")
        assert "must be replaced" in plan.output, plan
        m = _REPLACES.search(" ".join(plan.output.split()))
        assert m, plan.output
        lines[cloud] = cost_line(plan.output)
        wd.run("apply", "-var", f"cloud={cloud}")
        state = wd.resource(ADDR)
        assert state["cloud"] == cloud
        monthly[cloud] = state["monthly_usd"]
        # The delta the plan showed is the difference of the two pools' monthly cost.
        prev = list(monthly)[-2]
        change = _CHANGE.search(plan.output)
        assert change, plan.output
        delta = float(change.group(1).replace("$", "").replace(",", ""))
        assert abs(delta - (monthly[cloud] - monthly[prev])) < 0.011, (m.group(0), monthly)

        wd.assert_plan_empty("-var", f"cloud={cloud}")

    # Nothing is left on the clouds the pool moved away from.
    assert node_groups(moto, eks.name) == {}
    assert all(p["properties"].get("mode") != "User"
               for p in azure.pools(f"move-tf{v}").values())
    gpu_pools = [p for p in gcp.pools(f"move-tf{v}").values() if p["config"].get("accelerators")]
    assert len(gpu_pools) == 2
    print("\nmove-between-clouds cost lines:\n" + "\n".join(f"{k}: {l}" for k, l in lines.items()))
    wd.run("destroy", "-var", "cloud=gcp")
    assert not [p for p in gcp.pools(f"move-tf{v}").values() if p["config"].get("accelerators")]
