"""`live = true` on the offer data sources: prices come from the clouds' price APIs (here a
local server shaped like the Azure Retail Prices API), are cached on disk, and a dead
source falls back to the embedded snapshot with a warning."""

import datetime
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

ON_DEMAND = 2.5
SPOT = 0.9


def item(price, meter, sku="NC24ads A100 v4"):
    return {
        "currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
        "armRegionName": "eastus", "location": "US East",
        "effectiveStartDate": "2026-11-01T00:00:00Z", "meterId": f"m-{meter}",
        "meterName": meter, "productId": "DZH318Z08M22", "skuId": f"DZH318Z08M22/{meter}",
        "availabilityId": None, "productName": "Virtual Machines NCadsA100v4 Series",
        "skuName": sku if "Spot" not in meter else f"{sku} Spot", "serviceName": "Virtual Machines",
        "serviceId": "DZH313Z7MMC8", "serviceFamily": "Compute", "unitOfMeasure": "1 Hour",
        "type": "Consumption", "isPrimaryMeterRegion": True,
        "armSkuName": "Standard_NC24ads_A100_v4",
    }


class FakeAzurePrices:
    """Answers /api/retail/prices with one page (the on-demand item, and the spot item
    unless `spot` is false); everything else 404. Counts requests."""

    def __init__(self, spot=True):
        self.requests = []
        outer = self
        items = [item(ON_DEMAND, "NC24ads A100 v4")]
        if spot:
            items.append(item(SPOT, "NC24ads A100 v4 Spot"))

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                if self.path.startswith("/api/retail/prices"):
                    body = json.dumps({
                        "BillingCurrency": "USD", "CustomerEntityId": "Default",
                        "CustomerEntityType": "Retail",
                        "Items": items,
                        "NextPageLink": None, "Count": len(items),
                    }).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                else:
                    body = b'{"error": "not here"}'
                    self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


CONFIG = '''
data "gpu_spot_offer" "a100" {
  live      = true
  gpu       = "A100-80GB"
  gpu_count = 1
  clouds    = ["azure"]
  regions   = ["eastus"]
  capacity  = "%s"
}
'''


def live_env(terraform, tmp_path, url):
    dead = "http://127.0.0.1:9"  # nothing listens there: connection refused
    return dict(terraform.env,
                GPU_PRICES_AZURE_ENDPOINT=url, GPU_PRICES_GCP_ENDPOINT=dead,
                GPU_PRICES_AWS_ENDPOINT=dead, GPU_PRICES_AWS_EC2_ENDPOINT=dead,
                GPU_PRICES_CACHE_DIR=str(tmp_path / "price-cache"),
                AWS_EC2_METADATA_DISABLED="true")


@pytest.mark.parametrize("capacity,price", [("on_demand", ON_DEMAND), ("spot", SPOT)])
def test_live_price_replaces_snapshot_and_is_cached(terraform, tmp_path, capacity, price):
    fake = FakeAzurePrices()
    try:
        wd = terraform.workdir(files={"main.tf": CONFIG % capacity})
        wd.tf.env = live_env(terraform, tmp_path, fake.url)
        wd.run("apply")
        got = wd.resource("data.gpu_spot_offer.a100")
        assert got["instance_type"] == "Standard_NC24ads_A100_v4", got
        assert got["price_per_hour"] == pytest.approx(price), got
        assert "azure-retail-prices" in got["source"] and "live" in got["source"], got
        assert got["as_of"] == datetime.date.today().isoformat(), got
        assert "live prices" in got["catalog"], got
        served = len(fake.requests)
        assert served >= 1 and all(p.startswith("/api/retail/prices") for p in fake.requests)
    finally:
        fake.stop()
    # Within the TTL the disk cache answers: same price, with the server gone.
    wd.run("apply")
    again = wd.resource("data.gpu_spot_offer.a100")
    assert again["price_per_hour"] == pytest.approx(price), again
    assert len(fake.requests) == served


def snapshot_row(region, instance_type):
    """The embedded snapshot's row, read with the csv module (not the provider)."""
    import csv
    from pathlib import Path
    path = Path(__file__).resolve().parents[3] / "crates/core/data/offers.csv"
    with open(path, newline="", encoding="utf-8") as f:
        return next(r for r in csv.DictReader(f)
                    if r["cloud"] == "azure" and r["region"] == region
                    and r["instance_type"] == instance_type and r["zone"] == "")


def test_refreshing_on_demand_only_never_re_dates_the_spot_price(terraform, tmp_path):
    """The live source answers the on-demand price only: that price is today's, and the
    spot offer of the same row keeps the snapshot's price, source and (missing) date."""
    row = snapshot_row("eastus", "Standard_NC24ads_A100_v4")
    assert row["spot_usd_per_hour"] and not row["spot_as_of"], row  # undated spot price
    fake = FakeAzurePrices(spot=False)
    try:
        both = (CONFIG % "on_demand") + (CONFIG % "spot").replace('"a100"', '"a100_spot"')
        wd = terraform.workdir(files={"main.tf": both})
        wd.tf.env = live_env(terraform, tmp_path, fake.url)
        wd.run("apply")
        od = wd.resource("data.gpu_spot_offer.a100")
        spot = wd.resource("data.gpu_spot_offer.a100_spot")
    finally:
        fake.stop()
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    assert od["price_per_hour"] == pytest.approx(ON_DEMAND), od
    assert od["as_of"] == today and od["price_age_days"] == 0, od
    assert od["source"].startswith("azure-retail-prices (live, fetched"), od
    assert spot["instance_type"] == "Standard_NC24ads_A100_v4", spot
    assert spot["price_per_hour"] == pytest.approx(float(row["spot_usd_per_hour"])), spot
    assert spot["as_of"] is None and spot["price_age_days"] is None, spot
    assert spot["source"] == row["spot_source"], spot
    assert "live prices" in spot["catalog"], spot


def test_dead_source_falls_back_with_warning(terraform, tmp_path):
    wd = terraform.workdir(files={"main.tf": CONFIG % "on_demand"})
    wd.tf.env = live_env(terraform, tmp_path, "http://127.0.0.1:9")
    res = wd.run("apply")
    assert "Some live prices are unavailable" in res.output, res
    got = wd.resource("data.gpu_spot_offer.a100")
    assert got["instance_type"] == "Standard_NC24ads_A100_v4"
    assert got["price_per_hour"] != pytest.approx(ON_DEMAND), got  # the snapshot's price
    assert "live" not in got["source"], got
    assert got["catalog"].startswith("embedded snapshot"), got


class Plain:
    """What `live_env` needs of a Terraform fixture: the environment, here the process's."""
    env = dict(os.environ)


def test_catalog_command_rebuilds_the_snapshot_from_live_sources(provider_bin, tmp_path):
    """`terraform-provider-gpu catalog` (what `make catalog` runs): the price a live source
    answers is dated today with that source; every other row is byte for byte the
    snapshot's; PROVENANCE.md says which source answered and what failed. With no source
    answering, it writes nothing and fails."""
    import csv
    import subprocess
    from pathlib import Path
    snapshot = Path(__file__).resolve().parents[3] / "crates/core/data/offers.csv"
    out, page = tmp_path / "offers.csv", tmp_path / "PROVENANCE.md"
    fake = FakeAzurePrices(spot=False)
    try:
        env = live_env(Plain(), tmp_path, fake.url)
        proc = subprocess.run([str(provider_bin), "catalog", "--out", str(out),
                               "--provenance", str(page), "--cloud", "azure"],
                              env=env, capture_output=True, text=True, timeout=300)
    finally:
        fake.stop()
    assert proc.returncode == 0, proc.stderr
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    with open(out, newline="", encoding="utf-8") as f:
        new = list(csv.DictReader(f))
    with open(snapshot, newline="", encoding="utf-8") as f:
        old = list(csv.DictReader(f))
    assert len(new) == len(old)
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert [b["instance_type"] for _, b in changed] == ["Standard_NC24ads_A100_v4"], changed
    before, after = changed[0]
    assert (after["cloud"], after["region"]) == ("azure", "eastus"), after
    assert float(after["on_demand_usd_per_hour"]) == ON_DEMAND, after
    assert after["on_demand_as_of"] == today, after
    assert after["on_demand_source"].startswith("azure-retail-prices (live, fetched"), after
    for col in ("spot_usd_per_hour", "spot_source", "spot_as_of"):
        assert after[col] == before[col], (col, before, after)
    text = page.read_text()
    assert "| azure-retail-prices | 1 |" in text, text
    assert f"on {today}" in text, text

    # Offline: nothing answers, nothing is written.
    out.unlink()
    dead = live_env(Plain(), tmp_path / "again", "http://127.0.0.1:9")
    proc = subprocess.run([str(provider_bin), "catalog", "--out", str(out),
                           "--cloud", "azure"], env=dead, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc
    assert "no live price source answered" in proc.stderr, proc.stderr
    assert not out.exists()
