"""The reliability suite: every promise of docs/reliability.md, tested the way it can fail in
a lab (real processes, real signals, the simulated lab over sockets and ptys, a real SQLite
file and a real PostgreSQL, a TCP proxy in front of the database that can stall or drop).

Long matrices run as a seeded sample by default; ``LABCTL_FULL=1`` runs them in full."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for helper_dir in (TESTS / "integration" / "engine", TESTS / "integration" / "store"):
    if str(helper_dir) not in sys.path:
        sys.path.insert(0, str(helper_dir))

from engine_support import served_lab_fixture  # noqa: E402

FULL = os.environ.get("LABCTL_FULL") == "1"
RELIABILITY_DATA = TESTS / "data" / "reliability"


@pytest.fixture
def served_lab(tmp_path):
    yield from served_lab_fixture(tmp_path)
