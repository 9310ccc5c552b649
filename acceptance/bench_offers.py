#!/usr/bin/env python3
"""Offer query figures: ours against the Python library gpuhunt, over the same rows.
Prints tables; asserts nothing (`make bench`).

For each query (8x H100 spot; L4 >= 1 GPU, spot or on-demand; A100-80GB >= 4 GPUs
on-demand; all clouds):

  - ours in process: `cargo bench -p gpu-core --no-default-features --bench query` (crates/core/benches/query.rs,
    release profile), median and p95 of `gpu_core::query::run` over the embedded catalog;
  - ours end to end: a fresh `terraform-provider-gpu offers ... --format json` process,
    median of BENCH_CLI_RUNS (20);
  - gpuhunt (acceptance/bench-requirements.txt) loaded with crates/core/data/offers.csv as
    its offline catalog: every row's price becomes one gpuhunt item (spot and on-demand
    separately), served to `gpuhunt.Catalog.load()` as `<provider>/<version>/catalog.zip`
    holding `<provider>.csv` through GPUHUNT_CATALOG_URL=file://...; timed in process
    (median of BENCH_GPUHUNT_N (100) `Catalog.query` calls, plus the min over the result of
    price per GPU-hour, since gpuhunt ranks by price per hour) and as a fresh `python -c`
    process (import, load, query; median of BENCH_CLI_RUNS).

Both must give the same cheapest price per GPU-hour; a mismatch is flagged. Rows gpuhunt
cannot hold are left out of its catalog (and the queries exclude them on our side too):
fractional GPU counts (gpuhunt's gpu_count is an int; the queries ask for >= 1 GPU), rows
without a GPU count or a price. gpuhunt has no cudo or hyperbolic provider: those rows are
loaded under two of its offline provider names (see PROVIDER_NAMES) so that "all clouds"
means the same rows.

Environment: PROVIDER_BIN / CARGO_TARGET_DIR as for the test suite; BENCH_PROVIDER_BIN
(default: the release binary when it exists, else the debug one); CARGO (cargo);
BENCH_SKIP_CARGO=1 to skip the cargo bench; BENCH_QUERY_MS (1000) per Rust query.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from conftest import provider_bin_path  # noqa: E402

OFFERS_CSV = REPO / "crates" / "core" / "data" / "offers.csv"
CLI_RUNS = int(os.environ.get("BENCH_CLI_RUNS", "20"))
GPUHUNT_N = int(os.environ.get("BENCH_GPUHUNT_N", "100"))

# Our clouds -> gpuhunt provider names (gpuhunt has no cudo or hyperbolic provider; their
# rows go under two offline providers of gpuhunt's that this catalog otherwise leaves empty).
PROVIDER_NAMES = {"aws": "aws", "azure": "azure", "gcp": "gcp", "nebius": "nebius",
                  "cudo": "runpod", "hyperbolic": "lambdalabs"}

# name (as crates/core/benches/query.rs prints it), CLI flags, gpuhunt.Catalog.query kwargs
QUERIES = [
    ("h100x8_spot", ["--gpu", "H100", "--count", "8", "--spot"],
     dict(gpu_name="H100", min_gpu_count=8, max_gpu_count=8, spot=True)),
    ("l4_either", ["--gpu", "L4", "--min-count", "1"],
     dict(gpu_name="L4", min_gpu_count=1)),
    ("a100_80gb_min4_on_demand", ["--gpu", "A100-80GB", "--min-count", "4", "--on-demand"],
     dict(gpu_name="A100-80GB", min_gpu_count=4, spot=False)),
]


# --- ours -----------------------------------------------------------------------------

def cargo_bench() -> tuple[str, dict[str, dict]]:
    """(catalog line, {query: {median_us, p95_us, n, matched, best}}) from the Rust bench."""
    if os.environ.get("BENCH_SKIP_CARGO"):
        return "cargo bench skipped (BENCH_SKIP_CARGO)", {}
    cargo = os.environ.get("CARGO", "cargo")
    print(f"bench: {cargo} bench -p gpu-core --bench query (release build; may take a while)",
          file=sys.stderr, flush=True)
    proc = subprocess.run([cargo, "bench", "-p", "gpu-core", "--no-default-features", "--bench", "query"], cwd=REPO,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr[-4000:], file=sys.stderr)
        return f"cargo bench failed (exit {proc.returncode})", {}
    catalog_line, out = "", {}
    pat = re.compile(r"^query (\S+): median ([\d.]+) us, p95 ([\d.]+) us \(n=(\d+)\); "
                     r"matched (\d+), best (\S+) USD/GPU-hour")
    for line in proc.stdout.splitlines():
        if line.startswith("catalog:"):
            catalog_line = line
        m = pat.match(line)
        if m:
            out[m[1]] = dict(median_us=float(m[2]), p95_us=float(m[3]), n=int(m[4]),
                             matched=int(m[5]),
                             best=None if m[6] == "none" else float(m[6]))
    return catalog_line, out


def provider_binary() -> tuple[Path, str]:
    if os.environ.get("BENCH_PROVIDER_BIN"):
        return Path(os.environ["BENCH_PROVIDER_BIN"]), "BENCH_PROVIDER_BIN"
    debug = provider_bin_path()
    release = debug.parent.parent / "release" / debug.name
    if release.is_file():
        return release, "release"
    return debug, "debug"


def cli_runs(binary: Path, flags: list[str]) -> tuple[float, float | None]:
    """(median ms of a fresh `offers` process, its cheapest price per GPU-hour)."""
    times, best = [], None
    for _ in range(CLI_RUNS):
        t0 = time.perf_counter()
        proc = subprocess.run([str(binary), "offers", *flags, "--format", "json"],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        times.append((time.perf_counter() - t0) * 1000)
        if proc.returncode == 0:
            offers = json.loads(proc.stdout)
            best = offers[0]["price_per_gpu_hour"] if offers else None
        else:
            print(f"bench: offers {' '.join(flags)} failed: {proc.stderr}", file=sys.stderr)
    return statistics.median(times), best


# --- gpuhunt --------------------------------------------------------------------------

GPUHUNT_FIELDS = ["instance_name", "location", "price", "cpu", "memory", "gpu_count",
                  "gpu_name", "gpu_memory", "spot", "disk_size", "gpu_vendor", "flags",
                  "cpu_arch", "provider_data"]  # gpuhunt's storage.CATALOG_V2_FIELDS


def gpuhunt_rows() -> tuple[dict[str, list[dict]], dict[str, int]]:
    """offers.csv as gpuhunt catalog rows per provider, and counts of what was left out."""
    per_provider: dict[str, list[dict]] = {p: [] for p in PROVIDER_NAMES.values()}
    skipped = {"no GPU count": 0, "fractional GPU count": 0, "no price": 0}
    with open(OFFERS_CSV, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            count = r["gpu_count"]
            if not count:
                skipped["no GPU count"] += 1
                continue
            if float(count) != int(float(count)) or float(count) < 1:
                skipped["fractional GPU count"] += 1
                continue
            prices = [(False, r["on_demand_usd_per_hour"]), (True, r["spot_usd_per_hour"])]
            if not any(p for _, p in prices):
                skipped["no price"] += 1
                continue
            model = r["gpu_model"]
            for spot, price in prices:
                if not price:
                    continue
                per_provider[PROVIDER_NAMES[r["cloud"]]].append({
                    "instance_name": r["instance_type"],
                    "location": r["zone"] or r["region"],
                    "price": price,
                    "cpu": str(int(float(r["vcpus"]))) if r["vcpus"] else "0",
                    "memory": r["memory_gib"] or "0",
                    "gpu_count": str(int(float(count))),
                    "gpu_name": model,
                    "gpu_memory": r["gpu_memory_gib"],
                    "spot": str(spot),
                    "disk_size": "",
                    "gpu_vendor": "amd" if model.startswith(("MI", "Radeon")) else "nvidia",
                    "flags": "",
                    "cpu_arch": "arm" if model == "T4G" else "x86",
                    "provider_data": "{}",
                })
    return per_provider, skipped


def write_gpuhunt_catalog(root: Path) -> tuple[int, dict[str, int]]:
    """`<root>/<provider>/version` and `<root>/<provider>/<version>/catalog.zip` for every
    offline provider gpuhunt loads (empty ones for providers we have no rows for)."""
    import gpuhunt._internal.catalog as gcat  # the list of providers Catalog.load() fetches

    rows, skipped = gpuhunt_rows()
    total = 0
    for provider in gcat.OFFLINE_PROVIDERS:
        items = rows.get(provider, [])
        total += len(items)
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=GPUHUNT_FIELDS)
        w.writeheader()
        w.writerows(items)
        d = root / provider / "v1"
        d.mkdir(parents=True)
        (root / provider / "version").write_text("v1\n")
        with zipfile.ZipFile(d / "catalog.zip", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{provider}.csv", buf.getvalue())
    return total, skipped


def gpuhunt_best(items) -> float | None:
    return min((i.price / i.gpu_count for i in items), default=None)


GPUHUNT_SNIPPET = """
import gpuhunt
c = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
c.load()
items = c.query(**{kwargs!r})
print(min((i.price / i.gpu_count for i in items), default=None))
"""


def gpuhunt_in_process(kwargs: dict) -> tuple[float, float | None, int]:
    import gpuhunt

    c = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    c.load()
    items = c.query(**kwargs)  # warm up
    times = []
    for _ in range(GPUHUNT_N):
        t0 = time.perf_counter()
        best = gpuhunt_best(c.query(**kwargs))
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times), best, len(items)


def gpuhunt_process(kwargs: dict, env: dict) -> float:
    times = []
    for _ in range(CLI_RUNS):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", GPUHUNT_SNIPPET.format(kwargs=kwargs)],
                              env=env, capture_output=True, text=True)
        times.append((time.perf_counter() - t0) * 1000)
        if proc.returncode != 0:
            print(f"bench: gpuhunt process failed: {proc.stderr[-2000:]}", file=sys.stderr)
    return statistics.median(times)


# --- report ---------------------------------------------------------------------------

def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    return "\n".join(lines)


def fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.3f}"


def main() -> int:
    try:
        import gpuhunt
        gpuhunt_version = getattr(gpuhunt, "__version__", None)
        if gpuhunt_version is None:
            from importlib.metadata import version
            gpuhunt_version = version("gpuhunt")
    except ImportError:
        print("bench: gpuhunt not installed (pip install -r acceptance/bench-requirements.txt)",
              file=sys.stderr)
        return 1

    catalog_line, rust = cargo_bench()
    binary, kind = provider_binary()
    if not binary.is_file():
        print(f"bench: no provider binary at {binary} (run `make build`)", file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory(prefix="tfgpu-gpuhunt-") as d:
        root = Path(d)
        items, skipped = write_gpuhunt_catalog(root)
        os.environ["GPUHUNT_CATALOG_URL"] = root.as_uri()
        env = dict(os.environ)
        rows, checks = [], []
        for name, flags, kwargs in QUERIES:
            cli_ms, cli_best = cli_runs(binary, flags)
            gh_us, gh_best, gh_items = gpuhunt_in_process(kwargs)
            gh_ms = gpuhunt_process(kwargs, env)
            r = rust.get(name, {})
            rows.append([name, fmt(r.get("median_us")), fmt(r.get("p95_us")), fmt(gh_us),
                         ratio(r.get("median_us"), gh_us), fmt(cli_ms), fmt(gh_ms),
                         ratio(cli_ms, gh_ms)])
            ours = r.get("best", cli_best)
            same = (ours is not None and gh_best is not None and abs(ours - gh_best) < 1e-9
                    and (cli_best is None or abs(cli_best - gh_best) < 1e-9))
            checks.append([name, fmt(ours, 6), fmt(cli_best, 6), fmt(gh_best, 6),
                           str(r.get("matched", "-")), str(gh_items),
                           "ok" if same else "MISMATCH"])

    print()
    print(f"== offer queries: ours vs gpuhunt {gpuhunt_version}, same rows "
          f"(crates/core/data/offers.csv)")
    print(f"   ours: {catalog_line or 'no cargo bench figures'}")
    print(f"   CLI: {binary} ({kind} build); gpuhunt: {items} items "
          f"(left out: {', '.join(f'{v} {k}' for k, v in skipped.items())})")
    print()
    print(table(["query", "ours us (median)", "ours us (p95)", "gpuhunt us", "ours/gpuhunt",
                 "ours CLI ms", "gpuhunt proc ms", "ours/gpuhunt"], rows))
    print()
    print("   in process: one query over the whole catalog (ours: gpu_core::query::run, "
          f"release; gpuhunt: Catalog.query + min price/GPU-hour, median of {GPUHUNT_N}).")
    print(f"   process: a fresh process answering one query, median of {CLI_RUNS} (ours: "
          "`offers --format json`; gpuhunt: `python -c` import + load + query).")
    print()
    print(table(["query", "ours best $/GPU-h", "CLI best", "gpuhunt best", "ours matched",
                 "gpuhunt items", "check"], checks))
    print("   (gpuhunt keeps one on-demand item per zone row; ours one per region, so counts "
          "differ while the cheapest must not)")
    if any(c[-1] != "ok" for c in checks):
        print("   MISMATCH: the cheapest price per GPU-hour differs (see above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
