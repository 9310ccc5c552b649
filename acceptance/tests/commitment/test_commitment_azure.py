"""`gpu_commitment` on Azure where only Azure is tested, under real Terraform, against the
local Entra ID and the ARM commitments fake (acceptance/fakes/azure/commitments.py) over
HTTPS, through the provider's real Azure credential chain (client secret) and
`SSL_CERT_FILE`: a price changed since the plan buys nothing; a reservation without a
subscription fails before any call; a lost capacity reservation answer does not create
twice; use is read from Azure and low use warns with the idle money; the inventory lists
orders and capacity reservations; the export writes bought commitments that import with an
empty plan (and `terraform query` lists them); each purchase and cancel is audited with the
service principal.

The promises Azure shares with Google Cloud (a commitment is priced, bought once and never
destroyed; a reservation is created once and deleted on destroy; no capacity fails the
apply with the cloud's reason; a lost purchase answer does not buy twice; commitments are
imported with an empty plan) are tested once for both clouds in
`test_commitment_azure_gcp.py`, on the fixtures and helpers defined here (`azure`, `arm`,
`az_tf`, `provider`, `RESERVATION`, `CAPACITY`). What was bought is read from the fake's
`/_fake/state`, not through the provider.
"""

from __future__ import annotations

import pytest

from cloud_fakes import CLIENT, CLIENT_SECRET, SUBSCRIPTION, TENANT, _CLEARED
from audit_check import audit_lines, check_line
from export_check import export_and_adopt
from query_check import provider_head, query_and_adopt
from fakes import tls_context
from fakes.azure.commitments import ArmCommitments
from fakes.azure.tokens import AzureAD
from fakes.tokens import TokenRegistry, service_principal_id

REGION = "eastus"
SKU = "Standard_ND96isr_H100_v5"  # 8 x H100 in the catalog, $98.32/h on demand
MONTHLY = 41_000.0                 # the fake's 1-year monthly price per instance


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    context, ca = tls_context(tmp_path_factory.mktemp("azure-tls"))
    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT, CLIENT_SECRET).start(ssl_context=context)
    arm = ArmCommitments(tokens).start(ssl_context=context)
    yield aad, arm, ca
    arm.stop()
    aad.stop()


@pytest.fixture
def arm(azure):
    _, arm, _ = azure
    arm.reset()
    arm.seed_subscription(SUBSCRIPTION, ["rg-gpu"], tenant_id=TENANT)
    arm.set_prices([{"location": REGION, "sku": SKU, "term": "P1Y", "billing_plan": "Monthly",
                     "amount": MONTHLY},
                    {"location": REGION, "sku": SKU, "term": "P1Y", "billing_plan": "Upfront",
                     "amount": MONTHLY * 12}])
    arm.configure({"polls": 1, "purchase_polls": 1, "retry_after": 0})
    return arm


@pytest.fixture
def az_tf(terraform, azure):
    aad, _, ca = azure
    env = {k: v for k, v in terraform.env.items() if k not in _CLEARED}
    env.update({"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": CLIENT,
                "AZURE_CLIENT_SECRET": CLIENT_SECRET, "AZURE_AUTHORITY_HOST": aad.url,
                "SSL_CERT_FILE": str(ca)})
    terraform.env = env
    return terraform


def provider(arm, allow: bool = True) -> str:
    return f'''
provider "gpu" {{
  allow_commitment_purchase = {"true" if allow else "false"}
  azure {{
    endpoint        = "{arm.url}"
    subscription_id = "{SUBSCRIPTION}"
    tenant_id       = "{TENANT}"
  }}
}}
'''


RESERVATION = f'''
resource "gpu_commitment" "ri" {{
  kind           = "azure_reservation"
  region         = "East US"
  instance_type  = "{SKU}"
  instance_count = 2
  term           = "1y"
  tags           = {{ team = "ml" }}
}}
'''

CAPACITY = '''
resource "gpu_commitment" "hold" {
  kind           = "azure_capacity_reservation"
  region         = "eastus"
  zone           = "1"
  gpu            = "H100"
  gpu_count      = 8
  instance_count = 1
  azure {
    resource_group = "rg-gpu"
  }
}
'''


def flat(res) -> str:
    """The output with Terraform's line wrapping undone."""
    return " ".join(res.output.split())


def planned_values(wd) -> dict:
    return wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]


def test_a_price_changed_since_the_plan_buys_nothing(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": provider(arm) + RESERVATION})
    wd.run("plan", "-out=tfplan")
    arm.set_prices([{"location": REGION, "sku": SKU, "term": "P1Y", "billing_plan": "Monthly",
                     "amount": MONTHLY * 1.1}])
    res = wd.fails("apply", "tfplan")
    # Terraform plans again at apply: the new price differs from the saved plan's, which
    # Terraform refuses (or, past that check, the provider's own re-quote does).
    assert ("total_usd" in flat(res) or "The price changed since the plan" in flat(res)), res.output
    assert arm.state()["orders"] == [] and wd.state_resources() == [], "nothing bought"


def test_a_reservation_without_a_subscription_fails_before_any_call(az_tf, arm):
    text = provider(arm).replace(f'    subscription_id = "{SUBSCRIPTION}"\n', "")
    wd = az_tf.workdir(files={"main.tf": text + RESERVATION})
    res = wd.fails("plan")
    assert "azure.subscription_id" in flat(res)
    assert arm.state()["quotes"] == []


def test_a_lost_capacity_reservation_answer_does_not_create_twice(az_tf, arm):
    arm.inject(method="PUT", path="/capacityReservations/", status=503, count=1,
               lose_answer=True)
    wd = az_tf.workdir(files={"main.tf": provider(arm) + CAPACITY})
    wd.run("apply")
    (group,) = arm.state()["capacity_reservation_groups"]
    assert len(group["capacityReservations"]) == 1
    wd.assert_plan_empty()


def test_use_is_read_from_azure_and_low_use_warns_with_the_idle_money(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": provider(arm) + RESERVATION + CAPACITY})
    wd.run("apply")
    ri, hold = wd.resource("gpu_commitment.ri"), wd.resource("gpu_commitment.hold")
    # Azure has not measured the reservation yet: unknown, never zero, and no warning.
    assert ri["used_instances"] is None and ri["utilization"] is None
    assert ri["idle_monthly_usd"] is None
    # The capacity reservation's instance view lists no VM: a measured zero.
    assert hold["used_instances"] == 0 and hold["utilization"] == 0
    res = wd.run("plan")
    assert flat(res).count("% used") == 1 and "Commitment 0% used" in flat(res), res.output

    (order,) = arm.state()["orders"]
    arm.set_usage(order["name"], 30)  # percent, as Azure reports it
    (group,) = arm.state()["capacity_reservation_groups"]
    (name,) = group["capacityReservations"]
    arm.set_usage(name, 1)
    wd.run("apply", "-refresh-only")
    ri, hold = wd.resource("gpu_commitment.ri"), wd.resource("gpu_commitment.hold")
    assert ri["utilization"] == pytest.approx(0.3) and ri["used_instances"] == 1  # 0.6 of 2
    # 70 % of the monthly equivalent: 984,000 / 12 x 0.7.
    assert ri["idle_monthly_usd"] == pytest.approx(57_400, abs=0.01)
    assert hold["used_instances"] == 1 and hold["utilization"] == 1
    res = wd.run("plan")
    assert "Commitment 30% used: $57,400.00/month idle" in flat(res), res.output
    assert "had 1 of 2 instances in use" in flat(res)
    assert flat(res).count("% used") == 1


def test_the_inventory_lists_orders_and_capacity_reservations(az_tf, arm):
    wd = az_tf.workdir(files={"main.tf": provider(arm) + RESERVATION + CAPACITY})
    wd.run("apply")
    ri, hold = wd.resource("gpu_commitment.ri"), wd.resource("gpu_commitment.hold")
    arm.set_usage(ri["commitment_id"], 30)
    (wd.path / "inventory.tf").write_text('''
data "gpu_inventory" "c" {
  regions = ["eastus"]
  kinds   = ["commitment"]
}

output "items" {
  value = data.gpu_inventory.c.items
}
''')
    res = wd.run("apply")
    assert "Cannot read" not in res.output, "only Azure has eastus: nothing else is read"
    items = {i["name"]: i for i in wd.outputs()["items"]}
    assert set(items) == {ri["commitment_id"], hold["commitment_id"]}
    order, capacity = items[ri["commitment_id"]], items[hold["commitment_id"]]
    assert (order["nodes"], order["utilization"], order["monthly_usd"]) == (2, 0.3, None), \
        "Azure does not say what the reservation cost: no idle money, never $0"
    assert "not read back" in order["price_source"]
    assert (capacity["nodes"], capacity["used_instances"]) == (1, 0)
    assert capacity["monthly_usd"] == pytest.approx(hold["monthly_usd"], rel=1e-4)
    assert capacity["import_id"].startswith("azure_capacity_reservation/eastus/rg-gpu/")


@pytest.mark.tf_min("1.5")
def test_export_writes_bought_commitments_that_import_with_an_empty_plan(
        az_tf, arm, provider_bin):
    wd = az_tf.workdir(files={"main.tf": provider(arm) + RESERVATION + CAPACITY})
    wd.run("apply")
    ri, hold = wd.resource("gpu_commitment.ri"), wd.resource("gpu_commitment.hold")
    writes = [r for r in arm.state()["requests"] if r["method"] != "GET"]
    text, adopted = export_and_adopt(
        az_tf, provider_bin, az_tf.env,
        ["--clouds", "azure", "--regions", "eastus", "--kinds", "commitment",
         "--azure-subscription", SUBSCRIPTION, "--azure-tenant", TENANT,
         "--azure-endpoint", arm.url], imports=2)
    assert f'id = "azure_reservation/eastus/{ri["commitment_id"]}"' in text, text
    assert CLIENT_SECRET not in text
    ids = {r["values"]["commitment_id"] for r in adopted.state_resources()}
    assert ids == {ri["commitment_id"], hold["commitment_id"]}
    assert [r for r in arm.state()["requests"] if r["method"] != "GET"] == writes, \
        "export, import and an empty apply neither buy nor change anything"
    if az_tf.version != "1.0":
        # `terraform query` lists the same two by identity; the configuration it
        # generates imports them, and still nothing is bought or changed.
        lists = ('list "gpu_commitment" "azure" {\n  provider = gpu\n  config {\n'
                 '    clouds  = ["azure"]\n    regions = ["eastus"]\n  }\n}\n')
        listing, generated, queried = query_and_adopt(az_tf, provider_head(text), lists, 2)
        assert f"import_id=azure_reservation/eastus/{ri['commitment_id']}" in listing, listing
        assert CLIENT_SECRET not in generated and CLIENT_SECRET not in listing
        assert {r["values"]["commitment_id"] for r in queried.state_resources()} == ids
        assert [r for r in arm.state()["requests"] if r["method"] != "GET"] == writes


def test_each_purchase_and_cancel_is_audited_with_the_service_principal(az_tf, arm, tmp_path):
    """The events file holds one `audit` line per purchase and per cancel: the caller is
    the object id of the app's service principal as its Entra token names it, the target
    the capacity reservation's ARM id, the money the apply's change."""
    events = tmp_path / "events.jsonl"
    az_tf.env = {**az_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    wd = az_tf.workdir(files={"main.tf": provider(arm) + CAPACITY})
    wd.run("apply")
    hold = wd.resource("gpu_commitment.hold")
    wd.run("destroy")
    lines = audit_lines(events)
    assert [x["action"] for x in lines] == ["purchase_commitment", "cancel_commitment"], lines
    for x in lines:
        check_line(x, [CLIENT_SECRET])
        assert x["actor"] == service_principal_id(TENANT, CLIENT)
        assert x["cloud"] == "azure" and x["target"] == hold["commitment_id"]
        assert x["resource"] == "gpu_commitment" and x["result"] == "ok"
    assert lines[0]["monthly_delta_usd"] == pytest.approx(hold["monthly_usd"])
    assert lines[1]["monthly_delta_usd"] == pytest.approx(-hold["monthly_usd"])
