"""`gpu_commitment` on Google Cloud where only Google Cloud is tested, under real Terraform,
against the Google OAuth and Compute Engine fakes (acceptance/fakes/google/compute.py),
through Application Default Credentials (a service-account key file), as a user's machine
would run it: a machine without a published commitment rate is not bought blind; throttling
with 403 `rateLimitExceeded` is retried; use is read from the reservations' in-use count,
a committed use discount's through the reservation it attaches.

The promises Google Cloud shares with Azure (a commitment is priced, bought once and never
destroyed; a reservation is created once and deleted on destroy; no capacity fails the
apply with the cloud's reason; a lost purchase answer does not buy twice; commitments are
imported with an empty plan) are tested once for both clouds in
`test_commitment_azure_gcp.py`, on the fixtures and helpers defined here (`google`,
`compute`, `gcp_tf`, `provider`, `RESERVATION`, `CUD`). What was bought is read from the
fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import pytest

from cloud_fakes import PROJECT, _CLEARED
from fakes.google.compute import Compute
from fakes.google.tokens import GoogleOAuth
from fakes.tokens import TokenRegistry

REGION, ZONE = "us-central1", "us-central1-b"
MACHINE = "a3-highgpu-8g"
RATE_1Y = 61.38  # commitment_rates.csv: a3-highgpu-8g, us-central1, 1y (rounded)


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gcp")
    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account(PROJECT)
    key = oauth.write_key_file(account, directory / "key.json")
    compute = Compute(tokens).start()
    yield compute, key
    compute.stop()
    oauth.stop()


@pytest.fixture
def compute(google):
    fake, _ = google
    fake.reset()
    fake.seed_project(PROJECT)
    fake.configure({"polls": 0})  # operations DONE at once; one test polls
    return fake


@pytest.fixture
def gcp_tf(terraform, google):
    _, key = google
    env = {k: v for k, v in terraform.env.items() if k not in _CLEARED}
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    terraform.env = env
    return terraform


def flat(res) -> str:
    return " ".join(res.output.split())


def provider(compute, allow: bool = True) -> str:
    return f'''
provider "gpu" {{
  allow_commitment_purchase = {"true" if allow else "false"}
  gcp {{
    endpoint = "{compute.url}"
    project  = "{PROJECT}"
  }}
}}
'''


RESERVATION = f'''
resource "gpu_commitment" "floor" {{
  kind           = "gcp_reservation"
  region         = "{REGION}"
  zone           = "{ZONE}"
  instance_type  = "{MACHINE}"
  instance_count = 2
  tags           = {{ team = "ml" }}
}}
'''

CUD = f'''
resource "gpu_commitment" "cud" {{
  kind           = "gcp_commitment"
  region         = "{REGION}"
  zone           = "{ZONE}"
  gpu            = "H100"
  gpu_count      = 8
  instance_count = 1
  term           = "1y"
}}
'''


def planned_values(wd) -> dict:
    return wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]


def test_a_machine_without_a_published_rate_is_not_bought_blind(gcp_tf, compute):
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + CUD.replace(
        'gpu            = "H100"\n  gpu_count      = 8\n', 'instance_type  = "a2-ultragpu-8g"\n')})
    res = wd.fails("plan")
    assert "does not buy blind" in flat(res), res.output
    assert compute.state()["commitments"] == []


def test_throttling_with_403_is_retried(gcp_tf, compute):
    compute.inject(method="POST", path="/reservations$", status=403, code="rateLimitExceeded",
                   message="Rate Limit Exceeded", count=1)
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + RESERVATION})
    wd.run("apply")
    assert len(compute.state()["reservations"]) == 1


def test_use_is_read_from_the_reservations_in_use_count(gcp_tf, compute):
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + RESERVATION + CUD})
    wd.run("apply")
    (floor,) = [r for r in compute.state()["reservations"] if not r["name"].endswith("-r")]
    s = wd.resource("gpu_commitment.floor")
    assert s["used_instances"] == 0 and s["utilization"] == 0
    assert s["idle_monthly_usd"] == pytest.approx(s["monthly_usd"], abs=0.01)
    res = wd.run("plan")
    assert "Commitment 0% used" in flat(res), res.output
    # The committed use discount is read through the reservation it attaches; it has not
    # started, so its low use is no warning.
    cud = wd.resource("gpu_commitment.cud")
    assert cud["status"] == "scheduled" and cud["used_instances"] == 0
    assert flat(res).count("% used") == 1, res.output

    compute.set_usage(PROJECT, ZONE, floor["name"], 2)
    (c,) = compute.state()["commitments"]
    (attached,) = c["reservations"]
    compute.set_usage(PROJECT, ZONE, attached["name"], 1)
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_commitment.floor")
    assert s["used_instances"] == 2 and s["utilization"] == 1 and s["idle_monthly_usd"] == 0
    cud = wd.resource("gpu_commitment.cud")
    assert cud["used_instances"] == 1 and cud["utilization"] == 1
    res = wd.run("plan")
    assert "% used" not in res.output
