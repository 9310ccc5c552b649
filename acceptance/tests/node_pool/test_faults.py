"""Whole applies under injected faults (issue 6): a proxy in front of moto answers a share
of the provider's AWS requests with throttling (429), server errors (500, 503), reset
connections, or resets the connection *after* forwarding (the change is made, its answer
lost). The provider's one retry policy (crates/core/src/retry) must absorb them: create,
an in-place update, a refresh and a destroy all succeed, what EKS then holds is checked
with boto3, and a plan after each step is empty.

- 30 % of requests failing (seeded), `FAULT_RUNS` runs on Terraform 1.15 (default 2) plus
  one on 1.0;
- every CreateNodegroup answer lost once: the repeat carries the first attempt's
  idempotency token and is adopted, one group each;
- `aws.max_retries = 0` fails on one 503 after one attempt, `= 2` absorbs two;
  `max_retries = 26` is refused at validate.

The figures go to `make reliability` ("applies under faults converged").
"""

from __future__ import annotations

import json
import os

import pytest

import reliability
from aws_emulator import create_eks_prerequisites, node_groups
from fault_proxy import FaultProxy, RandomFaults
from tests.node_pool.test_node_pool import (EXAMPLE, ADDR, USER_LABELS, check_groups, names,
                                            pool_workdir)

# Runs on Terraform 1.15 (`FAULT_RUNS`, default 2; `make reliability` runs more) and one
# on 1.0; each run has its own seed, so its own fault pattern.
RUNS = int(os.environ.get("FAULT_RUNS", "2"))
SEEDS = {"1.15": tuple(range(11, 11 + RUNS)), "1.0": (21,)}
RATE = 0.3

_totals = {"runs": 0, "converged": 0, "steps": 0, "faults": 0}


@pytest.fixture
def aws_tf(terraform, moto, tmp_path):
    terraform.env = moto.terraform_env(terraform.env, tmp_path / "aws")
    return terraform


def converge(wd, proxy, step: str, *args: str) -> None:
    """Runs one step under faults; it must succeed, and the plan after it (under faults
    too) must be empty."""
    res = wd.run(*args, rc=None, timeout=600)
    assert res.returncode == 0, (
        f"{step} did not converge under faults {dict(proxy.injected_kinds)}\n{res}")
    assert not res.crash_markers(), res
    assert wd.plan_is_empty(), f"plan after {step} is not empty\n{wd.run('plan', rc=None)}"


@pytest.mark.parametrize("slot", range(max(RUNS, 1)))
def test_create_update_destroy_converge_under_faults(aws_tf, moto, slot):
    seeds = SEEDS[aws_tf.version]
    if slot >= len(seeds):
        pytest.skip(f"{len(seeds)} seed(s) on Terraform {aws_tf.version}")
    seed = seeds[slot]
    cluster_name, pool = names(aws_tf, f"faults{seed}")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url, faults=RandomFaults.parse(f"rate={RATE},seed={seed}")).start()
    _totals["runs"] += 1
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)

        converge(wd, proxy, "create", "apply")
        _totals["steps"] += 1
        check_groups(moto, cluster, pool, wd.resource(ADDR))

        labels = {**USER_LABELS, "tier": "interactive"}
        main = wd.path / "resource.tf"
        text = main.read_text()
        assert '"batch"' in text, "the example's tier label moved; update this test"
        main.write_text(text.replace('"batch"', '"interactive"'))
        converge(wd, proxy, "label update", "apply")
        _totals["steps"] += 1
        check_groups(moto, cluster, pool, wd.resource(ADDR), labels=labels)

        converge(wd, proxy, "refresh", "apply", "-refresh-only")
        _totals["steps"] += 1

        res = wd.run("destroy", rc=None, timeout=600)
        assert res.returncode == 0, f"destroy under faults\n{res}"
        _totals["steps"] += 1
        assert node_groups(moto, cluster_name) == {}, "destroy left node groups"

        injected = sum(proxy.injected.values())
        print(f"\nseed {seed}: {sum(proxy.counts.values())} AWS requests, {injected} faults "
              f"injected {dict(proxy.injected_kinds)}")
        # A run with no fault at all would prove nothing.
        assert injected >= 3, (proxy.counts, proxy.injected)
        _totals["faults"] += injected
        _totals["converged"] += 1
    finally:
        proxy.stop()
        reliability.record(
            "applies under faults converged", _totals["converged"], _totals["runs"], "all",
            _totals["converged"] == _totals["runs"],
            f"{_totals['faults']} faults injected (429/500/503/reset/lost) over "
            f"{_totals['steps']} create/update/refresh/destroy steps, rate {RATE}")


def test_a_create_whose_answer_is_lost_is_adopted_not_duplicated(aws_tf, moto):
    """Every CreateNodegroup reaches moto but its answer is lost (connection reset after
    forwarding). The retry repeats it with the same token; moto ignores tokens and says
    ResourceInUseException, so the provider describes the group, sees its own shape and
    tag, and adopts it: one group each, no error."""
    cluster_name, pool = names(aws_tf, "lost")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url, faults=RandomFaults(rate=0)).start()
    proxy.lose("CreateNodegroup", times=2)
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        wd.run("apply", timeout=600)
        # Two groups, each created once, its answer lost, and asked again once.
        assert proxy.injected_kinds["lost"] == 2, proxy.injected_kinds
        assert proxy.counts["CreateNodegroup"] == 4, proxy.counts
        # The repeat carries the first attempt's idempotency token (what real EKS uses to
        # answer it with the first group); each group has its own.
        tokens: dict[str, set] = {}
        for group, token in proxy.create_tokens:
            assert token, f"CreateNodegroup of {group} had no clientRequestToken"
            tokens.setdefault(group, set()).add(token)
        assert sorted(tokens) == sorted(f"{pool}-{s}" for s in ("od", "spot")), tokens
        assert all(len(t) == 1 for t in tokens.values()), f"a repeat changed its token: {tokens}"
        assert len({next(iter(t)) for t in tokens.values()}) == 2, f"groups share a token: {tokens}"
        check_groups(moto, cluster, pool, wd.resource(ADDR))
        assert wd.plan_is_empty()
    finally:
        proxy.stop()


def with_max_retries(wd, n: int) -> None:
    """Sets `aws.max_retries = n` in the example's provider block."""
    main = wd.path / "resource.tf"
    text = main.read_text()
    anchor = 'provider "gpu" {\n  aws {'
    assert text.count(anchor) == 1, "the example's provider block moved; update this test"
    main.write_text(text.replace(anchor, f"{anchor}\n    max_retries = {n}"))


def test_max_retries_sets_how_often_one_call_is_repeated(aws_tf, moto):
    """`aws.max_retries = 0`: one 503 on CreateNodegroup fails the apply after a single
    attempt, naming the error, with nothing created. `max_retries = 2`: two 503s in a row
    are absorbed (three attempts for the first group, one for the second)."""
    cluster_name, pool = names(aws_tf, "maxretries")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url, faults=RandomFaults(rate=0)).start()
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        with_max_retries(wd, 0)
        proxy.fail("CreateNodegroup", status=503, code="ServiceUnavailableException",
                   message="Service unavailable, try again", times=1)
        res = wd.run("apply", rc=None, timeout=600)
        assert res.returncode != 0, res
        assert "ServiceUnavailableException" in res.stderr, res
        assert "(after" not in res.stderr, "max_retries = 0 still retried\n" + res.stderr
        assert proxy.counts["CreateNodegroup"] == 1, proxy.counts
        assert node_groups(moto, cluster_name) == {}

        (wd.path / "resource.tf").write_text(
            (wd.path / "resource.tf").read_text().replace("max_retries = 0", "max_retries = 2"))
        proxy.fail("CreateNodegroup", status=503, code="ServiceUnavailableException",
                   message="Service unavailable, try again", times=2)
        before = proxy.counts["CreateNodegroup"]
        wd.run("apply", timeout=600)
        assert proxy.counts["CreateNodegroup"] - before == 4, proxy.counts
        check_groups(moto, cluster, pool, wd.resource(ADDR))
        assert wd.plan_is_empty()
        wd.run("destroy", timeout=600)
    finally:
        proxy.stop()


def test_max_retries_outside_its_range_is_refused_at_validate(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "badretries")
    tfvars = {"cluster_name": cluster_name, "pool_name": pool,
              "node_role_arn": "arn:aws:iam::123456789012:role/n", "aws_endpoint": moto.url}
    wd = aws_tf.workdir(EXAMPLE, files={"terraform.tfvars.json": json.dumps(tfvars)})
    with_max_retries(wd, 26)
    res = wd.run("validate", rc=None)
    assert res.returncode != 0, res
    assert "aws.max_retries" in res.stderr and "from 0 to 25" in res.stderr, res
