#!/usr/bin/env bash
# Install labctl (a regular, non-editable install) into .venv-demo and run its main job:
# the flagship plan on the simulated lab for three DUTs (labctl demo).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv-demo/bin/python ] || "$PY" -m venv .venv-demo
.venv-demo/bin/python -m pip install --quiet --upgrade pip >/dev/null
.venv-demo/bin/python -m pip install --quiet .
exec .venv-demo/bin/labctl demo "$@"
