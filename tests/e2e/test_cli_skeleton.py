"""The command line's skeleton: help, lazy imports, placeholders and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys


def test_help_lists_every_command_group(labctl):
    res = labctl("--help")
    assert res.returncode == 0, res.stderr
    for name in ("validate", "run", "demo", "resume", "runs", "report", "sim", "instruments", "tui"):
        assert f"  {name}" in res.stdout


def test_help_imports_no_heavy_library():
    code = (
        "import sys, json\n"
        "from labctl.cli import cli\n"
        "try:\n"
        "    cli.main(args=['--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pandas','textual','pint','pyvisa','serial','sqlalchemy','pydantic','yaml'))))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    heavy = json.loads(res.stdout.strip().splitlines()[-1])
    assert heavy == []


def test_no_command_is_a_placeholder_any_more(labctl):
    commands = labctl("--help").stdout.split("Commands:", 1)[1]
    listed = {line.split()[0]: line for line in commands.splitlines() if line.startswith("  ")}
    assert {"tui", "report", "stats"} <= set(listed), listed
    assert not [line for line in listed.values() if "not implemented" in line]


def test_unknown_command_is_bad_invocation(labctl):
    res = labctl("frobnicate")
    assert res.returncode == 4
    assert "No such command" in res.stderr
