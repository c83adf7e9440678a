"""Property-based fuzzing of the plan, fixture and expression loaders (hypothesis).

Whatever the input — YAML-like token soup, hostile YAML constructs spliced into a real plan,
raw bytes, expression text — the loaders answer with located labctl errors (or a valid
result), never another exception.

The default run is small and derandomized so CI stays fast and repeatable; a long run:
``LABCTL_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/reliability/test_fuzz_loaders.py``
(then each run explores new random examples).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.errors import ExpressionError, LabctlError
from labctl.fixture.loader import check_fixture_data, check_fixture_file
from labctl.plan.expr import evaluate_text
from labctl.plan.loader import check_plan
from labctl.plan.source import load_yaml
from labctl.units import Quantity

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("LABCTL_FUZZ_EXAMPLES", "0") or 0)
FUZZ = settings(
    max_examples=EXAMPLES or 60,
    derandomize=not EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SMOKE = (ROOT / "testplans" / "smoke.yaml").read_text(encoding="utf-8")
BENCH = (ROOT / "fixtures" / "sim-bench.yaml").read_text(encoding="utf-8")

YAML_TOKENS = [
    "name: x", "steps:", "- ", "  ", "\n", ": ", "[", "]", "{", "}", ",", "&a ", "*a", "<<: *a", "!!python/object/apply:os.system ",
    "!!binary ", "!custom ", "'", '"', "${", "}", "1e999", "9" * 120, ".inf", ".nan", "-", "id: s", "check: wait",
    "args: {duration: 1 s}", "when: ", "not ", "(", ")", "timeout: ", "10 year", "corners:", "include: ",
    "/etc/passwd", "../../x.yaml", "\t", "#", "---", "\x00", "é", "?", "|", ">", "%YAML 1.2", "~", "null",
]
HOSTILE = [
    "x: &a [1, *a]\n", "x: " + "[" * 200 + "]" * 200 + "\n", "x: !!python/object/apply:os.system [id]\n",
    "x: !!python/name:os.system\n", "version: " + "7" * 5000 + "\n", "x: .inf\n",
    "  - {id: q, check: wait, args: {duration: 1e999 s}}\n", "  - include: /etc/passwd\n",
    "  - {id: r, check: wait, args: {duration: 1 s}, when: \"" + "(" * 40 + "1" + ")" * 40 + "\"}\n",
    "corners: {a: [1,2,3,4,5,6,7,8,9,10], b: [1,2,3,4,5,6,7,8,9,10], c: [1,2,3,4,5,6,7,8,9,10], "
    "d: [1,2,3,4,5,6,7,8,9,10], e: [1,2,3,4,5,6,7,8,9,10]}\n",
    "l0: &l0 [x,x,x,x,x,x,x,x,x,x]\nl1: &l1 [*l0,*l0,*l0,*l0,*l0,*l0,*l0,*l0,*l0,*l0]\n"
    "l2: &l2 [*l1,*l1,*l1,*l1,*l1,*l1,*l1,*l1,*l1,*l1]\nl3: &l3 [*l2,*l2,*l2,*l2,*l2,*l2,*l2,*l2,*l2,*l2]\n"
    "l4: &l4 [*l3,*l3,*l3,*l3,*l3,*l3,*l3,*l3,*l3,*l3]\nl5: [*l4,*l4,*l4,*l4,*l4,*l4,*l4,*l4,*l4,*l4]\n",
]


def _located(errors: list[LabctlError]) -> None:
    for e in errors:
        assert isinstance(e, LabctlError), repr(e)
        assert e.file, e.format()
        assert e.line is not None and e.column is not None, e.format()
        assert "Traceback" not in e.format()


def _check_plan_text(data: bytes | str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        loaded, errors = check_plan(path)
        _located(errors)
        assert (loaded is None) == bool(errors)


@FUZZ
@given(st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map("".join))
def test_token_soup_gives_located_errors_or_a_plan(text):
    _check_plan_text(text)


@FUZZ
@given(st.integers(0, SMOKE.count("\n")), st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=3))
def test_hostile_constructs_spliced_into_a_real_plan(line, inserts):
    lines = SMOKE.splitlines(keepends=True)
    for piece in inserts:
        lines.insert(line, piece)
    _check_plan_text("".join(lines))


@FUZZ
@given(st.binary(max_size=2000))
def test_raw_bytes_give_located_errors(data):
    _check_plan_text(data)


@FUZZ
@given(st.text(max_size=400))
def test_any_text_through_the_yaml_reader(text):
    try:
        load_yaml("fuzz.yaml", text=text)
    except LabctlError as err:
        assert err.file == "fuzz.yaml"
        assert err.line is not None, err.format()


@FUZZ
@given(st.integers(0, BENCH.count("\n")), st.lists(st.sampled_from(HOSTILE + [
    "    timeout: 1e999 s\n", "  time_scale: 1e308\n", "    timeout: 87600 h\n"]), min_size=1, max_size=3))
def test_fixtures_with_hostile_constructs(line, inserts):
    lines = BENCH.splitlines(keepends=True)
    for piece in inserts:
        lines.insert(line, piece)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fixture.yaml"
        path.write_text("".join(lines), encoding="utf-8")
        fixture, errors, _ = check_fixture_file(path)
        _located(errors)
        assert (fixture is None) == bool(errors)


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=30))
def test_fixture_checks_take_any_data(data):
    from labctl.plan.source import SourceMap

    _, errors, _ = check_fixture_data({"station": "x", "roles": data} if isinstance(data, dict) else data,
                                      SourceMap(files=["f.yaml"]), [], "f.yaml")
    assert all(isinstance(e, LabctlError) for e in errors)


EXPR_ALPHABET = st.sampled_from(list("0123456789.eE+-*/()<>=! _'\"") + [
    " V", " mV", " degC", " %", " s", "not ", " and ", " or ", "true", "x", "vin", "1e308", "1e999", "9" * 150])


@FUZZ
@given(st.lists(EXPR_ALPHABET, max_size=80).map("".join))
def test_expressions_raise_only_located_expression_errors(text):
    env = {"x": 3, "vin": Quantity(5.0, "V")}
    try:
        evaluate_text(text, env)
    except ExpressionError as err:
        assert err.column is not None and 0 <= err.column <= len(text), (text, err.column)
    except LabctlError:
        pass  # e.g. a unit error of a well-formed quantity: still a labctl error, never a crash
