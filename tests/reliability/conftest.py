"""The reliability suite: every promise of docs/reliability.md, tested the way it can fail in
a lab (real processes, real signals, the simulated lab over sockets and ptys, a real SQLite
file and a real PostgreSQL, a TCP proxy in front of the database that can stall or drop).

Long matrices run as a seeded sample by default; ``LABCTL_FULL=1`` runs them in full."""

from __future__ import annotations

import pytest
import rel_support  # noqa: F401  (puts the integration helpers on the path)
from engine_support import served_lab_fixture


@pytest.fixture
def served_lab(tmp_path):
    yield from served_lab_fixture(tmp_path)
