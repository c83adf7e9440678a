"""The runner on its own: steps, corners, retries, timeouts, on_fail, when, aborts, safety.

The station here is a small stand-in (this is a unit test of the engine alone); the engine
against the simulated lab is tested in tests/integration/engine.
"""

from __future__ import annotations

import textwrap
import threading
from typing import ClassVar

import pytest

from labctl.checks.registry import CheckArgs, Measure, get_check, register_check
from labctl.clock import ScaledClock
from labctl.engine import events as ev
from labctl.engine.abort import AbortController
from labctl.engine.runner import Runner, RunOptions
from labctl.errors import InstrumentTimeout
from labctl.fixture.model import Fixture, RoleBinding
from labctl.instruments.roles import InstrumentErrorEntry, SafeStateResult
from labctl.plan.loader import load_plan


class ValueArgs(CheckArgs):
    value: float
    MEASURES: ClassVar[dict[str, Measure]] = {"value": Measure("voltage", "V")}


class SleepArgs(CheckArgs):
    seconds: float
    role: str | None = None


class BoomArgs(CheckArgs):
    pass


def _value(ctx, args):
    ctx.measure("value", args.value, "V")


def _sleep(ctx, args):
    if args.role:
        ctx.role(args.role).poke()
    ctx.sleep(args.seconds)


def _boom(ctx, args):
    raise InstrumentTimeout("no answer", instrument="dmm", resource="TCPIP0::127.0.0.1::1::SOCKET",
                            command="READ?")


_flaky_calls: list[int] = []


def _exit(ctx, args):
    raise SystemExit(1)


def _flaky(ctx, args):
    _flaky_calls.append(1)
    if len(_flaky_calls) <= args.fail_first:
        _boom(ctx, args)


@pytest.fixture(autouse=True, scope="module")
def test_checks():
    """Checks of this module only: registered for its tests, removed afterwards so that they
    never leak into the built-in catalog (e.g. the exported JSON Schema)."""
    from labctl.checks import registry

    get_check("measure")  # load the built-in catalog first
    added = {"test.value": (ValueArgs, _value), "test.sleep": (SleepArgs, _sleep), "test.boom": (BoomArgs, _boom),
             "test.flaky": (FlakyArgs, _flaky), "test.exit": (BoomArgs, _exit)}
    for name, (args, func) in added.items():
        register_check(name, args=args)(func)
    yield
    for name in added:
        registry._REGISTRY.pop(name, None)


class FakeRole:
    def __init__(self, station, name):
        self.station, self.name = station, name

    def poke(self):
        self.station.calls.append(self.name)

    def sensors(self):
        return {"die_temp": self.station.die_temp}


class FakeStation:
    def __init__(self):
        self.calls: list[str] = []
        self.safe_calls = 0
        self.die_temp = 40.0
        self.errors: dict[str, list[InstrumentErrorEntry]] = {}
        self.session_log = None
        self.console_dead = False
        self.console_wrong = False  # the DUT reads back another state than the safe one

    def role(self, name, kind=None):
        return FakeRole(self, name)

    def safe_state(self):
        self.safe_calls += 1
        dut = (SafeStateResult("dut", False, error="console did not answer") if self.console_dead
               else SafeStateResult("dut", False, error="prbs reads running", wrong_state=True) if self.console_wrong
               else SafeStateResult("dut", True, ["prbs stop", "load idle"]))
        return {"psu": SafeStateResult("psu", True, ["OUTP 0"]), "dut": dut}

    def drain_errors(self, names=None):
        return {k: v for k, v in self.errors.items() if names is None or k in names}


FIXTURE = Fixture(station="unit", roles={
    "psu": RoleBinding(driver="keysight-e36312a", resource="TCPIP0::127.0.0.1::1::SOCKET"),
    "dut": RoleBinding(driver="accel-console", resource="/tmp/none"),
})


def plan(tmp_path, body: str):
    p = tmp_path / "plan.yaml"
    p.write_text(textwrap.dedent(body))
    return load_plan(p)


def run(loaded, station=None, abort=None, scale=1000.0, **options):
    events: list[ev.Event] = []
    bus = ev.EventBus()
    bus.subscribe(events.append)
    station = station or FakeStation()
    runner = Runner(loaded, station, FIXTURE, bus=bus, clock=ScaledClock(scale),
                    options=RunOptions(handle_signals=False, **options), abort=abort)
    result = runner.run()
    assert not bus.errors
    return result, events, station


def ended(events):
    return {e.step_key: e for e in events if isinstance(e, ev.StepEnded)}


def test_limits_judge_and_run_outcome(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: ok, check: test.value, args: {value: 0.75}, limits: {nominal: 0.75 V, tol: 3 %}}
          - {id: low, check: test.value, args: {value: 0.70}, limits: {nominal: 0.75 V, tol: 3 %}}
    """)
    result, events, station = run(loaded)
    assert result.outcome is ev.RunOutcome.FAILED
    steps = {s.step_id: s for s in result.steps}
    assert steps["ok"].outcome is ev.StepOutcome.PASS
    assert steps["low"].outcome is ev.StepOutcome.FAIL
    assert "value = 0.7 V" in steps["low"].message and "0.7275" in steps["low"].message
    m = [e for e in events if isinstance(e, ev.MeasurementRecorded)]
    assert [x.verdict for x in m] == [ev.Verdict.PASS, ev.Verdict.FAIL]
    assert m[1].limits.low == pytest.approx(0.7275)
    assert station.safe_calls == 1
    assert isinstance(events[0], ev.RunStarted) and isinstance(events[-1], ev.RunEnded)


def test_marginal_band_passes_but_is_flagged(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: edge, check: test.value, args: {value: 0.7700}, limits: {nominal: 0.75 V, tol: 3 %, marginal: 10 %}}
    """)
    result, events, _ = run(loaded)
    (m,) = [e for e in events if isinstance(e, ev.MeasurementRecorded)]
    assert m.verdict is ev.Verdict.MARGINAL
    assert result.steps[0].outcome is ev.StepOutcome.PASS
    assert "marginal" in result.steps[0].message


def test_retries_are_recorded_and_never_hide_the_first_failure(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: flaky, check: test.value, args: {value: 1.0}, limits: {max: 0.8 V}, retries: 2}
    """)
    result, events, _ = run(loaded)
    starts = [e for e in events if isinstance(e, ev.StepStarted) and e.step_id == "flaky"]
    assert [s.attempt for s in starts] == [1, 2, 3]
    outcomes = [e.outcome for e in events if isinstance(e, ev.StepEnded) and e.step_key.startswith("steps/flaky")]
    assert outcomes == [ev.StepOutcome.FAIL] * 3
    assert result.steps[0].attempts == 3


class FlakyArgs(CheckArgs):
    fail_first: int


def test_a_pass_after_retries_still_shows_the_first_failure(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: flaky, check: test.flaky, args: {fail_first: 1}, retries: 2}
    """)
    result, events, _ = run(loaded)
    (step,) = [s for s in result.steps if s.step_id == "flaky"]
    assert step.outcome is ev.StepOutcome.PASS and step.attempts == 2
    assert step.message.startswith("passed on attempt 2 of 3; attempt 1 ERROR: ")
    assert "READ?" in step.message
    ends = [e for e in events if isinstance(e, ev.StepEnded) and e.step_key.startswith("steps/flaky")]
    assert [e.outcome for e in ends] == [ev.StepOutcome.ERROR, ev.StepOutcome.PASS]


def test_on_fail_stop_skips_the_rest_but_teardown_runs(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: bad, check: test.value, args: {value: 1.0}, limits: {max: 0.8 V}, on_fail: stop}
          - {id: later, check: test.value, args: {value: 0.1}}
        teardown:
          - {id: cleanup, check: test.sleep, args: {seconds: 0.1, role: psu}}
    """)
    result, _, station = run(loaded)
    steps = {s.step_id: s for s in result.steps}
    assert steps["later"].outcome is ev.StepOutcome.SKIPPED
    assert steps["cleanup"].outcome is ev.StepOutcome.PASS
    assert station.calls == ["psu"] and station.safe_calls == 1
    assert result.outcome is ev.RunOutcome.FAILED


def test_setup_failure_skips_steps(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        setup:
          - {id: power, check: test.boom}
        steps:
          - {id: s1, check: test.value, args: {value: 0.1}}
    """)
    result, _, _ = run(loaded)
    steps = {s.step_id: s for s in result.steps}
    assert steps["power"].outcome is ev.StepOutcome.ERROR
    assert "READ?" in steps["power"].message and "dmm" in steps["power"].message
    assert steps["s1"].outcome is ev.StepOutcome.SKIPPED
    assert result.outcome is ev.RunOutcome.ERROR


@pytest.mark.parametrize("limit", ["2 s", "0 s"])  # 0 s is a limit too (it had been none)
def test_timeout_makes_the_step_error(tmp_path, limit):
    loaded = plan(tmp_path, f"""
        name: t
        steps:
          - {{id: long, check: test.sleep, args: {{seconds: 3600}}, timeout: {limit}}}
    """)
    result, _, _ = run(loaded, scale=100.0)
    assert result.steps[0].outcome is ev.StepOutcome.ERROR
    assert f"timed out after {limit}" in result.steps[0].message


def test_corners_and_per_corner_false_and_when(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        corners:
          ambient: [0 degC, 25 degC, 85 degC]
        steps:
          - {id: once, check: test.value, args: {value: 0.1}, per_corner: false}
          - {id: each, check: test.value, args: {value: 0.1}}
          - {id: hot, check: test.value, args: {value: 0.1}, when: "ambient >= 50 degC"}
    """)
    result, events, _ = run(loaded)
    keys = [(s.step_id, s.corner.get("ambient"), s.outcome) for s in result.steps if s.check != "safe_state"]
    assert keys[0] == ("once", None, ev.StepOutcome.PASS)
    assert [k for k in keys if k[0] == "each"] == [("each", c, ev.StepOutcome.PASS) for c in ("0 degC", "25 degC", "85 degC")]
    assert [k[2] for k in keys if k[0] == "hot"] == [ev.StepOutcome.SKIPPED, ev.StepOutcome.SKIPPED, ev.StepOutcome.PASS]


def test_instrument_error_in_queue_makes_the_step_error(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: poke, check: test.sleep, args: {seconds: 0.01, role: psu}}
    """)
    station = FakeStation()
    station.errors = {"psu": [InstrumentErrorEntry(-222, "Data out of range", "psu")]}
    result, events, _ = run(loaded, station)
    assert result.steps[0].outcome is ev.StepOutcome.ERROR
    assert '-222,"Data out of range"' in result.steps[0].message
    assert any(isinstance(e, ev.InstrumentErrorReported) and e.code == -222 for e in events)


def test_operator_abort_reaches_a_step_blocked_in_a_long_wait(tmp_path):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: soak, check: test.sleep, args: {seconds: 36000}}
          - {id: after, check: test.value, args: {value: 0.1}}
        teardown:
          - {id: cleanup, check: test.sleep, args: {seconds: 0.1, role: psu}}
    """)
    abort = AbortController()
    threading.Timer(0.3, abort.request, args=("operator", "operator pressed abort")).start()
    station = FakeStation()
    station.console_dead = True
    result, events, station = run(loaded, station, abort=abort, scale=1.0)
    steps = {s.step_id: s for s in result.steps}
    assert steps["soak"].outcome is ev.StepOutcome.ABORTED
    assert steps["after"].outcome is ev.StepOutcome.ABORTED
    assert steps["cleanup"].outcome is ev.StepOutcome.PASS
    assert station.safe_calls == 1
    # the console could not confirm its safe state: that outranks the abort
    assert result.outcome is ev.RunOutcome.ERROR
    assert result.message.startswith("BENCH MAY BE UNSAFE: safe-state.dut: not confirmed: console did not answer")
    assert "operator pressed abort" in result.message
    # every safe-state action is recorded, the failing one too
    safe = {s.step_id: s for s in result.steps if s.check == "safe_state"}
    assert safe["safe-state.psu"].outcome is ev.StepOutcome.PASS
    assert safe["safe-state.dut"].outcome is ev.StepOutcome.ERROR
    assert "console did not answer" in safe["safe-state.dut"].message


@pytest.mark.parametrize("fault,first", [
    ("console_dead", "BENCH MAY BE UNSAFE: safe-state.dut: not confirmed: console did not answer"),
    ("console_wrong", "BENCH MAY BE UNSAFE: safe-state.dut: NOT SAFE: prbs reads running"),  # not a failed step
], ids=["not confirmed", "read back wrong"])
def test_a_failing_safe_state_makes_a_passing_run_an_error(tmp_path, fault, first):
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: ok, check: test.value, args: {value: 0.75}}
    """)
    station = FakeStation()
    setattr(station, fault, True)
    result, _, _ = run(loaded, station)
    assert result.outcome is ev.RunOutcome.ERROR
    assert "safe-state.dut" in result.message
    assert result.message.startswith(first), result.message
    # what the run would otherwise have been: its one step passed; one of two roles was made safe
    assert result.message.endswith("(run passed: 1 step(s) passed; safe state: 1 of 2 role(s) OK)"), result.message


def test_steps_cut_short_by_an_exception_are_an_error_never_a_pass(tmp_path):
    """Anything escaping the steps (here SystemExit, as rich raised on a closed pipe) still
    runs teardown and the safe state, and the run is recorded as an error, not judged by
    the steps that happened to run."""
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: first, check: test.value, args: {value: 0.75}}
          - {id: cut, check: test.exit}
          - {id: never, check: test.value, args: {value: 0.75}}
        teardown:
          - {id: off, check: test.value, args: {value: 0.0}}
    """)
    events: list[ev.Event] = []
    bus = ev.EventBus()
    bus.subscribe(events.append)
    station = FakeStation()
    runner = Runner(loaded, station, FIXTURE, bus=bus, clock=ScaledClock(1000.0),
                    options=RunOptions(handle_signals=False))
    with pytest.raises(SystemExit):
        runner.run()
    [end] = [e for e in events if isinstance(e, ev.RunEnded)]
    assert (end.outcome, end.message) == (ev.RunOutcome.ERROR, "the run stopped short: SystemExit: 1")
    assert "teardown/off#1" in ended(events) and station.safe_calls == 1
    assert "steps/never#1" not in ended(events)


SAFETY_PLAN = """
    name: t
    safety:
      poll_interval: 1 s
      interlocks:
        - {signal: dut.die_temp, max: 105 degC, stale_after: 3 s}
    steps:
      - {id: soak, check: test.sleep, args: {seconds: 36000}}
"""


def test_interlock_trip_aborts_a_running_step(tmp_path):
    loaded = plan(tmp_path, SAFETY_PLAN)
    station = FakeStation()
    threading.Timer(0.3, setattr, args=(station, "die_temp", 118.0)).start()
    result, _, _ = run(loaded, station, scale=10.0)
    assert result.outcome is ev.RunOutcome.ABORTED
    assert "dut.die_temp = 118 degC is above its limit 105 degC" in result.message
    assert result.steps[0].outcome is ev.StepOutcome.ABORTED
    assert station.safe_calls == 1


def test_run_refuses_to_start_with_an_interlock_already_tripped(tmp_path):
    loaded = plan(tmp_path, SAFETY_PLAN)
    station = FakeStation()
    station.die_temp = 120.0
    result, events, _ = run(loaded, station)
    assert result.outcome is ev.RunOutcome.ABORTED
    assert result.message.startswith("refused to start")
    assert not [e for e in events if isinstance(e, ev.StepStarted) and e.check != "safe_state"]
    assert station.safe_calls == 1


def test_console_prints_corners_and_bracketed_text_literally(tmp_path):
    from io import StringIO

    from rich.console import Console

    from labctl.console import ConsoleReporter

    loaded = plan(tmp_path, """
        name: t
        corners:
          ambient: [0 degC, 45 degC]
        steps:
          - {id: low, check: test.value, args: {value: 0.70}, limits: {min: 0.8 V}}
    """)
    for compact in (False, True):
        out = StringIO()
        reporter = ConsoleReporter(Console(file=out, width=200, color_system=None), compact=compact)
        events: list[ev.Event] = []
        bus = ev.EventBus()
        bus.subscribe(reporter)
        bus.subscribe(events.append)
        Runner(loaded, FakeStation(), FIXTURE, bus=bus, clock=ScaledClock(1000),
               options=RunOptions(handle_signals=False)).run()
        text = out.getvalue()
        assert "[ambient=0 degC]" in text and "[ambient=45 degC]" in text, text
        assert "x ≥ 0.8 V" in text


def test_run_record_keeps_the_plan_text_with_its_includes(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "common.yaml").write_text(textwrap.dedent("""
        steps:
          - {id: shared, check: test.value, args: {value: 0.1}}
    """))
    loaded = plan(tmp_path, """
        name: t
        steps:
          - include: lib/common.yaml
          - {id: own, check: test.value, args: {value: 0.2}}
    """)
    _, events, _ = run(loaded)
    started = events[0]
    assert isinstance(started, ev.RunStarted)
    assert "id: own" in started.plan_text and "id: shared" in started.plan_text
    assert "included:" in started.plan_text and "common.yaml" in started.plan_text


# ------------------------------------------------------------------ resume (labctl.engine.replay)

RESUMABLE = """
    name: t
    setup:
      - {id: power, check: test.sleep, args: {seconds: 0.1, role: psu}, resume: replay}
    steps:
      - {id: level, check: test.value, args: {value: 0.5}, limits: {max: 1 V}, resume: replay}
      - {id: early, check: test.value, args: {value: 2.0}, limits: {max: 1 V}}
      - {id: late, check: test.value, args: {value: 0.5}, limits: {max: 1 V}}
"""


def test_resume_replays_state_steps_and_keeps_finished_measurements(tmp_path):
    loaded = plan(tmp_path, RESUMABLE)
    finished = {"setup/power": "PASS", "steps/level": "PASS", "steps/early": "PASS"}
    result, events, station = run(loaded, finished_steps=finished,
                                  first_attempt={"setup/power": 2, "steps/level": 2, "steps/early": 2})
    started = {e.step_key: e for e in events if isinstance(e, ev.StepStarted) and e.check != "safe_state"}
    assert sorted(started) == ["setup/power#2", "steps/late#1", "steps/level#2"]  # "early" is kept, not re-run
    assert all("resume-replay" in started[k].tags for k in ("setup/power#2", "steps/level#2"))
    assert "resume-replay" not in started["steps/late#1"].tags
    assert ended(events)["steps/level#2"].message == "replayed on resume"
    assert station.calls == ["psu"]  # the state was re-established
    measured = [e.step_key for e in events if isinstance(e, ev.MeasurementRecorded)]
    assert measured == ["steps/late#1"]  # a replay's measurements are not recorded twice
    assert result.outcome is ev.RunOutcome.PASSED
    ids = [s.step_id for s in result.steps if s.group != "teardown"]
    assert sorted(ids) == ["early", "late", "level", "power"]  # each step counted once in the verdict


def test_resume_counts_an_earlier_failure_in_the_verdict(tmp_path):
    loaded = plan(tmp_path, RESUMABLE)
    result, events, _ = run(loaded, finished_steps={"setup/power": "PASS", "steps/level": "PASS",
                                                    "steps/early": "FAIL"})
    assert result.outcome is ev.RunOutcome.FAILED  # as the uninterrupted run
    assert "early" in result.message
    assert "steps/early#1" not in {e.step_key for e in events if isinstance(e, ev.StepStarted)}


def test_a_failing_replay_fails_the_resumed_run_and_stops_it(tmp_path):
    loaded = plan(tmp_path, RESUMABLE.replace("{value: 0.5}, limits: {max: 1 V}, resume: replay",
                                              "{value: 1.5}, limits: {max: 1 V}, resume: replay"))
    result, events, _ = run(loaded, finished_steps={"setup/power": "PASS", "steps/level": "PASS"})
    steps = {s.step_id: s for s in result.steps}
    assert steps["level"].outcome is ev.StepOutcome.FAIL
    assert steps["level"].message.startswith("replayed on resume: FAIL: value = 1.5 V")
    assert steps["early"].outcome is ev.StepOutcome.SKIPPED and steps["late"].outcome is ev.StepOutcome.SKIPPED
    assert result.outcome is ev.RunOutcome.FAILED


def test_resume_skip_keeps_a_state_step_and_replays_only_the_cut_off_corner(tmp_path):
    from labctl.engine.replay import REPLAY, resume_actions

    loaded = plan(tmp_path, """
        name: t
        corners: {temp: [0 degC, 25 degC, 45 degC]}
        setup:
          - {id: on, check: set, args: {target: psu.ch1.output, value: "on"}, resume: skip}
        steps:
          - {id: idle, check: set, args: {target: dut.workload, value: idle}, per_corner: false}
          - {id: air, check: set, args: {target: chamber.setpoint, value: "${temp}"}}
          - {id: read, check: test.value, args: {value: 0.5}}
          - {id: check, check: test.value, args: {value: 0.5}, resume: replay}
    """)
    planned = [ps for ps in loaded.expand() if ps.group != "teardown"]
    keys = [f"{ps.group}/{ps.key}" for ps in planned]
    cut = keys.index("steps/check@1")
    actions = resume_actions(planned, dict.fromkeys(keys[:cut], "PASS"), loaded)
    assert sorted(k for k, a in actions.items() if a == REPLAY) == ["steps/air@1", "steps/idle"]
    assert set(actions) == set(keys[:cut])  # every finished step is kept or replayed
    # cut off in teardown: nothing to re-establish, every step kept
    assert set(resume_actions(planned, dict.fromkeys(keys, "PASS"), loaded).values()) == {"keep"}


def test_a_bad_resume_value_is_reported_at_its_position(tmp_path):
    from labctl.errors import ValidationErrors

    bad = tmp_path / "plan.yaml"
    bad.write_text("name: t\nsteps:\n  - {id: a, check: test.value, args: {value: 1}, resume: sometimes}\n")
    with pytest.raises(ValidationErrors) as e:
        load_plan(bad)
    (err,) = e.value.errors
    assert f"{bad}:3:" in err.format() and "resume: expected 'replay' or 'skip', got 'sometimes'" in err.format()


def test_safe_state_steps_carry_the_time_each_role_took(tmp_path):
    """Every role is made safe at once; its step starts when they started and lasts what that
    role took (they were recorded at one instant with a zero duration)."""
    loaded = plan(tmp_path, """
        name: t
        steps:
          - {id: ok, check: test.value, args: {value: 0.75}}
    """)

    class SlowPsu(FakeStation):
        def safe_state(self):
            out = super().safe_state()
            out["psu"].seconds, out["dut"].seconds = 1.5, 0.25
            return out

    _, events, _ = run(loaded, SlowPsu())
    started = {e.step_key: e.time for e in events if isinstance(e, ev.StepStarted)}
    ends = ended(events)
    psu, dut = "teardown/safe-state.psu#1", "teardown/safe-state.dut#1"
    assert ends[psu].duration == 1.5 and ends[dut].duration == 0.25
    assert ends[psu].time - started[psu] == pytest.approx(1.5) and started[psu] == started[dut]
