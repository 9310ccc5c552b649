"""Prints the `make reliability` table from the rows the tests recorded (see
`reliability.py`) and exits 1 if a row missed its goal or a required row is missing.

    python acceptance/reliability_report.py            # every known row must be there
    python acceptance/reliability_report.py --present  # only the rows that were recorded
"""

from __future__ import annotations

import json
import sys

from reliability import out_dir

# The rows of the report, in order; the tests that record each.
ROWS = [
    ("bad input configs rejected", "tests/protocol/test_bad_input.py"),
    ("requests reaching the emulators from bad input", "tests/protocol/test_bad_input.py"),
    ("applies under faults converged", "tests/node_pool/test_faults.py"),
    ("AKS applies under throttling and slow operations converged",
     "tests/node_pool/test_node_pool_aks_gke.py"),
    ("GKE applies under throttling and slow operations converged",
     "tests/node_pool/test_node_pool_aks_gke.py"),
    ("20 pools on one AKS cluster converged", "tests/node_pool/test_many_pools_aks_gke.py"),
    ("20 pools on one GKE cluster converged", "tests/node_pool/test_many_pools_aks_gke.py"),
    ("Failover: a stockout at the first place lands the pool on the next",
     "tests/node_pool/test_failover.py"),
    ("Failover: every place out leaves nothing anywhere", "tests/node_pool/test_failover.py"),
    ("Ctrl-C (StopProvider) during a wait, then converged", "tests/node_pool/test_interrupt.py"),
    ("SIGKILL of the provider mid-apply, then converged", "tests/node_pool/test_interrupt.py"),
    ("secret occurrences in logs, state, plan and errors", "tests/protocol/test_secrets.py"),
    ("plugin connections refused without Terraform's client cert",
     "tests/protocol/test_plugin_mtls.py"),
    ("fuzz executions", "make fuzz-short"),
    ("fuzz crashes", "make fuzz-short"),
]


def load() -> dict[str, dict]:
    rows = {}
    d = out_dir()
    for f in sorted(d.glob("*.json")) if d.is_dir() else []:
        r = json.loads(f.read_text())
        rows[r["row"]] = r
    return rows


def figure(r: dict) -> str:
    v, t = r["value"], r["total"]
    return f"{v:,} / {t:,}" if t is not None else f"{v:,}"


def main(argv: list[str]) -> int:
    present_only = "--present" in argv
    rows = load()
    known = [name for name, _ in ROWS]
    order = known + sorted(set(rows) - set(known))
    width = max(len(n) for n in order)
    gw = max([4] + [len(r["goal"]) for r in rows.values()])
    print(f"{'check':<{width}}  {'result':>15}  {'goal':>{gw}}  ok   detail")
    print(f"{'-' * width}  {'-' * 15}  {'-' * gw}  ---  ------")
    bad = 0
    for name in order:
        r = rows.get(name)
        if r is None:
            if present_only:
                continue
            source = dict(ROWS).get(name, "?")
            print(f"{name:<{width}}  {'missing':>15}  {'':>{gw}}  NO   not recorded ({source})")
            bad += 1
            continue
        ok = "yes" if r["ok"] else "NO"
        bad += 0 if r["ok"] else 1
        print(f"{name:<{width}}  {figure(r):>15}  {r['goal']:>{gw}}  {ok:<3}  {r['detail']}")
    print(f"\n{len(order) - bad if not present_only else len(rows) - bad} rows at goal, "
          f"{bad} not (rows from {out_dir()})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
