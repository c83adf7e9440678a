"""Mangled plans never crash the loader: whatever the text, the answer is a list of located
errors (or a valid plan), never an exception or a traceback."""

from __future__ import annotations

import random
from pathlib import Path

from labctl.errors import LabctlError
from labctl.plan.loader import check_plan

ROOT = Path(__file__).resolve().parents[3]
SOURCE = (ROOT / "testplans" / "accelerator-evt.yaml").read_text(encoding="utf-8")
TOKENS = ["${", "}", ": ", "- ", "[", "]", "{", "'", '"', "\t", "mV", "degC", "%", "-1", "1e400", "&a", "*a", "<<: *a", "null", "~"]


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        op = rng.randrange(5)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2 and lines[i]:
            j = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + rng.choice(TOKENS) + lines[i][j:]
        elif op == 3 and lines[i]:
            j = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + lines[i][j + 1:]
        else:
            lines[i] = " " * rng.randint(0, 6) + lines[i].lstrip()
    return "\n".join(lines) + "\n"


def test_mutated_plans_give_errors_not_exceptions(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "power-up.yaml").write_text(
        (ROOT / "testplans" / "lib" / "power-up.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    rng = random.Random(20261130)
    path = tmp_path / "fuzz.yaml"
    outcomes = {"valid": 0, "errors": 0}
    for _ in range(150):
        path.write_text(_mutate(SOURCE, rng), encoding="utf-8")
        loaded, errors = check_plan(path)
        assert all(isinstance(e, LabctlError) for e in errors)
        assert all(e.file for e in errors if not e.message.startswith("--set"))
        if errors:
            assert loaded is None
            outcomes["errors"] += 1
        else:
            assert loaded is not None
            outcomes["valid"] += 1
    assert outcomes["errors"] > 50  # the mutations do break plans
