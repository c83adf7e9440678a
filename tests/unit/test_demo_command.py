"""After `bash scripts/demo.sh` labctl lives in .venv-demo, not on the PATH: the demo's last
lines name a command that works from the user's shell."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from labctl.demo import labctl_command

VENV_BIN = Path(sys.executable).parent


def test_labctl_off_the_path_is_named_by_its_path_and_how_to_activate(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(VENV_BIN.parent.parent)
    cmd, activate = labctl_command()
    assert cmd == f"{VENV_BIN.parent.name}/bin/labctl"
    assert activate == f"{VENV_BIN.parent.name}/bin/activate"
    # the command printed works as typed in a shell without the virtual environment
    res = subprocess.run(f"{cmd} --version", shell=True, capture_output=True, text=True,
                         env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0 and "labctl" in res.stdout, res.stdout + res.stderr


def test_labctl_on_the_path_is_just_labctl(monkeypatch):
    monkeypatch.setenv("PATH", f"{VENV_BIN}:/usr/bin:/bin")
    assert labctl_command() == ("labctl", None)


def test_demo_report_goes_beside_the_results_unless_told(monkeypatch, tmp_path):
    from labctl.demo import default_report_path

    monkeypatch.setenv("LABCTL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LABCTL_DB", raising=False)
    path = Path(default_report_path(None))  # the default results file is in $LABCTL_HOME
    assert path.parent == tmp_path / "home" / "reports" and path.name.startswith("demo-") and path.suffix == ".html"
    assert Path(default_report_path(str(tmp_path / "lab" / "r.db"))).parent == tmp_path / "lab" / "reports"
    assert Path(default_report_path("postgresql://lab@db/results")).parent == tmp_path / "home" / "reports"
