"""A plain file is composed at once (no event scan) only when that is provably safe; what it
reads, and every refusal, is the same as with the scan."""

from __future__ import annotations

import pytest

from labctl.errors import LabctlError
from labctl.plan import source
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


def _read(text: str, scan: bool, monkeypatch: pytest.MonkeyPatch, tmp_path) -> tuple[str, object]:
    if scan:
        monkeypatch.setattr(source, "_shallow_without_aliases", lambda text, depth: False)
    else:
        monkeypatch.undo()
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        data, smap, errors = source.load_yaml(path, limits=LIMITS)
    except LabctlError as err:
        return "refused", err.format()
    return "read", (data, dict(smap.values), dict(smap.keys), [e.format() for e in errors])


@pytest.mark.parametrize("text", [FLAT, TOO_MANY, DEEP_BLOCK, DEEP_FLOW, STRING_TRICK, ALIASES, SEQ_IN_MAP, QUOTED,
                                  "a: [1, 2\n", "a: b: c\n", "a: 1\na: 2\n", "x: !!python/object:os.system 1\n"],
                         ids=["flat", "too-many", "deep-block", "deep-flow", "string-trick", "aliases", "seq-in-map",
                              "quoted", "syntax", "syntax2", "duplicate", "tag"])
def test_the_fast_path_reads_and_refuses_exactly_as_the_scan_does(text, monkeypatch, tmp_path):
    assert _read(text, False, monkeypatch, tmp_path) == _read(text, True, monkeypatch, tmp_path)


def test_which_files_take_the_fast_path():
    assert source._shallow_without_aliases(FLAT, 64)
    assert source._shallow_without_aliases(TOO_MANY, 64)  # the builder counts its values
    assert source._shallow_without_aliases(SEQ_IN_MAP, 64)
    for text in (ALIASES, STRING_TRICK, QUOTED, "a:\tb\n", "a: [\n 1]\n", "a:\r b:\r  c: 1\r"):
        assert not source._shallow_without_aliases(text, 64), text
    assert not source._shallow_without_aliases(DEEP_BLOCK, 8)


def test_too_many_values_on_the_fast_path_are_refused_where_the_limit_is_crossed(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(TOO_MANY, encoding="utf-8")
    with pytest.raises(LabctlError) as info:
        source.load_yaml(path, limits=LIMITS)
    assert "too many values: more than the limit of 60" in info.value.format()
    assert info.value.line is not None and info.value.line > 10
