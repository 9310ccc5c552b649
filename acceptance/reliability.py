"""Figures for `make reliability`: tests record one row each, the report prints them.

A test calls `record(...)` once it has measured its row; each row is one JSON file in
`$RELIABILITY_OUT` (default `acceptance/.reliability`, git-ignored). `report.py`-style
printing lives in `reliability_report.py`. Recording never fails a test: the assertions
that make a row's goal binding are in the tests themselves.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def out_dir() -> Path:
    """Where rows are written."""
    return Path(os.environ.get("RELIABILITY_OUT", ROOT / "acceptance" / ".reliability"))


def record(row: str, value: int | float, total: int | float | None, goal: str, ok: bool,
           detail: str = "") -> None:
    """Writes one row: `value` of `total` (or a bare figure when `total` is None), the goal
    in words (`all`, `0`, ...), whether it was met, and a short detail."""
    d = out_dir()
    d.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", row.lower()).strip("-")
    (d / f"{slug}.json").write_text(json.dumps({
        "row": row, "value": value, "total": total, "goal": goal, "ok": bool(ok),
        "detail": detail,
    }, indent=1) + "\n")
