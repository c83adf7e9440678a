"""Alembic environment: migrations run on the connection ``labctl.store.migrate`` hands over."""

from __future__ import annotations

from alembic import context

from labctl.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only `alembic` on the command line gets here
    raise RuntimeError("run migrations through labctl.store.migrate.upgrade()")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # ALTER TABLE on SQLite
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
