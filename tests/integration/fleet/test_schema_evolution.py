"""Schema changes of the lab's shared PostgreSQL are explicit and expand-then-contract.

"An older station" is labctl as it was at the previous migration head: the same code with the
schema knowledge of that release (``migrate.HEAD``/``KNOWN``), run as its own process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fleet_support import ROOT, SHORT, SLOW, station_fixture, wait_for
from sqlalchemy import text

from labctl.store.migrate import HEAD, KNOWN
from labctl.store.testing import temporary_database, upgrade_database
from tests.conftest import run_labctl

PREVIOUS_HEAD = KNOWN[-2]
_OLDER = ("import sys; import labctl.store.migrate as m; m.HEAD = {head!r}; m.KNOWN = {known!r}; "
          "from labctl.cli import main; main(sys.argv[1:])")


def older_labctl(*args: str, timeout: float = 120) -> subprocess.Popen:
    code = _OLDER.format(head=PREVIOUS_HEAD, known=KNOWN[:-1])
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=ROOT)


def _revision(url: str) -> tuple[str, str | None]:
    from sqlalchemy import create_engine

    from labctl.store import migrate
    from labctl.store.location import resolve_db

    engine = create_engine(resolve_db(url))
    try:
        with engine.connect() as conn:
            st = migrate.schema_status(conn)
            return st.revision, st.compatible_with
    finally:
        engine.dispose()


def _running_runs(url: str) -> int:
    from sqlalchemy import create_engine

    from labctl.store.location import resolve_db

    engine = create_engine(resolve_db(url))
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT count(*) FROM runs WHERE outcome = 'running'")).scalar_one()
    finally:
        engine.dispose()


@pytest.fixture
def old_lab_db(tmp_path):
    """The lab's database as the previous release left it (the revision before HEAD)."""
    with temporary_database("postgresql", tmp_path, upgrade=False) as url:
        upgrade_database(url, PREVIOUS_HEAD)
        yield url


@pytest.mark.postgres
@pytest.mark.slow
def test_an_older_station_keeps_running_through_and_after_the_upgrade(tmp_path, old_lab_db):
    fixture = station_fixture(tmp_path, "old-st", time_scale=30)
    env_db = ("--db", old_lab_db, "--fixture", str(fixture))

    # a newer labctl never migrates the shared schema as a side effect: it says what to run
    res = run_labctl("run", str(SHORT), *env_db)
    assert res.returncode == 2
    assert f"has schema revision {PREVIOUS_HEAD}; this labctl needs {HEAD}" in res.stderr
    assert "run `labctl db upgrade` with the same --db" in res.stderr
    assert _revision(old_lab_db)[0] == PREVIOUS_HEAD  # not migrated as a side effect

    # the older station is mid-run when the lab is upgraded; it finishes, and runs again after
    run = older_labctl("run", str(SLOW), *env_db)
    wait_for(lambda: _running_runs(old_lab_db), 60, "the older station's run to start")
    up = run_labctl("db", "upgrade", "--db", old_lab_db)
    assert up.returncode == 0 and f"schema upgraded from {PREVIOUS_HEAD} to {HEAD}" in up.stdout, up.stdout + up.stderr
    out, _ = run.communicate(timeout=120)
    assert run.returncode == 0, out
    assert _revision(old_lab_db) == (HEAD, "0001")  # every migration since 0001 only expanded
    assert not _running_runs(old_lab_db)
    again = older_labctl("run", str(SHORT), *env_db)
    out, _ = again.communicate(timeout=120)
    assert again.returncode == 0, out

    # and the newer labctl now uses it
    res = run_labctl("run", str(SHORT), *env_db)
    assert res.returncode == 0, res.stdout + res.stderr
    runs = run_labctl("runs", "--db", old_lab_db, "--format", "json")
    assert [r["outcome"] for r in json.loads(runs.stdout)] == ["passed"] * 3


@pytest.mark.postgres
def test_an_older_station_that_cannot_use_the_schema_says_so_and_what_to_do(tmp_path, lab_db):
    """After a *contracting* migration (compatible_with past the station's head)."""
    from sqlalchemy import create_engine

    from labctl.store.location import resolve_db

    engine = create_engine(resolve_db(lab_db))
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE labctl_schema SET value = '{HEAD}' WHERE name = 'compatible_with'"))
    engine.dispose()
    fixture = station_fixture(tmp_path, "old-st")
    proc = older_labctl("run", str(SHORT), "--db", lab_db, "--fixture", str(fixture))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2, out
    assert f"has schema revision {HEAD} and works with labctl code of revision {HEAD} or later; this labctl" in out
    assert f"knows revisions up to {PREVIOUS_HEAD} only" in out and "upgrade labctl on this station" in out
    assert "Traceback" not in out


@pytest.mark.postgres
def test_an_empty_lab_database_needs_one_explicit_upgrade(tmp_path):
    with temporary_database("postgresql", tmp_path, upgrade=False) as url:
        res = run_labctl("stations", "--db", url)
        assert res.returncode == 2
        assert "has no labctl schema yet" in res.stderr and "labctl db upgrade" in res.stderr
        status = run_labctl("db", "status", "--db", url)
        assert "(none: empty database)" in status.stdout and "labctl db upgrade" in status.stdout
        assert run_labctl("db", "upgrade", "--db", url).returncode == 0
        res = run_labctl("db", "upgrade", "--db", url)
        assert f"already at revision {HEAD}; nothing to do" in res.stdout
        assert run_labctl("stations", "--db", url).returncode == 0
