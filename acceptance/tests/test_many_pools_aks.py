"""Many `gpu_node_pool` on one AKS cluster (issue 26), through real Terraform 1.15 at its
default parallelism, against the ARM fake, which refuses a second agent-pool operation per
cluster (409 `OperationNotAllowed` "Another agentpool operation ... is in progress"), here
with 30 % of the cluster's requests throttled: twenty pools apply, change and destroy in one
run each (`many_pools.run`); an operation of someone else's is waited out; two workspaces
apply on one cluster at once.
"""

from __future__ import annotations

import json

import pytest

from cloud_fakes import start_azure
from many_pools import (RATE, Scenario, aks_pools, run, someone_elses_operation,
                        two_workspaces_at_once)

REGION = "eastus"


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    fakes = start_azure(tmp_path_factory.mktemp("azure-many"))
    # One InProgress answer per operation (ARM's Retry-After: 1 s), and an operation ends
    # by itself after 3 s, as AKS's do, even when nobody polls it (a lost answer).
    fakes.arm.configure({"polls": 1, "retry_after": 1, "op_seconds": 3})
    yield fakes
    fakes.arm.stop()
    fakes.aad.stop()


@pytest.fixture
def az_tf(terraform, azure):
    if terraform.version != "1.15":
        pytest.skip("the many-pools scenarios run under Terraform 1.15")
    terraform.env = azure.env(terraform.env)
    return terraform


def test_twenty_pools_on_one_aks_cluster(az_tf, azure):
    cluster = "aks-many"
    cid = azure.cluster(cluster)
    s = Scenario(az_tf, azure, "azure", REGION, cid, cluster, "many", "A100-80GB",
                 azure.arm, aks_pools(azure, cluster))
    paths = f"(/managedClusters/{cluster}|/operations/|/operationresults/)"
    run(s,
        lambda: azure.arm.inject_random(RATE, 429, seed=26, path=paths, retry_after=1),
        lambda: azure.arm.inject("DELETE", f"/managedClusters/{cluster}/agentPools/",
                                 status=500, count=4, lose_answer=True))
    azure.arm.random_faults.clear()


def test_an_operation_of_someone_elses_is_waited_out(az_tf, azure):
    cluster = "aks-held"
    cid = azure.cluster(cluster)

    def hold() -> str:
        azure.arm.hold(cluster, 6)
        return "nodepool1 - Updating"  # how AKS's busy answer names it

    someone_elses_operation(az_tf, azure, "azure", REGION, cid, "A100-80GB", azure.arm,
                            cluster, aks_pools(azure, cluster), hold)


def test_two_workspaces_on_one_aks_cluster_at_once(az_tf, azure):
    cluster = "aks-two"
    cid = azure.cluster(cluster)
    figures = two_workspaces_at_once(az_tf, azure, "azure", REGION, cid, "A100-80GB",
                                     azure.arm, cluster, aks_pools(azure, cluster))
    print(f"\nazure: two workspaces on one cluster: {json.dumps(figures)}")
