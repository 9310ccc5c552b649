#!/usr/bin/env python3
"""Counts that say how well the code keeps its structure (issue 27), over product code
only (test files and `#[cfg(test)] mod tests` left out):

- reads by attribute name in the provider: `get_attr("…")` with a literal, `get_attr(x)`
  with a variable (loops over name lists), and helpers called with a value and a literal
  name (`text(v, "cloud")` and the like);
- files outside the cloud drivers (`crates/core/src/clouds/`) and the provider's cloud
  faces (`…/cloud_blocks/`) whose code names a cloud wire word (ARM paths, Compute
  paths, EKS/AKS/GKE field values, error codes, id prefixes), with the lines.

Usage: python3 tools/structure_counts.py [REPO]   (default: the current directory)
"""

from __future__ import annotations

import pathlib
import re
import sys

WIRE = re.compile(
    r"Microsoft\.|/subscriptions/|projects/|arn:aws|subnet-|COS_CONTAINERD|"
    r"UBUNTU_CONTAINERD|nodePools|agentPools|AL2023|BOTTLEROCKET|"
    r"InsufficientInstanceCapacity|ZONE_RESOURCE|QUOTA_EXCEEDED|managedClusters|"
    r"resourceGroups|amiType|vmSize|AzureLinux|cloud\.google\.com/gke|"
    r"kubernetes\.azure\.com|eks\.amazonaws\.com"
)
TEST_MODULE = re.compile(r"#\[cfg\((?:test|all\(test[^)]*\))\)\]\s*mod \w+")


def product(path: pathlib.Path) -> str:
    """The file's text up to its test module."""
    text = path.read_text()
    m = TEST_MODULE.search(text)
    return text[: m.start()] if m else text


def rust_files(root: pathlib.Path):
    for p in sorted(root.rglob("*.rs")):
        if p.name != "tests.rs" and "/tests/" not in str(p):
            yield p


def main() -> int:
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    lit = var = helper = 0
    for p in rust_files(repo / "crates/provider/src"):
        s = product(p)
        lit += len(re.findall(r'get_attr\("', s))
        var += len(re.findall(r'get_attr\((?!")', s))
        helper += len(re.findall(r'\b\w+\(\s*&?[a-z_][a-z_0-9.]*\s*,\s*"[a-z_]+"\s*\)', s))
    print(f"provider reads by name: get_attr literal {lit}, get_attr by variable {var}, "
          f'helper(value, "name") {helper}')
    files = {}
    for crate in ("core", "provider", "operator"):
        for p in rust_files(repo / "crates" / crate / "src"):
            sp = str(p)
            if "/clouds/" in sp and crate == "core" or "/cloud_blocks/" in sp or "/fake" in sp:
                continue
            hits = [
                (i + 1, line.strip())
                for i, line in enumerate(product(p).splitlines())
                if not line.strip().startswith("//") and WIRE.search(line)
            ]
            if hits:
                files[sp] = hits
    print(f"files outside the drivers and cloud faces naming cloud wire words: {len(files)}")
    for f, hits in files.items():
        print(f"  {f}: {len(hits)} line(s), e.g. line {hits[0][0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
