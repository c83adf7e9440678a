"""A SQLite results file this user may not write: `labctl run` refuses it in one line (exit 4)
before any instrument is touched; `labctl runs`, `report` and `stats` still read it, writing
nothing beside it (docs/store.md, "Where the database is").

Tests may run as root, for whom chmod stops no write. Then labctl runs with the capabilities
that let root ignore file modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) dropped
from its bounding set, so the modes hold for it as for any user. (A read-only bind mount
would need CAP_SYS_ADMIN and a mount namespace; a path under a regular file is another case,
tested too.)
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from labctl.sim.testing import isolated_fixture
from tests.conftest import ROOT

PLAN = ROOT / "tests" / "data" / "report" / "no-spread.yaml"  # needs only the supply
PR_CAPBSET_DROP = 24
ROOT_BYPASS = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def _without_root_bypass() -> None:  # in the child, before it runs labctl
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in ROOT_BYPASS:
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def as_user(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """A command as a user to whom file modes apply (root too, see the module doc)."""
    return subprocess.run([sys.executable, *args], cwd=cwd or ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=_without_root_bypass if os.geteuid() == 0 else None)


def labctl(*args: str) -> subprocess.CompletedProcess:
    return as_user("-m", "labctl", *args)


@pytest.fixture
def locked(tmp_path):
    """``lock(path, mode)`` sets a mode and checks that it holds for :func:`as_user`; the
    modes are given back at the end, so the folder can be removed."""
    changed: list[tuple[Path, int]] = []

    def lock(path: Path, mode: int) -> Path:
        changed.append((path, path.stat().st_mode & 0o777))
        path.chmod(mode)
        probe = path / "probe" if path.is_dir() else path
        res = as_user("-c", f"open({str(probe)!r}, 'a')")
        if res.returncode == 0:
            pytest.skip(f"cannot make {path} unwritable here (root without CAP_SETPCAP?): {res.stderr[-200:]}")
        return path

    yield lock
    for path, mode in reversed(changed):
        path.chmod(mode)


def closed_bench(tmp_path: Path) -> tuple[Path, socket.socket]:
    """A station whose supply is a listening socket that records any connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    fixture = tmp_path / "bench.yaml"
    fixture.write_text(f"station: ro-bench\nroles:\n  psu:\n    driver: keysight-e36312a\n"
                       f"    resource: TCPIP0::127.0.0.1::{listener.getsockname()[1]}::SOCKET\n    timeout: 1 s\n"
                       "channels:\n  VIN: psu@(@1)\n", encoding="utf-8")
    return fixture, listener


def assert_untouched(listener: socket.socket) -> None:
    with pytest.raises(BlockingIOError):  # nobody connected to the supply
        listener.accept()
    listener.close()


def one_line_error(res: subprocess.CompletedProcess) -> tuple[str, str]:
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("  hint: "), res.stderr
    return lines[0], lines[1]


@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
def test_run_refuses_a_folder_it_may_not_write_before_any_instrument(tmp_path, locked, existing):
    fixture, listener = closed_bench(tmp_path)
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "results.db"
    if existing:
        db.write_bytes(b"")
    locked(folder, 0o555)
    res = labctl("run", str(PLAN), "--fixture", str(fixture), "--dut", "SIM-1", "--db", str(db))
    assert res.returncode == 4, res.stdout + res.stderr
    error, hint = one_line_error(res)
    assert error == (f"error: cannot record results in {db}: its folder {folder} is not writable "
                     "(SQLite keeps its journal beside the file)")
    assert "a folder you may write to" in hint
    assert ("labctl runs --db" in hint) is existing  # reading is offered where there is something to read
    assert_untouched(listener)
    assert sorted(p.name for p in folder.iterdir()) == (["results.db"] if existing else [])


def test_run_refuses_a_read_only_file_in_a_writable_folder(tmp_path, locked):
    fixture, listener = closed_bench(tmp_path)
    db = tmp_path / "results.db"
    db.write_bytes(b"")
    locked(db, 0o444)
    res = labctl("run", str(PLAN), "--fixture", str(fixture), "--dut", "SIM-1", "--db", str(db))
    assert res.returncode == 4, res.stdout + res.stderr
    assert one_line_error(res)[0] == f"error: cannot record results in {db}: the file is read-only"
    assert_untouched(listener)


def test_a_db_under_a_regular_file_is_named_as_such(tmp_path):
    fixture, listener = closed_bench(tmp_path)
    blocker = tmp_path / "results"
    blocker.write_text("not a folder", encoding="utf-8")
    res = labctl("run", str(PLAN), "--fixture", str(fixture), "--dut", "SIM-1", "--db", str(blocker / "r.db"))
    assert res.returncode == 4, res.stdout + res.stderr
    assert one_line_error(res)[0] == f"error: --db {blocker / 'r.db'}: {blocker} is a file, not a folder"
    assert_untouched(listener)


def test_a_read_only_database_is_still_read(tmp_path, locked):
    """Runs recorded by a bench, then the file and its folder read-only (an archive, another
    user's results): listing, showing, reporting and statistics work and write nothing there."""
    folder = tmp_path / "archive"
    folder.mkdir()
    db = folder / "results.db"
    bench = isolated_fixture(tmp_path, time_scale=600)
    for serial in ("SIM-GOLD-0001", "SIM-GOLD-0002"):
        res = subprocess.run([sys.executable, "-m", "labctl", "run", str(PLAN), "--fixture", str(bench), "--dut",
                              serial, "--db", str(db)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["results.db"]  # the journal was checkpointed
    locked(db, 0o444)
    locked(folder, 0o555)

    res = labctl("runs", "--db", str(db), "--format", "json")
    assert res.returncode == 0, res.stderr
    runs = json.loads(res.stdout)
    assert sorted(r["dut_serial"] for r in runs) == ["SIM-GOLD-0001", "SIM-GOLD-0002"]
    res = labctl("runs", "show", runs[0]["id"], "--db", str(db), "--format", "json")
    assert res.returncode == 0 and json.loads(res.stdout)["run"]["id"] == runs[0]["id"], res.stderr
    out = tmp_path / "report.csv"
    res = labctl("report", "--db", str(db), "-F", "csv", "-o", str(out))
    assert res.returncode == 0 and res.stdout.startswith(f"wrote {out}: csv report of 2 run(s)"), res.stderr
    res = labctl("stats", "--db", str(db), "--format", "json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["capability"][0]["n"] == 2
    assert sorted(p.name for p in folder.iterdir()) == ["results.db"]


def test_a_read_only_database_of_an_older_schema_says_to_read_a_copy(tmp_path, locked):
    """A file written by an older labctl would be migrated on opening; read-only it cannot be:
    one line saying so, with the way out (a copy migrates)."""
    from sqlalchemy import create_engine

    from labctl.store import migrate

    folder = tmp_path / "old"
    folder.mkdir()
    db = folder / "results.db"
    engine = create_engine(f"sqlite:///{db}")
    migrate.upgrade(engine, str(db), to=migrate.KNOWN[0])
    engine.dispose()
    locked(folder, 0o555)
    res = labctl("runs", "--db", str(db))
    assert res.returncode == 2, res.stdout + res.stderr
    error, hint = one_line_error(res)
    assert f"has schema revision {migrate.KNOWN[0]}; this labctl needs {migrate.HEAD}" in error
    assert "may not migrate a file it cannot write" in error and "copy it" in hint
    assert sorted(p.name for p in folder.iterdir()) == ["results.db"]
