"""Fixtures of the engine's integration tests (helpers live in engine_support.py)."""

from __future__ import annotations

import pytest
from engine_support import served_lab_fixture


@pytest.fixture
def served_lab(tmp_path):
    yield from served_lab_fixture(tmp_path)
