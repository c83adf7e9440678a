"""``labctl db``: the schema of the results database (explicit upgrades of a shared one)."""

from __future__ import annotations

import json

import click

from labctl.cli._common import db_option_callback

DB_HELP = "results database: a SQLite file or postgresql://… URL (default: $LABCTL_DB)"


@click.group()
def db() -> None:
    """The results database's schema.

    \b
    labctl db status --db URL     revision, what this labctl needs, who can still use it
    labctl db upgrade --db URL    migrate a shared database (once, for the whole lab)

    A PostgreSQL database never migrates when a station starts: run `labctl db upgrade`
    after installing a newer labctl somewhere. Migrations only add (expand) unless they say
    otherwise, so stations one version behind keep working against the upgraded schema.
    """


def _status(db_value: str | None) -> dict:
    from sqlalchemy import create_engine

    from labctl import __version__
    from labctl.store import migrate
    from labctl.store.location import display_url, resolve_db
    from labctl.store.sqlite_access import missing_sqlite_file, no_such_database

    url = resolve_db(db_value)
    missing = missing_sqlite_file(url)
    if missing:  # status makes no file
        raise no_such_database(missing)
    engine = create_engine(url, connect_args={"connect_timeout": 10} if url.startswith("postgresql") else {})
    try:
        with engine.connect() as conn:
            st = migrate.schema_status(conn)
    except Exception as exc:  # noqa: BLE001 - one clean line, never the password
        from sqlalchemy.engine import make_url

        from labctl.errors import StoreUnreachable
        from labctl.store.store import _reason

        reason, password = _reason(exc), make_url(url).password
        if password:
            reason = reason.replace(str(password), "***")
        raise StoreUnreachable(f"cannot read the schema of {display_url(url)}: {reason}",
                               hint="check --db and that the server is up") from None
    finally:
        engine.dispose()
    return {"database": display_url(url), "revision": st.revision, "compatible_with": st.compatible_with,
            "this_labctl": __version__, "this_labctl_head": migrate.HEAD, "usable_here": st.usable,
            "needs_upgrade": st.revision is None or (st.revision in migrate.KNOWN and st.revision != migrate.HEAD)}


@db.command()
@click.option("--db", "db_value", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def status(db_value: str | None, as_json: bool) -> None:
    """Show the database's schema revision and whether this labctl can use it."""
    s = _status(db_value)
    if as_json:
        click.echo(json.dumps(s, indent=2))
        return
    click.echo(f"database:          {s['database']}")
    click.echo(f"schema revision:   {s['revision'] or '(none: empty database)'}")
    if s["revision"]:
        click.echo(f"usable by code of: revision {s['compatible_with'] or s['revision']} and later")
    click.echo(f"this labctl:       {s['this_labctl']} (schema {s['this_labctl_head']})")
    if s["needs_upgrade"]:
        click.echo("-> run `labctl db upgrade` with the same --db (once, for the whole lab)")
    elif not s["usable_here"]:
        click.echo("-> this labctl is too old for that database: upgrade labctl here")
    else:
        click.echo("-> usable here")


@db.command()
@click.option("--db", "db_value", callback=db_option_callback, envvar="LABCTL_DB", metavar="PATH|URL", help=DB_HELP)
@click.option("--to", "to", default="head", show_default=True, help="target revision (e.g. to stage a lab's upgrade)")
def upgrade(db_value: str | None, to: str) -> None:
    """Migrate the database's schema to this labctl's (under a lock; safe to repeat, safe
    while stations run)."""
    from labctl.store.migrate import upgrade_location

    where, before, after = upgrade_location(db_value, to)
    if before == after:
        click.echo(f"{where}: schema already at revision {after}; nothing to do")
    else:
        click.echo(f"{where}: schema upgraded from {before or '(empty)'} to {after}")
