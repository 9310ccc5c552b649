"""`gpu_pool_placement` (issue 17) against an independent Python reference
(acceptance/placement_reference.py: plain iteration over crates/core/data/offers.csv, and a
brute-force scan of every (cloud, region, instance type) that must agree with it), through
real Terraform 1.15 and 1.0.3.

- every pool shape of SHAPES (GPU model and count, floor, expected nodes, clouds, region
  globs, a reserved floor, `max_price_age` in days and weeks and at its inclusive boundary,
  the stale list, hysteresis kept/moved/already best/absent) as one data source of ONE
  configuration per Terraform version (one `apply`, then `output -json`; each output is
  `jsonencode` of one data source's fields): the chosen cloud/region/instance type, the monthly and hourly bill, every line
  with its provenance, the whole ranked `candidates` list, `matched`, `kept_preferred`,
  `saving_percent`, field by field (numbers within 1e-9 relative);
- shapes where the region with the cheapest spot price is not where the whole bill is
  lowest (checked with the reference here, so a catalog change that removes the contrast
  fails loudly instead of silently weakening the test);
- the example `examples/data-sources/gpu_pool_placement` through validate, plan, apply,
  an empty second plan and destroy, its outputs against the reference;
- bad input: a diagnostic naming the attribute (attached to its line), never a crash; a
  pool nothing can host: an error naming what emptied it.

Ages (`price_age_days`, `max_price_age`) count whole days to today (UTC): the module's
`TODAY` is taken at import and the applied fixture skips if the date changed during the
apply.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from conftest import Terraform, diagnostics, line_of, terraform_bin  # noqa: E402
from placement_reference import (  # noqa: E402
    CANDIDATE_FIELDS, HOURS_PER_MONTH, LINE_FIELDS, PLACEMENT_CLOUDS, NoCandidate, Pool,
    brute_force_cheapest, load_rows, place, self_check, spot_cheapest, today_utc)

ROWS = load_rows()
TODAY = today_utc()
KIND = "gpu_pool_placement"
REL = 1e-9
OUTPUT_FIELDS = ["cloud", "region", "instance_type", "monthly_usd", "hourly_usd", "lines",
                 "candidates", "matched", "kept_preferred", "saving_percent", "catalog",
                 "availability"]


def _second_newest_price_age(gpu: str, count: int) -> int:
    """Days from the second newest price date of `gpu` x `count` on the three clouds to
    today: a `max_price_age` of exactly this keeps the prices of that date (the bound is
    inclusive) and drops the older ones."""
    dates = sorted({r[col] for r in ROWS
                    if r["gpu_model"] == gpu and r["gpu_count"]
                    and float(r["gpu_count"]) == count and r["cloud"] in PLACEMENT_CLOUDS
                    for col in ("on_demand_as_of", "spot_as_of") if r[col]})
    assert len(dates) >= 2, f"fewer than two price dates for {gpu} x{count}: {dates}"
    return (TODAY - dt.date.fromisoformat(dates[-2])).days


AGE_BOUNDARY = _second_newest_price_age("L4", 1)

# The preferred candidate of the hysteresis shapes: 8x H100, floor 1, expected 2. The
# reference ranks it below the best by a saving of about 35 % of its monthly bill (checked
# in test_shape_is_what_it_claims).
H100_PREFER = {"cloud": "gcp", "region": "us-east4", "instance_type": "a3-megagpu-8g"}


@dataclass
class Shape:
    id: str
    pool: Pool
    why: str
    spot_not_bill: bool = False      # the spot-cheapest region is not the bill-cheapest
    kept: bool | None = None         # with prefer: whether the preferred must stay first

    def hcl(self) -> str:
        p = self.pool
        attrs = {"gpu": p.gpu, "gpu_count": p.gpu_count, "min_nodes": p.min_nodes,
                 "max_nodes": p.max_nodes}
        if p.on_demand_min:
            attrs["on_demand_min"] = p.on_demand_min
        optional = {"expected_nodes": p.expected_nodes, "clouds": p.clouds,
                    "regions": p.regions, "max_price_age": p.max_price_age,
                    "reserved_usd_per_gpu_hour": p.reserved_usd_per_gpu_hour,
                    "include_stale_prices": p.include_stale_prices or None}
        attrs.update({k: v for k, v in optional.items() if v is not None})
        if p.min_saving_percent:
            attrs["min_saving_percent"] = p.min_saving_percent
        body = [f"  {k} = {json.dumps(v)}" for k, v in attrs.items()]
        if p.prefer:
            body.append("  prefer {")
            body += [f"    {k} = {json.dumps(p.prefer[k])}"
                     for k in ("cloud", "region", "instance_type")]
            body.append("  }")
        fields = ", ".join(f"{f} = data.{KIND}.{self.id}.{f}" for f in OUTPUT_FIELDS)
        return (f'data "{KIND}" "{self.id}" {{\n' + "\n".join(body) + "\n}\n"
                f'output "{self.id}" {{\n  value = jsonencode({{ {fields} }})\n}}\n')


SHAPES = [
    # -- the whole bill and the spot line point at different regions -------------------
    Shape("h100x8_floor1_exp3", Pool("H100", 8, 1, 4, 1, 3, clouds=["aws", "azure", "gcp"],
                                        include_stale_prices=True),
          "the issue's case: spot is cheapest in gcp europe-north1, but its on-demand floor "
          "makes aws us-east-1 cheaper as a whole", spot_not_bill=True),
    Shape("a100_80x8_floor1_exp2", Pool("A100-80GB", 8, 1, 4, 1, 2, include_stale_prices=True),
          "spot cheapest on azure eastus, whole bill on aws us-east-1 (default clouds, "
          "default regions)", spot_not_bill=True),
    Shape("l4x1_floor1_exp3", Pool("L4", 1, 1, 4, 1, 3),
          "one small GPU, 170 candidates: spot cheapest on aws ap-south-1, bill on gcp "
          "us-east4", spot_not_bill=True),
    Shape("h200x8_floor2_exp4", Pool("H200", 8, 2, 6, 2, 4, include_stale_prices=True),
          "two floor nodes, same cloud: spot cheapest in aws ap-southeast-3, bill in aws "
          "us-east-1", spot_not_bill=True),
    Shape("l40s_x4_floor1_exp5", Pool("L40S", 4, 1, 8, 1, 5),
          "four spot nodes still do not outweigh the floor: spot cheapest in aws "
          "ap-northeast-2, bill in aws us-east-2", spot_not_bill=True),
    Shape("rtxpro6000x1_spot_only_at_on_demand", Pool("RTXPRO6000", 1, 0, 4, 0, 2),
          "spot only, and the cheapest bill is an azure on-demand price standing in for a "
          "missing spot price (spot_priced_at_on_demand), below gcp's cheapest real spot "
          "price", spot_not_bill=True),
    # -- floors, spot only, reservations -------------------------------------------------
    Shape("a100_40x8_all_on_demand", Pool("A100-40GB", 8, 3, 3, 3),
          "all on demand (on_demand_min = max_nodes, expected_nodes unset = min_nodes): "
          "one on_demand line, no spot line"),
    Shape("h100x8_spot_only", Pool("H100", 8, 0, 4, expected_nodes=3),
          "spot only (on_demand_min unset = 0): one spot line; spot-cheapest and "
          "bill-cheapest agree"),
    Shape("h100x8_reserved", Pool("H100", 8, 2, 6, 2, 4, reserved_usd_per_gpu_hour=2.5),
          "two floor nodes on a commitment at $2.5/GPU-hour: a reserved line (source "
          "reserved_usd_per_gpu_hour, no date) and a spot line"),
    Shape("t4x1_floor_above_expected", Pool("T4", 1, 1, 4, 3, 1),
          "floor 3 above expected 1: running = max(expected, floor), no spot line"),
    Shape("a10g_x1_expected_default", Pool("A10G", 1, 2, 5, 1),
          "expected_nodes unset: min_nodes (2) run, 1 on demand + 1 spot"),
    Shape("l4x1_zero_nodes", Pool("L4", 1, 0, 2, 0, 0),
          "nothing runs: every priced candidate bills 0, ranked by cloud, region, type; "
          "no lines"),
    Shape("t4x1_azure", Pool("T4", 1, 1, 4, 1, 3, clouds=["azure"]),
          "one cloud: azure, where most spot prices are missing (priced at on-demand)"),
    Shape("l4x4_regions_ci", Pool("L4", 4, 1, 4, 1, 3, clouds=["aws", "gcp"],
                                  regions=["US-*", "europe-west*"]),
          "region globs, case-insensitive, on two clouds"),
    # -- price age -------------------------------------------------------------------
    Shape("h100x8_dated_only", Pool("H100", 8, 1, 4, 1, 3, max_price_age="3650d",
                                       include_stale_prices=True),
          "max_price_age 3650d: only dated prices are usable; aws us-east-1's undated spot "
          "price is dropped and its spot line priced at on-demand, so gcp wins"),
    Shape("a100_80x8_weeks", Pool("A100-80GB", 8, 1, 3, 1, 2, max_price_age="522w"),
          "max_price_age in weeks (522w = 3654 days): dated prices only"),
    Shape("l4x1_age_boundary", Pool("L4", 1, 1, 4, 1, 3, max_price_age=f"{AGE_BOUNDARY}d"),
          "max_price_age exactly the age of the second newest price date: those prices "
          "are kept (inclusive bound), older ones dropped"),
    # -- hysteresis ------------------------------------------------------------------
    Shape("h100x8_prefer_kept", Pool("H100", 8, 1, 4, 1, 2, prefer=H100_PREFER,
                                     min_saving_percent=50, include_stale_prices=True),
          "a more expensive preferred candidate stays first: the saving (~35 %) is below "
          "min_saving_percent 50", kept=True),
    Shape("h100x8_prefer_moved", Pool("H100", 8, 1, 4, 1, 2, prefer=H100_PREFER,
                                      min_saving_percent=20, include_stale_prices=True),
          "the same preference moves: the saving (~35 %) passes min_saving_percent 20",
          kept=False),
    Shape("h100x8_prefer_best", Pool("H100", 8, 1, 4, 1, 2, prefer={
        "cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge"},
        min_saving_percent=10, include_stale_prices=True),
          "the preferred candidate is the best: kept, saving 0", kept=True),
    # -- the stale list ----------------------------------------------------------------
    Shape("h100x8_stale_left_out", Pool("H100", 8, 1, 4, 1, 3, clouds=["aws"]),
          "AWS's 8x H100 spot prices are all on the stale list: left out by default, so "
          "every spot line is priced at on-demand"),
    Shape("h100x8_prefer_absent", Pool("H100", 8, 1, 4, 1, 2, prefer={
        "cloud": "azure", "region": "eastus", "instance_type": "Standard_ND96isr_H100_v5x"}),
          "prefer names no candidate: plain ranking, kept_preferred false, saving 0",
          kept=False),
]
IDS = [s.id for s in SHAPES]
assert len(set(IDS)) == len(IDS)


def reference(shape: Shape) -> dict:
    return place(shape.pool, ROWS, TODAY)


# --- comparison -----------------------------------------------------------------------

def same(got, want) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    if isinstance(want, (int, float)) and want is not None:
        return (isinstance(got, (int, float)) and not isinstance(got, bool)
                and math.isclose(float(got), float(want), rel_tol=REL, abs_tol=REL))
    return got == want


def diff(got: dict, want: dict, fields) -> dict:
    return {k: (got.get(k, "<missing>"), want[k]) for k in fields if not same(got.get(k), want[k])}


def assert_placement_equal(got: dict, want: dict, what: str):
    top = ["cloud", "region", "instance_type", "monthly_usd", "hourly_usd", "matched",
           "kept_preferred", "saving_percent"]
    d = diff(got, want, top)
    assert not d, f"{what}: (got, reference) {d}"
    assert isinstance(got.get("catalog"), str) and got["catalog"], f"{what}: catalog {got}"

    lines = got.get("lines") or []
    assert len(lines) == len(want["lines"]), (
        f"{what}: {len(lines)} lines, reference {len(want['lines'])}\n"
        f"got  {json.dumps(lines, indent=1)}\nwant {json.dumps(want['lines'], indent=1)}")
    for i, (g, w) in enumerate(zip(lines, want["lines"])):
        d = diff(g, w, LINE_FIELDS)
        assert not d, f"{what}: line {i} ({w['kind']}) (got, reference) {d}\ngot {g}\nwant {w}"

    cands = got.get("candidates") or []
    assert len(cands) == len(want["candidates"]), (
        f"{what}: {len(cands)} candidates, reference {len(want['candidates'])}\n"
        f"got  {[(c['cloud'], c['region'], c['instance_type']) for c in cands][:20]}\n"
        f"want {[(c['cloud'], c['region'], c['instance_type']) for c in want['candidates']][:20]}")
    for i, (g, w) in enumerate(zip(cands, want["candidates"])):
        d = diff(g, w, CANDIDATE_FIELDS)
        assert not d, (f"{what}: candidate {i} (got, reference) {d}\ngot {g}\nwant {w}\n"
                       f"reference order: {[(c['cloud'], c['region'], c['instance_type'], round(c['monthly_usd'], 4)) for c in want['candidates'][:max(i + 3, 5)]]}")


# --- the shapes themselves (reference only: no Terraform, no provider) ----------------

def test_reference_self_check():
    """place() and the brute-force scan agree on every GPU model and count of the three
    clouds under many pool shapes, and on the hysteresis thresholds."""
    assert self_check(ROWS, TODAY, verbose=False) > 1000


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_shape_is_what_it_claims(shape):
    ref = reference(shape)
    pool = shape.pool
    brute = brute_force_cheapest(replace(pool, prefer=None), ROWS, TODAY)
    plain = place(replace(pool, prefer=None), ROWS, TODAY)
    assert (plain["cloud"], plain["region"], plain["instance_type"]) == (
        brute["cloud"], brute["region"], brute["instance_type"]), (plain, brute)
    assert math.isclose(plain["monthly_usd"], brute["monthly_usd"], rel_tol=REL)
    assert ref["matched"] == brute["matched"]

    spot = spot_cheapest(pool, ROWS, TODAY)
    if shape.spot_not_bill:
        assert spot is not None, f"{shape.id}: no spot price at all"
        assert spot[:2] != (plain["cloud"], plain["region"]), (
            f"{shape.id}: the spot-cheapest region {spot} is now also the bill-cheapest "
            f"({plain['cloud']} {plain['region']}): the catalog changed, pick another shape")
    kinds = [line["kind"] for line in ref["lines"]]
    floor, spot_nodes = pool.floor_nodes(), pool.spot_nodes()
    assert kinds == ([pool.floor_kind()] if floor else []) + (["spot"] if spot_nodes else [])
    if shape.id == "a100_40x8_all_on_demand":
        assert kinds == ["on_demand"]
    if shape.id == "h100x8_spot_only":
        assert kinds == ["spot"] and spot[:3] == (ref["cloud"], ref["region"],
                                                   ref["instance_type"])
    if shape.id == "h100x8_reserved":
        assert kinds == ["reserved", "spot"]
        assert ref["lines"][0]["source"] == "reserved_usd_per_gpu_hour"
        assert ref["lines"][0]["as_of"] is None
    if shape.id == "rtxpro6000x1_spot_only_at_on_demand":
        assert ref["lines"][0]["spot_priced_at_on_demand"] is True, ref["lines"]
    if shape.id == "l4x1_zero_nodes":
        assert kinds == [] and ref["monthly_usd"] == 0
    if shape.id == "h100x8_dated_only":
        undated = place(replace(pool, max_price_age=None), ROWS, TODAY)
        assert ref["matched"] < undated["matched"], "3650d should drop undated prices"
        assert all(line["as_of"] for line in ref["lines"]), ref["lines"]
        assert (ref["cloud"], ref["region"]) != (undated["cloud"], undated["region"])
    if shape.id == "h100x8_stale_left_out":
        assert all(c["spot_priced_at_on_demand"] for c in ref["candidates"]), ref["candidates"]
        counted = place(replace(pool, include_stale_prices=True), ROWS, TODAY)
        assert not counted["lines"][-1]["spot_priced_at_on_demand"], counted["lines"]
    if shape.id == "l4x1_age_boundary":
        older = place(replace(pool, max_price_age=f"{AGE_BOUNDARY - 1}d"), ROWS, TODAY)
        assert older["candidates"] != ref["candidates"], (
            "one day less changes nothing: the boundary is not exercised")
        assert max(line["price_age_days"] for line in ref["lines"]) <= AGE_BOUNDARY
    if shape.kept is not None:
        assert ref["kept_preferred"] is shape.kept, ref["kept_preferred"]
        if pool.prefer and shape.id != "h100x8_prefer_absent":
            want = (pool.prefer["cloud"], pool.prefer["region"], pool.prefer["instance_type"])
            first = (ref["cloud"], ref["region"], ref["instance_type"])
            assert (first == want) is shape.kept
        if shape.id in ("h100x8_prefer_kept", "h100x8_prefer_moved"):
            assert 20 < ref["saving_percent"] < 50, ref["saving_percent"]
        if shape.id in ("h100x8_prefer_best", "h100x8_prefer_absent"):
            assert ref["saving_percent"] == 0
        if shape.id == "h100x8_prefer_absent":
            want = (pool.prefer["cloud"], pool.prefer["region"], pool.prefer["instance_type"])
            assert all((c["cloud"], c["region"], c["instance_type"]) != want
                       for c in ref["candidates"])


def test_enough_shapes():
    assert len(SHAPES) >= 12
    assert sum(s.spot_not_bill for s in SHAPES) >= 3


# --- one apply per Terraform version of every shape ---------------------------------

@pytest.fixture(scope="module")
def applied(tf_version, tf_env, tmp_path_factory) -> dict[str, dict]:
    """shape id -> the data source's fields (decoded from its jsonencode output), after
    one apply of every shape in one configuration."""
    tf = Terraform(version=tf_version, bin=terraform_bin(tf_version), env=tf_env,
                   tmp_path=tmp_path_factory.mktemp(f"placement-tf{tf_version}"))
    wd = tf.workdir(files={"main.tf": "".join(s.hcl() for s in SHAPES)})
    wd.run("validate")
    wd.run("apply")
    outputs = wd.outputs()
    if today_utc() != TODAY:
        pytest.skip("the UTC date changed between the reference and the apply: price ages "
                    "differ by a day; run again")
    return {k: json.loads(v) for k, v in outputs.items()}


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_placement_is_reference(terraform, applied, shape):
    want = reference(shape)
    got = applied[shape.id]
    assert set(OUTPUT_FIELDS) <= set(got), got.keys()
    assert_placement_equal(got, want, f"{KIND}.{shape.id}")
    if shape.spot_not_bill:
        spot = spot_cheapest(shape.pool, ROWS, TODAY)
        assert spot[:2] != (got["cloud"], got["region"]), (
            f"{shape.id}: placed by the spot price ({spot}) rather than the whole bill")
    assert math.isclose(got["hourly_usd"] * HOURS_PER_MONTH, got["monthly_usd"], rel_tol=REL)
    assert math.isclose(sum(line["monthly_usd"] for line in got["lines"]), got["monthly_usd"],
                        rel_tol=REL, abs_tol=REL)


# --- the example through the lifecycle ----------------------------------------------

def run_to_files(wd, *args: str, timeout: float = 300) -> tuple[int, str]:
    """`terraform <args>` with output to a file, not a pipe (a crashed Terraform leaves
    the provider holding a pipe open); leftover providers started in this working
    directory are ended by pid. As in test_offers.py."""
    out = wd.path / "out.txt"
    with open(out, "w") as f:
        proc = subprocess.run([str(wd.tf.bin), *args], cwd=wd.path, env=wd.tf.env,
                              stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                              timeout=timeout)
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            exe = os.readlink(pid_dir / "exe")
            cwd = os.readlink(pid_dir / "cwd")
        except OSError:
            continue
        if Path(exe).name.startswith("terraform-provider-gpu") and Path(cwd) == wd.path:
            try:
                os.kill(int(pid_dir.name), signal.SIGTERM)
            except ProcessLookupError:
                pass
    return proc.returncode, out.read_text()


EXAMPLE_POOL = Pool("H100", 8, 1, 4, 1, 2, clouds=["aws", "azure", "gcp"],
                    prefer={"cloud": "aws", "region": "us-east-1",
                            "instance_type": "p5.48xlarge"},
                    min_saving_percent=15)


def test_example_lifecycle(terraform):
    wd = terraform.workdir(f"data-sources/{KIND}")
    wd.run("validate")
    wd.run("plan", "-out=tfplan")
    wd.run("apply", "tfplan")
    resources = wd.state_resources()
    assert resources and all(r["mode"] == "data" for r in resources), resources
    ref = place(EXAMPLE_POOL, ROWS, today_utc())
    got = wd.resource(f"data.{KIND}.h100")
    assert_placement_equal(got, ref, "example")
    outputs = wd.outputs()
    assert outputs["where"] == f"{ref['cloud']} {ref['region']} {ref['instance_type']}", outputs
    assert same(outputs["monthly_usd"], ref["monthly_usd"]), (outputs, ref["monthly_usd"])
    rc, text = run_to_files(wd, "plan", "-no-color", "-input=false", "-detailed-exitcode")
    assert rc == 0, f"second plan not empty (exit {rc}):\n{text}"
    rc, text = run_to_files(wd, "destroy", "-no-color", "-input=false", "-auto-approve")
    assert rc == 0, text
    assert wd.state_resources() == []


def test_example_is_the_reference_pool():
    """The example's arguments are EXAMPLE_POOL's (so the lifecycle test compares the
    right thing)."""
    text = (Path(__file__).resolve().parents[3] / "examples" / "data-sources" / KIND
            / "data-source.tf").read_text()

    def arg(name):
        m = re.search(rf"^\s*{name}\s*=\s*(.+?)\s*$", text, re.M)
        assert m, f"{name} not in the example"
        return json.loads(m.group(1))

    p = EXAMPLE_POOL
    assert (arg("gpu"), arg("gpu_count"), arg("min_nodes"), arg("max_nodes"),
            arg("on_demand_min"), arg("expected_nodes"), arg("clouds"),
            arg("min_saving_percent")) == (p.gpu, p.gpu_count, p.min_nodes, p.max_nodes,
                                           p.on_demand_min, p.expected_nodes, p.clouds,
                                           p.min_saving_percent)
    assert (arg("cloud"), arg("region"), arg("instance_type")) == (
        p.prefer["cloud"], p.prefer["region"], p.prefer["instance_type"])


# --- bad input ------------------------------------------------------------------------

BASE = {"gpu": '"H100"', "gpu_count": "8", "min_nodes": "1", "max_nodes": "4"}

BAD = [
    # (id, changed arguments (HCL values), attributes any of which the error may name,
    #  words the message must contain)
    ("gpu_count_zero", {"gpu_count": "0"}, ["gpu_count"], []),
    ("gpu_count_fraction", {"gpu_count": "1.5"}, ["gpu_count"], []),
    ("min_over_max", {"min_nodes": "5"}, ["min_nodes", "max_nodes"], []),
    ("max_nodes_zero", {"min_nodes": "0", "max_nodes": "0"}, ["max_nodes"], []),
    ("expected_over_max", {"expected_nodes": "5"}, ["expected_nodes"], []),
    ("expected_under_min", {"expected_nodes": "0"}, ["expected_nodes"], []),
    ("floor_over_max", {"on_demand_min": "5"}, ["on_demand_min"], []),
    ("cloud_cudo", {"clouds": '["cudo"]'}, ["clouds"], ["cudo"]),
    ("age_words", {"max_price_age": '"90 days"'}, ["max_price_age"], ["90 days"]),
    ("unknown_gpu", {"gpu": '"H1000"'}, ["gpu"], ["H1000"]),
    ("negative_reserved", {"reserved_usd_per_gpu_hour": "-1"},
     ["reserved_usd_per_gpu_hour"], []),
]


def text_of(d: dict) -> str:
    return f"{d.get('summary', '')}\n{d.get('detail', '')}"


def names(message: str, attribute: str) -> bool:
    """`attribute` as a word (so `gpu` is not found inside `gpu_count`)."""
    return re.search(rf"(?<![\w.]){re.escape(attribute)}(?!\w)", message) is not None


def plan_diagnostics(stdout: str) -> list[dict]:
    """The error diagnostics of `plan -json` (one JSON message a line)."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            m = json.loads(line)
            if m.get("type") == "diagnostic" and m["diagnostic"].get("severity") == "error":
                out.append(m["diagnostic"])
    return out


def bad_config(changes: dict) -> str:
    attrs = {**BASE, **changes}
    return f'data "{KIND}" "x" {{\n' + "".join(f"  {k} = {v}\n" for k, v in attrs.items()) + "}\n"


@pytest.mark.parametrize("changes, attrs, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(terraform, changes, attrs, words):
    """Rejected at validate or at plan, with an error naming the attribute and attached
    to its line; never a crash."""
    wd = terraform.workdir(files={"main.tf": bad_config(changes)})
    doc = wd.validate_json()
    if doc["valid"] is False:
        errors, stage = diagnostics(doc), "validate"
    else:
        res = wd.fails("plan", "-json")
        errors, stage = plan_diagnostics(res.stdout), "plan"
    hits = [d for d in errors if any(names(text_of(d), a) for a in attrs)]
    assert hits, f"no {stage} error names {attrs}: {errors}"
    for w in words:
        assert any(w in text_of(d) for d in hits), f"{w!r} not in {hits}"
    lines = {line_of(wd.path / "main.tf", f"  {a} = ") for a in attrs}
    assert any((d.get("range") or {}).get("start", {}).get("line") in lines for d in hits), (
        f"error not attached to the line of {attrs} ({sorted(lines)}): {hits}")
    res = wd.fails("plan")
    assert "Error:" in res.stderr, res


NO_CANDIDATE = [
    ("regions_mars", {"regions": '["mars-*"]'}, "regions"),
    ("prices_too_old", {"max_price_age": '"1d"'}, "max_price_age"),
]


@pytest.mark.parametrize("changes, attr", [b[1:] for b in NO_CANDIDATE],
                         ids=[b[0] for b in NO_CANDIDATE])
def test_no_candidate_is_an_error_naming_what_emptied_it(terraform, changes, attr):
    pool = Pool("H100", 8, 1, 4, regions=["mars-*"] if attr == "regions" else None,
                max_price_age="1d" if attr == "max_price_age" else None)
    with pytest.raises(NoCandidate):
        place(pool, ROWS, today_utc())
    wd = terraform.workdir(files={"main.tf": bad_config(changes)})
    wd.run("validate")
    res = wd.fails("plan", "-json")
    errors = plan_diagnostics(res.stdout)
    assert errors, res
    assert any(names(text_of(d), attr) for d in errors), (
        f"the error does not name `{attr}`: {errors}")
    res = wd.fails("plan")
    assert "Error:" in res.stderr, res


# --- the quickstart places its pool by the whole bill -----------------------------------

def test_quickstart_pool_lands_where_the_whole_bill_is_lowest(terraform):
    """`examples/quickstart`'s pool (8x H100, 1 on-demand + spot, 2 nodes expected, AWS)
    is planned at the reference's cheapest whole bill, which is not the spot-cheapest
    place, and a `current_place` within the 15% threshold keeps the pool where it is."""
    pool = Pool(gpu="H100", gpu_count=8, min_nodes=1, max_nodes=4, on_demand_min=1,
                expected_nodes=2, clouds=["aws"])
    want = place(pool)
    # AWS's 8x H100 spot prices are all on the stale list: no spot price counts, and the
    # spot line is priced at on-demand (an upper bound).
    assert spot_cheapest(pool) is None
    assert want["lines"][-1]["spot_priced_at_on_demand"] is True, want["lines"]
    wd = terraform.workdir("quickstart")
    wd.run("plan", "-out=tfplan")
    plan = wd.show_json("tfplan")
    pools = [r for r in plan["planned_values"]["root_module"]["resources"]
             if r["address"] == "gpu_node_pool.train"]
    assert len(pools) == 1, plan["planned_values"]
    got = pools[0]["values"]
    assert (got["cloud"], got["region"], got["instance_types"]) == (
        want["cloud"], want["region"], [want["instance_type"]]), (got, want)
    placed = plan["planned_values"]["outputs"]["train_placement"]["value"]
    assert math.isclose(placed["expected_monthly"], want["monthly_usd"], rel_tol=1e-9)
    # Hysteresis: the runner-up as the current place, its bill within 15% of the best's?
    # Then it stays; otherwise the best wins. Either way the reference decides.
    runner = want["candidates"][1]
    current = {k: runner[k] for k in ("cloud", "region", "instance_type")}
    sticky = place(replace(pool, prefer=current, min_saving_percent=15))
    var = 'current_place={cloud="%s",region="%s",instance_type="%s"}' % (
        current["cloud"], current["region"], current["instance_type"])
    wd.run("plan", "-var", var, "-out=tfplan2")
    got2 = [r for r in wd.show_json("tfplan2")["planned_values"]["root_module"]["resources"]
            if r["address"] == "gpu_node_pool.train"][0]["values"]
    assert (got2["region"], got2["instance_types"]) == (
        sticky["region"], [sticky["instance_type"]]), (got2, sticky)
