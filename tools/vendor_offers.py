#!/usr/bin/env python3
"""Vendor the normalized GPU offer table into crates/core/data/offers.csv.

The embedded catalog (gpu_core::catalog::Catalog::embedded) compiles that file into the
binary with include_str!. This script reads the shared table (13 columns, one `as_of` per
row), validates it, and writes the vendored copy with each price's own provenance: the
row's `as_of` column is replaced by `on_demand_source`, `on_demand_as_of`, `spot_source`
and `spot_as_of` (OUT_COLUMNS), derived from the row's `source` text (see
`price_origins`). A price whose source says "undated", or a row without `as_of`, stays
undated. Python 3 standard library only.

Run from anywhere (paths are relative to the repository root, the parent of tools/):

    python3 tools/vendor_offers.py                 # validate ../shared/data/gpu-offers/offers.csv, copy it
    python3 tools/vendor_offers.py --check         # validate, and fail if the vendored copy differs
    python3 tools/vendor_offers.py --src FILE      # vendor another file in the same format
    python3 tools/vendor_offers.py --allow-shrink  # accept a source with >10% fewer rows

Checks: the exact header; 13 fields per row; every price has a source; a known cloud; non-empty region and
instance_type; numeric columns are finite numbers (gpu_count, gpu_memory_gib, vcpus,
memory_gib above 0; prices 0 or more); as_of is empty or YYYY-MM-DD; (cloud, region, zone,
instance_type) is unique; every gpu_model is a canonical name in
crates/core/src/gpu/registry.rs. After copying, update crates/core/data/SOURCE.md (row
counts, source commits) and NOTICE if the upstream sources changed, then run
`cargo test -p gpu-core` (its catalog tests recount the rows independently).
"""

import argparse
import collections
import csv
import hashlib
import io
import math
import os
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SRC = REPO.parent / "shared" / "data" / "gpu-offers" / "offers.csv"
DEST = REPO / "crates" / "core" / "data" / "offers.csv"
REGISTRY = REPO / "crates" / "core" / "src" / "gpu" / "registry.rs"

COLUMNS = [
    "cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gib",
    "vcpus", "memory_gib", "on_demand_usd_per_hour", "spot_usd_per_hour", "source", "as_of",
]
CLOUDS = {"aws", "azure", "gcp", "cudo", "nebius", "hyperbolic"}
POSITIVE = ["gpu_count", "gpu_memory_gib", "vcpus", "memory_gib"]
PRICES = ["on_demand_usd_per_hour", "spot_usd_per_hour"]
# The vendored file: the shared table's columns without `as_of`, plus each price's origin.
OUT_COLUMNS = COLUMNS[:-1] + ["on_demand_source", "on_demand_as_of", "spot_source", "spot_as_of"]
# `source` segments that describe specs or availability, never a price.
NOT_A_PRICE = ("availability:", "specs:", "gpu:", "vcpu/mem:")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def registry_models():
    """Canonical GPU names from the Rust registry (`name: "..."` lines)."""
    text = REGISTRY.read_text(encoding="utf-8")
    return set(re.findall(r'^\s*name: "([^"]+)",', text, flags=re.M))


def validate(data: bytes):
    """Returns (rows, errors, warnings) for the CSV bytes."""
    errors, warnings = [], []
    text = data.decode("utf-8")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header != COLUMNS:
        return [], [f"header is {header!r}, expected {COLUMNS!r}"], []
    models = registry_models()
    if not models:
        errors.append(f"no model names found in {REGISTRY}")
    rows, keys = [], set()
    for line, rec in enumerate(reader, start=2):
        if len(rec) != len(COLUMNS):
            errors.append(f"line {line}: {len(rec)} fields, expected {len(COLUMNS)}")
            continue
        row = dict(zip(COLUMNS, rec))
        if row["cloud"] not in CLOUDS:
            errors.append(f"line {line}: unknown cloud {row['cloud']!r}")
        for col in ("region", "instance_type", "gpu_model"):
            if not row[col].strip():
                errors.append(f"line {line}: empty {col}")
        if models and row["gpu_model"] not in models:
            errors.append(f"line {line}: gpu_model {row['gpu_model']!r} is not in the registry")
        for col in POSITIVE + PRICES:
            v = row[col].strip()
            if not v:
                continue
            try:
                x = float(v)
            except ValueError:
                errors.append(f"line {line}: {col} = {v!r} is not a number")
                continue
            low_ok = x > 0 if col in POSITIVE else x >= 0
            if not math.isfinite(x) or not low_ok:
                errors.append(f"line {line}: {col} = {v!r} out of range")
        if row["as_of"] and not DATE.match(row["as_of"]):
            errors.append(f"line {line}: as_of = {row['as_of']!r} is not YYYY-MM-DD")
        try:
            price_origins(row)
        except ValueError as e:
            errors.append(f"line {line}: {e}")
        key = (row["cloud"], row["region"], row["zone"], row["instance_type"])
        if key in keys:
            errors.append(f"line {line}: duplicate offer {key}")
        keys.add(key)
        od, spot = row["on_demand_usd_per_hour"], row["spot_usd_per_hour"]
        try:
            if od and spot and float(spot) >= float(od):
                warnings.append(f"line {line}: spot {spot} >= on-demand {od}")
        except ValueError:
            pass
        rows.append(row)
    return rows, errors, warnings


def price_origins(row):
    """((on-demand source, as-of), (spot source, as-of)) of one shared-table row.

    The shared `source` is `; `-separated. A segment `on-demand: X` or `spot: Y` names
    that price's source; otherwise the first segment that is not about specs or
    availability is the source of every price the row has (one file priced both). A
    price is dated with the row's `as_of` unless its source says `undated`. Returns
    (None, None) for a price the row does not have; raises ValueError for a price
    without a source.
    """
    segments = [s.strip() for s in row["source"].split("; ") if s.strip()]
    named = {}
    primary = None
    for seg in segments:
        for kind, prefix in (("on_demand", "on-demand: "), ("spot", "spot: ")):
            if seg.startswith(prefix):
                named[kind] = seg[len(prefix):]
                break
        else:
            if primary is None and not seg.startswith(NOT_A_PRICE):
                primary = seg
    out = []
    for kind, column in (("on_demand", "on_demand_usd_per_hour"), ("spot", "spot_usd_per_hour")):
        if not row[column]:
            out.append((None, None))
            continue
        src = named.get(kind, primary)
        if not src:
            raise ValueError(f"{column} has no source in {row['source']!r}")
        dated = row["as_of"] and "undated" not in src
        out.append((src, row["as_of"] if dated else None))
    return tuple(out)


def vendored(rows):
    """The vendored CSV bytes: OUT_COLUMNS, one line per row, `\n` line ends."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(OUT_COLUMNS)
    for r in rows:
        (od_src, od_date), (sp_src, sp_date) = price_origins(r)
        w.writerow([r[c] for c in COLUMNS[:-1]] + [od_src or "", od_date or "", sp_src or "", sp_date or ""])
    return buf.getvalue().encode("utf-8")


def dating(rows):
    """Per-cloud (dated, undated) price counts, for the summary."""
    per = collections.OrderedDict((c, [0, 0]) for c in sorted(CLOUDS))
    for r in rows:
        for src, date in price_origins(r):
            if src:
                per[r["cloud"]][0 if date else 1] += 1
    return per


def summary(rows):
    """Per-cloud (rows, on-demand priced, spot priced) lines."""
    per = collections.OrderedDict((c, [0, 0, 0]) for c in sorted(CLOUDS))
    for r in rows:
        c = per[r["cloud"]]
        c[0] += 1
        c[1] += bool(r["on_demand_usd_per_hour"])
        c[2] += bool(r["spot_usd_per_hour"])
    dates = dating(rows)
    out = [f"{'cloud':<11}{'rows':>6}{'on-demand':>11}{'spot':>6}{'dated prices':>14}{'undated':>9}"]
    for cloud, (n, od, sp) in per.items():
        if n:
            d, u = dates[cloud]
            out.append(f"{cloud:<11}{n:>6}{od:>11}{sp:>6}{d:>14}{u:>9}")
    out.append(f"{'total':<11}{len(rows):>6}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC, help=f"source CSV (default {DEFAULT_SRC})")
    ap.add_argument("--check", action="store_true", help="do not write; fail if the vendored copy differs from what the source gives")
    ap.add_argument("--allow-shrink", action="store_true", help="accept >10%% fewer rows than the vendored copy")
    args = ap.parse_args()

    data = args.src.read_bytes()
    rows, errors, warnings = validate(data)
    for w in warnings[:10]:
        print(f"warning: {w}", file=sys.stderr)
    if len(warnings) > 10:
        print(f"warning: ... {len(warnings) - 10} more", file=sys.stderr)
    if errors:
        for e in errors[:50]:
            print(f"error: {e}", file=sys.stderr)
        print(f"{args.src}: {len(errors)} error(s); vendored file left unchanged", file=sys.stderr)
        return 1
    if not rows:
        print(f"{args.src}: no rows", file=sys.stderr)
        return 1
    print(f"{args.src}: {len(rows)} rows, sha256 {hashlib.sha256(data).hexdigest()}")
    print(summary(rows))

    data = vendored(rows)
    old = DEST.read_bytes() if DEST.exists() else None
    if args.check:
        if old != data:
            print(f"{DEST} differs from what {args.src} gives: run without --check to update it", file=sys.stderr)
            return 1
        print(f"{DEST} is up to date")
        return 0
    if old is not None and not args.allow_shrink:
        old_rows = max(old.count(b"\n") - 1, 0)
        if len(rows) < old_rows * 0.9:
            print(f"source has {len(rows)} rows, vendored copy {old_rows}: refusing (--allow-shrink)", file=sys.stderr)
            return 1
    if old == data:
        print(f"{DEST} already up to date")
        return 0
    DEST.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=DEST.parent, prefix=".offers.", suffix=".csv")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, DEST)
    print(f"wrote {DEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
