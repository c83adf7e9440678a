#!/usr/bin/env bash
# Every benchmark, one table (figure, target, measured, ratio, pass/miss). Never fails on time.
#   bash scripts/bench.sh            # full sizes (about a minute or two)
#   bash scripts/bench.sh --quick    # the smoke sizes the test suite runs
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec "$PY" -m labctl.bench "$@"
