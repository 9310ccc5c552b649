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
    names = outputs["gpus_with_80_gib_or_more"]["value"]
    assert "H100" in names and "L4" not in names, names
    assert all(v >= 80 for v in outputs["memory_gib"]["value"].values()), outputs
