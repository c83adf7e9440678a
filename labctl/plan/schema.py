"""JSON Schemas of plans and fixtures, for editors (YAML language servers).

The plan schema is pydantic's schema of :class:`~labctl.plan.model.Plan`, plus: step lists
accept ``- include:`` items; each step's ``args`` is described by its check's argument
model (``if check == X then args: ...``); any argument may be written as ``${…}``.
``labctl schema plan`` prints it; ``docs/schema/*.schema.json`` are generated copies.
"""

from __future__ import annotations

import json
from typing import Any

DRAFT = "https://json-schema.org/draft/2020-12/schema"
_EXPR = {"type": "string", "pattern": r"^\$\{.*\}$", "description": "an ${expression}"}


def plan_schema() -> dict[str, Any]:
    from labctl.checks.registry import all_checks
    from labctl.plan.model import Include, Plan

    schema = Plan.model_json_schema(ref_template="#/$defs/{model}")
    defs = schema.setdefault("$defs", {})
    defs["Include"] = Include.model_json_schema(ref_template="#/$defs/{model}")
    for group in ("setup", "steps", "teardown"):
        schema["properties"][group]["items"] = {
            "anyOf": [{"$ref": "#/$defs/Step"}, {"$ref": "#/$defs/Include"}]
        }
    step = defs["Step"]
    # the short forms the loader accepts: one limit without a measurement name, and a
    # parameter written as its bare default value
    step["properties"]["limits"] = {
        "anyOf": [
            {"$ref": "#/$defs/Limit"},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/Limit"},
             "description": "measurement name -> limit"},
            {"type": "null"},
        ],
        "description": step["properties"]["limits"].get("description", ""),
    }
    param_forms = {"anyOf": [{"$ref": "#/$defs/Parameter"}, {"type": ["string", "number", "boolean", "array"]}]}
    schema["properties"]["parameters"]["additionalProperties"] = param_forms
    checks = all_checks()
    step["properties"]["check"]["examples"] = list(checks)
    conditions = []
    for name, spec in checks.items():
        args = spec.args.model_json_schema(ref_template="#/$defs/{model}")
        for sub_name, sub in args.pop("$defs", {}).items():
            defs.setdefault(sub_name, sub)
        for prop, prop_schema in list(args.get("properties", {}).items()):
            args["properties"][prop] = {"anyOf": [prop_schema, _EXPR]} if "$ref" in prop_schema or "type" in prop_schema or "anyOf" in prop_schema else prop_schema
        args["description"] = spec.summary
        conditions.append({
            "if": {"properties": {"check": {"const": name}}, "required": ["check"]},
            "then": {"properties": {"args": args}},
        })
    step["allOf"] = conditions
    return {"$schema": DRAFT, "title": "labctl test plan", **{k: v for k, v in schema.items() if k != "title"}}


def fixture_schema() -> dict[str, Any]:
    from labctl.fixture.model import Fixture

    schema = Fixture.model_json_schema(ref_template="#/$defs/{model}")
    return {"$schema": DRAFT, "title": "labctl fixture (station)", **{k: v for k, v in schema.items() if k != "title"}}


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
