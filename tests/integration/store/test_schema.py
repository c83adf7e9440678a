"""The migrated schema equals the SQLAlchemy model, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from labctl.store.schema import metadata


def test_migrations_build_exactly_the_model(store):
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
    assert diff == []
