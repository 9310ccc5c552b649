"""Installing the provider as users do, with real Terraform and no dev_overrides:
`scripts/release.py package` writes the registry's files (zip, SHA256SUMS, manifest), and
Terraform installs the zip from a filesystem mirror; `scripts/release.py install` (what
`make install` runs) puts it in Terraform's implied local mirror, so a configuration with
`source = "gpu-tf/gpu"` and `version = "0.1.0"` works with plain `terraform init`. The lock
file's `h1:` hash is checked against one computed here from the package's bytes."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import provider_bin_path

REPO = Path(__file__).resolve().parents[3]
RELEASE = REPO / "scripts" / "release.py"
VERSION = tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]["version"]
TARGET = "linux_amd64"

CONFIG = f'''
terraform {{
  required_providers {{
    gpu = {{
      source  = "gpu-tf/gpu"
      version = "{VERSION}"
    }}
  }}
}}

resource "gpu_node_pool" "train" {{
  cloud     = "aws"
  region    = "us-east-1"
  cluster   = "train-east"
  name      = "train"
  gpu       = "H100"
  gpu_count = 8
  min_nodes = 1
  max_nodes = 4
  capacity {{
    spot          = true
    on_demand_min = 1
  }}
  aws {{
    node_role_arn = "arn:aws:iam::123456789012:role/nodes"
  }}
}}
'''


@pytest.fixture(autouse=True)
def no_copies_left(tmp_path):
    """Each test copies the provider (hundreds of MB in a debug build) several times:
    the copies go once the test ends, pass or fail, so the suite's disk use stays flat."""
    yield
    for p in tmp_path.iterdir():
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def release(*args: str) -> str:
    return subprocess.run([sys.executable, str(RELEASE), *args, "--binary",
                           str(provider_bin_path()), "--os", "linux", "--arch", "amd64"],
                          check=True, capture_output=True, text=True, timeout=120).stdout


def h1(files: dict[str, bytes]) -> str:
    """Terraform's `h1:` package hash (Go's dirhash.Hash1): the sha256 of the lines
    "<sha256 hex>  <name>" of every file, sorted by name; base64."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                    for name, data in sorted(files.items()))
    return "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()


def plain(terraform, tmp: Path, cli_config: str = "") -> object:
    """The `terraform` fixture without dev_overrides: its own HOME and CLI configuration."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    rc = tmp / "cli.tfrc"
    rc.write_text(cli_config)
    env = dict(terraform.env, HOME=str(home), TF_CLI_CONFIG_FILE=str(rc))
    return dataclasses.replace(terraform, env=env), home


def lock_hashes(wd) -> list[str]:
    text = (wd.path / ".terraform.lock.hcl").read_text()
    assert 'provider "registry.terraform.io/gpu-tf/gpu"' in text, text
    assert f'version     = "{VERSION}"' in text, text
    return [h.strip().strip('",') for h in text.split("hashes = [", 1)[1].split("]")[0].split()]


def test_the_release_files_install_from_a_filesystem_mirror(terraform, tmp_path):
    dist = tmp_path / "dist"
    release("package", "--out", str(dist))
    zip_path = dist / f"terraform-provider-gpu_{VERSION}_{TARGET}.zip"
    manifest = dist / f"terraform-provider-gpu_{VERSION}_manifest.json"
    sums = dist / f"terraform-provider-gpu_{VERSION}_SHA256SUMS"
    with zipfile.ZipFile(zip_path) as z:
        (entry,) = z.infolist()
        assert entry.filename == f"terraform-provider-gpu_v{VERSION}"
        assert (entry.external_attr >> 16) & 0o777 == 0o755
        binary = z.read(entry)
    assert binary == provider_bin_path().read_bytes()
    assert json.loads(manifest.read_text()) == {
        "version": 1, "metadata": {"protocol_versions": ["6.0"]}}
    listed = dict(reversed(line.split("  ")) for line in sums.read_text().splitlines())
    assert set(listed) == {zip_path.name, manifest.name}, listed
    for name, digest in listed.items():
        assert hashlib.sha256((dist / name).read_bytes()).hexdigest() == digest, name

    # The packed layout of a filesystem mirror: HOSTNAME/NAMESPACE/TYPE/<the zip>.
    mirror = tmp_path / "mirror"
    packed = mirror / "registry.terraform.io" / "gpu-tf" / "gpu"
    packed.mkdir(parents=True)
    (packed / zip_path.name).write_bytes(zip_path.read_bytes())
    tf, _ = plain(terraform, tmp_path, 'provider_installation {\n  filesystem_mirror {\n'
                                       f'    path    = "{mirror}"\n'
                                       '    include = ["registry.terraform.io/gpu-tf/gpu"]\n'
                                       '  }\n}\n')
    wd = tf.workdir(files={"main.tf": CONFIG})
    init = wd.run("init")
    assert f"Installed gpu-tf/gpu v{VERSION}" in init.output, init
    assert h1({entry.filename: binary}) in lock_hashes(wd)
    plan = wd.run("plan")
    assert "gpu_node_pool.train: +$" in plan.output, plan
    assert "development overrides" not in plan.output, plan


def test_make_install_lets_plain_terraform_init_find_the_provider(terraform, tmp_path):
    tf, home = plain(terraform, tmp_path)
    release("install", "--plugins-dir", str(home / ".terraform.d" / "plugins"))
    installed = (home / ".terraform.d" / "plugins" / "registry.terraform.io" / "gpu-tf" /
                 "gpu" / VERSION / TARGET / f"terraform-provider-gpu_v{VERSION}")
    assert installed.read_bytes() == provider_bin_path().read_bytes()
    wd = tf.workdir(files={"main.tf": CONFIG})
    init = wd.run("init")
    assert f"gpu-tf/gpu v{VERSION}" in init.output, init
    assert h1({installed.name: installed.read_bytes()}) in lock_hashes(wd)
    plan = wd.run("plan")
    assert "gpu_node_pool.train: +$" in plan.output, plan
    assert "development overrides" not in plan.output, plan
    # A second init with the lock file installs the same package again.
    again = wd.run("init")
    assert "Reusing previous version of gpu-tf/gpu" in again.output, again
