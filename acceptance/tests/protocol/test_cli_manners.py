"""The command line behaves as Unix tools do (issue 30 item 4): a closed pipe ends a
command quietly, JSON counts are integers, shells get completion scripts, `watch` fails
with one line when a target cannot be read at all, and cloud errors read as the cloud's
words, never a Rust debug dump. The binary is the real provider; no cloud is reached."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest


def run(provider_bin, *args, env=None, timeout=120):
    return subprocess.run([str(provider_bin), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("args", [
    ["offers", "--limit", "3000"],
    ["offers", "--limit", "3000", "--format", "json"],
    ["models"],
    ["completions", "bash"],
])
def test_a_closed_pipe_ends_the_command_quietly(provider_bin, args):
    """The reader takes one line and goes away (`| head -1`): the command ends with
    success and says nothing about a broken pipe or a panic."""
    p = subprocess.Popen([str(provider_bin), *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    first = p.stdout.readline()
    p.stdout.close()
    rc = p.wait(timeout=120)
    err = p.stderr.read().decode()
    assert first.strip(), "the command printed nothing"
    assert rc == 0, (rc, err)
    assert "panicked" not in err and "Broken pipe" not in err, err


def test_json_counts_are_integers(provider_bin):
    r = run(provider_bin, "offers", "--gpu", "H100", "--count", "8", "--limit", "3",
            "--format", "json")
    assert r.returncode == 0, r.stderr
    assert '"gpu_count": 8,' in r.stdout, r.stdout[:800]
    assert '"gpu_count": 8.0' not in r.stdout
    offers = json.loads(r.stdout)
    assert all(isinstance(o["gpu_count"], int) and isinstance(o["vcpus"], int)
               for o in offers), offers
    # Prices keep their fractions.
    assert any(isinstance(o["price_per_hour"], float) for o in offers), offers


@pytest.mark.parametrize("shell, marker", [
    ("bash", "complete -F"),
    ("zsh", "#compdef terraform-provider-gpu"),
    ("fish", "complete -c terraform-provider-gpu"),
])
def test_completion_scripts_name_the_subcommands(provider_bin, shell, marker):
    r = run(provider_bin, "completions", shell)
    assert r.returncode == 0, r.stderr
    assert marker in r.stdout, r.stdout[:400]
    for sub in ("offers", "commitment-size", "watch", "cost", "report"):
        assert sub in r.stdout, (shell, sub)


def test_bash_completion_completes_a_subcommand(provider_bin, tmp_path):
    """The bash script, loaded into bash, offers `offers` for `terraform-provider-gpu of`."""
    script = tmp_path / "gpu.bash"
    script.write_text(run(provider_bin, "completions", "bash").stdout)
    probe = (f"source {script}; COMP_WORDS=(terraform-provider-gpu of); COMP_CWORD=1; "
             f"COMP_LINE='terraform-provider-gpu of'; COMP_POINT=${{#COMP_LINE}}; "
             f"fn=$(complete -p terraform-provider-gpu | sed -E 's/.*-F ([^ ]+).*/\\1/'); "
             f"$fn terraform-provider-gpu of terraform-provider-gpu; "
             f"echo \"${{COMPREPLY[@]}}\"")
    r = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert "offers" in r.stdout.split(), (r.stdout, r.stderr)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_watch_fails_in_one_line_when_a_target_cannot_be_read(provider_bin):
    """Nothing answers at the AWS endpoint: `watch --once` exits 1 with one line that
    names the target and the connection error, without the SDK's debug dump."""
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x",
           "AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "1"}
    port = closed_port()
    r = run(provider_bin, "watch", "--target", "aws:us-east-1", "--once",
            "--aws-endpoint", f"http://127.0.0.1:{port}", "--retry-initial", "1s",
            env=env, timeout=180)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("terraform-provider-gpu watch: cannot read aws:us-east-1:"), lines
    assert "Connection refused" in lines[0], lines
    for dump in ("DispatchFailure(", "ConnectorError", "SdkBody", "Os {"):
        assert dump not in lines[0], lines[0]


def test_capacity_words_take_both_spellings(terraform):
    """`on-demand` and `on_demand` give the same answer; a wrong word names the valid ones."""
    config = "\n".join(
        f'data "gpu_spot_offer" "{name}" {{\n  gpu = "L4"\n  capacity = "{word}"\n}}\n'
        f'output "{name}" {{ value = data.gpu_spot_offer.{name}.instance_type }}\n'
        for name, word in (("dash", "on-demand"), ("underscore", "on_demand")))
    wd = terraform.workdir(files={"main.tf": config})
    wd.run("apply")
    out = wd.outputs()
    assert out["dash"] == out["underscore"], out
    bad = terraform.workdir(files={"main.tf": 'data "gpu_offers" "x" {\n  capacity = "on demand"\n}\n'})
    r = bad.run("validate", rc=1)
    assert '"spot", "on_demand", "either"' in r.output, r.output


def test_no_match_prints_no_empty_table_and_names_the_filter(provider_bin):
    """us-west-2's only 8x H100 on-demand price is on the stale list: nothing on stdout,
    exit 1, one line naming the filter that emptied the answer; counted, it is there."""
    args = ["offers", "--gpu", "H100", "--count", "8", "--cloud", "aws",
            "--region", "us-west-2", "--on-demand"]
    r = run(provider_bin, *args)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("no offer matches:"), lines
    assert "include_stale_prices" in lines[0], lines
    r = run(provider_bin, *args, "--include-stale-prices")
    assert r.returncode == 0 and "STALE us-west-2 p5.48xlarge on-demand: predates" in r.stdout, r
