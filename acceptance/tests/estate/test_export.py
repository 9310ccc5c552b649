"""`terraform-provider-gpu export` under real Terraform, on Google Cloud: the GKE and
Compute Engine fakes behind one `gcp.endpoint`. An estate made by the provider (a pool, a
VM and a reservation) and a GPU pool made by someone else is exported; the Terraform form,
applied in a fresh directory with no state, imports the three and plans nothing after, and
changes nothing in the cloud. The YAML and JSON forms hold the same resources.
"""

from __future__ import annotations

import copy
import json
import subprocess

import pytest
import yaml

from cloud_fakes import PROJECT, pool_config
from tests.estate.test_inventory import (  # noqa: F401 (gcp_tf: a fixture)
    gcp_tf, google_with_vms, someone_elses_gpu_pool)

REGION, ZONE = "us-central1", "us-central1-b"


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    g = google_with_vms(tmp_path_factory.mktemp("export"))
    yield g
    g.stop()


ESTATE = f'''
resource "gpu_instance" "dev" {{
  cloud  = "gcp"
  region = "{REGION}"
  zone   = "{ZONE}"
  name   = "dev-box"
  gpu    = "A100-40GB"
  spot   = true
  labels = {{ project = "notebooks" }}
}}

resource "gpu_commitment" "floor" {{
  kind           = "gcp_reservation"
  region         = "{REGION}"
  zone           = "{ZONE}"
  instance_type  = "a3-highgpu-8g"
  instance_count = 2
  tags           = {{ project = "llm" }}
}}
'''


def someone_elses_vms(google, zone: str = ZONE) -> None:
    """Two VMs made outside the provider, copies of the provider's `dev-box` without its
    marker label: `their-box` keeps its A100 machine, `their-web` becomes an e2 machine
    without accelerators (no GPU: never listed)."""
    (ours,) = [vm for vm in google.compute.instances.values()
               if vm["public"]["name"] == "dev-box"]
    for name, machine in (("their-box", None), ("their-web", "e2-standard-4")):
        vm = copy.deepcopy(ours)
        public = vm["public"]
        public["name"] = name
        public["id"] = str(int(public["id"]) + (1 if machine is None else 2))
        public["selfLink"] = public["selfLink"].replace("dev-box", name)
        public["labels"] = {"team": "vision"}
        if machine is not None:
            public["machineType"] = public["machineType"].rsplit("/", 1)[0] + "/" + machine
            public.pop("guestAccelerators", None)
            vm["machine"] = machine
        google.compute.instances[(PROJECT, zone, name)] = vm


def export(provider_bin, google, cid: str, *flags: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "GOOGLE_APPLICATION_CREDENTIALS": str(google.key)}
    return subprocess.run(
        [str(provider_bin), "export", "--clouds", "gcp", "--regions", REGION,
         "--cluster", cid, "--gcp-project", PROJECT, "--gcp-endpoint", google.front.url,
         *flags], capture_output=True, text=True, timeout=180, env=env)


def made_estate(gcp_tf, google, cluster: str):
    """In a new GKE `cluster`, the provider's pool `train`, VM `dev-box` and reservation
    (`ESTATE`), then someone else's L4 pool and VMs: (the working directory that made
    them, the cluster id)."""
    google.gke.seed_cluster(PROJECT, REGION, cluster)
    cid = f"projects/{PROJECT}/locations/{REGION}/clusters/{cluster}"
    main = pool_config(google, "gcp", cid, "train", region=REGION, gpu="L4", gpu_count=1,
                       min_nodes=1, max_nodes=3, on_demand_min=1)
    main = main.replace('provider "gpu" {\n',
                        'provider "gpu" {\n  allow_commitment_purchase = true\n')
    made = gcp_tf.workdir(files={"main.tf": main + ESTATE})
    made.run("apply")
    someone_elses_gpu_pool(google, cluster)
    someone_elses_vms(google)
    return made, cid


def test_the_exported_estate_imports_with_an_empty_plan_and_changes_nothing(
        gcp_tf, google, provider_bin):
    if gcp_tf.version == "1.0":
        pytest.skip("import blocks came with Terraform 1.5")
    made, cid = made_estate(gcp_tf, google, "gke-export")
    before = google.mutations()

    res = export(provider_bin, google, cid)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert text.count("import {") == 3, text
    for address in ("gpu_node_pool.train", "gpu_instance.dev-box"):
        assert f"to = {address}\n" in text, text
    reservation = made.resource("gpu_commitment.floor")["commitment_id"]
    assert f'id = "gcp_reservation/{ZONE}/{reservation}"' in text, text
    assert "# TODO: no cloud reports these back about a VM: `user_data`, `gcp`." in text, text
    assert "# Not exported:" in text and "their-l4" in text, text
    assert "# - instance their-box in gcp us-central1: a VM the provider did not make" in text
    assert "their-web" not in text, "a VM without a GPU is not in the estate"
    assert "their-l4" in res.stderr, "what is left out is said on standard error too"
    assert "gpu_node_pool.train" not in text.split("# Not exported:")[1]

    adopted = gcp_tf.workdir(files={"main.tf": text})
    plan = adopted.run("plan")
    assert "3 to import, 0 to add, 0 to change, 0 to destroy" in plan.output, plan.output
    adopted.run("apply")
    adopted.assert_plan_empty()
    pool = adopted.resource("gpu_node_pool.train")
    assert pool["node_groups"] == made.resource("gpu_node_pool.train")["node_groups"]
    assert pool["tags"]["team"] == "ml", "the default label is written out on the pool"
    assert adopted.resource("gpu_instance.dev-box")["instance_id"] == \
        made.resource("gpu_instance.dev")["instance_id"]
    assert google.mutations() == before, "export, import and an empty apply change nothing"

    forms = {}
    for fmt, parse in (("json", json.loads), ("yaml", yaml.safe_load)):
        out = export(provider_bin, google, cid, "--format", fmt)
        assert out.returncode == 0, out.stderr
        forms[fmt] = parse(out.stdout)
    assert forms["json"] == forms["yaml"]
    doc = forms["json"]
    assert doc["provider"]["source"] == "gpu-tf/gpu"
    assert doc["provider"]["config"]["gcp"]["project"] == PROJECT
    by_type = {r["type"]: r for r in doc["resources"]}
    assert set(by_type) == {"gpu_node_pool", "gpu_instance", "gpu_commitment"}
    assert by_type["gpu_node_pool"]["config"]["capacity"]["on_demand_min"] == 1
    assert by_type["gpu_node_pool"]["config"]["max_nodes"] == 3
    assert by_type["gpu_commitment"]["config"]["instance_count"] == 2
    assert sorted(x["what"] for x in doc["not_exported"]) == \
        ["instance their-box in gcp us-central1", f"node_pool their-l4 in gcp {cid}"]
    adopted.run("destroy")
