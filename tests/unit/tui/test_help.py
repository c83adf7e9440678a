"""``?`` lists every key: each key a screen answers to is in the help, under that screen."""

from __future__ import annotations

import re

import pytest
from textual.binding import Binding

from labctl.tui.app import LabctlApp
from labctl.tui.compare import CompareScreen
from labctl.tui.detail import RunDetailScreen
from labctl.tui.dialogs import ConfirmDialog
from labctl.tui.help import HELP
from labctl.tui.history import HistoryScreen
from labctl.tui.rerun import RerunConfirm
from labctl.tui.run import RunScreen
from labctl.tui.start import StartRunScreen
from labctl.tui.station import StationScreen
from labctl.tui.stations import StationsScreen
from labctl.tui.watch import WatchScreen

SECTIONS = {"Everywhere": LabctlApp, "Station screen": StationScreen, "Start form": StartRunScreen,
            "Run screen": RunScreen, "History": HistoryScreen, "Run detail": RunDetailScreen,
            "Re-run (asks first)": RerunConfirm, "Compare": CompareScreen, "Watch": WatchScreen,
            "Stations": StationsScreen}
SHOWN_AS = {"question_mark": "?", "slash": "/"}


def _keys(cls: type) -> list[str]:
    out = []
    for b in cls.BINDINGS:
        binding = b if isinstance(b, Binding) else Binding(*b)
        out += [SHOWN_AS.get(k.strip(), k.strip()) for k in binding.key.split(",")]
    return out


def _section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", HELP, re.S | re.M)
    assert found, f"no section {title!r} in the help"
    return found.group(1)


@pytest.mark.parametrize("title", SECTIONS)
def test_the_help_lists_every_key_of_the_screen(title):
    section = _section(title)
    missing = [k for k in _keys(SECTIONS[title]) if f"`{k}`" not in section]
    assert not missing, f"{title}: {missing} not in the help"


def test_the_abort_question_s_keys_are_in_the_help():
    run = _section("Run screen")
    assert all(f"`{k}`" in run for k in ("y", "n", "escape"))
    assert {k for k in _keys(ConfirmDialog)} == {"escape", "n", "y"}
