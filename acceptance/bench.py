#!/usr/bin/env python3
"""Rough performance figures for the provider. Prints a table; asserts nothing.

  - plugin start: time from launch to the handshake line (median of 20 launches), and the
    provider process's peak RSS (VmHWM) after a health check over mTLS; in the same run,
    the same figures for tfplugin's one-file example provider (the least a Rust provider
    does before its handshake: the baseline), the launch of `true` (the process floor),
    and, when BENCH_BEFORE_BIN names another build (e.g. one made before a change), that
    build too, so before/after come from one run on one machine;
  - `terraform plan` (1.15) of N `data "gpu_models"` blocks against N `terraform_data`
    resources (Terraform's built-in provider, so the ratio is the provider's cost),
    median of 3 each;
  - `terraform plan` of N `gpu_node_pool` resources (validation, instance-type choice and
    cost preview per pool, one warning each; no cloud call at plan time) and of N
    `data "gpu_spot_offer"` blocks, each with and without `-compact-warnings`, against the
    same N `terraform_data`: the ratios are the provider's cost, Terraform's rendering of
    its warnings included; the per-pool overhead is (pool plan - terraform_data plan) / N.
    With BENCH_BEFORE_BIN, the pool and offer plans of that build too, in the same run.

Environment: PROVIDER_BIN / CARGO_TARGET_DIR and TERRAFORM_1_15 as for the test suite;
BENCH_LAUNCHES (20), BENCH_N (100), BENCH_RUNS (3), BENCH_BEFORE_BIN (unset; a binary
named terraform-provider-gpu, as Terraform finds providers by name).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import PROVIDER_ADDR, PROVIDER_SOURCE, provider_bin_path, terraform_bin  # noqa: E402
from plugin import Plugin, health_check, make_client_cert, plugin_env  # noqa: E402

LAUNCHES = int(os.environ.get("BENCH_LAUNCHES", "20"))
N = int(os.environ.get("BENCH_N", "100"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))


def plugin_start(binary: Path, tmp: Path) -> tuple[float, float, float]:
    """(median ms to handshake line, max ms, peak RSS MiB)."""
    times, peak = [], 0
    for i in range(LAUNCHES):
        cert = make_client_cert(tmp, f"c{i}")
        with Plugin(binary, plugin_env(cert)) as p:
            hs = p.handshake()
            times.append((p.line_at - p.started) * 1000)
            try:  # make it do some work before measuring memory
                health_check(hs, cert)
            except Exception as e:  # noqa: BLE001 - a bench reports, it doesn't judge
                print(f"bench: health check failed: {e}", file=sys.stderr)
            peak = max(peak, p.vm_hwm_kib() or 0)
    return statistics.median(times), max(times), peak / 1024


def process_floor() -> float:
    """Median ms to launch and reap `true`: what any process costs here."""
    times = []
    for _ in range(LAUNCHES):
        t0 = time.monotonic()
        subprocess.run(["true"], check=True)
        times.append((time.monotonic() - t0) * 1000)
    return statistics.median(times)


def hello_bin() -> Path:
    """tfplugin's example provider, built by `make build` next to the provider."""
    return provider_bin_path().parent / "examples" / "terraform-provider-hello"


def plan_seconds(tf: Path, env: dict, workdir: Path, *flags: str) -> float:
    samples = []
    for _ in range(RUNS):
        t0 = time.monotonic()
        proc = subprocess.run([str(tf), "plan", "-no-color", "-input=false", "-refresh=false",
                               *flags],
                              cwd=workdir, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=600)
        samples.append(time.monotonic() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"plan failed in {workdir}:\n{proc.stdout}\n{proc.stderr}")
    return statistics.median(samples)


def main() -> int:
    binary = provider_bin_path()
    if not binary.is_file():
        print(f"bench: no provider binary at {binary} (run `make build`)", file=sys.stderr)
        return 1
    tf = terraform_bin("1.15")
    with tempfile.TemporaryDirectory(prefix="tfgpu-bench-") as d:
        tmp = Path(d)
        def env_for(provider: Path, name: str) -> dict:
            rc = tmp / name
            rc.write_text(f'provider_installation {{\n  dev_overrides {{\n'
                          f'    "{PROVIDER_ADDR}" = "{provider.parent}"\n  }}\n  direct {{}}\n}}\n')
            return dict(os.environ, TF_CLI_CONFIG_FILE=str(rc), TF_IN_AUTOMATION="1",
                        CHECKPOINT_DISABLE="1")

        env = env_for(binary, "terraformrc")
        before = Path(os.environ["BENCH_BEFORE_BIN"]) if os.environ.get("BENCH_BEFORE_BIN") else None

        med, worst, rss = plugin_start(binary, tmp)
        floor = process_floor()
        starts = []
        if hello_bin().is_file():
            starts.append(("tfplugin example provider (baseline)", hello_bin()))
        if os.environ.get("BENCH_BEFORE_BIN"):
            starts.append(("BENCH_BEFORE_BIN", Path(os.environ["BENCH_BEFORE_BIN"])))
        others = [(label, path, *plugin_start(path, tmp)) for label, path in starts]

        data_dir, base_dir = tmp / "data", tmp / "base"
        data_dir.mkdir()
        base_dir.mkdir()
        (data_dir / "main.tf").write_text(
            f'terraform {{\n  required_providers {{\n    gpu = {{ source = "{PROVIDER_SOURCE}" }}\n  }}\n}}\n'
            + "".join(f'data "gpu_models" "m{i}" {{\n  min_memory_gib = {i % 100}\n}}\n'
                      for i in range(N)))
        (base_dir / "main.tf").write_text(
            "".join(f'resource "terraform_data" "r{i}" {{\n  input = {i}\n}}\n' for i in range(N)))
        pool_dir = tmp / "pools"
        pool_dir.mkdir()
        (pool_dir / "main.tf").write_text(
            f'terraform {{\n  required_providers {{\n    gpu = {{ source = "{PROVIDER_SOURCE}" }}\n  }}\n}}\n'
            + "".join(
                f'resource "gpu_node_pool" "p{i}" {{\n  cloud = "aws"\n  region = "us-east-1"\n'
                f'  cluster = "bench"\n  name = "p{i}"\n  gpu = "H100"\n  gpu_count = 8\n'
                f'  min_nodes = 0\n  max_nodes = {1 + i % 8}\n'
                f'  capacity {{\n    spot = true\n    on_demand_min = {i % 2}\n  }}\n'
                f'  aws {{\n    node_role_arn = "arn:aws:iam::123456789012:role/n"\n  }}\n}}\n'
                for i in range(N)))
        # The same pools, one per file: Terraform re-parses the whole file of a warning's
        # resource to print its source snippet, so in one big file each warning costs in
        # proportion to the file; split, each parses only its own.
        split_dir = tmp / "pools-split"
        split_dir.mkdir()
        text = (pool_dir / "main.tf").read_text()
        head, *bodies = text.split('resource "gpu_node_pool"')
        (split_dir / "versions.tf").write_text(head)
        for i, body in enumerate(bodies):
            (split_dir / f"p{i}.tf").write_text('resource "gpu_node_pool"' + body)
        offer_dir = tmp / "offers"
        offer_dir.mkdir()
        (offer_dir / "main.tf").write_text(
            f'terraform {{\n  required_providers {{\n    gpu = {{ source = "{PROVIDER_SOURCE}" }}\n  }}\n}}\n'
            + "".join(f'data "gpu_spot_offer" "o{i}" {{\n  gpu = "H100"\n'
                      f'  gpu_count = {1 if i % 2 else 8}\n  regions = ["us-*"]\n}}\n'
                      for i in range(N)))
        t_data = plan_seconds(tf, env, data_dir)
        t_base = plan_seconds(tf, env, base_dir)
        t_pool = plan_seconds(tf, env, pool_dir)
        t_pool_c = plan_seconds(tf, env, pool_dir, "-compact-warnings")
        t_split = plan_seconds(tf, env, split_dir)
        t_offer = plan_seconds(tf, env, offer_dir)
        t_offer_c = plan_seconds(tf, env, offer_dir, "-compact-warnings")
        befores = []
        if before is not None:
            benv = env_for(before, "terraformrc-before")
            befores = [
                (f"BENCH_BEFORE_BIN plan: {N} gpu_node_pool", plan_seconds(tf, benv, pool_dir)),
                (f"BENCH_BEFORE_BIN plan: {N} gpu_node_pool -compact-warnings",
                 plan_seconds(tf, benv, pool_dir, "-compact-warnings")),
                (f"BENCH_BEFORE_BIN plan: {N} data.gpu_spot_offer",
                 plan_seconds(tf, benv, offer_dir)),
                (f"BENCH_BEFORE_BIN plan: {N} data.gpu_spot_offer -compact-warnings",
                 plan_seconds(tf, benv, offer_dir, "-compact-warnings")),
            ]

    rows = [
        ("plugin start -> handshake line", f"{med:.1f} ms", f"median of {LAUNCHES}, max {worst:.1f} ms"),
        ("plugin peak RSS (VmHWM)", f"{rss:.1f} MiB", "after a health check over mTLS"),
        ("launch of `true` (process floor)", f"{floor:.1f} ms", f"median of {LAUNCHES}"),
    ]
    for label, path, o_med, o_worst, o_rss in others:
        rows += [
            (f"{label} -> handshake", f"{o_med:.1f} ms",
             f"median of {LAUNCHES}, max {o_worst:.1f} ms ({path.name})"),
            (f"{label} peak RSS", f"{o_rss:.1f} MiB", ""),
            (f"ratio provider / {label}", f"{med / o_med:.2f}x", "start to handshake"),
        ]
    rows += [
        (f"plan: {N} data.gpu_models", f"{t_data:.2f} s", f"median of {RUNS}"),
        (f"plan: {N} terraform_data", f"{t_base:.2f} s", f"median of {RUNS}"),
        ("ratio gpu_models / terraform_data", f"{t_data / t_base:.2f}x", ""),
        (f"plan: {N} gpu_node_pool", f"{t_pool:.2f} s", f"median of {RUNS}"),
        ("ratio gpu_node_pool / terraform_data", f"{t_pool / t_base:.2f}x", "goal <= 2x"),
        ("plan overhead per pool", f"{(t_pool - t_base) / N * 1000:.1f} ms",
         "(pool plan - terraform_data plan) / N"),
        (f"plan: {N} gpu_node_pool -compact-warnings", f"{t_pool_c:.2f} s", f"median of {RUNS}"),
        ("ratio gpu_node_pool -compact-warnings / terraform_data", f"{t_pool_c / t_base:.2f}x",
         "goal <= 2x"),
        (f"plan: {N} gpu_node_pool, one file each", f"{t_split:.2f} s", f"median of {RUNS}"),
        ("ratio gpu_node_pool one file each / terraform_data", f"{t_split / t_base:.2f}x",
         "full warnings; Terraform parses each warning's file"),
        (f"plan: {N} data.gpu_spot_offer", f"{t_offer:.2f} s", f"median of {RUNS}"),
        ("ratio gpu_spot_offer / terraform_data", f"{t_offer / t_base:.2f}x", "goal <= 1.5x"),
        (f"plan: {N} data.gpu_spot_offer -compact-warnings", f"{t_offer_c:.2f} s",
         f"median of {RUNS}"),
        ("ratio gpu_spot_offer -compact-warnings / terraform_data",
         f"{t_offer_c / t_base:.2f}x", "goal <= 1.5x"),
    ]
    for label, t in befores:
        rows += [(label, f"{t:.2f} s", f"median of {RUNS}"),
                 (f"ratio {label.split(' plan: ')[1]} (before) / terraform_data",
                  f"{t / t_base:.2f}x", "")]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"terraform-provider-gpu bench ({binary})")
    print(f"{'measure':<{w0}}  {'value':>{w1}}  note")
    print(f"{'-' * w0}  {'-' * w1}  {'-' * 4}")
    for a, b, c in rows:
        print(f"{a:<{w0}}  {b:>{w1}}  {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
