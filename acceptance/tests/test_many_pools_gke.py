"""Many `gpu_node_pool` on one GKE cluster (issue 26), through real Terraform 1.15 at its
default parallelism, against the GKE fake, which refuses a second operation per cluster
(400 `FAILED_PRECONDITION` "Cluster is running incompatible operation"), here with 30 % of
the cluster's requests throttled: twenty pools apply, change and destroy in one run each
(`many_pools.run`); an operation of someone else's is waited out; two workspaces apply on
one cluster at once.
"""

from __future__ import annotations

import json

import pytest

from cloud_fakes import start_gcp
from many_pools import (RATE, Scenario, gke_pools, run, someone_elses_operation,
                        two_workspaces_at_once)

REGION = "us-central1"


@pytest.fixture(scope="module")
def gcp(tmp_path_factory):
    fakes = start_gcp(tmp_path_factory.mktemp("gcp-many"))
    # Operations end at their first poll, and by themselves after 3 s (as GKE's do, polled
    # or not: a client whose answer was lost never polls its operation).
    fakes.gke.configure({"polls": 0, "op_seconds": 3})
    yield fakes
    fakes.gke.stop()
    fakes.oauth.stop()


@pytest.fixture
def gcp_tf(terraform, gcp):
    if terraform.version != "1.15":
        pytest.skip("the many-pools scenarios run under Terraform 1.15")
    terraform.env = gcp.env(terraform.env)
    return terraform


def test_twenty_pools_on_one_gke_cluster(gcp_tf, gcp):
    cluster = "gke-many"
    cid = gcp.cluster(cluster, REGION)
    s = Scenario(gcp_tf, gcp, "gcp", REGION, cid, cluster, "many", "L4", gcp.gke,
                 gke_pools(gcp, cluster))
    run(s,
        lambda: gcp.gke.inject_random(RATE, 429, seed=26,
                                      path=f"(/clusters/{cluster}|/operations/)"),
        lambda: gcp.gke.inject("DELETE", f"/clusters/{cluster}/nodePools/", status=500,
                               count=4, lose_answer=True))
    gcp.gke.random_faults.clear()


def test_an_operation_of_someone_elses_is_waited_out(gcp_tf, gcp):
    cluster = "gke-held"
    cid = gcp.cluster(cluster, REGION)
    someone_elses_operation(gcp_tf, gcp, "gcp", REGION, cid, "L4", gcp.gke, cluster,
                            gke_pools(gcp, cluster), lambda: gcp.gke.hold(cluster, 6))


def test_two_workspaces_on_one_gke_cluster_at_once(gcp_tf, gcp):
    cluster = "gke-two"
    cid = gcp.cluster(cluster, REGION)
    figures = two_workspaces_at_once(gcp_tf, gcp, "gcp", REGION, cid, "L4", gcp.gke,
                                     cluster, gke_pools(gcp, cluster))
    print(f"\ngcp: two workspaces on one cluster: {json.dumps(figures)}")
