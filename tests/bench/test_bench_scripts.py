"""The detailed benchmarks in bench/ run (tiny sizes, one round) and print their figures, so
that none rots. No timing is asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str) -> str:
    res = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_compare_trees_prints_each_checkouts_slope_beside_the_raw_loop():
    out = _run("compare_trees.py", f"one={ROOT}", f"two={ROOT}", "--rounds", "1", "--steps", "10,30")
    assert "raw pyvisa loop:" in out
    assert "  one " in out and "  two " in out and "× raw" in out, out


def test_step_breakdown_prints_the_parts_of_a_step():
    out = _run("step_breakdown.py", "--steps", "10,30", "--rounds", "1")
    assert "results store" in out and "raw pyvisa loop" in out, out
    spread = out.split("Single steps of the 30-step plan")[1].splitlines()
    assert [line.split()[0] for line in spread[2:]] == ["run", "no", "no", "no"], out  # every way's median and mean


def test_reply_watch_prints_each_way_and_labctls_decisions():
    out = _run("reply_watch.py", "--steps", "20", "--rounds", "1", "--trials", "1")
    rows = [line.split() for line in out.splitlines() if line.strip().split(" ")[0].isdigit()]
    assert [row[0] for row in rows] == ["0", "150", "300"], out  # one row per pause, each way timed
    assert all(len(row) == 2 + 4 * 2 + 3 * 2 for row in rows), out  # sleep, poll, peek, busy
    assert "labctl's watch trials on this connection:" in out and " of 1 kept watching (" in out, out


def test_step_profile_prints_every_part_of_a_step():
    out = _run("step_profile.py", "--steps", "30", "--top", "3")
    for part in ("plan loading", "engine", "checks", "instrument layer", "pyvisa", "results store", "console"):
        assert part in out, out
    assert out.splitlines()[-4].startswith("The 3 functions"), out


def _callgrind(out: Path, program: str) -> tuple[int, int]:
    """``python -c PROGRAM`` counted as the benchmark counts a run (its own ``callgrind``)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from step_instructions import callgrind
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return callgrind(["-c", program], dict(os.environ), out.parent, out.name, "the test program")


def test_step_instructions_tells_the_main_thread_from_the_others(tmp_path):
    """The benchmark's reading of callgrind's per-thread files (a `labctl run` under callgrind
    takes about 40 s to start: the whole benchmark is `bench/step_instructions.py`): the work of
    a second thread is counted as the other threads', the main thread's own as the main's."""
    work = "sum(range(2_000_000))"
    in_thread = _callgrind(tmp_path / "thread", f"import threading; t = threading.Thread(target=lambda: {work}); "
                                                "t.start(); t.join()")
    in_main = _callgrind(tmp_path / "main", f"import threading; t = threading.Thread(target=lambda: None); "
                                            f"t.start(); t.join(); {work}")
    moved = in_main[0] - in_thread[0]  # what the sum costs, moved from the thread to the main thread
    assert moved > 10_000_000, (in_thread, in_main)  # a few instructions per number at least
    assert abs((in_thread[1] - in_main[1]) - moved) < 0.1 * moved, (in_thread, in_main)


def test_store_step_prints_each_threads_share_and_sqlites_row_costs():
    out = _run("store_step.py", "--steps", "50", "--profile")
    assert "main thread (events published" in out and "the store's other threads" in out, out
    assert "ten columns NULL" in out and "left out of the statement" in out, out
    assert "The writer's functions by own time" in out and "executemany" in out, out


def test_plan_memory_prints_each_sizes_held_bytes_and_the_runs_rss():
    out = _run("plan_memory.py", "--steps", "200,400", "--run", "50")
    rows = [line.split() for line in out.splitlines() if line.strip().split(" ")[0].replace(",", "").isdigit()]
    assert [row[0] for row in rows] == ["200", "400"], out
    assert all(row[2] == "B" and row[-1] == "KiB/step" for row in rows), out
    assert "labctl run of 50 steps:" in out and "validate of the same plan:" in out, out


def test_xlsx_export_prints_labctls_cpu_beside_the_pandas_route():
    out = _run("xlsx_export.py", "--runs", "1,2", "--per-run", "200", "--rounds", "1")
    rows = [[cell.strip() for cell in line.split("|")] for line in out.splitlines()[1:]]
    assert len(rows) == 2, out
    for count, ours, theirs, ratio, _sizes in rows:
        assert int(count.replace(",", "")) > 0 and float(ours) > 0 and float(theirs) > 0, out
        assert float(ratio) > 0, out


def test_tui_detail_prints_each_sizes_seconds_and_peak_rss():
    out = _run("tui_detail.py", "--steps", "20,600", "--soak-hours", "0.1")
    assert "watch, first poll of a 0.1 h soak (1,440 samples of 4 series): " in out and "1,440 samples read" in out, out
    rows = [line.split() for line in out.splitlines()[1:-1]]
    assert [row[0] for row in rows] == ["20", "600"], out
    for row in rows:
        assert row[2::2] == ["s", "MiB", "s", "MiB", "s", "s"] and float(row[1]) > 0 and float(row[5]) > 0, out
        assert float(row[9]) > 0 and float(row[11]) > 0, out


def test_writer_process_prints_each_way_of_writing():
    out = _run("writer_process.py", "--steps", "10,30", "--rounds", "1")
    assert "The results store's writer, pinned (10→30 steps" in out, out
    ways = [line.split("µs")[0].rsplit(None, 1)[0].strip() for line in out.splitlines()[2:]]
    assert ways == ["threads", "child", "child, idle"], out


def test_step_instructions_counts_the_checkout_pythonpath_names_not_the_working_folders(tmp_path, monkeypatch):
    """A comparison started from inside a checkout (``bench/step_instructions.py old=/tmp/old
    new=.``) must count the old checkout's code for ``old``: ``python -m``/``-c`` put the working
    folder first on the module path, so the counted process runs in its own folder."""
    other = tmp_path / "other-checkout"
    (other / "labctl").mkdir(parents=True)
    (other / "labctl" / "__init__.py").write_text("WHICH = 'other'\n")
    monkeypatch.chdir(ROOT)  # a labctl/ of its own here
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from step_instructions import callgrind
    finally:
        sys.path.remove(str(ROOT / "bench"))
    callgrind(["-c", "import labctl, sys; sys.exit(0 if getattr(labctl, 'WHICH', '') == 'other' else 3)"],
              dict(os.environ, PYTHONPATH=str(other)), tmp_path, "which", "the test program")  # exits 3: raises


def test_record_instructions_counted_program_records_every_measurement(tmp_path):
    """What `bench/record_instructions.py` counts under callgrind (the whole benchmark starts
    Python under valgrind four times a round): steps of 1,000 measurements, all recorded."""
    import sqlite3

    db = tmp_path / "count.db"
    _run("record_instructions.py", "--child", str(db), "2")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT step_ref) FROM measurements").fetchone() == (2000, 2)


def test_sim_server_time_prints_each_querys_round_trip_and_server_time():
    out = _run("sim_server_time.py", "--queries", "30", "--rounds", "1")
    assert "echo server" in out, out
    meas = next(line for line in out.splitlines() if line.strip().startswith("MEAS:VOLT?"))
    idn = next(line for line in out.splitlines() if line.strip().startswith("*IDN?"))
    assert "server: median" in meas and "physics integrated in" in meas, out
    assert "physics integrated in 0.0%" in idn, out  # (an identity never reads the board)


def test_run_layers_prints_each_way_against_the_raw_loop():
    out = _run("run_layers.py", "--steps", "40", "--rounds", "1")
    lines = out.splitlines()
    assert "transport + store" in lines[1] and "labctl run" in lines[1], out
    best, ratio = lines[-2].split(), lines[-1].split()
    assert best[0] == "best" and len(best) == 6 and all(float(x) > 0 for x in best[1:5]), out  # (the run's
    # slope between 10 and 40 steps may be anything)
    assert ratio[:3] == ["×", "raw", "1.00"] and len(ratio) == 7, out
