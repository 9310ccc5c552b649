"""Bad input gives a diagnostic that names the attribute, attached to its source line,
never a crash; unknown names and wrong types are caught by Terraform itself.

Checked with `validate -json` (the diagnostic's summary and detail, and the source range
Terraform resolved from the provider's attribute path), then with `plan` (exit code, no
crash text)."""

import pytest

from conftest import diagnostics, line_of


def bad(terraform, body):
    wd = terraform.workdir(files={"main.tf": body})
    doc = wd.validate_json()
    assert doc["valid"] is False, doc
    errors = diagnostics(doc)
    assert errors, doc
    res = wd.fails("plan")
    assert "Error:" in res.stderr, res
    return wd, errors


def text(d):
    return f"{d['summary']}\n{d.get('detail', '')}"


@pytest.mark.parametrize("value", ["-1", "-0.5"])
def test_negative_min_memory(terraform, value):
    wd, errors = bad(terraform, f'data "gpu_models" "x" {{\n  min_memory_gib = {value}\n}}\n')
    hits = [d for d in errors if "min_memory_gib" in text(d)]
    assert hits, f"no error naming min_memory_gib: {errors}"
    line = line_of(wd.path / "main.tf", "min_memory_gib")
    assert any(d.get("range", {}).get("start", {}).get("line") == line for d in hits), (
        f"error not attached to the attribute (attribute path missing?): {hits}")


def test_unknown_vendor(terraform):
    wd, errors = bad(terraform, 'data "gpu_models" "x" {\n  vendor = "intel"\n}\n')
    hits = [d for d in errors if "vendor" in text(d)]
    assert hits, errors
    assert any("nvidia" in text(d) and "amd" in text(d) for d in hits), (
        f"error does not list the valid values: {hits}")
    line = line_of(wd.path / "main.tf", "vendor")
    assert any(d.get("range", {}).get("start", {}).get("line") == line for d in hits), hits


def test_negative_budget(terraform):
    _, errors = bad(terraform, (
        'provider "gpu" {\n  budget = { max_monthly_usd = -5 }\n}\n'
        'data "gpu_models" "x" {}\n'))
    assert any("max_monthly_usd" in text(d) for d in errors), errors


@pytest.mark.parametrize("body, name", [
    ('data "gpu_models" "x" {\n  min_memory = 80\n}\n', "min_memory"),
    ('provider "gpu" {\n  regions = ["us-east-1"]\n}\ndata "gpu_models" "x" {}\n', "regions"),
    ('provider "gpu" {\n  aws {\n    zone = "a"\n  }\n}\ndata "gpu_models" "x" {}\n', "zone"),
])
def test_unknown_attribute(terraform, body, name):
    """Terraform itself rejects names that are not in the schema. (Not inside a nested
    attribute's object value: `budget = { max_usd = 5 }` is converted to the attribute's
    object type and the extra key silently dropped by Terraform, 1.0.3 and 1.15 alike,
    before the provider sees it.)"""
    _, errors = bad(terraform, body)
    assert any(name in text(d) for d in errors), errors


def test_two_aws_blocks(terraform):
    _, errors = bad(terraform, (
        'provider "gpu" {\n  aws {\n    profile = "a"\n  }\n'
        '  aws {\n    profile = "b"\n  }\n}\ndata "gpu_models" "x" {}\n'))
    assert any("aws" in text(d) for d in errors), errors


def test_wrong_type(terraform):
    _, errors = bad(terraform, 'data "gpu_models" "x" {\n  min_memory_gib = "lots"\n}\n')
    assert any("number" in text(d).lower() for d in errors), errors
