"""`terraform-provider-gpu cost --plan plan.json` on a plan made by real Terraform: the plan
of three new pools (no cloud call at plan), `terraform show -json` of it, then the CLI's
JSON, Markdown and table. Its figures are checked against the plan's own `monthly_usd`
values, read here from the plan JSON, not through the CLI."""

from __future__ import annotations

import json
import subprocess

CONFIG = '''
provider "gpu" {
  default_labels = { project = "llm" }
}

resource "gpu_node_pool" "train" {
  cloud     = "aws"
  region    = "us-east-1"
  cluster   = "train-east"
  name      = "train"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 4
  capacity {
    spot          = true
    on_demand_min = 1
  }
  tags = { team = "research" }
  aws {
    node_role_arn = "arn:aws:iam::123456789012:role/nodes"
  }
}

resource "gpu_node_pool" "serve" {
  cloud     = "gcp"
  region    = "us-central1"
  cluster   = "projects/p/locations/us-central1/clusters/serve"
  name      = "serve"
  gpu       = "L4"
  gpu_count = 1
  min_nodes = 2
  max_nodes = 6
  capacity {
    spot          = true
    on_demand_min = 2
  }
  tags = { team = "serving" }
}

resource "gpu_node_pool" "batch" {
  cloud     = "azure"
  region    = "eastus"
  cluster   = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/batch"
  name      = "batch"
  gpu       = "A100-80GB"
  gpu_count = 1
  min_nodes = 1
  max_nodes = 3
  capacity {
    spot          = true
    on_demand_min = 1
  }
  tags = { team = "research" }
}
'''


def cost(binary: str, plan_json, *args: str) -> str:
    return subprocess.run([binary, "cost", "--plan", str(plan_json), *args], check=True,
                          capture_output=True, text=True, timeout=60).stdout


def test_the_cost_of_a_plan_as_json_markdown_and_a_table(terraform, tmp_path):
    wd = terraform.workdir(files={"main.tf": CONFIG})
    wd.run("plan", "-out=tfplan")
    plan = wd.show_json("tfplan")
    plan_json = tmp_path / "plan.json"
    plan_json.write_text(json.dumps(plan))
    planned = {c["address"]: c["change"]["after"]["monthly_usd"]
               for c in plan["resource_changes"] if c["type"] == "gpu_node_pool"}
    assert len(planned) == 3 and all(v > 0 for v in planned.values()), planned
    binary = terraform.env["PROVIDER_BIN"] if "PROVIDER_BIN" in terraform.env else None
    from conftest import provider_bin_path
    binary = binary or str(provider_bin_path())

    j = json.loads(cost(binary, plan_json, "--format", "json"))
    total = sum(planned.values())
    assert j["currency"] == "USD"
    assert j["totalMonthlyCost"] == f"{total:.2f}", (j, planned)
    assert j["pastTotalMonthlyCost"] == "0.00"
    assert j["diffTotalMonthlyCost"] == f"{total:.2f}"
    by_address = {r["address"]: r for r in j["resources"]}
    assert set(by_address) == set(planned)
    for address, monthly in planned.items():
        assert by_address[address]["monthlyCost"] == f"{monthly:.2f}"
        assert by_address[address]["action"] == "create"
    research = planned["gpu_node_pool.train"] + planned["gpu_node_pool.batch"]
    assert j["totalsBy"]["team"]["research"]["monthlyCost"] == f"{research:.2f}"
    assert j["totalsBy"]["project"]["llm"]["monthlyCost"] == f"{total:.2f}", \
        "the provider's default_labels count"
    assert set(j["totalsBy"]["cloud"]) == {"aws", "azure", "gcp"}

    md = cost(binary, plan_json, "--format", "markdown")
    assert md.startswith("### GPU cost of this plan\n"), md
    assert f"Monthly: **${total:,.2f}**" in md, md
    assert "| `gpu_node_pool.serve` | create | gcp | - |" in md, md
    print("\n" + md)

    table = cost(binary, plan_json)
    assert table.splitlines()[0].split() == ["RESOURCE", "ACTION", "CLOUD", "BEFORE/MO",
                                             "AFTER/MO", "CHANGE"], table
    assert any(line.split()[:1] == ["TOTAL"] and f"${total:,.2f}" in line
               for line in table.splitlines()), table

    bad = subprocess.run([binary, "cost", "--plan", str(wd.path / "main.tf")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "not JSON" in bad.stderr, bad
