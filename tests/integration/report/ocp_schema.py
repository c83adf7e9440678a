"""A validator for OCP Test & Validation output lines: the results spec's own JSON Schema
(tests/data/ocp-schema, ``root.json`` and the files it refers to)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "data" / "ocp-schema"


def ocp_validator() -> jsonschema.Draft202012Validator:
    resources = []
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
    registry = Registry().with_resources(resources)
    root = json.loads((SCHEMA_DIR / "root.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(root, registry=registry, format_checker=jsonschema.FormatChecker())


def ocp_errors(lines: list[dict]) -> list[str]:
    """Every schema violation, as ``line N: path: message``."""
    v = ocp_validator()
    return [f"line {n}: {e.json_path}: {e.message[:300]}" for n, line in enumerate(lines, 1)
            for e in v.iter_errors(line)]
