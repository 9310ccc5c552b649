"""An independent reference for the offer query of `gpu_spot_offer`, `gpu_offers` and the
`offers` CLI: plain iteration over `crates/core/data/offers.csv` with the csv module, no
code shared with the Rust side. It follows the documented semantics (ARCHITECTURE.md,
docs/data-sources/*.md, crates/core/data/SOURCE.md):

- an item is (row, spot?) with a price for that capacity and a known GPU count > 0;
  price_per_gpu_hour = price / gpu_count;
- filters: GPU model (canonical names only: no alias resolution here), exact GPU count
  (within 1e-9) or a minimum, clouds, region globs (case-insensitive, `*` crosses any
  character), capacity (`spot`, `on_demand`, `either`), max price per GPU-hour (inclusive);
- on-demand prices are regional: one on-demand item per (cloud, region, instance_type),
  the best ranked; spot items are per zone and all stay;
- ranking: price per GPU-hour, then price per hour, then cloud (in the provider's cloud
  order: aws, azure, gcp, cudo, nebius, hyperbolic), region, zone (none first), instance
  type, on-demand before spot;
- a price named in `crates/core/data/stale_prices.csv` (cloud, region, type, price kind) that
  still comes from the source the list judged (undated, `skypilot-catalog v6`) is stale: left
  out unless the query includes stale prices, and then shown with its `stale_reason`.

The memory-per-GPU filter is not reproduced (it mixes reported and nominal VRAM); tests
that compare against this module do not use it.
"""

from __future__ import annotations

import csv
import datetime
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OFFERS_CSV = REPO / "crates" / "core" / "data" / "offers.csv"
STALE_CSV = REPO / "crates" / "core" / "data" / "stale_prices.csv"

# The clouds in the order the ranking breaks ties by (gpu_core::offer::Cloud's order).
CLOUD_ORDER = ["aws", "azure", "gcp", "cudo", "nebius", "hyperbolic"]
COUNT_EPSILON = 1e-9

# The fields of one offer, as the data sources and the CLI's JSON name them.
OFFER_FIELDS = ["cloud", "region", "zone", "instance_type", "gpu", "gpu_count",
                "gpu_memory_gib", "vcpus", "memory_gib", "spot", "price_per_hour",
                "price_per_gpu_hour", "source", "as_of", "price_age_days", "stale_reason",
                # Read with `live = true` only: null in every offline answer.
                "availability", "availability_source", "availability_as_of"]


def age_days(as_of: str | None, today: datetime.date | None = None) -> int | None:
    """Whole days from `as_of` (YYYY-MM-DD) to today (UTC); None when undated."""
    if not as_of:
        return None
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    return (today - datetime.date.fromisoformat(as_of)).days


def stale_reasons(path: Path = STALE_CSV) -> dict:
    """(cloud, region, instance_type, 'on_demand' | 'spot') -> reason."""
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["cloud"], r["region"], r["instance_type"], r["price"]): r["reason"]
                for r in csv.DictReader(f)}


def stale_reason(row: dict, kind: str, reasons: dict) -> str | None:
    """Why the row's `kind` price is stale, or None."""
    why = reasons.get((row["cloud"], row["region"], row["instance_type"], kind))
    judged = row[f"{kind}_source"].startswith("skypilot-catalog v6") and not row[f"{kind}_as_of"]
    return why if why and judged else None


def _num(text: str) -> float | None:
    return float(text) if text != "" else None


def load_rows(path: Path = OFFERS_CSV) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@dataclass
class Query:
    gpus: list[str] = field(default_factory=list)
    gpu_count: float | None = None
    min_gpu_count: float | None = None
    clouds: list[str] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    capacity: str = "either"            # spot | on_demand | either
    max_price_per_gpu_hour: float | None = None
    include_stale: bool = False


def _region_ok(region: str, globs: list[str]) -> bool:
    if not globs:
        return True
    return any(fnmatch.fnmatchcase(region.lower(), g.lower()) for g in globs)


def _count_ok(count: float | None, q: Query) -> bool:
    if count is None:
        return False
    if q.gpu_count is not None:
        return abs(count - q.gpu_count) < COUNT_EPSILON
    if q.min_gpu_count is not None:
        return count >= q.min_gpu_count - COUNT_EPSILON
    return count > 0


def rank_key(item: dict):
    zone = item["zone"]
    return (item["price_per_gpu_hour"], item["price_per_hour"],
            CLOUD_ORDER.index(item["cloud"]), item["region"],
            (zone is not None, zone or ""), item["instance_type"], item["spot"])


def run(q: Query, rows: list[dict] | None = None) -> list[dict]:
    """Every matching item, ranked, as dicts with OFFER_FIELDS."""
    rows = load_rows() if rows is None else rows
    reasons = stale_reasons()
    items = []
    for r in rows:
        if q.gpus and r["gpu_model"] not in q.gpus:
            continue
        count = _num(r["gpu_count"])
        if not _count_ok(count, q) or count <= 0:
            continue
        if q.clouds and r["cloud"] not in q.clouds:
            continue
        if not _region_ok(r["region"], q.regions):
            continue
        for spot, column, kind in ((False, "on_demand_usd_per_hour", "on_demand"),
                                   (True, "spot_usd_per_hour", "spot")):
            if q.capacity == "spot" and not spot or q.capacity == "on_demand" and spot:
                continue
            price = _num(r[column])
            if price is None:
                continue
            why = stale_reason(r, kind, reasons)
            if why and not q.include_stale:
                continue
            per_gpu = price / count
            if q.max_price_per_gpu_hour is not None and per_gpu > q.max_price_per_gpu_hour:
                continue
            items.append({
                "cloud": r["cloud"],
                "region": r["region"],
                "zone": r["zone"] or None,
                "instance_type": r["instance_type"],
                "gpu": r["gpu_model"],
                "gpu_count": count,
                "gpu_memory_gib": _num(r["gpu_memory_gib"]),
                "vcpus": _num(r["vcpus"]),
                "memory_gib": _num(r["memory_gib"]),
                "spot": spot,
                "price_per_hour": price,
                "price_per_gpu_hour": per_gpu,
                # Each price carries its own provenance (the row's `source` describes the
                # whole row; a price without its own source falls back to it).
                "source": r[f"{kind}_source"] or r["source"],
                "as_of": r[f"{kind}_as_of"] or None,
                "price_age_days": age_days(r[f"{kind}_as_of"] or None),
                "stale_reason": why,
                "availability": None, "availability_source": None,
                "availability_as_of": None,
            })
    items.sort(key=rank_key)
    seen = set()
    out = []
    for it in items:
        if not it["spot"]:
            key = (it["cloud"], it["region"], it["instance_type"])
            if key in seen:
                continue
            seen.add(key)
        out.append(it)
    return out
