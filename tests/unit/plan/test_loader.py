"""Loading a valid plan: parameters, --set, corners, expansion, includes, resolution API."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from labctl.errors import ValidationErrors
from labctl.plan.loader import check_library, check_plan, load_plan, parse_overrides
from labctl.plan.source import load_yaml
from labctl.units import Quantity


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


PLAN = """\
name: demo
version: 2.1
requires: [psu, daq, chamber, dut]
parameters:
  vin: {default: 5 V, description: board input}
  core: 0.75 V
  low: ${vin * 0.95}
  mode: {default: fast, choices: [fast, full]}
corners:
  ambient: [0 degC, 45 degC]
  vin: [4.75 V, 5.25 V]
corner_order: [ambient, vin]
setup:
  - id: prep
    check: wait
    args: {duration: 1 s}
steps:
  - id: on
    check: power.on
    per_corner: false
    args: {voltage: 5 V, current_limit: 6 A}  # not ${vin}: a corner axis, and this step runs once
  - id: soak
    check: thermal.soak
    args: {setpoint: "${ambient}", hold: 1 min}
    timeout: ${2 * 30 min}
  - id: rails
    check: power.rails
    when: ambient > 0 degC and mode == "full"
    args: {rails: [VDD_CORE]}
    limits:
      VDD_CORE: {nominal: "${core}", tol: 3 %, marginal: 10 %}
  - id: summary
    check: wait
    per_corner: false
    args: {duration: 1 s}
teardown:
  - id: off
    check: set
    args: {target: psu.ch1.output, value: off}
"""


@pytest.fixture
def plan_path(tmp_path: Path) -> Path:
    return write(tmp_path, "demo.yaml", PLAN)


def test_valid_plan_loads(plan_path):
    loaded = load_plan(plan_path)
    assert loaded.plan.name == "demo" and loaded.plan.version == "2.1"
    assert loaded.parameters["vin"] == Quantity(5.0, "V")
    assert loaded.parameters["low"].to("V") == pytest.approx(4.75)
    assert loaded.parameters["mode"] == "fast"
    assert len(loaded.sha256) == 64
    assert loaded.files == [str(plan_path.resolve())]


def test_corners_follow_corner_order_first_axis_slowest(plan_path):
    loaded = load_plan(plan_path)
    labels = [c.label for c in loaded.corners]
    assert labels == [
        "ambient=0 degC, vin=4.75 V",
        "ambient=0 degC, vin=5.25 V",
        "ambient=45 degC, vin=4.75 V",
        "ambient=45 degC, vin=5.25 V",
    ]


def test_expansion_runs_blocks_per_corner_and_once_steps_once(plan_path):
    loaded = load_plan(plan_path)
    keys = [ps.key for ps in loaded.expand()]
    assert keys == [
        "prep", "on",
        "soak@0", "rails@0", "soak@1", "rails@1", "soak@2", "rails@2", "soak@3", "rails@3",
        "summary", "off",
    ]
    assert loaded.summary().startswith(
        "demo v2.1: 6 steps (1 setup, 4 steps, 1 teardown), 4 corners, 12 expanded, est. "
    )


def test_resolution_for_one_corner(plan_path):
    loaded = load_plan(plan_path)
    soak = loaded.plan.steps[1]
    hot = loaded.corners[2]
    args = loaded.resolve_args(soak, hot)
    assert args.setpoint == Quantity(45.0, "degC")
    assert args.hold == 60.0
    assert loaded.resolve_timeout(soak, hot) == 3600.0
    rails = loaded.plan.steps[2]
    limits = loaded.resolve_limits(rails, hot)
    assert set(limits) == {"VDD_CORE"}
    assert (limits["VDD_CORE"].lo, limits["VDD_CORE"].hi) == pytest.approx((0.7275, 0.7725))
    assert loaded.should_run(rails, hot) is False  # mode is fast


def test_set_overrides_parameters(plan_path):
    loaded = load_plan(plan_path, parse_overrides(["mode=full", "core=740 mV"]))
    rails = loaded.plan.steps[2]
    assert loaded.should_run(rails, loaded.corners[2]) is True
    assert loaded.should_run(rails, loaded.corners[0]) is False  # ambient 0 degC
    lim = loaded.resolve_limits(rails, loaded.corners[2])["VDD_CORE"]
    assert lim.nominal == pytest.approx(0.74)


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("vinn=5V", "--set vinn=5V: the plan has no parameter 'vinn'; did you mean 'vin'?"),
        ("vin=5 A", "--set vin=5 A: 5 A does not fit vin (default 5 V, a voltage)"),
        ("vin=5", "--set vin=5: 5 does not fit vin (default 5 V, a voltage)"),
        ("mode=slow", "--set mode=slow: parameter mode: 'slow' is not one of fast, full"),
        ("mode=fulll", "--set mode=fulll: parameter mode: 'fulll' is not one of fast, full; did you mean 'full'?"),
    ],
)
def test_bad_overrides_are_reported(plan_path, pair, message):
    _, errors = check_plan(plan_path, parse_overrides([pair]))
    assert [e.message for e in errors] == [message]


def test_override_needs_equals_sign():
    from labctl.errors import UsageError

    with pytest.raises(UsageError, match="expected NAME=VALUE"):
        parse_overrides(["vin"])


def test_load_plan_raises_all_errors(tmp_path):
    bad = write(tmp_path, "bad.yaml", "name: x\nsteps:\n  - id: a\n    check: nope\n  - id: a\n    check: wait\n    args: {duration: 1 s}\n")
    with pytest.raises(ValidationErrors) as e:
        load_plan(bad)
    assert len(e.value.errors) == 2
    assert e.value.exit_code == 4


def test_includes_splice_steps_with_prefix_and_library_defaults(tmp_path):
    write(tmp_path, "lib/settle.yaml", """\
        description: settle for a while
        requires: [chamber]
        parameters:
          settle_time: 10 s
          vin: 3 V
        steps:
          - id: settle
            check: wait
            args: {duration: "${settle_time}"}
        """)
    plan = write(tmp_path, "plan.yaml", """\
        name: inc
        parameters:
          vin: 5 V
        steps:
          - include: lib/settle.yaml
            prefix: first_
          - id: middle
            check: wait
            args: {duration: 1 s}
          - include: lib/settle.yaml
            prefix: second_
        """)
    loaded = load_plan(plan)
    assert [s.id for s in loaded.plan.steps] == ["first_settle", "middle", "second_settle"]
    assert loaded.parameters["vin"] == Quantity(5.0, "V")  # the plan's value wins
    assert loaded.parameters["settle_time"] == Quantity(10.0, "s")  # the library's default
    assert "chamber" in loaded.plan.requires
    assert len(loaded.files) == 2
    # positions of included steps point into the library
    pos = loaded.pos(("steps", 2, "check"))
    assert (Path(pos.file).name, pos.line, pos.column) == ("settle.yaml", 8, 12)


def test_a_plan_built_from_libraries_reads_each_once_and_copies_positions_only_when_wanted(tmp_path, monkeypatch):
    """A sweep built by including one library many times: the library is read (and its
    mistakes said) once, no position is read or copied while the plan is right, and once one
    is wanted every spliced step's points into the library, the plan's own into the plan."""
    from labctl.plan import includes

    write(tmp_path, "lib/point.yaml", """\
        requires: [psu]
        description: one
        description: twice
        steps:
          - id: v
            check: wait
            args: {duration: 1 s}
        """)
    lines = ["name: sweep", "description: many points", "steps:", "  - id: first", "    check: wait",
             "    args: {duration: 1 s}"]
    lines += [f"  - include: lib/point.yaml\n    prefix: p{k}_" for k in range(30)]
    plan = write(tmp_path, "plan.yaml", "\n".join(lines) + "\n")
    reads: list[str] = []
    real = includes.load_yaml
    monkeypatch.setattr(includes, "load_yaml", lambda target, **kw: reads.append(target.name) or real(target, **kw))
    loaded, errors = check_plan(plan)
    assert reads == ["point.yaml"]
    assert [e.message.split(" (")[0] for e in errors] == ["duplicate key 'description'"]  # once, not 30 times
    write(tmp_path, "lib/point.yaml", "requires: [psu]\nsteps:\n  - id: v\n    check: wait\n    args: {duration: 1 s}\n")
    loaded = load_plan(plan)
    assert [s.id for s in loaded.plan.steps][:3] == ["first", "p0_v", "p1_v"] and len(loaded.plan.steps) == 31
    smap = loaded.smap
    assert (smap._values, smap._keys) == ({}, {}) and smap._fill is not None, "no position copied yet"
    pos = loaded.pos(("steps", 30, "check"))
    assert (Path(pos.file).name, pos.line, pos.column) == ("point.yaml", 4, 12)
    assert loaded.plan.steps[30].id == "p29_v"
    pos = loaded.pos(("steps", 0, "args", "duration"))
    assert (Path(pos.file).name, pos.line, pos.column) == ("plan.yaml", 6, 22)
    assert smap.key(("description",)) .line == 2
    assert "psu" in loaded.plan.requires and loaded.requires_pos["psu"].line == 1


def test_including_a_library_twice_without_prefix_is_a_duplicate(tmp_path):
    write(tmp_path, "lib/one.yaml", "steps:\n  - id: one\n    check: wait\n    args: {duration: 1 s}\n")
    plan = write(tmp_path, "p.yaml", "name: p\nsteps:\n  - include: lib/one.yaml\n  - include: lib/one.yaml\n")
    _, errors = check_plan(plan)
    assert len(errors) == 1
    assert errors[0].message.startswith("duplicate step id 'one'")
    assert Path(errors[0].file).name == "one.yaml" and errors[0].line == 2
    assert "prefix:" in errors[0].hint


def test_a_bad_include_prefix_is_said_once_at_the_prefix(tmp_path):
    """It was said once per library step, at each step's id in the library."""
    write(tmp_path, "lib/two.yaml", """\
        steps:
          - {id: a, check: wait, args: {duration: 1 s}}
          - {id: b, check: waitt, args: {duration: 1 s}}
        """)
    plan = write(tmp_path, "p.yaml", """\
        name: p
        steps:
          - include: lib/two.yaml
            prefix: "bad prefix "
          - include: lib/two.yaml
            prefix: 2nd_
        """)
    _, errors = check_plan(plan)
    assert [(Path(e.file).name, e.line, e.column, e.message) for e in errors] == [
        # the library's steps are still checked (its mistake said once)
        ("two.yaml", 3, 20, "unknown check 'waitt'; did you mean 'wait'?"),
        ("p.yaml", 4, 13, "prefix 'bad prefix ' cannot start a step id (letters, digits, _ . -; starting with a "
                          "letter or _)"),
        ("p.yaml", 6, 13, "prefix '2nd_' cannot start a step id (letters, digits, _ . -; starting with a letter or _)"),
    ]
    assert errors[1].hint.endswith("e.g. prefix: bad_prefix_") and errors[2].hint.endswith("e.g. prefix: _2nd_")


def test_step_library_checks_on_its_own(tmp_path):
    lib = write(tmp_path, "lib/l.yaml", "parameters: {t: 2 s}\nsteps:\n  - id: w\n    check: wait\n    args: {duration: '${t}'}\n")
    loaded, errors = check_library(lib)
    assert errors == [] and [s.id for s in loaded.plan.steps] == ["w"]
    bad = write(tmp_path, "lib/b.yaml", "steps:\n  - id: w\n    check: wait\n    args: {duration: '${t}'}\n")
    _, errors = check_library(bad)
    assert [(e.line, e.column, e.message) for e in errors] == [(4, 25, "undefined parameter 't'")]


def test_plan_hash_covers_included_files(tmp_path):
    lib = write(tmp_path, "lib/one.yaml", "steps:\n  - id: one\n    check: wait\n    args: {duration: 1 s}\n")
    plan = write(tmp_path, "p.yaml", "name: p\nsteps:\n  - include: lib/one.yaml\n")
    first = load_plan(plan).sha256
    lib.write_text(lib.read_text().replace("1 s", "2 s"))
    assert load_plan(plan).sha256 != first


def test_yaml_positions_and_yaml12_booleans(tmp_path):
    path = write(tmp_path, "y.yaml", "a:\n  b: [1, off, yes, true]\n  c: &x {d: 2}\n  e:\n    <<: *x\n    f: 3\n")
    data, smap, errors = load_yaml(path)
    assert errors == []
    assert data["a"]["b"] == [1, "off", "yes", True]  # only true/false are booleans
    assert data["a"]["e"] == {"d": 2, "f": 3}  # merge keys work
    assert (smap.value(("a", "b", 2)).line, smap.value(("a", "b", 2)).column) == (2, 15)
    assert (smap.key(("a", "c")).line, smap.key(("a", "c")).column) == (3, 3)
    assert smap.value(("a", "c", "d")).column == 13


def test_off_stays_a_word_in_set_steps(tmp_path):
    plan = write(tmp_path, "p.yaml", "name: p\nteardown:\n  - id: off\n    check: set\n    args: {target: psu.ch1.output, value: off}\n")
    loaded = load_plan(plan)
    assert loaded.resolve_args(loaded.plan.teardown[0]).value == "off"


def test_timeout_shorter_than_the_check_needs_is_a_warning(tmp_path):
    plan = write(tmp_path, "p.yaml", """\
        name: p
        steps:
          - id: ber
            check: link.ber
            args: {line_rate: 10 Gbps, target_ber: 1e-12}
            timeout: 1 min
        """)
    loaded, errors = check_plan(plan)
    assert errors == []
    assert loaded.warnings == [
        f"{plan}:6:14: step 'ber': timeout 1m00s is shorter than the 5m00s link.ber is expected to take"
    ]


def test_a_soak_whose_own_timeout_cannot_hold_the_ramp_and_the_hold_is_a_warning(tmp_path):
    """thermal.soak to 0 degC at 5 degC/min (5 min from room) and a 10 min hold within 12 min
    could only fail ('not stable … within 12m'); validate said ok. A sub-second step timeout is
    written in ms (it read 'timeout 0s')."""
    plan = write(tmp_path, "p.yaml", """\
        name: p
        steps:
          - id: soak
            check: thermal.soak
            args: {setpoint: 0 degC, ramp_rate: 5 degC/min, hold: 10 min, timeout: 12 min}
          - {id: w, check: wait, args: {duration: 1 s}, timeout: 5 ms}
        """)
    loaded, errors = check_plan(plan)
    assert errors == []
    assert loaded.warnings == [
        f"{plan}:5:76: step 'soak': timeout 12m00s is shorter than the 15m00s the ramp from room temperature "
        "and the 10m00s hold take",
        f"{plan}:6:58: step 'w': timeout 5ms is shorter than the 1s wait is expected to take",
    ]


def test_describe_expansion_lists_the_run_order(plan_path):
    lines = load_plan(plan_path).describe_expansion()
    assert lines[0].split() == ["1", "setup", "prep", "(wait)", "~1s"]
    assert "soak (thermal.soak) [ambient=0 degC, vin=4.75 V]" in lines[2]
    assert lines[3].endswith("(skipped: when is false)")


def test_fixture_must_offer_the_roles_checks_use_even_without_requires(tmp_path):
    from labctl.fixture.model import Fixture

    fixture = Fixture.model_validate({
        "station": "tiny",
        "roles": {"psu": {"driver": "keysight-e36312a", "resource": "TCPIP0::127.0.0.1::5025::SOCKET"}},
        "channels": {"VIN": "psu@(@1)"},
    })
    plan = write(tmp_path, "p.yaml", """\
        name: p
        steps:
          - id: soak
            check: thermal.soak
            args: {setpoint: 25 degC}
          - id: off
            check: set
            args: {target: load.input, value: off}
        """)
    _, errors = check_plan(plan, fixture=fixture)
    assert [(e.line, e.message) for e in errors] == [
        (4, "step 'soak' needs role 'chamber', not offered by station tiny"),
        (7, "step 'off' needs role 'load', not offered by station tiny"),
    ]


def test_a_measure_of_a_channel_wired_to_another_role_is_refused_by_validate(tmp_path):
    from labctl.fixture.model import Fixture

    fixture = Fixture.model_validate({
        "station": "tiny",
        "roles": {"daq": {"driver": "keysight-daq970a", "resource": "TCPIP0::127.0.0.1::5025::SOCKET"},
                  "dut": {"driver": "accel-console", "resource": "/dev/ttyUSB0"}},
        "channels": {"VDD_CORE": "daq@(@111)"},
    })
    plan = write(tmp_path, "p.yaml", """\
        name: p
        requires: [dut, daq]
        steps:
          - {id: v, check: measure, args: {role: dut, property: VDD_CORE.voltage}}
          - {id: w, check: measure, args: {role: dut, property: voltage, channel: VDD_CORE}}
          - {id: ok, check: measure, args: {role: daq, property: VDD_CORE.voltage}}
        """)
    _, errors = check_plan(plan, fixture=fixture)
    # the run could only have stopped there with an ERROR
    assert [(e.line, e.message) for e in errors] == [
        (4, "step 'v': channel VDD_CORE is wired to role daq, not dut"),
        (5, "step 'w': channel VDD_CORE is wired to role daq, not dut"),
    ]

def test_rails_no_multimeter_probes_and_lanes_the_bert_lacks_are_refused_by_validate(tmp_path):
    from labctl.fixture.model import Fixture

    fixture = Fixture.model_validate({
        "station": "tiny",
        "roles": {"daq": {"driver": "keysight-daq970a", "resource": "TCPIP0::127.0.0.1::5025::SOCKET"},
                  "dmm": {"driver": "keysight-34465a", "resource": "TCPIP0::127.0.0.1::5026::SOCKET",
                          "options": {"signal": "VDD_CORE"}},
                  "bert": {"driver": "anritsu-mp1900a", "resource": "TCPIP0::127.0.0.1::5027::SOCKET"},
                  "dut": {"driver": "accel-console", "resource": "/dev/ttyUSB0"}},
        "channels": {"VDD_CORE": "daq@(@111)", "VDD_HBM": "daq@(@112)"},
    })
    plan = write(tmp_path, "p.yaml", """\
        name: p
        requires: [dut, daq, dmm, bert]
        steps:
          - {id: r1, check: power.rails, args: {rails: [VDD_CORE, VDD_HBM], via: dmm}}
          - {id: r2, check: power.rails, args: {rails: [VDD_CORE], via: dmm}}
          - {id: r3, check: power.rails, args: {rails: [VDD_HBM], via: daq}}
          - {id: b1, check: link.ber, args: {lanes: [0, 1, 9], line_rate: 32 Gbps}}
          - {id: b2, check: link.ber, args: {lanes: [0, 9], line_rate: 32 Gbps, via: dut}}
          - {id: m, check: link.margin, args: {lanes: [8, 10]}}
          - {id: t, check: link.bathtub, args: {lanes: all}}
        """)
    _, errors = check_plan(plan, fixture=fixture)
    # each would only have stopped the run with an ERROR at that step
    assert [(e.line, e.message) for e in errors] == [
        (4, "step 'r1': no multimeter probes VDD_HBM (via: dmm)"),
        (7, "step 'b1': bert (anritsu-mp1900a) has no lane 0, 9: its lanes are 1, 2, 3, 4, 5, 6, 7, 8"),
        (9, "step 'm': bert (anritsu-mp1900a) has no lane 10: its lanes are 1, 2, 3, 4, 5, 6, 7, 8"),
    ]



def test_set_values_follow_plan_yaml_rules(tmp_path):
    plan = write(tmp_path, "p.yaml", """\
        name: p
        parameters: {state: "on", quick: false, vin: 5 V, vlow: "${vin * 0.9}"}
        steps:
          - id: s
            check: set
            args: {target: psu.ch1.output, value: "${state}"}
        """)
    loaded = load_plan(plan, parse_overrides(["state=off", "quick=true", "vlow=${vin * 0.8}"]))
    assert loaded.parameters["state"] == "off"  # a word, not a boolean
    assert loaded.parameters["quick"] is True
    assert loaded.parameters["vlow"].to("V") == pytest.approx(4.0)


def test_set_of_a_duration_takes_a_bare_number_of_seconds(tmp_path):
    """docs/plans.md: durations take a bare number of seconds (--set soak_hold=90 was refused)."""
    plan = write(tmp_path, "p.yaml", """\
        name: p
        parameters: {hold: 5 min}
        steps:
          - {id: w, check: wait, args: {duration: "${hold}"}}
        """)
    assert load_plan(plan, parse_overrides(["hold=90"])).parameters["hold"].to("s") == pytest.approx(90.0)
    _, errors = check_plan(plan, parse_overrides(["hold=90 V"]))
    assert [e.message for e in errors] == ["--set hold=90 V: 90 V does not fit hold (default 5 min, a time)"]


def test_quoted_numbers_are_text_and_integers_are_yaml_1_2(tmp_path):
    # docs/plans.md: a text parameter takes the text as typed; plans are read as YAML 1.2
    plan = write(tmp_path, "p.yaml", """\
        name: p
        parameters:
          serial: "0001"
          label: {default: '0042', description: board label}
          lanes: 010
          octal: 0o10
          hexed: 0x1F
          big: 1_000
          count: 12
        steps:
          - {id: w, check: wait, args: {duration: 1 s, reason: "${serial} ${label} ${lanes}"}}
        """)
    loaded = load_plan(plan, parse_overrides(["label=0007"]))
    p = loaded.parameters
    assert (p["serial"], p["label"]) == ("0001", "0007")  # text: zeros kept (YAML 1.1 rules read 1.0)
    assert (p["lanes"], p["octal"], p["hexed"], p["count"]) == (10, 8, 31, 12)  # 010 had been octal 8
    assert p["big"] == "1_000"  # YAML 1.2 has no digit separators: text


def test_a_refused_set_of_a_computed_parameter_is_one_error_at_its_declaration(tmp_path):
    plan = write(tmp_path, "p.yaml", """\
        name: p
        parameters:
          vin: 5 V
          vlow: ${vin * 0.95}
        steps:
          - id: m
            check: measure
            args: {role: psu, property: ch1.voltage, unit: V}
            limits: {nominal: "${vlow}", tol: 1 %}
        """)
    _, errors = check_plan(plan, overrides=parse_overrides(["vlow=4"]))
    # the refused value is not used on: no second error at the limit that uses vlow
    assert [(e.line, e.message.split(" (")[0]) for e in errors] == [(4, "--set vlow=4: 4 does not fit vlow")]


def test_limits_and_timeouts_are_checked_at_every_corner_and_for_unknown_checks(tmp_path):
    plan = write(tmp_path, "p.yaml", """\
        name: p
        corners:
          nominal: [0.75 V, 0.9 V, 3 A]
        steps:
          - id: rails
            check: power.rails
            args: {rails: [VDD_CORE]}
            limits: {nominal: "${nominal}", tol: 3 %}
          - id: mystery
            check: power.mystery
            timeout: 5 V
        """)
    _, errors = check_plan(plan)
    got = [(e.line, e.column, e.message) for e in errors]
    assert got == [
        (3, 28, "corner nominal: 3 A does not match the axis's other values (voltage)"),
        (8, 23, "nominal: 3 A is a current, but VDD_CORE is measured as a voltage (V)"),
        (10, 12, "unknown check 'power.mystery'"),
        (11, 14, "timeout: 5 V is a voltage, expected a time (e.g. 90 s, 5 min, 2 ms)"),
    ]


def test_summary_says_when_the_duration_is_unknown(tmp_path):
    plan = write(tmp_path, "p.yaml", "name: p\nsteps:\n  - id: ask\n    check: prompt\n    args: {message: Fit the heatsink}\n")
    assert load_plan(plan).summary() == (
        "p v1: 1 steps (0 setup, 1 steps, 0 teardown), 0 corners, 1 expanded, duration unknown")
    plan2 = write(tmp_path, "q.yaml", "name: q\nsteps:\n  - id: w\n    check: wait\n    args: {duration: 2 min}\n"
                  "  - id: ask\n    check: prompt\n    args: {message: all good}\n")
    assert load_plan(plan2).summary().endswith("est. ≥ 2m00s")


def test_parameter_names_must_be_usable_in_expressions(tmp_path):
    plan = write(tmp_path, "p.yaml", "name: p\nparameters:\n  not: 1\n  v-in: 5 V\n"
                   "steps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n")
    _, errors = check_plan(plan)
    messages = [e.message for e in errors]
    assert messages == ["parameter name 'not' is a word of the expression language",
                        "parameter name 'v-in' must be a word (letters, digits, _)"]


_NO_CYCLES = """
import gc, sys
from labctl.plan.loader import load_plan
load_plan(sys.argv[1])  # first use: imports and unit registries, built once
gc.collect()
loaded = load_plan(sys.argv[1])
loaded.expand()
del loaded
print(gc.collect())
"""


def test_a_valid_plan_leaves_no_garbage_cycles(plan_path):
    """The loaded plan goes straight to the collector's oldest generation (gcpause.gc_paused):
    nothing built while loading a valid plan may be garbage that only the collector frees.
    Counted in an interpreter of its own: in the test session other threads (left by other
    tests) make garbage of their own meanwhile."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _NO_CYCLES, str(plan_path)], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "0", out.stdout + out.stderr


def test_a_parameter_computed_from_an_axis_follows_the_axis_at_each_corner(tmp_path):
    """``vlow: ${vin * 0.9}`` with ``vin`` also a corner axis: at ``vin: 6 V`` a step set to
    ``${vlow}`` gets 5.4 V and its limit is around 5.4 V (it got the default's 4.5 V at every
    corner, silently)."""
    plan = write(tmp_path, "p.yaml", textwrap.dedent("""\
        name: p
        parameters: {vin: 5 V, vlow: "${vin * 0.9}", vtop: "${vlow + 0.1 V}"}
        corners: {vin: [4 V, 6 V]}
        steps:
          - {id: d, check: power.on, args: {voltage: "${vtop}", current_limit: 5 A},
             limits: {input_voltage: {nominal: "${vlow}", tol: 1 %}}}
        """))
    loaded = load_plan(plan)
    seen = {}
    for ps in loaded.expand():
        args = loaded.resolve_args(ps.step, ps.corner)
        limit = loaded.resolve_limits(ps.step, ps.corner, args)["input_voltage"]
        seen[ps.corner.values["vin"].magnitude] = (round(args.voltage.magnitude, 6), round(limit.nominal, 6))
    assert seen == {4.0: (3.7, 3.6), 6.0: (5.5, 5.4)}
    assert loaded.parameters["vlow"] == Quantity(4.5, "V")  # the plan's own value is the default's


def test_a_bare_number_overrides_a_ratio_parameter_as_a_plain_ratio(tmp_path):
    """docs/plans.md: a bare number is a plain ratio; ``--set vin_margin=0.1`` for a parameter
    written ``5 %`` is 10 % (it was refused: "0.1 does not fit vin_margin")."""
    plan = write(tmp_path, "p.yaml", textwrap.dedent("""\
        name: p
        parameters: {vin: 5 V, vin_margin: 5 %}
        steps:
          - {id: d, check: power.on, args: {voltage: "${vin * (1 + vin_margin)}", current_limit: 5 A}}
        """))
    for text in ("0.1", "10 %"):
        loaded = load_plan(plan, {"vin_margin": text})
        [ps] = list(loaded.expand())
        assert loaded.resolve_args(ps.step, ps.corner).voltage.magnitude == pytest.approx(5.5), text
    with pytest.raises(ValidationErrors) as err:
        load_plan(plan, {"vin_margin": "1 V"})
    assert "1 V does not fit vin_margin" in str(err.value.errors[0])


def test_when_true_and_false_are_the_expression_languages_words(tmp_path):
    """YAML reads `when: true` as a boolean; it was refused ("when: expected text, got True")."""
    plan = write(tmp_path, "p.yaml", textwrap.dedent("""\
        name: p
        steps:
          - {id: a, check: measure, args: {role: psu, property: ch1.voltage}, when: true}
          - {id: b, check: measure, args: {role: psu, property: ch1.voltage}, when: false}
        """))
    loaded = load_plan(plan)
    assert [(ps.key, loaded.should_run(ps.step, ps.corner)) for ps in loaded.expand()] == [("a", True), ("b", False)]
