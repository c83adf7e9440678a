"""Handing a worker thread's result to its screen.

A screen's ``@work(thread=True)`` worker reads the store or the instruments and hands what it
found to the screen on the app's thread. The operator may close the screen, or quit, while
the worker runs: its result then finds no widgets, and is dropped instead of raising
``NoMatches`` into the app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def to_screen(screen: Any, show: Callable[..., Any], *args: Any) -> None:
    """Call ``show(*args)`` on the app's thread if ``screen`` is still open then (from a worker)."""

    def deliver() -> None:
        if screen.is_attached:
            show(*args)

    screen.app.call_from_thread(deliver)
