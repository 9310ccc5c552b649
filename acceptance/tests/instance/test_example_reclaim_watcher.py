"""examples/reclaim-watcher: the manifests parse, the RBAC grants only what leader election
needs (Leases get/create/update in coordination.k8s.io), and the Deployment and CronJob
only use flags `terraform-provider-gpu watch --help` really lists."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from conftest import EXAMPLES, provider_bin_path

EXAMPLE = EXAMPLES / "reclaim-watcher"


def docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((EXAMPLE / name).read_text()) if d]


def one(name: str, kind: str) -> dict:
    (doc,) = [d for d in docs(name) if d["kind"] == kind]
    return doc


@pytest.fixture(scope="module")
def watch_flags() -> set[str]:
    done = subprocess.run([str(provider_bin_path()), "watch", "--help"], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return set(re.findall(r"(?m)^\s+(--[a-z][a-z0-9-]*)", done.stdout))


def flags_of(args: list[str]) -> dict[str, str | None]:
    out = {}
    for a in args:
        if a.startswith("--"):
            name, _, value = a.partition("=")
            out[name] = value or None
    return out


def container(pod_spec: dict) -> dict:
    (c,) = pod_spec["containers"]
    return c


def test_the_files_are_there_and_parse():
    names = sorted(p.name for p in EXAMPLE.iterdir())
    assert names == ["README.md", "cronjob.yaml", "deployment.yaml", "rbac.yaml"], names
    for name in ("rbac.yaml", "deployment.yaml", "cronjob.yaml"):
        assert all("apiVersion" in d and "kind" in d for d in docs(name)), name


def test_rbac_grants_only_lease_get_create_update():
    kinds = [d["kind"] for d in docs("rbac.yaml")]
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds, kinds
    role = one("rbac.yaml", "Role")
    verbs = set()
    for rule in role["rules"]:
        assert rule["apiGroups"] == ["coordination.k8s.io"], rule
        assert rule["resources"] == ["leases"], rule
        verbs |= set(rule["verbs"])
    assert verbs == {"get", "create", "update"}, verbs
    names = {n for r in role["rules"] for n in r.get("resourceNames", [])}
    lease = flags_of(container(one("deployment.yaml", "Deployment")["spec"]["template"]["spec"])
                     ["args"])["--lease-name"]
    assert names <= {lease}, (names, lease)
    binding = one("rbac.yaml", "RoleBinding")
    sa = one("rbac.yaml", "ServiceAccount")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                    "namespace": sa["metadata"]["namespace"]}]
    assert role["metadata"]["namespace"] == sa["metadata"]["namespace"]


def test_deployment_runs_two_elected_replicas_with_real_flags(watch_flags):
    dep = one("deployment.yaml", "Deployment")
    assert dep["spec"]["replicas"] == 2
    pod = dep["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == one("rbac.yaml", "ServiceAccount")["metadata"]["name"]
    assert dep["metadata"]["namespace"] == one("rbac.yaml", "Role")["metadata"]["namespace"]
    c = container(pod)
    assert c["args"][0] == "watch"
    flags = flags_of(c["args"][1:])
    assert set(flags) <= watch_flags, set(flags) - watch_flags
    assert {"--lease-name", "--metrics-addr", "--target"} <= set(flags)
    assert "--once" not in flags
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    port = int(flags["--metrics-addr"].rsplit(":", 1)[1])
    assert [p["containerPort"] for p in c["ports"]] == [port]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]


def test_cronjob_is_the_once_variant(watch_flags):
    job = one("cronjob.yaml", "CronJob")
    assert job["spec"]["concurrencyPolicy"] == "Forbid"
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    c = container(pod)
    assert c["args"][0] == "watch"
    flags = flags_of(c["args"][1:])
    assert set(flags) <= watch_flags, set(flags) - watch_flags
    assert "--once" in flags and "--target" in flags
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True


def test_the_readme_lists_every_flag_of_watch(watch_flags):
    readme = (EXAMPLE / "README.md").read_text()
    missing = {f for f in watch_flags - {"--help"} if f"`{f}`" not in readme}
    assert not missing, missing
