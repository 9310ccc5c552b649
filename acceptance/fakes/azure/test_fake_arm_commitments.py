"""The fake ARM for Azure capacity commitments (`fakes/azure/commitments.py`): reservation
orders (Microsoft.Capacity calculatePrice, purchase, get) and capacity reservation groups and
capacity reservations (Microsoft.Compute), exercised with urllib only over HTTPS with the
test CA, with bearer tokens from the `AzureAD` token fake. Each test starts its own servers
on 127.0.0.1 and checks what a client sees and what the fake stores (`GET /_fake/state`),
never the fake's Python objects.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

import pytest

from fakes import tls_context
from fakes.azure.commitments import (CAPACITY_API_VERSION, COMPUTE_API_VERSION,
                                   SESSION_TIMED_OUT, ArmCommitments)
from fakes.azure.testing import CLIENT, SECRET, TENANT, ArmClient
from fakes.azure.tokens import AzureAD
from fakes.testing import Reply
from fakes.tokens import TokenRegistry

# Mostly waits (alone, 4.8 s wall, 1.6 s of CPU): `make acceptance` runs it with more
# workers than cores (README.md, "Scheduling").
pytestmark = pytest.mark.waits

SUB = "6b1f0a52-3c9d-4e7a-8f21-9d0c4b7e5a13"
RG, REGION = "rg-gpu", "eastus"
SKU = "Standard_ND96isr_H100_v5"
UPFRONT, MONTHLY = 500000.0, 45000.0


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return tls_context(tmp_path_factory.mktemp("arm-commitments-tls"))


@dataclass
class Azure(ArmClient):
    registry: TokenRegistry = None

    def default_api(self, path: str) -> str:
        return CAPACITY_API_VERSION if "Microsoft.Capacity" in path else COMPUTE_API_VERSION


@pytest.fixture
def azure(tls):
    context, ca = tls
    registry = TokenRegistry()
    with AzureAD(registry, TENANT, CLIENT, SECRET).start(ssl_context=context) as aad, \
            ArmCommitments(registry).start(ssl_context=context) as arm:
        fake = Azure(aad, arm, ca, registry)
        seeded = fake.control("/_fake/subscriptions",
                              {"subscription": SUB, "resource_groups": [RG],
                               "locations": [REGION, "westus2"], "tenant_id": TENANT})
        assert seeded.status == 201, seeded.raw
        prices = fake.control("/_fake/prices", {"prices": [
            {"location": REGION, "sku": SKU, "term": "P1Y", "billing_plan": "Upfront",
             "amount": UPFRONT},
            {"location": REGION, "sku": SKU, "term": "P1Y", "billing_plan": "Monthly",
             "amount": MONTHLY},
            {"location": REGION, "sku": SKU, "term": "P3Y", "billing_plan": "Monthly",
             "amount": 30000.0}]})
        assert prices.status == 201, prices.raw
        yield fake


PRICE = "/providers/Microsoft.Capacity/calculatePrice"


def order_path(order_id: str, suffix: str = "") -> str:
    return f"/providers/Microsoft.Capacity/reservationOrders/{order_id}{suffix}"


def purchase_body(term="P1Y", plan="Upfront", quantity=2, sku=SKU, location=REGION,
                  **props) -> dict:
    properties = {"reservedResourceType": "VirtualMachines",
                  "billingScopeId": f"/subscriptions/{SUB}", "term": term,
                  "billingPlan": plan, "quantity": quantity, "displayName": "gpu-train",
                  "appliedScopeType": "Single", "appliedScopes": [f"/subscriptions/{SUB}"],
                  "reservedResourceProperties": {"instanceFlexibility": "On"},
                  "renew": False}
    properties.update(props)
    return {"sku": {"name": sku}, "location": location, "properties": properties}


def quote(azure, body=None) -> dict:
    reply = azure("POST", PRICE, body or purchase_body())
    assert reply.status == 200, reply.raw
    return reply.json["properties"]


def buy(azure, body=None) -> tuple[str, Reply]:
    body = body or purchase_body()
    order_id = quote(azure, body)["reservationOrderId"]
    reply = azure("PUT", order_path(order_id), body)
    assert reply.status == 202, reply.raw
    return order_id, reply


def buy_and_wait(azure, body=None) -> tuple[str, dict]:
    order_id, put = buy(azure, body)
    for _ in range(10):
        got = azure.get_url(put.headers["Location"])
        if got.json["properties"]["provisioningState"] not in ("Creating", "PendingBilling"):
            return order_id, got.json
    raise AssertionError("the purchase never ended")


def parse(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def fake_today(azure) -> dt.date:
    return parse(azure.state()["clock"]).date()


# --- calculatePrice -------------------------------------------------------------------------

def test_calculate_price_upfront_and_monthly_from_the_seeded_table(azure):
    upfront = quote(azure, purchase_body(plan="Upfront", quantity=2))
    assert upfront["billingCurrencyTotal"] == {"currencyCode": "USD", "amount": 2 * UPFRONT}
    assert upfront["pricingCurrencyTotal"] == upfront["billingCurrencyTotal"]
    assert (upfront["netTotal"], upfront["taxTotal"], upfront["grandTotal"]) == (
        2 * UPFRONT, 0.0, 2 * UPFRONT)
    assert upfront["isTaxIncluded"] is False and upfront["isBillingPartnerManaged"] is False
    assert upfront["skuTitle"] == f"Reserved VM Instance, {SKU}, US East, 1 Year"
    assert upfront["skuDescription"] == SKU
    today = fake_today(azure)
    assert [(p["dueDate"], p["pricingCurrencyTotal"]["amount"], p["status"])
            for p in upfront["paymentSchedule"]] == [(today.isoformat(), 2 * UPFRONT,
                                                      "Scheduled")]

    monthly = quote(azure, purchase_body(plan="Monthly", quantity=2))
    schedule = monthly["paymentSchedule"]
    assert len(schedule) == 12
    assert {p["billingCurrencyTotal"]["amount"] for p in schedule} == {2 * MONTHLY}
    assert monthly["billingCurrencyTotal"]["amount"] == 12 * 2 * MONTHLY
    dues = [dt.date.fromisoformat(p["dueDate"]) for p in schedule]
    assert dues[0] == today
    assert all((b.year * 12 + b.month) - (a.year * 12 + a.month) == 1
               for a, b in zip(dues, dues[1:]))
    assert "paymentDate" not in schedule[0]  # null while scheduled

    three_years = quote(azure, purchase_body(term="P3Y", plan="Monthly", quantity=1))
    assert len(three_years["paymentSchedule"]) == 36
    assert three_years["skuTitle"].endswith(", 3 Years")
    assert len({upfront["reservationOrderId"], monthly["reservationOrderId"],
                three_years["reservationOrderId"]}) == 3
    stored = azure.state()["quotes"]
    assert [(q["total"], q["purchased"]) for q in stored] == [
        (2 * UPFRONT, False), (24 * MONTHLY, False), (36 * 30000.0, False)]


@pytest.mark.parametrize("body, code", [
    (purchase_body(sku="Standard_ND999_v9"), "BadRequest"),
    (purchase_body(location="westus2"), "BadRequest"),
    (purchase_body(term="P5Y"), "BadRequest"),  # a valid term with no seeded price
    (purchase_body(term="P2Y"), "UnsupportedReservationTerm"),
    (purchase_body(billingScopeId="/subscriptions/00000000-0000-0000-0000-000000000000"),
     "InvalidSubscriptionId"),
    (purchase_body(appliedScopes=None), "MissingAppliedScopesForSingle"),
    (purchase_body(appliedScopes=[f"/subscriptions/{SUB}", f"/subscriptions/{SUB}"]),
     "InvalidSingleAppliedScopesCount"),
    (purchase_body(quantity=0), "BadRequest"),
    (purchase_body(billingPlan="Yearly"), "BadRequest"),
])
def test_calculate_price_refusals(azure, body, code):
    reply = azure("POST", PRICE, body)
    assert reply.status == 400, reply.raw
    assert reply.code == code
    assert reply.json["error"]["message"]
    assert azure.state()["quotes"] == []


# --- purchase and get -----------------------------------------------------------------------

def test_purchase_is_polled_to_succeeded_with_expiry_one_term_after_the_start(azure):
    order_id, put = buy(azure)
    assert put.headers["Location"] == (f"{azure.arm.url}{order_path(order_id)}"
                                       f"?api-version={CAPACITY_API_VERSION}")
    body = put.json
    assert body["id"] == f"/providers/microsoft.capacity/reservationOrders/{order_id}"
    assert body["type"] == "Microsoft.Capacity/reservationOrders"
    assert body["properties"]["provisioningState"] == "Creating"
    assert body["properties"]["originalQuantity"] == 2
    assert "expiryDateTime" not in body["properties"]
    item = body["properties"]["reservations"][0]
    assert item["sku"] == {"name": SKU} and item["properties"]["quantity"] == 2
    states = []
    for _ in range(5):
        got = azure.get_url(put.headers["Location"])
        assert got.status == 200
        states.append(got.json["properties"]["provisioningState"])
        if states[-1] == "Succeeded":
            break
    assert states == ["PendingBilling", "PendingBilling", "Succeeded"]
    props = got.json["properties"]
    start, expiry = parse(props["benefitStartTime"]), parse(props["expiryDateTime"])
    assert start == parse(props["requestDateTime"]) == parse(props["createdDateTime"])
    assert (expiry.year, expiry.month, expiry.day, expiry.time()) == (
        start.year + 1, start.month, start.day, start.time())
    assert props["expiryDate"] == expiry.date().isoformat()
    assert (props["term"], props["billingPlan"], props["displayName"]) == (
        "P1Y", "Upfront", "gpu-train")
    assert got.json["etag"] > body["etag"]
    reservation_id = props["reservations"][0]["id"].rsplit("/", 1)[1]
    reservation = azure("GET", order_path(order_id, f"/reservations/{reservation_id}"))
    assert reservation.status == 200
    rprops = reservation.json["properties"]
    assert (rprops["provisioningState"], rprops["quantity"], rprops["appliedScopeType"],
            rprops["appliedScopes"], rprops["instanceFlexibility"]) == (
        "Succeeded", 2, "Single", [f"/subscriptions/{SUB}"], "On")
    assert rprops["expiryDateTime"] == props["expiryDateTime"]
    assert azure.state()["purchases"] == [order_id]


def test_the_same_purchase_again_buys_nothing_new(azure):
    order_id, first = buy_and_wait(azure)
    again = azure("PUT", order_path(order_id), purchase_body())
    assert again.status == 200, again.raw
    assert again.json["properties"]["provisioningState"] == "Succeeded"
    assert again.json["etag"] == first["etag"]
    different = azure("PUT", order_path(order_id), purchase_body(quantity=3))
    assert different.status == 409
    assert different.code == "ReservationOrderIdAlreadyExists"
    state = azure.state()
    assert state["purchases"] == [order_id]
    assert [o["fake"]["purchases"] for o in state["orders"]] == [1]
    assert state["orders"][0]["properties"]["originalQuantity"] == 2


def test_a_purchase_needs_an_id_from_calculate_price_and_the_priced_request(azure):
    never_priced = azure("PUT", order_path(str(uuid.uuid4())), purchase_body())
    assert never_priced.status == 400
    assert never_priced.json == {"error": {"code": "BadRequest",
                                           "message": SESSION_TIMED_OUT}}
    order_id = quote(azure)["reservationOrderId"]
    changed = azure("PUT", order_path(order_id), purchase_body(quantity=5))
    assert changed.status == 400 and changed.code == "BadRequest"
    assert "quantity" in changed.json["error"]["message"]
    state = azure.state()
    assert state["orders"] == [] and state["purchases"] == []


def test_unknown_orders_are_404_in_arm_error_shape(azure):
    order_id = quote(azure)["reservationOrderId"]  # priced, never bought
    for missing in (str(uuid.uuid4()), order_id):
        reply = azure("GET", order_path(missing))
        assert reply.status == 404
        assert set(reply.json) == {"error"}
        assert reply.code == "ReservationOrderNotFound"
        assert missing in reply.json["error"]["message"]


def test_orders_expire_after_their_term_on_the_fake_clock(azure):
    order_id, done = buy_and_wait(azure)
    assert done["properties"]["provisioningState"] == "Succeeded"
    assert azure.control("/_fake/clock", {"advance_days": 364}).status == 200
    assert azure("GET", order_path(order_id)).json["properties"][
        "provisioningState"] == "Succeeded"
    azure.control("/_fake/clock", {"advance_days": 2})
    expired = azure("GET", order_path(order_id))
    assert expired.json["properties"]["provisioningState"] == "Expired"
    assert expired.json["properties"]["expiryDateTime"] == done["properties"]["expiryDateTime"]
    listed = azure("GET", order_path(order_id, "/reservations"))
    assert [r["properties"]["provisioningState"] for r in listed.json["value"]] == ["Expired"]


def test_monthly_plan_information_follows_the_clock(azure):
    order_id, _ = buy_and_wait(azure, purchase_body(plan="Monthly", quantity=1))
    plan = azure("GET", order_path(order_id), query="$expand=schedule").json[
        "properties"]["planInformation"]
    transactions = plan["transactions"]
    assert len(transactions) == 12
    assert plan["pricingCurrencyTotal"] == {"currencyCode": "USD", "amount": 12 * MONTHLY}
    assert [t["status"] for t in transactions] == ["Succeeded"] + ["Scheduled"] * 11
    assert transactions[0]["paymentDate"] == transactions[0]["dueDate"] == plan["startDate"]
    assert plan["nextPaymentDueDate"] == transactions[1]["dueDate"]
    plain = azure("GET", order_path(order_id)).json["properties"]
    assert "planInformation" not in plain
    azure.control("/_fake/clock", {"advance_days": 32})
    later = azure("GET", order_path(order_id), query="$expand=schedule").json[
        "properties"]["planInformation"]
    assert [t["status"] for t in later["transactions"]][:3] == [
        "Succeeded", "Succeeded", "Scheduled"]


def test_failed_billing_ends_the_order_billing_failed(azure):
    azure.control("/_fake/faults", {"fail_next_purchase": True, "purchase_polls": 0})
    order_id, put = buy(azure)
    got = azure.get_url(put.headers["Location"])
    assert got.json["properties"]["provisioningState"] == "BillingFailed"
    assert "expiryDateTime" not in got.json["properties"]
    second_id, _ = buy_and_wait(azure)
    assert azure("GET", order_path(second_id)).json["properties"][
        "provisioningState"] == "Succeeded"


def test_return_and_delete_of_orders_are_not_served(azure):
    order_id, _ = buy_and_wait(azure)
    returned = azure("POST", order_path(order_id, "/return"), {"properties": {}})
    assert returned.status == 404
    assert returned.code == "InvalidResourceType"
    assert "'Microsoft.Capacity'" in returned.json["error"]["message"]
    deleted = azure("DELETE", order_path(order_id))
    assert deleted.status == 405
    assert azure("GET", order_path(order_id)).json["properties"][
        "provisioningState"] == "Succeeded"


# --- capacity reservation groups and reservations --------------------------------------------

def group_path(group="crg-gpu", sub=SUB, rg=RG) -> str:
    return (f"/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/"
            f"capacityReservationGroups/{group}")


def reservation_path(name="h100", group="crg-gpu") -> str:
    return f"{group_path(group)}/capacityReservations/{name}"


def reservation_body(capacity=2, zones=("1",), sku=SKU, location=REGION) -> dict:
    body = {"location": location, "sku": {"name": sku, "capacity": capacity},
            "tags": {"team": "ml"}}
    if zones is not None:
        body["zones"] = list(zones)
    return body


def make_group(azure, zones=("1", "2"), group="crg-gpu") -> dict:
    body = {"location": REGION, "tags": {"team": "ml"}}
    if zones:
        body["zones"] = list(zones)
    reply = azure("PUT", group_path(group), body)
    assert reply.status == 201, reply.raw
    return reply.json


def op_done(reply: Reply) -> bool:
    return reply.json["status"] != "InProgress"


def poll(azure, url: str, until, limit: int = 10) -> list[Reply]:
    replies = []
    for _ in range(limit):
        replies.append(azure.get_url(url))
        if until(replies[-1]):
            return replies
    raise AssertionError(f"never finished: {[r.status for r in replies]}")


def test_capacity_reservation_is_created_through_an_async_operation(azure):
    group = make_group(azure)
    assert group["id"].endswith(f"/resourceGroups/{RG}/providers/Microsoft.Compute/"
                                "CapacityReservationGroups/crg-gpu")
    assert (group["location"], group["zones"], group["tags"]) == (REGION, ["1", "2"],
                                                                  {"team": "ml"})
    put = azure("PUT", reservation_path(), reservation_body())
    assert put.status == 201, put.raw
    assert put.json["properties"]["provisioningState"] == "Creating"
    assert put.json["sku"] == {"name": SKU, "capacity": 2} and put.json["zones"] == ["1"]
    status_url = put.headers["Azure-AsyncOperation"]
    assert status_url.startswith(f"{azure.arm.url}/subscriptions/{SUB}/providers/"
                                 f"Microsoft.Compute/locations/{REGION}/operations/")
    assert status_url.endswith(f"api-version={COMPUTE_API_VERSION}")
    assert put.headers["Retry-After"] == "1"
    replies = poll(azure, status_url, op_done)
    assert [r.json["status"] for r in replies] == ["InProgress", "InProgress", "Succeeded"]
    assert "endTime" in replies[-1].json and "endTime" not in replies[0].json
    got = azure("GET", reservation_path(), query="$expand=instanceView")
    props = got.json["properties"]
    assert props["provisioningState"] == "Succeeded"
    assert props["instanceView"]["utilizationInfo"]["currentCapacity"] == 2
    assert props["instanceView"]["statuses"][0]["code"] == "ProvisioningState/succeeded"
    plain = azure("GET", reservation_path()).json["properties"]
    assert "instanceView" not in plain and plain["reservationId"] == props["reservationId"]
    listed = azure("GET", group_path()).json["properties"]["capacityReservations"]
    assert [r["id"] for r in listed] == [got.json["id"]]
    stored = azure.state()["capacity_reservation_groups"][0]["capacityReservations"]["h100"]
    assert stored == got.json


def test_capacity_update_changes_the_quantity_only(azure):
    make_group(azure)
    put = azure("PUT", reservation_path(), reservation_body(capacity=2))
    poll(azure, put.headers["Azure-AsyncOperation"], op_done)
    update = azure("PUT", reservation_path(), reservation_body(capacity=4))
    assert update.status == 200
    assert update.json["properties"]["provisioningState"] == "Updating"
    poll(azure, update.headers["Azure-AsyncOperation"], op_done)
    assert azure("GET", reservation_path()).json["sku"]["capacity"] == 4
    resized = azure("PUT", reservation_path(), reservation_body(sku="Standard_NC24ads_A100_v4"))
    assert resized.status == 400 and resized.code == "PropertyChangeNotAllowed"
    rezoned = azure("PUT", reservation_path(), reservation_body(zones=("2",)))
    assert rezoned.status == 400 and rezoned.code == "PropertyChangeNotAllowed"


def test_capacity_switch_makes_the_reservation_fail_as_azure_reports_it(azure):
    make_group(azure)
    switched = azure.control("/_fake/capacity", {"location": REGION, "sku": SKU,
                                                 "available": False})
    assert switched.status == 200
    put = azure("PUT", reservation_path(), reservation_body())
    assert put.status == 201
    replies = poll(azure, put.headers["Azure-AsyncOperation"], op_done)
    final = replies[-1].json
    assert final["status"] == "Failed"
    assert final["error"]["code"] == "ZonalAllocationFailed"
    assert final["error"]["message"].startswith(
        "Allocation failed. We do not have sufficient capacity for the requested VM size in "
        "this zone.")
    monitor = azure.get_url(put.headers["Location"])
    assert monitor.status == 409 and monitor.code == "ZonalAllocationFailed"
    failed = azure("GET", reservation_path(), query="$expand=instanceView").json["properties"]
    assert failed["provisioningState"] == "Failed"
    assert failed["instanceView"]["utilizationInfo"]["currentCapacity"] == 0

    azure.control("/_fake/capacity", {"location": REGION, "sku": SKU, "available": False,
                                      "reason": "restricted"})
    refused = azure("PUT", reservation_path("other"), reservation_body())
    assert refused.status == 409 and refused.code == "SkuNotAvailable"
    assert f"Capacity Restrictions: {SKU}" in refused.json["error"]["message"]
    assert "other" not in azure.state()["capacity_reservation_groups"][0][
        "capacityReservations"]

    azure.control("/_fake/capacity", {"location": REGION, "sku": SKU, "available": True})
    again = azure("PUT", reservation_path("other"), reservation_body())
    assert poll(azure, again.headers["Azure-AsyncOperation"], op_done)[-1].json[
        "status"] == "Succeeded"


def test_regional_reservation_fails_with_allocation_failed(azure):
    make_group(azure, zones=None)
    azure.control("/_fake/capacity", {"location": REGION, "sku": SKU, "available": False})
    put = azure("PUT", reservation_path(), reservation_body(zones=None))
    final = poll(azure, put.headers["Azure-AsyncOperation"], op_done)[-1].json
    assert final["error"]["code"] == "AllocationFailed"
    assert "in this region." in final["error"]["message"]


def test_a_group_with_reservations_cannot_be_deleted(azure):
    make_group(azure)
    put = azure("PUT", reservation_path(), reservation_body())
    poll(azure, put.headers["Azure-AsyncOperation"], op_done)
    refused = azure("DELETE", group_path())
    assert refused.status == 409 and refused.code == "OperationNotAllowed"
    assert azure("GET", group_path()).status == 200
    delete = azure("DELETE", reservation_path())
    assert delete.status == 202 and delete.raw == b""
    assert azure("GET", reservation_path()).json["properties"][
        "provisioningState"] == "Deleting"
    assert azure("DELETE", group_path()).status == 409  # still there while deleting
    replies = poll(azure, delete.headers["Location"], lambda r: r.status != 202)
    assert [r.status for r in replies] == [202, 202, 204]
    gone = azure("GET", reservation_path())
    assert gone.status == 404 and gone.code == "ResourceNotFound"
    deleted = azure("DELETE", group_path())
    assert deleted.status == 200
    assert azure("GET", group_path()).code == "ResourceNotFound"
    assert azure("DELETE", group_path()).status == 204
    assert azure.state()["capacity_reservation_groups"] == []


@pytest.mark.parametrize("path, code", [
    (group_path(sub="00000000-0000-0000-0000-000000000000"), "SubscriptionNotFound"),
    (group_path(rg="rg-missing"), "ResourceGroupNotFound"),
    (group_path("crg-missing"), "ResourceNotFound"),
    (reservation_path(group="crg-missing"), "ParentResourceNotFound"),
])
def test_compute_404_shapes(azure, path, code):
    reply = azure("GET", path)
    assert reply.status == 404
    assert reply.code == code and reply.json["error"]["message"]


@pytest.mark.parametrize("zones, body, code, target", [
    (("1", "2"), reservation_body(location="westus2"), "InvalidParameter", "location"),
    (("1", "2"), reservation_body(zones=("3",)), "InvalidParameter", "zones"),
    (("1", "2"), reservation_body(zones=None), "InvalidParameter", "zones"),
    (None, reservation_body(zones=("1",)), "InvalidParameter", "zones"),
    (("1", "2"), {"location": REGION, "sku": {"name": SKU}, "zones": ["1"]},
     "InvalidParameter", "sku.capacity"),
    (("1", "2"), {"location": REGION, "sku": {"capacity": 1}, "zones": ["1"]},
     "InvalidParameter", "sku.name"),
])
def test_reservation_body_validation(azure, zones, body, code, target):
    make_group(azure, zones=zones)
    reply = azure("PUT", reservation_path(), body)
    assert reply.status == 400, reply.raw
    assert reply.code == code and reply.json["error"]["target"] == target
    assert azure.state()["capacity_reservation_groups"][0]["capacityReservations"] == {}


def test_group_location_must_be_a_seeded_location(azure):
    reply = azure("PUT", group_path(), {"location": "japaneast"})
    assert reply.status == 400 and reply.code == "LocationNotAvailableForResourceType"
    assert azure("PUT", group_path(), {}).code == "LocationRequired"
    assert azure.state()["capacity_reservation_groups"] == []


# --- ARM: api-version, authentication, faults ------------------------------------------------

def test_api_version_missing_malformed_and_unsupported(azure):
    missing = azure("POST", PRICE, purchase_body(), api=False)
    assert missing.status == 400 and missing.code == "MissingApiVersionParameter"
    malformed = azure("GET", order_path(str(uuid.uuid4())), api="latest")
    assert malformed.status == 400 and malformed.code == "InvalidApiVersionParameter"
    old = azure("POST", PRICE, purchase_body(), api="2019-04-01")
    assert old.status == 404 and old.code == "InvalidResourceType"
    assert f"'{CAPACITY_API_VERSION}'" in old.json["error"]["message"]
    assert azure.state()["quotes"] == []
    compute_old = azure("PUT", group_path(), {"location": REGION}, api="2020-06-01")
    assert compute_old.status == 400 and compute_old.code == "NoRegisteredProviderFound"
    assert "capacityReservationGroups" in compute_old.json["error"]["message"]
    assert f"'{COMPUTE_API_VERSION}'" in compute_old.json["error"]["message"]
    assert azure("GET", group_path(), api=False).code == "MissingApiVersionParameter"
    # the Compute api-version is not accepted for Microsoft.Capacity, nor the reverse
    assert azure("POST", PRICE, purchase_body(), api=COMPUTE_API_VERSION).status == 404
    assert azure("GET", group_path(), api=CAPACITY_API_VERSION).status == 400
    assert azure.state()["capacity_reservation_groups"] == []


def test_auth_is_refused_as_arm_refuses_it(azure):
    missing = azure("POST", PRICE, purchase_body(), auth=False)
    assert missing.status == 401 and missing.code == "AuthenticationFailed"
    assert 'error="invalid_token"' in missing.headers["WWW-Authenticate"]
    garbage = azure("POST", PRICE, purchase_body(), auth=False,
                    headers={"Authorization": "Bearer not-a-token"})
    assert garbage.code == "InvalidAuthenticationToken"
    graph = azure.token(scope="https://graph.microsoft.com/.default")
    wrong = azure("POST", PRICE, purchase_body(), auth=False,
                  headers={"Authorization": f"Bearer {graph}"})
    assert wrong.status == 401 and wrong.code == "InvalidAuthenticationTokenAudience"
    token = azure.token()
    azure.registry.expire(token)
    expired = azure("GET", group_path(), auth=False, headers={"Authorization": f"Bearer {token}"})
    assert expired.status == 401 and expired.code == "ExpiredAuthenticationToken"
    azure.aad.add_app("other-tenant", CLIENT, SECRET)
    foreign = azure.token(tenant="other-tenant")
    other = azure("PUT", group_path(), {"location": REGION}, auth=False,
                  headers={"Authorization": f"Bearer {foreign}"})
    assert other.status == 401 and other.code == "InvalidAuthenticationTokenTenant"
    state = azure.state()
    assert state["quotes"] == [] and state["capacity_reservation_groups"] == []
    assert [r["bearer"] for r in state["requests"]] == [False, True, True, True, True]


def test_throttling_fault_answers_429_with_retry_after(azure):
    reply = azure.control("/_fake/faults", {"fault": {
        "method": "POST", "path": "/calculatePrice$", "status": 429, "count": 1,
        "retry_after": 7}})
    assert reply.status == 200
    throttled = azure("POST", PRICE, purchase_body())
    assert throttled.status == 429
    assert throttled.headers["Retry-After"] == "7"
    assert throttled.code == "TooManyRequests"
    assert azure.state()["quotes"] == []  # not served
    assert azure("POST", PRICE, purchase_body()).status == 200
    log = [(r["method"], r["status"], r.get("injected", False))
           for r in azure.state()["requests"]]
    assert log == [("POST", 429, True), ("POST", 200, False)]


def test_a_lost_answer_to_the_purchase_leaves_the_order_bought(azure):
    body = purchase_body()
    order_id = quote(azure, body)["reservationOrderId"]
    azure.control("/_fake/faults", {"method": "PUT", "path": "/reservationOrders/[^/]+$",
                                    "status": 500, "lose_answer": True})
    lost = azure("PUT", order_path(order_id), body)
    assert lost.status == 500 and lost.code == "InternalServerError"
    state = azure.state()
    assert state["purchases"] == [order_id]
    put_log = [r for r in state["requests"] if r["method"] == "PUT"]
    assert put_log[0]["injected"] is True and put_log[0]["lost_status"] == 202
    got = azure("GET", order_path(order_id))
    assert got.status == 200
    assert got.json["properties"]["provisioningState"] == "PendingBilling"
    retried = azure("PUT", order_path(order_id), body)
    assert retried.status in (200, 202)
    assert retried.json["name"] == order_id
    assert azure.state()["purchases"] == [order_id]


def test_control_complete_clock_and_reset(azure):
    order_id, _ = buy(azure)
    make_group(azure)
    azure("PUT", reservation_path(), reservation_body())
    assert azure.control("/_fake/complete").json == {"completed": 2}
    state = azure.state()
    assert state["orders"][0]["properties"]["provisioningState"] == "Succeeded"
    assert state["capacity_reservation_groups"][0]["capacityReservations"]["h100"][
        "properties"]["provisioningState"] == "Succeeded"
    bad = azure.control("/_fake/prices", {"location": REGION, "sku": SKU, "term": "P2Y",
                                          "billing_plan": "Upfront", "amount": 1})
    assert bad.status == 400
    before = parse(azure.state()["clock"])
    moved = azure.control("/_fake/clock", {"advance_days": 10}).json
    assert parse(moved["now"]) - before >= dt.timedelta(days=10)
    assert azure.control("/_fake/reset").status == 200
    after = azure.state()
    assert after["orders"] == [] and after["subscriptions"] == [] and after["prices"] == []
    assert after["requests"] == []
    assert azure("GET", order_path(order_id)).code == "ReservationOrderNotFound"
