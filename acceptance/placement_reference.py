"""An independent reference for the `gpu_pool_placement` data source (issue 17): where a
GPU node pool's whole expected bill is lowest. Plain iteration over
`crates/core/data/offers.csv` with the csv module; no code shared with the Rust side
(only CLOUD_ORDER and the region-glob match are taken from offers_reference.py).

A pool: `gpu` (canonical model name, no aliases here) x `gpu_count` per node, `min_nodes`
to `max_nodes` nodes, an on-demand floor of `on_demand_min` nodes and `expected_nodes`
(default `min_nodes`) running on average:

    floor_nodes = min(on_demand_min, max_nodes)
    running     = max(expected_nodes, floor_nodes)
    spot_nodes  = running - floor_nodes

A candidate is one (cloud, region, instance_type) with rows of exactly that GPU model and
count, in `clouds` (default aws, azure, gcp) and a region matching a glob of `regions`.
Its on-demand price is the lowest usable on-demand price of its rows (rows can be per
zone), its spot price the lowest usable spot price; each with the source and as-of of the
row that gave it (the first in file order on ties). A price is usable when it is present
and, with `max_price_age` ("<N>d" or "<N>w"), dated no more than N days before today (UTC);
without it every price is usable, dated or not. A price on the stale list
(`offers_reference.stale_reason`) is not usable unless `include_stale_prices`.

Per node-hour: the floor costs `reserved_usd_per_gpu_hour x gpu_count` when a reservation
price is given (line kind `reserved`), else the on-demand price (`on_demand`); the spot
nodes cost the spot price, or the on-demand price when there is no usable spot price (an
upper bound, `spot_priced_at_on_demand`). A candidate is left out when a line with nodes
has no price, or when it has no usable price at all.

    monthly_usd = 730 x (floor_nodes x floor price + spot_nodes x spot price)

Ranked by monthly_usd, then cloud (aws, azure, gcp), region, instance type. `prefer`
(hysteresis, as gpu_spot_offer's): the preferred candidate stays first unless the best one
saves more than 0 % and at least `min_saving_percent` of its monthly bill.

`place()` does this by building the candidates row by row; `brute_force_cheapest()` does
it a second, simpler way (every (cloud, region, type) triple of the file, its bill from
lists of prices, the minimum). Run this file to print a few shapes and check that the two
agree on a scan of every GPU model and count of the three clouds under many pool shapes.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offers_reference import (  # noqa: E402
    CLOUD_ORDER, OFFERS_CSV, _region_ok, stale_reason, stale_reasons)

HOURS_PER_MONTH = 730.0
PLACEMENT_CLOUDS = ["aws", "azure", "gcp"]     # the clouds with managed Kubernetes node pools
RESERVED_SOURCE = "reserved_usd_per_gpu_hour"

# What one line of the chosen candidate's bill holds, and one candidate of `candidates`.
LINE_FIELDS = ["kind", "nodes", "usd_per_node_hour", "monthly_usd", "source", "as_of",
               "price_age_days", "spot_priced_at_on_demand"]
CANDIDATE_FIELDS = ["cloud", "region", "instance_type", "monthly_usd",
                    "on_demand_usd_per_hour", "spot_usd_per_hour",
                    "spot_priced_at_on_demand", "on_demand_as_of", "spot_as_of",
                    # Read with `live = true` only: null in every offline answer.
                    "availability", "availability_source", "availability_as_of"]


class NoCandidate(Exception):
    """No (cloud, region, instance_type) can host the pool; the message says what emptied
    the list (the provider answers this with an error diagnostic)."""


def load_rows(path: Path = OFFERS_CSV) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def today_utc() -> dt.date:
    return dt.datetime.now(dt.timezone.utc).date()


def parse_max_price_age(text: str | None) -> int | None:
    """"90d" -> 90, "2w" -> 14; None -> None (every price usable)."""
    if text is None:
        return None
    m = re.fullmatch(r"(\d+)([dw])", text)
    if not m:
        raise ValueError(f"max_price_age: {text!r} is not <N>d or <N>w")
    return int(m.group(1)) * (7 if m.group(2) == "w" else 1)


def age_days(as_of: str | None, today: dt.date) -> int | None:
    if not as_of:
        return None
    return (today - dt.date.fromisoformat(as_of)).days


@dataclass
class Pool:
    gpu: str
    gpu_count: int
    min_nodes: int
    max_nodes: int
    on_demand_min: int = 0
    expected_nodes: int | None = None           # None: min_nodes
    clouds: list[str] | None = None             # None: aws, azure, gcp
    regions: list[str] | None = None            # None: every region
    max_price_age: str | None = None
    reserved_usd_per_gpu_hour: float | None = None
    prefer: dict | None = None                  # {cloud, region, instance_type}
    min_saving_percent: float = 0.0
    include_stale_prices: bool = False

    def check(self):
        """The interface's input rules (the provider rejects these before reading)."""
        if self.gpu_count < 1 or self.gpu_count != int(self.gpu_count):
            raise ValueError("gpu_count: a whole number >= 1")
        if self.min_nodes < 0 or self.max_nodes < 1 or self.min_nodes > self.max_nodes:
            raise ValueError("min_nodes/max_nodes: 0 <= min_nodes <= max_nodes, max_nodes >= 1")
        if not 0 <= self.on_demand_min <= self.max_nodes:
            raise ValueError("on_demand_min: 0..max_nodes")
        if not self.min_nodes <= self.expected() <= self.max_nodes:
            raise ValueError("expected_nodes: min_nodes..max_nodes")
        bad = [c for c in self.cloud_list() if c not in PLACEMENT_CLOUDS]
        if bad:
            raise ValueError(f"clouds: {bad} not in {PLACEMENT_CLOUDS}")
        parse_max_price_age(self.max_price_age)
        if self.reserved_usd_per_gpu_hour is not None and self.reserved_usd_per_gpu_hour < 0:
            raise ValueError("reserved_usd_per_gpu_hour: >= 0")

    def expected(self) -> int:
        return self.min_nodes if self.expected_nodes is None else self.expected_nodes

    def cloud_list(self) -> list[str]:
        return PLACEMENT_CLOUDS if self.clouds is None else self.clouds

    def floor_nodes(self) -> int:
        return min(self.on_demand_min, self.max_nodes)

    def spot_nodes(self) -> int:
        return max(self.expected(), self.floor_nodes()) - self.floor_nodes()

    def floor_kind(self) -> str:
        return "on_demand" if self.reserved_usd_per_gpu_hour is None else "reserved"


@dataclass
class Price:
    usd: float
    source: str
    as_of: str | None


@dataclass
class Candidate:
    cloud: str
    region: str
    instance_type: str
    on_demand: Price | None = None
    spot: Price | None = None
    monthly_usd: float = 0.0
    lines: list[dict] = field(default_factory=list)

    def key(self) -> tuple:
        return (self.cloud, self.region, self.instance_type)

    def public(self) -> dict:
        """The candidate as `candidates` shows it."""
        return {
            "cloud": self.cloud,
            "region": self.region,
            "instance_type": self.instance_type,
            "monthly_usd": self.monthly_usd,
            "on_demand_usd_per_hour": self.on_demand.usd if self.on_demand else None,
            "spot_usd_per_hour": self.spot.usd if self.spot else None,
            # Only a spot line with nodes can be priced at on-demand.
            "spot_priced_at_on_demand": any(l["spot_priced_at_on_demand"] for l in self.lines),
            "on_demand_as_of": self.on_demand.as_of if self.on_demand else None,
            "spot_as_of": self.spot.as_of if self.spot else None,
            "availability": None, "availability_source": None, "availability_as_of": None,
        }


def rank_key(c: Candidate) -> tuple:
    return (c.monthly_usd, CLOUD_ORDER.index(c.cloud), c.region, c.instance_type)


def without_stale(rows: list[dict], pool: Pool) -> list[dict]:
    """`rows` with every price on the stale list blanked, or, when the pool counts them,
    its source followed by ` (STALE: <reason>)` as the answers show it."""
    reasons = stale_reasons()
    out = []
    for r in rows:
        r = dict(r)
        for kind in ("on_demand", "spot"):
            why = r[f"{kind}_usd_per_hour"] and stale_reason(r, kind, reasons)
            if why and pool.include_stale_prices:
                r[f"{kind}_source"] = f"{r[f'{kind}_source']} (STALE: {why})"
            elif why:
                r[f"{kind}_usd_per_hour"] = ""
        out.append(r)
    return out


def _usable(price: str, as_of: str, max_age: int | None, today: dt.date) -> bool:
    if price == "":
        return False
    if max_age is None:
        return True
    return as_of != "" and (today - dt.date.fromisoformat(as_of)).days <= max_age


def _line(kind: str, nodes: int, price: Price, at_on_demand: bool, today: dt.date) -> dict:
    return {
        "kind": kind,
        "nodes": nodes,
        "usd_per_node_hour": price.usd,
        "monthly_usd": HOURS_PER_MONTH * nodes * price.usd,
        "source": price.source,
        "as_of": price.as_of,
        "price_age_days": age_days(price.as_of, today),
        "spot_priced_at_on_demand": at_on_demand,
    }


def candidates(pool: Pool, rows: list[dict], today: dt.date) -> list[Candidate]:
    """Every priced candidate, ranked (before hysteresis). Raises NoCandidate."""
    rows = without_stale(rows, pool)
    max_age = parse_max_price_age(pool.max_price_age)
    clouds = pool.cloud_list()
    found: dict[tuple, Candidate] = {}
    stages = {"gpu": 0, "gpu_count": 0, "clouds": 0, "regions": 0}
    for r in rows:
        if r["gpu_model"] != pool.gpu:
            continue
        stages["gpu"] += 1
        if r["gpu_count"] == "" or float(r["gpu_count"]) != pool.gpu_count:
            continue
        stages["gpu_count"] += 1
        if r["cloud"] not in clouds:
            continue
        stages["clouds"] += 1
        if not _region_ok(r["region"], pool.regions or []):
            continue
        stages["regions"] += 1
        key = (r["cloud"], r["region"], r["instance_type"])
        c = found.setdefault(key, Candidate(*key))
        if _usable(r["on_demand_usd_per_hour"], r["on_demand_as_of"], max_age, today):
            p = float(r["on_demand_usd_per_hour"])
            if c.on_demand is None or p < c.on_demand.usd:
                c.on_demand = Price(p, r["on_demand_source"], r["on_demand_as_of"] or None)
        if _usable(r["spot_usd_per_hour"], r["spot_as_of"], max_age, today):
            p = float(r["spot_usd_per_hour"])
            if c.spot is None or p < c.spot.usd:
                c.spot = Price(p, r["spot_source"], r["spot_as_of"] or None)
    for name, n in stages.items():
        if n == 0:
            raise NoCandidate(f"no catalog row passes `{name}`")

    floor, spot = pool.floor_nodes(), pool.spot_nodes()
    out = []
    priced_any = False
    for c in found.values():
        if c.on_demand is None and c.spot is None:
            continue                                        # no usable price at all
        priced_any = True
        if pool.reserved_usd_per_gpu_hour is not None:
            floor_price = Price(pool.reserved_usd_per_gpu_hour * pool.gpu_count,
                                RESERVED_SOURCE, None)
        else:
            floor_price = c.on_demand
        spot_price, at_on_demand = (c.spot, False) if c.spot is not None else (c.on_demand, True)
        if floor > 0 and floor_price is None or spot > 0 and spot_price is None:
            continue                                        # a line with nodes has no price
        c.monthly_usd = HOURS_PER_MONTH * (
            (floor * floor_price.usd if floor > 0 else 0.0)
            + (spot * spot_price.usd if spot > 0 else 0.0))
        c.lines = []
        if floor > 0:
            c.lines.append(_line(pool.floor_kind(), floor, floor_price, False, today))
        if spot > 0:
            c.lines.append(_line("spot", spot, spot_price, at_on_demand, today))
        out.append(c)
    if not out:
        if not priced_any:
            raise NoCandidate("no usable price"
                              + (" (`max_price_age`)" if max_age is not None else ""))
        raise NoCandidate("no candidate prices every line (on-demand floor or spot)")
    out.sort(key=rank_key)
    return out


def place(pool: Pool, rows: list[dict] | None = None, today: dt.date | None = None) -> dict:
    """The data source's answer: the chosen candidate's fields, its `lines`, the ranked
    `candidates` (after hysteresis, as public dicts), `matched`, `kept_preferred`,
    `saving_percent`; `_ranked` holds the Candidate objects. Raises NoCandidate."""
    pool.check()
    rows = load_rows() if rows is None else rows
    today = today_utc() if today is None else today
    ranked = candidates(pool, rows, today)
    saving, kept = 0.0, False
    if pool.prefer is not None:
        want = (pool.prefer["cloud"], pool.prefer["region"], pool.prefer["instance_type"])
        idx = next((i for i, c in enumerate(ranked) if c.key() == want), None)
        if idx is not None:
            pref, best = ranked[idx].monthly_usd, ranked[0].monthly_usd
            saving = (pref - best) / pref * 100.0 if pref != 0 else 0.0
            stays = not (saving > 0 and saving >= pool.min_saving_percent)
            if stays and idx > 0:
                ranked.insert(0, ranked.pop(idx))
            kept = ranked[0].key() == want
    first = ranked[0]
    return {
        "cloud": first.cloud,
        "region": first.region,
        "instance_type": first.instance_type,
        "monthly_usd": first.monthly_usd,
        "hourly_usd": first.monthly_usd / HOURS_PER_MONTH,
        "lines": first.lines,
        "candidates": [c.public() for c in ranked],
        "matched": len(ranked),
        "kept_preferred": kept,
        "saving_percent": saving,
        "_ranked": ranked,
    }


def spot_cheapest(pool: Pool, rows: list[dict] | None = None,
                  today: dt.date | None = None) -> tuple | None:
    """(cloud, region, instance_type, spot price) of the candidate with the lowest usable
    spot price (ties: cloud order, region, type): where a placement by the spot line alone
    would go. None when no candidate has a spot price."""
    rows = load_rows() if rows is None else rows
    today = today_utc() if today is None else today
    spots = [c for c in candidates(pool, rows, today) if c.spot is not None]
    if not spots:
        return None
    c = min(spots, key=lambda c: (c.spot.usd, CLOUD_ORDER.index(c.cloud), c.region,
                                  c.instance_type))
    return (c.cloud, c.region, c.instance_type, c.spot.usd)


# --- the second way -----------------------------------------------------------------

def brute_force_bills(pool: Pool, rows: list[dict], today: dt.date) -> dict[tuple, float]:
    """Every (cloud, region, instance_type) of the whole file, its monthly bill for the
    pool, when it can host and price it."""
    rows = without_stale(rows, pool)
    max_days = parse_max_price_age(pool.max_price_age)
    floor = min(pool.on_demand_min, pool.max_nodes)
    running = max(pool.expected(), floor)
    spot = running - floor
    triples = sorted({(r["cloud"], r["region"], r["instance_type"]) for r in rows})
    by_triple: dict[tuple, list[dict]] = {}
    for r in rows:
        by_triple.setdefault((r["cloud"], r["region"], r["instance_type"]), []).append(r)

    def fresh(as_of: str) -> bool:
        if max_days is None:
            return True
        if not as_of:
            return False
        return today.toordinal() - dt.date.fromisoformat(as_of).toordinal() <= max_days

    bills = {}
    for t in triples:
        cloud, region, itype = t
        if cloud not in pool.cloud_list():
            continue
        if pool.regions and not any(_region_ok(region, [g]) for g in pool.regions):
            continue
        mine = [r for r in by_triple[t] if r["gpu_model"] == pool.gpu and r["gpu_count"]
                and float(r["gpu_count"]) == pool.gpu_count]
        od = [float(r["on_demand_usd_per_hour"]) for r in mine
              if r["on_demand_usd_per_hour"] and fresh(r["on_demand_as_of"])]
        sp = [float(r["spot_usd_per_hour"]) for r in mine
              if r["spot_usd_per_hour"] and fresh(r["spot_as_of"])]
        if not od and not sp:
            continue
        if pool.reserved_usd_per_gpu_hour is not None:
            floor_options = [pool.reserved_usd_per_gpu_hour * pool.gpu_count]
        else:
            floor_options = od
        spot_options = sp if sp else od
        if (floor > 0 and not floor_options) or (spot > 0 and not spot_options):
            continue
        total = 0.0
        if floor > 0:
            total += floor * min(floor_options)
        if spot > 0:
            total += spot * min(spot_options)
        bills[t] = HOURS_PER_MONTH * total
    return bills


def brute_force_cheapest(pool: Pool, rows: list[dict] | None = None,
                         today: dt.date | None = None) -> dict | None:
    """The cheapest (cloud, region, instance_type) for the pool without hysteresis, and
    how many triples could host it: {cloud, region, instance_type, monthly_usd, matched}.
    None when none can."""
    rows = load_rows() if rows is None else rows
    today = today_utc() if today is None else today
    bills = brute_force_bills(pool, rows, today)
    best = None
    for (cloud, region, itype), bill in bills.items():
        key = (bill, CLOUD_ORDER.index(cloud), region, itype)
        if best is None or key < best[0]:
            best = (key, cloud, region, itype, bill)
    if best is None:
        return None
    _, cloud, region, itype, bill = best
    return {"cloud": cloud, "region": region, "instance_type": itype, "monthly_usd": bill,
            "matched": len(bills)}


# --- self-check ---------------------------------------------------------------------

# Node shapes: (min_nodes, max_nodes, on_demand_min, expected_nodes).
_NODE_SHAPES = [(0, 1, 0, 0), (0, 4, 0, 2), (1, 4, 1, 2), (1, 4, 1, 3), (2, 5, 2, 2),
                (3, 3, 3, 3), (0, 10, 1, 7), (1, 8, 4, 6)]


def self_check(rows: list[dict] | None = None, today: dt.date | None = None,
               verbose: bool = True) -> int:
    """place() and brute_force_cheapest() agree (best triple, its bill, how many) on every
    GPU model and count of aws/azure/gcp under each node shape, with and without a
    reservation, a price age limit and a region glob. Returns the number of pools
    compared; raises AssertionError on the first disagreement."""
    rows = load_rows() if rows is None else rows
    today = today_utc() if today is None else today
    models = sorted({(r["gpu_model"], float(r["gpu_count"])) for r in rows
                     if r["cloud"] in PLACEMENT_CLOUDS and r["gpu_count"]
                     and float(r["gpu_count"]) >= 1 and float(r["gpu_count"]).is_integer()})
    # Both functions skip other models' rows; giving each model's rows alone (in file
    # order) only saves time.
    by_model: dict[str, list[dict]] = {}
    for r in rows:
        by_model.setdefault(r["gpu_model"], []).append(r)
    all_rows = rows
    compared = empty = 0
    for gpu, count in models:
        rows = by_model[gpu]
        for mn, mx, od, ex in _NODE_SHAPES:
            for reserved in (None, 1.5):
                for age in (None, "3650d", "130d"):
                    for regions in (None, ["us-*", "europe-*", "eu*"]):
                        pool = Pool(gpu, int(count), mn, mx, od, ex, None, regions, age,
                                    reserved)
                        brute = brute_force_cheapest(pool, rows, today)
                        try:
                            got = place(pool, rows, today)
                        except NoCandidate:
                            assert brute is None, (pool, brute)
                            empty += 1
                            continue
                        assert brute is not None, (pool, got["cloud"], got["region"])
                        where = (got["cloud"], got["region"], got["instance_type"])
                        want = (brute["cloud"], brute["region"], brute["instance_type"])
                        assert where == want, (pool, where, want)
                        assert abs(got["monthly_usd"] - brute["monthly_usd"]) <= 1e-9 * max(
                            1.0, abs(brute["monthly_usd"])), (pool, got["monthly_usd"], brute)
                        assert got["matched"] == brute["matched"], (pool, got["matched"], brute)
                        assert abs(sum(l["monthly_usd"] for l in got["lines"])
                                   - got["monthly_usd"]) <= 1e-6, pool
                        compared += 1
    # and the same on the whole file for a few pools
    for pool in (Pool("H100", 8, 1, 4, 1, 3), Pool("L4", 1, 0, 6, 0, 4, regions=["us-*"]),
                 Pool("A100-80GB", 8, 1, 3, 1, 2, max_price_age="3650d",
                      reserved_usd_per_gpu_hour=1.0)):
        got, brute = place(pool, all_rows, today), brute_force_cheapest(pool, all_rows, today)
        assert ((got["cloud"], got["region"], got["instance_type"], got["matched"])
                == (brute["cloud"], brute["region"], brute["instance_type"],
                    brute["matched"])), (pool, got, brute)
        compared += 1
    # hysteresis: the second candidate preferred stays first only below the threshold
    base = Pool("H100", 8, 1, 4, 1, 2)
    ranked = place(base, all_rows, today)["candidates"]
    second = {k: ranked[1][k] for k in ("cloud", "region", "instance_type")}
    need = (ranked[1]["monthly_usd"] - ranked[0]["monthly_usd"]) / ranked[1]["monthly_usd"] * 100
    for threshold, stays in ((0.0, False), (need / 2, False), (need, False),
                             (need * 1.01, True), (99.9, True)):
        got = place(Pool("H100", 8, 1, 4, 1, 2, prefer=second, min_saving_percent=threshold),
                    all_rows, today)
        first = {k: got["candidates"][0][k] for k in ("cloud", "region", "instance_type")}
        assert (first == second) == stays and got["kept_preferred"] == stays, (threshold, got)
        assert abs(got["saving_percent"] - need) < 1e-9, (got["saving_percent"], need)
        assert sorted(map(str, got["candidates"])) == sorted(map(str, ranked))
        compared += 1
    if verbose:
        print(f"self-check: place() == brute_force_cheapest() on {compared} pools "
              f"({empty} more with no candidate in both), today {today}")
    return compared


def _summary(name: str, pool: Pool, rows: list[dict], today: dt.date) -> str:
    try:
        got = place(pool, rows, today)
    except NoCandidate as e:
        return f"{name}: no candidate ({e})"
    spot = spot_cheapest(pool, rows, today)
    lines = ", ".join(f"{l['nodes']} {l['kind']} @ {l['usd_per_node_hour']:.4f}"
                      + (" (at on-demand)" if l["spot_priced_at_on_demand"] else "")
                      for l in got["lines"])
    out = (f"{name}: {got['cloud']} {got['region']} {got['instance_type']} "
           f"${got['monthly_usd']:,.2f}/month [{lines}] of {got['matched']}")
    if spot and spot[:2] != (got["cloud"], got["region"]):
        out += f"; spot-cheapest {spot[0]} {spot[1]} {spot[2]} @ {spot[3]:.4f}"
    if pool.prefer:
        out += f"; kept_preferred={got['kept_preferred']} saving={got['saving_percent']:.2f}%"
    return out


if __name__ == "__main__":
    ROWS = load_rows()
    TODAY = today_utc()
    for name, pool in [
        ("8x H100, 1..4 nodes, floor 1, expected 3", Pool("H100", 8, 1, 4, 1, 3)),
        ("8x H100, 1..4 nodes, floor 1, expected 2", Pool("H100", 8, 1, 4, 1, 2)),
        ("8x H100 spot only, expected 3", Pool("H100", 8, 0, 4, 0, 3)),
        ("8x H100 all on demand", Pool("H100", 8, 2, 2, 2, 2)),
        ("8x H100 floor 2 reserved $2.5/GPU-h, expected 4",
         Pool("H100", 8, 2, 6, 2, 4, reserved_usd_per_gpu_hour=2.5)),
        ("8x H100 floor 1 expected 3, dated prices only",
         Pool("H100", 8, 1, 4, 1, 3, max_price_age="3650d")),
        ("1x L4 floor 1 expected 4, us-*", Pool("L4", 1, 1, 6, 1, 4, regions=["us-*"])),
    ]:
        print(_summary(name, pool, ROWS, TODAY))
    self_check(ROWS, TODAY)
