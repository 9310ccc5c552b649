"""The bad input corpus (`acceptance/bad-input/`, issue 6): every malformed configuration
is rejected with an error that names the attribute, attached to its source line, and says
what would be valid; nothing crashes; and no request reaches the cloud.

Each case is `bad-input/<NN-name>/main.tf`, described in `bad-input/cases.json`:

- `stage`: `validate` when `terraform validate` must already fail (then `plan` must fail
  the same way), `plan` when the input is valid in shape and only `plan` can tell (values
  known only then, the provider's configure step, data source reads, the budget, import).
- `attribute`: the attribute path the error names, as the provider writes it
  (`capacity.on_demand_min`, `labels["Bad Key"]`, `taint[0].effect`). The diagnostic's
  summary or detail must name it (the whole path, or its last attribute name plus every map
  key in it) and, unless `source_range` is false, Terraform's JSON diagnostic must point
  at the line of `main.tf` marked `# <- error` (Terraform resolves the provider's attribute
  path to that range, so a path that is missing or wrong shows up here).
- `valid_hint`: text of the same diagnostic saying what would be valid.

Every configuration points the provider's `aws.endpoints` at a counting proxy in front of
moto (`var.endpoint`, written to `terraform.tfvars.json`), and so do `AWS_ENDPOINT_URL`
and the live price endpoints of the environment; AKS and GKE cases also point
`azure.endpoint` and `gcp.endpoint` at the Azure and Google fakes (`var.azure_endpoint`,
`var.gcp_endpoint`), with credentials that would get tokens from their token fakes. So any
cloud request a bad input let through would be counted; after the cases, the proxy must
have seen none, moto's log no request since it started, and the fakes' logs none at all.

Terraform 1.15 only (import blocks and `terraform_data` need >= 1.5; the cases check the
provider, not Terraform versions), which keeps the file well under a minute.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

import reliability
from cloud_fakes import start_azure, start_gcp
from conftest import REPO, Terraform, terraform_bin
from fault_proxy import FaultProxy, RandomFaults

CORPUS = REPO / "acceptance" / "bad-input"
CASES = json.loads((CORPUS / "cases.json").read_text())["cases"]
MARKER = "# <- error"
TF_VERSION = "1.15"
STAGES = ("validate", "plan")

# A request line in moto's (werkzeug's) log: `"POST / HTTP/1.1" 200 -`.
_MOTO_REQUEST = re.compile(r'"[A-Z]+ \S+ HTTP/[0-9.]+"')
# `name`, `["key"]` or `[0]`: the segments of an attribute path.
_SEGMENT = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


def moto_requests(moto) -> int:
    return len(_MOTO_REQUEST.findall(moto.log()))


@pytest.fixture(scope="module")
def emulators(moto, tmp_path_factory):
    """A counting proxy in front of moto, and the figures recorded after every case."""
    proxy = FaultProxy(moto.url, faults=RandomFaults(rate=0.0)).start()
    azure = start_azure(tmp_path_factory.mktemp("azure"))
    gcp = start_gcp(tmp_path_factory.mktemp("gcp"))
    state = {"proxy": proxy, "moto_before": moto_requests(moto), "results": {},
             "azure": azure, "gcp": gcp}
    try:
        yield state
    finally:
        proxy.stop()
        fake_requests = fakes_requests(state)
        for f in (azure.arm, azure.aad, gcp.gke, gcp.oauth):
            f.stop()
        results = state["results"]
        requests = (sum(proxy.counts.values()) + moto_requests(moto) - state["moto_before"]
                    + sum(fake_requests.values()))
        if len(results) == len(CASES):  # the whole corpus ran: record it
            rejected = sum(1 for ok in results.values() if ok)
            failed = sorted(n for n, ok in results.items() if not ok)
            stages = {s: sum(1 for c in CASES if c["stage"] == s) for s in STAGES}
            by_cloud = {"EKS": 0, "AKS": 0, "GKE": 0}
            for c in CASES:
                by_cloud[case_service((CORPUS / c["name"] / "main.tf").read_text())] += 1
            detail = (f"{by_cloud['EKS']} EKS or provider-wide, {by_cloud['AKS']} AKS, "
                      f"{by_cloud['GKE']} GKE cases; "
                      f"{stages['validate']} at validate, {stages['plan']} at plan; error names "
                      f"the attribute, points at its line and says what is valid; "
                      f"Terraform {TF_VERSION}")
            if failed:
                detail += f"; not rejected properly: {', '.join(failed)}"
            reliability.record("bad input configs rejected", rejected, len(CASES), "all",
                               rejected == len(CASES), detail)
            reliability.record("requests reaching the emulators from bad input", requests, None,
                               "0", requests == 0,
                               f"counting proxy {dict(proxy.counts) or '{}'}, moto log, "
                               f"Azure and Google fakes {fake_requests}")


def case_service(main_tf: str) -> str:
    """The managed Kubernetes service a case's pool (or import id) is on."""
    if re.search(r'cloud\s*=\s*"azure"|id\s*=\s*"azure/', main_tf):
        return "AKS"
    if re.search(r'cloud\s*=\s*"gcp"|id\s*=\s*"gcp/', main_tf):
        return "GKE"
    return "EKS"


def fakes_requests(state) -> dict[str, int]:
    """Requests each Azure and Google fake (token endpoints included) has served."""
    azure, gcp = state["azure"], state["gcp"]
    return {name: len(f.state()["requests"]) for name, f in
            (("arm", azure.arm), ("entra", azure.aad), ("gke", gcp.gke), ("oauth", gcp.oauth))}


def tfvars(main_tf: str, state) -> str:
    """The endpoints `main_tf` declares variables for."""
    values = {"endpoint": state["proxy"].url, "azure_endpoint": state["azure"].arm.url,
              "gcp_endpoint": state["gcp"].gke.url}
    declared = set(re.findall(r'^variable "(\w+)"', main_tf, re.M))
    return json.dumps({k: v for k, v in values.items() if k in declared})


@pytest.fixture(scope="module")
def bad_tf(tf_env, moto, emulators, tmp_path_factory) -> Terraform:
    """Terraform 1.15 whose every way out goes through the counting proxy."""
    tmp = tmp_path_factory.mktemp("bad-input")
    url = emulators["proxy"].url
    env = moto.terraform_env(tf_env, tmp / "aws")
    env.update(AWS_ENDPOINT_URL=url, GPU_PRICES_AWS_ENDPOINT=url,
               GPU_PRICES_AWS_EC2_ENDPOINT=url, GPU_PRICES_AZURE_ENDPOINT=url,
               GPU_PRICES_GCP_ENDPOINT=url)
    env = emulators["gcp"].env(emulators["azure"].env(env))
    return Terraform(version=TF_VERSION, bin=terraform_bin(TF_VERSION), env=env, tmp_path=tmp)


# --- matching a diagnostic to a case ---------------------------------------------------

def text(d: dict) -> str:
    return f"{d.get('summary', '')}\n{d.get('detail', '')}"


def names_attribute(message: str, attribute: str) -> bool:
    """Whether `message` names `attribute`: the whole path, or its last attribute name (as
    a word) plus every map key in it. Indexes are left to the source range."""
    def said(word: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", message) is not None

    if said(attribute):
        return True
    names, keys = [], []
    for name, key, _index in _SEGMENT.findall(attribute):
        if name:
            names.append(name)
        elif key:
            keys.append(key.replace('\\"', '"'))
    assert names, f"cannot parse attribute path {attribute!r}"
    return said(names[-1]) and all(k in message for k in keys)


def marked_lines(main_tf: str) -> set[int]:
    return {i for i, line in enumerate(main_tf.splitlines(), 1) if MARKER in line}


def matches(d: dict, case: dict, lines: set[int]) -> bool:
    if d.get("severity") != "error":
        return False
    message = text(d)
    if not names_attribute(message, case["attribute"]) or case["valid_hint"] not in message:
        return False
    if case.get("source_range", True):
        r = d.get("range") or {}
        return r.get("filename") == "main.tf" and r.get("start", {}).get("line") in lines
    return True


def describe(diags: list[dict]) -> str:
    out = []
    for d in diags:
        r = d.get("range") or {}
        where = f"{r.get('filename')}:{r.get('start', {}).get('line')}" if r else "no range"
        out.append(f"  [{d.get('severity')}] {where}: {text(d).strip()}")
    return "\n".join(out) or "  (no diagnostics)"


def plan_diagnostics(stdout: str) -> list[dict]:
    """The diagnostics of `plan -json` (one JSON message a line)."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            m = json.loads(line)
            if m.get("type") == "diagnostic":
                out.append(m["diagnostic"])
    return out


# --- the corpus itself -------------------------------------------------------------------

def test_corpus_is_well_formed():
    """At least 32 cases, one directory each, named and described in cases.json, with the
    offending line marked wherever Terraform can point at it."""
    assert len(CASES) >= 32, len(CASES)
    dirs = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    assert dirs == sorted(c["name"] for c in CASES), "cases.json and the directories differ"
    for i, c in enumerate(CASES, 1):
        assert re.fullmatch(rf"{i:02d}-[a-z0-9-]+", c["name"]), c["name"]
        assert c["stage"] in STAGES, c
        assert c["attribute"] and c["valid_hint"], c
        main_tf = (CORPUS / c["name"] / "main.tf").read_text()
        has_marker = bool(marked_lines(main_tf))
        assert has_marker == c.get("source_range", True), (
            f"{c['name']}: a `{MARKER}` line is needed exactly when source_range is not false")
        assert "var.endpoint" in main_tf and "endpoints" in main_tf, (
            f"{c['name']}: the provider's aws endpoints must point at var.endpoint")
        for cloud in ("azure", "gcp"):
            if re.search(rf'cloud\s*=\s*"{cloud}"', main_tf):
                assert f"endpoint = var.{cloud}_endpoint" in " ".join(main_tf.split()), (
                    f"{c['name']}: a {cloud} pool's provider `{cloud}.endpoint` must point at "
                    f"var.{cloud}_endpoint (the fake that counts requests)")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_is_rejected(case, bad_tf, emulators):
    results, proxy = emulators["results"], emulators["proxy"]
    results[case["name"]] = False
    seen_before = sum(proxy.counts.values())
    src = CORPUS / case["name"]
    main_tf = (src / "main.tf").read_text()
    lines = marked_lines(main_tf)
    wd = bad_tf.workdir(files={
        "main.tf": main_tf,
        "terraform.tfvars.json": tfvars(main_tf, emulators),
    })

    res = wd.run("validate", "-json", rc=None)
    assert not res.crash_markers(), f"crash at validate: {res.crash_markers()}\n{res}"
    assert res.returncode in (0, 1), str(res)
    doc = res.json()
    if case["stage"] == "validate":
        assert res.returncode == 1 and doc["valid"] is False, f"validate accepted it\n{res}"
        hits = [d for d in doc["diagnostics"] if matches(d, case, lines)]
        assert hits, (f"no validate error names {case['attribute']!r} with "
                      f"{case['valid_hint']!r} at line {sorted(lines)}:\n"
                      f"{describe(doc['diagnostics'])}")
    else:
        assert res.returncode == 0 and doc["valid"] is True, (
            f"stage is plan, but validate already fails (move the case to validate?)\n"
            f"{describe(doc['diagnostics'])}")

    # plan too for every case: it validates again, configures the provider and reads data
    # sources, which is where a cloud call could slip out.
    res = wd.run("plan", "-json", rc=None)
    assert not res.crash_markers(), f"crash at plan: {res.crash_markers()}\n{res}"
    assert res.returncode == 1, f"plan did not fail\n{res}"
    diags = plan_diagnostics(res.stdout)
    hits = [d for d in diags if matches(d, case, lines)]
    assert hits, (f"no plan error names {case['attribute']!r} with {case['valid_hint']!r} "
                  f"at line {sorted(lines)}:\n{describe(diags)}")

    new = sum(proxy.counts.values()) - seen_before
    assert new == 0, f"bad input reached the cloud: {dict(proxy.counts)}"
    fakes = fakes_requests(emulators)
    assert set(fakes.values()) == {0}, f"bad input reached Azure or Google: {fakes}"
    assert not list(wd.path.glob("terraform.tfstate*")), "a failed plan wrote state"
    shutil.rmtree(wd.path, ignore_errors=True)
    results[case["name"]] = True


# The control: the corpus's valid parts together, with a cluster name known only after
# apply (as when the same configuration creates the EKS cluster). It must plan, so each case
# fails because of its marked line and nothing else.
BASELINE = """
terraform {
  required_providers {
    gpu = { source = "gpu-tf/gpu" }
  }
}

variable "endpoint" {
  type = string
}

provider "gpu" {
  aws {
    endpoints = {
      ec2     = var.endpoint
      eks     = var.endpoint
      pricing = var.endpoint
    }
  }
  default_labels = { team = "ml" }
  budget         = { max_monthly_usd = 1000000 }
}

resource "terraform_data" "cluster" {
  input = "bad-input"
}

resource "gpu_node_pool" "pool" {
  cloud     = "aws"
  region    = "us-east-1"
  cluster   = terraform_data.cluster.output
  name      = "pool"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 2

  capacity {
    spot          = true
    on_demand_min = 1
  }
  labels = { team = "ml" }
  tags   = { owner = "me" }
  taint {
    key    = "dedicated"
    effect = "NoSchedule"
  }
  timeouts {
    create = "45m"
    delete = "30m"
  }
  aws {
    node_role_arn = "arn:aws:iam::123456789012:role/nodes"
    subnet_ids    = ["subnet-0123456789abcdef0"]
  }
}

data "gpu_offers" "h100" {
  gpu                    = "H100"
  clouds                 = ["aws", "gcp"]
  regions                = ["us-*"]
  capacity               = "either"
  max_price_per_gpu_hour = 20
  limit                  = 3
}

data "gpu_spot_offer" "best" {
  gpu = "H100"
}

data "gpu_models" "nvidia" {
  vendor = "nvidia"
}
"""


def test_the_valid_baseline_plans(bad_tf, emulators):
    proxy = emulators["proxy"]
    seen_before = sum(proxy.counts.values())
    wd = bad_tf.workdir(files={"main.tf": BASELINE,
                               "terraform.tfvars.json": json.dumps({"endpoint": proxy.url})})
    wd.run("validate")
    res = wd.run("plan", "-json", rc=None)
    assert res.returncode == 0, describe(plan_diagnostics(res.stdout))
    assert not res.crash_markers(), res
    assert sum(proxy.counts.values()) == seen_before, proxy.counts


def test_no_request_reached_the_emulators(emulators, moto):
    """After the corpus (this test runs last in the file): the counting proxy saw nothing
    and moto's log has no request since the module's first."""
    assert dict(emulators["proxy"].counts) == {}, emulators["proxy"].counts
    assert moto_requests(moto) == emulators["moto_before"], moto.log()
    assert set(fakes_requests(emulators).values()) == {0}, fakes_requests(emulators)
