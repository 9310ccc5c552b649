"""`gpu_instance` on Google Cloud where only Google Cloud is tested, under real Terraform,
against the Google OAuth and Compute Engine fakes (acceptance/fakes/google/compute_instances.py),
through Application Default Credentials: a stockout in us-central1-a and in us-central1-b
lands the VM in europe-west4-b, and with `failback = "on_apply"` and capacity back it
returns to us-central1-a, new VM first.

The promises Google Cloud shares with Azure (a reclaimed Spot VM stays with its disk and
runs again as the same VM, labels change in place and a new machine rolls the VM new first,
a VM a person stopped is left alone, an imported VM is adopted, a capacity refusal at create
leaves nothing and says where) are tested once for both clouds in
`test_instance_azure_gcp.py`, on the fixtures and helpers defined here (`google`, `gce`,
`gcp_tf`, `config`, `vms`, `watch`, `person_stops`); `test_secrets.py` uses them too. What
exists is read from the fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from cloud_fakes import PROJECT, _CLEARED
from fakes.google.compute_instances import ComputeInstances
from fakes.google.tokens import GoogleOAuth
from fakes.tokens import TokenRegistry
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
