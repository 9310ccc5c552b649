"""Many `gpu_node_pool` on one AKS or GKE cluster (issue 26), each test once per cloud (ids
`aks`, `gke`), through real Terraform 1.15 at its default parallelism, against fakes that
refuse a second operation per cluster (ARM: 409 `OperationNotAllowed` "Another agentpool
operation ... is in progress"; GKE: 400 `FAILED_PRECONDITION` "Cluster is running
incompatible operation"), here with 30 % of the cluster's requests throttled: twenty pools
apply, change and destroy in one run each (`many_pools.run`); an operation of someone
else's is waited out; two workspaces apply on one cluster at once.

Helpers in `many_pools.py`. Operations end by themselves after 3 s. Twenty pools (floor 1
+ spot up to 2) apply in one run and the fake then holds exactly two GPU pools per
`gpu_node_pool`, with its marker, and the plan is empty; a label change on all twenty
converges in one apply; `terraform destroy` with 4 delete answers lost leaves no GPU pool in
one run. Figures (requests, throttled, lost, busy refusals, warnings, longest wait,
seconds per step) are printed, and the reliability rows "20 pools on one AKS cluster
converged" and "20 pools on one GKE cluster converged" are written. An operation of
someone else's held on the cluster for 6 s is waited out, and the apply's warning names
it; two workspaces (two provider processes) apply two pools each on one cluster at once,
both in one run, each pool exactly its two groups.

Each cloud is one small description below (`Aks`, `Gke`): its fake and how it is set up,
the cluster's seeding, how its pools read (`many_pools.aks_pools`, `gke_pools`), the
faults injected and how its busy answer names someone else's operation.
"""

from __future__ import annotations

import json

import pytest

from per_cloud import per_cloud
from cloud_fakes import start_azure, start_gcp
from many_pools import (RATE, Scenario, aks_pools, gke_pools, run, someone_elses_operation,
                        two_workspaces_at_once)

# Mostly waits (alone, 85 s wall, 26 s of CPU: one operation per cluster at a time, held
# operations): `make acceptance` runs it with more workers than cores (README.md,
# "Scheduling").
pytestmark = pytest.mark.waits


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    fakes = start_azure(tmp_path_factory.mktemp("azure-many"))
    # One InProgress answer per operation (ARM's Retry-After: 1 s), and an operation ends
    # by itself after 3 s, as AKS's do, even when nobody polls it (a lost answer).
    fakes.arm.configure({"polls": 1, "retry_after": 1, "op_seconds": 3})
    yield fakes
    fakes.arm.stop()
    fakes.aad.stop()


@pytest.fixture(scope="module")
def gcp(tmp_path_factory):
    fakes = start_gcp(tmp_path_factory.mktemp("gcp-many"))
    # Operations end at their first poll, and by themselves after 3 s (as GKE's do, polled
    # or not: a client whose answer was lost never polls its operation).
    fakes.gke.configure({"polls": 0, "op_seconds": 3})
    yield fakes
    fakes.gke.stop()
    fakes.oauth.stop()


class OneCluster:
    """What both clouds' descriptions do when bound: Terraform 1.15 only (the scenarios
    are about its default parallelism), with the environment of the cloud's credential
    chain."""

    def __init__(self, fakes, tf):
        if tf.version != "1.15":
            pytest.skip("the many-pools scenarios run under Terraform 1.15")
        tf.env = fakes.env(tf.env)
        self.fakes, self.tf = fakes, tf


class Aks(OneCluster):
    """AKS: agent pools on a cluster in eastus, through ARM."""

    id, cloud, fixtures = "aks", "azure", ("azure", "terraform")
    region, gpu = "eastus", "A100-80GB"

    def __init__(self, fakes, tf):
        super().__init__(fakes, tf)
        self.fake = fakes.arm

    def cluster(self, name: str) -> str:
        return self.fakes.cluster(name)

    def ours(self, cluster: str):
        return aks_pools(self.fakes, cluster)

    def throttle(self, cluster: str) -> None:
        paths = f"(/managedClusters/{cluster}|/operations/|/operationresults/)"
        self.fake.inject_random(RATE, 429, seed=26, path=paths, retry_after=1)

    def lose_deletes(self, cluster: str) -> None:
        self.fake.inject("DELETE", f"/managedClusters/{cluster}/agentPools/", status=500,
                         count=4, lose_answer=True)

    def hold(self, cluster: str) -> str:
        # 6 s of real time whatever the scale: Terraform's own start-up is not scaled.
        self.fake.hold(cluster, 6 / self.fake.time_scale)
        return "nodepool1 - Updating"  # how AKS's busy answer names it


class Gke(OneCluster):
    """GKE: node pools on a regional cluster in us-central1, through the Container API."""

    id, cloud, fixtures = "gke", "gcp", ("gcp", "terraform")
    region, gpu = "us-central1", "L4"

    def __init__(self, fakes, tf):
        super().__init__(fakes, tf)
        self.fake = fakes.gke

    def cluster(self, name: str) -> str:
        return self.fakes.cluster(name, self.region)

    def ours(self, cluster: str):
        return gke_pools(self.fakes, cluster)

    def throttle(self, cluster: str) -> None:
        self.fake.inject_random(RATE, 429, seed=26, path=f"(/clusters/{cluster}|/operations/)")

    def lose_deletes(self, cluster: str) -> None:
        self.fake.inject("DELETE", f"/clusters/{cluster}/nodePools/", status=500, count=4,
                         lose_answer=True)

    def hold(self, cluster: str) -> str:
        # 6 s of real time whatever the scale: Terraform's own start-up is not scaled.
        # GKE's busy answer names the operation itself.
        return self.fake.hold(cluster, 6 / self.fake.time_scale)


each_cloud, cloud = per_cloud(Aks, Gke)


@each_cloud
def test_twenty_pools_on_one_cluster(cloud):
    c = cloud
    cluster = f"{c.id}-many"
    cid = c.cluster(cluster)
    s = Scenario(c.tf, c.fakes, c.cloud, c.region, cid, cluster, "many", c.gpu, c.fake,
                 c.ours(cluster))
    run(s, lambda: c.throttle(cluster), lambda: c.lose_deletes(cluster))
    c.fake.random_faults.clear()


@each_cloud
def test_an_operation_of_someone_elses_is_waited_out(cloud):
    c = cloud
    cluster = f"{c.id}-held"
    cid = c.cluster(cluster)
    someone_elses_operation(c.tf, c.fakes, c.cloud, c.region, cid, c.gpu, c.fake, cluster,
                            c.ours(cluster), lambda: c.hold(cluster))


@each_cloud
def test_two_workspaces_on_one_cluster_at_once(cloud):
    c = cloud
    cluster = f"{c.id}-two"
    cid = c.cluster(cluster)
    figures = two_workspaces_at_once(c.tf, c.fakes, c.cloud, c.region, cid, c.gpu, c.fake,
                                     cluster, c.ours(cluster))
    print(f"\n{c.cloud}: two workspaces on one cluster: {json.dumps(figures)}")
