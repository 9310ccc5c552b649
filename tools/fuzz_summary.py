#!/usr/bin/env python3
"""Summarise a short libFuzzer run (`make fuzz-short`) into two reliability rows.

    python3 tools/fuzz_summary.py --log-dir DIR [--seconds S] TARGET...

reads `DIR/<target>.log` (everything `cargo fuzz run <target> -- -print_final_stats=1`
printed) and `DIR/<target>.rc` (its exit code) for each target, prints one line per
target, and writes through `acceptance/reliability.py`:

- `fuzz executions`: inputs run over all targets; ok when > 0 and nothing crashed.
- `fuzz crashes`: crash/timeout/OOM inputs libFuzzer wrote (plus targets that failed
  without writing one); goal 0.

Executions come from libFuzzer's final `stat::number_of_executed_units: N`, else its
`#N DONE` line, else `Done N runs`, else the last `#N` progress line (a crashed run prints
no DONE). Exits 1 when something crashed or a target ran nothing, so CI fails. Python 3
standard library only.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "acceptance"))

import reliability  # noqa: E402  (acceptance/reliability.py, stdlib only)

REGRESSIONS = "crates/tfplugin/fuzz/regressions"


@dataclass
class Run:
    target: str
    rc: int | None
    executions: int = 0
    seconds: int | None = None
    coverage: int | None = None
    corpus: int | None = None
    artifacts: list[str] = field(default_factory=list)
    failed: bool = False  # non-zero exit or a libFuzzer error report

    @property
    def crashes(self) -> int:
        return len(self.artifacts) or (1 if self.failed else 0)


def _last_int(pattern: str, text: str, flags: int = 0) -> int | None:
    found = re.findall(pattern, text, flags)
    return int(found[-1]) if found else None


def parse(target: str, log: str, rc: int | None) -> Run:
    """What one target's run did, from its log and exit code."""
    run = Run(target, rc)
    run.executions = (
        _last_int(r"stat::number_of_executed_units:\s*(\d+)", log)
        or _last_int(r"^#(\d+)\s+DONE\b", log, re.M)
        or _last_int(r"^Done (\d+) runs", log, re.M)
        or max((int(n) for n in re.findall(r"^#(\d+)\s", log, re.M)), default=0)
    )
    run.seconds = _last_int(r"^Done \d+ runs in (\d+) second", log, re.M)
    run.coverage = _last_int(r"\bcov: (\d+)", log)
    run.corpus = _last_int(r"\bcorp: (\d+)", log)
    run.artifacts = re.findall(r"Test unit written to (\S+)", log)
    error = re.search(r"ERROR: libFuzzer|SUMMARY: libFuzzer|==\d+== ERROR", log)
    run.failed = bool(rc) or rc is None or bool(error)
    return run


def read_run(log_dir: Path, target: str) -> Run:
    log_path, rc_path = log_dir / f"{target}.log", log_dir / f"{target}.rc"
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    try:
        rc = int(rc_path.read_text().strip())
    except (OSError, ValueError):
        rc = None  # the run never finished writing its exit code
    return parse(target, log, rc)


def human(n: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log-dir", type=Path, required=True)
    ap.add_argument("--seconds", type=int, help="the -max_total_time each target had")
    ap.add_argument("targets", nargs="+")
    args = ap.parse_args(argv)

    runs = [read_run(args.log_dir, t) for t in args.targets]
    for r in runs:
        secs = r.seconds if r.seconds is not None else args.seconds
        rate = f", {human(r.executions // secs)}/s" if secs else ""
        print(f"{r.target}: {r.executions} executions in {secs} s{rate}, cov {r.coverage}, "
              f"corpus {r.corpus}, exit {r.rc}, crashes {r.crashes}")
        for a in r.artifacts:
            print(f"  crash input {a}\n  keep it as a regression test: "
                  f"cp {a} {REGRESSIONS}/{r.target}/  (then fix the decoder)")
        if r.failed and not r.artifacts:
            print(f"  {r.target} failed without writing an input: see "
                  f"{args.log_dir / (r.target + '.log')}")

    total = sum(r.executions for r in runs)
    crashes = sum(r.crashes for r in runs)
    idle = [r.target for r in runs if r.executions == 0]
    per_target = "; ".join(
        f"{r.target} {human(r.executions)} (cov {r.coverage}, corpus {r.corpus})" for r in runs)
    budget = f"{args.seconds} s per target, " if args.seconds else ""
    reliability.record(
        "fuzz executions", total, None, "> 0, no crash", total > 0 and not crashes and not idle,
        f"{budget}make fuzz-short (libFuzzer, cargo-fuzz --sanitizer none): {per_target}")
    where = "; ".join(f"{r.target}: {', '.join(r.artifacts) or 'failed, no input written'}"
                      for r in runs if r.crashes)
    reliability.record(
        "fuzz crashes", crashes, None, "0", crashes == 0,
        where or f"none in {human(total)} executions over {len(runs)} targets; crash inputs "
                 f"go to {REGRESSIONS}/<target>/ (run by cargo test)")
    print(f"fuzz: {total} executions over {len(runs)} targets, {crashes} crashes"
          + (f"; ran nothing: {', '.join(idle)}" if idle else ""))
    return 1 if crashes or idle else 0


if __name__ == "__main__":
    sys.exit(main())
