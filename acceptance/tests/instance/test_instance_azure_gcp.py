"""`gpu_instance` on Azure and on Google Cloud, each test once per cloud (ids `azure`,
`gcp`), under real Terraform against the ARM VM and Compute Engine fakes through the
provider's real credential chains: a reclaimed Spot VM (Azure's eviction with the
Deallocate policy, Google's preemption with termination action STOP) stays with its disk,
the plan stays empty, and the watcher runs the same VM with the same disk again once
capacity returns; labels change in place and a new size rolls the VM, new first; a VM a
person stopped reads stopped and is left alone; an imported VM is adopted without a new
VM, taking what the cloud does not report from the configuration; a capacity refusal at
create leaves nothing and says where.

Each cloud is one small description below (`Azure`, `Gcp`): its fixtures and helpers (from
`test_instance_azure.py` and `test_instance_gcp.py`, where what only that cloud has is
tested), its names and sizes, how its fake's VMs read (identity, disks, power), how the
cloud reclaims a VM and how a person stops one. An assertion only one cloud makes is guarded
by `cloud.id`. What exists is read from the fakes' `/_fake/state`, not through the provider.
"""

from __future__ import annotations

import json
import re

import pytest

from per_cloud import per_cloud
from cloud_fakes import PROJECT
from tests.instance import test_instance_azure as az
from tests.instance import test_instance_gcp as gc
# The per-cloud fixtures, started once for this module (one fake per cloud).
from tests.instance.test_instance_azure import arm, az_tf, azure  # noqa: F401
from tests.instance.test_instance_gcp import gce, gcp_tf, google  # noqa: F401

ADDR = "gpu_instance.train"


class Azure:
    """Azure: a Spot VM in eastus zone 1 with its OS disk and NIC, through ARM."""

    id, answered = "azure", "Azure"
    fixtures = ("azure", "arm", "az_tf")
    region, zone, gpu, size = az.REGION, "1", "A100-80GB", az.SIZE
    newest = az.NEWEST, "the newest version of the Azure HPC image"
    other_size = "Standard_NC4as_T4_v3"
    # A re-spelling of the configuration that is not a change.
    respellings = (('cloud     = "azure"', 'cloud     = "AZURE"'),
                   ('"A100-80GB"', '"a100 80gb"'))
    gpu_line = 'gpu       = "A100-80GB"'
    import_extra = ""  # the configuration has `user_data` and an `azure` block already
    taken = ["user_data", "azure.ssh_public_key", "azure.subnet_id"]
    # The allocation failure ARM answers for each outcome.
    refusals = {"stockout": "ZonalAllocationFailed", "not_offered": "SkuNotAvailable"}

    def __init__(self, fakes, fake, tf):
        self.fakes, self.fake, self.tf = fakes, fake, tf

    def config(self, extra: str = "", labels: str = '{ team = "ml" }') -> str:
        return az.config(self.fake, extra, labels)

    def vms(self) -> list[dict]:
        return az.vms(self.fake)

    def watch(self):
        return az.watch(self.tf)

    @staticmethod
    def instance_id(vm: dict) -> str:
        return vm["properties"]["vmId"]

    @staticmethod
    def vm_name(vm: dict) -> str:
        return vm["name"]

    @staticmethod
    def machine_of(vm: dict) -> str:
        return vm["properties"]["hardwareProfile"]["vmSize"]

    @staticmethod
    def disks_of(vm: dict) -> list[str]:
        return [vm["properties"]["storageProfile"]["osDisk"]["managedDisk"]["id"]]

    @staticmethod
    def is_running(vm: dict) -> bool:
        return az.power(vm) == "PowerState/running"

    @staticmethod
    def is_stopped(vm: dict) -> bool:
        return az.power(vm) == "PowerState/deallocated"

    def the_disk(self) -> str:
        """The id of the one OS disk, its resource group as the VM spells it."""
        (disk,) = self.fake.state()["disks"]
        return disk["id"]

    def import_id(self, vm: dict) -> str:
        return vm["id"]

    def assert_a_spot_vm_that_stops(self, vm: dict, s: dict) -> None:
        """Spot with the Deallocate eviction policy at any price, in zone 1; disk and NIC
        go with the VM; custom data and no password; the marker tag; a generated name."""
        p = vm["properties"]
        assert p["priority"] == "Spot" and p["evictionPolicy"] == "Deallocate"
        assert p["billingProfile"]["maxPrice"] == -1 and vm["zones"] == ["1"]
        assert p["storageProfile"]["osDisk"]["deleteOption"] == "Delete"
        assert p["networkProfile"]["networkInterfaces"][0]["properties"]["deleteOption"] == \
            "Delete"
        assert vm["fake"]["has_custom_data"] and not vm["fake"]["has_admin_password"]
        assert vm["tags"]["gpu-tf-instance"] == vm["name"] and vm["tags"]["team"] == "ml"
        assert s["name"] == vm["name"] and vm["name"].startswith("gpu-") and \
            len(vm["name"]) == 12
        assert s["id"] == vm["id"]

    def reclaim(self, vm: dict) -> None:
        """Azure evicts the VM (deallocated, not deleted) and the size is short for the
        next two starts."""
        self.fake.reclaim(vm["id"])
        self.fake.set_capacity(self.region, self.size, short=2)

    def assert_reclaimed(self, vm: dict) -> None:
        assert self.is_stopped(vm) and vm["fake"]["evictions"] == 1

    def person_stops(self, vm: dict) -> None:
        """`az vm deallocate` by someone else, with their own token."""
        az.person_deallocates(self.fakes, vm["id"])

    def refuse(self, outcome: str) -> list[str]:
        """ARM accepts the VM, then its allocation fails with the outcome's code; returns
        the words the error must hold."""
        code = self.refusals[outcome]
        self.fake.set_capacity(self.region, self.size, short=1, code=code)
        return [code]

    def no_vm_left(self) -> bool:
        return [v for v in self.fake.state()["vms"]
                if v["properties"].get("provisioningState") != "Deleting"] == []

    def assert_new_before_old(self, new: dict, old: dict) -> None:
        log = [(r["method"], r["path"].lower()) for r in self.fake.state()["requests"]]
        put = max(i for i, (m, p) in enumerate(log)
                  if m == "PUT" and p.endswith("/virtualmachines/" + new["name"].lower()))
        delete = max(i for i, (m, p) in enumerate(log)
                     if m == "DELETE" and p.endswith("/virtualmachines/" + old["name"].lower()))
        assert put < delete, "the new VM is created before the old one is deleted"

    def assert_nothing_left(self) -> None:
        state = self.fake.state()
        assert state["vms"] == [] and state["disks"] == [] and state["nics"] == []


class Gcp:
    """Google Cloud: a Spot VM `train` in us-central1-a with its boot disk, through
    Compute Engine."""

    id, answered = "gcp", "Google Cloud"
    fixtures = ("google", "gce", "gcp_tf")
    region, zone, gpu, size = gc.REGION, gc.ZONE, "A100-40GB", "a2-highgpu-1g"
    newest = gc.NEWEST, "the newest image of the Deep Learning VM family"
    other_size = "g2-standard-8"
    respellings = (('cloud  = "gcp"', 'cloud  = "GCP"'), ('"A100-40GB"', '"a100 40gb"'))
    gpu_line = 'gpu    = "A100-40GB"'
    import_extra = '  user_data = "#cloud-config"\n  gcp {\n    network = "default"\n  }\n'
    taken = ["VM: gpu, user_data, gcp."]
    refusals = {"stockout": ["does not have enough resources available",
                             "Nothing was made there."]}

    def __init__(self, fakes, fake, tf):
        self.fakes, self.fake, self.tf = fakes, fake, tf

    def config(self, extra: str = "", labels: str = '{ team = "ml" }') -> str:
        return gc.config(self.fake, extra, labels)

    def vms(self) -> list[dict]:
        return gc.vms(self.fake)

    def watch(self):
        return gc.watch(self.tf)

    @staticmethod
    def instance_id(vm: dict) -> str:
        return vm["id"]

    @staticmethod
    def vm_name(vm: dict) -> str:
        return vm["name"]

    @staticmethod
    def machine_of(vm: dict) -> str:
        return vm["machineType"].rsplit("/", 1)[-1]

    @staticmethod
    def disks_of(vm: dict) -> list[str]:
        return [d["source"] for d in vm["disks"]]

    @staticmethod
    def is_running(vm: dict) -> bool:
        return vm["status"] == "RUNNING"

    @staticmethod
    def is_stopped(vm: dict) -> bool:
        return vm["status"] == "TERMINATED"

    def the_disk(self) -> str:
        return f"projects/{PROJECT}/zones/{self.zone}/disks/train"

    def import_id(self, vm: dict) -> str:
        return f"projects/{PROJECT}/zones/{self.zone}/instances/train"

    def assert_a_spot_vm_that_stops(self, vm: dict, s: dict) -> None:
        """The SPOT provisioning model with termination action STOP; the marker label."""
        assert vm["scheduling"]["provisioningModel"] == "SPOT"
        assert vm["scheduling"]["instanceTerminationAction"] == "STOP"
        assert vm["labels"]["gpu-tf-instance"] == "train" and vm["labels"]["team"] == "ml"

    def reclaim(self, vm: dict) -> None:
        """The cloud takes the capacity back (stopped, not deleted) and the machine is
        short for the next two starts."""
        self.fake.reclaim(PROJECT, self.zone, "train")
        self.fake.short_capacity(self.zone, self.size, 2)

    def assert_reclaimed(self, vm: dict) -> None:
        assert self.is_stopped(vm)

    def person_stops(self, vm: dict) -> None:
        """`gcloud compute instances stop` with the person's own token; the stop's
        operation ends: TERMINATED."""
        gc.person_stops(self.fakes, vm["name"])
        self.fake.complete()

    def refuse(self, outcome: str) -> list[str]:
        """Compute Engine refuses the VM (ZONE_RESOURCE_POOL_EXHAUSTED); returns the words
        the error must hold."""
        self.fake.short_capacity(self.zone, self.size, 1)
        return self.refusals[outcome]

    def no_vm_left(self) -> bool:
        return self.vms() == []

    def assert_new_before_old(self, new: dict, old: dict) -> None:
        log = [(r["method"], r["path"]) for r in self.fake.state()["requests"]]
        insert = max(i for i, (m, p) in enumerate(log)
                     if m == "POST" and p.endswith("/instances"))
        delete = max(i for i, (m, p) in enumerate(log) if m == "DELETE")
        assert insert < delete, "the new VM is created before the old one is deleted"

    def assert_nothing_left(self) -> None:
        assert self.vms() == [] and self.fake.state()["disks"] == []


each_cloud, cloud = per_cloud(Azure, Gcp)

def flat(res) -> str:
    return " ".join(res.output.split())


@each_cloud
def test_a_reclaimed_spot_vm_stays_with_its_disk_and_runs_again_as_the_same_vm(cloud):
    c = cloud
    wd = c.tf.workdir(files={"main.tf": c.config()})
    res = wd.run("plan", "-out=tfplan")
    out = flat(res)
    assert re.search(r"Warning: gpu_instance(\.[a-z0-9-]+)?: \+\$", out) and c.size in out, out
    planned = wd.show_json("tfplan")["planned_values"]["root_module"]["resources"][0]["values"]
    image, which = c.newest
    assert planned["image"] == image, which
    assert planned["reclaim"] == "stop" and planned["instance_type"] == c.size
    assert planned["hourly_usd"] > 0
    wd.run("apply", "tfplan")
    (vm,) = c.vms()
    s = wd.resource(ADDR)
    c.assert_a_spot_vm_that_stops(vm, s)
    assert s["status"] == "running" and s["instance_id"] == c.instance_id(vm)
    disk = c.the_disk()
    assert s["disk_ids"] == [disk]
    wd.assert_plan_empty()

    # The cloud takes the capacity back: stopped, not deleted; not drift.
    c.reclaim(vm)
    wd.assert_plan_empty()
    wd.run("apply", "-refresh-only")
    s = wd.resource(ADDR)
    assert s["status"] == "stopped_by_reclaim" and s["reclaims"] == 1
    assert s["last_reclaimed_at"]
    wd.assert_plan_empty()
    (stopped,) = c.vms()
    c.assert_reclaimed(stopped)
    assert c.instance_id(stopped) == c.instance_id(vm)

    # The watcher brings it back: two refused starts, then the same VM and disk run.
    events, summary = c.watch()
    print("\n".join(json.dumps(e) for e in events), summary, sep="\n")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "reclaimed" and kinds[-1] == "started", kinds
    assert kinds.count("start_attempt") == 3
    if c.id == "azure":
        assert kinds == ["reclaimed", "start_attempt", "start_attempt", "start_attempt",
                         "started"], kinds
        assert all(e["cloud"] == "azure" and e["instance"] == vm["id"] for e in events)
        assert all(e.get("gpu") == "A100-80GB" for e in events)
        assert "SkuNotAvailable" in events[1]["detail"] and events[3]["detail"] == "accepted"
        assert "azure" in summary and "A100-80GB" in summary
    (back,) = c.vms()
    assert c.is_running(back) and c.instance_id(back) == c.instance_id(vm)
    assert c.disks_of(back) == c.disks_of(vm)
    wd.run("apply", "-refresh-only")
    s = wd.resource(ADDR)
    assert s["status"] == "running" and s["reclaims"] == 1 and s["disk_ids"] == [disk]
    assert s["instance_id"] == c.instance_id(vm)
    wd.assert_plan_empty()
    if c.id == "azure":
        # Nothing secret reached the fake's logs or Terraform's output.
        assert "runcmd" not in json.dumps(c.fake.state()["requests"])
    wd.run("destroy")
    c.assert_nothing_left()


@each_cloud
def test_labels_change_in_place_and_a_new_size_rolls_the_vm_new_first(cloud):
    c = cloud
    wd = c.tf.workdir(files={"main.tf": c.config()})
    wd.run("apply")
    (vm,) = c.vms()
    research = c.config(labels='{ team = "research" }')
    (wd.path / "main.tf").write_text(research)
    wd.run("apply")
    (same,) = c.vms()
    assert c.instance_id(same) == c.instance_id(vm)
    if c.id == "azure":
        assert same["tags"] == {"team": "research", "gpu-tf-instance": vm["name"]}
    else:
        assert same["labels"]["team"] == "research"
    wd.assert_plan_empty()
    # A re-spelling is not a change.
    respelled = research
    for old, new in c.respellings:
        respelled = respelled.replace(old, new)
    (wd.path / "main.tf").write_text(respelled)
    wd.assert_plan_empty()
    # Another size: a new VM, running before the old one is deleted.
    (wd.path / "main.tf").write_text(research.replace(
        c.gpu_line, f'instance_type = "{c.other_size}"'))
    res = wd.run("apply")
    assert f"rolls VM {c.vm_name(vm)}" in flat(res) and "`instance_type` changes" in flat(res)
    (new,) = c.vms()
    assert c.vm_name(new).startswith(c.vm_name(vm) + "-")
    assert c.machine_of(new) == c.other_size
    if c.id == "azure":
        assert c.is_running(new)
    c.assert_new_before_old(new, vm)
    if c.id == "azure":
        state = c.fake.state()
        assert len(state["disks"]) == 1 and len(state["nics"]) == 1, \
            "the old disk and NIC went"
        s = wd.resource(ADDR)
        assert s["vm_name"] == new["name"] and s["instance_id"] == c.instance_id(new)
    wd.assert_plan_empty()


@each_cloud
def test_a_vm_a_person_stopped_reads_stopped_and_is_left_alone(cloud):
    c = cloud
    wd = c.tf.workdir(files={"main.tf": c.config()})
    wd.run("apply")
    (vm,) = c.vms()
    c.person_stops(vm)
    wd.run("apply", "-refresh-only")
    assert wd.resource(ADDR)["status"] == "stopped"
    wd.assert_plan_empty()
    events, _ = c.watch()
    assert [e["event"] for e in events] == ["left_stopped"]
    assert "person" in events[0]["detail"]
    (still,) = c.vms()
    assert c.is_stopped(still)
    starts = [r for r in c.fake.state()["requests"] if r["path"].lower().endswith("/start")]
    assert starts == [], "the watcher never starts a VM a person stopped"


@each_cloud
def test_an_imported_vm_is_adopted_taking_what_the_cloud_does_not_report_from_the_config(
        cloud):
    """`terraform import` by the VM's cloud id: the read fills what the cloud reports; what
    it does not (user_data, and the cloud's block) comes from the configuration without
    touching the VM; the plan after that apply is empty and the VM is priced."""
    c = cloud
    wd = c.tf.workdir(files={"main.tf": c.config(extra=c.import_extra)})
    wd.run("apply")
    (vm,) = c.vms()
    wd.run("state", "rm", ADDR)
    if c.id == "gcp":
        bad = wd.run("import", ADDR, "train", rc=1)
        assert "aws/<region>/<instance-id>" in flat(bad)
    wd.run("import", ADDR, c.import_id(vm))
    s = wd.resource(ADDR)
    assert s["instance_id"] == c.instance_id(vm) and s["instance_type"] == c.size
    assert s["spot"] is True and s["reclaim"] == "stop"
    assert s["region"] == c.region and s["name"] == c.vm_name(vm)
    res = wd.run("plan", "-out=tfplan")
    out = flat(res)
    assert "rolls VM" not in out and "values taken from the configuration" in out, out
    for word in c.taken:
        assert word in out, (word, out)
    res = wd.run("apply", "tfplan")
    assert "rolls VM" not in flat(res), res.output
    (same,) = c.vms()
    assert c.instance_id(same) == c.instance_id(vm), \
        "the import adopted the VM, it did not make a new one"
    s = wd.resource(ADDR)
    assert s["gpu"] == c.gpu and s["hourly_usd"] > 0 and s["monthly_delta_usd"] == 0
    wd.assert_plan_empty()


@pytest.mark.parametrize("cloud, outcome", [("azure", "stockout"), ("azure", "not_offered"),
                                            ("gcp", "stockout")], indirect=["cloud"])
def test_a_capacity_refusal_at_create_leaves_nothing_and_says_where(cloud, outcome, tmp_path):
    """The cloud refuses the VM for capacity (Azure accepts it, then its allocation fails
    and the VM is left Failed: the apply deletes it with its NIC and disk; Compute Engine
    refuses the insert): the apply fails with one error naming the outcome, the place and
    the cloud's code and words, and records nothing; with capacity back the same
    configuration applies. On Google Cloud the events file says request, capacity,
    request, ready, and `time_to_ready_seconds` is the ready line's."""
    c = cloud
    events = tmp_path / "events.jsonl"
    if c.id == "gcp":
        c.tf.env = {**c.tf.env, "GPU_TF_EVENTS_FILE": str(events)}
    words = c.refuse(outcome)
    wd = c.tf.workdir(files={"main.tf": c.config()})
    res = wd.fails("apply")
    text = flat(res)
    assert f"No GPU capacity for gpu_instance at {c.id} {c.region} {c.zone}" in text, \
        res.output
    assert f"{c.answered} answered {outcome} for a spot {c.size}" in text, res.output
    for word in words:
        assert word in text, (word, res.output)
    assert wd.state_resources() == []
    assert c.no_vm_left(), c.fake.state()
    wd.run("apply")
    assert len(c.vms()) == 1
    if c.id == "gcp":
        every = [json.loads(line) for line in events.read_text().splitlines()]
        lines = [e for e in every if e["event"] != "audit"]
        assert [e["event"] for e in lines] == ["request", "capacity", "request", "ready"], \
            lines
        audited = [(e["action"], e["result"]) for e in every if e["event"] == "audit"]
        assert audited == [("launch_instance", "insufficient_capacity"),
                           ("launch_instance", "ok")]
        for e in lines:
            assert (e["cloud"], e["region"], e["zone"], e["gpu"]) == (
                "gcp", c.region, c.zone, c.gpu), e
            assert e["resource"] == ADDR, e
        assert lines[1]["outcome"] == "stockout"
        assert wd.resource(ADDR)["time_to_ready_seconds"] == lines[3]["seconds"]
    wd.assert_plan_empty()
    wd.run("destroy")
