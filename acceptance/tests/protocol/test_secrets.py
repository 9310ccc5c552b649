"""Secrets never leak (issue 6, security; AKS and GKE: issue 14; gpu_instance and the
watcher: issue 15): no secret access key, session token, Azure client secret, Entra ID
token or Google private key is written to any log, output, state, plan or emulator log,
through whole lifecycles and through applies that fail, all with `TF_LOG=trace`.

The provider runs against moto with AWS credentials that are unique random strings
(secret access key, session token and access key id, new for each test), through a whole
`gpu_node_pool` lifecycle (apply, plan to a file, `show -json` of plan and state, refresh,
`apply -refresh-only`, destroy) and through applies that fail (an `AccessDeniedException`
injected by `fault_proxy.py`, and, under Terraform 1.15 only as it takes about a minute of
connection retries, an EKS endpoint nobody listens on), all with `TF_LOG=trace`. Then
every place *we or Terraform* write is searched for the secret access key and the session
token (their first 20 characters, so a truncated print counts too):

- Terraform's `TF_LOG_PATH` file (which also holds every line the provider wrote to stderr),
- the provider's own stderr, captured separately by a wrapper the dev override points at,
- stdout and stderr of every command (the diagnostics users see),
- every file of the working directory: terraform.tfstate and its backups, the saved plan
  (a zip: each member is searched), anything else Terraform left,
- the moto server's log.

The access key id is not a secret (it is sent in every SigV4 `Authorization` header by
design, and the SDK prints it in its credential debug output): its occurrences are counted
and reported, never asserted.

The figures go to `make reliability` ("secret occurrences in logs, state, plan and errors").
"""

from __future__ import annotations

import json
import secrets
import shlex
import zipfile
from collections import Counter
from pathlib import Path

import pytest

import reliability
from aws_emulator import DEAD_ENDPOINT, create_eks_prerequisites, node_groups
from cloud_fakes import pool_config, start_azure, start_gcp
from fault_proxy import FaultProxy
from tests.node_pool.test_node_pool import ADDR, EXAMPLE, check_groups, names, pool_workdir

ROW = "secret occurrences in logs, state, plan and errors"

# Over the whole module (both Terraform versions, every test): the reliability row is
# rewritten after each test with the running totals, so the last write covers them all.
_totals: Counter[str] = Counter()        # location kind -> secret occurrences
_key_id_totals: Counter[str] = Counter()  # location kind -> access key id occurrences
_runs: list[str] = []


def fresh_credentials() -> dict[str, str]:
    """Credentials no other run (nor any fixed test value) shares, shaped like AWS's, with
    a marker so a hit is unmistakable."""
    return {
        "AWS_ACCESS_KEY_ID": "AKIA" + secrets.token_hex(8).upper(),
        "AWS_SECRET_ACCESS_KEY": "SeCrEt" + secrets.token_urlsafe(30),
        "AWS_SESSION_TOKEN": "ToKeN" + secrets.token_urlsafe(96),
    }


SECRET_VARS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
PREFIX = 20  # a value counts as written when its first 20 characters are: truncation leaks too


def needle(value: str) -> str:
    return value[:PREFIX]


class Capture:
    """Everything one test's commands wrote, by location."""

    def __init__(self, tmp: Path):
        self.tf_log = tmp / "tf-trace.log"
        self.provider_stderr = tmp / "provider-stderr.log"
        self.outputs: list[tuple[str, str]] = []  # (location, text)

    def add(self, res) -> None:
        cmd = " ".join(res.args[:2])
        self.outputs.append((f"stdout of `terraform {cmd}`", res.stdout))
        self.outputs.append((f"stderr of `terraform {cmd}`", res.stderr))


def provider_wrapper(provider_bin: Path, directory: Path, stderr_log: Path) -> Path:
    """A `terraform-provider-gpu` that runs the real binary with its stderr copied to
    `stderr_log` (and still passed to Terraform, which logs it)."""
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "terraform-provider-gpu"
    wrapper.write_text(
        "#!/usr/bin/env bash\n"
        f"exec {shlex.quote(str(provider_bin))} \"$@\" "
        f"2> >(tee -a {shlex.quote(str(stderr_log))} >&2)\n")
    wrapper.chmod(0o755)
    return wrapper


@pytest.fixture
def secret_tf(terraform, moto, provider_bin, tmp_path):
    """The `terraform` fixture against moto, with unique credentials, TF_LOG=trace into a
    file, and the provider behind a wrapper that keeps a copy of its stderr."""
    creds = fresh_credentials()
    cap = Capture(tmp_path)
    wrapper = provider_wrapper(provider_bin, tmp_path / "plugin", cap.provider_stderr)
    rc = tmp_path / "terraformrc"
    rc.write_text(
        "provider_installation {\n  dev_overrides {\n"
        f'    "registry.terraform.io/gpu-tf/gpu" = {json.dumps(str(wrapper.parent))}\n'
        "  }\n  direct {}\n}\n")
    env = moto.terraform_env(terraform.env, tmp_path / "aws")
    env.update(creds)
    env.update(TF_LOG="trace", TF_LOG_PATH=str(cap.tf_log), TF_CLI_CONFIG_FILE=str(rc),
               RUST_BACKTRACE="1")
    env.pop("TF_LOG_PROVIDER", None)
    env.pop("TF_LOG_CORE", None)
    terraform.env = env
    return terraform, creds, cap


def run(wd, cap: Capture, *args: str, rc: int | None = 0):
    res = wd.run(*args, rc=rc)
    cap.add(res)
    return res


def file_texts(root: Path) -> list[tuple[str, str]]:
    """(location, text) of every file under `root`; zip files (saved plans) member by member."""
    out = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(root)
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                for name in z.namelist():
                    out.append((f"{rel}!{name}", z.read(name).decode("utf-8", "replace")))
        else:
            out.append((str(rel), p.read_bytes().decode("utf-8", "replace")))
    return out


def kind_of(location: str) -> str:
    """The row's location kinds: tf-log, provider-stderr, command output, state, plan,
    other workdir file, moto-log."""
    if location in ("TF_LOG file", "provider stderr", "moto log"):
        return location
    if location.startswith("fake "):
        return "fake log"
    if location.startswith(("stdout of", "stderr of")):
        return "command output"
    if "tfplan" in location:  # the saved plan's members, its prior state included
        return "plan"
    if "tfstate" in location:
        return "state"
    return "workdir file"


def secret_vars(creds: dict[str, str]) -> list[str]:
    """Every credential but the access key id (which is not secret)."""
    return [v for v in creds if v != "AWS_ACCESS_KEY_ID"]


def search(creds: dict[str, str], cap: Capture, wd, moto, moto_log_start: int, label: str,
           extra: list[tuple[str, str]] = ()):
    """Counts each credential in every location (`extra`: more (location, text) pairs);
    returns {location: {var: count}}."""
    locations = [
        ("TF_LOG file", cap.tf_log.read_text(errors="replace") if cap.tf_log.exists() else ""),
        ("provider stderr", cap.provider_stderr.read_text(errors="replace")
         if cap.provider_stderr.exists() else ""),
        *cap.outputs,
        *[(f"workdir {loc}", text) for loc, text in file_texts(wd.path)],
        # moto 5.2.5 logs one line per request (method, path, status), no headers, so it is
        # counted like the rest. Were a later moto to log headers, the session token would
        # legitimately show there (it is sent as X-Amz-Security-Token on every request) and
        # this location would have to be left out of the count: the goal is what we and
        # Terraform write, not what the emulator receives.
        ("moto log", moto.log()[moto_log_start:]),
        *extra,
    ]
    # The capture must have captured something, or a zero proves nothing.
    texts = dict(locations)
    assert "provider.terraform-provider-gpu" in texts["TF_LOG file"] or \
        "terraform-provider-gpu" in texts["TF_LOG file"], "TF_LOG file holds no provider lines"
    assert len(texts["TF_LOG file"]) > 10_000, "TF_LOG=trace wrote almost nothing"
    assert texts["provider stderr"], "the wrapper captured no provider stderr"
    assert "TRACE" in texts["provider stderr"] or "DEBUG" in texts["provider stderr"], (
        "the provider did not log at trace level: TF_LOG did not reach it")

    found: dict[str, dict[str, int]] = {}
    for loc, text in locations:
        counts = {var: text.count(needle(value)) for var, value in creds.items()}
        found[loc] = counts
        kind = kind_of(loc)
        _totals[kind] += sum(counts[v] for v in secret_vars(creds))
        _key_id_totals[kind] += counts["AWS_ACCESS_KEY_ID"]
    _runs.append(label)

    leaks = {loc: {v: c[v] for v in secret_vars(creds) if c[v]} for loc, c in found.items()}
    leaks = {loc: c for loc, c in leaks.items() if c}
    key_ids = {loc: c["AWS_ACCESS_KEY_ID"] for loc, c in found.items() if c["AWS_ACCESS_KEY_ID"]}
    print(f"\n[{label}] secret occurrences: {leaks or 'none'}; "
          f"access key id (not secret, reported only): {key_ids or 'none'}")
    write_row()
    return leaks, texts


def write_row() -> None:
    n = sum(_totals.values())
    per_kind = ", ".join(f"{k} {v}" for k, v in sorted(_totals.items()))
    key_ids = ", ".join(f"{k} {v}" for k, v in sorted(_key_id_totals.items()) if v) or "none"
    detail = (f"{len(_runs)} runs ({'; '.join(_runs)}); secrets (AWS secret key and session "
              f"token; on AKS/GKE also the Azure client secret, Entra ID access tokens and "
              f"the Google service account key) by location: {per_kind}; access key id (not secret, by design in SigV4 "
              f"Authorization): {key_ids}")
    reliability.record(ROW, n, None, "0", n == 0, detail)


def leak_report(leaks: dict, texts: dict, creds: dict) -> str:
    """The first lines holding a secret, redacted, so a failure says where and what."""
    lines = []
    for loc in leaks:
        for line in texts.get(loc, "").splitlines():
            if any(needle(creds[v]) in line for v in secret_vars(creds)):
                red = line
                for v in secret_vars(creds):
                    red = red.replace(creds[v], f"<{v}>").replace(needle(creds[v]), f"<{v}...>")
                lines.append(f"{loc}: {red[:400]}")
                if len(lines) > 12:
                    return "\n".join(lines)
    return "\n".join(lines)


# --- tests ----------------------------------------------------------------------------

def test_no_secret_in_a_whole_lifecycle(secret_tf, moto):
    tf, creds, cap = secret_tf
    cluster_name, pool = names(tf, "secrets")
    cluster = create_eks_prerequisites(moto, cluster_name)
    moto_start = len(moto.log())
    wd = pool_workdir(tf, moto, cluster, pool)

    run(wd, cap, "apply")
    check_groups(moto, cluster, pool, wd.resource(ADDR))  # the credentials did work
    res = run(wd, cap, "plan", "-out=tfplan", "-detailed-exitcode", rc=None)
    assert res.returncode == 0, res
    run(wd, cap, "show", "-json", "tfplan")
    run(wd, cap, "show", "-json")
    run(wd, cap, "refresh")
    run(wd, cap, "apply", "-refresh-only")
    run(wd, cap, "destroy")
    assert node_groups(moto, cluster_name) == {}
    assert any(p.name.startswith("terraform.tfstate") for p in wd.path.iterdir())

    leaks, texts = search(creds, cap, wd, moto, moto_start, f"lifecycle tf{tf.version}")
    searched = list(texts)
    assert any(loc.startswith("workdir tfplan!") for loc in searched), searched
    assert "workdir terraform.tfstate" in searched, searched
    assert any(loc.startswith("workdir terraform.tfstate.backup") for loc in searched), searched
    assert not leaks, f"secrets written:\n{leak_report(leaks, texts, creds)}"


def test_no_secret_when_aws_denies(secret_tf, moto):
    """CreateNodegroup answered 403 AccessDeniedException: the diagnostic names the error,
    and neither it nor any log holds a secret."""
    tf, creds, cap = secret_tf
    cluster_name, pool = names(tf, "secdenied")
    cluster = create_eks_prerequisites(moto, cluster_name)
    moto_start = len(moto.log())
    proxy = FaultProxy(moto.url).start()
    try:
        proxy.fail("CreateNodegroup", status=403, code="AccessDeniedException",
                   message="User: arn:aws:sts::123456789012:assumed-role/ci/x is not "
                           "authorized to perform: eks:CreateNodegroup", times=10)
        wd = pool_workdir(tf, proxy, cluster, pool)
        res = wd.fails("apply")
        cap.add(res)
        assert proxy.injected["CreateNodegroup"] >= 1, proxy.counts
        assert "AccessDenied" in res.output or "not authorized" in res.output \
            or "unauthorized" in res.output.lower(), res
    finally:
        proxy.stop()
    assert node_groups(moto, cluster_name) == {}

    leaks, texts = search(creds, cap, wd, moto, moto_start, f"access denied tf{tf.version}")
    assert not leaks, f"secrets written:\n{leak_report(leaks, texts, creds)}"


def test_no_secret_when_eks_is_unreachable(secret_tf, moto):
    """The EKS endpoint is a closed port: the connection error the SDK reports reaches
    the diagnostic without the request it was sending. A refused connection is retried
    (8 attempts, backing off to 20 s: about a minute, which `timeouts.create` does not
    shorten), and what is logged is the provider's, so one Terraform version suffices."""
    tf, creds, cap = secret_tf
    if tf.version != "1.15":
        pytest.skip("the provider's error path; run once, under Terraform 1.15 (a minute of retries)")
    cluster_name, pool = names(tf, "secdead")
    cluster = create_eks_prerequisites(moto, cluster_name)
    moto_start = len(moto.log())
    tfvars = cluster.tfvars(DEAD_ENDPOINT)
    tfvars["pool_name"] = pool
    wd = tf.workdir(EXAMPLE, files={"terraform.tfvars.json": json.dumps(tfvars)})
    res = wd.fails("apply")
    cap.add(res)
    assert "Error" in res.output, res

    leaks, texts = search(creds, cap, wd, moto, moto_start, f"unreachable tf{tf.version}")
    assert not leaks, f"secrets written:\n{leak_report(leaks, texts, creds)}"


def test_no_azure_or_google_secret_in_aks_and_gke_lifecycles(secret_tf, moto, tmp_path):
    """The same lifecycle on AKS and GKE against the fakes, through the real credential
    chains: the Azure client secret (unique per run), every access token the local Entra
    ID issued, and the Google service account's private key (a line from the middle of its
    PEM body, in the key file GOOGLE_APPLICATION_CREDENTIALS names) are searched for."""
    tf, creds, cap = secret_tf
    if tf.version != "1.15":
        pytest.skip("the provider's credential paths; run once, under Terraform 1.15")
    client_secret = "AzSeCrEt" + secrets.token_urlsafe(30)
    azure = start_azure(tmp_path / "azure", client_secret=client_secret)
    gcp = start_gcp(tmp_path / "gcp")
    azure.arm.configure({"polls": 1, "retry_after": 1})
    gcp.gke.configure({"polls": 0})
    try:
        tf.env = gcp.env(azure.env(tf.env))
        moto_start = len(moto.log())
        places = {
            "azure": (azure, azure.cluster(f"secrets-tf{tf.version.replace('.', '')}"),
                      "eastus", "A100-80GB"),
            "gcp": (gcp, gcp.cluster(f"secrets-tf{tf.version.replace('.', '')}"),
                    "us-central1", "L4"),
        }
        workdirs = []
        for cloud, (fakes, cluster, region, gpu) in places.items():
            wd = tf.workdir(files={"main.tf": pool_config(
                fakes, cloud, cluster, "secrets", region=region, gpu=gpu, gpu_count=1)})
            run(wd, cap, "apply")
            res = run(wd, cap, "plan", "-out=tfplan", "-detailed-exitcode", rc=None)
            assert res.returncode == 0, res
            run(wd, cap, "show", "-json", "tfplan")
            run(wd, cap, "show", "-json")
            run(wd, cap, "refresh")
            run(wd, cap, "destroy")
            workdirs.append(wd)
        pem_lines = gcp.key_file.read_text()
        key_body = json.loads(pem_lines)["private_key"].splitlines()
        tokens = [t for t in azure.aad.registry._tokens]  # noqa: SLF001 (test introspection)
        assert tokens, "the Entra ID fake issued no token: the Azure chain was not used"
        all_creds = {**creds, "AZURE_CLIENT_SECRET": client_secret,
                     "GOOGLE_PRIVATE_KEY": key_body[len(key_body) // 2],
                     **{f"AZURE_ACCESS_TOKEN_{i}": t for i, t in enumerate(tokens)}}
        fake_logs = [(f"fake {name} log", json.dumps(f.state()))
                     for name, f in (("arm", azure.arm), ("entra", azure.aad),
                                     ("gke", gcp.gke), ("oauth", gcp.oauth))]
        extra = [(f"workdir {wd.path.name} {loc}", text) for wd in workdirs[:-1]
                 for loc, text in file_texts(wd.path)] + fake_logs
        leaks, texts = search(all_creds, cap, workdirs[-1], moto, moto_start,
                              f"AKS+GKE lifecycle tf{tf.version}", extra=extra)
        assert not leaks, f"secrets written:\n{leak_report(leaks, texts, all_creds)}"
    finally:
        for f in (azure.arm, azure.aad, gcp.gke, gcp.oauth):
            f.stop()


def test_no_secret_in_gpu_instance_lifecycles_and_the_watcher(secret_tf, moto, tmp_path):
    """`gpu_instance` on all three clouds (EC2 spot fake before moto, ARM VMs over HTTPS with
    the Entra ID fake, Compute Engine with a service-account key), each through apply, a
    saved plan, `show -json`, a reclaim, refresh, the watcher bringing the VM back, and
    destroy. Searched as above, plus the watcher's events and stderr and the fakes' own
    logs; the sensitive `user_data` must not be printed either (it is in state, the plan
    file and `show -json` by Terraform's design: those are left out for it)."""
    from tests.instance import test_instance_aws as aws_case
    from tests.instance import test_instance_azure as az_case
    from tests.instance import test_instance_gcp as gcp_case
    from cloud_fakes import _CLEARED, CLIENT, PROJECT, SUBSCRIPTION, TENANT
    from fakes import tls_context
    from fakes.aws.ec2_spot import Ec2Spot
    from fakes.azure.tokens import AzureAD
    from fakes.azure.vms import ArmVms
    from fakes.google.compute_instances import ComputeInstances
    from fakes.google.tokens import GoogleOAuth
    from fakes.tokens import TokenRegistry
    from watch_runner import run_watch

    tf, creds, cap = secret_tf
    if tf.version != "1.15":
        pytest.skip("the provider's credential paths; run once, under Terraform 1.15")
    client_secret = "AzSeCrEt" + secrets.token_urlsafe(30)
    user_data = "UsErDaTa" + secrets.token_urlsafe(24)
    context, ca = tls_context(tmp_path / "tls")
    az_tokens, g_tokens = TokenRegistry(), TokenRegistry()
    aad = AzureAD(az_tokens, TENANT, CLIENT, client_secret).start(ssl_context=context)
    arm = ArmVms(az_tokens).start(ssl_context=context)
    oauth = GoogleOAuth(g_tokens).start()
    key_file = oauth.write_key_file(oauth.create_service_account(PROJECT), tmp_path / "key.json")
    gce = ComputeInstances(g_tokens).start()
    ec2 = Ec2Spot(moto.url).start()
    try:
        arm.seed_subscription(SUBSCRIPTION, [az_case.RG], locations=[az_case.REGION],
                              tenant_id=TENANT)
        arm.seed_images([{"location": az_case.REGION, "publisher": "microsoft-dsvm",
                          "offer": "ubuntu-hpc", "sku": "2204", "versions": az_case.VERSIONS}])
        arm.configure({"polls": 1, "retry_after": 0})
        gce.seed_project(PROJECT)
        gce.seed_images("deeplearning-platform-release", gcp_case.IMAGES)
        gce.configure({"polls": 0})
        ec2.seed_images(aws_case.REGION, aws_case.IMAGES)
        env = {k: v for k, v in tf.env.items() if k not in _CLEARED}
        env.update({"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": CLIENT,
                    "AZURE_CLIENT_SECRET": client_secret, "AZURE_AUTHORITY_HOST": aad.url,
                    "SSL_CERT_FILE": str(ca), "GOOGLE_APPLICATION_CREDENTIALS": str(key_file)})
        tf.env = env
        moto_start = len(moto.log())
        with_data = f'  user_data = "{user_data}"\n'

        def reclaim_aws(wd):
            ec2.reclaim(wd.resource("gpu_instance.train")["id"], short=True)

        def capacity_back(cloud, wd):
            if cloud == "aws":  # EC2 restarts it itself once capacity is back
                s = wd.resource("gpu_instance.train")
                ec2.set_short(aws_case.REGION, s["instance_type"], 0)

        def reclaim_azure(wd):
            arm.reclaim(wd.resource("gpu_instance.train")["id"])

        def reclaim_gcp(wd):
            gce.reclaim(PROJECT, gcp_case.ZONE, "train")
            gce.complete()  # the preemption's stop ends: TERMINATED

        places = [
            ("aws", aws_case.config(ec2, extra=with_data), reclaim_aws,
             [f"--target=aws:{aws_case.REGION}", "--aws-endpoint", ec2.url]),
            ("azure", az_case.config(arm).replace(
                '"#cloud-config\\nruncmd: [echo hello]\\n"', f'"{user_data}"'), reclaim_azure,
             [f"--target=azure:{SUBSCRIPTION}", "--azure-endpoint", arm.url]),
            ("gcp", gcp_case.config(gce, extra=with_data), reclaim_gcp,
             [f"--target=gcp:{PROJECT}", "--gcp-endpoint", gce.url]),
        ]
        workdirs, watch_out = [], []
        for cloud, main_tf, reclaim, target in places:
            assert user_data in main_tf, cloud
            wd = tf.workdir(files={"main.tf": main_tf})
            run(wd, cap, "apply")
            res = run(wd, cap, "plan", "-out=tfplan", "-detailed-exitcode", rc=None)
            assert res.returncode == 0, res
            run(wd, cap, "show", "-json", "tfplan")
            run(wd, cap, "show", "-json")
            reclaim(wd)
            run(wd, cap, "apply", "-refresh-only")
            assert wd.resource("gpu_instance.train")["status"] == "stopped_by_reclaim", cloud
            capacity_back(cloud, wd)
            events, stderr, _ = run_watch(tf.env, [], *target)
            assert [e["event"] for e in events][-1] == "started", (cloud, events)
            watch_out += [(f"watch events {cloud}", json.dumps(events)),
                          (f"watch stderr {cloud}", stderr)]
            run(wd, cap, "destroy")
            workdirs.append(wd)
        key_body = json.loads(key_file.read_text())["private_key"].splitlines()
        az_issued = list(az_tokens._tokens)  # noqa: SLF001 (test introspection)
        # Google's chain signs its own JWTs with the key (no token exchange): the key is
        # what is searched, plus any token the OAuth fake did issue.
        g_issued = list(g_tokens._tokens)  # noqa: SLF001
        assert az_issued, "the Entra ID fake issued no token: the Azure chain was not used"
        all_creds = {**creds, "AZURE_CLIENT_SECRET": client_secret,
                     "GOOGLE_PRIVATE_KEY": key_body[len(key_body) // 2],
                     **{f"AZURE_ACCESS_TOKEN_{i}": t for i, t in enumerate(az_issued)},
                     **{f"GOOGLE_ACCESS_TOKEN_{i}": t for i, t in enumerate(g_issued)}}
        fake_logs = [(f"fake {name} log", json.dumps(f.state()))
                     for name, f in (("arm", arm), ("entra", aad), ("compute", gce),
                                     ("oauth", oauth), ("ec2", ec2))]
        extra = [(f"workdir {wd.path.name} {loc}", text) for wd in workdirs[:-1]
                 for loc, text in file_texts(wd.path)] + fake_logs + watch_out
        leaks, texts = search(all_creds, cap, workdirs[-1], moto, moto_start,
                              f"gpu_instance lifecycles tf{tf.version}", extra=extra)
        assert not leaks, f"secrets written:\n{leak_report(leaks, texts, all_creds)}"
        # `show -json` prints sensitive values by Terraform's design (marked in
        # `sensitive_values`), so its output is left out for user_data.
        printed = {loc: text.count(user_data[:PREFIX]) for loc, text in texts.items()
                   if loc.startswith(("stdout", "stderr", "provider stderr", "watch"))
                   and "terraform show" not in loc}
        assert not any(printed.values()), f"user_data printed: {printed}"
    finally:
        for f in (ec2, gce, oauth, arm, aad):
            f.stop()

