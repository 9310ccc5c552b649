"""acceptance/README.md's coverage table is current: it is exactly what
`coverage_table.py --write` makes from the test modules' docstrings, and it names every
`test_*.py` file under `tests/` and `fakes/`, no more and no less.

The first test runs the script's `check()` in process (the modules are parsed, never
imported) and fails with its unified diff; the second walks the directories itself, so a
file the script failed to find would show up too. Neither needs the provider or Terraform.
To fix either, run `python acceptance/coverage_table.py --write`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import coverage_table

ACCEPTANCE = Path(coverage_table.__file__).resolve().parent
README = ACCEPTANCE / "README.md"
ROW = re.compile(r"^\|[^|]*\|\s*`([^`]+)`\s*\|")


def test_readme_table_is_generated_from_the_docstrings():
    try:
        diff = coverage_table.check(README, ACCEPTANCE)
    except coverage_table.CoverageError as e:
        pytest.fail(f"the coverage table cannot be made:\n{e}", pytrace=False)
    if diff:
        pytest.fail(f"acceptance/README.md's coverage table is stale; run "
                    f"`{coverage_table.REGENERATE}`:\n{diff}", pytrace=False)


def on_disk() -> set[str]:
    """Every test_*.py under tests/ and fakes/, found by walking the tree here (not with
    the script's own finder)."""
    found = set()
    for top in ("tests", "fakes"):
        for directory, dirs, files in os.walk(ACCEPTANCE / top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.startswith("test_") and name.endswith(".py"):
                    found.add((Path(directory) / name).relative_to(ACCEPTANCE).as_posix())
    return found


def in_table() -> list[str]:
    text = README.read_text(encoding="utf-8")
    begin, end = text.find(coverage_table.BEGIN), text.find(coverage_table.END)
    assert 0 <= begin < end, (f"acceptance/README.md has no `{coverage_table.BEGIN}` ... "
                              f"`{coverage_table.END}` region")
    return [m.group(1) for line in text[begin:end].splitlines() if (m := ROW.match(line))]


def test_readme_table_names_every_test_file():
    files, rows = on_disk(), in_table()
    assert files, "no test file found: wrong directory?"
    assert "tests/harness/test_readme_coverage.py" in files
    missing = sorted(files - set(rows))
    unknown = sorted(set(rows) - files)
    repeated = sorted({r for r in rows if rows.count(r) > 1})
    assert not (missing or unknown or repeated), (
        f"acceptance/README.md's coverage table is stale (run "
        f"`{coverage_table.REGENERATE}`): files without a row: {missing}; rows of files "
        f"that do not exist: {unknown}; files with more than one row: {repeated}")
