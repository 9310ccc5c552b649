"""examples/commitment-floor under real Terraform: the plan a person approves (the sizing of
last month's demand, the floor's committed use discount with its money and break-even, and
a spot pool whose floor is priced at the commitment's rate) works offline; applied against
the Google OAuth, GKE and Compute Engine fakes behind one endpoint, it buys the floor once
and the pool's on-demand nodes consume the commitment's reservation.

What was bought and created is read from the fakes' own state, not through the provider.
"""

from __future__ import annotations

import pytest

from cloud_fakes import PROJECT, _CLEARED
from fakes.google.compute import Compute
from fakes.google.front import GoogleFront
from fakes.google.gke import Gke
from fakes.google.tokens import GoogleOAuth
from fakes.tokens import TokenRegistry

EXAMPLE = "commitment-floor"
REGION, ZONE = "us-central1", "us-central1-b"


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gcp")
    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens).start()
    account = oauth.create_service_account(PROJECT)
    key = oauth.write_key_file(account, directory / "key.json")
    gke, compute = Gke(tokens).start(), Compute(tokens).start()
    front = GoogleFront(gke, compute).start()
    yield gke, compute, front, key
    for fake in (front, compute, gke, oauth):
        fake.stop()


def outputs_of(wd) -> dict:
    return {k: v["value"] for k, v in wd.show_json("tfplan")["planned_values"]["outputs"].items()}


def planned(wd, address: str) -> dict:
    resources = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"]
    return next(r["values"] for r in resources if r["address"] == address)


def test_the_plan_sizes_buys_the_floor_and_prices_the_pool_offline(terraform):
    wd = terraform.workdir(EXAMPLE)
    # Without the purchase allowed, the plan fails and says what it would cost.
    res = wd.fails("plan")
    flat = " ".join(res.output.split())
    assert "allow_commitment_purchase" in flat and "over 12 months" in flat, res
    wd.run("plan", "-out=tfplan", "-var", "allow_purchase=true")
    out = outputs_of(wd)
    sizing, commitment = out["sizing"], out["commitment"]
    # demand.csv never falls below 16 GPUs: the floor is two 8-GPU nodes.
    assert sizing["floor_gpus"] == 16 and commitment["nodes"] == 2, out
    # Against on-demand the 1-year rate pays above 69% use: more than the floor would pay
    # on last month's demand, but only the floor is certain, and only the floor is bought.
    assert sizing["optimal_gpus"] > sizing["floor_gpus"], out
    assert 0 < sizing["break_even_utilization"] < 1, out
    assert sizing["floor_saves_vs_on_demand"] > 0 and sizing["floor_utilization"] == 1, out
    assert "1y commitment gcp us-central1 of a3-highgpu-8g" in sizing["prices_came_from"], out
    rate = commitment["effective_usd_per_gpu_hour"]
    assert 0 < rate < commitment["on_demand_usd_per_gpu_hour"], out
    assert 0 < commitment["break_even_utilization"] < 1, out
    # A year of two nodes at the committed rate (8,760 hours, 16 GPUs).
    assert commitment["total_usd"] == pytest.approx(rate * 16 * 8760, rel=1e-3), out
    pool = planned(wd, "gpu_node_pool.train")
    # The floor's two nodes at the commitment's rate, then up to 6 spot nodes above it.
    assert pool["monthly_usd"] == pytest.approx(2 * 8 * rate * 730, abs=0.02), pool
    assert pool["monthly_usd_max"] > pool["monthly_usd"], pool
    assert pool["on_demand_usd_per_node_hour"] is None, pool
    assert "2 reserved + up to 6 spot" in pool["cost_summary"], pool
    assert "gcp_commitment" in pool["price_source"], pool


def test_applied_the_floor_is_bought_once_and_the_pool_consumes_it(terraform, google):
    gke, compute, front, key = google
    for fake in (gke, compute):
        fake.reset()
    compute.seed_project(PROJECT)
    compute.configure({"polls": 0})
    gke.configure({"polls": 0})
    cluster = f"floor-tf{terraform.version.replace('.', '')}"
    gke.seed_cluster(PROJECT, REGION, cluster)
    env = {k: v for k, v in terraform.env.items() if k not in _CLEARED}
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    terraform.env = env
    tfvars = (f'allow_purchase = true\nproject = "{PROJECT}"\ngcp_endpoint = "{front.url}"\n'
              f'cluster = "projects/{PROJECT}/locations/{REGION}/clusters/{cluster}"\n')
    wd = terraform.workdir(EXAMPLE, files={"terraform.tfvars": tfvars})
    res = wd.run("apply")
    assert "IRREVERSIBLE" in res.output, res
    assert res.output.count("Creating...") == 2, res
    state = compute.state()
    (bought,) = state["commitments"]
    (reservation,) = state["reservations"]
    assert reservation["name"] == f"{bought['name']}-r", state
    assert reservation["specificReservation"]["count"] == "2", reservation
    assert reservation["zone"].endswith(f"/zones/{ZONE}"), reservation
    commitment = wd.resource("gpu_commitment.floor")
    assert commitment["commitment_id"] == bought["name"], commitment
    pools = [p for c in gke.state()["clusters"] if c["name"] == cluster
             for p in c["nodePools"].values() if p["config"].get("accelerators")]
    od = [p for p in pools if not p["config"].get("spot")]
    spot = [p for p in pools if p["config"].get("spot")]
    assert len(od) == 1 and len(spot) == 1, pools
    # The floor consumes exactly the commitment's reservation, in its zone; spot does not.
    assert od[0]["config"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name", "values": [reservation["name"]]}
    assert od[0]["locations"] == [ZONE], od
    assert "reservationAffinity" not in spot[0]["config"], spot
    assert od[0]["config"]["machineType"] == "a3-highgpu-8g", od
    wd.assert_plan_empty()
    # Destroy refuses the commitment, which keeps billing. Terraform 1.3 and later plan
    # destroys through the provider, so the refusal comes at plan and nothing is
    # destroyed; Terraform 1.0 plans them itself, so the pool (which depends on the
    # commitment) goes first and the refusal comes at the commitment's apply.
    res = wd.fails("destroy", "-auto-approve")
    flat = " ".join(res.output.split())
    assert "on_destroy" in flat, res
    assert len(compute.state()["commitments"]) == 1
    left = sorted(r["address"] for r in wd.state_resources() if r["mode"] == "managed")
    if terraform.version == "1.0":
        assert left == ["gpu_commitment.floor"], left
    else:
        assert left == ["gpu_commitment.floor", "gpu_node_pool.train"], left
        # The pool alone can go; the commitment stays, bought once.
        wd.run("destroy", "-auto-approve", "-target=gpu_node_pool.train")
    pools_left = [p for c in gke.state()["clusters"] if c["name"] == cluster
                  for p in c["nodePools"].values() if p["config"].get("accelerators")]
    assert pools_left == [] and len(compute.state()["commitments"]) == 1
