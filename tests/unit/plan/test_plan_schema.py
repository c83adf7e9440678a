"""JSON Schemas for editors: committed copies are current, and examples validate against them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import jsonschema
import pytest

from labctl.plan.schema import dumps, fixture_schema, plan_schema
from labctl.plan.source import load_yaml

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "docs" / "schema"


def _jsonable(data):
    return json.loads(json.dumps(data, default=lambda o: o.isoformat() if isinstance(o, dt.date) else str(o)))


@pytest.mark.parametrize(("kind", "make"), [("plan", plan_schema), ("fixture", fixture_schema)])
def test_committed_schema_matches_the_generated_one(kind, make):
    committed = (SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")
    assert committed == dumps(make()), (
        f"docs/schema/{kind}.schema.json is stale: run `labctl schema {kind} -o docs/schema/{kind}.schema.json`"
    )


def test_schemas_are_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(plan_schema())
    jsonschema.Draft202012Validator.check_schema(fixture_schema())


@pytest.mark.parametrize("plan", sorted((ROOT / "testplans").glob("*.yaml")), ids=lambda p: p.name)
def test_example_plans_validate_against_the_schema(plan):
    data, _, _ = load_yaml(plan)
    errors = list(jsonschema.Draft202012Validator(plan_schema()).iter_errors(_jsonable(data)))
    assert errors == []


def test_fixtures_validate_against_the_schema():
    for path in sorted((ROOT / "fixtures").glob("*.yaml")):
        data, _, _ = load_yaml(path)
        errors = list(jsonschema.Draft202012Validator(fixture_schema()).iter_errors(_jsonable(data)))
        assert errors == [], path.name


def test_schema_knows_each_checks_arguments():
    validator = jsonschema.Draft202012Validator(plan_schema())
    bad = {"name": "x", "steps": [{"id": "a", "check": "power.rails", "args": {"rails": ["V"], "sampels": 2}}]}
    messages = [e.message for e in validator.iter_errors(bad)]
    assert any("sampels" in m for m in messages)
    ok = {"name": "x", "steps": [{"id": "a", "check": "power.rails", "args": {"rails": "${rails}"}},
                                 {"include": "lib/power-up.yaml"}]}
    assert list(validator.iter_errors(ok)) == []


def test_schema_command_prints_the_plan_schema(labctl):
    res = labctl("schema", "plan")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["title"] == "labctl test plan"
