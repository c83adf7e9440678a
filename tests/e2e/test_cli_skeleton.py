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


def test_reading_runs_imports_no_orm_pandas_or_instruments(tmp_path):
    """``labctl runs`` and ``runs show`` read with SQLAlchemy Core: its ORM (~0.1 s to import),
    pandas, pyvisa and Textual stay out of them."""
    db = tmp_path / "results.db"
    code = (
        "import sys, json\n"
        "from labctl.cli import cli\n"
        "for args in (['runs', '--db', sys.argv[1]], ['runs', 'show', 'nope', '--db', sys.argv[1]]):\n"
        "    try:\n"
        "        cli.main(args=args, standalone_mode=False)\n"
        "    except (SystemExit, Exception):\n"
        "        pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m in ('sqlalchemy', 'sqlalchemy.orm') or m.split('.')[0] in "
        "('pandas', 'pyvisa', 'textual'))))\n"
    )
    subprocess.run([sys.executable, "-m", "labctl", "db", "upgrade", "--db", str(db)], capture_output=True, text=True)
    res = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, check=True)
    assert json.loads(res.stdout.strip().splitlines()[-1]) == ["sqlalchemy"], res.stdout + res.stderr


def test_no_command_is_a_placeholder_any_more(labctl):
    commands = labctl("--help").stdout.split("Commands:", 1)[1]
    listed = {line.split()[0]: line for line in commands.splitlines() if line.startswith("  ")}
    assert {"tui", "report", "stats"} <= set(listed), listed
    assert not [line for line in listed.values() if "not implemented" in line]


def test_unknown_command_is_bad_invocation(labctl):
    res = labctl("frobnicate")
    assert res.returncode == 4
    assert "No such command" in res.stderr
