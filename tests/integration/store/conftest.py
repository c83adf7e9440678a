"""Every store test runs on SQLite and on PostgreSQL (127.0.0.1:5432, its own schema)."""

from __future__ import annotations

import pytest

from labctl.store import open_store
from labctl.store.testing import BACKENDS, temporary_database


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path):
    """A fresh database (SQLite file or PostgreSQL schema), dropped after the test."""
    with temporary_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def store(db_url):
    s = open_store(db_url)
    yield s
    s.close()
