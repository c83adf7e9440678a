"""A plain file is built in one pass over its YAML events (no scan, no node tree); anything
unusual is read the long way (scan, compose, build). What either reads, and every refusal,
is the same."""

from __future__ import annotations

import pytest

from labctl.errors import LabctlError
from labctl.plan import source, yamlevents
from labctl.plan.bounds import InputLimits

LIMITS = InputLimits(max_nodes=60, max_depth=8)

FLAT = "name: p\nsteps:\n" + "".join(f"  - {{id: s{i}, check: measure, args: {{role: psu}}}}\n" for i in range(3))
TOO_MANY = "steps:\n" + "".join(f"  - {{id: s{i}, check: measure}}\n" for i in range(20))
DEEP_BLOCK = "".join(" " * i + f"k{i}:\n" for i in range(12)) + " " * 12 + "v: 1\n"
DEEP_FLOW = "a: " + "[" * 12 + "]" * 12 + "\n"
# brackets inside a quoted string that spans lines must not hide real nesting
STRING_TRICK = "".join('- [[[[[ "\n  ]]]]]\n  "\n' for _ in range(3))
ALIASES = "base: &b {x: 1, y: 2}\n" + "".join(f"c{i}: *b\n" for i in range(30))
SEQ_IN_MAP = "a:\n- b:\n  - c:\n    - d:\n      - e:\n        - f: 1\n"
QUOTED = 'name: "p"\nvalue: "${vin}"\nlist: [1, 2]\n'
TYPED = "7: a\n2.5: b\nnull: c\ntrue: d\nx: ! 5\ny: !!str 5\nz: 0x1F\nw: 2002-12-14\nv: |\n  text\n"
MERGE = "a: {<<: {x: 1}, y: 2}\nb: {=: 1}\n"
COMPLEX_KEY = "? [a, b]\n: 1\nc: 2\n"
TWO_DOCUMENTS = "a: 1\n---\nb: 2\n"
LATE_SYNTAX = "".join(f"k{i}: {i}\n" for i in range(100)) + "x: [1, 2\n"


def _read(text: str, scan: bool, monkeypatch: pytest.MonkeyPatch, tmp_path) -> tuple[str, object]:
    if scan:
        monkeypatch.setattr(yamlevents, "read_events", lambda *args, **kw: None)
    else:
        monkeypatch.undo()
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        data, smap, errors = source.load_yaml(path, limits=LIMITS)
    except LabctlError as err:
        return "refused", err.format()
    return "read", (data, dict(smap.values), dict(smap.keys), [e.format() for e in errors])


CASES = {"flat": FLAT, "too-many": TOO_MANY, "deep-block": DEEP_BLOCK, "deep-flow": DEEP_FLOW,
         "string-trick": STRING_TRICK, "aliases": ALIASES, "seq-in-map": SEQ_IN_MAP, "quoted": QUOTED,
         "typed": TYPED, "merge": MERGE, "complex-key": COMPLEX_KEY, "two-documents": TWO_DOCUMENTS,
         "late-syntax": LATE_SYNTAX, "syntax": "a: [1, 2\n", "syntax2": "a: b: c\n", "duplicate": "a: 1\na: 2\n",
         "tag": "x: !!python/object:os.system 1\n", "tabs-cr": "a:\tb\nc: 1\rd: 2\r", "empty": "", "comment": "# x\n"}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_the_event_path_reads_and_refuses_exactly_as_the_scan_does(text, monkeypatch, tmp_path):
    assert _read(text, False, monkeypatch, tmp_path) == _read(text, True, monkeypatch, tmp_path)


def _events(text: str, limits: InputLimits = LIMITS) -> object:
    return yamlevents.read_events(text, "plan.yaml", LabctlError, limits, source._loader(fast=True))


def test_which_files_the_event_path_reads():
    for text in (FLAT, SEQ_IN_MAP, QUOTED, TYPED, "a:\tb\n", "a:\r b:\r  c: 1\r", ""):
        assert _events(text, InputLimits()) is not None, text
    for text in (ALIASES, MERGE, COMPLEX_KEY, TWO_DOCUMENTS, LATE_SYNTAX, "a: 1\na: 2\n", "a: !!set {x: null}\n"):
        assert _events(text, InputLimits()) is None, text


def test_nesting_and_values_are_refused_on_the_event_path_where_the_scan_refuses_them():
    with pytest.raises(LabctlError, match="nested too deeply: more than 8 levels") as info:
        _events(DEEP_BLOCK)
    assert (info.value.line, info.value.column) == (9, 9)
    with pytest.raises(LabctlError, match="too many values: more than the limit of 60"):
        _events(TOO_MANY)


def test_too_many_values_on_the_fast_path_are_refused_where_the_limit_is_crossed(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(TOO_MANY, encoding="utf-8")
    with pytest.raises(LabctlError) as info:
        source.load_yaml(path, limits=LIMITS)
    assert "too many values: more than the limit of 60" in info.value.format()
    assert info.value.line is not None and info.value.line > 10


def test_a_plain_files_positions_are_read_when_the_first_is_wanted_and_are_the_scans(monkeypatch, tmp_path):
    """A long plan that is right never uses a position: the event path reads the data alone
    (about half its time went to a position per key and value), and the positions come from
    the same text the first time one is asked for, to word a problem."""
    text = FLAT + "limits:\n  v: {min: '1 V', max: 2 V}\n"
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    data, smap, errors = source.load_yaml(path, limits=LIMITS)
    assert (smap._values, smap._keys) == ({}, {})  # nothing built yet
    assert smap.value(("steps", 2, "args", "role")) == source.Pos(str(path), 5, 43, False)
    assert smap.value(("limits", "v", "min")) == source.Pos(str(path), 7, 12, True)
    assert smap.key(("limits", "v")) == source.Pos(str(path), 7, 3, False)
    assert smap._fill is None  # read once, kept
    # a plan that includes libraries reads its positions later too (splicing notes where they go)
    inc = tmp_path / "inc.yaml"
    inc.write_text(text + "teardown:\n  - include: lib/off.yaml\n", encoding="utf-8")
    _data, inc_map, _errors = source.load_yaml(inc, limits=LIMITS)
    assert (inc_map._values, inc_map._keys) == ({}, {})
    assert inc_map.value(("teardown", 0, "include")) == source.Pos(str(inc), 9, 14, False)
    scanned = _read(text, True, monkeypatch, tmp_path)
    assert scanned == ("read", (data, dict(smap.values), dict(smap.keys), [e.format() for e in errors]))


def test_positions_wanted_by_two_threads_at_once_are_read_once_and_given_to_both():
    """Two slot threads wording an error of one plan at the same moment: neither gets a map
    that is not filled yet (an error without its file:line:col)."""
    import threading
    import time

    calls = []

    def fill():
        calls.append(1)
        time.sleep(0.2)  # the second thread asks meanwhile
        return source.SourceMap({("steps", 0): source.Pos("p.yaml", 3, 5)}, files=["p.yaml"])

    smap = source.SourceMap(files=["p.yaml"])
    smap.later(fill)
    got = []
    threads = [threading.Thread(target=lambda: got.append(smap.value(("steps", 0)))) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert got == [source.Pos("p.yaml", 3, 5)] * 2 and calls == [1]
