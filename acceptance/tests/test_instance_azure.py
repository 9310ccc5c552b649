"""`gpu_instance` on Azure under real Terraform, against the local Entra ID and the ARM VM
fake (acceptance/fakes/arm_vms.py) over HTTPS, through the provider's real Azure credential
chain (client secret) and `SSL_CERT_FILE`: a Spot VM with the Deallocate eviction policy is
evicted, the plan stays empty, and the same VM (same `vmId`) with the same OS disk runs
again once capacity returns; a VM a person deallocated is left alone.

What exists is read from the fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import copy
import json
import re
import ssl
import urllib.request
import uuid
from urllib.parse import urlencode

import pytest

from cloud_fakes import CLIENT, CLIENT_SECRET, SUBSCRIPTION, TENANT, _CLEARED
from fakes import tls_context
from fakes.arm_vms import COMPUTE_API_VERSION, ArmVms
from fakes.tokens import AzureAD, TokenRegistry
from watch_runner import run_watch

REGION, RG = "eastus", "rg-gpu"
SIZE = "Standard_NC24ads_A100_v4"  # A100-80GB x 1, the cheapest spot A100-80GB in eastus
SUBNET = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-net/providers/Microsoft.Network/"
          "virtualNetworks/vnet-gpu/subnets/default")
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTestsOnly gpu@test"
VERSIONS = ["22.04.2024043001", "22.04.2025030701", "22.04.2025011501"]
NEWEST = "microsoft-dsvm:ubuntu-hpc:2204:22.04.2025030701"
PERSON = "5e6f7a8b-0000-4000-8000-0000000000aa"  # another app: the person at the console
PERSON_SECRET = "person-secret-not.real"


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    context, ca = tls_context(tmp_path_factory.mktemp("azure-vms-tls"))
    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT, CLIENT_SECRET).start(ssl_context=context)
    aad.add_app(TENANT, PERSON, PERSON_SECRET)
    arm = ArmVms(tokens).start(ssl_context=context)
    yield aad, arm, ca
    arm.stop()
    aad.stop()


@pytest.fixture
def arm(azure):
    _, arm, _ = azure
    arm.reset()
    arm.seed_subscription(SUBSCRIPTION, [RG], locations=[REGION], tenant_id=TENANT)
    arm.seed_images([{"location": REGION, "publisher": "microsoft-dsvm", "offer": "ubuntu-hpc",
                      "sku": "2204", "versions": VERSIONS}])
    arm.configure({"polls": 1, "retry_after": 0})
    return arm


@pytest.fixture
def az_tf(terraform, azure):
    aad, arm, ca = azure
    env = {k: v for k, v in terraform.env.items() if k not in _CLEARED}
    env.update({"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": CLIENT,
                "AZURE_CLIENT_SECRET": CLIENT_SECRET, "AZURE_AUTHORITY_HOST": aad.url,
                "SSL_CERT_FILE": str(ca)})
    terraform.env = env
    terraform.arm_url = arm.url
    return terraform


def flat(res) -> str:
    return " ".join(res.output.split())


def config(arm, extra: str = "", labels: str = '{ team = "ml" }') -> str:
    return f'''
provider "gpu" {{
  azure {{
    endpoint        = "{arm.url}"
    subscription_id = "{SUBSCRIPTION}"
    tenant_id       = "{TENANT}"
  }}
}}

resource "gpu_instance" "train" {{
  cloud     = "azure"
  region    = "{REGION}"
  zone      = "1"
  gpu       = "A100-80GB"
  spot      = true
  labels    = {labels}
  user_data = "#cloud-config\\nruncmd: [echo hello]\\n"
{extra}
  azure {{
    resource_group = "{RG}"
    subnet_id      = "{SUBNET}"
    ssh_public_key = "{SSH_KEY}"
  }}
}}
'''


def vms(arm) -> list[dict]:
    return list(arm.state()["vms"])


def power(vm: dict) -> str:
    return [s["code"] for s in vm["properties"]["instanceView"]["statuses"]
            if s["code"].startswith("PowerState/")][0]


def watch(az_tf):
    events, summary, _ = run_watch(az_tf.env, [f"azure:{SUBSCRIPTION}"],
                                   "--azure-endpoint", az_tf.arm_url)
    return events, summary


def person_deallocates(azure, vm_id: str) -> None:
    """`az vm deallocate` by someone else: POST deallocate with their own token."""
    aad, arm, ca = azure
    context = ssl.create_default_context(cafile=str(ca))
    form = urlencode({"client_id": PERSON, "client_secret": PERSON_SECRET,
                      "grant_type": "client_credentials",
                      "scope": "https://management.azure.com/.default"}).encode()
    with urllib.request.urlopen(urllib.request.Request(
            f"{aad.url}/{TENANT}/oauth2/v2.0/token", data=form), timeout=10,
            context=context) as r:
        token = json.loads(r.read())["access_token"]
    req = urllib.request.Request(
        f"{arm.url}{vm_id}/deallocate?api-version={COMPUTE_API_VERSION}", data=b"",
        method="POST", headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=10, context=context) as r:
        assert r.status == 202
    arm.complete()  # the deallocation ends


def test_an_evicted_spot_vm_stays_with_its_disk_and_runs_again_as_the_same_vm(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": config(arm)})
    res = wd.run("plan", "-out=tfplan")
    out = flat(res)
    assert re.search(r"Warning: gpu_instance(\.[a-z0-9-]+)?: \+\$", out) and SIZE in out, out
    planned = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]
    assert planned["image"] == NEWEST, "the newest version of the Azure HPC image"
    assert planned["reclaim"] == "stop" and planned["instance_type"] == SIZE
    assert planned["hourly_usd"] > 0
    wd.run("apply", "tfplan")
    (vm,) = vms(arm)
    p = vm["properties"]
    assert p["priority"] == "Spot" and p["evictionPolicy"] == "Deallocate"
    assert p["billingProfile"]["maxPrice"] == -1 and vm["zones"] == ["1"]
    assert p["storageProfile"]["osDisk"]["deleteOption"] == "Delete"
    assert p["networkProfile"]["networkInterfaces"][0]["properties"]["deleteOption"] == "Delete"
    assert vm["fake"]["has_custom_data"] and not vm["fake"]["has_admin_password"]
    assert vm["tags"]["gpu-tf-instance"] == vm["name"] and vm["tags"]["team"] == "ml"
    s = wd.resource("gpu_instance.train")
    assert s["name"] == vm["name"] and vm["name"].startswith("gpu-") and len(vm["name"]) == 12
    assert s["status"] == "running" and s["instance_id"] == p["vmId"] and s["id"] == vm["id"]
    (disk,) = arm.state()["disks"]
    assert s["disk_ids"] == [disk["id"]], "the OS disk, its resource group as the VM spells it"
    wd.assert_plan_empty()

    # Azure evicts it: deallocated, not deleted; not drift.
    arm.reclaim(vm["id"])
    arm.set_capacity(REGION, SIZE, short=2)
    wd.assert_plan_empty()
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "stopped_by_reclaim" and s["reclaims"] == 1
    assert s["last_reclaimed_at"]
    wd.assert_plan_empty()
    (evicted,) = vms(arm)
    assert power(evicted) == "PowerState/deallocated" and evicted["fake"]["evictions"] == 1

    # The watcher brings it back: two refused starts, then the same VM and disk run.
    events, summary = watch(az_tf)
    print("\n".join(json.dumps(e) for e in events), summary, sep="\n")
    kinds = [e["event"] for e in events]
    assert kinds == ["reclaimed", "start_attempt", "start_attempt", "start_attempt",
                     "started"], kinds
    assert all(e["cloud"] == "azure" and e["instance"] == vm["id"] for e in events)
    assert all(e.get("gpu") == "A100-80GB" for e in events)
    assert "SkuNotAvailable" in events[1]["detail"] and events[3]["detail"] == "accepted"
    assert "azure" in summary and "A100-80GB" in summary
    (back,) = vms(arm)
    assert power(back) == "PowerState/running"
    assert back["properties"]["vmId"] == p["vmId"]
    assert back["properties"]["storageProfile"]["osDisk"]["managedDisk"]["id"] == \
        p["storageProfile"]["osDisk"]["managedDisk"]["id"]
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "running" and s["reclaims"] == 1 and s["disk_ids"] == [disk["id"]]
    assert s["instance_id"] == p["vmId"]
    wd.assert_plan_empty()
    # Nothing secret reached the fake's logs or Terraform's output.
    assert "runcmd" not in json.dumps(arm.state()["requests"])
    wd.run("destroy")
    state = arm.state()
    assert state["vms"] == [] and state["disks"] == [] and state["nics"] == []


def test_labels_change_in_place_and_a_new_size_rolls_the_vm_new_first(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": config(arm)})
    wd.run("apply")
    (vm,) = vms(arm)
    (wd.path / "main.tf").write_text(config(arm, labels='{ team = "research" }'))
    wd.run("apply")
    (same,) = vms(arm)
    assert same["properties"]["vmId"] == vm["properties"]["vmId"]
    assert same["tags"] == {"team": "research", "gpu-tf-instance": vm["name"]}
    wd.assert_plan_empty()
    # A re-spelling is not a change.
    (wd.path / "main.tf").write_text(config(arm, labels='{ team = "research" }').replace(
        'cloud     = "azure"', 'cloud     = "AZURE"').replace('"A100-80GB"', '"a100 80gb"'))
    wd.assert_plan_empty()
    # Another size: a new VM, running before the old one is deleted.
    (wd.path / "main.tf").write_text(config(arm, labels='{ team = "research" }').replace(
        'gpu       = "A100-80GB"', 'instance_type = "Standard_NC4as_T4_v3"'))
    res = wd.run("apply")
    assert f"rolls VM {vm['name']}" in flat(res) and "`instance_type` changes" in flat(res)
    (new,) = vms(arm)
    assert new["name"].startswith(vm["name"] + "-")
    assert new["properties"]["hardwareProfile"]["vmSize"] == "Standard_NC4as_T4_v3"
    assert power(new) == "PowerState/running"
    log = [(r["method"], r["path"].lower()) for r in arm.state()["requests"]]
    put = max(i for i, (m, p) in enumerate(log)
              if m == "PUT" and p.endswith("/virtualmachines/" + new["name"].lower()))
    delete = max(i for i, (m, p) in enumerate(log)
                 if m == "DELETE" and p.endswith("/virtualmachines/" + vm["name"].lower()))
    assert put < delete, "the new VM is created before the old one is deleted"
    state = arm.state()
    assert len(state["disks"]) == 1 and len(state["nics"]) == 1, "the old disk and NIC went"
    s = wd.resource("gpu_instance.train")
    assert s["vm_name"] == new["name"] and s["instance_id"] == new["properties"]["vmId"]
    wd.assert_plan_empty()


def test_a_vm_a_person_deallocated_reads_stopped_and_is_left_alone(az_tf, arm, azure):
    wd = az_tf.workdir(files={"main.tf": config(arm)})
    wd.run("apply")
    (vm,) = vms(arm)
    person_deallocates(azure, vm["id"])
    wd.run("apply", "-refresh-only")
    assert wd.resource("gpu_instance.train")["status"] == "stopped"
    wd.assert_plan_empty()
    events, _ = watch(az_tf)
    assert [e["event"] for e in events] == ["left_stopped"]
    assert "person" in events[0]["detail"]
    (still,) = vms(arm)
    assert power(still) == "PowerState/deallocated"
    starts = [r for r in arm.state()["requests"] if r["path"].lower().endswith("/start")]
    assert starts == [], "the watcher never starts a VM a person stopped"


def test_without_the_providers_subscription_the_plan_says_which_setting(az_tf, arm):
    tf = config(arm).replace(f'    subscription_id = "{SUBSCRIPTION}"\n', "")
    wd = az_tf.workdir(files={"main.tf": tf})
    res = wd.fails("plan")
    assert "azure.subscription_id" in flat(res), res.output
    assert [r for r in arm.state()["requests"] if "/virtualmachines" in r["path"].lower()] == []


def test_a_lost_create_answer_finds_the_vm_by_its_marker_instead_of_a_second_one(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": config(arm)})
    arm.inject(method="PUT", path=r"/virtualMachines/", status=500, code="InternalServerError",
               message="lost", lose_answer=True)
    wd.run("apply")
    arm.complete()  # the create whose answer was lost ends (ARM moves it on by itself)
    (vm,) = vms(arm)
    puts = [r for r in arm.state()["requests"] if r["method"] == "PUT"]
    assert len(puts) == 2, "the retried PUT met If-None-Match and the VM was found by its tag"
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "running" and s["instance_id"] == vm["properties"]["vmId"]
    wd.assert_plan_empty()


def test_an_imported_vm_is_read_and_adopted_without_a_new_vm(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": config(arm)})
    wd.run("apply")
    (vm,) = vms(arm)
    wd.run("state", "rm", "gpu_instance.train")
    wd.run("import", "gpu_instance.train", vm["id"])
    s = wd.resource("gpu_instance.train")
    assert s["instance_id"] == vm["properties"]["vmId"] and s["region"] == REGION
    assert s["instance_type"] == SIZE and s["spot"] is True and s["reclaim"] == "stop"
    res = wd.run("apply")
    out = flat(res)
    assert "rolls VM" not in out, out
    assert "user_data" in out and "azure.ssh_public_key" in out and "azure.subnet_id" in out, out
    (same,) = vms(arm)
    assert same["properties"]["vmId"] == vm["properties"]["vmId"]
    wd.assert_plan_empty()


@pytest.mark.parametrize("code, outcome", [("ZonalAllocationFailed", "stockout"),
                                           ("SkuNotAvailable", "not_offered")])
def test_a_capacity_refusal_at_create_leaves_nothing_and_says_where(az_tf, arm, code, outcome):
    """ARM accepts the VM, then its allocation fails and the VM is left Failed: the apply
    deletes it with its NIC and disk, fails with one error naming the outcome, the place and
    ARM's code, and records nothing; with capacity back the same configuration applies."""
    arm.set_capacity(REGION, SIZE, short=1, code=code)
    wd = az_tf.workdir(files={"main.tf": config(arm)})
    res = wd.fails("apply")
    text = flat(res)
    assert f"No GPU capacity for gpu_instance at azure {REGION} 1" in text, res.output
    assert f"Azure answered {outcome} for a spot {SIZE}" in text, res.output
    assert code in text, res.output
    assert wd.state_resources() == []
    state = arm.state()
    assert [v for v in state["vms"] if v["properties"].get("provisioningState") != "Deleting"] \
        == [], state["vms"]
    wd.run("apply")
    assert len(vms(arm)) == 1
    wd.run("destroy")


def test_the_inventory_lists_gpu_vms_the_provider_did_not_make_without_an_import_id(
        az_tf, arm):
    """Someone's A100 VM (a size of the catalog) is in the inventory, unmanaged and priced,
    with no import id; a D-series VM (no GPU) is not; ours keeps its ARM id."""
    wd = az_tf.workdir(files={"main.tf": config(arm) + f'''
data "gpu_inventory" "vms" {{
  clouds  = ["azure"]
  regions = ["{REGION}"]
  kinds   = ["instance"]
}}

output "items" {{
  value = data.gpu_inventory.vms.items
}}
'''})
    wd.run("apply", "-target=gpu_instance.train")
    (ours,) = vms(arm)
    (key, vm), = arm.vms.items()
    for name, size in (("their-a100", SIZE), ("their-web", "Standard_D4s_v5")):
        theirs = copy.deepcopy(vm)
        theirs.update({"name": name, "size": size, "vmId": str(uuid.uuid4()),
                       "tags": {"team": "vision"}, "nics": []})
        arm.vms[(key[0], key[1], name)] = theirs
    wd.run("apply")
    items = wd.outputs()["items"]
    (mine,) = [i for i in items if i["managed"]]
    assert mine["import_id"] == ours["id"], items
    (other,) = [i for i in items if not i["managed"]]
    assert other["name"] == "their-a100" and other["import_id"] is None, other
    assert other["gpu"] == "A100-80GB" and other["labels"] == {"team": "vision"}, other
    assert other["monthly_usd"] > 0, other
    for name in ("their-a100", "their-web"):
        del arm.vms[(key[0], key[1], name)]
    wd.run("destroy")
