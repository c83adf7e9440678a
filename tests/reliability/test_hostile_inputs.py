"""Hostile and malformed plans and fixtures are refused with a located error, never a hang,
a memory blow-up or a traceback.

The corpus is ``tests/data/hostile/`` (made by its ``generate.py``, committed), each file
with where the error must be and what it must say (``expected.json``). The worst cases also
run through ``labctl validate`` in a subprocess under an address-space limit (RLIMIT_AS) and a
generous timeout: a blow-up fails the test by MemoryError or timeout, not by a wall-clock
assertion. The times themselves are measured by ``bench/hostile_inputs.py``.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from labctl.errors import LabctlError
from labctl.fixture.loader import check_fixture_file
from labctl.plan.loader import check_plan

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "hostile"
CASES = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
SECRETS = ("hunter2", "swordfish", "root:x:0", "root:*")
#: the address space a `labctl validate` process may use (Python, pint, pydantic and PyYAML
#: need about 300 MiB; the billion-laughs file alone took 6 GiB before the limits)
MEMORY_LIMIT = 768 << 20


def _errors(case: dict) -> list[LabctlError]:
    path = CORPUS / case["file"]
    if case["kind"] == "fixture":
        _, errors, _ = check_fixture_file(path)
    else:
        _, errors = check_plan(path)
    return errors


def test_the_corpus_is_large_and_complete():
    assert len(CASES) >= 200
    for case in CASES:
        assert (CORPUS / case["file"]).is_file(), case["file"]
        assert case["line"] is not None, case["file"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["file"])
def test_each_hostile_file_is_refused_where_it_is_broken(case):
    errors = _errors(case)
    shown = [e.format() for e in errors]
    assert errors, f"{case['file']} was accepted"
    for e in errors:
        assert isinstance(e, LabctlError)
        assert e.file and e.line and e.column, e.format()
        assert not any(s in e.format() for s in SECRETS), e.format()
    hits = [e for e in errors if case["message"] in e.message]
    assert hits, shown
    err = hits[0]
    assert err.file.replace("\\", "/").endswith(case["error_file"]), shown
    assert err.line == case["line"], shown
    if case["column"] is not None:
        assert err.column == case["column"], shown


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _validate(*paths: str | Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labctl", "validate", *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, timeout=240, preexec_fn=_limited, env=env,
    )


WORST = ["laughs-9x10.yaml", "merge-bomb.yaml", "alias-count-5000.yaml", "alias-loop-steps.yaml",
         "deep-flow-seq-10000.yaml", "deep-flow-map-10000.yaml", "parens-5000.yaml", "nots-20000.yaml",
         "bigint-version-100000.yaml", "bigint-expr-100000.yaml", "corners-6x10.yaml", "corners-9x10.yaml",
         "corners-12x10.yaml", "binary-00.yaml", "tag-0-map.yaml", "include-escape-1.yaml", "fx-laughs.yaml",
         "fx-deep.yaml", "fx-bigint.yaml"]


def test_the_worst_files_exit_4_located_within_bounded_memory(tmp_path):
    big = tmp_path / "fifty-megabytes.yaml"  # too large to commit: made here
    with big.open("w", encoding="utf-8") as fh:
        fh.write("name: big\nsteps:\n")
        line = "  - {id: a, check: wait, args: {duration: 1 s}}\n"
        fh.write(line * (50_000_000 // len(line)))
    tail = tmp_path / "syntax-error-at-the-end.yaml"  # near the size limit (4 MiB), broken on its last line
    tail.write_text("name: t\nsteps:\n" + "".join(
        f"  - {{id: s{k}, check: wait, description: {'x' * 350}, args: {{duration: 1 s}}}}\n" for k in range(10_000))
        + "  - [unclosed\n", encoding="utf-8")
    assert 4_000_000 < tail.stat().st_size < 4 << 20
    paths = [CORPUS / name for name in WORST] + [big, tail]
    res = _validate(*paths)
    out = res.stdout + res.stderr
    assert res.returncode == 4, out
    assert "Traceback" not in out and "internal error" not in out and "MemoryError" not in out, out
    for p in paths:
        assert re.search(rf"^{re.escape(str(p))}:\d+:\d+: ", res.stderr, re.M), f"{p.name} not located:\n{out}"
    assert f"{big}:1:1: file too large: " in res.stderr
    assert f"{tail}:10004:1: bad YAML: " in res.stderr


def test_the_whole_corpus_through_the_command_line(tmp_path):
    """One `labctl validate` over every file: exit 4, one located error per file at least."""
    res = _validate(*(CORPUS / c["file"] for c in CASES))
    out = res.stdout + res.stderr
    assert res.returncode == 4
    assert "Traceback" not in out and "internal error" not in out
    assert not res.stdout.strip(), res.stdout  # nothing was accepted
    located = {Path(m.group(1)).name for m in re.finditer(r"^(\S+?\.yaml):\d+:\d+: ", res.stderr, re.M)}
    missing = [c["file"] for c in CASES if c["file"] not in located and c["error_file"] == c["file"]]
    assert not missing, missing


def test_limits_that_may_be_raised_say_how_and_can_be(tmp_path):
    plan = tmp_path / "sweep.yaml"
    plan.write_text("name: sweep\ncorners:\n  a: [" + ", ".join(map(str, range(150))) + "]\n"
                    "  b: [" + ", ".join(map(str, range(1000))) + "]\n"
                    "steps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n", encoding="utf-8")
    res = _validate(plan)
    assert res.returncode == 4
    assert "150 × 1000 = 150,000 corners" in res.stderr
    assert "LABCTL_MAX_EXPANDED_STEPS=" in res.stderr
    import os

    env = {**os.environ, "LABCTL_MAX_EXPANDED_STEPS": "200000"}
    res = _validate(plan, env=env)
    assert res.returncode == 0, res.stderr
    assert "150000 expanded" in res.stdout


@pytest.mark.parametrize(("value", "message"), [
    ("&a [*a]", "alias loop"),
    ("9" * 5000, "number too long: 5,000 digits"),
    ("!!python/object/apply:os.system [id]", "YAML tag !!python/object/apply:os.system is not allowed"),
    (".inf", "is not a finite number"),
    ("1e999 V", "is not a finite number"),
    ("2 GV", "beyond any bench"),
])
def test_hostile_set_values_are_refused_with_the_option_named(value, message):
    from labctl.plan.loader import parse_overrides

    _, errors = check_plan(ROOT / "testplans" / "smoke.yaml", parse_overrides([f"vin={value}"]))
    assert len(errors) == 1, [e.format() for e in errors]
    assert errors[0].message.startswith("--set vin=") and message in errors[0].message
    assert len(errors[0].message) < 200
