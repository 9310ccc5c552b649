"""The round trip every `terraform query` test makes (Terraform 1.14 and later): list with
the given `list` blocks beside a provider block, generate configuration
(`-generate-config-out`), write it into a fresh working directory with no state, and check
that Terraform imports exactly what was listed, by identity, and plans nothing else, then
that after the apply the plan is empty.
"""

from __future__ import annotations


def provider_head(exported: str) -> str:
    """The `terraform` and `provider` blocks at the head of an `export` text (everything
    before its first resource)."""
    cut = min(i for i in (exported.find("\n# Found:"), exported.find("\nimport {"))
              if i >= 0)
    return exported[:cut] + "\n"


def query_and_adopt(tf, head: str, lists: str, imports: int):
    """(the `terraform query` listing, the generated configuration, the working directory
    that adopted it) for `list` blocks `lists` beside `head` (a provider block)."""
    query = tf.workdir(files={"main.tf": head, "estate.tfquery.hcl": lists})
    listing = query.run("query", "-no-color").output
    query.run("query", "-no-color", "-generate-config-out=generated.tf")
    generated = (query.path / "generated.tf").read_text()
    assert generated.count("import {") == imports, f"{listing}\n{generated}"
    assert generated.count("identity = {") == imports, generated
    wd = tf.workdir(files={"main.tf": head, "generated.tf": generated})
    plan = wd.run("plan")
    assert f"{imports} to import, 0 to add, 0 to change, 0 to destroy" in plan.output, \
        f"{generated}\n{plan.output}"
    wd.run("apply")
    wd.assert_plan_empty()
    return listing, generated, wd
