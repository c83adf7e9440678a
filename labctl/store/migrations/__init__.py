"""Alembic migrations of the results schema (applied by ``labctl.store.migrate.upgrade``)."""
