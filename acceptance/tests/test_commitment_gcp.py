"""`gpu_commitment` on Google Cloud (zonal reservations and committed use discounts) under
real Terraform, against the Google OAuth and Compute Engine fakes
(acceptance/fakes/compute.py), through Application Default Credentials (a service-account
key file), as a user's machine would run it.

What was bought is read from the fake's `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import pytest

from cloud_fakes import PROJECT, _CLEARED
from fakes.compute import Compute
from fakes.tokens import GoogleOAuth, TokenRegistry

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


def test_a_reservation_is_bought_once_and_deleted_on_destroy(gcp_tf, compute):
    compute.configure({"polls": 1})  # the insert's operation is polled until DONE
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + RESERVATION})
    res = wd.run("plan", "-out=tfplan")
    assert "COMMITMENT:" in flat(res) and "per month until cancelled" in flat(res)
    p = planned_values(wd)
    assert p["hourly_usd"] == pytest.approx(2 * 88.49, abs=1e-3), "at the on-demand rate"
    assert p["break_even_utilization"] == 1
    wd.run("apply", "tfplan")
    (r,) = compute.state()["reservations"]
    assert r["specificReservation"]["count"] == "2"
    assert r["specificReservation"]["instanceProperties"]["machineType"] == MACHINE
    assert r["zone"].endswith(f"/zones/{ZONE}") and r["name"].startswith("gpu-tf-")
    s = wd.resource("gpu_commitment.floor")
    assert s["commitment_id"] == r["name"] and s["status"] == "active"
    wd.assert_plan_empty()
    wd.run("destroy")
    assert compute.state()["reservations"] == []


def test_a_commitment_is_priced_from_published_rates_and_never_destroyed(gcp_tf, compute):
    wd = gcp_tf.workdir(files={"main.tf": provider(compute, allow=False) + CUD})
    res = wd.fails("plan")
    assert "allow_commitment_purchase" in flat(res) and "over 12 months" in flat(res)
    (wd.path / "main.tf").write_text(provider(compute) + CUD)
    res = wd.run("plan", "-out=tfplan")
    assert "IRREVERSIBLE:" in flat(res) and "over 12 months" in flat(res), res.output
    p = planned_values(wd)
    assert p["hourly_usd"] == pytest.approx(RATE_1Y, abs=0.01)
    assert p["total_usd"] == pytest.approx(p["hourly_usd"] * 8760, rel=1e-6)
    assert p["break_even_utilization"] == pytest.approx(p["hourly_usd"] / 88.49, abs=1e-3)
    assert "Cyclenerd" in p["price_source"]
    wd.run("apply", "tfplan")
    (c,) = compute.state()["commitments"]
    assert c["plan"] == "TWELVE_MONTH" and c["type"] == "ACCELERATOR_OPTIMIZED_A3"
    resources = {x["type"]: x for x in c["resources"]}
    assert resources["VCPU"]["amount"] == "208"
    assert resources["ACCELERATOR"]["amount"] == "8"
    assert resources["ACCELERATOR"]["acceleratorType"] == "nvidia-h100-80gb"
    assert [x["zone"].rsplit("/", 1)[-1] for x in c["reservations"]] == [ZONE]
    s = wd.resource("gpu_commitment.cud")
    assert s["commitment_id"] == c["name"] and s["status"] == "scheduled"
    assert s["start"] and s["end"]
    wd.assert_plan_empty()
    res = wd.fails("destroy")
    assert "cannot be destroyed" in flat(res)
    compute.set_clock(advance_days=2)
    wd.run("apply", "-refresh-only")
    assert wd.resource("gpu_commitment.cud")["status"] == "active"


def test_a_machine_without_a_published_rate_is_not_bought_blind(gcp_tf, compute):
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + CUD.replace(
        'gpu            = "H100"\n  gpu_count      = 8\n', 'instance_type  = "a2-ultragpu-8g"\n')})
    res = wd.fails("plan")
    assert "does not buy blind" in flat(res), res.output
    assert compute.state()["commitments"] == []


def test_a_stockout_is_reported_and_nothing_kept(gcp_tf, compute):
    compute.set_capacity(ZONE, MACHINE, available=False)
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + RESERVATION})
    res = wd.fails("apply")
    assert "ZONE_RESOURCE_POOL_EXHAUSTED" in flat(res), res.output
    assert wd.state_resources() == []


def test_throttling_with_403_is_retried(gcp_tf, compute):
    compute.inject(method="POST", path="/reservations$", status=403, code="rateLimitExceeded",
                   message="Rate Limit Exceeded", count=1)
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + RESERVATION})
    wd.run("apply")
    assert len(compute.state()["reservations"]) == 1


def test_a_lost_insert_answer_does_not_buy_twice(gcp_tf, compute):
    # The insert acts, then its answer is lost (503): the retry carries the same requestId,
    # so Compute answers the first operation instead of acting again.
    compute.inject(method="POST", path="/commitments$", status=503, count=1, lose_answer=True)
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + CUD})
    wd.run("apply")
    (c,) = compute.state()["commitments"]
    inserts = [r for r in compute.state()["requests"]
               if r["method"] == "POST" and r["path"].endswith("/commitments")]
    assert len(inserts) == 2, "the insert was repeated once"
    assert wd.resource("gpu_commitment.cud")["commitment_id"] == c["name"]
    wd.assert_plan_empty()


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


def test_commitments_are_imported_by_kind_location_and_name_and_plan_empty(gcp_tf, compute):
    wd = gcp_tf.workdir(files={"main.tf": provider(compute) + RESERVATION + CUD})
    wd.run("apply")
    floor, cud = wd.resource("gpu_commitment.floor"), wd.resource("gpu_commitment.cud")
    for address in ("gpu_commitment.floor", "gpu_commitment.cud"):
        wd.run("state", "rm", address)
    imported_cud = CUD.replace('gpu            = "H100"\n  gpu_count      = 8\n',
                               f'instance_type  = "{MACHINE}"\n')
    (wd.path / "main.tf").write_text(provider(compute, allow=False) + RESERVATION + imported_cud)
    res = wd.fails("import", "gpu_commitment.floor", f"gcp_reservation/{REGION}/{floor['id']}")
    assert "is not a zone" in flat(res)
    wd.run("import", "gpu_commitment.floor", f"gcp_reservation/{ZONE}/{floor['id']}")
    wd.run("import", "gpu_commitment.cud", f"gcp_commitment/{REGION}/{cud['id']}")
    wd.assert_plan_empty()
    f, c = wd.resource("gpu_commitment.floor"), wd.resource("gpu_commitment.cud")
    assert f["tags"] == {"team": "ml"}, "read back from the description the purchase wrote"
    assert c["term"] == "1y" and c["zone"] == ZONE and c["instance_count"] == 1
    for key in ("hourly_usd", "total_usd", "gpus"):
        assert c[key] == cud[key], key
    assert f["monthly_usd"] == floor["monthly_usd"]
    assert len(compute.state()["commitments"]) == 1, "import buys nothing"
