"""The examples a user copies (`examples/provider`, `examples/quickstart`): they validate
and plan with no cloud credentials.

The provider example's budget fails the plan of a pool whose ceiling costs more, naming
the budget; the quickstart's planned outputs (the cheapest 8x H100 spot offer, the
on-demand alternatives, the pool's monthly cost) agree with each other.
"""

from conftest import EXAMPLES


def test_provider_example(terraform, tmp_path):
    """examples/provider configures every cloud block; the gpu_models catalog is built in,
    so a plan needs no credentials and no network. The budget it sets is enforced: a pool
    whose ceiling costs more fails the plan, naming the budget."""
    models = 'data "gpu_models" "all" {}\noutput "models" { value = length(data.gpu_models.all.models) }\n'
    wd = terraform.workdir("provider", files={"models.tf": models})
    wd.run("validate")
    wd.run("plan", "-out=tfplan")
    assert wd.show_json("tfplan")["planned_values"]["outputs"]["models"]["value"] > 10
    # 4 × p5.48xlarge on demand is far above the example's 50,000 USD/month budget.
    pool = """
resource "gpu_node_pool" "big" {
  cloud     = "aws"
  region    = "us-east-1"
  cluster   = "train-east"
  name      = "big"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 4
  aws {
    node_role_arn = "arn:aws:iam::123456789012:role/eks-gpu-nodes"
  }
}
"""
    wd = terraform.workdir("provider", files={"pool.tf": pool})
    res = wd.fails("plan")
    assert "Over budget" in res.output and "50,000" in res.output, res


def test_quickstart(terraform):
    wd = terraform.workdir("quickstart")
    assert (EXAMPLES / "quickstart" / "main.tf").read_text().count("required_providers") == 1
    wd.run("validate")
    wd.run("plan", "-out=tfplan")
    outputs = wd.show_json("tfplan")["planned_values"]["outputs"]
    best = outputs["cheapest_h100_spot"]["value"]
    assert best["where"].split()[0] in ("aws", "azure", "gcp"), best
    assert best["usd_per_hour"] > 0 and abs(best["usd_per_hour"] / 8 - best["usd_per_gpu_hr"]) < 1e-9, best
    assert best["price_source"], best
    assert best["price_as_of"] is None or len(best["price_as_of"]) == 10, best
    alternatives = outputs["on_demand_alternatives"]["value"]
    assert len(alternatives) == 5 and all("/GPU-hour" in a for a in alternatives), alternatives
    prices = [float(a.rsplit("$", 1)[1].split("/")[0]) for a in alternatives]
    assert prices == sorted(prices), alternatives
    assert prices[0] >= best["usd_per_gpu_hr"], (prices, best)  # spot is the cheaper here
    # The headline: the pool's cost, known at plan time and consistent with its per-node
    # prices (1 on-demand node at the floor; 1 on-demand + 3 spot at the ceiling; 730 h).
    cost = outputs["train_pool_cost"]["value"]
    pool = next(r for r in wd.show_json("tfplan")["planned_values"]["root_module"]["resources"]
                if r["address"] == "gpu_node_pool.train")["values"]
    od, spot = pool["on_demand_usd_per_node_hour"], pool["spot_usd_per_node_hour"]
    assert od > 0 and spot > 0, pool
    assert abs(cost["monthly_usd"] - round(730 * od, 2)) < 0.011, (cost, od)
    assert abs(cost["monthly_usd_max"] - round(730 * (od + 3 * spot), 2)) < 0.011, (cost, od, spot)
    assert "/month" in cost["summary"] and pool["region"] in cost["summary"], cost
