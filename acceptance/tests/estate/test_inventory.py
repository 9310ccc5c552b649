"""`gpu_inventory` under real Terraform, on Google Cloud: the GKE and Compute Engine fakes
behind one `gcp.endpoint` (fakes/google/front.py), as the provider sees Google. A cluster
holds the provider's pool, someone else's GPU pool and GKE's default pool without GPUs; a
reservation bought by `gpu_commitment` runs one of its two machines. The inventory must
find the GPU pools (and only those), price them as they run, count the reservation's idle
half only, total by team, warn about a cluster it cannot read while listing the rest, and
let a `check` block hold a budget across all of it.
"""

from __future__ import annotations

import copy
import io
import json
import re
import subprocess

import pytest

from cloud_fakes import PROJECT, _CLEARED, pool_config
from fakes.google.compute import Compute
from fakes.google.compute_instances import ComputeInstances
from fakes.google.front import GoogleFront
from fakes.google.gke import Gke
from fakes.google.tokens import GoogleOAuth
from fakes.tokens import TokenRegistry

REGION, ZONE = "us-central1", "us-central1-b"


class Google:
    """The fakes and the `gcp` block that points the provider at them."""

    def __init__(self, directory, compute=Compute):
        tokens = TokenRegistry()
        self.oauth = GoogleOAuth(tokens).start()
        account = self.oauth.create_service_account(PROJECT)
        self.key = self.oauth.write_key_file(account, directory / "key.json")
        self.gke = Gke(tokens).start()
        self.compute = compute(tokens).start()
        self.front = GoogleFront(self.gke, self.compute).start()
        self.gke.configure({"polls": 0})
        self.compute.seed_project(PROJECT)
        self.compute.configure({"polls": 0})

    def provider(self) -> str:
        return f'  gcp {{\n    endpoint = "{self.front.url}"\n    project  = "{PROJECT}"\n  }}\n'

    def mutations(self) -> int:
        """Requests that could change something, on either fake."""
        return sum(1 for f in (self.gke, self.compute)
                   for r in f.state()["requests"] if r["method"] != "GET")

    def stop(self):
        for f in (self.front, self.compute, self.gke, self.oauth):
            f.stop()


# A Deep Learning VM image family, for the fakes that also run VMs.
FAMILY = "common-cu129-ubuntu-2204-nvidia-580"
IMAGES = [{"name": f"{FAMILY}-v20251115", "family": FAMILY,
           "creationTimestamp": "2025-11-15T00:00:00.000-08:00"}]


def google_with_vms(directory) -> Google:
    """The fakes with Compute Engine VMs too (`ComputeInstances`), the image family seeded."""
    g = Google(directory, compute=ComputeInstances)
    g.compute.seed_images("deeplearning-platform-release", IMAGES)
    return g


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    g = Google(tmp_path_factory.mktemp("inventory"))
    yield g
    g.stop()


@pytest.fixture
def gcp_tf(terraform, google):
    env = {k: v for k, v in terraform.env.items() if k not in _CLEARED}
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(google.key)
    terraform.env = env
    return terraform


FLOOR = f'''
resource "gpu_commitment" "floor" {{
  kind           = "gcp_reservation"
  region         = "{REGION}"
  zone           = "{ZONE}"
  instance_type  = "a3-highgpu-8g"
  instance_count = 2
  tags           = {{ team = "ml" }}
}}
'''


def inventory(cluster_id: str, budget: int | None) -> str:
    """The data source and its outputs, and (Terraform 1.5 and later) a budget check."""
    return f'''
data "gpu_inventory" "all" {{
  clouds   = ["gcp"]
  regions  = ["{REGION}"]
  clusters = ["{cluster_id}", "projects/{PROJECT}/locations/{REGION}/clusters/no-such"]
  group_by = ["team"]
}}

output "items" {{
  value = data.gpu_inventory.all.items
}}

output "totals" {{
  value = data.gpu_inventory.all.totals
}}
''' + ("" if budget is None else f'''
check "ml_budget" {{
  assert {{
    condition     = alltrue([for t in data.gpu_inventory.all.totals : t.monthly_usd <= {budget} if t.group["team"] == "ml"])
    error_message = "Team ml is over its GPU budget of ${budget} a month."
  }}
}}
''')


def someone_elses_gpu_pool(google, cluster: str) -> None:
    """A GPU pool made outside the provider: GKE's default pool, with an L4 machine."""
    c = google.gke.clusters[(PROJECT, REGION, cluster)]
    pool = copy.deepcopy(c["pools"]["default-pool"])
    pool["name"] = "their-l4"
    pool["config"]["machineType"] = "g2-standard-8"
    pool["selfLink"] = pool["selfLink"].replace("default-pool", "their-l4")
    c["pools"]["their-l4"] = pool
    c["node_counts"]["their-l4"] = 1


def test_the_estate_is_listed_priced_totalled_and_budgeted(gcp_tf, google):
    v = gcp_tf.version.replace(".", "")
    cluster = f"gke-inv{v}"
    google.gke.seed_cluster(PROJECT, REGION, cluster)
    cid = f"projects/{PROJECT}/locations/{REGION}/clusters/{cluster}"
    main = pool_config(google, "gcp", cid, f"train{v}", region=REGION, gpu="L4",
                       gpu_count=1, min_nodes=1, max_nodes=3, on_demand_min=1)
    main = main.replace('provider "gpu" {\n', 'provider "gpu" {\n  allow_commitment_purchase = true\n')
    wd = gcp_tf.workdir(files={"main.tf": main + FLOOR})
    wd.run("apply")
    someone_elses_gpu_pool(google, cluster)
    (floor,) = google.compute.state()["reservations"]
    google.compute.set_usage(PROJECT, ZONE, floor["name"], 1)

    checks = gcp_tf.version != "1.0"  # `check` blocks came with Terraform 1.5
    (wd.path / "inventory.tf").write_text(inventory(cid, 10_000_000 if checks else None))
    res = wd.run("apply")
    text = " ".join(res.output.split())
    assert "Warning: Cannot read projects/" in text and "no-such" in text, res.output
    items = wd.outputs()["items"]
    pools = {i["name"]: i for i in items if i["kind"] == "node_pool"}
    assert "default-pool" not in pools, "no GPUs, not in the inventory"
    ours = [i for i in pools.values() if i["managed"]]
    assert ours and all(i["import_id"] == f"gcp/{PROJECT}/{REGION}/{cluster}/train{v}"
                        for i in ours), ours
    assert all(i["gpu"] == "L4" and i["labels"]["team"] == "ml" for i in ours)
    theirs = pools["their-l4"]
    # One node in each of the cluster's three zones, as GKE counts a regional pool.
    assert (theirs["managed"], theirs["import_id"], theirs["nodes"]) == (False, None, 3)
    assert theirs["gpu"] == "L4" and theirs["monthly_usd"] > 0
    assert theirs["monthly_usd"] == pytest.approx(theirs["hourly_usd"] * 730, rel=1e-3)

    (c,) = [i for i in items if i["kind"] == "commitment"]
    bought = wd.resource("gpu_commitment.floor")
    assert c["name"] == bought["commitment_id"] and c["managed"] is True
    assert (c["nodes"], c["used_instances"], c["utilization"]) == (2, 1, 0.5)
    assert c["monthly_usd"] == c["idle_monthly_usd"]
    assert c["monthly_usd"] == pytest.approx(bought["monthly_usd"] / 2, rel=1e-4), \
        "only the idle half: the running machine is priced where it runs"
    assert c["import_id"] == f"gcp_reservation/{ZONE}/{floor['name']}"

    totals = {t["group"]["team"]: t for t in wd.outputs()["totals"]}
    ml = sum(i["monthly_usd"] for i in items if i["labels"].get("team") == "ml")
    assert totals["ml"]["monthly_usd"] == pytest.approx(ml, abs=0.05)
    assert totals["ml"]["idle_commitment_monthly_usd"] == pytest.approx(c["monthly_usd"], abs=0.01)
    assert totals[""]["monthly_usd"] == pytest.approx(theirs["monthly_usd"], abs=0.01)
    assert "ml_budget" not in text

    # A budget below what team ml runs: the check fails as a warning, nothing else changes.
    if checks:
        (wd.path / "inventory.tf").write_text(inventory(cid, 1000))
        res = wd.run("plan")
        text = " ".join(res.output.split())
        assert "Check block assertion failed" in text and "over its GPU budget of $1000" in text, \
            res.output
    requests = [r for r in google.compute.state()["requests"] if r["method"] != "GET"]
    assert len(requests) == 1, "listing never mutates: one insert, the purchase"


def spend(provider_bin, google, cid: str, *flags: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "GOOGLE_APPLICATION_CREDENTIALS": str(google.key)}
    return subprocess.run(
        [str(provider_bin), "report", "spend", "--clouds", "gcp", "--regions", REGION,
         "--cluster", cid, "--gcp-project", PROJECT, "--gcp-endpoint", google.front.url,
         *flags], capture_output=True, text=True, timeout=120, env=env)


def test_report_spend_prints_the_inventory_by_team_and_cloud_and_draws_it(
        provider_bin, google, tmp_path):
    cluster = "gke-spend"
    google.gke.seed_cluster(PROJECT, REGION, cluster)
    someone_elses_gpu_pool(google, cluster)
    c = google.gke.clusters[(PROJECT, REGION, cluster)]
    c["pools"]["their-l4"]["config"]["resourceLabels"] = {"team": "vision"}
    cid = f"projects/{PROJECT}/locations/{REGION}/clusters/{cluster}"

    table = spend(provider_bin, google, cid, "--kinds", "node_pool", "--by", "team,cloud")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["TEAM", "CLOUD", "MONTHLY_USD"], table.stdout
    assert lines[1].split()[:2] == ["vision", "gcp"] and lines[-1].startswith("all")

    js = spend(provider_bin, google, cid, "--kinds", "node_pool", "--by", "team",
               "--format", "json")
    body = json.loads(js.stdout)
    (row,) = body["rows"]
    assert body["currency"] == "USD" and row["group"] == {"team": "vision"}
    assert row["monthly_usd"] > 0 and row["items"] == 1
    assert float(lines[1].split()[2]) == pytest.approx(row["monthly_usd"], abs=0.01)

    svg = tmp_path / "spend.svg"
    drawn = spend(provider_bin, google, cid, "--kinds", "node_pool", "--chart", str(svg))
    assert drawn.returncode == 0, drawn.stderr
    resvg = pytest.importorskip("resvg_py")
    image = pytest.importorskip("PIL.Image")
    png = bytes(resvg.svg_to_bytes(svg_string=svg.read_text(),
                                   font_dirs=["/usr/share/fonts/truetype/dejavu"],
                                   sans_serif_family="DejaVu Sans"))
    picture = image.open(io.BytesIO(png)).convert("RGB")
    assert picture.size[0] >= 760 and picture.size[1] > 100
    colours = {colour for _, colour in picture.getcolors(maxcolors=1 << 16)}
    assert (0x34, 0xA8, 0x53) in colours, "the Google Cloud bar is drawn in its colour"

    def dark(box) -> int:
        part = picture.crop(box).getcolors(maxcolors=1 << 16)
        return sum(n for n, (r, g, b) in part if r + g + b < 450)

    bar_top = int(float(re.search(r'<rect x="[^"]+" y="([^"]+)" width="[^"]+" height="22"',
                                  svg.read_text()).group(1)))
    assert dark((0, bar_top, 170, bar_top + 22)) > 40, "the bar's label is drawn left of it"
    assert dark((0, picture.size[1] - 60, picture.size[0], picture.size[1])) > 300, \
        "the money axis: its line, ticks, labels and title"

    bad = spend(provider_bin, google, cid, "--kinds", "vm")
    assert bad.returncode == 1 and "--kinds: \"vm\" is not a kind" in bad.stderr, bad.stderr
