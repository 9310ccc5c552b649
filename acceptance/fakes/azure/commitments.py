"""A fake Azure Resource Manager for the two kinds of Azure capacity commitment:

- reservation orders (`Microsoft.Capacity`, api-version `2022-11-01`, tenant level):
  `POST /providers/Microsoft.Capacity/calculatePrice` (a quote, and the reservation order
  id to buy it under), `PUT .../reservationOrders/{id}` (the purchase: 202 Accepted with a
  `Location` to poll), `GET .../reservationOrders/{id}` (Creating -> PendingBilling ->
  Succeeded -> Expired at the end of the term) and `GET .../reservationOrders/{id}/
  reservations[/{reservationId}]`;
- capacity reservation groups and capacity reservations (`Microsoft.Compute`, api-version
  `2024-07-01`): group PUT/GET/DELETE, reservation PUT/GET/DELETE and list, with ARM's
  `Azure-AsyncOperation` operations for reservations (InProgress for `polls` polls).

    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT_ID, SECRET).start(ssl_context=context)
    arm = ArmCommitments(tokens).start(ssl_context=context)
    arm.seed_subscription(SUB, ["rg-gpu"], locations=["eastus"])   # POST /_fake/subscriptions
    arm.set_prices([{"location": "eastus", "sku": "Standard_ND96isr_H100_v5", "term": "P1Y",
                     "billing_plan": "Monthly", "amount": 61234.5}])   # POST /_fake/prices
    arm.set_capacity("eastus", "Standard_ND96isr_H100_v5", available=False)  # /_fake/capacity
    arm.set_clock(advance_days=366)                                # POST /_fake/clock
    arm.set_usage("cr-name", 1)  # VMs in a capacity reservation; % for an order: /_fake/usage
    arm.state()                                                    # GET /_fake/state

Requests need a bearer token from the `AzureAD` fake for the ARM audience, checked as
`aks.py` does (`common.py`). Faults (`POST /_fake/faults`) match the decoded path,
`lose_answer` included. What is stored is what GET answers; ../README.md names the reference
behind every rule and lists what is a guess.
"""

from __future__ import annotations

import datetime as _dt
import re
import secrets
import uuid

from .. import CloudClock, Request, Response, request_id
from ..tokens import TokenRegistry
from .common import (ArmFake, ArmOperations, Refusal, Subscriptions, api_version,
                     api_version_form_error, arm_error, authenticated_route, body_location,
                     compute_not_found, invalid_resource_type, json_body, normal_location,
                     parent_not_found, resource_group_not_found, string_map, timestamp)

CAPACITY_API_VERSION = "2022-11-01"
COMPUTE_API_VERSION = "2024-07-01"
UTC = _dt.timezone.utc

# Enums of the Microsoft.Capacity 2022-11-01 swagger (reservations.json).
TERMS = {"P1Y": 1, "P3Y": 3, "P5Y": 5}
BILLING_PLANS = ("Upfront", "Monthly")
APPLIED_SCOPE_TYPES = ("Single", "Shared", "ManagementGroup")
RESERVED_RESOURCE_TYPES = (
    "VirtualMachines", "SqlDatabases", "SuseLinux", "CosmosDb", "RedHat", "SqlDataWarehouse",
    "VMwareCloudSimple", "RedHatOsa", "Databricks", "AppService", "ManagedDisk", "BlockBlob",
    "RedisCache", "AzureDataExplorer", "MySql", "MariaDb", "PostgreSql", "DedicatedHost",
    "SapHana", "SqlAzureHybridBenefit", "AVS", "DataFactory", "NetAppStorage", "AzureFiles",
    "SqlEdge", "VirtualMachineSoftware")
# Region names as the skuTitle shows them ("Reserved VM Instance, Standard_F1, US East, 1
# Year" in a recorded calculatePrice; "US West" in the swagger example). Others are guesses.
REGION_TITLES = {
    "eastus": "US East", "eastus2": "US East 2", "westus": "US West", "westus2": "US West 2",
    "westus3": "US West 3", "centralus": "US Central", "northcentralus": "US North Central",
    "southcentralus": "US South Central", "westcentralus": "US West Central",
    "northeurope": "EU North", "westeurope": "EU West", "uksouth": "UK South",
    "ukwest": "UK West", "swedencentral": "Sweden Central", "japaneast": "JA East"}
SESSION_TIMED_OUT = ("Session timed out - Call CalculatePrice again and provide the new "
                     "Reservation Order ID for purchase")
ALLOCATION_GUIDANCE = ("Read more about improving likelihood of allocation success at "
                       "http://aka.ms/allocation-guidance")
CAPACITY_REASONS = ("allocation", "restricted", "unsupported")

_SUB = r"/subscriptions/(?P<sub>[^/]+)"
_GROUP = (_SUB + r"/resourcegroups/(?P<rg>[^/]+)/providers/microsoft\.compute/"
          r"capacityreservationgroups/(?P<group>[^/]+)")
_ORDER = r"/providers/microsoft\.capacity/reservationorders/(?P<order>[^/]+)"
ROUTES = [
    ("price", re.compile(r"/providers/microsoft\.capacity/calculateprice", re.I)),
    ("orders", re.compile(r"/providers/microsoft\.capacity/reservationorders", re.I)),
    ("order", re.compile(_ORDER, re.I)),
    ("order_reservations", re.compile(_ORDER + "/reservations", re.I)),
    ("order_reservation", re.compile(_ORDER + "/reservations/(?P<res>[^/]+)", re.I)),
    ("capacity_unknown", re.compile(r"/providers/microsoft\.capacity(/.*)?", re.I)),
    ("groups", re.compile(_SUB + r"/providers/microsoft\.compute/capacityreservationgroups",
                          re.I)),
    ("group", re.compile(_GROUP, re.I)),
    ("reservations", re.compile(_GROUP + "/capacityreservations", re.I)),
    ("reservation", re.compile(_GROUP + "/capacityreservations/(?P<res>[^/]+)", re.I)),
    ("operation", re.compile(_SUB + r"/providers/microsoft\.compute/locations/(?P<loc>[^/]+)/"
                                    r"operations/(?P<op>[^/]+)", re.I)),
    ("compute_unknown", re.compile(_SUB + r"(/resourcegroups/[^/]+)?/providers/"
                                          r"microsoft\.compute(/.*)?", re.I)),
]
CAPACITY_KINDS = ("price", "orders", "order", "order_reservations", "order_reservation",
                  "capacity_unknown")
METHODS = {"price": ("POST",), "orders": ("GET",), "groups": ("GET",), "order": ("GET", "PUT"), "order_reservations": ("GET",),
           "order_reservation": ("GET",), "group": ("GET", "PUT", "DELETE"),
           "reservations": ("GET",), "reservation": ("GET", "PUT", "DELETE"),
           "operation": ("GET",)}
RESOURCE_TYPES = {"price": "calculatePrice", "orders": "reservationOrders",
                  "groups": "capacityReservationGroups", "order": "reservationOrders",
                  "order_reservations": "reservationOrders/reservations",
                  "order_reservation": "reservationOrders/reservations",
                  "group": "capacityReservationGroups",
                  "reservations": "capacityReservationGroups/capacityReservations",
                  "reservation": "capacityReservationGroups/capacityReservations",
                  "operation": "locations/operations"}


def _add_months(day: _dt.date, months: int) -> _dt.date:
    """`day` plus whole calendar months, clamped to the last day of a shorter month."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    for d in (day.day, 30, 29, 28):
        try:
            return day.replace(year=year, month=month + 1, day=min(day.day, d))
        except ValueError:
            continue
    raise ValueError(f"cannot add {months} months to {day}")


def _add_years(when: _dt.datetime, years: int) -> _dt.datetime:
    try:
        return when.replace(year=when.year + years)
    except ValueError:  # 29 February
        return when.replace(year=when.year + years, day=28)


def _money(amount: float) -> float:
    return round(float(amount) + 0.0, 2)


class ArmCommitments(Subscriptions, ArmOperations, CloudClock, ArmFake):
    """The fake ARM endpoint for reservation orders and capacity reservations (`url` is
    what a client uses instead of https://management.azure.com). Settings (`configure`, or
    `POST /_fake/faults`): `polls` (InProgress answers of a Compute operation, default 2),
    `purchase_polls` (reads of a new reservation order answered PendingBilling before it
    is Succeeded, default 2), `retry_after` (seconds, default 1), `fail_next_purchase`
    (the next purchase ends BillingFailed), `capacity_api_versions`,
    `compute_api_versions`."""

    name = "arm-commitments"

    def __init__(self, registry: TokenRegistry, capacity_api_versions=(CAPACITY_API_VERSION,),
                 compute_api_versions=(COMPUTE_API_VERSION,), time_scale=None):
        super().__init__(registry, time_scale)
        self.default_versions = (tuple(capacity_api_versions), tuple(compute_api_versions))
        self.reset_state()

    def reset_state(self) -> None:
        self.subscriptions: dict[str, dict] = {}
        self.prices: dict[tuple, dict] = {}
        self.quotes: dict[str, dict] = {}
        self.orders: dict[str, dict] = {}
        self.purchases: list[str] = []
        self.groups: dict[tuple, dict] = {}
        self.operations: dict[str, dict] = {}
        self.no_capacity: dict[tuple, str] = {}
        self.clock_offset = _dt.timedelta(0)
        self.polls, self.purchase_polls, self.retry_after = 2, 2, 1
        self.fail_next_purchase = False
        self.capacity_api_versions, self.compute_api_versions = self.default_versions

    def configure(self, settings: dict) -> None:
        s = dict(settings)
        for key in ("polls", "purchase_polls", "retry_after"):
            if key in s:
                setattr(self, key, max(0, int(s.pop(key))))
        if "fail_next_purchase" in s:
            self.fail_next_purchase = bool(s.pop("fail_next_purchase"))
        for key in ("capacity_api_versions", "compute_api_versions"):
            if key in s:
                setattr(self, key, tuple(s.pop(key)))
        super().configure(s)

    # --- clock, seeding, test control ---------------------------------------------------

    def set_clock(self, advance_days: float | None = None, now: str | None = None) -> dict:
        """Moves the clock forward by `advance_days`, or to the instant `now` (ISO 8601)."""
        with self.lock:
            target = None
            if now is not None:
                target = _dt.datetime.fromisoformat(str(now).replace("Z", "+00:00"))
                if target.tzinfo is None:
                    raise ValueError("now needs a time zone")
            self.move_clock(target, days=advance_days)
            return {"now": timestamp(self.now())}

    def set_prices(self, prices: list[dict]) -> list[dict]:
        """Seeds the price table: each `{location, sku, term, billing_plan, amount,
        currency?}`, `amount` per unit: the whole price for Upfront, one month's for
        Monthly. A later entry for the same key replaces the earlier one."""
        with self.lock:
            out = []
            for entry in prices:
                e = dict(entry)
                plan = e.pop("billing_plan", None) or e.pop("billingPlan")
                term = e.pop("term")
                if term not in TERMS or plan not in BILLING_PLANS:
                    raise ValueError(f"term must be one of {list(TERMS)} and billing_plan one "
                                     f"of {list(BILLING_PLANS)}")
                price = {"location": normal_location(e.pop("location")), "sku": e.pop("sku"),
                         "term": term, "billing_plan": plan,
                         "amount": float(e.pop("amount")),
                         "currency": e.pop("currency", "USD")}
                if e:
                    raise ValueError(f"unknown price fields {sorted(e)}")
                key = (price["location"], price["sku"].lower(), term, plan)
                self.prices[key] = price
                out.append(dict(price))
            return out

    def set_capacity(self, location: str, sku: str, available: bool,
                     reason: str = "allocation") -> dict:
        """Makes capacity reservations of `sku` in `location` fail (`available` false) the
        way `reason` says: "allocation" (the operation ends Failed with
        ZonalAllocationFailed/AllocationFailed), "restricted" (409 SkuNotAvailable at once)
        or "unsupported" (400 NotSupported at once); `available` true undoes it."""
        if reason not in CAPACITY_REASONS:
            raise ValueError(f"reason must be one of {list(CAPACITY_REASONS)}")
        with self.lock:
            key = (normal_location(location), sku.lower())
            if available:
                self.no_capacity.pop(key, None)
            else:
                self.no_capacity[key] = reason
            return {"no_capacity": self._no_capacity_json()}

    def set_usage(self, target: str, used: float) -> dict:
        """What runs in a commitment, as if VMs used it outside the provider. `target` is a
        capacity reservation's name (`used` VMs allocated in it: its instance view lists
        them) or a reservation order id (`used` is the utilization percentage Azure
        measured: every grain of its reservation's `utilization` aggregates)."""
        with self.lock:
            order = self.orders.get(target)
            if order is not None:
                if not 0 <= float(used) <= 100:
                    raise ValueError("used must be a percentage, 0 to 100")
                order["utilization"] = float(used)
                return self._reservation_order_item_json(order)
            for g in self.groups.values():
                r = g["reservations"].get(target.lower())
                if r is not None:
                    if not 0 <= int(used) <= r["sku"]["capacity"]:
                        raise ValueError(f"used must be 0 to {r['sku']['capacity']}")
                    r["allocated"] = int(used)
                    return self._reservation_json(g, r, True)
            raise KeyError(f"no reservation order or capacity reservation {target}")

    def complete(self) -> int:
        """Finishes every running Compute operation and every pending purchase."""
        with self.lock:
            running = self._complete_operations()
            pending = [o for o in self.orders.values() if o["state"] in ("Creating",
                                                                          "PendingBilling")]
            for order in pending:
                order["polls_left"] = 0
                self._advance_order(order)
            return running + len(pending)

    def control_routes(self) -> dict:
        """`POST /_fake/subscriptions`, `/_fake/prices`, `/_fake/capacity`, `/_fake/clock`
        (the clock is cloud time, moved by the test only) and `/_fake/usage`."""
        return {
            "/_fake/subscriptions": lambda d: (201, self.seed(d)),
            "/_fake/prices": lambda d: (201, {"prices": self.set_prices(
                d["prices"] if "prices" in d else [d])}),
            "/_fake/capacity": lambda d: (200, self.set_capacity(
                d["location"], d["sku"], bool(d.get("available", False)),
                d.get("reason", "allocation"))),
            "/_fake/clock": lambda d: (200, self.set_clock(d.get("advance_days"), d.get("now"))),
            "/_fake/usage": lambda d: (200, self.set_usage(d["target"], d["used"])),
        }

    def snapshot(self) -> dict:
        return {
            "clock": timestamp(self.now()),
            "settings": {"polls": self.polls, "purchase_polls": self.purchase_polls,
                         "retry_after": self.retry_after,
                         "fail_next_purchase": self.fail_next_purchase,
                         "capacity_api_versions": list(self.capacity_api_versions),
                         "compute_api_versions": list(self.compute_api_versions)},
            "subscriptions": [self._subscription_json(s) for s in self.subscriptions.values()],
            "prices": [dict(p) for p in self.prices.values()],
            "quotes": [{"reservationOrderId": q["id"], "request": q["request"],
                        "total": q["price"]["total"], "currency": q["price"]["currency"],
                        "purchased": q["id"] in self.orders}
                       for q in self.quotes.values()],
            "orders": [{**self._order_json(o, schedule=True),
                        "reservations_detail": [self._reservation_order_item_json(o)],
                        "fake": {"request": o["request"], "purchases": o["purchases"],
                                 "polls_left": o["polls_left"], "fail": o["fail"]}}
                       for o in self.orders.values()],
            "purchases": list(self.purchases),
            "capacity_reservation_groups": [{
                **self._group_json(g, instance_view=True),
                "capacityReservations": {r["name"]: self._reservation_json(g, r, True)
                                         for r in g["reservations"].values()},
            } for g in self.groups.values()],
            "operations": [dict(op) for op in self.operations.values()],
            "no_capacity": self._no_capacity_json(),
        }

    def _no_capacity_json(self) -> list[dict]:
        return [{"location": loc, "sku": sku, "reason": reason}
                for (loc, sku), reason in sorted(self.no_capacity.items())]

    # --- dispatch -----------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        issued, kind, m, failure = authenticated_route(self.registry, request, ROUTES)
        if failure:
            return failure
        try:
            if kind in CAPACITY_KINDS:
                return self._capacity(request, kind, m)
            return self._compute(request, issued, kind, m)
        except Refusal as refusal:
            return refusal.response

    @staticmethod
    def _method_not_supported(request: Request, kind: str) -> Response:
        return arm_error(405, "HttpMethodNotSupported",
                         f"The requested resource does not support http method "
                         f"'{request.method}'. Supported: {', '.join(METHODS[kind])}.")

    # --- Microsoft.Capacity: reservation orders ------------------------------------------

    def _capacity(self, request: Request, kind: str, m) -> Response:
        failure = api_version_form_error(request, self.capacity_api_versions)
        if failure:
            return failure
        version = api_version(request)
        if kind == "capacity_unknown":
            return invalid_resource_type("Microsoft.Capacity", version)
        if version not in self.capacity_api_versions:
            return invalid_resource_type("Microsoft.Capacity", version, RESOURCE_TYPES[kind],
                                         self.capacity_api_versions)
        if request.method not in METHODS[kind]:
            return self._method_not_supported(request, kind)
        if kind == "price":
            return self._calculate(request)
        if kind == "orders":  # every order the caller can read, one page
            for order in self.orders.values():
                self._advance_order(order)
            return Response(200, {"value": [self._order_json(o)
                                            for o in self.orders.values()]})
        order_id = m["order"].lower()
        if kind == "order" and request.method == "PUT":
            return self._purchase(request, order_id)
        order = self.orders.get(order_id)
        if order is None:
            return arm_error(404, "ReservationOrderNotFound",
                             f"Reservation order '{m['order']}' was not found.")
        self._advance_order(order)
        if kind == "order":
            expand = ",".join(request.query.get("$expand", [])).lower()
            return Response(200, self._order_json(order, schedule="schedule" in expand),
                            {"x-ms-request-id": request_id()})
        if kind == "order_reservations":
            return Response(200, {"value": [self._reservation_order_item_json(order)]})
        if m["res"].lower() != order["reservation_id"]:
            return arm_error(404, "ReservationIdNotInReservationOrder",
                             f"Reservation '{m['res']}' is not in reservation order "
                             f"'{order['id']}'.")
        return Response(200, self._reservation_order_item_json(order))

    def _purchase_request(self, body: dict) -> dict:
        """The purchase request of a calculatePrice or purchase body, normalised; raises
        the 400 the Reservations service answers for a bad one."""
        def bad(message, code="BadRequest"):
            raise Refusal(400, code, message)

        sku = body.get("sku")
        if not isinstance(sku, dict) or not isinstance(sku.get("name"), str) \
                or not sku["name"]:
            bad("The sku name is required.")
        location = body.get("location")
        if not isinstance(location, str) or not location:
            bad("The location is required.")
        p = body.get("properties")
        if not isinstance(p, dict):
            bad("The properties of the purchase request are required.")
        rtype = p.get("reservedResourceType")
        if rtype not in RESERVED_RESOURCE_TYPES:
            bad(f"The reserved resource type '{rtype}' is invalid. Allowed values: "
                f"{', '.join(RESERVED_RESOURCE_TYPES)}.")
        scope = p.get("billingScopeId")
        sub = re.fullmatch(r"/subscriptions/([0-9A-Fa-f-]{36})", scope or "") \
            if isinstance(scope, str) else None
        if sub is None or sub.group(1).lower() not in self.subscriptions:
            bad(f"The billing scope '{scope}' is not a valid subscription.",
                "InvalidSubscriptionId")
        term = p.get("term")
        if term not in TERMS:
            bad(f"The reservation term '{term}' is not supported. Supported terms: "
                f"{', '.join(TERMS)}.", "UnsupportedReservationTerm")
        plan = p.get("billingPlan") or "Upfront"
        if plan not in BILLING_PLANS:
            bad(f"The billing plan '{plan}' is invalid. Allowed values: "
                f"{', '.join(BILLING_PLANS)}.")
        quantity = p.get("quantity")
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity <= 0:
            bad(f"The quantity '{quantity}' is invalid: it must be greater than zero.")
        scope_type = p.get("appliedScopeType") or "Shared"
        if scope_type not in APPLIED_SCOPE_TYPES:
            bad(f"The applied scope type '{scope_type}' is invalid. Allowed values: "
                f"{', '.join(APPLIED_SCOPE_TYPES)}.")
        scopes = p.get("appliedScopes")
        if scope_type == "Single":
            if not scopes:
                bad("Applied scopes are required when the applied scope type is Single.",
                    "MissingAppliedScopesForSingle")
            if not isinstance(scopes, list) or len(scopes) != 1 \
                    or not isinstance(scopes[0], str):
                bad("Exactly one applied scope is allowed when the applied scope type is "
                    "Single.", "InvalidSingleAppliedScopesCount")
            if not re.fullmatch(r"/subscriptions/[^/]+(/resourceGroups/[^/]+)?", scopes[0],
                                re.I):
                bad(f"The applied scope '{scopes[0]}' is not a subscription or resource group.")
        elif scopes:
            bad(f"Applied scopes must not be given when the applied scope type is "
                f"{scope_type}.")
        if scope_type == "ManagementGroup":
            props = p.get("appliedScopeProperties") or {}
            if not props.get("tenantId") or not props.get("managementGroupId"):
                bad("appliedScopeProperties.tenantId and managementGroupId are required when "
                    "the applied scope type is ManagementGroup.")
        flex = (p.get("reservedResourceProperties") or {}).get("instanceFlexibility")
        if flex is not None and flex not in ("On", "Off"):
            bad(f"The instance flexibility '{flex}' is invalid. Allowed values: On, Off.")
        renew = p.get("renew", False)
        if not isinstance(renew, bool):
            bad("renew must be a boolean.")
        display = p.get("displayName")
        if display is not None and not isinstance(display, str):
            bad("displayName must be a string.")
        return {"sku": sku["name"], "location": normal_location(location),
                "reservedResourceType": rtype, "billingScopeId": scope, "term": term,
                "billingPlan": plan, "quantity": quantity, "displayName": display,
                "appliedScopeType": scope_type,
                "appliedScopes": scopes if scope_type == "Single" else None,
                "appliedScopeProperties": p.get("appliedScopeProperties"),
                "instanceFlexibility": (flex or "On") if rtype == "VirtualMachines" else None,
                "renew": renew}

    def _quote(self, req: dict) -> dict:
        """The price of a purchase request from the seeded table: total, currency and the
        payment schedule (one payment upfront, or one a month for the whole term)."""
        key = (req["location"], req["sku"].lower(), req["term"], req["billingPlan"])
        entry = self.prices.get(key)
        if entry is None:
            raise Refusal(400, "BadRequest",
                           f"The sku '{req['sku']}' is not available for purchase in location "
                           f"'{req['location']}' with term '{req['term']}' and billing plan "
                           f"'{req['billingPlan']}'.")
        today = self.now().date()
        if req["billingPlan"] == "Upfront":
            payments = [(today, _money(entry["amount"] * req["quantity"]))]
        else:
            each = _money(entry["amount"] * req["quantity"])
            payments = [(_add_months(today, i), each)
                        for i in range(TERMS[req["term"]] * 12)]
        return {"currency": entry["currency"], "payments": payments,
                "total": _money(sum(amount for _, amount in payments))}

    def _sku_title(self, req: dict) -> str:
        years = TERMS[req["term"]]
        return (f"Reserved VM Instance, {req['sku']}, "
                f"{REGION_TITLES.get(req['location'], req['location'])}, "
                f"{years} Year{'s' if years > 1 else ''}")

    def _calculate(self, request: Request) -> Response:
        req = self._purchase_request(json_body(request))
        price = self._quote(req)
        order_id = str(uuid.uuid4())
        self.quotes[order_id] = {"id": order_id, "request": req, "price": price,
                                 "created": timestamp(self.now())}
        cur = price["currency"]

        def money(amount):
            return {"currencyCode": cur, "amount": amount}

        return Response(200, {"properties": {
            "billingCurrencyTotal": money(price["total"]),
            "pricingCurrencyTotal": money(price["total"]),
            "netTotal": price["total"], "taxTotal": 0.0, "grandTotal": price["total"],
            "isTaxIncluded": False, "isBillingPartnerManaged": False,
            "reservationOrderId": order_id, "skuTitle": self._sku_title(req),
            "skuDescription": req["sku"],
            "paymentSchedule": [{"dueDate": day.isoformat(),
                                 "pricingCurrencyTotal": money(amount),
                                 "billingCurrencyTotal": money(amount),
                                 "status": "Scheduled"} for day, amount in price["payments"]],
        }}, {"x-ms-request-id": request_id()})

    def _purchase(self, request: Request, order_id: str) -> Response:
        req = self._purchase_request(json_body(request))
        order = self.orders.get(order_id)
        if order is not None:  # PUT is idempotent: the same request buys nothing new
            if order["request"] != req:
                return arm_error(409, "ReservationOrderIdAlreadyExists",
                                 f"Reservation order '{order['id']}' already exists with "
                                 "different properties.")
            return self._order_answer(order)
        quote = self.quotes.get(order_id)
        if quote is None:
            return arm_error(400, "BadRequest", SESSION_TIMED_OUT)
        if quote["request"] != req:
            changed = sorted(k for k in req if req[k] != quote["request"].get(k))
            return arm_error(400, "BadRequest",
                             f"The purchase request differs from the one priced for "
                             f"reservation order '{quote['id']}' ({', '.join(changed)}). Call "
                             "CalculatePrice again and provide the new Reservation Order ID "
                             "for purchase")
        start = self.now()
        order = {"id": quote["id"], "reservation_id": str(uuid.uuid4()), "request": req,
                 "price": quote["price"], "state": "Creating", "etag": 1,
                 "polls_left": self.purchase_polls, "fail": self.fail_next_purchase,
                 "requested": start, "updated": start,
                 "expiry": _add_years(start, TERMS[req["term"]]), "purchases": 1}
        self.fail_next_purchase = False
        self.orders[order_id] = order
        self.purchases.append(order["id"])
        return self._order_answer(order)

    def _order_answer(self, order: dict) -> Response:
        """202 + `Location` (the order itself, as a recorded purchase answered) while the
        purchase is in progress, 200 once it has ended."""
        body = self._order_json(order, full_reservations=order["state"] == "Creating")
        if order["state"] in ("Creating", "PendingBilling"):
            return Response(202, body, {
                "Location": f"{self.url}/providers/Microsoft.Capacity/reservationOrders/"
                            f"{order['id']}?api-version={self.capacity_api_versions[0]}",
                "x-ms-request-id": request_id()})
        return Response(200, body, {"x-ms-request-id": request_id()})

    def _advance_order(self, order: dict) -> None:
        """A read of a purchase in progress: PendingBilling for `purchase_polls` reads, then
        Succeeded (or BillingFailed)."""
        if order["state"] not in ("Creating", "PendingBilling"):
            return
        if order["polls_left"] > 0:
            order["polls_left"] -= 1
            new = "PendingBilling"
        else:
            new = "BillingFailed" if order["fail"] else "Succeeded"
        if new != order["state"]:
            order["state"], order["updated"] = new, self.now()
            order["etag"] += 1

    def _order_state(self, order: dict) -> str:
        if order["state"] == "Succeeded" and self.now() >= order["expiry"]:
            return "Expired"
        return order["state"]

    def _order_json(self, order: dict, schedule: bool = False,
                    full_reservations: bool = False) -> dict:
        req, state = order["request"], self._order_state(order)
        props = {"displayName": self._display_name(order),
                 "requestDateTime": timestamp(order["requested"])}
        if state in ("Succeeded", "Expired"):
            props.update(createdDateTime=timestamp(order["requested"]),
                         benefitStartTime=timestamp(order["requested"]),
                         expiryDate=order["expiry"].date().isoformat(),
                         expiryDateTime=timestamp(order["expiry"]))
        props.update(term=req["term"], billingPlan=req["billingPlan"],
                     provisioningState=state,
                     reservations=[self._reservation_order_item_json(order)
                                   if full_reservations else
                                   {"id": self._reservation_id(order)}],
                     originalQuantity=req["quantity"])
        if schedule:
            props["planInformation"] = self._plan_json(order, state)
        return {"id": f"/providers/microsoft.capacity/reservationOrders/{order['id']}",
                "type": "Microsoft.Capacity/reservationOrders", "name": order["id"],
                "etag": order["etag"], "properties": props}

    def _display_name(self, order: dict) -> str:
        return order["request"]["displayName"] or \
            "VM_RI_" + order["requested"].strftime("%m-%d-%Y_%H-%M")

    @staticmethod
    def _reservation_id(order: dict) -> str:
        return (f"/providers/microsoft.capacity/reservationOrders/{order['id']}/reservations/"
                f"{order['reservation_id']}")

    def _plan_json(self, order: dict, state: str) -> dict:
        price, today = order["price"], self.now().date()
        cur = price["currency"]
        transactions = []
        start = order["requested"].date()
        for i, (_, amount) in enumerate(price["payments"]):  # due dates count from purchase
            due = _add_months(start, i)
            t = {"dueDate": due.isoformat(),
                 "pricingCurrencyTotal": {"currencyCode": cur, "amount": amount},
                 "billingCurrencyTotal": {"currencyCode": cur, "amount": amount}}
            if state == "BillingFailed" and i == 0:
                t["status"] = "Failed"
            elif state in ("Succeeded", "Expired") and due <= today:
                t.update(paymentDate=due.isoformat(), status="Succeeded")
            else:
                t["status"] = "Scheduled"
            transactions.append(t)
        plan = {"pricingCurrencyTotal": {"currencyCode": cur, "amount": price["total"]},
                "startDate": start.isoformat(),
                "transactions": transactions}
        upcoming = [t["dueDate"] for t in transactions if t["status"] == "Scheduled"]
        if upcoming and state != "BillingFailed":
            plan["nextPaymentDueDate"] = upcoming[0]
        return plan

    def _reservation_order_item_json(self, order: dict) -> dict:
        """The order's reservation (ReservationResponse)."""
        req, state = order["request"], self._order_state(order)
        props = {"reservedResourceType": req["reservedResourceType"],
                 "displayName": self._display_name(order),
                 "appliedScopeType": req["appliedScopeType"], "quantity": req["quantity"],
                 "provisioningState": state, "billingScopeId": req["billingScopeId"],
                 "billingPlan": req["billingPlan"], "term": req["term"],
                 "renew": req["renew"], "skuDescription": self._sku_title(req),
                 "effectiveDateTime": timestamp(order["requested"]),
                 "lastUpdatedDateTime": timestamp(order["updated"]),
                 "purchaseDateTime": timestamp(order["requested"])}
        if req["appliedScopes"]:
            props["appliedScopes"] = req["appliedScopes"]
        if req["instanceFlexibility"]:
            props["instanceFlexibility"] = req["instanceFlexibility"]
        if state == "PendingBilling":
            props["extendedStatusInfo"] = {"statusCode": "Pending",
                                           "message": "Payment processing is in progress."}
        if state == "Succeeded" and order.get("utilization") is not None:
            # Azure measures it daily; absent until measured.
            value = order["utilization"]
            props["utilization"] = {"trend": "SAME", "aggregates": [
                {"grain": grain, "grainUnit": "days", "value": value,
                 "valueUnit": "percentage"} for grain in (1.0, 7.0, 30.0)]}
        if state in ("Succeeded", "Expired"):
            props.update(benefitStartTime=timestamp(order["requested"]),
                         expiryDate=order["expiry"].date().isoformat(),
                         expiryDateTime=timestamp(order["expiry"]))
        return {"sku": {"name": req["sku"]}, "id": self._reservation_id(order),
                "type": "Microsoft.Capacity/reservationOrders/reservations",
                "name": order["reservation_id"], "etag": order["etag"],
                "location": req["location"], "properties": props}

    # --- Microsoft.Compute: capacity reservation groups and reservations ------------------

    def _compute(self, request: Request, issued, kind: str, m) -> Response:
        group = self.groups.get(self._group_key(m)) if "group" in m.groupdict() else None
        sub, failure = self._checked_subscription(
            request, issued, m, "Microsoft.Compute", self.compute_api_versions,
            kind == "compute_unknown", RESOURCE_TYPES.get(kind),
            lambda locations: group["location"] if group else locations[0])
        if failure:
            return failure
        if request.method not in METHODS[kind]:
            return self._method_not_supported(request, kind)
        if kind == "operation":
            return self._operation(request, m)
        if kind == "groups":  # the subscription's groups, one page
            return Response(200, {"value": [
                self._group_json(g) for g in self.groups.values()
                if g["subscription"].lower() == m["sub"].lower()]})
        if m["rg"].lower() not in sub["resource_groups"]:
            return resource_group_not_found(m["rg"])
        key = self._group_key(m)
        group = self.groups.get(key)
        if kind == "group":
            if request.method == "PUT":
                return self._put_group(request, sub, m, key, group)
            if group is None:
                if request.method == "DELETE":
                    return Response(204, None, {"x-ms-request-id": request_id()})
                return compute_not_found(m["rg"], f"capacityReservationGroups/{m['group']}")
            if request.method == "GET":
                expand = ",".join(request.query.get("$expand", [])).lower()
                return Response(200, self._group_json(group, "instanceview" in expand),
                                {"x-ms-request-id": request_id()})
            return self._delete_group(group, key)
        if group is None:
            return parent_not_found(m["group"])
        if kind == "reservations":
            return Response(200, {"value": [self._reservation_json(group, r)
                                            for r in group["reservations"].values()]})
        name = m["res"]
        reservation = group["reservations"].get(name.lower())
        if request.method == "PUT":
            return self._put_reservation(request, group, name, reservation)
        if reservation is None:
            if request.method == "DELETE":
                return Response(204, None, {"x-ms-request-id": request_id()})
            return compute_not_found(m["rg"], f"capacityReservationGroups/{group['name']}/"
                                            f"capacityReservations/{name}")
        if request.method == "GET":
            expand = ",".join(request.query.get("$expand", [])).lower()
            return Response(200, self._reservation_json(group, reservation,
                                                        "instanceview" in expand),
                            {"x-ms-request-id": request_id()})
        reservation["provisioningState"] = "Deleting"
        op = self._start(group, reservation, "delete")
        return Response(202, None, self._compute_async_headers(op))

    @staticmethod
    def _group_key(m) -> tuple:
        return m["sub"].lower(), m["rg"].lower(), m["group"].lower()

    def _put_group(self, request: Request, sub: dict, m, key: tuple, group) -> Response:
        body = json_body(request)
        location = body_location(body)
        if sub["locations"] is not None and location not in sub["locations"]:
            return arm_error(400, "LocationNotAvailableForResourceType",
                             f"The provided location '{location}' is not available for resource "
                             "type 'Microsoft.Compute/capacityReservationGroups'. List of "
                             f"available regions for the resource type is "
                             f"'{','.join(sub['locations'])}'.")
        zones = body.get("zones")
        if zones is not None and (not isinstance(zones, list) or any(
                z not in ("1", "2", "3") for z in zones) or len(set(zones)) != len(zones)):
            raise Refusal(400, "InvalidParameter",
                           f"The value {zones} of zones is invalid: the zones of location "
                           f"'{location}' are '1', '2' and '3'.", "zones")
        zones = sorted(zones) if zones else None
        tags = string_map(body)
        props = body.get("properties") if isinstance(body.get("properties"), dict) else {}
        sharing = props.get("sharingProfile")
        if group is not None:
            if group["location"] != location:
                return arm_error(400, "InvalidResourceLocation",
                                 f"The resource '{group['name']}' already exists in location "
                                 f"'{group['location']}' in resource group '{m['rg']}'. A "
                                 "resource with the same name cannot be created in location "
                                 f"'{location}'. Please select a new resource name.")
            if group["zones"] != zones:
                raise Refusal(400, "PropertyChangeNotAllowed",
                               "Changing property 'zones' is not allowed.", "zones")
            group.update(tags=tags, sharingProfile=sharing)
            return Response(200, self._group_json(group), {"x-ms-request-id": request_id()})
        group = {"subscription": sub["id"], "resource_group": sub["resource_groups"][key[1]],
                 "name": m["group"], "location": location, "zones": zones, "tags": tags,
                 "sharingProfile": sharing, "reservations": {}}
        self.groups[key] = group
        return Response(201, self._group_json(group), {"x-ms-request-id": request_id()})

    def _delete_group(self, group: dict, key: tuple) -> Response:
        if group["reservations"]:
            names = ", ".join(r["name"] for r in group["reservations"].values())
            return arm_error(409, "OperationNotAllowed",
                             f"Capacity reservation group '{group['name']}' cannot be deleted "
                             f"because it contains capacity reservations ({names}). Delete them "
                             "first. Please refer to https://aka.ms/CapacityReservation for more "
                             "details.")
        del self.groups[key]
        return Response(200, None, {"x-ms-request-id": request_id()})

    @staticmethod
    def _group_id(g: dict) -> str:
        return (f"/subscriptions/{g['subscription']}/resourceGroups/{g['resource_group']}"
                f"/providers/Microsoft.Compute/CapacityReservationGroups/{g['name']}")

    def _group_json(self, g: dict, instance_view: bool = False) -> dict:
        props = {}
        if g["reservations"]:
            props["capacityReservations"] = [{"id": self._reservation_id_of(g, r)}
                                             for r in g["reservations"].values()]
        if g["sharingProfile"] is not None:
            props["sharingProfile"] = g["sharingProfile"]
        if instance_view:
            props["instanceView"] = {"capacityReservations": [
                {"name": r["name"], **self._instance_view(g, r)}
                for r in g["reservations"].values()]}
        out = {"name": g["name"], "id": self._group_id(g),
               "type": "Microsoft.Compute/capacityReservationGroups", "location": g["location"]}
        if g["tags"] is not None:
            out["tags"] = g["tags"]
        if g["zones"]:
            out["zones"] = g["zones"]
        out["properties"] = props
        return out

    def _put_reservation(self, request: Request, group: dict, name: str, existing) -> Response:
        body = json_body(request)
        location = body_location(body)
        if location != group["location"]:
            raise Refusal(400, "InvalidParameter",
                           f"The location '{location}' of the capacity reservation must match "
                           f"the location '{group['location']}' of its capacity reservation "
                           "group.", "location")
        sku = body.get("sku")
        if not isinstance(sku, dict) or not isinstance(sku.get("name"), str) \
                or not sku["name"]:
            raise Refusal(400, "InvalidParameter",
                           "Required parameter 'sku.name' is missing (null).", "sku.name")
        capacity = sku.get("capacity")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
            raise Refusal(400, "InvalidParameter",
                           f"The value '{capacity}' of sku.capacity is invalid: it must be a "
                           "whole number of at least 0.", "sku.capacity")
        zones = body.get("zones") or None
        if group["zones"]:
            if not isinstance(zones, list) or len(zones) != 1 or zones[0] not in group["zones"]:
                raise Refusal(400, "InvalidParameter",
                               f"The zones {zones} of the capacity reservation are invalid: give "
                               f"one zone of its capacity reservation group's zones "
                               f"{group['zones']}.", "zones")
        elif zones:
            raise Refusal(400, "InvalidParameter",
                           f"The zones {zones} of the capacity reservation are invalid: its "
                           "capacity reservation group has no zones, so it is regional.",
                           "zones")
        tags = string_map(body)
        if existing is not None:
            if existing["sku"]["name"].lower() != sku["name"].lower():
                raise Refusal(400, "PropertyChangeNotAllowed",
                               "Changing property 'sku.name' is not allowed.", "sku.name")
            if existing["zones"] != zones:
                raise Refusal(400, "PropertyChangeNotAllowed",
                               "Changing property 'zones' is not allowed.", "zones")
        reason = self.no_capacity.get((location, sku["name"].lower()))
        if reason == "restricted":
            return arm_error(409, "SkuNotAvailable",
                             f"The requested VM size for resource 'Following SKUs have failed for "
                             f"Capacity Restrictions: {sku['name']}' is currently not available "
                             f"in location '{location}'. Please try another size or deploy to a "
                             "different location or different zone. See "
                             "https://aka.ms/azureskunotavailable for details.")
        if reason == "unsupported":
            return arm_error(400, "NotSupported",
                             f"Capacity Reservation is not supported for VM size {sku['name']}.")
        fail = None
        if reason == "allocation" and (existing is None
                                       or capacity > existing["sku"]["capacity"]):
            where = "zone" if zones else "region"
            fail = {"code": "ZonalAllocationFailed" if zones else "AllocationFailed",
                    "message": "Allocation failed. We do not have sufficient capacity for the "
                               f"requested VM size in this {where}. {ALLOCATION_GUIDANCE}"}
        now = self.now()
        if existing is None:
            reservation = {"name": name, "location": location, "zones": zones, "tags": tags,
                           "sku": {"name": sku["name"], "capacity": capacity},
                           "reservationId": str(uuid.uuid4()), "timeCreated": timestamp(now),
                           "provisioningTime": timestamp(now), "provisioningState": "Creating"}
            group["reservations"][name.lower()] = reservation
            kind, status = "create", 201
        else:
            reservation = existing
            reservation.update(tags=tags, provisioningTime=timestamp(now),
                               provisioningState="Updating")
            reservation["sku"] = {"name": existing["sku"]["name"], "capacity": capacity}
            kind, status = "update", 200
        op = self._start(group, reservation, kind, fail)
        return Response(status, self._reservation_json(group, reservation),
                        self._compute_async_headers(op))

    def _reservation_id_of(self, g: dict, r: dict) -> str:
        return (f"/subscriptions/{g['subscription']}/resourceGroups/{g['resource_group']}"
                f"/providers/Microsoft.Compute/capacityReservationGroups/{g['name']}"
                f"/capacityReservations/{r['name']}")

    def _instance_view(self, g: dict, r: dict) -> dict:
        state = r["provisioningState"]
        info = {"currentCapacity": r["sku"]["capacity"] if state == "Succeeded" else 0}
        if r.get("allocated"):  # left out when nothing is allocated
            info["virtualMachinesAllocated"] = [
                {"id": f"/subscriptions/{g['subscription']}/resourceGroups/"
                       f"{g['resource_group']}/providers/Microsoft.Compute/virtualMachines/"
                       f"vm-{r['name']}-{i}"} for i in range(r["allocated"])]
        return {"utilizationInfo": info,
                "statuses": [{"code": f"ProvisioningState/{state.lower()}",
                              "level": "Error" if state == "Failed" else "Info",
                              "displayStatus": f"Provisioning {state.lower()}"}]}

    def _reservation_json(self, g: dict, r: dict, instance_view: bool = False) -> dict:
        props = {"platformFaultDomainCount": 3, "reservationId": r["reservationId"],
                 "provisioningState": r["provisioningState"],
                 "provisioningTime": r["provisioningTime"], "timeCreated": r["timeCreated"]}
        if instance_view:
            props["instanceView"] = self._instance_view(g, r)
        out = {"name": r["name"], "id": self._reservation_id_of(g, r),
               "type": "Microsoft.Compute/capacityReservationGroups/capacityReservations",
               "location": r["location"]}
        if r["tags"] is not None:
            out["tags"] = r["tags"]
        out["sku"] = dict(r["sku"])
        if r["zones"]:
            out["zones"] = r["zones"]
        out["properties"] = props
        return out

    # --- Compute long-running operations ------------------------------------------------

    def _start(self, group: dict, reservation: dict, kind: str, fail: dict | None = None):
        return self._new_operation({
            "p": secrets.token_hex(8), "kind": kind,
            "group": (group["subscription"].lower(), group["resource_group"].lower(),
                      group["name"].lower()),
            "reservation": reservation["name"].lower(),
            "reservationId": reservation["reservationId"],
            "subscription": group["subscription"], "location": group["location"],
            "startTime": timestamp(self.now()), "fail": fail})

    def _target(self, op: dict):
        group = self.groups.get(op["group"])
        reservation = group["reservations"].get(op["reservation"]) if group else None
        if reservation is not None and reservation["reservationId"] != op["reservationId"]:
            reservation = None  # deleted and made again since
        return group, reservation

    def _finish(self, op: dict) -> None:
        group, reservation = self._target(op)
        self._end_operation(op, timestamp(self.now()), op["fail"] and dict(op["fail"]))
        if op["fail"]:
            if reservation is not None:
                reservation["provisioningState"] = "Failed"
        else:
            if reservation is not None and op["kind"] == "delete":
                del group["reservations"][op["reservation"]]
            elif reservation is not None:
                reservation["provisioningState"] = "Succeeded"

    def _operation(self, request: Request, m) -> Response:
        return self._compute_operation(request, m, self._result)

    def _result(self, op: dict) -> Response:
        """What an ended operation's `Location` answers: the reservation, or 204."""
        group, reservation = self._target(op)
        if op["kind"] == "delete" or reservation is None:
            return Response(204, None)
        return Response(200, self._reservation_json(group, reservation))
