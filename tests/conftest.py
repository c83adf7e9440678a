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


@pytest.fixture(autouse=True)
def _bench_locks_of_the_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test locks its benches in a folder of its own (``$LABCTL_LOCK_DIR``, inherited by
    every process it starts). The fixtures' ports are random: a process another test started
    that still held a lock on the same address refused a run of a new fixture given that port
    (once in CI)."""
    monkeypatch.setenv("LABCTL_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))


@pytest.fixture
def labctl():
    return run_labctl
