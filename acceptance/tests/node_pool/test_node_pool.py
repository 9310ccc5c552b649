"""`gpu_node_pool` on AWS against moto (EKS, EC2, IAM, STS on 127.0.0.1): the registry
example applied for real, what EKS then holds (read back with boto3, not the provider),
the cost preview against offers.csv, in-place label updates, import (command and, on
Terraform >= 1.5, `import` blocks), destroy, plan-time validation, and a second node
group failing to create.

- boto3 finds both EKS node groups: `<name>-od` ON_DEMAND 1/1/1, `<name>-spot` SPOT with
  min/max = the pool minus the on-demand floor, instance types = the state's,
  `AL2023_x86_64_NVIDIA`, the `gpu.tf/*` labels, the `nvidia.com/gpu` taint, the
  `default_labels` + `tags` + `gpu.tf/pool` tags; subnets default to the cluster's;
- the planned cost is offers.csv's price recomputed here (price x nodes at min and max,
  x 730) with a `/month` plan warning; the second plan is empty; `plan -destroy` states
  the saving (Terraform 1.15);
- `labels` are updated in place (same node group ARNs); `terraform import` and an
  `import {}` block into a fresh state plan nothing more; `export` writes the pool as an
  import block and configuration; each group change is one `audit` line;
- destroy leaves no node group; bad configs (`min_nodes > max_nodes`, unknown GPU,
  `on_demand_min > max_nodes`, `cloud = "azure"` with an EKS cluster or a GPU count Azure
  lacks) fail at plan with the attribute's line quoted and nothing created;
- a stranger's `<name>-spot` (made with boto3, no `gpu.tf/pool` tag): apply fails at
  `name` before any change, nothing is created or recorded, the stranger's group is
  untouched, and apply converges once it is gone;
- the second CreateNodegroup refused by `fault_proxy.py`: with `InvalidParameterException`
  the apply fails naming the group that exists, the state holds exactly the `-od` group
  (tainted) and the next apply converges; with `ResourceLimitExceededException` (a quota)
  the group made first is deleted and nothing is recorded;
- a floor on a capacity reservation launches through a launch template.

One moto server per module (the `moto` fixture); every test makes its own EKS cluster
(`create_eks_prerequisites`) so tests and Terraform versions never share node groups.
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from aws_emulator import create_eks_prerequisites, node_groups
from audit_check import audit_lines, check_line
from export_check import export_and_adopt
from query_check import provider_head, query_and_adopt
from fault_proxy import FaultProxy
from conftest import REPO
from offers_reference import stale_reason, stale_reasons

EXAMPLE = "resources/gpu_node_pool"
ADDR = "gpu_node_pool.train"
REGION = "us-east-1"
GPU, GPU_COUNT = "H100", 8
MIN_NODES, MAX_NODES, OD_MIN = 2, 4, 1          # as in the example
DEFAULT_LABELS = {"team": "ml", "project": "llm"}  # the example's provider block
USER_LABELS = {"workload": "training", "tier": "batch"}
USER_TAGS = {"cost-center": "research"}
USER_TAINT = {"key": "dedicated", "value": "training", "effect": "NO_SCHEDULE"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
AMI_TYPE = "AL2023_x86_64_NVIDIA"
HOURS_PER_MONTH = 730
OFFERS_CSV = REPO / "crates" / "core" / "data" / "offers.csv"


# --- helpers --------------------------------------------------------------------------

def names(terraform, what: str) -> tuple[str, str]:
    """(cluster, pool) names unique to this test and Terraform version."""
    v = terraform.version.replace(".", "")
    return f"{what}-tf{v}", f"{what[:12]}{v}"


@pytest.fixture
def aws_tf(terraform, moto, tmp_path):
    """The `terraform` fixture with the moto environment (static credentials, no IMDS,
    no shared config, dead fallback endpoint)."""
    terraform.env = moto.terraform_env(terraform.env, tmp_path / "aws")
    return terraform


def pool_workdir(tf, aws, cluster, pool: str, files: dict[str, str] | None = None,
                 subnets=True):
    """A copy of the example with a terraform.tfvars.json for `cluster` and `pool`, its
    AWS endpoint `aws.url` (the moto server, or a FaultProxy in front of it)."""
    tfvars = cluster.tfvars(aws.url)
    tfvars["pool_name"] = pool
    if not subnets:
        del tfvars["subnet_ids"]
    return tf.workdir(EXAMPLE, files={"terraform.tfvars.json": json.dumps(tfvars, indent=2),
                                      **(files or {})})


def planned(wd, address: str = ADDR) -> dict:
    """`plan -out` then `show -json`: the resource change of `address`."""
    wd.run("plan", "-out=tfplan")
    for rc in wd.show_json("tfplan").get("resource_changes", []):
        if rc["address"] == address:
            return rc
    raise AssertionError(f"{address} not in the plan")


_DIAG_START = re.compile(r"^(Error|Warning): ", re.M)


def blocks(output: str, kind: str) -> list[str]:
    """The diagnostics of `kind` ("Error" or "Warning") in `output`: with -no-color each
    starts with a `Error: `/`Warning: ` line and runs to the next one (boxes `╷ │ ╵`,
    as printed with colour, are stripped first)."""
    lines = [re.sub(r"^[╷╵]\s*$", "", re.sub(r"^│ ?", "", line))
             for line in output.splitlines()]
    text = "\n".join(lines)
    starts = [m.start() for m in _DIAG_START.finditer(text)] + [len(text)]
    return [text[a:b].strip() for a, b in zip(starts, starts[1:])
            if text[a:].startswith(f"{kind}: ")]


def label_slug(text: str) -> str:
    """Free text as a Kubernetes label value, as documented for `gpu.tf/price-source`:
    runs of characters other than letters, digits, `-` and `.` become `_`, then trimmed to
    a letter or digit at both ends, at most 63 characters."""
    out = ""
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch in "-."):
            out += ch
        elif not out.endswith("_"):
            out += "_"
    out = out.strip("_-.")[:63].rstrip("_-.")
    return out or "unknown"


def price_labels(state: dict, capacity: str) -> dict:
    """The price labels a group's nodes carry: the price the plan's cost used for them
    (the state's cost attributes), with its source and date."""
    kind = "on_demand" if capacity == "on-demand" else "spot"
    usd = state[f"{kind}_usd_per_node_hour"]
    basis = "on-demand" if kind == "on_demand" or state["spot_priced_at_on_demand"] else "spot"
    return {"gpu.tf/price-usd-per-hour": f"{usd:.6f}".rstrip("0").rstrip("."),
            "gpu.tf/priced-as": basis,
            "gpu.tf/price-source": label_slug(state[f"{kind}_price_source"]),
            "gpu.tf/price-as-of": state[f"{kind}_price_as_of"] or "undated"}


def expected_labels(pool: str, capacity: str, user: dict, state: dict) -> dict:
    return {**user, "gpu.tf/cloud": "aws", "gpu.tf/model": GPU,
            "gpu.tf/capacity-type": capacity, "gpu.tf/pool": pool,
            **price_labels(state, capacity)}


def check_groups(moto, cluster, pool: str, state: dict, labels: dict = USER_LABELS):
    """What EKS holds for the example's pool (boto3, not the provider)."""
    groups = node_groups(moto, cluster.name)
    od_name, spot_name = f"{pool}-od", f"{pool}-spot"
    assert set(groups) == {od_name, spot_name}, groups.keys()
    od, spot = groups[od_name], groups[spot_name]
    types = state["instance_types"]
    assert types and all(isinstance(t, str) for t in types), state

    assert od["capacityType"] == "ON_DEMAND", od
    assert od["scalingConfig"] == {"minSize": OD_MIN, "maxSize": OD_MIN, "desiredSize": OD_MIN}, od
    assert spot["capacityType"] == "SPOT", spot
    sc = spot["scalingConfig"]
    assert (sc["minSize"], sc["maxSize"]) == (MIN_NODES - OD_MIN, MAX_NODES - OD_MIN), spot
    assert sc["minSize"] <= sc["desiredSize"] <= sc["maxSize"], spot
    # The spot group takes the types in state order; the on-demand one may reorder them
    # by on-demand price.
    assert spot["instanceTypes"] == types, (spot["instanceTypes"], types)
    assert sorted(od["instanceTypes"]) == sorted(types), (od["instanceTypes"], types)

    for g, capacity in ((od, "on-demand"), (spot, "spot")):
        assert g["amiType"] == AMI_TYPE, g
        assert g["status"] == "ACTIVE", g
        assert g["nodeRole"] == cluster.node_role_arn, g
        assert sorted(g["subnets"]) == sorted(cluster.subnet_ids), g
        assert g["labels"] == expected_labels(pool, capacity, labels, state), g["labels"]
        taints = g.get("taints") or []
        assert GPU_TAINT in taints and USER_TAINT in taints, taints
        assert len(taints) == 2, taints
        tags = g.get("tags") or {}
        want = {**DEFAULT_LABELS, **USER_TAGS, "gpu.tf/pool": pool}
        assert {k: tags.get(k) for k in want} == want, tags

    # The state's node_groups is what EKS holds.
    by_name = {g["name"]: g for g in state["node_groups"]}
    assert set(by_name) == {od_name, spot_name}, state["node_groups"]
    for name, g in groups.items():
        s = by_name[name]
        assert s["id"] == g["nodegroupArn"], (s, g["nodegroupArn"])
        assert s["capacity"] == {"ON_DEMAND": "on-demand", "SPOT": "spot"}[g["capacityType"]], s
        assert s["image"] == AMI_TYPE, s
        assert (s["min_nodes"], s["max_nodes"]) == (
            g["scalingConfig"]["minSize"], g["scalingConfig"]["maxSize"]), (s, g["scalingConfig"])
        assert sorted(s["instance_types"]) == sorted(g["instanceTypes"]), s
    return groups


def any_unknown(v) -> bool:
    """Whether an `after_unknown` value marks anything unknown (a known list is `[false]`)."""
    if isinstance(v, list):
        return any(any_unknown(x) for x in v)
    if isinstance(v, dict):
        return any(any_unknown(x) for x in v.values())
    return v is True


def catalog_rows(instance_type: str) -> list[dict]:
    with OFFERS_CSV.open(newline="") as f:
        return [r for r in csv.DictReader(f)
                if r["cloud"] == "aws" and r["region"] == REGION
                and r["instance_type"] == instance_type and r["gpu_model"] == GPU
                and r["gpu_count"] == str(GPU_COUNT)]


def prices(rows: list[dict], column: str) -> set[float]:
    """The prices of `column` that count: not on the stale list (the provider's default)."""
    kind = column.removesuffix("_usd_per_hour")
    reasons = stale_reasons()
    return {float(r[column]) for r in rows
            if r[column] and not stale_reason(r, kind, reasons)}


# --- tests ----------------------------------------------------------------------------

def test_example_applies_and_eks_holds_both_groups(aws_tf, moto):
    """The registry example against moto; boto3 then finds the two node groups."""
    cluster_name, pool = names(aws_tf, "apply")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("validate")
    res = wd.run("apply")
    assert not res.crash_markers(), res
    state = wd.resource(ADDR)
    assert state["id"] == f"aws/{REGION}/{cluster_name}/{pool}", state
    assert state["aws"]["subnet_ids"] == cluster.subnet_ids, state["aws"]
    check_groups(moto, cluster, pool, state)
    outputs = wd.outputs()
    assert "/month" in outputs["cost"], outputs
    assert sorted(outputs["node_groups"]) == sorted([
        f"{pool}-od (on-demand, {OD_MIN}-{OD_MIN} nodes)",
        f"{pool}-spot (spot, {MIN_NODES - OD_MIN}-{MAX_NODES - OD_MIN} nodes)"]), outputs


def test_subnets_default_to_the_clusters(aws_tf, moto):
    """Without `aws.subnet_ids` the groups go to the cluster's subnets (DescribeCluster)."""
    cluster_name, pool = names(aws_tf, "subnets")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool, subnets=False)
    wd.run("apply")
    state = wd.resource(ADDR)
    assert state["aws"]["subnet_ids"] == cluster.subnet_ids, state["aws"]
    check_groups(moto, cluster, pool, state)
    assert wd.plan_is_empty()


def test_plan_shows_cost_from_catalog(aws_tf, moto):
    """Before apply, the plan's cost attributes are catalog price x nodes (offers.csv,
    recomputed here), and a warning line carries the monthly figure."""
    cluster_name, pool = names(aws_tf, "cost")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    change = planned(wd)
    assert change["change"]["actions"] == ["create"], change
    after, unknown = change["change"]["after"], change["change"].get("after_unknown") or {}
    for attr in ("hourly_usd", "hourly_usd_max", "monthly_usd", "monthly_usd_max",
                 "monthly_delta_usd", "on_demand_usd_per_node_hour", "spot_usd_per_node_hour",
                 "cost_summary", "price_source", "instance_types"):
        assert not any_unknown(unknown.get(attr)) and after.get(attr) is not None, (
            attr, after, unknown)

    types = after["instance_types"]
    rows = [r for t in types for r in catalog_rows(t)]
    assert rows, f"no offers.csv row for {types} in {REGION}"
    od_price, spot_price = after["on_demand_usd_per_node_hour"], after["spot_usd_per_node_hour"]
    assert od_price in prices(rows, "on_demand_usd_per_hour"), (od_price, types)
    spot_prices = prices(rows, "spot_usd_per_hour")
    # us-east-1's p5 spot prices are on the stale list: left out, spot is priced at the
    # on-demand price (an upper bound) and says so.
    at_on_demand = not spot_prices
    assert after["spot_priced_at_on_demand"] is at_on_demand, (after, spot_prices)
    assert spot_price in (spot_prices or {od_price}), (spot_price, types)
    # Each price's own provenance, from its own CSV columns (never the other price's).
    for kind, price in (("on_demand", od_price), ("spot", spot_price)):
        column = "on_demand" if at_on_demand else kind
        row = next(r for r in rows if r[f"{column}_usd_per_hour"]
                   and float(r[f"{column}_usd_per_hour"]) == price)
        assert after[f"{kind}_price_source"] == row[f"{column}_source"], (kind, after, row)
        assert after[f"{kind}_price_as_of"] == (row[f"{column}_as_of"] or None), (kind, after)
    dates = [after["on_demand_price_as_of"], after["spot_price_as_of"]]
    assert after["price_as_of"] == (None if None in dates else min(dates)), after

    od_at_min, spot_at_min = OD_MIN, MIN_NODES - OD_MIN
    od_at_max, spot_at_max = OD_MIN, MAX_NODES - OD_MIN
    hourly = od_price * od_at_min + spot_price * spot_at_min
    hourly_max = od_price * od_at_max + spot_price * spot_at_max
    assert after["hourly_usd"] == pytest.approx(hourly, abs=0.005), after
    assert after["hourly_usd_max"] == pytest.approx(hourly_max, abs=0.005), after
    assert after["monthly_usd"] == pytest.approx(hourly * HOURS_PER_MONTH, abs=0.01), after
    assert after["monthly_usd"] == pytest.approx(after["hourly_usd"] * HOURS_PER_MONTH, abs=0.01)
    assert after["monthly_usd_max"] == pytest.approx(hourly_max * HOURS_PER_MONTH, abs=0.01)
    assert after["monthly_delta_usd"] == pytest.approx(after["monthly_usd"], abs=0.01), after

    # The warning, as people read it and as `plan -json` reports it.
    res = wd.run("plan")
    warnings = [b for b in blocks(res.output, "Warning")
                if not b.startswith("Warning: Provider development overrides")]
    assert any("/month" in line for b in warnings for line in b.splitlines()[:15]), (
        f"no warning with /month\n{res}")
    messages = [json.loads(line) for line in wd.run("plan", "-json").stdout.splitlines()
                if line.startswith("{")]
    diags = [m["diagnostic"] for m in messages if m.get("type") == "diagnostic"]
    month = [d for d in diags if d["severity"] == "warning"
             and "/month" in d.get("summary", "")]
    assert month, diags
    # The money is the title (what `-compact-warnings` keeps); the body is two lines.
    assert month[0]["summary"] == (
        f"gpu_node_pool.{pool}: +${after['monthly_usd']:,.2f}/month "
        f"(up to ${after['monthly_usd_max']:,.2f})"), month[0]
    detail = month[0].get("detail", "")
    assert len(detail.splitlines()) == 2, detail
    # The warning names each price's date, or says it is undated.
    spot_word = "spot at the on-demand price" if at_on_demand else "spot"
    for kind, word in (("on_demand", "on-demand"), ("spot", spot_word)):
        date = after[f"{kind}_price_as_of"]
        assert (date and f"{word} of {date}" in detail) or (
            not date and f"{word} UNDATED" in detail), (kind, detail)
    compact = wd.run("plan", "-compact-warnings")
    assert f"- gpu_node_pool.{pool}: +${after['monthly_usd']:,.2f}/month" in compact.output, \
        compact.output
    assert node_groups(moto, cluster_name) == {}, "a plan created node groups"


def test_second_plan_is_empty(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "empty")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("apply")
    assert wd.plan_is_empty(), wd.run("plan", rc=None)
    wd.run("refresh")
    assert wd.plan_is_empty(), wd.run("plan", rc=None)


def test_the_floor_nodes_up_are_the_floor_groups_running_instances(aws_tf, moto):
    """EKS tags each node's instance with `eks:cluster-name` and `eks:nodegroup-name`: the
    floor's nodes up are those running. moto makes no instances for a node group, so the
    test launches them as EKS would."""
    cluster_name, pool = names(aws_tf, "floorup")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("apply")
    assert wd.resource(ADDR)["floor_nodes_up"] == 0, "no instance runs yet"
    ec2 = moto.client("ec2", REGION)
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]

    def launch(group: str, cluster: str = cluster_name) -> str:
        tags = [{"Key": "eks:cluster-name", "Value": cluster},
                {"Key": "eks:nodegroup-name", "Value": group}]
        (i,) = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1,
                                 InstanceType="p5.48xlarge",
                                 TagSpecifications=[{"ResourceType": "instance",
                                                     "Tags": tags}])["Instances"]
        return i["InstanceId"]

    launch(f"{pool}-od")
    launch(f"{pool}-spot")                          # not the floor
    launch(f"{pool}-od", cluster="another-cluster")  # another cluster's group of that name
    stopped = launch(f"{pool}-od")
    ec2.stop_instances(InstanceIds=[stopped])       # not up
    wd.run("refresh")
    assert wd.resource(ADDR)["floor_nodes_up"] == 1
    assert wd.plan_is_empty(), wd.run("plan", rc=None)


LABELS_OVERRIDE = '''
resource "gpu_node_pool" "train" {
  labels = {
    workload = "inference"
    owner    = "alice"
  }
}
'''


def test_labels_update_in_place(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "labels")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("apply")
    arns = {g["name"]: g["id"] for g in wd.resource(ADDR)["node_groups"]}

    (wd.path / "labels_override.tf").write_text(LABELS_OVERRIDE)
    change = planned(wd)
    assert change["change"]["actions"] == ["update"], change["change"]["actions"]
    text = wd.run("show", "tfplan").stdout
    assert "updated in-place" in text and "must be replaced" not in text, text
    wd.run("apply", "tfplan")

    new = {"workload": "inference", "owner": "alice"}
    state = wd.resource(ADDR)
    assert state["labels"] == new, state["labels"]
    groups = check_groups(moto, cluster, pool, state, labels=new)
    for name, g in groups.items():
        assert "tier" not in g["labels"], g["labels"]
        assert g["nodegroupArn"] == arns[name], "node group was recreated"
    assert wd.plan_is_empty(), wd.run("plan", rc=None)


def _import_id(cluster_name: str, pool: str) -> str:
    return f"aws/{REGION}/{cluster_name}/{pool}"


def _compare_imported(original: dict, imported: dict):
    for attr in ("id", "cloud", "region", "cluster", "name", "gpu", "gpu_count",
                 "instance_types", "min_nodes", "max_nodes", "labels", "tags", "capacity",
                 "taint", "aws"):
        assert imported.get(attr) == original.get(attr), (attr, imported.get(attr),
                                                          original.get(attr))
    key = lambda g: g["name"]  # noqa: E731
    assert sorted(imported["node_groups"], key=key) == sorted(original["node_groups"], key=key)


def test_import_command(aws_tf, moto):
    """`terraform import` into a fresh state with the same config: nothing to change."""
    cluster_name, pool = names(aws_tf, "import")
    cluster = create_eks_prerequisites(moto, cluster_name)
    first = pool_workdir(aws_tf, moto, cluster, pool)
    first.run("apply")
    original = first.resource(ADDR)

    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("import", ADDR, _import_id(cluster_name, pool))
    _compare_imported(original, wd.resource(ADDR))
    # The pool itself has nothing to change (the outputs are new to this state, which
    # Terraform 1.0 counts as a change, so the resource's action is checked).
    change = planned(wd)
    c = change["change"]
    differs = {k: (c["before"].get(k), c["after"].get(k)) for k in set(c["before"]) | set(c["after"])
               if c["before"].get(k) != c["after"].get(k)}
    assert c["actions"] == ["no-op"], (differs, c.get("after_unknown"))
    assert set(node_groups(moto, cluster_name)) == {f"{pool}-od", f"{pool}-spot"}


@pytest.mark.tf_min("1.5")
def test_import_block(aws_tf, moto):
    """An `import {}` block (Terraform >= 1.5): the plan imports with no other change."""
    cluster_name, pool = names(aws_tf, "importblk")
    cluster = create_eks_prerequisites(moto, cluster_name)
    first = pool_workdir(aws_tf, moto, cluster, pool)
    first.run("apply")
    original = first.resource(ADDR)

    block = f'import {{\n  to = {ADDR}\n  id = "{_import_id(cluster_name, pool)}"\n}}\n'
    wd = pool_workdir(aws_tf, moto, cluster, pool, files={"import.tf": block})
    change = planned(wd)
    assert change["change"]["actions"] == ["no-op"], change["change"]
    assert change["change"].get("importing", {}).get("id") == _import_id(cluster_name, pool)
    wd.run("apply", "tfplan")
    _compare_imported(original, wd.resource(ADDR))
    assert wd.plan_is_empty(), wd.run("plan", rc=None)


@pytest.mark.tf_min("1.5")
def test_export_writes_the_pool_as_an_import_and_configuration(aws_tf, moto, provider_bin):
    """`export` over the cluster: one import block and the pool in the provider's own
    attributes; applied with no state it imports the pool and plans nothing else."""
    cluster_name, pool = names(aws_tf, "export")
    cluster = create_eks_prerequisites(moto, cluster_name)
    first = pool_workdir(aws_tf, moto, cluster, pool)
    first.run("apply")
    original = first.resource(ADDR)
    text, wd = export_and_adopt(
        aws_tf, provider_bin, aws_tf.env,
        ["--clouds", "aws", "--kinds", "node_pool", "--cluster", cluster.arn,
         "--aws-endpoint", f"eks={moto.url}", "--aws-endpoint", f"ec2={moto.url}"], imports=1)
    assert f'id = "{_import_id(cluster_name, pool)}"' in text, text
    assert f'node_role_arn = "{cluster.node_role_arn}"' in text, text
    adopted = wd.resource(f"gpu_node_pool.{pool}")
    # The example's provider `default_labels` are written on the pool, as the cloud holds them.
    assert adopted["tags"] == {"cost-center": "research", "project": "llm", "team": "ml"}
    _compare_imported({**original, "tags": adopted["tags"]}, adopted)
    assert set(node_groups(moto, cluster_name)) == {f"{pool}-od", f"{pool}-spot"}

    if aws_tf.version != "1.0":
        # `terraform query` lists the same pool by its identity and generates the same
        # configuration, which imports it with nothing else planned.
        lists = ('list "gpu_node_pool" "eks" {\n  provider = gpu\n  config {\n'
                 f'    clusters = ["{cluster.arn}"]\n  }}\n}}\n')
        listing, generated, queried = query_and_adopt(aws_tf, provider_head(text), lists, 1)
        assert f"import_id={_import_id(cluster_name, pool)}" in listing, listing
        assert f'node_role_arn = "{cluster.node_role_arn}"' in generated, generated
        assert queried.resource("gpu_node_pool.eks_0")["node_groups"] == \
            original["node_groups"]


def test_each_group_change_is_audited_with_the_callers_arn(aws_tf, moto, tmp_path):
    """One `audit` line per node group created and deleted, in the events file: the caller
    as STS names it (`aws.endpoints.sts`), the group, the pool, the apply's money."""
    events = tmp_path / "events.jsonl"
    aws_tf.env = {**aws_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    cluster_name, pool = names(aws_tf, "audit")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    main = wd.path / "resource.tf"
    main.write_text(main.read_text().replace(
        "ec2 = var.aws_endpoint\n", "ec2 = var.aws_endpoint\n      sts = var.aws_endpoint\n", 1))
    assert "sts = var.aws_endpoint" in main.read_text()
    wd.run("apply")
    state = wd.resource(ADDR)
    wd.run("destroy")
    arn = moto.client("sts").get_caller_identity()["Arn"]
    lines = audit_lines(events)
    got = sorted((x["action"], x["target"]) for x in lines)
    assert got == sorted((a, f"{cluster_name}/{pool}-{g}") for a in
                         ("create_node_group", "delete_node_group") for g in ("od", "spot")), got
    secret = aws_tf.env.get("AWS_SECRET_ACCESS_KEY", "")
    for x in lines:
        check_line(x, [secret] if secret else [])
        assert (x["actor"], x["cloud"], x["region"], x["result"]) == (arn, "aws", "us-east-1", "ok")
        assert x["resource"] == f"gpu_node_pool.{pool}"
    created = [x for x in lines if x["action"] == "create_node_group"]
    deleted = [x for x in lines if x["action"] == "delete_node_group"]
    assert all(x["monthly_delta_usd"] == pytest.approx(state["monthly_delta_usd"]) for x in created)
    assert all(x["monthly_delta_usd"] == pytest.approx(-state["monthly_usd"]) for x in deleted)


def test_destroy_removes_node_groups(aws_tf, moto):
    cluster_name, pool = names(aws_tf, "destroy")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool)
    wd.run("apply")
    assert len(node_groups(moto, cluster_name)) == 2
    monthly = wd.resource(ADDR)["monthly_usd"]
    # Terraform >= 1.3 plans a destroy through the provider (it advertises plan_destroy):
    # the plan says what the destroy saves. 1.0 plans destroys itself, without a word.
    res = wd.run("plan", "-destroy")
    saving = f"gpu_node_pool.{pool}: -${monthly:,.2f}/month"
    if aws_tf.version == "1.0":
        assert "Destroys the pool" not in res.output, res
    else:
        assert saving in res.output, (saving, res)
    wd.run("destroy")
    eks = moto.client("eks")
    assert eks.list_nodegroups(clusterName=cluster_name)["nodegroups"] == []
    assert [r for r in wd.state_resources() if r["mode"] == "managed"] == []
    eks.delete_cluster(name=cluster_name)  # only possible with no node group left


# Override files (merged over the example's resource): each makes the pool invalid.
BAD = {
    "min_gt_max": ('  min_nodes = 5\n  max_nodes = 2\n',
                   [r"min_nodes\s*=\s*5", r"max_nodes\s*=\s*2"], None),
    "unknown_gpu": ('  gpu = "H1000"\n', [r'gpu\s*=\s*"H1000"'], None),
    "od_min_gt_max": ('  capacity {\n    spot          = true\n    on_demand_min = 9\n  }\n',
                      [r"on_demand_min\s*=\s*9"], None),
    # A valid AKS cluster id (ARM), so the only error left is the GPU count Azure lacks.
    "azure_gpu_count": ('  cloud  = "azure"\n  region = "eastus"\n  cluster = "/subscriptions/'
                        '0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/ml/providers/'
                        'Microsoft.ContainerService/managedClusters/train"\n'
                        '  gpu_count = 3\n',
                        [r"gpu_count\s*=\s*3"], r"gpu_count"),
    # An EKS cluster name where an AKS cluster must be named by its ARM id.
    "azure_cluster_name": ('  cloud  = "azure"\n  region = "eastus"\n',
                           [r"cluster\s*="], r"/subscriptions/"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_config_fails_at_plan(aws_tf, moto, case):
    """Plan fails with a diagnostic attached to the offending attribute (its source line
    is quoted), never a crash, and nothing is created."""
    body, attr_lines, phrase = BAD[case]
    cluster_name, pool = names(aws_tf, f"bad-{case.replace('_', '-')}")
    cluster = create_eks_prerequisites(moto, cluster_name)
    override = f'resource "gpu_node_pool" "train" {{\n{body}}}\n'
    wd = pool_workdir(aws_tf, moto, cluster, pool, files={"bad_override.tf": override})
    res = wd.fails("plan")
    errors = blocks(res.output, "Error")
    assert errors, res
    assert any(re.search(p, e) for e in errors for p in attr_lines), (
        f"no error quotes {attr_lines}\n{res}")
    if phrase:
        assert any(re.search(phrase, e, re.I) for e in errors), res
    assert node_groups(moto, cluster_name) == {}


def test_a_strangers_group_of_the_same_name_is_refused(aws_tf, moto):
    """`<name>-spot` already exists (made with boto3: not in any state, no `gpu.tf/pool`
    tag). Apply fails at `name` before any change: nothing is created or recorded and the
    stranger's group is untouched. With it gone, apply converges."""
    cluster_name, pool = names(aws_tf, "conflict")
    cluster = create_eks_prerequisites(moto, cluster_name)
    eks = moto.client("eks")
    blocker = eks.create_nodegroup(
        clusterName=cluster_name, nodegroupName=f"{pool}-spot",
        scalingConfig={"minSize": 1, "maxSize": 1, "desiredSize": 1},
        subnets=cluster.subnet_ids, instanceTypes=["t3.large"], nodeRole=cluster.node_role_arn,
        tags={"owner": "someone-else"})["nodegroup"]

    wd = pool_workdir(aws_tf, moto, cluster, pool)
    res = wd.fails("apply", "-auto-approve")
    errors = blocks(res.output, "Error")
    assert any(f"{pool}-spot" in e and "not this pool's" in e for e in errors), res
    assert any(re.search(r'name\s*=\s*var\.pool_name', e) for e in errors), res

    groups = node_groups(moto, cluster_name)
    assert set(groups) == {f"{pool}-spot"}, groups.keys()
    assert groups[f"{pool}-spot"]["nodegroupArn"] == blocker["nodegroupArn"]
    assert groups[f"{pool}-spot"]["tags"] == {"owner": "someone-else"}, "blocker touched"
    assert [r for r in wd.state_resources() if r["mode"] == "managed"] == []

    eks.delete_nodegroup(clusterName=cluster_name, nodegroupName=f"{pool}-spot")
    wd.run("apply")
    check_groups(moto, cluster, pool, wd.resource(ADDR))
    assert wd.plan_is_empty(), wd.run("plan", rc=None)


def test_second_group_fails_nothing_lost(aws_tf, moto, tmp_path):
    """The second CreateNodegroup is refused `InvalidParameterException` (by a fault proxy
    in front of moto), an answer that is not about capacity. Apply fails naming the group
    that exists; the state keeps the pool with exactly that group (Terraform marks it
    tainted); the next apply replaces it and converges."""
    cluster_name, pool = names(aws_tf, "partial")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url).start()
    try:
        proxy.fail("CreateNodegroup", after=1, status=400,
                   code="InvalidParameterException",
                   message="Launch template lt-0f00ba11 does not exist")
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        res = wd.fails("apply", "-auto-approve")
        assert proxy.counts["CreateNodegroup"] == 2, proxy.counts
        assert proxy.injected["CreateNodegroup"] == 1, proxy.injected
        errors = blocks(res.output, "Error")
        assert any("creating node group" in e and f"{pool}-spot" in e
                   and re.search(rf"exist now: {pool}-od\b", e) for e in errors), res

        groups = node_groups(moto, cluster_name)
        assert set(groups) == {f"{pool}-od"}, groups.keys()
        state = wd.resource(ADDR)
        assert [g["name"] for g in state["node_groups"]] == [f"{pool}-od"], state["node_groups"]
        assert state["node_groups"][0]["id"] == groups[f"{pool}-od"]["nodegroupArn"]
        assert "tainted" in wd.run("state", "show", ADDR).stdout

        wd.run("apply")
        check_groups(moto, cluster, pool, wd.resource(ADDR))
        assert wd.plan_is_empty(), wd.run("plan", rc=None)
    finally:
        proxy.stop()


def test_a_quota_answer_for_the_second_group_leaves_nothing(aws_tf, moto):
    """The second CreateNodegroup is answered `ResourceLimitExceededException` (moto has no
    quotas: a fault proxy answers it), a quota in the capacity vocabulary: the apply fails
    with one error naming the outcome and the place, deletes the group it had made, and
    records nothing; the next apply creates the pool."""
    cluster_name, pool = names(aws_tf, "quota")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url).start()
    try:
        proxy.fail("CreateNodegroup", after=1, status=400,
                   code="ResourceLimitExceededException",
                   message="Nodegroups per cluster limit exceeded")
        wd = pool_workdir(aws_tf, proxy, cluster, pool)
        res = wd.fails("apply", "-auto-approve")
        text = " ".join(res.output.split())
        assert (f"No GPU capacity for gpu_node_pool `{pool}` at aws us-east-1 "
                f"(cluster {cluster_name})") in text, res.output
        assert "EKS answered quota" in text and "ResourceLimitExceededException" in text
        assert f"the node group {pool}-od made before the refusal was deleted" in text
        assert node_groups(moto, cluster_name) == {}, node_groups(moto, cluster_name)
        assert wd.state_resources() == []
        wd.run("apply")
        check_groups(moto, cluster, pool, wd.resource(ADDR))
    finally:
        proxy.stop()


def test_api_calls_of_one_create_and_of_a_no_op_plan(aws_tf, moto):
    """Every AWS request of `apply` (new pool, subnets from the cluster) and of a plan
    with nothing to change, counted by a proxy in front of moto. moto's groups are ACTIVE
    at once, so each wait is one poll; on EKS a wait polls every 5 s doubling to 30 s."""
    cluster_name, pool = names(aws_tf, "calls")
    cluster = create_eks_prerequisites(moto, cluster_name)
    proxy = FaultProxy(moto.url).start()
    try:
        wd = pool_workdir(aws_tf, proxy, cluster, pool, subnets=False)
        wd.run("plan")
        assert sum(proxy.counts.values()) == 0, f"a plan of a new pool called AWS: {proxy.counts}"
        wd.run("apply")
        create = dict(proxy.counts)
        print(f"\nAWS calls of one create: {create}")
        # 1 DescribeCluster (subnets); DescribeNodegroup: 2 reads first, 1 poll per
        # created group, 2 reads at the end; 2 CreateNodegroup; 1 DescribeInstances (the
        # floor's nodes up).
        assert create == {"DescribeCluster": 1, "DescribeNodegroup": 6,
                          "CreateNodegroup": 2, "DescribeInstances": 1}, create
        proxy.counts.clear()
        assert wd.plan_is_empty()
        print(f"AWS calls of a no-op plan: {dict(proxy.counts)}")
        assert dict(proxy.counts) == {"DescribeNodegroup": 2, "DescribeInstances": 1}, \
            proxy.counts
    finally:
        proxy.stop()


RESERVATION_ID = "cr-0123456789abcdef0"


def reservation_override(kind: str) -> str:
    return f'''
resource "gpu_node_pool" "train" {{
  instance_types = ["p5.48xlarge"]
  reservation {{
    commitment_id    = "{RESERVATION_ID}"
    kind             = "{kind}"
    usd_per_gpu_hour = 4.5
  }}
}}
'''


@pytest.mark.parametrize("kind", ["aws_capacity_reservation", "aws_capacity_block"])
def test_a_floor_on_a_capacity_reservation_launches_through_a_launch_template(
        aws_tf, moto, kind):
    """`reservation` of an EC2 kind: the on-demand group launches through a launch template
    targeting the reservation (read from moto's EC2, not the provider; a capacity block's
    with market type capacity-block and a CAPACITY_BLOCK group), the spot group has none;
    the floor is priced at the commitment's rate; a second plan is empty; destroy deletes
    the template with its group."""
    block = kind == "aws_capacity_block"
    cluster_name, pool = names(aws_tf, "cb" if block else "odcr")
    cluster = create_eks_prerequisites(moto, cluster_name)
    wd = pool_workdir(aws_tf, moto, cluster, pool,
                      files={"reservation_override.tf": reservation_override(kind)})
    wd.run("apply")
    groups = node_groups(moto, cluster_name)
    od, spot = groups[f"{pool}-od"], groups[f"{pool}-spot"]
    template = f"gpu-tf-{cluster_name}-{pool}-od"
    ec2 = moto.client("ec2", REGION)
    (lt,) = ec2.describe_launch_templates(LaunchTemplateNames=[template])["LaunchTemplates"]
    assert od["launchTemplate"]["id"] == lt["LaunchTemplateId"], od
    assert "launchTemplate" not in spot, spot
    assert od["capacityType"] == ("CAPACITY_BLOCK" if block else "ON_DEMAND"), od
    assert od["instanceTypes"] == ["p5.48xlarge"] and spot["capacityType"] == "SPOT", od
    assert od["tags"]["gpu.tf/capacity-reservation"] == RESERVATION_ID, od["tags"]
    (version,) = ec2.describe_launch_template_versions(
        LaunchTemplateName=template)["LaunchTemplateVersions"]
    data = version["LaunchTemplateData"]
    target = data["CapacityReservationSpecification"]["CapacityReservationTarget"]
    assert target["CapacityReservationId"] == RESERVATION_ID, data
    if block:
        assert data["InstanceMarketOptions"]["MarketType"] == "capacity-block", data
    else:
        assert "InstanceMarketOptions" not in data, data
    state = wd.resource(ADDR)
    assert "1 reserved + 1–3 spot" in state["cost_summary"], state["cost_summary"]
    spot_price = state["spot_usd_per_node_hour"]
    assert state["hourly_usd"] == pytest.approx(4.5 * GPU_COUNT + spot_price, abs=1e-5), state
    # A CAPACITY_BLOCK group of ours reads back as the pool's on-demand floor: no drift.
    assert sorted(g["capacity"] for g in state["node_groups"]) == ["on-demand", "spot"]
    wd.assert_plan_empty()
    wd.run("destroy", "-auto-approve")
    assert node_groups(moto, cluster_name) == {}
    left = [t["LaunchTemplateName"] for t in ec2.describe_launch_templates()["LaunchTemplates"]]
    assert template not in left, left
