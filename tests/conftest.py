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


@pytest.fixture
def labctl():
    return run_labctl
