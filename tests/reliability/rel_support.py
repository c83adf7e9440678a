"""Shared by the reliability tests: where their data is, whether to run long matrices in
full, and the helper modules of the engine and store integration tests on the path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for helper_dir in (TESTS / "integration" / "engine", TESTS / "integration" / "store"):
    if str(helper_dir) not in sys.path:
        sys.path.insert(0, str(helper_dir))

FULL = os.environ.get("LABCTL_FULL") == "1"
RELIABILITY_DATA = TESTS / "data" / "reliability"
