"""Pictures of the history and run-detail screens at 80×24 and 160×48, on deterministic runs
(update them with ``pytest --snapshot-update`` after an intended change, and look at them)."""

from __future__ import annotations

import pytest
from tuikit import ScreenApp, history_db, rows_shown, use_utc

from labctl.tui.detail import RunDetailScreen
from labctl.tui.history import HistoryScreen

SIZES = [(80, 24), (160, 48)]


@pytest.fixture
def db(tmp_path, monkeypatch):
    use_utc(monkeypatch)
    return history_db(tmp_path / "results.db")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_history_screen(snap_compare, db, size):
    assert snap_compare(ScreenApp(db, HistoryScreen), terminal_size=size, run_before=rows_shown("#history-runs"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_detail_screen(snap_compare, db, size):
    app = ScreenApp(db, lambda: RunDetailScreen("1a0b0c0d00000001"))
    assert snap_compare(app, terminal_size=size, run_before=rows_shown("#detail-steps"))
