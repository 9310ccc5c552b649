"""tfplugin used by a stranger: the one-file provider in crates/tfplugin/examples (no GPU
code, no gpu-core) served to the real Terraform CLI, every version of the suite: schema,
validation with an attribute path, and a data source read in a plan."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

HELLO_ADDR = "registry.terraform.io/example/hello"

CONFIG = """
terraform {
  required_providers {
    hello = { source = "example/hello" }
  }
}

data "hello_greeting" "world" {
  name     = "world"
  greeting = "Hi"
}

data "hello_greeting" "plain" {
  name = "Terraform"
}

output "texts" {
  value = [data.hello_greeting.world.text, data.hello_greeting.plain.text]
}
"""


def hello_bin() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or "target")
    if not target.is_absolute():
        target = Path(__file__).resolve().parents[2] / target
    return target / "debug" / "examples" / "terraform-provider-hello"


@pytest.fixture
def hello_tf(terraform, tmp_path):
    binary = hello_bin()
    if not binary.is_file():
        pytest.fail(f"{binary} not built: run `make build`", pytrace=False)
    rc = tmp_path / "hello.terraformrc"
    rc.write_text("provider_installation {\n  dev_overrides {\n"
                  f"    \"{HELLO_ADDR}\" = {json.dumps(str(binary.parent))}\n"
                  "  }\n  direct {}\n}\n")
    terraform.env = dict(terraform.env, TF_CLI_CONFIG_FILE=str(rc))
    return terraform


def test_example_provider_plans_and_applies(hello_tf):
    wd = hello_tf.workdir(files={"main.tf": CONFIG}, provider_block=False)
    res = wd.run("apply")
    assert not res.crash_markers(), res
    assert wd.outputs()["texts"] == ["Hi, world!", "Hello, Terraform!"]
    schema = wd.schema_json()["provider_schemas"][HELLO_ADDR]
    attrs = schema["data_source_schemas"]["hello_greeting"]["block"]["attributes"]
    assert attrs["name"]["required"] and attrs["text"]["computed"], attrs


def test_example_provider_validation_names_the_attribute(hello_tf):
    wd = hello_tf.workdir(files={"main.tf": CONFIG.replace('name     = "world"', 'name = ""')},
                          provider_block=False)
    res = wd.run("validate", "-json", rc=1)
    diags = res.json()["diagnostics"]
    errors = [d for d in diags if d["severity"] == "error"]
    assert [d["summary"] for d in errors] == ["Invalid name"], diags
    assert "must not be empty" in errors[0]["detail"]
