"""`gpu_commitment_sizing` through Terraform and the `commitment-size` CLI, checked against
an independent reference: the cost of every commitment N computed hour by hour in Python
(N·commit + max(0, demand − N)·burst), its minimum, and the floor as the minimum demand.
Also the registry example (a month of hourly demand as CSV, prices from the catalog).
"""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from conftest import EXAMPLES


def reference(hourly: list[float], commit: float, burst: float) -> list[float]:
    """Total cost for N = 0..ceil(peak), hour by hour."""
    peak = int(-(-max(hourly) // 1))
    return [sum(n * commit + max(0.0, d - n) * burst for d in hourly)
            for n in range(peak + 1)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_floor_optimum_and_curve_match_the_reference(terraform, seed):
    rng = random.Random(seed)
    hourly = [float(rng.choice([0, 2, 4, 8, 8, 16, 24])) + rng.choice([0, 0, 0.5])
              for _ in range(rng.randint(24, 200))]
    commit, burst = round(rng.uniform(0.5, 3.0), 3), round(rng.uniform(1.0, 4.0), 3)
    config = f"""
data "gpu_commitment_sizing" "s" {{
  hourly_gpus             = {json.dumps(hourly)}
  commit_usd_per_gpu_hour = {commit}
  burst_usd_per_gpu_hour  = {burst}
  on_demand_usd_per_gpu_hour = {burst}
}}
output "s" {{ value = data.gpu_commitment_sizing.s }}
"""
    wd = terraform.workdir(files={"main.tf": config})
    wd.run("plan", "-out=tfplan")
    s = wd.show_json("tfplan")["planned_values"]["outputs"]["s"]["value"]
    costs = reference(hourly, commit, burst)
    assert [p["gpus"] for p in s["curve"]] == list(range(len(costs)))
    for point, want in zip(s["curve"], costs):
        assert abs(point["total_usd"] - want) < 1e-4 * (1 + want), (point, want)
    best = min(range(len(costs)), key=lambda n: (round(costs[n], 6), n))
    assert s["optimal_gpus"] == best, (s["optimal_gpus"], best, costs)
    assert s["floor_gpus"] == int(min(hourly))
    assert abs(s["optimal"]["total_usd"] - costs[best]) < 1e-4 * (1 + costs[best])
    demand = sum(hourly)
    assert abs(s["all_on_demand_usd"] - demand * burst) < 1e-3
    assert abs(s["optimal"]["savings_vs_on_demand_usd"] - (demand * burst - costs[best])) < 1e-3
    assert s["all_spot_usd"] is None and s["optimal"]["savings_vs_spot_usd"] is None
    assert abs(s["break_even_utilization"] - commit / burst) < 1e-6


def test_the_example_sizes_a_month_with_catalog_prices(terraform):
    wd = terraform.workdir("data-sources/gpu_commitment_sizing")
    wd.run("plan", "-out=tfplan")
    out = wd.show_json("tfplan")["planned_values"]["outputs"]["commit_to"]["value"]
    hourly = [float(line.rsplit(",", 1)[1]) for line in
              (EXAMPLES / "data-sources/gpu_commitment_sizing/demand.csv").read_text()
              .splitlines()[1:] if line.strip()]
    assert out["floor_gpus"] == int(min(hourly)) == 16
    assert out["floor_gpus"] <= out["optimal_gpus"] <= max(hourly)
    assert "on-demand aws us-east-1 of p5" in out["prices_came_from"], out
    assert out["optimal_saves"] >= out["floor_saves"] > 0, out


def test_bad_history_names_the_attribute(terraform):
    config = """
data "gpu_commitment_sizing" "s" {
  hourly_gpus_csv         = "hour,gpus\\n1,8\\n2,lots\\n"
  commit_usd_per_gpu_hour = 1
  burst_usd_per_gpu_hour  = 2
}
"""
    wd = terraform.workdir(files={"main.tf": config})
    res = wd.fails("plan")
    assert "hourly_gpus_csv" in res.output and "line 3" in res.output, res


def test_cli_prints_the_table_and_writes_the_chart(provider_bin, tmp_path):
    csv = EXAMPLES / "data-sources/gpu_commitment_sizing/demand.csv"
    chart = tmp_path / "curve.svg"
    res = subprocess.run([str(provider_bin), "commitment-size", "--demand-csv", str(csv),
                          "--commit", "2.10", "--burst", "6.88", "--on-demand", "6.88",
                          "--svg", str(chart)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("720 hours"), res.stdout
    floor = next(line for line in lines if line.startswith("floor"))
    assert floor.split()[1] == "16", floor
    svg = chart.read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 1 and "optimal:" in svg


def test_the_provider_function_gives_the_same_answer(terraform):
    """`provider::gpu::commitment_size` (Terraform 1.8 and later) against the reference and
    the data source; a bad argument is Terraform's error naming the argument."""
    if terraform.version == "1.0":
        pytest.skip("provider-defined functions need Terraform 1.8 or later")
    hourly = [4.0] * 75 + [10.0] * 25
    config = f"""
terraform {{
  required_providers {{
    gpu = {{ source = "gpu-tf/gpu" }}
  }}
}}
output "f" {{ value = provider::gpu::commitment_size({json.dumps(hourly)}, 1, 2) }}
"""
    wd = terraform.workdir(files={"main.tf": config})
    wd.run("plan", "-out=tfplan")
    f = wd.show_json("tfplan")["planned_values"]["outputs"]["f"]["value"]
    costs = reference(hourly, 1.0, 2.0)
    assert f["optimal_gpus"] == 4 and f["floor_gpus"] == 4
    assert [p["total_usd"] for p in f["curve"]] == pytest.approx(costs)
    assert f["optimal"]["total_usd"] == pytest.approx(700.0)
    assert f["break_even_utilization"] == 0.5
    bad = terraform.workdir(files={"main.tf": config.replace(", 1, 2)", ", 1, 0)")})
    res = bad.fails("plan")
    assert "burst_usd_per_gpu_hour" in res.output and "more than 0" in res.output, res


def test_the_function_example_plans(terraform):
    if terraform.version == "1.0":
        pytest.skip("provider-defined functions need Terraform 1.8 or later")
    wd = terraform.workdir("functions/commitment_size")
    wd.run("plan", "-out=tfplan")
    out = wd.show_json("tfplan")["planned_values"]["outputs"]["commit_to"]["value"]
    # 2.10 / 6.88 ≈ 31%: the 10-GPU hours (25% of the day) do not pay for a commitment.
    assert out == {"floor": 4, "optimal": 4, "saves": pytest.approx(
        sum(d * 6.88 for d in [4] * 18 + [10] * 6) - (4 * 2.10 * 24 + 6 * 6 * 6.88))}, out
