"""Availability in the ranking under real Terraform: `gpu_offers` and `gpu_pool_placement`
with `live = true` read AWS's spot placement scores (the EC2 fake in front of moto), Azure's
spot placement score (the ARM fake over HTTPS, through the provider's real Azure credential
chain) and the provider's own record (`events_file`); `prefer_available` ranks places at or
above `min_availability` first, unscored places next, places known to be short last, by
price within each. Without any score the ranking is by price, and a warning says so.

The scores are the fakes' (set per test); what the provider asked is read from the fakes'
request logs, not through the provider. Live prices point at a dead endpoint, so every price
is the embedded snapshot's and the order by price is known.
"""

from __future__ import annotations

import datetime
import json

import pytest

from cloud_fakes import CLIENT, CLIENT_SECRET, SUBSCRIPTION, TENANT, _CLEARED
from fakes import tls_context
from fakes.aws.ec2_spot import Ec2Spot
from fakes.azure.tokens import AzureAD
from fakes.azure.vms import ArmVms
from fakes.tokens import TokenRegistry

A100 = "Standard_NC24ads_A100_v4"  # A100-80GB x 1: spot in eastus, centralus, southcentralus
REGIONS = '["eastus", "centralus", "southcentralus", "us-central1", "us-east4", "us-east5"]'


@pytest.fixture(scope="module")
def clouds(moto, tmp_path_factory):
    context, ca = tls_context(tmp_path_factory.mktemp("availability-tls"))
    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT, CLIENT_SECRET).start(ssl_context=context)
    arm = ArmVms(tokens).start(ssl_context=context)
    ec2 = Ec2Spot(moto.url).start()
    yield aad, arm, ec2, ca
    ec2.stop()
    arm.stop()
    aad.stop()


@pytest.fixture
def fakes(clouds):
    _, arm, ec2, _ = clouds
    arm.reset()
    arm.seed_subscription(SUBSCRIPTION, ["rg-gpu"], locations=["eastus"], tenant_id=TENANT)
    ec2.reset()
    return arm, ec2


@pytest.fixture
def tf(terraform, moto, clouds, tmp_path):
    aad, _, _, ca = clouds
    env = moto.terraform_env(terraform.env, tmp_path / "aws")
    env = {k: v for k, v in env.items() if k not in _CLEARED or k.startswith("GPU_PRICES")}
    env.update({"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": CLIENT,
                "AZURE_CLIENT_SECRET": CLIENT_SECRET, "AZURE_AUTHORITY_HOST": aad.url,
                "SSL_CERT_FILE": str(ca)})
    terraform.env = env
    return terraform


def record(path, lines):
    """An events file as the provider writes it: one JSON object per line."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    with open(path, "w") as f:
        for i, (event, region, outcome) in enumerate(lines):
            at = (now - datetime.timedelta(hours=i + 1)).isoformat().replace("+00:00", "Z")
            line = {"at": at, "event": event, "cloud": "gcp", "region": region,
                    "gpu": "A100-80GB"}
            if outcome:
                line["outcome"] = outcome
            f.write(json.dumps(line) + "\n")


def config(arm, ec2, events, prefer: str = "true", live: str = "true", azure: bool = True) -> str:
    azure_block = f'''
  azure {{
    endpoint        = "{arm.url}"
    subscription_id = "{SUBSCRIPTION}"
  }}''' if azure else ""
    return f'''
provider "gpu" {{
  events_file = "{events}"
  aws {{
    endpoints = {{ ec2 = "{ec2.url}" }}
  }}{azure_block}
}}

data "gpu_offers" "a100" {{
  live             = {live}
  gpu              = "A100-80GB"
  gpu_count        = 1
  capacity         = "spot"
  clouds           = ["azure", "gcp"]
  regions          = {REGIONS}
  prefer_available = {prefer}
  min_availability = 0.5
  limit            = 20
}}

data "gpu_offers" "h100" {{
  live             = {live}
  gpu              = "H100"
  gpu_count        = 8
  capacity         = "spot"
  clouds           = ["aws"]
  regions          = ["us-east-1"]
  prefer_available = {prefer}
  limit            = 20
  # p5's spot prices are on the stale list; this test is about the zones' scores.
  include_stale_prices = true
}}

data "gpu_pool_placement" "a100" {{
  live             = {live}
  gpu              = "A100-80GB"
  gpu_count        = 1
  min_nodes        = 0
  max_nodes        = 4
  expected_nodes   = 2
  clouds           = ["azure", "gcp"]
  regions          = {REGIONS}
  prefer_available = {prefer}
}}
'''


def seed(arm, ec2, events):
    # Azure: centralus likely, eastus short, southcentralus no data.
    arm.set_placement_score("centralus", A100, "High")
    arm.set_placement_score("eastus", A100, "Low")
    # AWS: of us-east-1's zones, use1-az6 likely, use1-az3 (the cheapest) short.
    ec2.set_placement_score("us-east-1", "use1-az6", "p5.48xlarge", 9)
    ec2.set_placement_score("us-east-1", "use1-az3", "p5.48xlarge", 2)
    # Our record: us-central1 answered ready, us-east5 twice out of stock.
    record(events, [("ready", "us-central1", None), ("capacity", "us-east5", "stockout"),
                    ("capacity", "us-east5", "stockout")])


def places(offers):
    return [(o["region"], o["zone"], o["availability"]) for o in offers]


def tiers_hold(offers, minimum):
    """Known good, then unscored, then short; by price within each."""
    tier = [0 if o["availability"] is not None and o["availability"] >= minimum
            else 1 if o["availability"] is None else 2 for o in offers]
    assert tier == sorted(tier), places(offers)
    for a, b in zip(offers, offers[1:]):
        if tier[offers.index(a)] == tier[offers.index(b)]:
            assert a["price_per_gpu_hour"] <= b["price_per_gpu_hour"], places(offers)


def test_prefer_available_ranks_by_the_clouds_scores_and_the_record(tf, fakes, tmp_path):
    arm, ec2 = fakes
    events = tmp_path / "events.jsonl"
    seed(arm, ec2, events)
    wd = tf.workdir(files={"main.tf": config(arm, ec2, events)})
    res = wd.run("apply")

    a100 = wd.resource("data.gpu_offers.a100")["offers"]
    assert [(o["region"], o["availability"]) for o in a100] == [
        ("centralus", 0.9), ("us-central1", 1.0),      # at or above 0.5, by price
        ("southcentralus", None), ("us-east4", None),  # no score, by price
        ("eastus", 0.1), ("us-east5", 0.0),            # short, by price
    ], places(a100)
    tiers_hold(a100, 0.5)
    central = a100[0]
    assert central["availability_source"] == "azure spot placement score High", central
    assert central["availability_as_of"] == datetime.date.today().isoformat(), central
    assert a100[1]["availability_source"] == "record: 1 of 1 answers ready in 7 days", a100[1]
    assert a100[5]["availability_source"] == "record: 0 of 2 answers ready in 7 days"
    assert a100[2]["availability_source"] is None and a100[2]["availability_as_of"] is None

    h100 = wd.resource("data.gpu_offers.h100")["offers"]
    tiers_hold(h100, 0.5)
    assert (h100[0]["zone"], h100[0]["availability"]) == ("use1-az6", 0.9), places(h100)
    assert (h100[-1]["zone"], h100[-1]["availability"]) == ("use1-az3", 0.2), places(h100)
    assert h100[0]["availability_source"].startswith("aws spot placement score 9 of 10")

    placement = wd.resource("data.gpu_pool_placement.a100")
    assert (placement["region"], placement["availability"]) == ("centralus", 0.9), placement
    by_region = {c["region"]: c for c in placement["candidates"]}
    assert by_region["eastus"]["availability"] == 0.1
    assert by_region["southcentralus"]["availability"] is None
    assert "Ranked by price alone" not in res.output, res.output

    # What the provider asked: one AWS request for us-east-1's zones with the H100 type set
    # and a target of one instance; Azure within its 8 regions and 5 sizes, one VM.
    aws = [r for r in ec2.placement_score_requests if r["regions"] == ["us-east-1"]]
    assert aws and all(r["single_az"] is True and r["target_capacity"] == 1
                       and "p5.48xlarge" in r["instance_types"] for r in aws), ec2.placement_score_requests
    asked = arm.placement_score_requests
    assert asked and all(len(r["desired_locations"]) <= 8 and len(r["desired_sizes"]) <= 5
                         and r["desired_count"] == 1 and r["availability_zones"] is False
                         for r in asked), asked
    regions = {loc for r in asked for loc in r["desired_locations"]}
    assert {"eastus", "centralus", "southcentralus"} <= regions, asked


def test_without_prefer_available_the_order_is_by_price_and_scores_are_shown(tf, fakes, tmp_path):
    arm, ec2 = fakes
    events = tmp_path / "events.jsonl"
    seed(arm, ec2, events)
    wd = tf.workdir(files={"main.tf": config(arm, ec2, events, prefer="false")})
    wd.run("apply")
    a100 = wd.resource("data.gpu_offers.a100")["offers"]
    prices = [o["price_per_gpu_hour"] for o in a100]
    assert prices == sorted(prices), places(a100)
    assert a100[0]["region"] == "eastus" and a100[0]["availability"] == 0.1, places(a100)
    assert wd.resource("data.gpu_pool_placement.a100")["region"] == "eastus"


def test_no_score_anywhere_ranks_by_price_and_says_so(tf, fakes, tmp_path):
    """No Azure subscription, the AWS scores refused (the fake answers an error), no
    record: the ranking is by price, and warnings say why."""
    arm, ec2 = fakes
    ec2.inject(path="^GetSpotPlacementScores$", status=403, code="UnauthorizedOperation",
               message="You are not authorized to perform this operation.", count=100)
    wd = tf.workdir(files={"main.tf": config(arm, ec2, tmp_path / "none.jsonl", azure=False)})
    res = wd.run("apply")
    out = " ".join(res.output.split())
    assert "Ranked by price alone" in out, out
    assert "Azure spot placement scores are unavailable" in out, out
    assert "azure spot placement score: 1 of 1 request failed" in out, out
    assert "subscription_id" in out, out
    assert "AWS spot placement scores are unavailable" in out, out
    assert "aws GetSpotPlacementScores: 1 of 1 request failed" in out, out
    assert "UnauthorizedOperation" in out, out
    a100 = wd.resource("data.gpu_offers.a100")["offers"]
    prices = [o["price_per_gpu_hour"] for o in a100]
    assert prices == sorted(prices) and all(o["availability"] is None for o in a100)


def test_prefer_available_without_live_ranks_by_price_and_says_so(tf, fakes, tmp_path):
    arm, ec2 = fakes
    events = tmp_path / "events.jsonl"
    seed(arm, ec2, events)
    wd = tf.workdir(files={"main.tf": config(arm, ec2, events, live="false")})
    res = wd.run("plan")
    out = " ".join(res.output.split())
    assert "reads availability with `live = true`" in out, out
    assert ec2.placement_score_requests == [] and arm.placement_score_requests == []
