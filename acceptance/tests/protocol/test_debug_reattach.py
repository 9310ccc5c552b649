"""`terraform-provider-gpu --debug`: the provider serves on its own and Terraform attaches
to it through TF_REATTACH_PROVIDERS (no dev_overrides, no launch by Terraform)."""

import json
import subprocess
import time

import pytest


def start_debug(provider_bin, env):
    env = {k: v for k, v in env.items() if not k.startswith(("TF_PLUGIN", "PLUGIN_"))}
    proc = subprocess.Popen([str(provider_bin), "--debug"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if "TF_REATTACH_PROVIDERS=" in line:
            value = line.split("TF_REATTACH_PROVIDERS=", 1)[1].strip().strip("'")
            return proc, json.loads(value)
    proc.kill()
    raise AssertionError(f"no TF_REATTACH_PROVIDERS line; stderr: {proc.stderr.read()}")


def test_reattach_plan(terraform, provider_bin):
    proc, reattach = start_debug(provider_bin, terraform.env)
    try:
        (addr, cfg), = reattach.items()
        assert addr == "registry.terraform.io/gpu-tf/gpu"
        assert cfg["Protocol"] == "grpc" and cfg["ProtocolVersion"] == 6
        assert cfg["Pid"] == proc.pid
        assert cfg["Addr"]["Network"] == "tcp" and cfg["Addr"]["String"].startswith("127.0.0.1:")

        wd = terraform.workdir(files={"main.tf": (
            'data "gpu_models" "amd" {\n  vendor = "amd"\n}\n'
            'output "amd" {\n  value = data.gpu_models.amd.names\n}\n')})
        # Attach without dev_overrides: an empty CLI config, so only the reattached
        # process can answer for the provider.
        empty_rc = wd.path / "empty.tfrc"
        empty_rc.write_text("")
        wd.tf.env = dict(wd.tf.env, TF_REATTACH_PROVIDERS=json.dumps(reattach),
                         TF_CLI_CONFIG_FILE=str(empty_rc))
        if terraform.version != "1.15":
            wd.run("init")  # 1.0 still resolves the provider before attaching
        wd.run("apply")
        assert "MI300X" in wd.outputs()["amd"]
        assert proc.poll() is None, "a debug session must outlive the Terraform run"
    finally:
        proc.kill()
        proc.wait(timeout=10)
