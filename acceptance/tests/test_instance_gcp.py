"""`gpu_instance` on Google Cloud under real Terraform, against the Google OAuth and
Compute Engine fakes (acceptance/fakes/compute_instances.py), through Application Default
Credentials: a Spot VM with termination action STOP is reclaimed (preempted), the plan stays
empty, and the same VM with the same disk runs again once capacity returns.

What exists is read from the fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import json
import re

import urllib.request

import pytest

from cloud_fakes import PROJECT, _CLEARED
from fakes.compute_instances import ComputeInstances
from fakes.tokens import GoogleOAuth, TokenRegistry
from watch_runner import run_watch

REGION, ZONE = "us-central1", "us-central1-a"
FAMILY = "common-cu129-ubuntu-2204-nvidia-580"
IMAGES = [
    {"name": "common-cu129-ubuntu-2204-nvidia-580-v20251001", "family": FAMILY,
     "creationTimestamp": "2025-10-01T00:00:00.000-07:00"},
    {"name": "common-cu129-ubuntu-2204-nvidia-580-v20251115", "family": FAMILY,
     "creationTimestamp": "2025-11-15T00:00:00.000-08:00"},
]
NEWEST = f"projects/deeplearning-platform-release/global/images/{IMAGES[1]['name']}"


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gcp")
    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account(PROJECT)
    key = oauth.write_key_file(account, directory / "key.json")
    compute = ComputeInstances(tokens).start()
    yield compute, key, account
    compute.stop()
    oauth.stop()


@pytest.fixture
def gce(google):
    fake, _, _ = google
    fake.reset()
    fake.seed_project(PROJECT)
    fake.seed_images("deeplearning-platform-release", IMAGES)
    fake.configure({"polls": 0})
    return fake


@pytest.fixture
def gcp_tf(terraform, google):
    _, key, _ = google
    env = {k: v for k, v in terraform.env.items() if k not in _CLEARED}
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    terraform.env = env
    terraform.gce_url = google[0].url
    return terraform


def flat(res) -> str:
    return " ".join(res.output.split())


def config(gce, extra: str = "", labels: str = '{ team = "ml" }') -> str:
    return f'''
provider "gpu" {{
  gcp {{
    endpoint = "{gce.url}"
    project  = "{PROJECT}"
  }}
}}

resource "gpu_instance" "train" {{
  cloud  = "gcp"
  region = "{REGION}"
  zone   = "{ZONE}"
  name   = "train"
  gpu    = "A100-40GB"
  spot   = true
  labels = {labels}
{extra}
}}
'''


def vms(gce) -> list[dict]:
    return list(gce.state()["instances"])


def watch(gcp_tf):
    events, summary, _ = run_watch(gcp_tf.env, [f"gcp:{PROJECT}"],
                                   "--gcp-endpoint", gcp_tf.gce_url)
    return events, summary


def person_stops(google, name: str) -> None:
    """`gcloud compute instances stop`: instances.stop with the person's own token."""
    gce, _, account = google
    req = urllib.request.Request(
        f"{gce.url}/compute/v1/projects/{PROJECT}/zones/{ZONE}/instances/{name}/stop",
        data=b"", method="POST",
        headers={"Authorization": "Bearer " + account.self_signed_jwt()})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200


def test_a_reclaimed_spot_vm_stays_with_its_disk_and_runs_again_as_the_same_vm(gcp_tf, gce):
    wd = gcp_tf.workdir(files={"main.tf": config(gce)})
    res = wd.run("plan", "-out=tfplan")
    out = flat(res)
    assert re.search(r"Warning: gpu_instance(\.[a-z0-9-]+)?: \+\$", out) and "a2-highgpu-1g" in out, out
    planned = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]
    assert planned["image"] == NEWEST, "the newest image of the Deep Learning VM family"
    assert planned["reclaim"] == "stop" and planned["instance_type"] == "a2-highgpu-1g"
    assert planned["hourly_usd"] > 0
    wd.run("apply", "tfplan")
    (vm,) = vms(gce)
    assert vm["scheduling"]["provisioningModel"] == "SPOT"
    assert vm["scheduling"]["instanceTerminationAction"] == "STOP"
    assert vm["labels"]["gpu-tf-instance"] == "train" and vm["labels"]["team"] == "ml"
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "running" and s["instance_id"] == vm["id"]
    (disk,) = s["disk_ids"]
    assert disk == f"projects/{PROJECT}/zones/{ZONE}/disks/train"
    wd.assert_plan_empty()

    # The cloud takes the capacity back: stopped, not deleted; not drift.
    gce.reclaim(PROJECT, ZONE, "train")
    gce.short_capacity(ZONE, "a2-highgpu-1g", 2)
    wd.assert_plan_empty()
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "stopped_by_reclaim" and s["reclaims"] == 1
    assert s["last_reclaimed_at"]
    wd.assert_plan_empty()
    (vm_stopped,) = vms(gce)
    assert vm_stopped["status"] == "TERMINATED" and vm_stopped["id"] == vm["id"]

    # The watcher brings it back: two refused starts, then the same VM and disk run.
    events, summary = watch(gcp_tf)
    print("\n".join(json.dumps(e) for e in events), summary, sep="\n")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "reclaimed" and kinds[-1] == "started", kinds
    assert kinds.count("start_attempt") == 3
    (back,) = vms(gce)
    assert back["status"] == "RUNNING" and back["id"] == vm["id"]
    assert [d["source"] for d in back["disks"]] == [d["source"] for d in vm["disks"]]
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_instance.train")
    assert s["status"] == "running" and s["reclaims"] == 1 and s["disk_ids"] == [disk]
    wd.assert_plan_empty()
    wd.run("destroy")
    assert vms(gce) == [] and gce.state()["disks"] == []


def test_labels_change_in_place_and_a_new_gpu_rolls_the_vm_new_first(gcp_tf, gce):
    wd = gcp_tf.workdir(files={"main.tf": config(gce)})
    wd.run("apply")
    (vm,) = vms(gce)
    (wd.path / "main.tf").write_text(config(gce, labels='{ team = "research" }'))
    wd.run("apply")
    (same,) = vms(gce)
    assert same["id"] == vm["id"] and same["labels"]["team"] == "research"
    wd.assert_plan_empty()
    # A re-spelling is not a change.
    (wd.path / "main.tf").write_text(config(gce, labels='{ team = "research" }').replace(
        'cloud  = "gcp"', 'cloud  = "GCP"').replace('"A100-40GB"', '"a100 40gb"'))
    wd.assert_plan_empty()
    # Another machine: a new VM, running before the old one is deleted.
    (wd.path / "main.tf").write_text(config(gce, labels='{ team = "research" }').replace(
        'gpu    = "A100-40GB"', 'instance_type = "g2-standard-8"'))
    res = wd.run("apply")
    assert "rolls VM train" in flat(res) and "`instance_type` changes" in flat(res)
    (new,) = vms(gce)
    assert new["name"].startswith("train-") and new["machineType"].endswith("g2-standard-8")
    log = [(r["method"], r["path"]) for r in gce.state()["requests"]]
    insert = max(i for i, (m, p) in enumerate(log) if m == "POST" and p.endswith("/instances"))
    delete = max(i for i, (m, p) in enumerate(log) if m == "DELETE")
    assert insert < delete, "the new VM is created before the old one is deleted"
    wd.assert_plan_empty()


def test_a_vm_a_person_stopped_reads_stopped_and_is_left_alone(gcp_tf, gce, google):
    wd = gcp_tf.workdir(files={"main.tf": config(gce)})
    wd.run("apply")
    person_stops(google, "train")
    gce.complete()  # the stop's operation ends: TERMINATED
    wd.run("apply", "-refresh-only")
    assert wd.resource("gpu_instance.train")["status"] == "stopped"
    wd.assert_plan_empty()
    events, _ = watch(gcp_tf)
    assert [e["event"] for e in events] == ["left_stopped"]
    assert "person" in events[0]["detail"]
    (vm,) = vms(gce)
    assert vm["status"] == "TERMINATED"


def test_an_imported_vm_takes_what_the_cloud_does_not_report_from_the_config(gcp_tf, gce):
    """`terraform import` by the instance's own id: the read fills what Compute Engine
    reports; gpu, user_data and the gcp block come from the configuration without touching
    the VM; the plan after that apply is empty and the VM is priced."""
    extra = '  user_data = "#cloud-config"\n  gcp {\n    network = "default"\n  }\n'
    wd = gcp_tf.workdir(files={"main.tf": config(gce, extra=extra)})
    wd.run("apply")
    (vm,) = vms(gce)
    wd.run("state", "rm", "gpu_instance.train")
    bad = wd.run("import", "gpu_instance.train", "train", rc=1)
    assert "aws/<region>/<instance-id>" in flat(bad)
    wd.run("import", "gpu_instance.train", f"projects/{PROJECT}/zones/{ZONE}/instances/train")
    s = wd.resource("gpu_instance.train")
    assert s["instance_id"] == vm["id"] and s["instance_type"] == "a2-highgpu-1g"
    assert s["spot"] is True and s["reclaim"] == "stop" and s["name"] == "train"
    res = wd.run("plan", "-out=tfplan")
    out = flat(res)
    assert "rolls VM" not in out and "values taken from the configuration" in out, out
    assert "VM: gpu, user_data, gcp." in out, out
    wd.run("apply", "tfplan")
    (same,) = vms(gce)
    assert same["id"] == vm["id"], "the import adopted the VM, it did not make a new one"
    s = wd.resource("gpu_instance.train")
    assert s["gpu"] == "A100-40GB" and s["hourly_usd"] > 0 and s["monthly_delta_usd"] == 0
    wd.assert_plan_empty()


def test_a_stockout_at_create_leaves_nothing_and_says_where(gcp_tf, gce, tmp_path):
    """Compute Engine refuses the VM (ZONE_RESOURCE_POOL_EXHAUSTED): one error that names
    the outcome, the place and Compute's own words; no VM, nothing in state; with capacity
    back the same configuration applies. The events file says request, capacity, request,
    ready, and `time_to_ready_seconds` is the ready line's."""
    events = tmp_path / "events.jsonl"
    gcp_tf.env = {**gcp_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    gce.short_capacity(ZONE, "a2-highgpu-1g", 1)
    wd = gcp_tf.workdir(files={"main.tf": config(gce)})
    res = wd.fails("apply")
    text = flat(res)
    assert f"No GPU capacity for gpu_instance at gcp {REGION} {ZONE}" in text, res.output
    assert "Google Cloud answered stockout for a spot a2-highgpu-1g" in text, res.output
    assert "does not have enough resources available" in text, res.output
    assert "Nothing was made there." in text, res.output
    assert vms(gce) == [] and wd.state_resources() == []
    wd.run("apply")
    assert len(vms(gce)) == 1
    every = [json.loads(line) for line in events.read_text().splitlines()]
    lines = [e for e in every if e["event"] != "audit"]
    assert [e["event"] for e in lines] == ["request", "capacity", "request", "ready"], lines
    audited = [(e["action"], e["result"]) for e in every if e["event"] == "audit"]
    assert audited == [("launch_instance", "insufficient_capacity"), ("launch_instance", "ok")]
    for e in lines:
        assert (e["cloud"], e["region"], e["zone"], e["gpu"]) == ("gcp", REGION, ZONE,
                                                               "A100-40GB"), e
        assert e["resource"] == "gpu_instance.train", e
    assert lines[1]["outcome"] == "stockout"
    assert wd.resource("gpu_instance.train")["time_to_ready_seconds"] == lines[3]["seconds"]
    wd.assert_plan_empty()
    wd.run("destroy")


FAILOVER = '''
  capacity_wait = "5m"
  failback      = "{failback}"

  failover {{
    cloud  = "gcp"
    region = "us-central1"
    zone   = "us-central1-b"
  }}

  failover {{
    cloud  = "gcp"
    region = "europe-west4"
    zone   = "europe-west4-b"
  }}
'''


def test_an_instance_fails_over_across_zones_and_regions_and_back(gcp_tf, gce, tmp_path):
    """A stockout in us-central1-a and in us-central1-b lands the VM in europe-west4-b:
    `placement` and `attempts` say so, nothing is left in the first two zones, and the
    next plan is empty with a warning. With `failback = "on_apply"` and capacity back in
    us-central1-a, the next apply makes a VM there first and then deletes the one in
    europe-west4-b."""
    events = tmp_path / "events.jsonl"
    gcp_tf.env = {**gcp_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    gce.short_capacity(ZONE, "a2-highgpu-1g", 1)
    gce.short_capacity("us-central1-b", "a2-highgpu-1g", 1)
    wd = gcp_tf.workdir(files={"main.tf": config(gce, FAILOVER.format(failback="never"))})
    plan = wd.run("plan")
    text = flat(plan)
    assert "up to $1,407.45/month if it fails over to gcp us-central1 us-central1-b" in text, text
    assert "At gcp europe-west4 europe-west4-b: +$1,235.77/month" in text, text
    wd.run("apply")
    s = wd.resource("gpu_instance.train")
    assert [(a["region"], a["outcome"]) for a in s["attempts"]] == [
        ("us-central1", "stockout"), ("us-central1", "stockout"), ("europe-west4", "ready")], \
        s["attempts"]
    assert s["placement"]["zone"] == "europe-west4-b" and s["placement"]["region"] == "europe-west4"
    assert s["zone"] == ZONE and s["region"] == REGION, "the configuration's words stay"
    assert [v["zone"].rsplit("/", 1)[-1] for v in vms(gce)] == ["europe-west4-b"], vms(gce)
    plan = wd.run("plan", "-detailed-exitcode", rc=0)
    assert "runs on its failover place gcp europe-west4 europe-west4-b" in flat(plan), plan.output
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["event"] for e in lines].count("failover") == 2, lines

    wd = gcp_tf.workdir(files={"main.tf": config(gce, FAILOVER.format(failback="on_apply")),
                               "terraform.tfstate": (wd.path / "terraform.tfstate").read_text()})
    plan = wd.run("plan", "-detailed-exitcode", rc=2)
    assert "tries to return to gcp us-central1 us-central1-a" in flat(plan), plan.output
    wd.run("apply")
    s = wd.resource("gpu_instance.train")
    assert s["placement"]["zone"] == ZONE, s["placement"]
    assert [v["zone"].rsplit("/", 1)[-1] for v in vms(gce)] == [ZONE], vms(gce)
    wd.assert_plan_empty()
    wd.run("destroy")
    assert vms(gce) == []
