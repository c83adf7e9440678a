"""Shared test fixtures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_labctl(*args: str, cwd: Path | None = None, timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    """Run the installed ``labctl`` command line as a user would, in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "labctl", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(autouse=True, scope="session")
def _plan_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory):
    """Large plans' YAML data (labctl.plan.cache) is kept in this session's own folder, for
    labctl in this process and in every one it starts: never in the user's cache."""
    from labctl.bench.common import private_plan_cache

    with private_plan_cache(tmp_path_factory.mktemp("plan-cache")):
        yield


@pytest.fixture
def labctl():
    return run_labctl
