"""Reading the audit lines out of an events file, and the checks every audit test makes
on them: each field present and typed, the actor never empty, no secret anywhere."""

from __future__ import annotations

import json
from pathlib import Path

FIELDS = ("at", "event", "cloud", "region", "actor", "action", "target", "result")


def audit_lines(path: Path) -> list[dict]:
    """The `audit` lines of events file `path`, in order."""
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in lines if e.get("event") == "audit"]


def check_line(line: dict, secrets: list[str]) -> None:
    """Every field an audit line always has, with a non-empty actor, and no secret."""
    for field in FIELDS:
        assert isinstance(line.get(field), str) and line[field], (field, line)
    assert line["at"].endswith("Z") and "T" in line["at"], line
    text = json.dumps(line)
    for secret in secrets:
        assert secret not in text, f"a secret reached the audit line: {line}"
