"""`gpu_instance` on AWS under real Terraform, against the EC2 spot fake
(acceptance/fakes/aws/ec2_spot.py) in front of moto: a persistent spot request with interruption
behaviour `stop` is interrupted, the plan stays empty, and EC2 itself starts the same
instance with the same volume again once capacity returns; the watcher reports it.

What exists is read from the fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import json
import re
import urllib.request

import boto3
import pytest

from fakes.aws.ec2_spot import Ec2Spot
from watch_runner import run_watch

REGION, ZONE = "us-east-1", "us-east-1a"
DLAMI = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)"
IMAGES = [
    {"name": f"{DLAMI} 20261001", "creation_date": "2026-10-01T00:00:00Z"},
    {"name": f"{DLAMI} 20261120", "creation_date": "2026-11-20T00:00:00Z"},
    # Another AMI of the same owner: never chosen.
    {"name": "Deep Learning AMI Neuron (Ubuntu 22.04) 20261201", "creation_date": "2026-12-01T00:00:00Z"},
]


@pytest.fixture(scope="module")
def ec2_fake(moto):
    fake = Ec2Spot(moto.url).start()
    yield fake
    fake.stop()


@pytest.fixture
def ec2(ec2_fake):
    ec2_fake.reset()
    images = ec2_fake.seed_images(REGION, IMAGES)
    ec2_fake.newest = images[1]["imageId"]
    return ec2_fake


@pytest.fixture
def aws_tf(terraform, moto, tmp_path, ec2):
    terraform.env = moto.terraform_env(terraform.env, tmp_path / "aws")
    terraform.ec2_url = ec2.url
    return terraform


def flat(res) -> str:
    return " ".join(res.output.split())


def control(fake, path: str, body: dict) -> dict:
    req = urllib.request.Request(fake.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def config(ec2, extra: str = "", labels: str = '{ team = "ml" }', gpu: str = 'gpu = "A10G"') -> str:
    return f'''
provider "gpu" {{
  aws {{
    endpoints = {{ ec2 = "{ec2.url}" }}
  }}
}}

resource "gpu_instance" "train" {{
  cloud  = "aws"
  region = "{REGION}"
  zone   = "{ZONE}"
  name   = "train"
  {gpu}
  spot   = true
  labels = {labels}
{extra}
}}
'''


def live(ec2) -> list[dict]:
    """The fake's own instances that are not terminated."""
    region = ec2.state()["regions"].get(REGION, {})
    return [i for i in region.get("instances", [])
            if i["instanceState"]["name"] not in ("terminated", "shutting-down")]


def watch(aws_tf):
    events, summary, _ = run_watch(aws_tf.env, [f"aws:{REGION}"],
                                   "--aws-endpoint", aws_tf.ec2_url)
    return events, summary


def test_an_interrupted_spot_vm_stays_with_its_volume_and_ec2_runs_the_same_vm_again(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": config(ec2)})
    res = wd.run("plan", "-out=tfplan")
    assert re.search(r"Warning: gpu_instance(\.[a-z0-9-]+)?: \+\$[\d,.]+/month", flat(res)), flat(res)
    planned = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]
    assert planned["image"] == ec2.newest, "the newest Deep Learning Base OSS Nvidia AMI"
    assert planned["reclaim"] == "stop" and planned["instance_type"].startswith("g5.")
    wd.run("apply", "tfplan")
    (vm,) = live(ec2)
    assert vm["instanceLifecycle"] == "spot" and vm["instanceState"]["name"] == "running"
    (request,) = ec2.state()["regions"][REGION]["spot_requests"]
    assert request["type"] == "persistent" and request["instanceInterruptionBehavior"] == "stop"
    tags = {t["key"]: t["value"] for t in vm["tagSet"]}
    assert tags["gpu.tf/instance"] == "train" and tags["team"] == "ml" and tags["Name"] == "train"
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "running" and s["instance_id"] == vm["instanceId"] == s["id"]
    (volume,) = s["disk_ids"]
    assert volume.startswith("vol-") and s["disk_size_gb"] == 200
    wd.assert_plan_empty()

    # EC2 takes the capacity back: stopped with its volume, not drift.
    control(ec2, "/_fake/reclaim", {"instance_id": vm["instanceId"], "short": True})
    wd.assert_plan_empty()
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "stopped_by_reclaim" and s["reclaims"] == 1, s
    assert s["last_reclaimed_at"]
    wd.assert_plan_empty()
    (stopped,) = live(ec2)
    assert stopped["instanceState"]["name"] == "stopped"
    assert stopped["stateReason"]["code"] == "Server.SpotInstanceShutdown"

    # Capacity comes back after two more refusals; EC2 restarts the same instance itself,
    # the watcher only watches (it never calls StartInstances on EC2).
    control(ec2, "/_fake/capacity", {"region": REGION, "instance_type": vm["instanceType"], "short": 2})
    before = len(ec2.state()["requests"])
    events, summary = watch(aws_tf)
    print("\n".join(json.dumps(e) for e in events), summary, sep="\n")
    kinds = [e["event"] for e in events]
    assert kinds == ["reclaimed", "started"], kinds
    assert "the cloud restarts it" in events[0]["detail"]
    assert not [r for r in ec2.state()["requests"][before:] if r.get("action") == "StartInstances"]
    assert "aws" in summary and "A10G" in summary
    (back,) = live(ec2)
    assert back["instanceId"] == vm["instanceId"] and back["instanceState"]["name"] == "running"
    assert [m["ebs"]["volumeId"] for m in back["blockDeviceMapping"]] == [volume]
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "running" and s["reclaims"] == 1 and s["disk_ids"] == [volume]
    wd.assert_plan_empty()

    # Destroy cancels the persistent request first, or EC2 would launch a new instance.
    wd.run("destroy")
    assert live(ec2) == []
    actions = [r.get("action") for r in ec2.state()["requests"]]
    assert actions.index("CancelSpotInstanceRequests") < actions.index("TerminateInstances")
    (request,) = ec2.state()["regions"][REGION]["spot_requests"]
    assert request["state"] == "cancelled"


def test_tags_change_in_place_and_another_type_rolls_the_vm_new_first(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": config(ec2)})
    wd.run("apply")
    (vm,) = live(ec2)
    wd.path.joinpath("main.tf").write_text(config(ec2, labels='{ team = "research" }'))
    wd.run("apply")
    (same,) = live(ec2)
    assert same["instanceId"] == vm["instanceId"]
    assert {t["key"]: t["value"] for t in same["tagSet"]}["team"] == "research"
    wd.assert_plan_empty()
    # A re-spelling is not a change.
    wd.path.joinpath("main.tf").write_text(
        config(ec2, labels='{ team = "research" }', gpu='gpu = "a10g"').replace(
            'cloud  = "aws"', 'cloud  = "AWS"'))
    wd.assert_plan_empty()
    # Another type: a new instance, running before the old one is terminated.
    wd.path.joinpath("main.tf").write_text(
        config(ec2, labels='{ team = "research" }', gpu='instance_type = "g6.xlarge"'))
    res = wd.run("apply")
    assert "rolls VM train" in flat(res)
    (new,) = live(ec2)
    assert new["instanceId"] != vm["instanceId"] and new["instanceType"] == "g6.xlarge"
    actions = [r.get("action") for r in ec2.state()["requests"]]
    run = max(i for i, a in enumerate(actions) if a == "RunInstances")
    terminate = max(i for i, a in enumerate(actions) if a == "TerminateInstances")
    assert run < terminate, "the new VM is launched before the old one is terminated"
    wd.assert_plan_empty()
    wd.run("destroy")
    assert live(ec2) == []


def test_an_instance_a_person_stopped_reads_stopped_and_is_left_alone(aws_tf, ec2, moto):
    wd = aws_tf.workdir(files={"main.tf": config(ec2, extra="  reclaim = \"stop\"")})
    wd.run("apply")
    (vm,) = live(ec2)
    client = boto3.client("ec2", region_name=REGION, endpoint_url=ec2.url,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.stop_instances(InstanceIds=[vm["instanceId"]])
    ec2.tick()
    wd.run("apply", "-refresh-only")
    assert wd.resource("gpu_instance.train")["status"] == "stopped"
    wd.assert_plan_empty()
    events, _ = watch(aws_tf)
    assert [e["event"] for e in events] == ["left_stopped"]
    assert "person" in events[0]["detail"]
    (still,) = live(ec2)
    assert still["instanceState"]["name"] == "stopped"


def test_the_example_applies_reads_stopped_by_reclaim_and_destroys(aws_tf, ec2):
    """examples/resources/gpu_instance as a user copies it, pointed at the fake."""
    wd = aws_tf.workdir("resources/gpu_instance", files={
        "terraform.tfvars.json": json.dumps({"aws_endpoint": ec2.url})})
    wd.run("validate")
    res = wd.run("apply")
    assert re.search(r"Warning: gpu_instance(\.[a-z0-9-]+)?: \+\$[\d,.]+/month", flat(res)), flat(res)
    (vm,) = live(ec2)
    tags = {t["key"]: t["value"] for t in vm["tagSet"]}
    assert tags["team"] == "ml" and tags["project"] == "llm-finetune"
    assert wd.outputs()["status"] == "running" and wd.outputs()["monthly_usd"] > 0
    control(ec2, "/_fake/reclaim", {"instance_id": vm["instanceId"], "short": True})
    wd.run("apply", "-refresh-only")
    assert wd.outputs()["status"] == "stopped_by_reclaim"
    wd.assert_plan_empty()
    wd.run("destroy")
    assert live(ec2) == []


def test_an_imported_instance_is_read_and_adopted_without_a_new_vm(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": config(ec2)})
    wd.run("apply")
    (vm,) = live(ec2)
    wd.run("state", "rm", "gpu_instance.train")
    bad = wd.run("import", "gpu_instance.train", vm["instanceId"], rc=1)
    assert "aws/<region>/<instance-id>" in flat(bad)
    wd.run("import", "gpu_instance.train", f"aws/{REGION}/{vm['instanceId']}")
    s = wd.resource("gpu_instance.train")
    assert s["instance_type"] == vm["instanceType"] and s["image"] == ec2.newest
    assert s["zone"] == ZONE and s["name"] == "train" and s["disk_size_gb"] == 200
    assert s["spot"] is True and s["reclaim"] == "stop" and s["labels"] == {"team": "ml"}
    res = wd.run("apply")
    assert "rolls VM" not in flat(res) and "taken as written, without changing the VM: gpu." in flat(res)
    (same,) = live(ec2)
    assert same["instanceId"] == vm["instanceId"]
    assert wd.resource("gpu_instance.train")["hourly_usd"] > 0
    wd.assert_plan_empty()


def test_a_stockout_at_create_leaves_nothing_and_says_where(aws_tf, ec2):
    """EC2 refuses the spot launch (InsufficientInstanceCapacity): one error that names the
    outcome, the place and EC2's own words; no instance, nothing in state; with capacity
    back the same configuration applies."""
    ec2.set_short(REGION, "g5.xlarge", 1)
    wd = aws_tf.workdir(files={"main.tf": config(ec2, gpu='instance_type = "g5.xlarge"')})
    res = wd.fails("apply")
    text = flat(res)
    assert f"No GPU capacity for gpu_instance at aws {REGION} {ZONE}" in text, res.output
    assert "AWS answered stockout for a spot g5.xlarge" in text, res.output
    assert "InsufficientInstanceCapacity" in text, res.output
    assert live(ec2) == [] and wd.state_resources() == []
    wd.run("apply")
    assert len(live(ec2)) == 1
    wd.run("destroy")


def test_the_inventory_lists_gpu_vms_the_provider_did_not_make_without_an_import_id(
        aws_tf, ec2):
    """Someone's g5 (a GPU type of the catalog) is in the inventory, unmanaged and priced,
    with no import id; a t3 (no GPU) is not; ours keeps its import id."""
    inventory = f'''
data "gpu_inventory" "vms" {{
  clouds  = ["aws"]
  regions = ["{REGION}"]
  kinds   = ["instance"]
}}

output "items" {{
  value = data.gpu_inventory.vms.items
}}
'''
    wd = aws_tf.workdir(files={"main.tf": config(ec2)})
    wd.run("apply")
    (ours,) = live(ec2)
    client = boto3.client("ec2", region_name=REGION, endpoint_url=ec2.url,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    theirs = {}
    for kind in ("g5.xlarge", "t3.micro"):
        run = client.run_instances(ImageId=ec2.newest, InstanceType=kind, MinCount=1,
                                   MaxCount=1, TagSpecifications=[{
                                       "ResourceType": "instance",
                                       "Tags": [{"Key": "team", "Value": "vision"}]}])
        theirs[kind] = run["Instances"][0]["InstanceId"]
    (wd.path / "inventory.tf").write_text(inventory)
    wd.run("apply")
    items = wd.outputs()["items"]
    (mine,) = [i for i in items if i["managed"]]
    assert mine["import_id"] == f"aws/{REGION}/{ours['instanceId']}", items
    (other,) = [i for i in items if not i["managed"]]
    assert other["import_id"] is None and other["gpu"] == "A10G", other
    assert other["labels"] == {"team": "vision"} and other["monthly_usd"] > 0, other
    wd.run("destroy")
    client.terminate_instances(InstanceIds=list(theirs.values()))
