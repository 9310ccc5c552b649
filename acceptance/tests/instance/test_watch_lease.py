"""`terraform-provider-gpu watch` as replicas of a Deployment: leader election through a
`coordination.k8s.io/v1` Lease (against `fakes/kube/kube_lease.py`; no kube-apiserver is
installable here) and Prometheus metrics, over a Spot VM the Compute Engine fake reclaims.
Two watchers at once start the VM once; a standby takes over when the leader's lease runs
out or the leader gives it up on SIGTERM; an unreachable API means no starts, not a crash;
HTTPS with the cluster's CA and a rotated token work; the metrics count a reclaim and its
recovery.

The VM is created straight through the fake's REST API (as `gpu_instance` creates it: the
`gpu-tf-instance` label, Spot with termination action STOP); Terraform is not needed to
test the watcher. Starts are counted in the fake's request log.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from cloud_fakes import PROJECT, _CLEARED
from conftest import provider_bin_path
from fakes import tls_context
from fakes.google.compute_instances import ComputeInstances
from fakes.google.tokens import GoogleOAuth
from fakes.kube.kube_lease import KubeLease
from fakes.tokens import TokenRegistry

# Mostly waits (alone, 34 s wall, 1.5 s of CPU: Leases run in real time): `make
# acceptance` runs it with more workers than cores (README.md, "Scheduling").
pytestmark = pytest.mark.waits

ZONE = "us-central1-a"
NS, LEASE = "gpu", "gpu-watch"
DLVM, FAMILY = "deeplearning-platform-release", "common-cu129-ubuntu-2204-nvidia-580"


@pytest.fixture(scope="module")
def clouds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("watch-lease")
    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account(PROJECT)
    key = oauth.write_key_file(account, directory / "key.json")
    gce = ComputeInstances(tokens).start()
    api = KubeLease().start()
    yield gce, api, key, account, directory
    api.stop()
    gce.stop()
    oauth.stop()


@pytest.fixture
def env(clouds, tmp_path):
    gce, api, key, account, _ = clouds
    gce.reset()
    api.reset()
    gce.seed_project(PROJECT)
    gce.seed_images(DLVM, [{"name": f"{FAMILY}-v20251115", "family": FAMILY,
                            "creationTimestamp": "2025-11-15T00:00:00.000-08:00"}])
    gce.configure({"polls": 0, "reclaim_reads": 0})
    environment = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    environment["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    token = api.write_token_file(api.add_token(f"system:serviceaccount:{NS}:gpu-watch"),
                                 tmp_path / "token")
    return environment, token


def rest(gce, account, method: str, path: str, body=None) -> dict:
    data = json.dumps(body).encode() if body is not None else b""
    req = urllib.request.Request(
        f"{gce.url}/compute/v1/projects/{PROJECT}/zones/{ZONE}{path}", data=data,
        method=method, headers={"Authorization": "Bearer " + account.self_signed_jwt(),
                                "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def spot_vm(clouds, name: str) -> None:
    """A Spot VM as `gpu_instance` launches it, running, then reclaimed (stopped)."""
    gce, _, _, account, _ = clouds
    op = rest(gce, account, "POST", "/instances", {
        "name": name,
        "machineType": f"zones/{ZONE}/machineTypes/a2-highgpu-1g",
        "disks": [{"boot": True, "autoDelete": True, "initializeParams": {
            "diskSizeGb": "200", "sourceImage": f"projects/{DLVM}/global/images/family/{FAMILY}"}}],
        "networkInterfaces": [{"network": "global/networks/default"}],
        "scheduling": {"provisioningModel": "SPOT", "instanceTerminationAction": "STOP",
                       "onHostMaintenance": "TERMINATE", "automaticRestart": False},
        "labels": {"gpu-tf-instance": name},
    })
    rest(gce, account, "GET", f"/operations/{op['name']}")
    assert rest(gce, account, "GET", f"/instances/{name}")["status"] == "RUNNING"
    gce.reclaim(PROJECT, ZONE, name)
    assert rest(gce, account, "GET", f"/instances/{name}")["status"] == "TERMINATED"


def starts(gce, name: str) -> int:
    return sum(1 for r in gce.state()["requests"]
               if r["method"] == "POST" and r["path"].endswith(f"/instances/{name}/start"))


def watch_cmd(gce, events: Path, *flags: str) -> list[str]:
    return [str(provider_bin_path()), "watch", f"--target=gcp:{PROJECT}",
            "--gcp-endpoint", gce.url, "--events", str(events), "--interval", "1s",
            "--retry-initial", "1s", "--retry-max", "1s", *flags]


def lease_flags(api, token: Path, identity: str, duration: str = "5s") -> list[str]:
    return ["--lease-name", LEASE, "--lease-namespace", NS, "--lease-duration", duration,
            "--identity", identity, "--kube-endpoint", api.url, "--kube-token-file", str(token)]


def read_all(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def read_events(path: Path) -> list[dict]:
    """The watcher's reclaim events (its audit lines left out)."""
    return [e for e in read_all(path) if e["event"] != "audit"]


def test_two_watchers_at_once_start_the_vm_once(clouds, env, tmp_path):
    gce, api, *_ = clouds
    environment, token = env
    spot_vm(clouds, "train")
    procs = {}
    for who in ("watcher-a", "watcher-b"):
        events = tmp_path / f"{who}.jsonl"
        cmd = watch_cmd(gce, events, "--passes", "6", *lease_flags(api, token, who))
        procs[who] = (subprocess.Popen(cmd, env=environment, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True), events)
    results = {}
    for who, (proc, events) in procs.items():
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        results[who] = (read_events(events), stderr)
        print(who, stderr, *read_events(events), sep="\n")

    assert starts(gce, "train") == 1, "the VM is started exactly once"
    audited = [e for _, (proc, events) in procs.items() for e in read_all(events)
               if e["event"] == "audit"]
    assert [e["action"] for e in audited] == ["start_instance"], \
        "one audit line, the leader's start; the standby changes nothing"
    started = [w for w, (ev, _) in results.items() if any(e["event"] == "started" for e in ev)]
    assert len(started) == 1, results
    (leader,) = started
    (other,) = set(results) - {leader}
    assert [e["event"] for e in results[leader][0]] == ["reclaimed", "start_attempt", "started"]
    assert results[other][0] == [], "the standby replica does no pass"
    assert results[other][1].count("standby:") == 1, results[other][1]
    assert f"held by {leader}" in results[other][1] or "wrote the lease first" in results[other][1]
    assert "leader:" in results[leader][1]
    lease = api.lease(NS, LEASE)
    # The first write that won named the leader; it gave the Lease up at exit (no holder,
    # 1 s). The other may have taken it after that (and given it up in turn): harmless,
    # the VM was running by then.
    writes = [r["json"]["spec"]["holderIdentity"] for r in api.state()["requests"]
              if r["method"] in ("PUT", "POST") and r["status"] in (200, 201)]
    assert writes[0] == leader and set(writes) <= {leader, other, ""}, writes
    assert "released the lease" in results[leader][1]
    assert lease["spec"]["holderIdentity"] == "", lease
    # Bearer tokens went to the API and never into the output.
    assert all(r["bearer"] for r in api.state()["requests"])
    secret = token.read_text().strip()
    assert all(secret not in out for _, out in results.values())
    vm = rest(gce, clouds[3], "GET", "/instances/train")
    assert vm["status"] == "RUNNING"


def wait_for_holder(api, holder: str, timeout: float = 30) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        lease = api.lease(NS, LEASE)
        if lease and lease["spec"].get("holderIdentity") == holder:
            return lease
        time.sleep(0.1)
    raise AssertionError(f"{holder} never held the lease: {api.lease(NS, LEASE)}")


def test_a_standby_takes_over_once_a_dead_leaders_lease_runs_out(clouds, env, tmp_path):
    gce, api, *_ = clouds
    environment, token = env
    leader = subprocess.Popen(
        watch_cmd(gce, tmp_path / "a.jsonl", *lease_flags(api, token, "watcher-a", "2s")),
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_holder(api, "watcher-a")
    leader.kill()  # SIGKILL: no chance to give the lease up; it holds 2 s more
    leader.wait(timeout=10)
    spot_vm(clouds, "train")
    second = subprocess.run(
        watch_cmd(gce, tmp_path / "b.jsonl", "--passes", "6",
                  *lease_flags(api, token, "watcher-b", duration="2s")),
        env=environment, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0, second.stderr
    assert second.stderr.index("standby:") < second.stderr.index("leader:"), second.stderr
    assert [e["event"] for e in read_events(tmp_path / "b.jsonl")][-1] == "started"
    assert starts(gce, "train") == 1
    lease = api.lease(NS, LEASE)["spec"]
    assert lease["holderIdentity"] == "" and lease["leaseTransitions"] == 1, lease


def test_sigterm_gives_the_lease_up_for_an_immediate_takeover(clouds, env, tmp_path):
    """A pod stopping (rolling update): the leader releases the Lease, so the standby
    takes over at once instead of after the 30 s lease."""
    gce, api, *_ = clouds
    environment, token = env
    a = subprocess.Popen(
        watch_cmd(gce, tmp_path / "a.jsonl", *lease_flags(api, token, "watcher-a", "30s")),
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_holder(api, "watcher-a")
    b = subprocess.Popen(
        watch_cmd(gce, tmp_path / "b.jsonl", *lease_flags(api, token, "watcher-b", "30s")),
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2)
        assert api.lease(NS, LEASE)["spec"]["holderIdentity"] == "watcher-a"
        a.terminate()
        _, a_err = a.communicate(timeout=30)
        assert a.returncode == 0 and "released the lease gpu/gpu-watch" in a_err, a_err
        started = time.time()
        lease = wait_for_holder(api, "watcher-b", timeout=25)
        assert time.time() - started < 15, "well before watcher-a's 30 s lease would run out"
        assert lease["spec"]["leaseTransitions"] == 1 and lease["spec"]["leaseDurationSeconds"] == 30
        time.sleep(1)
    finally:
        b.terminate()
        _, b_err = b.communicate(timeout=30)
    assert b.returncode == 0, b_err
    assert b_err.index("standby:") < b_err.index("leader:") < b_err.index("released"), b_err


def test_an_unreachable_api_means_no_starts_not_a_crash(clouds, env, tmp_path):
    gce, api, *_ = clouds
    environment, token = env
    spot_vm(clouds, "train")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    flags = lease_flags(api, token, "watcher-a")
    flags[flags.index("--kube-endpoint") + 1] = f"http://127.0.0.1:{closed}"
    done = subprocess.run(watch_cmd(gce, tmp_path / "a.jsonl", "--passes", "2", *flags),
                          env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "standby:" in done.stderr and "did not answer" in done.stderr, done.stderr
    assert starts(gce, "train") == 0 and read_events(tmp_path / "a.jsonl") == []


def test_over_tls_with_the_ca_file_and_a_rotated_token(clouds, env, tmp_path):
    """The in-cluster shape: HTTPS with the cluster's CA, and a token the kubelet rotates
    (read again on every request: the old one is revoked mid-run, the leader keeps the
    lease)."""
    gce, *_ = clouds
    environment, _ = env
    context, ca = tls_context(tmp_path / "tls")
    with KubeLease().start(ssl_context=context) as api:
        token_file = api.write_token_file(api.add_token("system:serviceaccount:gpu:w"),
                                          tmp_path / "token")
        old = token_file.read_text().strip()
        events = tmp_path / "a.jsonl"
        flags = lease_flags(api, token_file, "watcher-a", duration="3s")
        proc = subprocess.Popen(
            watch_cmd(gce, events, "--passes", "8", "--kube-ca-file", str(ca), *flags),
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while api.lease(NS, LEASE) is None and time.time() < deadline:
            time.sleep(0.1)
        api.write_token_file(api.add_token("system:serviceaccount:gpu:w"), token_file)
        with api.lock:
            del api.tokens[old]
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        assert "leader:" in stderr and "standby" not in stderr, stderr
        log = api.state()["requests"]
        assert log and all(r["status"] in (200, 201, 404) for r in log), log  # never 401
        renewals = [r for r in log if r["method"] == "PUT"]
        assert len(renewals) >= 3, log
        assert old not in stderr
        assert "released the lease" in stderr
        assert api.lease(NS, LEASE)["spec"]["leaseTransitions"] == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port: int) -> tuple[str, str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.headers["Content-Type"], r.read().decode()


def test_metrics_count_a_reclaim_and_its_recovery(clouds, env, tmp_path):
    gce, api, *_ = clouds
    environment, token = env
    spot_vm(clouds, "train")
    gce.short_capacity(ZONE, "a2-highgpu-1g", 1)  # the first start is refused
    port = free_port()
    events = tmp_path / "events.jsonl"
    proc = subprocess.Popen(
        watch_cmd(gce, events, "--passes", "60", "--metrics-addr", f"127.0.0.1:{port}",
                  *lease_flags(api, token, "watcher-a")),
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        text, ctype = "", ""
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                ctype, text = scrape(port)
            except OSError:
                text = ""
            if "gpu_watch_recoveries_total{" in text:
                break
            time.sleep(0.3)
        print(text)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert ctype == "text/plain; version=0.0.4; charset=utf-8", ctype
    labels = '{cloud="gcp",region="us-central1",gpu="A100-40GB"}'
    samples = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
               for line in text.splitlines() if line and not line.startswith("#")}
    assert samples[f"gpu_watch_reclaims_total{labels}"] == 1, text
    attempts = '{cloud="gcp",region="us-central1",gpu="A100-40GB",result="%s"}'
    assert samples["gpu_watch_start_attempts_total" + attempts % "failed"] == 1, text
    assert samples["gpu_watch_start_attempts_total" + attempts % "accepted"] == 1, text
    assert samples[f"gpu_watch_recoveries_total{labels}"] == 1, text
    assert f"gpu_watch_gave_up_total{labels}" not in samples
    assert samples[f"gpu_watch_time_to_running_seconds_count{labels}"] == 1, text
    assert samples['gpu_watch_stopped_vms{cloud="gcp"}'] == 0, text
    assert samples["gpu_watch_leader"] == 1, text
    assert abs(samples["gpu_watch_last_pass_timestamp_seconds"] - time.time()) < 60, text
    assert "# TYPE gpu_watch_reclaims_total counter" in text
    assert "# TYPE gpu_watch_time_to_running_seconds histogram" in text
    kinds = [e["event"] for e in read_events(events)]
    assert kinds == ["reclaimed", "start_attempt", "start_attempt", "started"], (kinds, stderr)
    assert starts(gce, "train") == 2
