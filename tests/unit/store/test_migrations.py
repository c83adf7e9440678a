"""The Alembic migrations are the schema: HEAD is known, opening twice is a no-op, a database
from a newer labctl is used when it says this labctl's code still fits it, refused otherwise."""

from __future__ import annotations

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from labctl.errors import StoreError
from labctl.store import migrate, open_store


def test_head_constant_matches_the_migration_scripts():
    script = ScriptDirectory.from_config(migrate.alembic_config())
    assert script.get_current_head() == migrate.HEAD
    assert {r.revision for r in script.walk_revisions()} == set(migrate.KNOWN)


def test_open_creates_wal_database_and_reopening_changes_nothing(tmp_path):
    path = tmp_path / "sub" / "results.db"
    with open_store(path) as store:
        with store.read_engine.connect() as conn:
            assert migrate.current_revision(conn) == migrate.HEAD
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    with open_store(path) as store:
        assert store.integrity_check() == "ok"


def test_every_migration_says_whether_it_expands_or_contracts():
    for rev in migrate.KNOWN[1:]:
        assert migrate.migration_change(rev) in ("expand", "contract"), rev


def test_a_newer_schema_that_only_expanded_is_used(tmp_path):
    path = tmp_path / "results.db"
    with open_store(path) as store, store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))  # compatible_with stays ours
    with open_store(path) as store:
        assert (store.schema.revision, store.schema.compatible_with) == ("9999", "0001")
        with store.read_engine.connect() as conn:
            assert migrate.current_revision(conn) == "9999"  # never downgraded


def test_a_newer_schema_that_contracted_is_refused_with_a_hint(tmp_path):
    path = tmp_path / "results.db"
    with open_store(path) as store, store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        conn.execute(text("UPDATE labctl_schema SET value = '9998' WHERE name = 'compatible_with'"))
    with pytest.raises(StoreError, match="has schema revision 9999 and works with labctl code of revision 9998 "
                                         "or later; this labctl .* knows revisions up to") as err:
        open_store(path)
    assert "upgrade labctl" in err.value.hint


def test_an_in_memory_database_is_refused():
    with pytest.raises(StoreError, match="in-memory"):
        open_store("sqlite://")


def test_a_sqlite_file_of_another_program_is_left_alone(tmp_path):
    import sqlite3

    other = tmp_path / "inventory.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE parts (id INTEGER)")
    with pytest.raises(StoreError, match="of something else \\(tables parts\\)"):
        open_store(other)
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["parts"]


def test_unusable_locations_are_one_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create the folder"):
        open_store(blocker / "results.db")
    with pytest.raises(StoreError, match="cannot open the results database"):
        open_store(blocker)  # not a database at all


def test_a_broken_spool_journal_is_one_clear_error(tmp_path):
    from labctl.store.spool import Spool

    bad = tmp_path / "spool.db"
    bad.write_text("garbage " * 100)
    with pytest.raises(StoreError, match="cannot open the spool journal"):
        Spool(bad)


def test_a_database_of_revision_0001_is_migrated_and_its_runs_stay_readable(tmp_path):
    from alembic import command
    from sqlalchemy import create_engine

    from labctl.store import query

    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        command.upgrade(migrate.alembic_config(conn), "0001")
        conn.execute(text(
            "INSERT INTO runs (id, plan_name, plan_hash, station, started_at, outcome, host, pid, heartbeat_at,"
            " heartbeat_interval) VALUES ('old1', 'smoke', 'h', 'bench', 100.0, 'passed', 'h', 1, 101.0, 5.0)"))
        conn.execute(text(
            "INSERT INTO steps (run_id, session, seq, step_key, step_id, step_group, check_name, attempt,"
            " started_at, ended_at, duration, outcome) VALUES ('old1', 0, 1, 'steps/a#1', 'a', 'steps', 'wait', 1,"
            " 100.0, 101.0, 1.0, 'PASS')"))
    engine.dispose()
    with open_store(path, mark_interrupted=False) as store:
        with store.read_engine.connect() as conn:
            assert migrate.current_revision(conn) == migrate.HEAD
        detail = query.run_detail(store, "old1")
        changes, _ = query.follow(store, "old1")
    assert [(s["step_id"], s["duration"], s["duration_sim"]) for s in detail["steps"]] == [("a", 1.0, None)]
    assert detail["run"]["rerun_of"] is None and changes["progress"] is None  # revision 0003: empty


def test_compatibility_walks_back_only_over_expanding_migrations(tmp_path, monkeypatch):
    """A contracting migration stops the walk: code older than it cannot use the schema."""
    changes = {"0002": "contract", "0004": "expand"}
    monkeypatch.setattr(migrate, "migration_change", lambda rev: changes.get(rev, "expand"))
    with open_store(tmp_path / "a.db") as store:
        assert store.schema.compatible_with == "0002"
    changes["0004"] = "contract"
    with open_store(tmp_path / "b.db") as store:
        assert store.schema.compatible_with == "0004"
