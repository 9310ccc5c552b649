"""The harness itself: both Terraform commands and their versions, the shim's exit codes,
the CLI config override, a `terraform_data` lifecycle. These need no provider and pass
before it exists."""

import pytest


def test_terraform_versions(terraform_versions):
    assert terraform_versions["1.15"].startswith("1.15.")
    assert terraform_versions["1.0"] == "1.0.3"


def test_version_command(plain_terraform):
    res = plain_terraform.workdir(provider_block=False).run("version")
    assert res.stdout.startswith(f"Terraform v{plain_terraform.version}.")


def test_exit_codes_pass_through(plain_terraform):
    wd = plain_terraform.workdir(provider_block=False, files={"main.tf": 'output "x" { value = 1 }\n'})
    wd.run("validate")
    # unknown command -> 1
    wd.run("no-such-command", rc=1)
    # plan with changes -> 2 under -detailed-exitcode (a new output counts as a change)
    wd.run("plan", "-detailed-exitcode", rc=2)
    wd.run("apply")
    assert wd.outputs() == {"x": 1}
    wd.run("plan", "-detailed-exitcode", rc=0)


def test_cli_config_is_ours(plain_terraform):
    """The environment may point TF_CLI_CONFIG_FILE at a missing file; ours must win."""
    res = plain_terraform.workdir(provider_block=False,
                                  files={"main.tf": "locals {}\n"}).run("validate")
    assert "CLI configuration" not in res.output, res


def test_unsupported_argument_is_a_diagnostic(plain_terraform):
    wd = plain_terraform.workdir(provider_block=False,
                                 files={"main.tf": 'output "x" {\n  bogus = 1\n  value = 1\n}\n'})
    res = wd.fails("validate")
    assert "Unsupported argument" in res.output


@pytest.mark.tf_min("1.4")
def test_terraform_data_lifecycle(plain_terraform):
    wd = plain_terraform.workdir(provider_block=False, files={"main.tf": (
        'resource "terraform_data" "x" {\n  input = 40\n}\n'
        'output "o" {\n  value = terraform_data.x.output\n}\n')})
    wd.run("plan", "-out=tfplan")
    plan = wd.show_json("tfplan")
    assert [rc["change"]["actions"] for rc in plan["resource_changes"]] == [["create"]]
    wd.run("apply", "tfplan")
    assert wd.outputs() == {"o": 40}
    assert wd.plan_is_empty()
    wd.run("destroy")
    assert wd.state_resources() == []
