"""The test-only time scale (`GPU_TF_TIME_SCALE`, fakes/README.md "Time scale"): the fakes
wait out every span of cloud time they spend in real time multiplied by one factor (AKS
and GKE operations that end by themselves after `op_seconds`, holds, FaultProxy's
`settle_after`), while what they say in the protocol (`Retry-After`, durations and
timestamps in bodies) stays cloud time. Over plain HTTP with urllib only, as
`test_fakes.py`.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fakes import TIME_SCALE_VAR, FakeServer, scaled, time_scale
from fakes.azure.aks import ArmAks
from fakes.azure.commitments import ArmCommitments
from fakes.azure.tokens import AzureAD
from fakes.google.gke import Gke
from fakes.test_fakes import (CLIENT, CLUSTER, GKE_CLUSTER, LOCATION, PROJECT, REGION, RG, SECRET,
                              SUB, TENANT, azure_token, cluster_url, gke_url, gpu_node_pool,
                              gpu_pool)
from fakes.testing import call, state
from fault_proxy import FaultProxy, RandomFaults

# Mostly waits (alone, 4.7 s wall, 0.8 s of CPU: timings at real time): `make acceptance`
# runs it with more workers than cores (README.md, "Scheduling").
pytestmark = pytest.mark.waits

FAST = 0.01  # 10 s of cloud time are 0.1 s


def waited(until, limit: float = 5.0, step: float = 0.02) -> float:
    """Calls `until()` every `step` until it is true; the real seconds that took (fails
    after `limit`)."""
    t0 = time.monotonic()
    while not until():
        assert time.monotonic() - t0 < limit, "never happened"
        time.sleep(step)
    return time.monotonic() - t0


# --- the factor -----------------------------------------------------------------------------

def test_the_factor_comes_from_the_environment_and_defaults_to_real_time(monkeypatch):
    monkeypatch.delenv(TIME_SCALE_VAR, raising=False)
    assert time_scale() == 1.0 and scaled(10) == 10.0
    for text, factor in [("0.01", 0.01), (" 1 ", 1.0), ("", 1.0), ("  ", 1.0), ("0.5", 0.5)]:
        monkeypatch.setenv(TIME_SCALE_VAR, text)
        assert time_scale() == factor
    monkeypatch.setenv(TIME_SCALE_VAR, "0.01")
    assert scaled(10) == pytest.approx(0.1)
    assert time_scale(1) == 1.0 and scaled(10, 0.5) == 5.0  # given: the environment's unread


@pytest.mark.parametrize("bad", ["0", "-0.5", "1.5", "fast", "nan", "inf"])
def test_a_factor_outside_zero_to_one_is_refused(monkeypatch, bad):
    monkeypatch.setenv(TIME_SCALE_VAR, bad)
    with pytest.raises(ValueError, match=TIME_SCALE_VAR):
        time_scale()
    with pytest.raises(ValueError, match="greater than 0 and at most 1"):
        FakeServer()
    assert FakeServer(time_scale=1).time_scale == 1.0  # a test that opts out is unaffected
    with pytest.raises(ValueError):
        time_scale(bad)


def test_every_fake_takes_the_environments_factor_unless_given_one(monkeypatch, registry):
    monkeypatch.setenv(TIME_SCALE_VAR, "0.05")
    with ArmAks(registry) as arm, Gke(registry, time_scale=1) as gke:
        assert arm.time_scale == 0.05 and gke.time_scale == 1.0
        assert state(arm)["settings"]["time_scale"] == 0.05
        assert state(arm)["settings"]["op_seconds"] == 10.0  # cloud time, as configured
        assert state(gke)["settings"]["time_scale"] == 1.0
    assert FaultProxy("http://127.0.0.1:9", faults=RandomFaults(0)).time_scale == 0.05


# --- AKS and GKE: operations that end by themselves, holds -------------------------------------

@pytest.fixture
def aad(registry):
    with AzureAD(registry, TENANT, CLIENT, SECRET, time_scale=1) as server:
        yield server


@pytest.fixture
def arm_auth(aad):
    reply = azure_token(aad)
    assert reply.status == 200, reply.raw
    return {"Authorization": "Bearer " + reply.json["access_token"]}


@pytest.fixture
def gke_auth(account):
    return {"Authorization": "Bearer " + account.self_signed_jwt()}


class AksCloud:
    """An agent pool PUT on the ARM fake, and its operation read through
    `Azure-AsyncOperation`."""

    busy, accepted, running, done = 409, 201, "InProgress", "Succeeded"

    def __init__(self, registry, auth, scale: float):
        self.fake, self.auth = ArmAks(registry, time_scale=scale).start(), auth
        self.fake.seed_cluster(SUB, RG, CLUSTER, REGION, tenant_id=TENANT)

    def mutate(self):
        return call("PUT", cluster_url(self.fake, "/agentPools/gpu1"), gpu_pool(),
                    headers=self.auth)

    def status(self, reply) -> str:
        return call("GET", reply.headers["Azure-AsyncOperation"],
                    headers=self.auth).json["status"]

    def hold(self, seconds: float) -> None:  # through the control surface: cloud time
        call("POST", self.fake.url + "/_fake/faults",
             {"hold": {"cluster": CLUSTER, "seconds": seconds}})


class GkeCloud:
    """A node pool create on the GKE fake, and its operation read with `operations.get`."""

    busy, accepted, running, done = 400, 200, "RUNNING", "DONE"

    def __init__(self, registry, auth, scale: float):
        self.fake, self.auth = Gke(registry, time_scale=scale).start(), auth
        self.fake.seed_cluster(PROJECT, LOCATION, GKE_CLUSTER)

    def mutate(self):
        return call("POST", gke_url(self.fake, "/nodePools"), gpu_node_pool(),
                    headers=self.auth)

    def status(self, reply) -> str:
        return call("GET", reply.json["selfLink"], headers=self.auth).json["status"]

    def hold(self, seconds: float) -> None:  # the method: cloud time as well
        self.fake.hold(GKE_CLUSTER, seconds)


@pytest.fixture(params=["aks", "gke"])
def cloud(request, registry):
    """A factory of the AKS or GKE fake at a time scale whose operations end only by time
    (10 s of cloud time; polls never end them)."""
    made = []

    def start(scale: float):
        if request.param == "aks":
            fake = AksCloud(registry, request.getfixturevalue("arm_auth"), scale)
        else:
            fake = GkeCloud(registry, request.getfixturevalue("gke_auth"), scale)
        fake.fake.configure({"polls": 10**6, "op_seconds": 10})
        made.append(fake.fake)
        return fake

    yield start
    for fake in made:
        fake.stop()


def test_an_operation_of_ten_seconds_ends_in_a_tenth_at_a_hundredth(cloud):
    c = cloud(FAST)
    t0 = time.monotonic()
    reply = c.mutate()
    assert reply.status == c.accepted, reply.raw
    took = waited(lambda: c.status(reply) == c.done)
    assert 0.1 <= time.monotonic() - t0 and took < 2.0  # unscaled: 10 s
    assert state(c.fake)["settings"]["op_seconds"] == 10.0  # kept as given: cloud time


def test_at_real_time_an_operation_of_ten_seconds_still_runs_after_a_fifth(cloud,
                                                                            monkeypatch):
    monkeypatch.setenv(TIME_SCALE_VAR, str(FAST))  # time_scale=1 wins over the environment
    c = cloud(1)
    reply = c.mutate()
    time.sleep(0.2)
    assert c.status(reply) == c.running


def test_a_hold_of_ten_seconds_ends_within_a_second_at_a_hundredth(cloud):
    c = cloud(FAST)
    t0 = time.monotonic()
    c.hold(10)
    first = c.mutate()
    assert first.status == c.busy or time.monotonic() - t0 >= 0.1, first.raw
    waited(lambda: c.mutate().status == c.accepted)
    assert 0.1 <= time.monotonic() - t0 < 2.0  # unscaled: 10 s
    held = state(c.fake)["operations"][0]
    assert held.get("seconds", held.get("fake", {}).get("seconds")) == 10.0  # cloud time


# --- Retry-After -------------------------------------------------------------------------------

def test_retry_after_is_cloud_time_and_never_scaled(registry, arm_auth):
    arm = ArmAks(registry, time_scale=FAST).start()
    try:
        arm.seed_cluster(SUB, RG, CLUSTER, REGION, tenant_id=TENANT)
        arm.configure({"retry_after": 7, "polls": 5})
        put = call("PUT", cluster_url(arm, "/agentPools/gpu1"), gpu_pool(), headers=arm_auth)
        assert put.headers["Retry-After"] == "7"
        status = call("GET", put.headers["Azure-AsyncOperation"], headers=arm_auth)
        assert status.json["status"] == "InProgress" and status.headers["Retry-After"] == "7"
        arm.inject("GET", "/agentPools", status=429, retry_after=30)
        throttled = call("GET", cluster_url(arm, "/agentPools"), headers=arm_auth)
        assert throttled.status == 429 and throttled.headers["Retry-After"] == "30"
    finally:
        arm.stop()


def test_gke_retry_after_is_not_scaled(registry, gke_auth):
    gke = Gke(registry, time_scale=FAST).start()
    try:
        gke.seed_cluster(PROJECT, LOCATION, GKE_CLUSTER)
        gke.inject("GET", "/nodePools", status=429, retry_after=30)
        throttled = call("GET", gke_url(gke, "/nodePools"), headers=gke_auth)
        assert throttled.status == 429 and throttled.headers["Retry-After"] == "30"
    finally:
        gke.stop()


# --- clocks of cloud time ---------------------------------------------------------------------

def test_a_commitment_clock_is_not_sped_up(registry):
    """Dates in answers are cloud time: a fake's clock stays the wall clock (moved only by
    the test's `/_fake/clock`), whatever the scale."""
    with ArmCommitments(registry, time_scale=FAST) as arm:
        time.sleep(0.2)
        clock = dt.datetime.fromisoformat(state(arm)["clock"].replace("Z", "+00:00"))
        assert abs(clock - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(seconds=5)


# --- FaultProxy ----------------------------------------------------------------------------------

class _Eks(BaseHTTPRequestHandler):
    """An upstream that answers CreateNodegroup and DescribeNodegroup with an ACTIVE group,
    as moto does."""

    protocol_version = "HTTP/1.1"

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = json.dumps({"nodegroup": {"nodegroupName": "ng1", "status": "ACTIVE"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def eks():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Eks)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def describe(proxy) -> str:
    return call("GET", proxy.url + "/clusters/c1/node-groups/ng1").json["nodegroup"]["status"]


@pytest.mark.parametrize("scale", [FAST, 1])
def test_fault_proxy_settles_a_node_group_after_scaled_seconds(eks, scale):
    proxy = FaultProxy(eks, faults=RandomFaults(0), time_scale=scale).start()
    try:
        proxy.settle_after(10)
        t0 = time.monotonic()
        created = call("POST", proxy.url + "/clusters/c1/node-groups", {"nodegroupName": "ng1"})
        assert created.status == 200
        assert describe(proxy) == "CREATING" or time.monotonic() - t0 >= 10 * scale
        if scale == 1:
            time.sleep(0.2)
            assert describe(proxy) == "CREATING"
        else:
            waited(lambda: describe(proxy) == "ACTIVE")
            assert 0.1 <= time.monotonic() - t0 < 2.0  # unscaled: 10 s
    finally:
        proxy.stop()
