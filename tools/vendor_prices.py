#!/usr/bin/env python3
"""Vendor the price tables that sit beside the offer snapshot in crates/core/data/.

1. commitment_rates.csv: Google Cloud resource-based committed use prices (1 and 3 years) of
   GPU machine types, from ../shared/data/gcp-pricing/gpu-machines-<date>.csv (the extract of
   Cyclenerd's pricing.yml). Only (region, machine type) pairs that offers.csv lists for gcp
   are kept, so a commitment is never priced where the catalog does not offer the machine.
   A row per term that the source prices; an empty source cell gives no row.
2. stale_prices.csv: ../shared/data/gpu-offers/stale.csv, copied after validation: the AWS
   prices of offers.csv known (or suspected) to predate a price cut. The catalog marks
   them stale at load and rankings leave them out by default.

Python 3 standard library only. Run from anywhere:

    python3 tools/vendor_prices.py            # validate the sources, write both files
    python3 tools/vendor_prices.py --check    # validate, fail if a vendored file differs

Afterwards update crates/core/data/SOURCE.md and NOTICE if a source changed, and run
`cargo test -p gpu-core`.
"""

import argparse
import csv
import io
import math
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
DATA = REPO / "crates" / "core" / "data"
GCP_SRC = SHARED / "gcp-pricing" / "gpu-machines-2026-07-30.csv"
STALE_SRC = SHARED / "gpu-offers" / "stale.csv"
OFFERS = DATA / "offers.csv"
RATES = DATA / "commitment_rates.csv"
STALE = DATA / "stale_prices.csv"

GCP_COLUMNS = [
    "cloud", "region", "instance_type", "gpu_model", "gpu_count", "vcpus", "memory_gib",
    "on_demand_usd_per_hour", "spot_usd_per_hour", "cud_1y_usd_per_hour",
    "cud_3y_usd_per_hour", "as_of", "source",
]
RATE_COLUMNS = [
    "cloud", "region", "instance_type", "term", "billing", "usd_per_hour",
    "discount_vs_on_demand", "source", "as_of",
]
STALE_COLUMNS = ["cloud", "region", "instance_type", "price", "reason", "evidence"]
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def fail(message):
    print(f"vendor_prices: {message}", file=sys.stderr)
    sys.exit(1)


def read(path, columns):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != columns:
            fail(f"{path}: header {reader.fieldnames}, expected {columns}")
        return list(reader)


def offered_gcp_pairs():
    with open(OFFERS, newline="", encoding="utf-8") as f:
        return {(r["region"], r["instance_type"]) for r in csv.DictReader(f) if r["cloud"] == "gcp"}


def positive(value, where):
    try:
        x = float(value)
    except ValueError:
        fail(f"{where}: `{value}` is not a number")
    if not math.isfinite(x) or x <= 0:
        fail(f"{where}: `{value}` is not a positive price")
    return value


def commitment_rows():
    """The commitment_rates.csv rows the GCP source gives for the offered pairs."""
    offered = offered_gcp_pairs()
    seen = set()
    out = []
    for i, r in enumerate(read(GCP_SRC, GCP_COLUMNS), start=2):
        key = (r["region"], r["instance_type"])
        if r["cloud"] != "gcp" or not DATE.match(r["as_of"]) or key in seen:
            fail(f"{GCP_SRC}:{i}: not a unique dated gcp row")
        seen.add(key)
        if key not in offered:
            continue
        commit = r["source"].rsplit("@", 1)[-1]
        for term, column in (("1y", "cud_1y_usd_per_hour"), ("3y", "cud_3y_usd_per_hour")):
            if not r[column]:
                continue
            key_path = f"compute.instance.{r['instance_type']}.cost.{r['region']}.month_{term}"
            out.append({
                "cloud": "gcp",
                "region": r["region"],
                "instance_type": r["instance_type"],
                "term": term,
                "billing": "monthly",
                "usd_per_hour": positive(r[column], f"{GCP_SRC}:{i} {column}"),
                "discount_vs_on_demand": "",
                "source": f"Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml@{commit} "
                          f"generated {r['as_of']}: {key_path} / 730",
                "as_of": r["as_of"],
            })
    out.sort(key=lambda r: (r["cloud"], r["region"], r["instance_type"], r["term"], r["billing"]))
    return out


def stale_rows():
    """stale.csv's rows, validated: known clouds, price kinds, a reason on every row."""
    rows = read(STALE_SRC, STALE_COLUMNS)
    seen = set()
    for i, r in enumerate(rows, start=2):
        key = (r["cloud"], r["region"], r["instance_type"], r["price"])
        if r["cloud"] not in {"aws", "azure", "gcp"} or r["price"] not in {"on_demand", "spot"}:
            fail(f"{STALE_SRC}:{i}: unknown cloud or price kind {key}")
        if not r["reason"].strip() or key in seen:
            fail(f"{STALE_SRC}:{i}: no reason, or a repeated row {key}")
        seen.add(key)
    return rows


def render(columns, rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="do not write; fail if a vendored file differs")
    args = ap.parse_args()
    outputs = [
        (RATES, render(RATE_COLUMNS, commitment_rows())),
        (STALE, render(STALE_COLUMNS, stale_rows())),
    ]
    differ = []
    for path, text in outputs:
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        differ.append(path)
        if not args.check:
            path.write_text(text, encoding="utf-8")
    for path, text in outputs:
        state = "differs" if path in differ else "unchanged"
        if path in differ and not args.check:
            state = "written"
        print(f"{path.relative_to(REPO)}: {text.count(chr(10)) - 1} rows, {state}")
    if args.check and differ:
        fail("vendored files differ from the sources: run without --check")


if __name__ == "__main__":
    main()
