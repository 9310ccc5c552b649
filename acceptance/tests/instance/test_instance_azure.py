"""`gpu_instance` on Azure where only Azure is tested, under real Terraform, against the
local Entra ID and the ARM VM fake (acceptance/fakes/azure/vms.py) over HTTPS, through the
provider's real Azure credential chain (client secret) and `SSL_CERT_FILE`: without the
provider's subscription the plan names the setting and calls nothing; a lost create answer
finds the VM by its marker instead of making a second; the inventory lists GPU VMs the
provider did not make, without an import id.

The promises Azure shares with Google Cloud (a reclaimed Spot VM stays with its disk and
runs again as the same VM, labels change in place and a new size rolls the VM new first, a
VM a person stopped is left alone, an imported VM is adopted, a capacity refusal at create
leaves nothing and says where) are tested once for both clouds in
`test_instance_azure_gcp.py`, on the fixtures and helpers defined here (`azure`, `arm`,
`az_tf`, `config`, `vms`, `power`, `watch`, `person_deallocates`); `test_secrets.py` uses
them too. What exists is read from the fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import copy
import json
import ssl
import urllib.request
import uuid
from urllib.parse import urlencode

import pytest

from cloud_fakes import CLIENT, CLIENT_SECRET, SUBSCRIPTION, TENANT, _CLEARED
from fakes import tls_context
from fakes.azure.tokens import AzureAD
from fakes.azure.vms import COMPUTE_API_VERSION, ArmVms
from fakes.tokens import TokenRegistry
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
