"""The round trip every `export` test makes: run `terraform-provider-gpu export` with the
given flags and environment, write its Terraform form into a fresh working directory with
no state, and check that Terraform imports exactly what it lists and plans nothing else,
then that after the apply the plan is empty.
"""

from __future__ import annotations

import subprocess


def run_export(provider_bin, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess:
    """`terraform-provider-gpu export FLAGS` in `env`."""
    return subprocess.run([str(provider_bin), "export", *flags], capture_output=True,
                          text=True, timeout=180, env=env)


def export_and_adopt(tf, provider_bin, env: dict[str, str], flags: list[str], imports: int):
    """The exported text and the working directory that adopted it."""
    res = run_export(provider_bin, env, *flags)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert text.count("import {") == imports, text
    wd = tf.workdir(files={"main.tf": text})
    plan = wd.run("plan")
    assert f"{imports} to import, 0 to add, 0 to change, 0 to destroy" in plan.output, \
        f"{text}\n{plan.output}"
    wd.run("apply")
    wd.assert_plan_empty()
    return text, wd
