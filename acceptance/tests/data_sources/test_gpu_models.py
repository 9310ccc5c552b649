"""The gpu_models data source through the whole Terraform lifecycle: validate, plan,
apply, refresh, an empty second plan, outputs and destroy of
`examples/data-sources/gpu_models` and of a local config; its filters (`min_memory_gib`,
`vendor`); and an input unknown at plan time (the read deferred to apply).
"""

import pytest

EXPECTED = {"H100", "A100-80GB", "L4"}


def models_of(wd, address):
    values = wd.resource(address)
    names, models = values["names"], values["models"]
    assert names == sorted(names), f"names not sorted: {names}"
    assert names == sorted(m["name"] for m in models), (names, models)
    assert len(set(names)) == len(names), f"duplicate names: {names}"
    for m in models:
        assert set(m) == {"name", "vendor", "memory_gib", "architecture", "aliases"}, m
        assert m["vendor"] in ("nvidia", "amd"), m
        assert isinstance(m["memory_gib"], (int, float)) and m["memory_gib"] > 0, m
        assert m["architecture"], m
        assert isinstance(m["aliases"], list), m
    return values


def lifecycle(wd):
    """validate, plan, apply, refresh, empty plan; returns the workdir applied."""
    wd.run("validate")
    wd.run("plan", "-out=tfplan")
    wd.run("apply", "tfplan")
    wd.run("refresh")
    assert wd.plan_is_empty(), wd.run("plan", rc=None)
    return wd


def destroy(wd):
    wd.run("destroy")
    assert wd.state_resources() == []
    assert wd.outputs() == {}


def test_example(terraform):
    wd = lifecycle(terraform.workdir("data-sources/gpu_models"))

    every = models_of(wd, "data.gpu_models.all")
    assert EXPECTED <= set(every["names"]), every["names"]
    by_name = {m["name"]: m for m in every["models"]}
    assert by_name["H100"]["vendor"] == "nvidia" and by_name["H100"]["memory_gib"] == 80
    assert by_name["A100-80GB"]["memory_gib"] == 80

    large = models_of(wd, "data.gpu_models.large_nvidia")
    assert large["models"], "no NVIDIA model with >= 80 GiB"
    assert all(m["vendor"] == "nvidia" and m["memory_gib"] >= 80 for m in large["models"])

    out = wd.outputs()
    assert out["all_names"] == every["names"]
    assert out["large_nvidia_memory_gib"] == {m["name"]: m["memory_gib"] for m in large["models"]}
    destroy(wd)


CONFIG = '''
data "gpu_models" "all" {}

data "gpu_models" "big" {
  min_memory_gib = 80
}

data "gpu_models" "amd" {
  vendor = "amd"
}

output "big" {
  value = data.gpu_models.big.names
}

output "amd_count" {
  value = length(data.gpu_models.amd.models)
}
'''


def test_filters(terraform):
    wd = lifecycle(terraform.workdir(files={"main.tf": CONFIG}))
    every = models_of(wd, "data.gpu_models.all")
    big = models_of(wd, "data.gpu_models.big")
    amd = models_of(wd, "data.gpu_models.amd")

    assert big["models"] and all(m["memory_gib"] >= 80 for m in big["models"]), big["models"]
    assert "T4" not in big["names"] and "L4" not in big["names"]
    assert {"H100", "A100-80GB"} <= set(big["names"])
    assert set(big["names"]) < set(every["names"])
    assert big["names"] == sorted(m["name"] for m in every["models"] if m["memory_gib"] >= 80)

    assert "MI300X" in amd["names"], amd["names"]
    assert all(m["vendor"] == "amd" for m in amd["models"]), amd["models"]
    assert "H100" not in amd["names"]
    assert amd["names"] == sorted(m["name"] for m in every["models"] if m["vendor"] == "amd")

    assert wd.outputs() == {"big": big["names"], "amd_count": len(amd["models"])}
    destroy(wd)


def test_plan_shows_outputs(terraform):
    """A plan of data sources alone reads them at plan time and shows the outputs."""
    wd = terraform.workdir(files={"main.tf": CONFIG})
    wd.run("plan", "-out=tfplan")
    plan = wd.show_json("tfplan")
    assert "H100" in plan["planned_values"]["outputs"]["big"]["value"]
    # data sources known at plan time are not in resource_changes as deferred reads
    assert not [rc for rc in plan.get("resource_changes", [])
                if rc["mode"] == "data" and "read" in rc["change"]["actions"]]


@pytest.mark.tf_min("1.4")
def test_unknown_input_at_plan_time(terraform):
    wd = terraform.workdir(files={"main.tf": '''
resource "terraform_data" "x" {
  input = 40
}

data "gpu_models" "deferred" {
  min_memory_gib = terraform_data.x.output
}

output "names" {
  value = data.gpu_models.deferred.names
}
'''})
    wd.run("validate")
    res = wd.run("plan", "-out=tfplan")
    assert "data.gpu_models.deferred will be read during apply" in res.stdout, res
    plan = wd.show_json("tfplan")
    reads = [rc for rc in plan["resource_changes"] if rc["address"] == "data.gpu_models.deferred"]
    assert reads and reads[0]["change"]["actions"] == ["read"], plan["resource_changes"]
    assert plan["output_changes"]["names"]["after_unknown"] is True

    wd.run("apply", "tfplan")
    got = models_of(wd, "data.gpu_models.deferred")
    assert got["min_memory_gib"] == 40
    assert got["models"] and all(m["memory_gib"] >= 40 for m in got["models"])
    assert "H100" in got["names"] and "L4" not in got["names"]
    assert wd.outputs()["names"] == got["names"]
    assert wd.plan_is_empty()
    destroy(wd)
