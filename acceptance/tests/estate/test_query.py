"""`terraform query` (Terraform 1.14 and later) on Google Cloud: the GKE and Compute Engine
fakes behind one `gcp.endpoint`. An estate the provider made (a pool, a VM, a
reservation) and a GPU pool someone else made are listed by the three list resources,
each object by its identity; `-generate-config-out` writes import blocks by identity and
resources in our attribute form (GenerateResourceConfig), which, applied in a fresh
directory with no state, import the three and plan nothing after (`query_check`), changing
nothing in the cloud.
"""

from __future__ import annotations

import re

import pytest

from cloud_fakes import PROJECT
from conftest import EXAMPLES
from query_check import query_and_adopt
from tests.estate.test_export import made_estate
from tests.estate.test_inventory import gcp_tf, google_with_vms  # noqa: F401 (gcp_tf: a fixture)

REGION, ZONE = "us-central1", "us-central1-b"


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    g = google_with_vms(tmp_path_factory.mktemp("query"))
    yield g
    g.stop()


def provider_block(google) -> str:
    return ('provider "gpu" {\n' + google.provider() +
            '  default_labels = {\n    team = "ml"\n  }\n}\n')


def query_file(cid: str) -> str:
    where = f'    clouds  = ["gcp"]\n    regions = ["{REGION}"]\n'
    return (
        'list "gpu_node_pool" "pools" {\n  provider = gpu\n  config {\n' + where +
        f'    clusters = ["{cid}"]\n  }}\n}}\n\n'
        'list "gpu_instance" "vms" {\n  provider = gpu\n  config {\n' + where + '  }\n}\n\n'
        'list "gpu_commitment" "floor" {\n  provider = gpu\n  config {\n' + where + '  }\n}\n'
    )


def test_query_lists_the_estate_and_its_generated_configuration_imports_with_an_empty_plan(
        gcp_tf, google):
    if gcp_tf.version == "1.0":
        pytest.skip("list resources and `terraform query` came with Terraform 1.14")
    cluster = "gke-query"
    made, cid = made_estate(gcp_tf, google, cluster)
    before = google.mutations()
    reservation = made.resource("gpu_commitment.floor")["commitment_id"]
    vm = made.resource("gpu_instance.dev")["id"]

    out, generated, adopted = query_and_adopt(gcp_tf, provider_block(google),
                                              query_file(cid), imports=3)
    # One line per object: its address, its identity and its display name.
    assert "list.gpu_node_pool.pools" in out and "train in " + cid in out, out
    assert f"import_id=gcp/{PROJECT}/{REGION}/{cluster}/train" in out, out
    assert "their-l4" not in out, "a pool the provider did not make is not listed"
    assert f"import_id={vm}" in out, out
    assert "their-box" not in out, "a VM the provider did not make is not listed"
    assert f"import_id=gcp_reservation/{ZONE}/{reservation}" in out, out
    assert re.search(r'resource "gpu_node_pool" "pools_0" \{', generated), generated
    assert "max_nodes" in generated and "on_demand_min = 1" in generated, generated
    for computed in ("node_groups", "monthly_usd", "commitment_id"):
        assert f"{computed} =" not in generated, f"computed {computed} written\n{generated}"
    pool = adopted.resource("gpu_node_pool.pools_0")
    assert pool["node_groups"] == made.resource("gpu_node_pool.train")["node_groups"]
    assert adopted.resource("gpu_instance.vms_0")["id"] == vm
    assert adopted.resource("gpu_commitment.floor_0")["commitment_id"] == reservation
    identities = {r["address"]: r.get("identity") for r in adopted.state_resources()}
    assert identities["gpu_commitment.floor_0"] == {
        "import_id": f"gcp_reservation/{ZONE}/{reservation}"}, identities
    assert google.mutations() == before, "query, import and an empty apply change nothing"
    adopted.run("destroy")


def test_a_list_block_out_of_bounds_is_refused_on_its_attribute_before_any_cloud_call(
        gcp_tf, google):
    if gcp_tf.version == "1.0":
        pytest.skip("list resources and `terraform query` came with Terraform 1.14")
    before = len(google.compute.state()["requests"]) + len(google.gke.state()["requests"])
    bad = ('list "gpu_instance" "vms" {\n  provider = gpu\n  config {\n'
           '    clouds  = ["oracle"]\n    regions = ["us-["]\n  }\n}\n\n'
           'list "gpu_node_pool" "pools" {\n  provider = gpu\n  config {\n'
           '    clusters = ["my-cluster"]\n  }\n}\n')
    wd = gcp_tf.workdir(files={"main.tf": provider_block(google), "bad.tfquery.hcl": bad})
    res = wd.run("query", "-no-color", rc=1)
    out = " ".join(res.output.split())
    assert '"oracle" is not a cloud the inventory reads: aws, azure, gcp' in out, res.output
    assert "is not a glob" in out, res.output
    assert '"my-cluster" is not a cluster id' in out, res.output
    assert "list.gpu_instance.vms" in out or "bad.tfquery.hcl" in out, res.output
    after = len(google.compute.state()["requests"]) + len(google.gke.state()["requests"])
    assert after == before, "nothing reached the cloud"


@pytest.mark.parametrize("type_name", ["gpu_node_pool", "gpu_instance", "gpu_commitment"])
def test_each_list_resource_example_validates(gcp_tf, google, type_name):
    if gcp_tf.version == "1.0":
        pytest.skip("list resources and `terraform query` came with Terraform 1.14")
    example = (EXAMPLES / "list-resources" / type_name / "list-resource.tfquery.hcl")
    wd = gcp_tf.workdir(files={"main.tf": provider_block(google),
                               "example.tfquery.hcl": example.read_text()})
    res = wd.run("validate", "-query")
    assert "Success" in res.output, res.output
