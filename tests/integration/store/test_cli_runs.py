"""`labctl runs`, `runs show`, `runs compare` as a user runs them (subprocess), on both backends."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time

import pytest
from eventkit import Script

from labctl.engine import events as ev
from labctl.store import Recorder, open_store, query


@pytest.fixture
def populated(db_url):
    """Three runs: an old pass (3 days ago), a failing run on DUT-2, a newer pass on DUT-1."""
    now = time.time()
    with open_store(db_url) as store:
        for rid, dut, t0, vdd, outcome in (
            ("run-old", "DUT-1", now - 3 * 86400, 0.75, ev.RunOutcome.PASSED),
            ("run-bad", "DUT-2", now - 600, 0.83, ev.RunOutcome.FAILED),
            ("run-new", "DUT-1", now - 60, 0.76, ev.RunOutcome.PASSED),
        ):
            rec = Recorder(store)
            s = Script(rec, rid, t0=t0)
            s.start(dut=dut, plan="power-smoke" if rid != "run-old" else "thermal-soak")
            s.step("rails", {"vdd": vdd, "vddq": 0.78},
                   outcome=ev.StepOutcome.FAIL if vdd > 0.8 else ev.StepOutcome.PASS)
            s.end(outcome)
            rec.close()
    return db_url


def ids(res) -> list[str]:
    assert res.returncode == 0, res.stderr
    return [r["id"] for r in json.loads(res.stdout)]


def test_runs_lists_newest_first_and_filters(populated, labctl):
    db = populated
    res = labctl("runs", "--db", db)
    assert res.returncode == 0, res.stderr
    lines = res.stdout
    assert lines.index("run-new") < lines.index("run-bad") < lines.index("run-old")
    assert "failed" in lines and "DUT-2" in lines
    assert ids(labctl("runs", "--db", db, "--format", "json")) == ["run-new", "run-bad", "run-old"]
    assert ids(labctl("runs", "--db", db, "--format", "json", "--dut", "DUT-1")) == ["run-new", "run-old"]
    assert ids(labctl("runs", "--db", db, "--format", "json", "--outcome", "failed")) == ["run-bad"]
    assert ids(labctl("runs", "--db", db, "--format", "json", "--plan", "power-*", "--since", "1d")) == [
        "run-new", "run-bad"]
    assert ids(labctl("runs", "--db", db, "--format", "json", "--limit", "1")) == ["run-new"]
    res = labctl("runs", "--db", db, "--format", "csv", "--station", "bench-1")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["id"] for r in rows] == ["run-new", "run-bad", "run-old"]
    assert rows[1]["outcome"] == "failed" and rows[1]["steps_failed"] == "1"


def test_runs_reads_labctl_db_from_the_environment(populated, labctl):
    res = labctl("runs", "--format", "json", env={**os.environ, "LABCTL_DB": populated})
    assert ids(res) == ["run-new", "run-bad", "run-old"]


def test_runs_show_puts_failures_first_with_limits(populated, labctl):
    res = labctl("runs", "show", "run-bad", "--db", populated)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "run run-bad" in out and "DUT-2" in out and "PSU-007" in out
    assert out.index("failures (1)") < out.index("steps") < out.index("measurements (1")
    fail_line = next(ln for ln in out.splitlines() if "0.83" in ln)
    assert "0.7..0.8 V" in fail_line and "FAIL" in fail_line
    data = json.loads(labctl("runs", "show", "run-b", "--db", populated, "--format", "json").stdout)
    assert [m["verdict"] for m in data["measurements"]] == ["FAIL", "PASS"]
    assert data["run"]["plan_hash"] == "a" * 64
    assert list(data)[:3] == ["run", "steps", "measurements"]  # (the order readers of the JSON have always had)
    # written as it is made: a measurement (and a step) is one line, which grep finds whole
    text = labctl("runs", "show", "run-bad", "--db", populated, "--format", "json").stdout
    failed = next(line for line in text.splitlines() if '"verdict": "FAIL"' in line)
    assert json.loads(failed.strip().rstrip(","))["value"] == json.loads(text)["measurements"][0]["value"]


def test_runs_compare_shows_deltas_changed_verdicts_first(populated, labctl):
    res = labctl("runs", "compare", "run-new", "run-bad", "--db", populated, "--format", "json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [(r["name"], r["verdict_a"], r["verdict_b"]) for r in rows] == [
        ("vdd", "PASS", "FAIL"), ("vddq", "PASS", "PASS")]
    assert rows[0]["delta"] == pytest.approx(0.07) and rows[1]["delta"] == 0
    table = labctl("runs", "compare", "run-new", "run-bad", "--db", populated)
    assert "1 verdict changes" in table.stdout and "+9.21" in table.stdout


def test_runs_compare_of_long_runs_prints_what_differs_and_the_first_others(db_url, labctl):
    """Two runs of 520 measurements: the table lists the two only one run has first, then the
    first 200 others, and says how many more there are; --all prints every one, and JSON
    always has every one."""
    from labctl.cli.runs import SHOWN

    with open_store(db_url) as store:
        _record_long_run(store, "cmp-a", SHOWN)  # (its last step, s259, never ends: no measurements)
        _record_long_run(store, "cmp-b", SHOWN + 1)  # (s259 ends here: two measurements run A lacks)
    table = labctl("runs", "compare", "cmp-a", "cmp-b", "--db", db_url)
    assert table.returncode == 0, table.stderr
    lines = [ln for ln in table.stdout.splitlines() if "│ s" in ln]
    assert len(lines) == SHOWN + 2 and all("s259[0]" in ln for ln in lines[:2]), table.stdout
    rows = json.loads(labctl("runs", "compare", "cmp-a", "cmp-b", "--db", db_url, "--format", "json").stdout)
    assert len(rows) == 2 * 260 + 2
    assert f"… {len(rows) - SHOWN - 2} more measurements (the same verdict in both, smaller changes): use --all" \
        in table.stdout
    full = labctl("runs", "compare", "cmp-a", "cmp-b", "--db", db_url, "--all")
    assert len([ln for ln in full.stdout.splitlines() if "│ s" in ln]) == len(rows) and "more measurements" not in full.stdout


def test_bad_input_gets_one_line_and_an_exit_code(populated, labctl):
    # an unknown run id is a bad invocation (exit 4), for every command that takes one
    for args in (("runs", "show", "no-such-run"), ("runs", "compare", "no-such-run", "run-new"),
                 ("resume", "no-such-run"), ("rerun", "no-such-run")):
        res = labctl(*args, "--db", populated)
        assert res.returncode == 4 and "no run 'no-such-run'" in res.stderr and "Traceback" not in res.stderr, args
    # resume takes a unique prefix of the id, as runs show, report and rerun do
    res = labctl("resume", "run-ne", "--db", populated)
    assert res.returncode == 4 and "cannot resume run run-new: run run-new already passed" in res.stderr, res.stderr
    res = labctl("runs", "--db", populated, "--since", "last tuesday")
    assert res.returncode == 4 and "cannot read --since" in res.stderr and "Traceback" not in res.stderr
    res = labctl("runs", "compare", "run-", "run-new", "--db", populated)
    assert res.returncode == 4 and "ambiguous" in res.stderr
    # a local time the clock shows twice (Berlin's clocks went back at 03:00 CEST that night)
    res = labctl("runs", "--db", populated, "--since", "2026-10-25 02:30", env={**os.environ, "TZ": "Europe/Berlin"})
    assert res.returncode == 4 and "Traceback" not in res.stderr, res.stderr
    assert "--since '2026-10-25 02:30' happens twice in local time" in res.stderr
    assert "2026-10-25 02:30+02:00 (the first) or 2026-10-25 02:30+01:00 (the second)" in res.stderr


def test_an_unreachable_database_is_one_clear_error(labctl):
    res = labctl("runs", "--db", "postgresql://postgres@127.0.0.1:1/none", timeout=60)
    assert res.returncode == 2
    assert "cannot open the results database postgresql+psycopg://postgres@127.0.0.1:1/none" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_run_id_prefix_is_taken_literally_not_as_a_like_pattern(populated, labctl):
    for prefix in ("%", "run-%", "run_new", "_"):
        res = labctl("runs", "show", prefix, "--db", populated)
        assert res.returncode == 4 and f"no run {prefix!r}" in res.stderr, (prefix, res.stderr)
    assert ids(labctl("runs", "--db", populated, "--format", "json", "--dut", "DUT_*")) == []
    assert ids(labctl("runs", "--db", populated, "--format", "json", "--dut", "DUT-*")) == [
        "run-new", "run-bad", "run-old"]


def test_compare_gives_no_percent_change_of_a_temperature(db_url, labctl):
    with open_store(db_url) as store:
        for rid, die, power in (("hot-a", 50.0, 10.0), ("hot-b", 60.0, 12.0)):
            rec = Recorder(store)
            s = Script(rec, rid)
            s.start()
            key = s.step("under_load", {}, end=False)
            s.emit(ev.MeasurementRecorded, step_key=key, name="die_temp", value=die, unit="degC")
            s.emit(ev.MeasurementRecorded, step_key=key, name="input_power", value=power, unit="W")
            s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.PASS, duration=1.0)
            s.end()
            rec.close()
    rows = {r["name"]: r for r in json.loads(labctl("runs", "compare", "hot-a", "hot-b", "--db", db_url,
                                                    "--format", "json").stdout)}
    assert rows["die_temp"]["delta"] == pytest.approx(10.0) and rows["die_temp"]["delta_pct"] is None
    assert rows["input_power"]["delta_pct"] == pytest.approx(20.0)
    table = labctl("runs", "compare", "hot-a", "hot-b", "--db", db_url).stdout
    die_line = next(ln for ln in table.splitlines() if "die_temp" in ln)
    assert "+20" not in die_line and "%" not in die_line.replace("Δ %", "") and "10" in die_line, die_line


def test_an_explicit_db_in_a_missing_folder_is_a_usage_error(tmp_path, labctl):
    target = tmp_path / "nonexistent" / "dir" / "x.db"
    env = {**os.environ, "LABCTL_HOME": str(tmp_path / "home")}
    for args in (("runs",), ("runs", "show", "abc"), ("sync",)):
        res = labctl(*args, "--db", str(target), env=env)
        assert res.returncode == 4, (args, res.stdout, res.stderr)
        assert f"the folder {target.parent} does not exist" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "nonexistent").exists()
    # $LABCTL_DB is as explicit as --db, for every command that reads the store (these created
    # the folders and an empty database, and said "no runs recorded")
    for args in (("runs",), ("runs", "show", "abc"), ("runs", "compare", "a", "b"), ("stats",),
                 ("report", "--format", "csv", "-o", str(tmp_path / "r.csv")), ("sync",)):
        res = labctl(*args, env={**env, "LABCTL_DB": str(target)})
        assert res.returncode == 4, (args, res.stdout, res.stderr)
        assert f"$LABCTL_DB {target}: the folder {target.parent} does not exist" in res.stderr, (args, res.stderr)
    assert not (tmp_path / "nonexistent").exists()
    # an existing folder but no such file: reading makes no new database (a typo is no empty store)
    res = labctl("runs", "--db", str(tmp_path / "fresh.db"))
    assert res.returncode == 2 and "there is no such file" in res.stderr, res.stdout + res.stderr
    assert not (tmp_path / "fresh.db").exists()


def test_the_times_shown_say_their_zone(populated, labctl):
    """Local times, printed with the zone they are in (an operator in Tokyo reading a run
    recorded by a rig elsewhere, or a log pasted into a ticket)."""
    env = {**os.environ, "TZ": "Asia/Tokyo"}
    listed = labctl("runs", "--db", populated, env=env).stdout
    assert " JST" in listed, listed
    shown = labctl("runs", "show", "run-new", "--db", populated, env=env).stdout
    assert re.search(r"\d\d:\d\d:\d\d JST → ", shown), shown


def test_show_of_a_long_run_lists_what_did_not_pass_and_the_first_steps(db_url, labctl):
    """A run of thousands of steps is shown in a moment: every step that did not pass, the
    first 200 others and a count of the rest (``--all`` lists them all)."""
    with open_store(db_url) as store:
        rec = Recorder(store, commit_window=60.0)
        s = Script(rec, "run-long")
        s.start()
        for i in range(260):
            s.step(f"s{i}", {"vdd": 0.83 if i == 250 else 0.75},
                   outcome=ev.StepOutcome.FAIL if i == 250 else ev.StepOutcome.PASS)
        s.end(ev.RunOutcome.FAILED)
        rec.close()
    short = labctl("runs", "show", "run-long", "--db", db_url)
    assert short.returncode == 0, short.stderr
    listed = set(re.findall(r"steps/(s\d+)\[", short.stdout))
    assert "s250" in listed and "s199" in listed and "s259" not in listed and "s200" not in listed
    assert "… 59 more steps (passed or skipped): use --all or --format json" in short.stdout
    full = labctl("runs", "show", "run-long", "--db", db_url, "--all")
    assert set(re.findall(r"steps/(s\d+)\[", full.stdout)) == {f"s{i}" for i in range(260)}
    assert "more steps" not in full.stdout


def _record_long_run(store, run_id: str, shown: int) -> None:
    """``shown + 61`` steps with two measurements each: failures at steps 3 and 230, marginal
    measurements at 5 and 235, step 240 failed once then retried, 250 an error, the last left
    running (no end)."""
    rec = Recorder(store, commit_window=60.0)
    s = Script(rec, run_id)
    s.start()
    for i in range(shown + 60):
        fail = i in (3, 230)
        if i == 240:  # a failure retried: attempt 1's measurements are not final
            s.step(f"s{i}", {"vdd": 0.9}, outcome=ev.StepOutcome.FAIL)
        key = s.step(f"s{i}", {"vdd": 0.9 if fail else 0.75, "vio": 0.75}, attempt=2 if i == 240 else 1,
                     outcome=ev.StepOutcome.FAIL if fail else ev.StepOutcome.PASS, end=False)
        if i in (5, 235):
            s.emit(ev.MeasurementRecorded, step_key=key, name="ripple", value=0.79, unit="V",
                   limits=ev.Limits(low=0.7, high=0.8, marginal_high=0.78), verdict=ev.Verdict.MARGINAL)
        if i == 250:
            s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.ERROR, message="timeout")
        elif i != shown + 59:  # the last one never ends (running)
            s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.FAIL if fail else ev.StepOutcome.PASS)
    rec.flush()
    rec.close()


def test_show_reads_of_a_long_run_what_the_full_detail_cut_to_the_table_gives(db_url):
    """``run_detail(shown=N)`` (the table without ``--all``) reads only what it prints of a long
    run, and that is what the whole detail cut as the table cuts it gives: the first N steps
    and every later one that did not pass (an error, a retried failure, one left running), all
    failing and marginal measurements (failures first, plan order), the first N others, and
    the counts of what was left out. Only final attempts' measurements count."""
    from labctl.cli.runs import SHOWN

    with open_store(db_url) as store:
        _record_long_run(store, "run-cut", SHOWN)
        full = query.run_detail(store, "run-cut")
        cut = query.run_detail(store, "run-cut", shown=SHOWN)
    steps = [x for i, x in enumerate(full["steps"]) if i < SHOWN or x["outcome"] not in ("PASS", "SKIPPED")]
    assert cut["steps"] == steps and cut["step_count"] == len(full["steps"]) == SHOWN + 61
    assert [x["step_key"] for x in steps[SHOWN:]] == ["steps/s230[0]#1", "steps/s240[0]#1", "steps/s250[0]#1",
                                                     f"steps/s{SHOWN + 59}[0]#1"]
    bad = [m for m in full["measurements"] if m["verdict"] in ("FAIL", "MARGINAL")]
    rest = [m for m in full["measurements"] if m["verdict"] not in ("FAIL", "MARGINAL")]
    assert [(m["step_key"], m["verdict"]) for m in bad] == [
        ("steps/s3[0]#1", "FAIL"), ("steps/s230[0]#1", "FAIL"), ("steps/s5[0]#1", "MARGINAL"),
        ("steps/s235[0]#1", "MARGINAL")]
    assert cut["measurements"] == bad + rest[:SHOWN] and cut["passing_count"] == len(rest)
    assert {k: v for k, v in cut.items() if k not in ("steps", "measurements", "step_count", "passing_count")} \
        == {k: v for k, v in full.items() if k not in ("steps", "measurements")}


def test_a_long_run_read_a_page_at_a_time_adds_up_to_the_whole_detail(db_url):
    """The TUI's run detail reads a long run a page at a time (``run_overview``, ``step_page``,
    ``measurement_page``): the pages, read on until nothing is left, are the whole detail's
    steps (in the order they ran) and measurements (failures, marginal, then the rest); the
    first look also has the later steps that did not pass, the counts of what is left and the
    final plan steps by outcome."""
    page = 37
    with open_store(db_url) as store:
        _record_long_run(store, "run-paged", 200)
        full = query.run_detail(store, "run-paged")
        first = query.run_overview(store, "run-paged", page)
        steps, left, after = list(first["steps"]), first["steps_left"], first["steps"][-1]["place"]
        while left:
            more, left = query.step_page(store, "run-paged", after, page)
            assert len(more) == min(page, len(full["steps"]) - len(steps)) and more[0]["place"] > after
            steps, after = steps + more, more[-1]["place"]
        ms, total = list(first["measurements"]), first["measurements_total"]
        while len(ms) < total:
            ms += query.measurement_page(store, "run-paged", len(ms), page)[0]
        late, late_left = query.step_page(store, "run-paged", first["steps"][-1]["place"], 2, not_passed=True)
    assert [{k: v for k, v in x.items() if k != "place"} for x in steps] == full["steps"]
    assert [x["place"] for x in steps] == sorted({x["place"] for x in steps})  # (session, seq): unique, in order
    assert ms == full["measurements"]
    assert total == len(full["measurements"]) == 2 * 259 + 2  # (the running step's are held until it ends)
    assert [x["step_key"] for x in first["late"]] == ["steps/s230[0]#1", "steps/s240[0]#1", "steps/s250[0]#1",
                                                      "steps/s259[0]#1"]  # (s240's retry passed)
    assert first["late_left"] == 0 and [x["step_key"] for x in late] == ["steps/s230[0]#1", "steps/s240[0]#1"]
    assert late_left == 2
    assert len(first["steps"]) == page and first["steps_left"] == len(full["steps"]) - page
    assert [(m["step_key"], m["verdict"]) for m in first["measurements"][:4]] == [
        ("steps/s3[0]#1", "FAIL"), ("steps/s230[0]#1", "FAIL"), ("steps/s5[0]#1", "MARGINAL"),
        ("steps/s235[0]#1", "MARGINAL")]
    assert first["step_counts"] == {"PASS": 256, "FAIL": 2, "ERROR": 1, None: 1}  # s240's final attempt passed
    assert {k: v for k, v in first.items() if k in full and k not in ("steps", "measurements")} \
        == {k: v for k, v in full.items() if k not in ("steps", "measurements")}


def test_runs_show_prints_stored_text_as_it_is_never_as_markup_or_terminal_commands(db_url, labctl):
    """A garbage reply quoted in a step's message ("got '[/bold]'"), an identity string with
    brackets, an error message with ESC sequences: shown as text, no traceback, nothing that
    would clear or recolour the operator's terminal."""
    with open_store(db_url) as store:
        rec = Recorder(store)
        s = Script(rec, "run-odd")
        s.start(instruments=[ev.InstrumentInfo(role="dut", driver="console", resource="/dev/ttyUSB0",
                                               idn="[red]ACME[/red] shell\x1b[0m")])
        key = s.step("rails", {"vdd": 0.75}, end=False)
        s.emit(ev.InstrumentErrorReported, step_key=key, role="dut", code=-100, message="\x1b[2Jnoise\x07")
        s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.ERROR,
               message="expected a number, got '[/bold]\\x15' (instrument dut)", duration=1.0)
        s.emit(ev.RunEnded, outcome=ev.RunOutcome.ERROR, message="[/] stopped")
        rec.close()
    res = labctl("runs", "show", "run-odd", "--db", db_url)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    out = res.stdout
    assert "got '[/bold]\\x15'" in out and "[/] stopped" in out and "[red]ACME[/red] shell\\x1b[0m" in out, out
    assert "\\x1b[2Jnoise\\x07" in out and "\x1b" not in out and "\x07" not in out, repr(out)


def test_json_of_a_long_run_read_by_head_ends_quietly(tmp_path):
    """`labctl runs show RUN --format json | head`: the reader goes away after a line while
    labctl is still writing (3 MB of JSON, written as it is made); it ends quietly, exit 0."""
    db = str(tmp_path / "long.db")
    with open_store(db) as store:
        rec = Recorder(store, commit_window=60.0)
        s = Script(rec, "run-long")
        s.start()
        for i in range(3000):
            s.step(f"s{i}", {"vdd": 0.75})
        s.end(ev.RunOutcome.PASSED)
        rec.close()
    reader = subprocess.Popen([sys.executable, "-m", "labctl", "runs", "show", "run-long", "--db", db,
                               "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout.readline() == b"{\n"
    reader.stdout.close()
    assert reader.wait(timeout=120) == 0
    assert reader.stderr.read() == b""
