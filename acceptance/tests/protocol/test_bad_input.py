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
  at the line of the case's `main.tf` marked `# <- error` (Terraform resolves the
  provider's attribute path to that range, so a path that is missing or wrong shows up
  here).
- `valid_hint`: text of the same diagnostic saying what would be valid.

How the cases run. The validate-stage cases run in bulk: the `bulk` fixture (once per
module) makes one root configuration in which every such case directory, copied unchanged,
is a child module (`module "c_07" { source = "./07-unknown-gpu" endpoint = var.endpoint }`,
its variables passed from the root's), then runs `init`, one `validate -json` and one
`plan -json` there. Terraform reports every module's errors in one walk (each module's
`provider "gpu"` block is a configuration of its own, so one case's bad provider block
stops only that module's resources), and `plan` stops at the same validation errors, so
both give every case's diagnostics: each is given to its case by its `range.filename`
(`07-unknown-gpu/main.tf`) or, without a range, its `address` (`module.c_07...`). Each
case is still its own test, `test_bad_input_is_rejected[NN-name]`, asserting on its own
diagnostics, and when it fails it prints them (plus any that belong to no case). Running
one case (`-k 07-unknown-gpu`) puts only the selected cases in the bulk configuration.
A case whose error Terraform reports while loading the configuration (an HCL syntax error,
two blocks with one name) would stop `init`, and with it every case of the bulk: such a
case goes in `RUN_ALONE` (none today; see there). The plan-stage cases, and those in
`RUN_ALONE`, run one configuration each: `validate -json`, then `plan -json`.

Every configuration points the provider's `aws.endpoints` at a counting proxy in front of
moto (`var.endpoint`, written to `terraform.tfvars.json`), and so do `AWS_ENDPOINT_URL`
and the live price endpoints of the environment; AKS and GKE cases also point
`azure.endpoint` and `gcp.endpoint` at the Azure and Google fakes (`var.azure_endpoint`,
`var.gcp_endpoint`), with credentials that would get tokens from their token fakes. So any
cloud request a bad input let through would be counted: a case run alone asserts that its
own runs made none, a case of the bulk that the bulk runs made none (a request there could
not be told apart by case, so it fails them all); after the cases, the proxy must have seen
none, moto's log no request since it started, and the fakes' logs none at all.

Terraform 1.15 only (import blocks and `terraform_data` need >= 1.5; the cases check the
provider, not Terraform versions). Terraform runs: 3 for all the bulk cases together
(`init`, `validate`, `plan`), 2 for each case run alone, 2 for the valid baseline.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import reliability
from cloud_fakes import start_azure, start_gcp
from conftest import REPO, Result, Terraform, terraform_bin
from fault_proxy import FaultProxy, RandomFaults

CORPUS = REPO / "acceptance" / "bad-input"
CASES = json.loads((CORPUS / "cases.json").read_text())["cases"]
MARKER = "# <- error"
TF_VERSION = "1.15"
STAGES = ("validate", "plan")
# The variables a case may declare: the bulk configuration's root declares them all and
# passes each case the ones it declares.
ENDPOINT_VARIABLES = ("endpoint", "azure_endpoint", "gcp_endpoint")

# Validate-stage cases that cannot be a module of the bulk configuration and run alone,
# like the plan-stage cases. None today: every validate-stage case was tried as a module of
# one configuration under Terraform 1.15, and each gave the same diagnostics as alone (save
# the file name, now `<case>/main.tf`, and the `address`, now under `module.c_NN`).
# `Unsupported argument` (04-capacity-as-map) and `Duplicate aws block`
# (52-provider-two-aws-blocks) need the provider's schema, so Terraform reports them in the
# validate walk, module by module, like the provider's own errors; legacy `provider "gpu"`
# blocks inside child modules are accepted (the module calls have no count, for_each or
# depends_on). What would not fit: an error found while loading the configuration (tried:
# an HCL syntax error, two `resource` blocks with one name, an unknown top-level block).
# Then `init` (and `validate`) report only the load errors and no module is validated at
# all, so every case of the bulk fails with "the bulk configuration did not load" and
# init's output, which names the file; name that case here.
RUN_ALONE: frozenset[str] = frozenset()

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


def endpoint_values(state) -> dict[str, str]:
    """The value of each of ENDPOINT_VARIABLES: the counting proxy and the fakes."""
    return {"endpoint": state["proxy"].url, "azure_endpoint": state["azure"].arm.url,
            "gcp_endpoint": state["gcp"].gke.url}


def declared_variables(main_tf: str) -> list[str]:
    return re.findall(r'^variable "(\w+)"', main_tf, re.M)


def tfvars(main_tf: str, state) -> str:
    """The endpoints `main_tf` declares variables for."""
    declared = set(declared_variables(main_tf))
    return json.dumps({k: v for k, v in endpoint_values(state).items() if k in declared})


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


def matches(d: dict, case: dict, lines: set[int], filename: str = "main.tf") -> bool:
    """Whether `d` is the error `case` expects, on a marked line of `filename` (`main.tf`
    in a case's own directory, `<case>/main.tf` in the bulk configuration)."""
    if d.get("severity") != "error":
        return False
    message = text(d)
    if not names_attribute(message, case["attribute"]) or case["valid_hint"] not in message:
        return False
    if case.get("source_range", True):
        r = d.get("range") or {}
        return r.get("filename") == filename and r.get("start", {}).get("line") in lines
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


def crash_markers_in(text_: str) -> list[str]:
    return Result([], 0, text_, "").crash_markers()


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


# --- the validate-stage cases in bulk ------------------------------------------------------

def in_bulk(case: dict) -> bool:
    return case["stage"] == "validate" and case["name"] not in RUN_ALONE


def module_name(case: dict) -> str:
    """`c_07` for `07-unknown-gpu`."""
    return "c_" + case["name"].split("-", 1)[0]


def bulk_root(cases: list[dict]) -> str:
    """The root module of the bulk configuration: one module call a case, whose source is
    the case's directory (copied next to the root's main.tf) and whose arguments are the
    variables the case declares, passed from the root's."""
    out = ['terraform {\n  required_providers {\n    gpu = { source = "gpu-tf/gpu" }\n'
           '  }\n}\n']
    out += [f'variable "{v}" {{\n  type = string\n}}\n' for v in ENDPOINT_VARIABLES]
    for c in cases:
        declared = declared_variables((CORPUS / c["name"] / "main.tf").read_text())
        other = sorted(set(declared) - set(ENDPOINT_VARIABLES))
        assert not other, (f"{c['name']} declares {other}: a case may declare only "
                           f"{', '.join(ENDPOINT_VARIABLES)} (the bulk run passes those)")
        args = "".join(f"  {v} = var.{v}\n" for v in declared)
        out.append(f'module "{module_name(c)}" {{\n  source = "./{c["name"]}"\n{args}}}\n')
    return "\n".join(out)


@dataclass
class Bulk:
    """The bulk runs and their diagnostics, each given to its case."""
    path: Path
    cases: list[str]                                     # the cases it holds
    runs: dict[str, Result] = field(default_factory=dict)  # init, validate and plan
    # stage -> case name (None: no case) -> diagnostics; absent when the run gave no JSON
    diagnostics: dict[str, dict[str | None, list[dict]]] = field(default_factory=dict)
    requests: int = 0             # requests the counting proxy saw during the bulk runs
    state_files: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Bulk({str(self.path)!r}, {len(self.cases)} cases)"

    def owner(self, d: dict) -> str | None:
        """The case a diagnostic belongs to: the directory of its range's file, else the
        module of its address (`module.c_07.gpu_node_pool.pool`), else none."""
        filename = (d.get("range") or {}).get("filename") or ""
        head = filename.replace("\\", "/").split("/", 1)[0] if "/" in filename else None
        if head in self.cases:
            return head
        m = re.match(r"module\.(c_\d+)(?![\w-])", d.get("address") or "")
        if m:
            return next((c for c in self.cases if module_name({"name": c}) == m.group(1)),
                        None)
        return None

    def split(self, stage: str, diags: list[dict]) -> None:
        by_case: dict[str | None, list[dict]] = {}
        for d in diags:
            by_case.setdefault(self.owner(d), []).append(d)
        self.diagnostics[stage] = by_case


def selected_bulk_cases(session) -> list[dict]:
    """The bulk cases among the tests this session runs (all of them, unless `-k` or node
    ids select some): debugging one case builds a bulk configuration of that case alone."""
    names = {item.callspec.params["case"]["name"] for item in session.items
             if getattr(item, "originalname", None) == "test_bad_input_is_rejected"
             and hasattr(item, "callspec") and item.path.resolve() == Path(__file__).resolve()}
    return [c for c in CASES if in_bulk(c) and (not names or c["name"] in names)]


@pytest.fixture(scope="module")
def bulk(request, bad_tf, emulators) -> Bulk:
    """Every validate-stage case (not in RUN_ALONE) as a module of one configuration:
    `init`, one `validate -json` and one `plan -json`, their diagnostics given to their
    cases. Asserts nothing itself: each case's test does, on its own diagnostics."""
    cases = selected_bulk_cases(request.session)
    wd = bad_tf.workdir(files={"main.tf": bulk_root(cases),
                               "terraform.tfvars.json": json.dumps(endpoint_values(emulators))})
    for c in cases:
        shutil.copytree(CORPUS / c["name"], wd.path / c["name"])
    out = Bulk(path=wd.path, cases=[c["name"] for c in cases])
    proxy = emulators["proxy"]
    seen_before = sum(proxy.counts.values())
    # init installs the local modules (validate refuses a module that is not installed);
    # with dev_overrides it installs no provider and reaches no registry.
    out.runs["init"] = wd.run("init", "-input=false", rc=None)
    if out.runs["init"].returncode == 0:
        res = out.runs["validate"] = wd.run("validate", "-json", rc=None)
        try:
            out.split("validate", res.json()["diagnostics"])
        except (ValueError, KeyError):
            pass  # no JSON: every case fails, showing the run
        # plan validates again (the same walk, stopped at the same errors before any
        # provider is configured); it gives every case's diagnostics just as validate does.
        res = out.runs["plan"] = wd.run("plan", "-json", rc=None)
        try:
            out.split("plan", plan_diagnostics(res.stdout))
        except ValueError:
            pass
    out.requests = sum(proxy.counts.values()) - seen_before
    out.state_files = sorted(str(f.relative_to(wd.path))
                             for f in wd.path.rglob("terraform.tfstate*"))
    return out


def check_in_bulk(case: dict, bulk: Bulk, emulators) -> None:
    """One case of the bulk: what `check_alone` asserts, on this case's diagnostics."""
    name = case["name"]
    assert name in bulk.cases, f"{name} is not in the bulk configuration {bulk.path}"
    lines = marked_lines((CORPUS / name / "main.tf").read_text())
    filename = f"{name}/main.tf"
    init = bulk.runs["init"]
    assert init.returncode == 0, (
        f"the bulk configuration did not load, so none of its cases ran: a case whose error "
        f"Terraform reports while loading the configuration stops them all; name it in "
        f"RUN_ALONE (the file named below)\n{init}")
    for stage in STAGES:
        res = bulk.runs[stage]
        assert stage in bulk.diagnostics, f"{stage} of the bulk gave no JSON diagnostics\n{res}"
        own = bulk.diagnostics[stage].get(name, [])
        stray = bulk.diagnostics[stage].get(None, [])
        shown = (f"diagnostics of {name} (module.{module_name(case)}) at {stage} of the bulk "
                 f"configuration {bulk.path}:\n{describe(own)}\n"
                 f"diagnostics of no case:\n{describe(stray)}")
        noise = "\n".join([text(d) for d in own + stray] + [res.stderr] +
                          [ln for ln in res.stdout.splitlines() if not ln.startswith("{")])
        assert not crash_markers_in(noise), (
            f"crash at {stage}: {crash_markers_in(noise)}\n{shown}\n--- stderr\n{res.stderr}")
        if stage == "validate":
            assert res.returncode == 1 and res.json()["valid"] is False, (
                f"validate accepted the bulk configuration\n{res}")
        else:
            assert res.returncode == 1, f"plan did not fail\n{res}"
        hits = [d for d in own if matches(d, case, lines, filename)]
        assert hits, (f"no {stage} error names {case['attribute']!r} with "
                      f"{case['valid_hint']!r} at line {sorted(lines)} of {filename}:\n{shown}")
    assert bulk.requests == 0, (
        f"the bulk runs reached the cloud ({bulk.requests} requests; which case made them "
        f"cannot be told: select cases with -k to find it): {dict(emulators['proxy'].counts)}")
    fakes = fakes_requests(emulators)
    assert set(fakes.values()) == {0}, f"bad input reached Azure or Google: {fakes}"
    assert not bulk.state_files, f"a failed plan wrote state: {bulk.state_files}"


# --- a case alone: the plan-stage cases, and RUN_ALONE ---------------------------------------

def check_alone(case: dict, bad_tf: Terraform, emulators) -> None:
    """One case in a configuration of its own: `validate -json`, then `plan -json`."""
    proxy = emulators["proxy"]
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


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_is_rejected(case, request, bad_tf, emulators):
    results = emulators["results"]
    results[case["name"]] = False
    if in_bulk(case):
        check_in_bulk(case, request.getfixturevalue("bulk"), emulators)
    else:
        check_alone(case, bad_tf, emulators)
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
