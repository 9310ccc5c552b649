#!/usr/bin/env python3
"""The coverage table of acceptance/README.md, generated from the test modules' docstrings.

Every `test_*.py` under `acceptance/tests/` and `acceptance/fakes/` is one row: its path
relative to `acceptance/`, how many test functions it defines (`def test*` at module level
and in classes; parametrised ids are not counted), and the first paragraph of its module
docstring, whitespace folded into one line. Rows are grouped by area: `tests/<area>` for
the tests, `fakes/<cloud>` (or `fakes`) for the fakes' own tests. The modules are read with
`ast`, never imported. A test file without a module docstring is an error.

    python acceptance/coverage_table.py           # print the table
    python acceptance/coverage_table.py --write   # put it between the README's markers
    python acceptance/coverage_table.py --check   # exit 1 with a diff when the README is stale

Standard library only (Python >= 3.9). `tests/harness/test_readme_coverage.py` runs
`check()` so a stale README fails the suite.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

ACCEPTANCE = Path(__file__).resolve().parent
README = ACCEPTANCE / "README.md"
ROOTS = ("tests", "fakes")
BEGIN = "<!-- coverage-table:begin -->"
END = "<!-- coverage-table:end -->"
REGENERATE = "python acceptance/coverage_table.py --write"


class CoverageError(Exception):
    """The table cannot be made (a module without a docstring, a file that does not parse,
    markers missing from the README)."""


@dataclass(frozen=True)
class Row:
    area: str
    path: str  # relative to acceptance/, with forward slashes
    tests: int
    proves: str


def find_test_files(root: Path = ACCEPTANCE) -> List[Path]:
    """Every `test_*.py` under `<root>/tests` and `<root>/fakes`, sorted."""
    found = []
    for top in ROOTS:
        base = root / top
        if base.is_dir():
            found.extend(p for p in base.rglob("test_*.py")
                         if p.is_file() and "__pycache__" not in p.parts)
    return sorted(found)


def area_of(rel: str) -> str:
    """`tests/<area>/...` -> `<area>`; `fakes/<cloud>/...` -> `fakes/<cloud>`;
    a file directly under `tests/` or `fakes/` -> `tests` or `fakes`."""
    parts = rel.split("/")
    if len(parts) <= 2:
        return parts[0]
    return parts[1] if parts[0] == "tests" else f"{parts[0]}/{parts[1]}"


def _is_test_function(node: ast.AST) -> bool:
    return (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name.startswith("test"))


def count_tests(tree: ast.Module) -> int:
    """`def test*` at module level and in classes (nested classes included), as pytest
    collects them; functions nested inside functions are not tests."""
    def in_body(body) -> int:
        n = 0
        for node in body:
            if _is_test_function(node):
                n += 1
            elif isinstance(node, ast.ClassDef):
                n += in_body(node.body)
        return n
    return in_body(tree.body)


def first_paragraph(docstring: str) -> str:
    """The docstring's first paragraph, whitespace folded into one line."""
    paragraph = re.split(r"\n[ \t]*\n", docstring.strip(), maxsplit=1)[0]
    return " ".join(paragraph.split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def describe(path: Path, root: Path = ACCEPTANCE) -> Row:
    rel = path.relative_to(root).as_posix()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        raise CoverageError(f"{rel}: does not parse: {e}") from e
    doc = ast.get_docstring(tree)
    if not doc or not doc.strip():
        raise CoverageError(
            f"{rel}: no module docstring (its first paragraph is the file's row of the "
            f"coverage table: say what the file proves)")
    return Row(area_of(rel), rel, count_tests(tree), first_paragraph(doc))


def rows(root: Path = ACCEPTANCE) -> List[Row]:
    """One row per test file, grouped by area (`tests` areas first, then `fakes`), each
    group sorted by path. Every file without a docstring is named in one error."""
    found, errors = [], []
    for path in find_test_files(root):
        try:
            found.append(describe(path, root))
        except CoverageError as e:
            errors.append(str(e))
    if errors:
        raise CoverageError("\n".join(errors))
    return sorted(found, key=lambda r: (r.path.split("/")[0] != "tests", r.area, r.path))


def render(table_rows: List[Row]) -> str:
    """The Markdown table; the area is written on the first row of each group."""
    lines = ["| area | file | tests | what it proves |", "| --- | --- | ---: | --- |"]
    previous: Optional[str] = None
    for r in table_rows:
        area = f"**{r.area}**" if r.area != previous else ""
        previous = r.area
        lines.append(f"| {area} | `{r.path}` | {r.tests} | {_cell(r.proves)} |")
    total = sum(r.tests for r in table_rows)
    lines.append("")
    lines.append(f"{len(table_rows)} files, {total} test functions (before parametrisation).")
    return "\n".join(lines) + "\n"


def block(table: str) -> str:
    """What goes between the markers (the markers included)."""
    return (f"{BEGIN}\n"
            f"<!-- generated from the test modules' docstrings by `{REGENERATE}`; "
            f"do not edit by hand -->\n\n"
            f"{table}"
            f"{END}")


def with_table(text: str, table: str) -> str:
    """`text` (the README) with the region between the markers replaced by `table`."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < 0 or end < begin or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise CoverageError(f"README must hold `{BEGIN}` once, followed by `{END}` once")
    return text[:begin] + block(table) + text[end + len(END):]


def expected_readme(readme: Path = README, root: Path = ACCEPTANCE) -> str:
    return with_table(readme.read_text(encoding="utf-8"), render(rows(root)))


def check(readme: Path = README, root: Path = ACCEPTANCE) -> str:
    """A unified diff from the README to what `--write` would make it; '' when current."""
    current = readme.read_text(encoding="utf-8")
    wanted = with_table(current, render(rows(root)))
    if current == wanted:
        return ""
    try:
        name = readme.relative_to(root.parent).as_posix()
    except ValueError:
        name = str(readme)
    return "".join(difflib.unified_diff(
        current.splitlines(keepends=True), wanted.splitlines(keepends=True),
        fromfile=f"{name} (as it is)", tofile=f"{name} (generated)"))


def write(readme: Path = README, root: Path = ACCEPTANCE) -> bool:
    """Rewrites the table in the README; True when something changed."""
    current = readme.read_text(encoding="utf-8")
    wanted = with_table(current, render(rows(root)))
    if wanted != current:
        readme.write_text(wanted, encoding="utf-8")
    return wanted != current


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true",
                      help="replace the table between the markers of acceptance/README.md")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 with a unified diff when the README is not what --write "
                           "would make it")
    args = parser.parse_args(argv)
    try:
        if args.write:
            changed = write()
            print(f"{README.relative_to(ACCEPTANCE.parent)}: "
                  f"{'table rewritten' if changed else 'already current'}")
        elif args.check:
            diff = check()
            if diff:
                sys.stdout.write(diff)
                print(f"\nacceptance/README.md's coverage table is stale: run `{REGENERATE}`",
                      file=sys.stderr)
                return 1
        else:
            sys.stdout.write(render(rows()))
    except CoverageError as e:
        print(f"coverage_table: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
