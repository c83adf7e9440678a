#!/usr/bin/env bash
# Install labctl with its test dependencies into .venv (fresh machine: nothing else needed)
# and run the whole test suite. Exits non-zero if any test fails or if no test ran.
set -euo pipefail
cd "$(dirname "$0")/.."
# the TUI's terminal test runs `labctl tui` inside tmux
command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux; } \
  || { echo "tmux is needed by tests/e2e/test_tui_tmux.py: install it (apt-get install tmux)" >&2; exit 1; }
# bench/step_instructions.py counts a step's instructions under valgrind (its smoke test runs it)
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; } >/dev/null \
  || { echo "valgrind is needed by tests/bench/test_bench_scripts.py: install it (apt-get install valgrind)" >&2; exit 1; }
# tests/integration/store/test_clock_skew.py runs labctl on a clock set ahead (libfaketime)
command -v faketime >/dev/null || { apt-get update -qq && apt-get install -y -qq faketime; } >/dev/null \
  || { echo "faketime is needed by tests/integration/store/test_clock_skew.py: install it (apt-get install faketime)" >&2; exit 1; }
PY=${PYTHON:-python3}
# The HTML report's browser tests drive the system Chromium (never a downloaded browser build).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
      || echo "warning: could not install chromium; the browser tests will fail" >&2
  else
    echo "warning: chromium is missing (apt-get install -y chromium); the browser tests will fail" >&2
  fi
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null
.venv/bin/python -m pip install --quiet -e '.[dev,postgres]'
# An editable install compiles labctl's modules on first import, unless PYTHONDONTWRITEBYTECODE
# is set (it is on some CI images): then every `labctl` start compiles them again (~0.2 s).
# Compile them once, as pip does for a regular install.
.venv/bin/python -m compileall -q labctl >/dev/null || true
set +e
# Two worker processes, a test file each at a time (most tests wait on subprocesses and the
# simulated lab: one process leaves a core idle). LABCTL_TEST_WORKERS=0 runs them in this one.
.venv/bin/python -m pytest -n "${LABCTL_TEST_WORKERS:-2}" --dist loadfile "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected: failing" >&2
  exit 1
fi
exit "$rc"
