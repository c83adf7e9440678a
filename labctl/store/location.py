"""Where the results database lives, and how a user-given location becomes a SQLAlchemy URL.

Resolution order: an explicit ``--db`` value, then ``$LABCTL_DB``, then
``$LABCTL_HOME/results.db``, then ``$XDG_DATA_HOME/labctl/results.db`` (by default
``~/.local/share/labctl/results.db``). A value is either a path to a SQLite file or a URL
(``sqlite:///…``, ``postgresql://…``; plain ``postgresql://`` uses the psycopg 3 driver).
"""

from __future__ import annotations

import os
from pathlib import Path

from labctl.errors import UsageError

DB_ENV = "LABCTL_DB"
HOME_ENV = "LABCTL_HOME"


def labctl_home() -> Path:
    """The folder for labctl's own data (results database, spool journal)."""
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "labctl"


def default_db_path() -> Path:
    return labctl_home() / "results.db"


def default_spool_path() -> Path:
    """The local SQLite journal that holds results while the central database is unreachable."""
    return labctl_home() / "spool.db"


def resolve_db(url_or_path: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL for ``--db`` (or ``$LABCTL_DB``, or the default file)."""
    value = os.fspath(url_or_path) if url_or_path is not None else os.environ.get(DB_ENV) or None
    if not value:
        return sqlite_url(default_db_path())
    if "://" not in value:
        return sqlite_url(Path(value).expanduser())
    scheme = value.split("://", 1)[0]
    if scheme in ("postgresql", "postgres"):
        return "postgresql+psycopg://" + value.split("://", 1)[1]
    if scheme.startswith("postgresql+") or scheme.startswith("sqlite"):
        return value
    raise UsageError(
        f"unsupported database URL scheme {scheme!r}",
        hint="use a SQLite file path, sqlite:///path/results.db or postgresql://user@host/dbname",
    )


def check_db_folder(value: str, *, named: str = "--db") -> None:
    """A results file named explicitly (``--db``, ``$LABCTL_DB``) must be in a folder that exists:
    a typo must not create a tree of folders and an empty database. (Only the default location's
    folders are created.)"""
    url = resolve_db(value)
    if not url.startswith("sqlite"):
        return
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    if not database or database == ":memory:":
        return
    folder = Path(database).parent
    blocking = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise UsageError(
            f"{named} {value}: {blocking} is a file, not a folder",
            hint=f"give a file in a folder (e.g. {blocking.parent / 'results.db'}); "
                 f"without --db and $LABCTL_DB results go to {default_db_path()}",
        )
    if not folder.is_dir():
        raise UsageError(
            f"{named} {value}: the folder {folder} does not exist",
            hint=f"create it first (mkdir -p {folder}) or give a file in an existing folder; "
                 f"without --db and $LABCTL_DB results go to {default_db_path()}",
        )


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


def display_url(url: str) -> str:
    """The URL without its password, for messages and the spool journal."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
