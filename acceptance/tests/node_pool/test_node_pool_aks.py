"""`gpu_node_pool` on AKS where only AKS has it, against the ARM and Entra ID fakes
(`fakes/`), through the provider's real Azure credential chain (a client secret from the
environment, the token from the local Entra ID over HTTPS): the export writes the pool as
an import and its configuration (and `terraform query` lists it, adopts it and forgets it
again), and a floor on a capacity reservation is placed in the reservation's group.

The promises AKS shares with GKE (apply holds a floor and a spot pool and plans empty,
in-place changes, a roll of the VM size without outage, import, throttling and slow
operations, a capacity refusal at create) are tested once for both clouds in
`test_node_pool_aks_gke.py`, on the fixtures and helpers defined here (`azure`, `az_tf`,
`names`, `workdir`, `by_priority`).
"""

from __future__ import annotations

import pytest

from cloud_fakes import SUBSCRIPTION, TENANT, pool_config, start_azure
from export_check import export_and_adopt
from query_check import provider_head, query_and_adopt

REGION = "eastus"
ADDR = "gpu_node_pool.train"


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    fakes = start_azure(tmp_path_factory.mktemp("azure"))
    fakes.arm.configure({"polls": 1, "retry_after": 1})
    yield fakes
    fakes.arm.stop()
    fakes.aad.stop()


@pytest.fixture
def az_tf(terraform, azure):
    terraform.env = azure.env(terraform.env)
    return terraform


def names(terraform, what: str) -> tuple[str, str]:
    v = terraform.version.replace(".", "")
    return f"{what}-tf{v}", f"{what[:10]}{v}"


def workdir(tf, azure, cluster_id, pool, **kw):
    return tf.workdir(files={"main.tf": pool_config(
        azure, "azure", cluster_id, pool, region=REGION, gpu=kw.pop("gpu", "A100-80GB"),
        gpu_count=kw.pop("gpu_count", 1), **kw)})


def by_priority(pools: dict) -> dict[str, dict]:
    """The user pools of a cluster by `scaleSetPriority` (the System pool left out)."""
    out = {}
    for name, p in pools.items():
        props = p["properties"]
        if props.get("mode") == "User":
            assert props["scaleSetPriority"] not in out, pools
            out[props["scaleSetPriority"]] = {"name": name, **props}
    return out


@pytest.mark.tf_min("1.5")
def test_export_writes_the_pool_as_an_import_and_configuration(az_tf, azure, provider_bin):
    cluster, pool = names(az_tf, "aks-export")
    cid = azure.cluster(cluster)
    wd = workdir(az_tf, azure, cid, pool)
    wd.run("apply")
    applied = wd.resource(ADDR)
    text, adopted = export_and_adopt(
        az_tf, provider_bin, az_tf.env,
        ["--clouds", "azure", "--kinds", "node_pool", "--cluster", cid,
         "--azure-subscription", SUBSCRIPTION, "--azure-tenant", TENANT,
         "--azure-endpoint", azure.arm.url], imports=1)
    assert f'id = "azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}"' in text, text
    assert "client_secret" not in text and azure.client_secret not in text
    assert adopted.resource(f"gpu_node_pool.{pool}")["node_groups"] == applied["node_groups"]
    if az_tf.version != "1.0":
        # `terraform query` lists the same pool by identity; its generated configuration
        # imports it with nothing else planned; that second state then forgets it.
        lists = ('list "gpu_node_pool" "aks" {\n  provider = gpu\n  config {\n'
                 f'    clusters = ["{cid}"]\n  }}\n}}\n')
        listing, generated, queried = query_and_adopt(az_tf, provider_head(text), lists, 1)
        assert f"import_id=azure/{SUBSCRIPTION}/rg-gpu/{cluster}/{pool}" in listing, listing
        assert azure.client_secret not in generated and azure.client_secret not in listing
        assert queried.resource("gpu_node_pool.aks_0")["node_groups"] == \
            applied["node_groups"]
        queried.run("state", "rm", "gpu_node_pool.aks_0")
    adopted.run("destroy")
    assert by_priority(azure.pools(cluster)) == {}


def test_a_floor_on_a_capacity_reservation_is_placed_in_its_group(az_tf, azure):
    """`reservation` of kind azure_capacity_reservation: the on-demand agent pool carries
    the commitment's capacity reservation group, the spot pool none; the floor is priced
    at the commitment's rate; nothing changes on a second plan."""
    cluster, pool = names(az_tf, "aks-crg")
    cid = azure.cluster(cluster)
    group = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/ml/providers/Microsoft.Compute/"
             "capacityReservationGroups/gpu-tf-0123456789abcdef")
    wd = workdir(az_tf, azure, cid, pool, extra=(
        '  reservation {\n'
        f'    commitment_id    = "{group}/capacityReservations/gpu-tf-0123456789abcdef"\n'
        '    kind             = "azure_capacity_reservation"\n'
        '    usd_per_gpu_hour = 3.5\n  }\n'))
    wd.run("apply")
    pools = by_priority(azure.pools(cluster))
    assert pools["Regular"]["capacityReservationGroupID"].lower() == group.lower(), pools
    assert "capacityReservationGroupID" not in pools["Spot"], pools
    s = wd.resource(ADDR)
    assert s["hourly_usd"] == pytest.approx(3.5), s  # 1 reserved node of 1 GPU, spot min 0
    assert "1 reserved + up to 2 spot" in s["cost_summary"], s
    assert "azure_capacity_reservation" in s["price_source"], s
    wd.assert_plan_empty()
    wd.run("destroy", "-auto-approve")
    assert by_priority(azure.pools(cluster)) == {}
