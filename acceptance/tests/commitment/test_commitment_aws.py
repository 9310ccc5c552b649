"""`gpu_commitment` on AWS (capacity blocks and capacity reservations) and
`gpu_capacity_block_offers`, under real Terraform, against the EC2 commitments fake
(acceptance/fakes/aws/ec2_commitments.py) in front of moto.

What the fake holds is read from its `/_fake/state`, not through the provider: purchases,
tags, cancellations and every request the provider made.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request

import pytest

from export_check import export_and_adopt
from query_check import provider_head, query_and_adopt
from fakes.aws.ec2_commitments import Ec2Commitments

REGION = "us-east-1"
BLOCK_TYPE = "p5.48xlarge"  # 8 x H100 in the catalog
HOURS = 48


@pytest.fixture(scope="module")
def ec2_fake(moto):
    fake = Ec2Commitments(moto.url).start()
    yield fake
    fake.stop()


@pytest.fixture
def ec2(ec2_fake):
    """The fake, emptied for this test (tests of one module run one after another)."""
    ec2_fake.reset()
    return ec2_fake


@pytest.fixture
def aws_tf(terraform, moto, tmp_path):
    terraform.env = moto.terraform_env(terraform.env, tmp_path / "aws")
    return terraform


def state(fake) -> dict:
    with urllib.request.urlopen(f"{fake.url}/_fake/state", timeout=10) as r:
        return json.load(r)


def reservations(fake) -> list[dict]:
    return state(fake)["regions"].get(REGION, {}).get("reservations", [])


def calls(fake, action: str) -> list[dict]:
    return [r for r in state(fake)["requests"] if r.get("action") == action]


def seed_blocks(fake, *fees: float, zone_letters: str = "ab") -> list[dict]:
    start = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).replace(
        minute=0, second=0, microsecond=0)
    offerings = [{"instance_type": BLOCK_TYPE, "availability_zone": f"{REGION}{zone_letters[i % len(zone_letters)]}",
                  "instance_count": 1, "start": start.isoformat(), "duration_hours": HOURS,
                  "upfront_fee": fee} for i, fee in enumerate(fees)]
    return fake.seed_offerings(REGION, offerings)


def provider(fake, allow: bool) -> str:
    return f'''
provider "gpu" {{
  allow_commitment_purchase = {"true" if allow else "false"}
  default_labels            = {{ team = "ml" }}
  aws {{
    endpoints = {{ ec2 = "{fake.url}" }}
  }}
}}
'''


def block(extra: str = "") -> str:
    return f'''
resource "gpu_commitment" "block" {{
  kind           = "aws_capacity_block"
  region         = "{REGION}"
  instance_type  = "{BLOCK_TYPE}"
  instance_count = 1
  duration_hours = {HOURS}
  tags           = {{ purpose = "training" }}
{extra}}}
'''


def reservation(extra: str = "") -> str:
    return f'''
resource "gpu_commitment" "floor" {{
  kind           = "aws_capacity_reservation"
  region         = "{REGION}"
  zone           = "{REGION}b"
  gpu            = "h100"
  gpu_count      = 8
  instance_count = 2
{extra}}}
'''


def test_a_capacity_block_is_priced_guarded_bought_once_and_never_destroyed(aws_tf, ec2):
    cheap, dear = seed_blocks(ec2, 2500.0, 3100.0)
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=False) + block()})

    # Without the guard: the plan fails, says why and what it would cost; nothing bought.
    res = wd.fails("plan")
    assert "allow_commitment_purchase" in res.output and "$2,500.00" in res.output, res.output
    assert calls(ec2, "PurchaseCapacityBlock") == []

    # With it: the plan shows the cheapest offering, the money and the warning.
    (wd.path / "main.tf").write_text(provider(ec2, allow=True) + block())
    res = wd.run("plan", "-out=tfplan")
    assert "IRREVERSIBLE: $2,500.00 over 48 hours" in res.output, res.output
    planned = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]
    assert planned["offering_id"] == cheap["capacityBlockOfferingId"]
    assert planned["zone"] == cheap["availabilityZone"]
    assert planned["upfront_usd"] == 2500 and planned["hourly_usd"] == 0
    assert planned["gpus"] == 8
    effective = 2500 / (HOURS * 8)
    assert planned["effective_usd_per_gpu_hour"] == pytest.approx(effective, abs=1e-4)
    on_demand = planned["on_demand_usd_per_gpu_hour"]
    assert on_demand and on_demand > 0, "the catalog prices p5.48xlarge in us-east-1"
    assert planned["break_even_utilization"] == pytest.approx(effective / on_demand, abs=1e-3)
    assert calls(ec2, "PurchaseCapacityBlock") == [], "plan buys nothing"

    wd.run("apply", "tfplan")
    bought = reservations(ec2)
    assert len(bought) == 1 and len(calls(ec2, "PurchaseCapacityBlock")) == 1
    r = bought[0]
    assert r["reservationType"] == "capacity-block" and r["instanceType"] == BLOCK_TYPE
    tags = {t["key"]: t["value"] for t in r["tagSet"]}
    assert tags["team"] == "ml" and tags["purpose"] == "training"
    assert tags["gpu.tf/commitment"].startswith("gc-")
    s = wd.resource("gpu_commitment.block")
    assert s["commitment_id"] == r["capacityReservationId"] == s["id"]
    assert s["status"] == "scheduled"
    assert [o["capacityBlockOfferingId"] for o in state(ec2)["regions"][REGION]["offerings"]] \
        == [dear["capacityBlockOfferingId"]], "the bought offering is consumed"

    wd.assert_plan_empty()

    # A change that needs a new purchase is an error on its attribute, never a replace.
    (wd.path / "main.tf").write_text(provider(ec2, allow=True) + block().replace(
        "instance_count = 1", "instance_count = 2"))
    res = wd.fails("plan")
    assert "A bought commitment cannot be changed" in res.output
    assert "instance_count" in res.output

    # Re-spelled, it is no change.
    (wd.path / "main.tf").write_text(provider(ec2, allow=True) + block().replace(
        '"aws_capacity_block"', '"AWS-Capacity-Block"').replace(f'"{REGION}"', f'"{REGION.upper()}"'))
    wd.assert_plan_empty()

    # Status is read live as the block starts and ends.
    ec2.set_clock(advance_hours=25)
    wd.run("apply", "-refresh-only")
    assert wd.resource("gpu_commitment.block")["status"] == "active"
    ec2.set_clock(advance_hours=HOURS)
    wd.run("apply", "-refresh-only")
    assert wd.resource("gpu_commitment.block")["status"] == "expired"
    wd.assert_plan_empty()

    # Destroy refuses; the block and the state stay.
    res = wd.fails("destroy")
    assert "cannot be destroyed" in res.output and 'on_destroy = "forget"' in res.output
    assert wd.resource("gpu_commitment.block")["commitment_id"] == r["capacityReservationId"]
    assert calls(ec2, "CancelCapacityReservation") == []

    # on_destroy = "forget": an update of state only, then destroy forgets it.
    (wd.path / "main.tf").write_text(provider(ec2, allow=True) + block('  on_destroy = "forget"\n'))
    wd.run("apply")
    res = wd.run("destroy")
    assert "keeps billing" in res.output or "still billing" in res.output, res.output
    assert wd.state_resources() == []
    assert len(reservations(ec2)) == 1 and calls(ec2, "CancelCapacityReservation") == []
    assert len(calls(ec2, "PurchaseCapacityBlock")) == 1, "bought exactly once in all"


def test_a_capacity_reservation_bills_at_on_demand_and_cancels_on_destroy(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + reservation()})
    res = wd.run("plan", "-out=tfplan")
    assert "COMMITMENT:" in res.output and "per month until cancelled" in res.output, res.output
    planned = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]
    assert planned["break_even_utilization"] == 1
    assert planned["total_usd"] is None, "open-ended: no total, never $0"
    assert planned["monthly_usd"] == pytest.approx(planned["hourly_usd"] * 730, rel=1e-6)
    assert planned["gpus"] == 16
    wd.run("apply", "tfplan")
    (r,) = reservations(ec2)
    assert r["reservationType"] == "default" and r["availabilityZone"] == f"{REGION}b"
    assert r["totalInstanceCount"] == 2 and r["instanceType"] == planned["instance_type"]
    assert r["fake"]["client_token"], "CreateCapacityReservation carries a ClientToken"
    s = wd.resource("gpu_commitment.floor")
    assert s["status"] == "active" and s["start"]
    wd.assert_plan_empty()
    wd.run("destroy")
    (r,) = reservations(ec2)
    assert r["state"] == "cancelled"
    assert len(calls(ec2, "CreateCapacityReservation")) == 1


def test_a_lost_purchase_answer_is_found_again_not_bought_twice(aws_tf, ec2):
    seed_blocks(ec2, 2500.0)
    ec2.inject(method="POST", path="^PurchaseCapacityBlock$", status=500, code="InternalError",
               message="We encountered an internal error.", lose_answer=True)
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + block()})
    res = wd.run("apply")
    assert "Adopted a commitment bought earlier" in res.output, res.output
    assert len(reservations(ec2)) == 1
    assert len(calls(ec2, "PurchaseCapacityBlock")) == 1, "not repeated after a 5xx"
    assert wd.resource("gpu_commitment.block")["commitment_id"] == reservations(ec2)[0]["capacityReservationId"]
    wd.assert_plan_empty()


def test_no_capacity_is_a_clear_error_and_nothing_in_state(aws_tf, ec2):
    ec2.set_capacity(REGION, "p5.48xlarge", available=False)
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + reservation().replace(
        'gpu            = "h100"\n  gpu_count      = 8\n', 'instance_type  = "p5.48xlarge"\n')})
    res = wd.fails("apply")
    assert "no capacity" in res.output.lower() and "Nothing was bought" in res.output, res.output
    assert wd.state_resources() == []
    assert reservations(ec2) == []


def test_offers_data_source_ranks_by_price_per_gpu_hour(aws_tf, ec2):
    a, b, c = seed_blocks(ec2, 3000.0, 2000.0, 2600.0)
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=False) + f'''
data "gpu_capacity_block_offers" "h100" {{
  regions        = ["{REGION}"]
  gpu            = "H100"
  gpu_count      = 8
  duration_hours = {HOURS}
}}
output "offers" {{ value = data.gpu_capacity_block_offers.h100.offers }}
output "cheapest" {{ value = data.gpu_capacity_block_offers.h100.cheapest }}
'''})
    wd.run("apply")
    out = wd.outputs()
    ids = [o["offering_id"] for o in out["offers"]]
    assert ids == [b["capacityBlockOfferingId"], c["capacityBlockOfferingId"],
                   a["capacityBlockOfferingId"]]
    cheapest = out["cheapest"]
    assert cheapest["upfront_usd"] == 2000 and cheapest["gpu"] == "H100" and cheapest["gpus"] == 8
    assert cheapest["usd_per_gpu_hour"] == pytest.approx(2000 / (HOURS * 8), abs=1e-4)
    assert calls(ec2, "PurchaseCapacityBlock") == []


def test_an_azure_kind_without_a_subscription_fails_at_plan_before_any_call(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + '''
resource "gpu_commitment" "ri" {
  kind           = "azure_reservation"
  region         = "eastus"
  gpu            = "H100"
  instance_count = 1
  term           = "1y"
}
'''})
    res = wd.fails("plan")
    assert "azure.subscription_id" in res.output and "kind" in res.output, res.output
    assert state(ec2)["requests"] == []


def test_a_reservation_reads_its_use_and_warns_while_under_half(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + reservation()})
    wd.run("apply")
    (r,) = reservations(ec2)
    s = wd.resource("gpu_commitment.floor")
    # Nothing runs in it yet: a measured zero, and all of it idle.
    assert s["used_instances"] == 0 and s["utilization"] == 0
    assert s["idle_monthly_usd"] == pytest.approx(s["monthly_usd"], abs=0.01)
    res = wd.run("plan")
    text = " ".join(res.output.split())
    idle = f"${s['idle_monthly_usd']:,.2f}"
    assert f"Commitment 0% used: {idle}/month idle" in text, res.output
    assert f"had 0 of 2 instances in use at the last refresh" in text
    assert "No changes" in text, "a warning, not a change"

    # One of two instances runs in it (EC2: available drops to 1): half used, no warning.
    ec2.set_usage(REGION, r["capacityReservationId"], 1)
    wd.run("apply", "-refresh-only")
    s = wd.resource("gpu_commitment.floor")
    assert s["used_instances"] == 1 and s["utilization"] == 0.5
    assert s["idle_monthly_usd"] == pytest.approx(s["monthly_usd"] / 2, abs=0.01)
    res = wd.run("plan")
    assert "% used" not in res.output, res.output
    wd.assert_plan_empty()


def test_commitments_bought_elsewhere_are_imported_and_plan_empty(aws_tf, ec2):
    seed_blocks(ec2, 2500.0)
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + block() + reservation()})
    wd.run("apply")
    block_id = wd.resource("gpu_commitment.block")["commitment_id"]
    floor = wd.resource("gpu_commitment.floor")
    for address in ("gpu_commitment.block", "gpu_commitment.floor"):
        wd.run("state", "rm", address)
    # The configuration a person writes for what exists: the instance type, not `gpu`.
    imported = block() + reservation().replace(
        'gpu            = "h100"\n  gpu_count      = 8\n',
        f'instance_type  = "{floor["instance_type"]}"\n')
    (wd.path / "main.tf").write_text(provider(ec2, allow=False) + imported)

    # A wrong kind or a malformed id is refused, naming the forms; nothing is read in.
    res = wd.fails("import", "gpu_commitment.block", f"aws_capacity_reservation/{REGION}/{block_id}")
    assert f"{block_id} is a aws_capacity_block, not a aws_capacity_reservation" in \
        " ".join(res.output.split()), res.output
    res = wd.fails("import", "gpu_commitment.block", block_id)
    assert "Invalid import id" in res.output and "aws_capacity_block/<region>/<cr-id>" in \
        " ".join(res.output.split())

    wd.run("import", "gpu_commitment.block", f"aws_capacity_block/{REGION}/{block_id}")
    wd.run("import", "gpu_commitment.floor",
           f"aws_capacity_reservation/{REGION}/{floor['commitment_id']}")
    wd.assert_plan_empty()
    b, f = wd.resource("gpu_commitment.block"), wd.resource("gpu_commitment.floor")
    assert b["duration_hours"] == HOURS and b["tags"] == {"purpose": "training"}
    assert b["upfront_usd"] is None and "not read back" in b["price_source"]
    assert b["gpus"] == 8
    # Priced as a plan prices it: the catalog's on-demand rate.
    for key in ("hourly_usd", "monthly_usd", "gpus", "zone", "instance_count"):
        assert f[key] == floor[key], key
    assert f["used_instances"] == 0 and f["status"] == "active"
    assert len(calls(ec2, "PurchaseCapacityBlock")) == 1
    assert len(calls(ec2, "CreateCapacityReservation")) == 1, "import buys nothing"


def test_the_inventory_lists_every_reservation_with_its_idle_money(aws_tf, ec2):
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + reservation()})
    wd.run("apply")
    floor = wd.resource("gpu_commitment.floor")
    ec2.set_usage(REGION, floor["commitment_id"], 1)
    (wd.path / "inventory.tf").write_text(f'''
data "gpu_inventory" "c" {{
  clouds  = ["aws"]
  regions = ["{REGION}"]
  kinds   = ["commitment"]
}}

output "items" {{
  value = data.gpu_inventory.c.items
}}
''')
    wd.run("apply")
    (item,) = wd.outputs()["items"]
    assert item["name"] == floor["commitment_id"] and item["managed"] is True
    assert (item["nodes"], item["used_instances"], item["utilization"]) == (2, 1, 0.5)
    assert item["gpu"] == "H100" and item["gpu_count"] == 8
    assert item["monthly_usd"] == pytest.approx(floor["monthly_usd"] / 2, rel=1e-4)
    assert item["labels"] == {"team": "ml"}, "the provider's marker left out"
    assert item["import_id"] == f"aws_capacity_reservation/{REGION}/{floor['commitment_id']}"


@pytest.mark.tf_min("1.5")
def test_export_writes_bought_commitments_that_import_with_an_empty_plan(
        aws_tf, ec2, provider_bin):
    """A block and a reservation bought by one configuration, exported and applied in a
    directory with no state: two imports, nothing bought, nothing cancelled."""
    seed_blocks(ec2, 2500.0)
    wd = aws_tf.workdir(files={"main.tf": provider(ec2, allow=True) + block() + reservation()})
    wd.run("apply")
    bought = len(calls(ec2, "PurchaseCapacityBlock")) + len(calls(ec2, "CreateCapacityReservation"))
    block_id = wd.resource("gpu_commitment.block")["commitment_id"]
    text, adopted = export_and_adopt(
        aws_tf, provider_bin, aws_tf.env,
        ["--clouds", "aws", "--regions", REGION, "--kinds", "commitment",
         "--aws-endpoint", f"ec2={ec2.url}"], imports=2)
    assert f'id = "aws_capacity_block/{REGION}/{block_id}"' in text, text
    assert "allow_commitment_purchase" not in text, "the export never allows a purchase"
    assert adopted.resource(f"gpu_commitment.{block_id}")["status"] == \
        wd.resource("gpu_commitment.block")["status"]
    assert len(calls(ec2, "PurchaseCapacityBlock")) + \
        len(calls(ec2, "CreateCapacityReservation")) == bought
    assert not calls(ec2, "CancelCapacityReservation")
    if aws_tf.version != "1.0":
        # `terraform query` lists the same two by identity; the configuration it
        # generates imports them, and still nothing is bought or cancelled.
        lists = ('list "gpu_commitment" "aws" {\n  provider = gpu\n  config {\n'
                 f'    clouds  = ["aws"]\n    regions = ["{REGION}"]\n  }}\n}}\n')
        listing, generated, queried = query_and_adopt(aws_tf, provider_head(text), lists, 2)
        assert f"import_id=aws_capacity_block/{REGION}/{block_id}" in listing, listing
        assert "allow_commitment_purchase" not in generated
        assert {r["values"]["commitment_id"] for r in queried.state_resources()} == \
            {r["values"]["commitment_id"] for r in adopted.state_resources()}
        assert len(calls(ec2, "PurchaseCapacityBlock")) + \
            len(calls(ec2, "CreateCapacityReservation")) == bought
        assert not calls(ec2, "CancelCapacityReservation")
