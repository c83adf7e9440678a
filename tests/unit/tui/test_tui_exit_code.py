"""What `labctl tui` exits with: an app that ended on an internal error is an error (2), never 0."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import labctl.tui.app as tui_app
import labctl.tui.bench as tui_bench
from labctl.cli.tui import tui


class _Bench:
    def __init__(self, fixture):
        self.closed = False

    def close(self):
        self.closed = True


def _app_ending(code, return_code, aborted):
    class App:
        def __init__(self, config, bench=None):
            self.return_code = return_code

        def run(self):
            return code

        def finish_run(self, reason):
            return aborted

    return App


@pytest.mark.parametrize(("code", "return_code", "aborted", "exit_code"), [
    (None, 1, False, 2),  # Textual caught an exception and printed its traceback
    (None, 1, True, 3),  # ... and a run was going: it was aborted to the safe state
    (0, 0, False, 0),
    (None, 0, False, 0),  # quit normally
])
def test_exit_code(monkeypatch, code, return_code, aborted, exit_code):
    monkeypatch.setattr(tui_bench, "Bench", _Bench)
    monkeypatch.setattr(tui_app, "LabctlApp", _app_ending(code, return_code, aborted))
    assert CliRunner().invoke(tui, []).exit_code == exit_code
