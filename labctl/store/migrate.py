"""The schema of a results database: Alembic migrations, and whether this labctl can use it.

**SQLite** files belong to one station: they are migrated when a store opens (cheap when the
schema is current: one SELECT of the version table).

**PostgreSQL** is shared by a whole lab, so its schema changes only when someone runs
``labctl db upgrade`` (:func:`upgrade`, under an advisory lock), never as a side effect of a
station starting. Migrations are written expand-then-contract: each script says whether it
only *adds* (``change = "expand"``: tables, nullable columns, indexes; code of the previous
revision keeps working) or *takes away* (``change = "contract"``). After an upgrade the
database records, in ``labctl_schema``, the oldest revision whose code can still use it
(``compatible_with``). A labctl that meets a revision newer than it knows checks that record
instead of refusing: a station one version behind keeps running after the upgrade.

A newer labctl meeting an *older* shared schema says so and what to run (:func:`check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from labctl.errors import StoreError

HEAD = "0005"  # the newest revision in migrations/versions (a unit test checks it)
KNOWN = ("0001", "0002", "0003", "0004", "0005")  # in order, oldest first
VERSION_TABLE = "alembic_version"
COMPAT_TABLE = "labctl_schema"  # (name, value): compatible_with = oldest revision whose code can use this one
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK_KEY = 0x6C616263746C  # "labctl"


@dataclass(frozen=True)
class SchemaStatus:
    revision: str | None  # None: no labctl schema yet
    compatible_with: str | None  # as recorded by the last upgrade (None before revision 0004)

    @property
    def current(self) -> bool:
        return self.revision == HEAD

    @property
    def usable(self) -> bool:
        """Whether this labctl can read and write the database as it is."""
        if self.revision == HEAD:
            return True
        if self.revision is None or self.revision in KNOWN:
            return False  # older: needs an upgrade
        return self.compatible_with in KNOWN  # newer: fine when it says our code still fits


def current_revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table(VERSION_TABLE):
        return None
    return conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def schema_status(conn: Connection) -> SchemaStatus:
    rev = current_revision(conn)
    compat = None
    if rev is not None and inspect(conn).has_table(COMPAT_TABLE):
        compat = conn.execute(text(f"SELECT value FROM {COMPAT_TABLE} WHERE name = 'compatible_with'")).scalar()
    return SchemaStatus(rev, compat)


def alembic_config(conn: Connection | None = None):  # -> alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


def check(engine: Engine, where: str, read_engine: Engine | None = None, *, may_migrate: bool = True) -> SchemaStatus:
    """Make sure this labctl can use the database; raise a :class:`StoreError` saying what to
    run when it cannot. SQLite files are migrated here (unless ``may_migrate`` is False: a file
    opened read-only); PostgreSQL never is (see module doc).

    The check reads through ``read_engine`` so that opening a store never waits for a writer.
    """
    with (read_engine or engine).connect() as conn:
        status = schema_status(conn)
        foreign = status.revision is None and conn.dialect.name == "sqlite" and inspect(conn).get_table_names()
        conn.rollback()
    if foreign:
        raise StoreError(
            f"{where} is a SQLite database of something else (tables {', '.join(foreign[:5])})",
            hint="point --db at a labctl results file or at a new path",
        )
    if status.usable:
        return status
    if status.revision is not None and status.revision not in KNOWN:
        raise _too_new(status, where)
    if engine.dialect.name == "sqlite" and not may_migrate:
        raise StoreError(
            f"the results database {where} has schema revision {status.revision or 'none'}; this labctl needs {HEAD} "
            "and may not migrate a file it cannot write",
            hint="copy it to a folder you may write to and give --db the copy (it is migrated there)")
    if engine.dialect.name == "sqlite":
        upgrade(engine, where)
        return SchemaStatus(HEAD, _recorded_compat(engine))
    if status.revision is None:
        raise StoreError(f"the PostgreSQL database {where} has no labctl schema yet",
                         hint="create it once, as a user that may create tables: `labctl db upgrade` with the same --db")
    raise StoreError(
        f"the results database {where} has schema revision {status.revision}; this labctl needs {HEAD}",
        hint="run `labctl db upgrade` with the same --db, once for the lab (stations on the older labctl keep working)",
    )


def _too_new(status: SchemaStatus, where: str) -> StoreError:
    from labctl import __version__

    needs = f" and works with labctl code of revision {status.compatible_with} or later" if status.compatible_with else ""
    return StoreError(
        f"the results database {where} has schema revision {status.revision}{needs}; this labctl "
        f"({__version__}) knows revisions up to {HEAD} only",
        hint="upgrade labctl on this station (pip install -U labctl), or point --db at another database",
    )


def upgrade(engine: Engine, where: str, to: str = "head") -> tuple[str | None, str | None]:
    """Migrate the database to ``to`` (default :data:`HEAD`) under a lock; returns the
    revisions (before, after). A no-op when it is there already. Refuses a database newer
    than this labctl (it never downgrades)."""
    if to != "head" and to not in KNOWN:
        raise StoreError(f"no schema revision {to!r}", hint="revisions: " + ", ".join(KNOWN))
    target = HEAD if to == "head" else to
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        before = current_revision(conn)  # another process may have migrated meanwhile
        if before is not None and before not in KNOWN:
            raise _too_new(schema_status(conn), where)
        if before is not None and KNOWN.index(before) >= KNOWN.index(target):
            return before, before
        from alembic import command

        command.upgrade(alembic_config(conn), target)
        _record_compat(conn, target)
        return before, target


def upgrade_location(url_or_path: str | None, to: str = "head") -> tuple[str, str | None, str | None]:
    """:func:`upgrade` of the database at ``--db`` (a path or URL); returns (where, before, after)."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import SQLAlchemyError

    from labctl.store.location import display_url, resolve_db

    url = resolve_db(url_or_path)
    where = display_url(url)
    connect_args = {"connect_timeout": 10, "application_name": "labctl db upgrade"} if url.startswith("postgresql") else {}
    engine = create_engine(url, connect_args=connect_args)
    try:
        before, after = upgrade(engine, where, to)
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None) or exc
        reason = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        raise StoreError(f"cannot upgrade the results database {where}: {reason}",
                         hint="check --db, that the server is up and that this user may create tables") from None
    finally:
        engine.dispose()
    return where, before, after


def _record_compat(conn: Connection, revision: str) -> None:
    """Store the oldest revision whose code can use ``revision``'s schema: walk back while the
    migrations only expanded the schema."""
    if not inspect(conn).has_table(COMPAT_TABLE):
        return
    oldest = revision
    for rev in reversed(KNOWN[1:KNOWN.index(revision) + 1]):
        if migration_change(rev) != "expand":
            break
        oldest = KNOWN[KNOWN.index(rev) - 1]
    conn.execute(text(f"DELETE FROM {COMPAT_TABLE} WHERE name = 'compatible_with'"))
    conn.execute(text(f"INSERT INTO {COMPAT_TABLE} (name, value) VALUES ('compatible_with', :v)"), {"v": oldest})


def migration_change(revision: str) -> str:
    """``"expand"`` or ``"contract"`` as the migration script declares (``change = …``);
    a script that does not say is taken as contracting."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config()).get_revision(revision)
    return getattr(script.module, "change", "contract")


def _recorded_compat(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return schema_status(conn).compatible_with


def new_revision(message: str, rev_id: str) -> None:
    """For maintainers: write a migration for the changes made to ``schema.py`` since HEAD.

        python -c 'from labctl.store.migrate import new_revision; new_revision("add x", "0005")'

    Review the generated file, declare its ``change`` ("expand" or "contract"), then add its
    id to :data:`KNOWN` and make it :data:`HEAD` (unit tests check both against the scripts,
    another that they build ``schema.py``).
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
