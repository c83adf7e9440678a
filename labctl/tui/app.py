"""The Textual application: modes (one screen stack each), global key bindings, quitting.

Modes are the app's top-level places, switched with one key:

* ``station`` (``s``, the first screen): the bench, its plans, starting a run; a run's
  live screen is pushed on top of it.
* ``history`` (``h``) and ``watch`` (``w``): provided by :mod:`labctl.tui.history` and
  :mod:`labctl.tui.watch` (``HistoryScreen`` / ``WatchScreen``); a mode whose module is not
  installed says so instead of switching.

To add a mode: put its screen class in a module and add a line to :data:`MODE_SCREENS`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from labctl.tui.config import TuiConfig

#: mode name -> "module:ScreenClass"; each screen class is built with no arguments and
#: reads what it needs from ``self.app.config`` (a :class:`TuiConfig`).
MODE_SCREENS: dict[str, str] = {
    "station": "labctl.tui.station:StationScreen",
    "history": "labctl.tui.history:HistoryScreen",
    "watch": "labctl.tui.watch:WatchScreen",
    "stations": "labctl.tui.stations:StationsScreen",
}


def _screen_factory(target: str) -> Callable[[], Screen] | None:
    """The screen class named by ``target``, or None when its module is not installed."""
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise
        return None
    return getattr(module, attr)


class LabctlApp(App[int]):
    """``labctl tui``. The return value is the exit code (0, or 3 when a run was aborted on quit)."""

    CSS_PATH = "labctl.tcss"
    TITLE = "labctl"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("s", "mode('station')", "Station"),
        Binding("h", "mode('history')", "History"),
        Binding("w", "mode('watch')", "Watch"),
        Binding("t", "mode('stations')", "Stations", show=False),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("ctrl+t", "toggle_light", "Light/dark", show=False),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, config: TuiConfig | None = None, *, bench: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config or TuiConfig()
        if self.config.light:
            self.theme = "textual-light"
        if bench is None:
            from labctl.tui.bench import Bench

            bench = Bench(self.config.fixture, time_scale=self.config.time_scale)
        #: the station the app drives (labctl.tui.bench.Bench): fixture, simulated lab, instrument lock
        self.bench = bench
        for mode, target in MODE_SCREENS.items():
            factory = _screen_factory(target)
            if factory is not None:
                self.add_mode(mode, factory)
        #: the run in progress started from this app (a labctl.tui.session.RunSession), if any
        self.run_session: Any = None
        self._store: Any = None
        self._store_lock = threading.Lock()
        self._quitting = False
        self._hung_up = False

    def on_unmount(self) -> None:
        # the signal handlers stay while the run finishes: a second SIGHUP (the kernel's, when
        # the terminal's session ends) must not kill the process before the safe state is done
        self.finish_run("the terminal UI ended during the run")
        self._remove_signal_handlers()
        self.bench.close()
        if self._store is not None:
            self._store.close()

    @property
    def store(self) -> Any:
        """The results store of ``--db`` (labctl.store.Store), opened on first use (from a
        worker thread: opening may migrate); the history and watch screens read it."""
        with self._store_lock:
            if self._store is None:
                from labctl.store import open_store

                self._store = open_store(self.config.db)
            return self._store

    def finish_run(self, reason: str) -> bool:
        """Whatever ends the app (a closed terminal, a crash): a run still going is aborted
        to the safe state, and this waits for it, before the instruments or the simulated lab
        are let go. True when a run had to be aborted."""
        session = self.run_session
        if session is None or not session.running:
            return False
        self._quitting = True
        session.abort_and_wait(reason)
        return True

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes this build has (a mode's module may be absent)."""
        return tuple(self._modes)

    def on_mount(self) -> None:
        self.sub_title = self.config.fixture or "sim-bench.yaml"
        if self.config.watch and "watch" not in self._modes:
            self.notify("watch mode is not part of this build", severity="warning")
        first = "watch" if self.config.watch and "watch" in self._modes else "station"
        self.switch_mode(first)
        self._install_signal_handlers()

    # ------------------------------------------------------------------ signals
    def _install_signal_handlers(self) -> None:
        """SIGTERM, SIGHUP (the SSH session or terminal closed) and SIGQUIT end the app like
        ``q`` + yes: a run in progress is aborted to the safe state first, and the app quits
        when it is done. (Ctrl-C is a key here: it asks.)"""
        import asyncio
        import signal

        self._handled_signals: list[int] = []
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            try:
                loop.add_signal_handler(sig, self._signalled, sig)
                self._handled_signals.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread: whoever runs the app owns the signals

    def _remove_signal_handlers(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        for sig in getattr(self, "_handled_signals", []):
            loop.remove_signal_handler(sig)

    def _signalled(self, sig: int) -> None:
        import signal

        from labctl.engine.abort import detach_from_terminal

        if sig == signal.SIGHUP:
            detach_from_terminal()  # the terminal is gone: nothing may block writing to it
            self._hung_up = True
        session = self.run_session
        if session is None or not session.running:
            self._leave()
            return
        self._quitting = True
        session.abort(f"{signal.Signals(sig).name} received by labctl tui: aborting to the safe state")

    # ------------------------------------------------------------------ actions
    def action_mode(self, mode: str) -> None:
        if getattr(self, "_leaving", False):
            return  # a mode key typed with `q`: the app is on its way out, no screen is built now
        if mode not in self._modes:
            self.notify(f"the {mode} screen is not part of this build", severity="warning")
            return
        self.switch_mode(mode)

    def action_toggle_light(self) -> None:
        """Light or dark colours (a terminal with a light background reads the light theme best)."""
        self.theme = "textual-dark" if self.theme == "textual-light" else "textual-light"

    def action_help(self) -> None:
        from labctl.tui.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Quit; during a run, ask first, then abort to the safe state and quit when it is done."""
        session = self.run_session
        if session is None or session.finished:
            self._leave()
            return
        if self._quitting:
            self.notify("aborting to the safe state; the app quits when it is done", severity="warning")
            return
        from labctl.tui.dialogs import ConfirmDialog

        def decided(yes: bool | None) -> None:
            if yes:
                self._quitting = True
                session.abort("operator quit the TUI during the run")
                self.notify("aborting to the safe state; the app quits when it is done", severity="warning")

        self.push_screen(ConfirmDialog(
            "A run is in progress.",
            "Quit? The run is aborted first: teardown and the safe state run, then the app exits.",
            yes="Abort and quit", no="Keep running"), decided)

    def run_finished(self, session: Any) -> None:
        """Called by the run session when the engine returned (on the UI thread)."""
        if self._quitting:
            self._leave()

    def _leave(self) -> None:
        """Exit. After a hang-up the terminal is gone and restoring it could block forever:
        the run is over and recorded, so the process ends at once."""
        self._leaving = True
        if self._hung_up:
            import os

            self.bench.close()
            os._exit(self._exit_code())
        self.exit(self._exit_code())

    def _exit_code(self) -> int:
        """0, or 3 (aborted) when quitting aborted a run."""
        from labctl.errors import ExitCode

        return int(ExitCode.ABORTED) if self._quitting else 0
