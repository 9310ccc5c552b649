"""Many `gpu_node_pool` on one cluster (issue 26), used by
`tests/node_pool/test_many_pools_aks_gke.py` on AKS and on GKE: the configuration of
`POOLS` pools, the scenario (apply, a label change on all, destroy with lost delete
answers; each must succeed in one Terraform run at the default parallelism, against fakes
that refuse a second operation per cluster and throttle 30 % of the requests), its
figures and reliability row, and two workspaces applied at once on one cluster.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import reliability

POOLS = 20
RATE = 0.3


def config(fakes, cloud: str, region: str, cluster: str, prefix: str, gpu: str,
           workload: str) -> str:
    """A provider block and `POOLS` pools on one cluster, each a floor of 1 on-demand
    node and up to 2 spot nodes."""
    out = ['provider "gpu" {\n' + fakes.provider() + '  default_labels = {\n'
           '    team = "ml"\n  }\n}\n']
    for i in range(POOLS):
        out.append(
            f'resource "gpu_node_pool" "p{i:02d}" {{\n'
            f'  cloud     = "{cloud}"\n  region    = "{region}"\n'
            f'  cluster   = "{cluster}"\n  name      = "{prefix}{i:02d}"\n'
            f'  gpu       = "{gpu}"\n  gpu_count = 1\n'
            '  min_nodes = 1\n  max_nodes = 3\n'
            '  capacity {\n    spot          = true\n    on_demand_min = 1\n  }\n'
            f'  labels = {{\n    workload = "{workload}"\n  }}\n'
            '}\n')
    return "\n".join(out)


def waits(output: str) -> list[float]:
    """The seconds each pool waited for its turn, from the apply's warnings."""
    return [float(s) for s in re.findall(r"waited ([0-9]+(?:\.[0-9]+)?) s for its turn",
                                         output)]


class Scenario:
    """One cloud's run: the workdir, the fake, and the figures of each step."""

    def __init__(self, tf, fakes, cloud, region, cluster_id, cluster, prefix, gpu,
                 fake, ours):
        self.tf, self.fakes, self.cloud, self.region = tf, fakes, cloud, region
        self.cluster_id, self.cluster, self.prefix, self.gpu = cluster_id, cluster, prefix, gpu
        self.fake, self.ours = fake, ours
        self.figures: dict[str, dict] = {}
        self.wd = tf.workdir(files={"main.tf": self.main("training")})

    def main(self, workload: str) -> str:
        return config(self.fakes, self.cloud, self.region, self.cluster_id, self.prefix,
                      self.gpu, workload)

    def step(self, name: str, *args: str) -> str:
        """Runs one Terraform command; it must succeed at once. Records its figures."""
        seen = len(self.fake.state()["requests"])
        started = time.monotonic()
        res = self.wd.run(*args, rc=None, timeout=900)
        took = time.monotonic() - started
        log = [r for r in self.fake.state()["requests"][seen:]
               if f"/{self.cluster}" in r["path"] or "/operations" in r["path"]]
        self.figures[name] = {
            "seconds": round(took, 1), "requests": len(log),
            "throttled": sum(1 for r in log if r.get("injected") and r["status"] == 429),
            "lost": sum(1 for r in log if "lost_status" in r),
            "refused_busy": sum(1 for r in log if r.get("busy")),
            "waits": len(waits(res.output)),
            "longest_wait_s": max(waits(res.output), default=0.0),
        }
        assert res.returncode == 0, f"{name} needed more than one run\n{res}"
        assert not res.crash_markers(), res
        return res.output

    def pools(self) -> dict[str, list[dict]]:
        """Our GPU pools in the cluster by owning `gpu_node_pool` name."""
        out: dict[str, list[dict]] = {}
        for p in self.ours():
            out.setdefault(p["owner"], []).append(p)
        return out


def aks_pools(azure, cluster):
    def ours():
        out = []
        for name, p in azure.pools(cluster).items():
            props = p["properties"]
            if props.get("mode") != "User":
                continue
            out.append({"name": name, "owner": (props.get("tags") or {}).get("gpu-tf-pool"),
                        "capacity": props.get("scaleSetPriority", "Regular"),
                        "labels": props.get("nodeLabels") or {}})
        return out
    return ours


def gke_pools(gcp, cluster):
    def ours():
        out = []
        for name, p in gcp.pools(cluster).items():
            cfg = p["config"]
            if not cfg.get("accelerators"):
                continue
            out.append({"name": name, "owner": (cfg.get("resourceLabels") or {}).get(
                        "gpu-tf-pool"), "capacity": "Spot" if cfg.get("spot") else "Regular",
                        "labels": cfg.get("labels") or {}})
        return out
    return ours


def run(s: Scenario, throttle, lose_deletes) -> None:
    """The 20-pool scenario on one cluster: apply, relabel, destroy, each in one run."""
    throttle()
    s.step("apply", "apply")
    pools = s.pools()
    want = {f"{s.prefix}{i:02d}" for i in range(POOLS)}
    assert set(pools) == want, sorted(pools)
    for owner, groups in pools.items():
        assert sorted(g["capacity"] for g in groups) == ["Regular", "Spot"], (owner, groups)
    assert sum(len(g) for g in pools.values()) == 2 * POOLS
    assert all(g["labels"].get("workload") == "training"
               for gs in pools.values() for g in gs)
    assert s.wd.plan_is_empty(), s.wd.run("plan", rc=None)

    s.wd.path.joinpath("main.tf").write_text(s.main("inference"))
    s.step("relabel", "apply")
    pools = s.pools()
    assert sum(len(g) for g in pools.values()) == 2 * POOLS, pools
    assert all(g["labels"].get("workload") == "inference"
               for gs in pools.values() for g in gs), pools
    assert s.wd.plan_is_empty(), s.wd.run("plan", rc=None)

    lose_deletes()
    s.step("destroy", "destroy")
    assert s.pools() == {}, s.pools()
    assert s.figures["destroy"]["lost"] >= 1, s.figures

    total = {k: sum(f[k] for f in s.figures.values())
             for k in ("requests", "throttled", "lost", "refused_busy")}
    longest = max(f["longest_wait_s"] for f in s.figures.values())
    print(f"\n{s.cloud}: 20 pools on one cluster, Terraform {s.tf.version}, "
          f"default parallelism: {json.dumps(s.figures)}")
    reliability.record(
        f"20 pools on one {'AKS' if s.cloud == 'azure' else 'GKE'} cluster converged", 3, 3,
        "all", True,
        f"apply, relabel and destroy each in one run at parallelism 10 under {RATE:.0%} "
        f"throttling ({total['throttled']} throttled, {total['lost']} delete answers lost, "
        f"{total['refused_busy']} busy refusals waited out, {total['requests']} requests); "
        f"2 pools per gpu_node_pool, plans empty; longest wait {longest:.1f} s, "
        f"20-pool apply {s.figures['apply']['seconds']:.0f} s")




def two_workspaces_at_once(tf, fakes, cloud: str, region: str, cluster_id: str,
                           gpu: str, fake, cluster: str, ours) -> dict:
    """Two Terraform processes (two workspaces, so two provider processes that cannot see
    each other's turns) apply two pools each on one cluster at the same moment: both must
    succeed in one run, each pool with exactly its two groups. Returns the figures."""
    dirs = []
    for prefix in ("wsa", "wsb"):
        body = config(fakes, cloud, region, cluster_id, prefix, gpu, "training")
        # Two pools per workspace are enough to interleave.
        body = body.split('resource "gpu_node_pool" "p02"')[0]
        dirs.append(tf.workdir(files={"main.tf": body}))
    seen = len(fake.state()["requests"])
    started = time.monotonic()
    procs = [subprocess.Popen(
        [str(tf.bin), "apply", "-no-color", "-input=false", "-auto-approve"], cwd=wd.path,
        env=tf.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True) for wd in dirs]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    took = time.monotonic() - started
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
    groups: dict[str, list] = {}
    for g in ours():
        groups.setdefault(g["owner"], []).append(g["capacity"])
    assert {k: sorted(v) for k, v in groups.items()} == {
        n: ["Regular", "Spot"] for n in ("wsa00", "wsa01", "wsb00", "wsb01")}, groups
    log = [r for r in fake.state()["requests"][seen:] if f"/{cluster}" in r["path"]]
    for wd in dirs:
        assert wd.plan_is_empty(), wd.run("plan", rc=None)
        wd.run("destroy", timeout=600)
    assert ours() == []
    return {"seconds": round(took, 1), "refused_busy": sum(1 for r in log if r.get("busy")),
            "warnings": sum(len(waits(o)) for o in outs)}


def someone_elses_operation(tf, fakes, cloud: str, region: str, cluster_id: str, gpu: str,
                            fake, cluster: str, ours, hold) -> str:
    """The cluster runs an operation of someone else's for a few seconds (`hold()` starts
    it and returns how the cloud's busy answer names it) when one pool is applied: the
    apply waits it out, succeeds in one run, and its warning names that operation. Returns
    the apply's output, whitespace folded."""
    body = config(fakes, cloud, region, cluster_id, "held", gpu, "training")
    body = body.split('resource "gpu_node_pool" "p01"')[0]
    wd = tf.workdir(files={"main.tf": body})
    seen = len(fake.state()["requests"])
    operation = hold()
    res = wd.run("apply", timeout=600)
    log = [r for r in fake.state()["requests"][seen:] if f"/{cluster}" in r["path"]]
    assert sum(1 for r in log if r.get("busy")) >= 1, log
    text = re.sub(r"\s+", " ", res.output)
    assert re.search(r"waited [0-9.]+ s for its turn", text), res.output
    assert "refused the change" in text and operation in text, res.output
    assert sorted(g["capacity"] for g in ours()) == ["Regular", "Spot"]
    wd.run("destroy", timeout=600)
    return text
