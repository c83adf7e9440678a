"""Bring a database to the current schema: Alembic migrations, applied when a store opens.

Opening is cheap when the schema is current (one SELECT of the version table); Alembic is
imported only when something must be migrated. Concurrent openers are serialised: on SQLite
by the write lock (``BEGIN IMMEDIATE``), on PostgreSQL by an advisory transaction lock.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from labctl.errors import StoreError

HEAD = "0003"  # the newest revision in migrations/versions (a unit test checks it)
KNOWN = ("0001", "0002", "0003")
VERSION_TABLE = "alembic_version"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK_KEY = 0x6C616263746C  # "labctl"


def current_revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table(VERSION_TABLE):
        return None
    return conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def alembic_config(conn: Connection | None = None):  # -> alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


def upgrade(engine: Engine, where: str, read_engine: Engine | None = None) -> None:
    """Migrate ``engine``'s database to :data:`HEAD` (no-op when it is current).

    The check reads through ``read_engine`` so that opening a store never waits for a writer.
    """
    with (read_engine or engine).connect() as conn:
        rev = current_revision(conn)
        foreign = rev is None and conn.dialect.name == "sqlite" and inspect(conn).get_table_names()
        conn.rollback()
    if foreign:
        raise StoreError(
            f"{where} is a SQLite database of something else (tables {', '.join(foreign[:5])})",
            hint="point --db at a labctl results file or at a new path",
        )
    if rev == HEAD:
        return
    _check_known(rev, where)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        rev = current_revision(conn)  # another process may have migrated meanwhile
        if rev == HEAD:
            return
        _check_known(rev, where)
        from alembic import command

        command.upgrade(alembic_config(conn), "head")


def _check_known(rev: str | None, where: str) -> None:
    if rev is not None and rev not in KNOWN:
        raise StoreError(
            f"the results database {where} has schema revision {rev!r}, newer than this labctl knows",
            hint="upgrade labctl (pip install -U labctl) or point --db at another database",
        )


def new_revision(message: str, rev_id: str) -> None:
    """For maintainers: write a migration for the changes made to ``schema.py`` since HEAD.

        python -c 'from labctl.store.migrate import new_revision; new_revision("add x", "0002")'

    Review the generated file, then add its id to :data:`KNOWN` and make it :data:`HEAD`
    (a unit test checks both against the scripts, another that they build ``schema.py``).
    """
    import tempfile

    from alembic import command
    from sqlalchemy import create_engine

    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite:///{tmp}/head.db")
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "head")
            command.revision(alembic_config(conn), message=message, autogenerate=True, rev_id=rev_id)
        engine.dispose()
