"""Runs `terraform-provider-gpu watch` (the reclaim watcher) the way a cron job or a
Deployment would, with Terraform's environment (the same credential chains), and returns
its JSON-line events and its summary table."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from conftest import provider_bin_path


def run_watch(env: dict, targets: list[str], *flags: str, timeout: float = 180):
    """Watches `targets` (`gcp:<project>`, ...) every second, retrying refused starts every
    second, until nothing is left to bring back (at most 30 passes). Returns (events,
    summary, stderr)."""
    with tempfile.TemporaryDirectory() as d:
        events = Path(d) / "events.jsonl"
        cmd = [str(provider_bin_path()), "watch", *[f"--target={t}" for t in targets],
               "--events", str(events), "--interval", "1s", "--retry-initial", "1s",
               "--retry-max", "1s", "--exit-when-idle", "--passes", "30", "--summary",
               *flags]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        lines = events.read_text().splitlines() if events.exists() else []
        # The watcher's audit lines (one per start it sends) share the file; the tests
        # read the reclaim events, and `test_audit` reads the audit lines.
        parsed = [json.loads(line) for line in lines]
        return [e for e in parsed if e.get("event") != "audit"], done.stderr, done.stderr
