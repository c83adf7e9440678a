"""Handing a worker thread's result to its screen.

A screen's ``@work(thread=True)`` worker reads the store or the instruments and hands what it
found to the screen on the app's thread. The operator may close the screen, or quit, while
the worker runs: its result then finds no widgets, and is dropped instead of raising
``NoMatches`` into the app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def to_screen(screen: Any, show: Callable[..., Any], *args: Any) -> None:
    """Call ``show(*args)`` on the app's thread if ``screen`` is still open then (from a worker).

    While the app shuts down it stops running first and then removes every screen's widgets,
    the screens themselves last: a result landing meanwhile is dropped too. A missing widget
    on a screen that is open in a running app is a bug, and is raised as before."""
    from textual.css.query import NoMatches

    def deliver() -> None:
        if not screen.is_attached:
            return
        app = screen.app
        if not app.is_running:
            return
        try:
            show(*args)
        except NoMatches:
            if screen in app.screen_stack:  # (the app is running: checked above, on this thread)
                raise
            # the screen was being closed (popped, its widgets going first): nothing to show

    screen.app.call_from_thread(deliver)
