"""`gpu_commitment` on Azure and on Google Cloud, each test once per cloud (ids `azure`,
`gcp`), under real Terraform against the ARM commitments and Compute Engine fakes through
the provider's real credential chains: the irreversible kind (Azure's reserved VM
instance, Google's committed use discount) is refused without `allow_commitment_purchase`,
priced, bought once at the planned price and never destroyed; the cancellable kind
(Azure's capacity reservation, Google's zonal reservation) is created once and deleted on
destroy; no capacity fails the apply with the cloud's reason and keeps nothing; a lost
purchase answer does not buy twice; commitments are imported with an empty plan and
nothing bought.

Each cloud is one small description below (`Azure`, `Gcp`): its fixtures and
configurations (from `test_commitment_azure.py` and `test_commitment_gcp.py`, where what
only that cloud has is tested), its words and prices, and how its fake's purchases read. An
assertion only one cloud makes is guarded by `cloud.id`. What was bought is read from the
fakes' `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import pytest

from per_cloud import per_cloud
from tests.commitment import test_commitment_azure as az
from tests.commitment import test_commitment_gcp as gc
# The per-cloud fixtures, started once for this module (one fake per cloud).
from tests.commitment.test_commitment_azure import arm, az_tf, azure  # noqa: F401
from tests.commitment.test_commitment_gcp import compute, gcp_tf, google  # noqa: F401


class Azure:
    """Azure: reserved VM instances (irreversible) and capacity reservations
    (cancellable), through ARM."""

    id = "azure"
    fixtures = ("arm", "az_tf")
    irreversible = az.RESERVATION, "gpu_commitment.ri"
    cancellable = az.CAPACITY, "gpu_commitment.hold"
    # What the refused plan and the plan of the irreversible kind say.
    refused_words = ["allow_commitment_purchase", "$984,000.00 over 12 months",
                     "reserved VM instance"]  # 2 x 12 x 41,000
    irreversible_words = ["IRREVERSIBLE: $984,000.00 over 12 months"]
    # Its status once bought, and after `clock_days` on the cloud's clock.
    bought_status, clock_days, later_status = "active", 400, "expired"

    def __init__(self, fake, tf):
        self.fake, self.tf = fake, tf

    def provider(self, allow: bool = True) -> str:
        return az.provider(self.fake, allow)

    def purchases(self) -> list[str]:
        """The name of each irreversible purchase the cloud acted on."""
        return list(self.fake.state()["purchases"])

    def bought(self) -> list[dict]:
        """The irreversible commitments the cloud holds: reservation orders."""
        return self.fake.state()["orders"]

    @staticmethod
    def assert_priced(p: dict) -> None:
        """Priced by Azure's calculatePrice: 2 x 12 x 41,000 monthly, nothing upfront."""
        assert "offering_id" not in p, "the quote's order id is known after apply"
        assert p["total_usd"] == 984_000 and p["upfront_usd"] == 0
        assert p["monthly_usd"] == pytest.approx(82_000, rel=1e-6)
        per_gpu = 984_000 / (8760 * 16)
        assert p["effective_usd_per_gpu_hour"] == pytest.approx(per_gpu, abs=1e-4)
        assert p["break_even_utilization"] == pytest.approx(per_gpu / (98.32 / 8), abs=1e-3)
        assert "Azure calculatePrice" in p["price_source"]

    def assert_bought_as_planned(self, order: dict, p: dict) -> None:
        quotes = {q["reservationOrderId"]: q for q in self.fake.state()["quotes"]}
        assert quotes[order["name"]]["total"] == 984_000, "bought at the planned total"
        assert order["fake"]["request"]["quantity"] == 2
        assert order["fake"]["request"]["billingScopeId"] == f"/subscriptions/{az.SUBSCRIPTION}"

    def held(self) -> list[dict]:
        """The cancellable commitments the cloud holds: the capacity reservations of every
        group (a group is the reservation's own and goes with it)."""
        groups = self.fake.state()["capacity_reservation_groups"]
        return [r for g in groups for r in g["capacityReservations"].values()]

    def assert_held_as_planned(self, reservation: dict, p: dict) -> None:
        assert p["total_usd"] is None
        (group,) = self.fake.state()["capacity_reservation_groups"]
        assert list(group["capacityReservations"].values()) == [reservation]
        assert reservation["sku"] == {"name": p["instance_type"], "capacity": 1}
        assert reservation["zones"] == ["1"]

    def held_id(self, reservation: dict) -> str:
        return reservation["id"]

    def nothing_held(self) -> bool:
        return self.fake.state()["capacity_reservation_groups"] == []

    def no_capacity(self) -> tuple[str, str]:
        """Both H100 x 8 sizes unavailable; returns the configuration (the cancellable kind
        by its size) and the cloud's reason."""
        self.fake.set_capacity(az.REGION, "Standard_ND96is_H100_v5", available=False)
        self.fake.set_capacity(az.REGION, az.SKU, available=False)
        return az.CAPACITY.replace('gpu            = "H100"\n  gpu_count      = 8\n',
                                   f'instance_type  = "{az.SKU}"\n'), "AllocationFailed"

    def lose_the_purchase_answer(self) -> None:
        """The purchase PUT acts, then its answer is lost (500): the PUT of the same order
        id is idempotent, so the repeat buys nothing new."""
        self.fake.inject(method="PUT", path="/reservationOrders/", status=500, count=1,
                         lose_answer=True)

    def imported_config(self, held: dict) -> str:
        """Azure reservations carry no tags: an imported one is written without them; the
        capacity reservation by its size."""
        return (az.RESERVATION.replace('  tags           = { team = "ml" }\n', "") +
                az.CAPACITY.replace('gpu            = "H100"\n  gpu_count      = 8\n',
                                    f'instance_type  = "{held["instance_type"]}"\n'))

    def import_ids(self, bought: dict, held: dict) -> tuple[str, str]:
        (group,) = self.fake.state()["capacity_reservation_groups"]
        (name,) = group["capacityReservations"]
        return (f"azure_reservation/eastus/{bought['commitment_id']}",
                f"azure_capacity_reservation/eastus/rg-gpu/{group['name']}/{name}")

    @staticmethod
    def assert_imported(bought: dict, held: dict, b: dict, h: dict) -> None:
        assert (b["instance_type"], b["instance_count"], b["term"]) == (az.SKU, 2, "1y")
        assert b["total_usd"] is None and "not read back" in b["price_source"]
        assert h["commitment_id"] == held["commitment_id"] and h["zone"] == "1"
        assert h["hourly_usd"] == held["hourly_usd"]


class Gcp:
    """Google Cloud: committed use discounts (irreversible) and zonal reservations
    (cancellable), through Compute Engine."""

    id = "gcp"
    fixtures = ("compute", "gcp_tf")
    irreversible = gc.CUD, "gpu_commitment.cud"
    cancellable = gc.RESERVATION, "gpu_commitment.floor"
    refused_words = ["allow_commitment_purchase", "over 12 months"]
    irreversible_words = ["IRREVERSIBLE:", "over 12 months"]
    bought_status, clock_days, later_status = "scheduled", 2, "active"

    def __init__(self, fake, tf):
        self.fake, self.tf = fake, tf

    def provider(self, allow: bool = True) -> str:
        return gc.provider(self.fake, allow)

    def purchases(self) -> list[str]:
        return [c["name"] for c in self.bought()]

    def bought(self) -> list[dict]:
        """The irreversible commitments the cloud holds: commitments."""
        return self.fake.state()["commitments"]

    @staticmethod
    def assert_priced(p: dict) -> None:
        """Priced from the published 1-year rate (Cyclenerd's tables), on demand $88.49/h."""
        assert p["hourly_usd"] == pytest.approx(gc.RATE_1Y, abs=0.01)
        assert p["total_usd"] == pytest.approx(p["hourly_usd"] * 8760, rel=1e-6)
        assert p["break_even_utilization"] == pytest.approx(p["hourly_usd"] / 88.49, abs=1e-3)
        assert "Cyclenerd" in p["price_source"]

    @staticmethod
    def assert_bought_as_planned(c: dict, p: dict) -> None:
        assert c["plan"] == "TWELVE_MONTH" and c["type"] == "ACCELERATOR_OPTIMIZED_A3"
        resources = {x["type"]: x for x in c["resources"]}
        assert resources["VCPU"]["amount"] == "208"
        assert resources["ACCELERATOR"]["amount"] == "8"
        assert resources["ACCELERATOR"]["acceleratorType"] == "nvidia-h100-80gb"
        assert [x["zone"].rsplit("/", 1)[-1] for x in c["reservations"]] == [gc.ZONE]

    def held(self) -> list[dict]:
        """The cancellable commitments the cloud holds: reservations."""
        return self.fake.state()["reservations"]

    @staticmethod
    def assert_held_as_planned(r: dict, p: dict) -> None:
        assert p["hourly_usd"] == pytest.approx(2 * 88.49, abs=1e-3), "at the on-demand rate"
        assert r["specificReservation"]["count"] == "2"
        assert r["specificReservation"]["instanceProperties"]["machineType"] == gc.MACHINE
        assert r["zone"].endswith(f"/zones/{gc.ZONE}") and r["name"].startswith("gpu-tf-")

    def held_id(self, r: dict) -> str:
        return r["name"]

    def nothing_held(self) -> bool:
        return self.fake.state()["reservations"] == []

    def no_capacity(self) -> tuple[str, str]:
        self.fake.set_capacity(gc.ZONE, gc.MACHINE, available=False)
        return gc.RESERVATION, "ZONE_RESOURCE_POOL_EXHAUSTED"

    def lose_the_purchase_answer(self) -> None:
        """The insert acts, then its answer is lost (503): the retry carries the same
        requestId, so Compute answers the first operation instead of acting again."""
        self.fake.inject(method="POST", path="/commitments$", status=503, count=1,
                         lose_answer=True)

    @staticmethod
    def imported_config(held: dict) -> str:
        """The committed use discount by its machine type."""
        return gc.RESERVATION + gc.CUD.replace('gpu            = "H100"\n  gpu_count      = 8\n',
                                               f'instance_type  = "{gc.MACHINE}"\n')

    @staticmethod
    def import_ids(bought: dict, held: dict) -> tuple[str, str]:
        return (f"gcp_commitment/{gc.REGION}/{bought['id']}",
                f"gcp_reservation/{gc.ZONE}/{held['id']}")

    @staticmethod
    def assert_imported(bought: dict, held: dict, b: dict, h: dict) -> None:
        assert h["tags"] == {"team": "ml"}, "read back from the description the purchase wrote"
        assert b["term"] == "1y" and b["zone"] == gc.ZONE and b["instance_count"] == 1
        for key in ("hourly_usd", "total_usd", "gpus"):
            assert b[key] == bought[key], key
        assert h["monthly_usd"] == held["monthly_usd"]


each_cloud, cloud = per_cloud(Azure, Gcp)

def flat(res) -> str:
    """The output with Terraform's line wrapping undone."""
    return " ".join(res.output.split())


def planned_values(wd) -> dict:
    return wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]


@each_cloud
def test_a_commitment_is_priced_bought_once_and_never_destroyed(cloud):
    """The irreversible kind: without `allow_commitment_purchase` the plan fails, naming the
    money, and buys nothing; with it the plan says IRREVERSIBLE and the money; the apply
    buys it once at the planned price; destroy is refused; the cloud's clock moves its
    status on."""
    c = cloud
    hcl, address = c.irreversible
    wd = c.tf.workdir(files={"main.tf": c.provider(allow=False) + hcl})
    res = wd.fails("plan")
    for word in c.refused_words:
        assert word in flat(res), (word, res.output)
    assert c.purchases() == []

    (wd.path / "main.tf").write_text(c.provider() + hcl)
    res = wd.run("plan", "-out=tfplan")
    for word in c.irreversible_words:
        assert word in flat(res), (word, res.output)
    p = planned_values(wd)
    c.assert_priced(p)

    wd.run("apply", "tfplan")
    (bought,) = c.bought()
    c.assert_bought_as_planned(bought, p)
    s = wd.resource(address)
    assert s["commitment_id"] == bought["name"]
    if c.id == "azure":
        assert s["offering_id"] == bought["name"]
    assert s["status"] == c.bought_status
    assert s["end"], "the expiry is read back"
    if c.id == "gcp":
        assert s["start"]
    wd.assert_plan_empty()
    if c.id == "azure":
        # Re-spelled region: no change.
        (wd.path / "main.tf").write_text(c.provider() + hcl.replace('"East US"', '"eastus"'))
        wd.assert_plan_empty()

    res = wd.fails("destroy")
    assert "cannot be destroyed" in flat(res)
    c.fake.set_clock(advance_days=c.clock_days)
    wd.run("apply", "-refresh-only")
    assert wd.resource(address)["status"] == c.later_status
    assert c.purchases() == [bought["name"]], "bought exactly once"


@each_cloud
def test_a_reservation_is_created_once_and_deleted_on_destroy(cloud):
    """The cancellable kind: the plan says COMMITMENT and its money per month until
    cancelled, breaking even only at full use; the apply makes it once as planned; destroy
    deletes it."""
    c = cloud
    hcl, address = c.cancellable
    if c.id == "gcp":
        c.fake.configure({"polls": 1})  # the insert's operation is polled until DONE
    wd = c.tf.workdir(files={"main.tf": c.provider() + hcl})
    res = wd.run("plan", "-out=tfplan")
    assert "COMMITMENT:" in flat(res) and "per month until cancelled" in flat(res)
    p = planned_values(wd)
    assert p["break_even_utilization"] == 1
    wd.run("apply", "tfplan")
    (held,) = c.held()
    c.assert_held_as_planned(held, p)
    s = wd.resource(address)
    assert s["status"] == "active" and s["commitment_id"] == c.held_id(held)
    wd.assert_plan_empty()
    wd.run("destroy")
    assert c.nothing_held(), "reservation (and its group) deleted"


@each_cloud
def test_no_capacity_fails_the_apply_with_the_cloud_reason_and_keeps_nothing(cloud):
    c = cloud
    hcl, reason = c.no_capacity()
    wd = c.tf.workdir(files={"main.tf": c.provider() + hcl})
    res = wd.fails("apply")
    assert reason in flat(res), res.output
    assert wd.state_resources() == []


@each_cloud
def test_a_lost_purchase_answer_does_not_buy_twice(cloud):
    c = cloud
    hcl, address = c.irreversible
    c.lose_the_purchase_answer()
    wd = c.tf.workdir(files={"main.tf": c.provider() + hcl})
    wd.run("apply")
    (bought,) = c.bought()
    assert c.purchases() == [bought["name"]]
    if c.id == "gcp":
        inserts = [r for r in c.fake.state()["requests"]
                   if r["method"] == "POST" and r["path"].endswith("/commitments")]
        assert len(inserts) == 2, "the insert was repeated once"
    assert wd.resource(address)["commitment_id"] == bought["name"]
    wd.assert_plan_empty()


@each_cloud
def test_commitments_are_imported_and_plan_empty(cloud):
    """Both kinds, bought, then forgotten by the state and imported by kind, location and
    name under a configuration that may not buy: the plan is empty, what the cloud does
    not report is taken from the configuration, and nothing is bought again."""
    c = cloud
    (irreversible, bought_at), (cancellable, held_at) = c.irreversible, c.cancellable
    wd = c.tf.workdir(files={"main.tf": c.provider() + irreversible + cancellable})
    wd.run("apply")
    bought, held = wd.resource(bought_at), wd.resource(held_at)
    for address in (bought_at, held_at):
        wd.run("state", "rm", address)
    (wd.path / "main.tf").write_text(c.provider(allow=False) + c.imported_config(held))
    bought_id, held_id = c.import_ids(bought, held)
    if c.id == "gcp":
        res = wd.fails("import", held_at, f"gcp_reservation/{gc.REGION}/{held['id']}")
        assert "is not a zone" in flat(res)
    wd.run("import", bought_at, bought_id)
    wd.run("import", held_at, held_id)
    wd.assert_plan_empty()
    c.assert_imported(bought, held, wd.resource(bought_at), wd.resource(held_at))
    assert c.purchases() == [bought["commitment_id"]], "import buys nothing"
