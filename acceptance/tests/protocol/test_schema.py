"""`terraform providers schema -json`: the provider's schema as Terraform sees it. The
provider block (the `aws`, `azure`, `gcp` and `audit` blocks, `default_labels`, `budget` as
a nested attribute), `gpu_commitment`'s and `gpu_models`' inputs and outputs with their
exact types, and a generic walk: every attribute, nested attribute and nested block of
every schema (provider, resources, data sources) has a description, and so has every
provider function.
"""

from conftest import PROVIDER_ADDR

import pytest


@pytest.fixture
def schema(terraform):
    wd = terraform.workdir(files={"main.tf": 'provider "gpu" {}\n'})
    doc = wd.schema_json()
    assert PROVIDER_ADDR in doc["provider_schemas"], doc["provider_schemas"].keys()
    return doc["provider_schemas"][PROVIDER_ADDR]


def attr(block, name):
    assert name in block.get("attributes", {}), f"no attribute {name}: {sorted(block.get('attributes', {}))}"
    return block["attributes"][name]


def assert_optional(a, type_):
    assert a.get("optional") is True, a
    assert not a.get("required") and not a.get("computed"), a
    assert a["type"] == type_, a


def assert_at_most_one(bt):
    assert (bt["nesting_mode"] == "single"
            or (bt["nesting_mode"] == "list" and bt.get("max_items") == 1)), bt


def test_provider_block(schema):
    block = schema["provider"]["block"]
    assert sorted(block.get("block_types", {})) == ["audit", "aws", "azure", "gcp"]
    assert set(block.get("attributes", {})) == {"default_labels", "budget", "max_price_age",
                                                "include_stale_prices",
                                                "allow_commitment_purchase", "events_file"}
    assert_optional(attr(block, "events_file"), "string")
    assert_optional(attr(block, "allow_commitment_purchase"), "bool")

    aws = block["block_types"]["aws"]
    assert_at_most_one(aws)
    assert set(aws["block"]["attributes"]) == {"profile", "endpoints", "max_retries"}
    assert_optional(attr(aws["block"], "profile"), "string")
    assert_optional(attr(aws["block"], "endpoints"), ["map", "string"])
    assert_optional(attr(aws["block"], "max_retries"), "number")

    azure = schema["provider"]["block"]["block_types"]["azure"]["block"]
    assert set(azure["attributes"]) == {"subscription_id", "tenant_id", "endpoint"}
    for name in ("subscription_id", "tenant_id", "endpoint"):
        assert_optional(attr(azure, name), "string")

    gcp = schema["provider"]["block"]["block_types"]["gcp"]["block"]
    assert set(gcp["attributes"]) == {"project", "endpoint", "access_token"}
    assert_optional(attr(gcp, "access_token"), "string")
    # The token is marked sensitive, so Terraform never shows it in plans or output.
    assert attr(gcp, "access_token").get("sensitive") is True

    audit = block["block_types"]["audit"]
    assert_at_most_one(audit)
    assert set(audit["block"]["attributes"]) == {"otlp_endpoint", "headers"}
    assert_optional(attr(audit["block"], "otlp_endpoint"), "string")
    assert_optional(attr(audit["block"], "headers"), ["map", "string"])
    # A collector's API key goes in the headers: never shown.
    assert attr(audit["block"], "headers").get("sensitive") is True
    assert not attr(gcp, "project").get("sensitive")
    for name in ("project", "endpoint"):
        assert_optional(attr(gcp, name), "string")

    assert_optional(attr(block, "default_labels"), ["map", "string"])

    budget = attr(block, "budget")
    assert budget.get("optional") is True, budget
    nested = budget.get("nested_type")
    assert nested, f"budget must be a nested attribute, got {budget}"
    assert nested["nesting_mode"] == "single", nested
    assert set(nested["attributes"]) == {"max_monthly_usd"}
    assert_optional(nested["attributes"]["max_monthly_usd"], "number")


def test_gpu_commitment_resource(schema):
    """The interface issue 16 fixes: kind, region, zone, gpu/gpu_count or instance_type, the
    instances (`instance_count`: `count` is Terraform's meta-argument), the term inputs, and
    the money computed at plan."""
    block = schema["resource_schemas"]["gpu_commitment"]["block"]
    for name in ("kind", "region", "instance_count"):
        assert attr(block, name).get("required") is True, name
    for name in ("zone", "instance_type", "end"):
        a = attr(block, name)
        assert a.get("optional") is True and a.get("computed") is True, (name, a)
    for name in ("gpu", "duration_hours", "start_after", "start_before", "term", "billing",
                 "on_destroy", "tags"):
        assert attr(block, name).get("optional") is True, name
    for name in ("upfront_usd", "hourly_usd", "monthly_usd", "total_usd",
                 "effective_usd_per_gpu_hour", "on_demand_usd_per_gpu_hour",
                 "break_even_utilization"):
        a = attr(block, name)
        assert a["type"] == "number" and a.get("computed") is True and not a.get("optional")
    for name in ("offering_id", "start", "commitment_id", "status", "id"):
        a = attr(block, name)
        assert a.get("computed") is True and not a.get("optional"), (name, a)
    assert "count" not in block["attributes"]
    offers = schema["data_source_schemas"]["gpu_capacity_block_offers"]["block"]
    assert attr(offers, "regions").get("required") is True
    assert attr(offers, "duration_hours").get("required") is True


def test_gpu_models_data_source(schema):
    ds = schema.get("data_source_schemas", {})
    assert "gpu_models" in ds, sorted(ds)
    block = ds["gpu_models"]["block"]
    assert set(block["attributes"]) == {"min_memory_gib", "vendor", "names", "models"}
    assert not block.get("block_types")
    assert_optional(attr(block, "min_memory_gib"), "number")
    assert_optional(attr(block, "vendor"), "string")
    for name in ("names", "models"):
        a = attr(block, name)
        assert a.get("computed") is True and not a.get("optional") and not a.get("required"), a
    assert attr(block, "names")["type"] == ["list", "string"]
    assert attr(block, "models")["type"] == ["list", ["object", {
        "name": "string",
        "vendor": "string",
        "memory_gib": "number",
        "architecture": "string",
        "aliases": ["list", "string"],
    }]]


def walk_block(block, where):
    """Yield (path, kind, node) for every attribute, nested attribute and nested block."""
    for name, a in block.get("attributes", {}).items():
        yield f"{where}.{name}", "attribute", a
        yield from walk_nested_type(a.get("nested_type"), f"{where}.{name}")
    for name, bt in block.get("block_types", {}).items():
        yield f"{where}.{name}", "block", bt["block"]
        yield from walk_block(bt["block"], f"{where}.{name}")


def walk_nested_type(nt, where):
    if not nt:
        return
    for name, a in nt.get("attributes", {}).items():
        yield f"{where}.{name}", "attribute", a
        yield from walk_nested_type(a.get("nested_type"), f"{where}.{name}")


def every_schema(schema):
    yield "provider", schema["provider"]["block"]
    for kind in ("resource_schemas", "data_source_schemas", "ephemeral_resource_schemas",
                 "list_resource_schemas"):
        for name, s in schema.get(kind, {}).items():
            yield f"{kind}.{name}", s["block"]


def test_every_attribute_has_a_description(schema):
    missing = [path for top, block in every_schema(schema)
               for path, kind, node in walk_block(block, top)
               if kind == "attribute" and not (node.get("description") or "").strip()]
    assert not missing, f"attributes without a description: {missing}"


def test_every_block_has_a_description(schema):
    """Data sources, resources and nested blocks too: the docs are generated from these."""
    missing = [top for top, block in every_schema(schema)
               if top != "provider" and not (block.get("description") or "").strip()]
    missing += [path for top, block in every_schema(schema)
                for path, kind, node in walk_block(block, top)
                if kind == "block" and not (node.get("description") or "").strip()]
    assert not missing, f"blocks without a description: {missing}"


def test_functions_have_descriptions(schema):
    """Provider functions (1.8+), if any, describe themselves and their parameters."""
    missing = []
    for name, fn in schema.get("functions", {}).items():
        if not (fn.get("description") or fn.get("summary") or "").strip():
            missing.append(name)
        for p in fn.get("parameters", []) + ([fn["variadic_parameter"]] if fn.get("variadic_parameter") else []):
            if not (p.get("description") or "").strip():
                missing.append(f"{name}({p.get('name')})")
    assert not missing, missing
