#!/usr/bin/env bash
# Every benchmark, one table (figure, target, measured, ratio, pass/miss). Never fails on time.
#   bash scripts/bench.sh              # full sizes (two minutes or so)
#   bash scripts/bench.sh --quick      # the smoke sizes the test suite runs
#   bash scripts/bench.sh --details    # then the detailed breakdowns in bench/*.py
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
details=0
args=()
for a in "$@"; do
  if [ "$a" = "--details" ]; then details=1; else args+=("$a"); fi
done
# the start-up rows time an installed labctl: its modules compiled, as pip leaves a regular
# install (an editable one under PYTHONDONTWRITEBYTECODE would compile them at every start)
"$PY" -m compileall -q labctl >/dev/null || true
"$PY" -m labctl.bench "${args[@]+"${args[@]}"}"
if [ "$details" = 1 ]; then
  for b in bench/run_threads.py bench/instruments_overhead.py bench/sim_roundtrip.py bench/store_throughput.py \
           bench/units_import.py bench/hostile_inputs.py bench/reply_watch.py; do
    echo; echo "== $b"; "$PY" "$b"
  done
fi
