"""The audit log under real Terraform, on Google Cloud (the GKE and Compute Engine fakes
behind one `gcp.endpoint`, credentials from a service-account key file): every mutating
call of an apply, a destroy and the reclaim watcher is one `audit` line of the events
file, naming the caller by the service account's e-mail, the call, the cloud id of its
object, the outcome and the money of the change; nothing secret is in any of it.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from audit_check import audit_lines, check_line
from cloud_fakes import PROJECT
from conftest import provider_bin_path
from tests.estate.test_inventory import gcp_tf, google_with_vms  # noqa: F401 (gcp_tf: a fixture)

REGION, ZONE = "us-central1", "us-central1-b"


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    g = google_with_vms(tmp_path_factory.mktemp("audit"))
    yield g
    g.stop()


RESERVATION = f'''
resource "gpu_commitment" "floor" {{
  kind           = "gcp_reservation"
  region         = "{REGION}"
  zone           = "{ZONE}"
  instance_type  = "a3-highgpu-8g"
  instance_count = 1
}}
'''


def provider(google, extra: str = "") -> str:
    """The provider block for the fakes, allowed to buy, with `extra` settings."""
    return f'''
provider "gpu" {{
  allow_commitment_purchase = true
{google.provider()}{extra}}}
'''


def config(google) -> str:
    return provider(google) + f'''
resource "gpu_instance" "dev" {{
  cloud  = "gcp"
  region = "{REGION}"
  zone   = "{ZONE}"
  name   = "dev"
  gpu    = "A100-40GB"
  spot   = true
}}
''' + RESERVATION


def secrets_of(google) -> list[str]:
    key = json.loads(google.key.read_text())
    return [key["private_key"].splitlines()[1], key["private_key_id"]]


def watch(gcp_tf, google, events) -> None:
    done = subprocess.run(
        [str(provider_bin_path()), "watch", f"--target=gcp:{PROJECT}", "--events", str(events),
         "--gcp-endpoint", google.front.url, "--interval", "1s", "--retry-initial", "1s",
         "--retry-max", "1s", "--exit-when-idle", "--passes", "10"],
        env=gcp_tf.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_change_of_an_apply_a_destroy_and_the_watcher_is_audited(gcp_tf, google, tmp_path):
    events = tmp_path / "events.jsonl"
    gcp_tf.env = {**gcp_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    wd = gcp_tf.workdir(files={"main.tf": config(google)})
    wd.run("apply")
    vm, floor = wd.resource("gpu_instance.dev"), wd.resource("gpu_commitment.floor")
    email = json.loads(google.key.read_text())["client_email"]

    google.compute.configure({"reclaim_reads": 0})  # stopped at once: the watcher's turn
    google.compute.reclaim(PROJECT, ZONE, "dev")
    watch(gcp_tf, google, events)
    wd.run("destroy")

    lines = audit_lines(events)
    for x in lines:
        check_line(x, secrets_of(google))
        assert (x["actor"], x["cloud"], x["result"]) == (email, "gcp", "ok"), x
    by_action = {}
    for x in lines:
        by_action.setdefault(x["action"], []).append(x)
    assert sorted(by_action) == ["cancel_commitment", "delete_instance", "launch_instance",
                                 "purchase_commitment", "start_instance"], lines
    (launch,) = by_action["launch_instance"]
    assert launch["target"] == vm["id"] and launch["resource"] == "gpu_instance.dev"
    assert launch["monthly_delta_usd"] == pytest.approx(vm["monthly_usd"])
    (bought,) = by_action["purchase_commitment"]
    assert bought["target"] == floor["commitment_id"] and bought["resource"] == "gpu_commitment"
    assert bought["monthly_delta_usd"] == pytest.approx(floor["monthly_usd"])
    (start,) = by_action["start_instance"]
    assert start["target"] == vm["id"] and start["resource"] == "watch"
    (deleted,) = by_action["delete_instance"]
    assert deleted["monthly_delta_usd"] == pytest.approx(-vm["monthly_usd"])
    (cancelled,) = by_action["cancel_commitment"]
    assert cancelled["target"] == floor["commitment_id"]
    order = [x["action"] for x in lines]
    assert order.index("start_instance") < order.index("delete_instance")


API_KEY = "otlp-key-5f1d7c"  # the collector's key: sent as a header, never written anywhere


def with_audit(google, endpoint: str) -> str:
    audit = (f'  audit {{\n    otlp_endpoint = "{endpoint}"\n'
             f'    headers       = {{ "x-api-key" = "{API_KEY}" }}\n  }}\n')
    return provider(google, audit) + RESERVATION


@pytest.fixture
def receiver():
    from fakes.otel.otlp_receiver import OtlpReceiver
    r = OtlpReceiver().start()
    yield r
    r.stop()


def test_audit_events_reach_an_otlp_collector_with_every_field(gcp_tf, google, receiver, tmp_path):
    """Each audit line of the events file is also one OTLP log record, decoded here with
    the OpenTelemetry protobuf definitions: every field an attribute of the same name and
    value, the service named, the collector's key sent as a header and found nowhere else."""
    events = tmp_path / "events.jsonl"
    gcp_tf.env = {**gcp_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    wd = gcp_tf.workdir(files={"main.tf": with_audit(google, receiver.url)})
    applied = wd.run("apply")
    destroyed = wd.run("destroy")
    lines = audit_lines(events)
    assert [x["action"] for x in lines] == ["purchase_commitment", "cancel_commitment"]
    records = receiver.state()["records"]
    assert len(records) == len(lines), records
    for line, record in zip(lines, records):
        attrs = record["attributes"]
        for field, value in line.items():
            assert attrs[field] == value, (field, attrs, line)
        assert record["event_name"] == "gpu.audit" and record["severity_text"] == "INFO"
        assert record["time_unix_nano"] > 0 and line["actor"] in record["body"]
        assert record["resource"]["service.name"] == "terraform-provider-gpu"
        assert record["scope"] == "terraform-provider-gpu.audit"
    assert all(e.get("x-api-key") == API_KEY for e in receiver.state()["exports"])
    assert receiver.state()["exports"], "at least one export"
    for text in (events.read_text(), applied.output, destroyed.output,
                 json.dumps(wd.show_json())):
        assert API_KEY not in text


def test_a_collector_that_is_down_warns_and_the_events_file_keeps_the_line(
        gcp_tf, google, receiver, tmp_path):
    events = tmp_path / "events.jsonl"
    gcp_tf.env = {**gcp_tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    receiver.inject(method="POST", path="/v1/logs", status=503, count=100)
    wd = gcp_tf.workdir(files={"main.tf": with_audit(google, receiver.url)})
    res = wd.run("apply")
    flat = " ".join(res.output.split())
    assert "Warning: Audit event not delivered" in flat and "/v1/logs" in flat, res.output
    assert API_KEY not in res.output
    assert wd.resource("gpu_commitment.floor")["status"] == "active"
    assert [x["action"] for x in audit_lines(events)] == ["purchase_commitment"]
    receiver.reset()
    wd.run("destroy")


@pytest.mark.parametrize("endpoint", ["otel-collector:4318", "http://", "ftp://collector"])
def test_an_otlp_endpoint_that_is_not_a_url_is_refused_before_any_call(gcp_tf, google, endpoint):
    before = google.mutations()
    wd = gcp_tf.workdir(files={"main.tf": with_audit(google, endpoint)})
    res = wd.fails("plan")
    flat = " ".join(res.output.split())
    assert "otlp_endpoint" in flat and "http://otel-collector:4318" in flat, res.output
    assert google.mutations() == before
