"""The examples a user copies: they validate and plan with no cloud credentials."""

from conftest import EXAMPLES


def test_provider_example(terraform, tmp_path):
    """examples/provider configures every cloud block; the gpu_models catalog is built in,
    so a plan needs no credentials and no network."""
    wd = terraform.workdir("provider", files={"models.tf": 'data "gpu_models" "all" {}\n'})
    wd.run("validate")
    res = wd.run("plan")
    assert "Error" not in res.stderr, res


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
