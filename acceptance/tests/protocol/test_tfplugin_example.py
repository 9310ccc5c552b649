"""tfplugin used by a stranger: the one-file provider in crates/tfplugin/examples (no GPU
code, no gpu-core) served to the real Terraform CLI, every version of the suite: schema,
validation with an attribute path, a data source read in a plan, and a resource built on
the SDK's traits and router: plan modifiers (requires-replace, semantic equality,
use-state-for-unknown), private state, the timeouts block and import by ImportId."""

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
        target = Path(__file__).resolve().parents[3] / target
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


NOTE = """
terraform {
  required_providers {
    hello = { source = "example/hello" }
  }
}

resource "hello_note" "n" {
  name  = "NAME"
  text  = "TEXT"
  style = "STYLE"
  timeouts {
    create = "CREATE"
  }
}

output "note" {
  value = hello_note.n
}
"""


def note(name="todo", text="buy milk", style="shout", create="2m") -> str:
    return (NOTE.replace("NAME", name).replace("TEXT", text).replace("STYLE", style)
            .replace("CREATE", create))


def test_example_resource_plan_modifiers_and_private_state(hello_tf):
    wd = hello_tf.workdir(files={"main.tf": note()}, provider_block=False)
    res = wd.run("apply")
    assert not res.crash_markers(), res
    out = wd.outputs()["note"]
    assert (out["id"], out["revision"], out["style"]) == ("todo", 1, "shout"), out

    # Semantic equality: a new letter case of the style is no change.
    (wd.path / "main.tf").write_text(note(style="SHOUT"))
    assert wd.plan_is_empty()

    # An in-place update: the revision counter (kept in private state) moves on.
    (wd.path / "main.tf").write_text(note(text="buy bread"))
    res = wd.run("apply")
    assert "1 changed" in res.stdout, res
    out = wd.outputs()["note"]
    assert (out["text"], out["revision"], out["id"]) == ("buy bread", 2, "todo"), out

    # Requires-replace: a new name replaces the note (and its private state).
    (wd.path / "main.tf").write_text(note(name="later", text="buy bread"))
    wd.run("plan", "-out=tfplan")
    changes = wd.show_json("tfplan")["resource_changes"]
    assert changes[0]["change"]["actions"] == ["delete", "create"], changes
    wd.run("apply", "tfplan")
    out = wd.outputs()["note"]
    assert (out["id"], out["revision"]) == ("later", 1), out


def test_example_resource_validation_names_attributes(hello_tf):
    wd = hello_tf.workdir(files={"main.tf": note(name="Todo", style="loud", create="soon")},
                          provider_block=False)
    res = wd.run("validate", "-json", rc=1)
    errors = {d["summary"]: d for d in res.json()["diagnostics"] if d["severity"] == "error"}
    assert set(errors) == {"Invalid name", "Invalid style", "Invalid timeouts.create"}, errors
    assert "lower-case letters" in errors["Invalid name"]["detail"]
    assert "`plain` or `shout`" in errors["Invalid style"]["detail"]
    assert '"soon"' in errors["Invalid timeouts.create"]["detail"]


def test_example_resource_imports_by_import_id(hello_tf):
    config = note(text="buy milk").replace('  style = "shout"\n', "")
    # No output: an import saves no outputs, so one would be a change in the next plan.
    config = config[:config.index("  timeouts {")] + "}\n"
    wd = hello_tf.workdir(files={"main.tf": config}, provider_block=False)
    res = wd.run("import", "hello_note.n", "todo", rc=1)
    assert "must look like `<name>/<text>`" in res.output, res
    wd.run("import", "hello_note.n", "todo/buy milk")
    values = wd.resource("hello_note.n")
    assert (values["name"], values["text"], values["id"]) == ("todo", "buy milk", "todo")
    assert wd.plan_is_empty()
