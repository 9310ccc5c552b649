#!/usr/bin/env python3
"""Packages the provider as the Terraform registry publishes providers, and installs it
where Terraform finds it without any CLI configuration.

  release.py package --binary target/release/terraform-provider-gpu --out dist
      dist/terraform-provider-gpu_<version>_<os>_<arch>.zip  (the binary, named
                                                              terraform-provider-gpu_v<version>)
      dist/terraform-provider-gpu_<version>_manifest.json     (protocol version 6.0)
      dist/terraform-provider-gpu_<version>_SHA256SUMS        (sha256 of the zips and manifest)
  release.py sums --out dist
      the manifest and SHA256SUMS again over every zip in dist (after zips of several
      platforms, built on several machines, were gathered there)
  release.py install --binary target/release/terraform-provider-gpu [--plugins-dir DIR]
      DIR/registry.terraform.io/gpu-tf/gpu/<version>/<os>_<arch>/terraform-provider-gpu_v<version>
      DIR is Terraform's implied local mirror, $HOME/.terraform.d/plugins by default, so a
      configuration with `source = "gpu-tf/gpu"` and `version = "<version>"` installs it with
      plain `terraform init`.

The version is the workspace's (Cargo.toml `[workspace.package] version`); os and arch are
this machine's in Go's words (linux/darwin/windows, amd64/arm64) unless --os/--arch say
otherwise (for a binary cross-built elsewhere).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import stat
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = "terraform-provider-gpu"
ADDRESS = ("registry.terraform.io", "gpu-tf", "gpu")
PROTOCOL_VERSIONS = ["6.0"]


def workspace_version() -> str:
    with open(REPO / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def go_os() -> str:
    return {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}[platform.system()]


def go_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[machine]


def executable_name(version: str, os_name: str) -> str:
    return f"{NAME}_v{version}" + (".exe" if os_name == "windows" else "")


def package(binary: Path, out: Path, version: str, os_name: str, arch: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"{NAME}_{version}_{os_name}_{arch}.zip"
    info = zipfile.ZipInfo(executable_name(version, os_name), date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | 0o755) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(info, binary.read_bytes())
    return [archive, *sums(out, version)]


def sums(out: Path, version: str) -> list[Path]:
    """The manifest, and SHA256SUMS of every zip of `version` in `out` and the manifest."""
    manifest = out / f"{NAME}_{version}_manifest.json"
    manifest.write_text(json.dumps({"version": 1,
                                    "metadata": {"protocol_versions": PROTOCOL_VERSIONS}},
                                   indent=2) + "\n")
    files = sorted([p for p in out.glob(f"{NAME}_{version}_*.zip")] + [manifest])
    listing = out / f"{NAME}_{version}_SHA256SUMS"
    listing.write_text("".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
                               for p in files))
    return [manifest, listing]


def install(binary: Path, plugins: Path, version: str, os_name: str, arch: str) -> Path:
    target = plugins.joinpath(*ADDRESS, version, f"{os_name}_{arch}")
    target.mkdir(parents=True, exist_ok=True)
    dest = target / executable_name(version, os_name)
    tmp = dest.with_suffix(".tmp")
    shutil.copyfile(binary, tmp)
    tmp.chmod(0o755)
    os.replace(tmp, dest)
    return dest


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["package", "sums", "install"])
    p.add_argument("--binary", type=Path)
    p.add_argument("--out", type=Path, default=REPO / "dist")
    p.add_argument("--plugins-dir", type=Path,
                   default=Path.home() / ".terraform.d" / "plugins")
    p.add_argument("--version", default=None)
    p.add_argument("--os", dest="os_name", default=None)
    p.add_argument("--arch", default=None)
    a = p.parse_args()
    version = a.version or workspace_version()
    if a.command == "sums":
        for f in sums(a.out, version):
            print(f"wrote {f}")
        return 0
    if a.binary is None or not a.binary.is_file():
        print(f"release.py: no binary at {a.binary} (--binary)", file=sys.stderr)
        return 1
    os_name, arch = a.os_name or go_os(), a.arch or go_arch()
    if a.command == "package":
        for f in package(a.binary, a.out, version, os_name, arch):
            print(f"wrote {f}")
    else:
        print(f"installed {install(a.binary, a.plugins_dir, version, os_name, arch)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
