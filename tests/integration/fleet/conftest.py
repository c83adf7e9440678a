"""The fleet tests: real agents (processes) on isolated simulated stations, one real PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for helper_dir in (HERE, HERE.parent / "store", HERE.parent / "engine"):
    if str(helper_dir) not in sys.path:
        sys.path.insert(0, str(helper_dir))


@pytest.fixture
def lab_db(tmp_path):
    """A fresh PostgreSQL schema at the current revision (`labctl db upgrade`)."""
    from labctl.store.testing import temporary_database

    with temporary_database("postgresql", tmp_path) as url:
        yield url
