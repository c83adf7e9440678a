"""One run started from the TUI: the engine in a worker thread, its events buffered for the
screen, the operator's two commands (answer a prompt, abort).

The engine never waits on the screen: :meth:`RunSession.subscriber` only appends the event
to a buffer and, at most once per batch, posts a :class:`EventsReady` message; the run
screen drains the whole buffer per refresh tick (one re-render for a burst of measurements).
Prompts are answered through :class:`TuiPrompter`, which blocks the engine's prompt helper
thread (never the UI) until the dialog is answered, cancelled or the run is aborted.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from textual.message import Message

from labctl.engine.abort import AbortController, RunAborted
from labctl.engine.context import PromptUnanswered


class EventsReady(Message):
    """The run session has buffered events (coalesced: one message per batch)."""


@dataclass(frozen=True)
class Note:
    """A line said while the run was being put together (pre-flight, bench made safe)."""

    text: str
    level: str = "info"


@dataclass(frozen=True)
class PromptCancelled:
    prompt_id: str
    reason: str


class TuiPrompter:
    """The engine's prompt handler for a run in the TUI: hands the question to the screen and
    waits (in the engine's prompt thread) for the operator's answer."""

    #: the hint of a prompt nobody answered in time (the engine's names ``--answers``)
    timeout_hint = "answer in the dialog before its countdown ends, or raise the prompt's timeout: in the plan"

    def __init__(self, session: RunSession) -> None:
        self.session = session
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[threading.Event, dict[str, Any]]] = {}

    def __call__(self, prompt_id: str, text: str, choices: tuple[str, ...]) -> tuple[str, str]:
        done, box = threading.Event(), {}
        with self._lock:
            self._pending[prompt_id] = (done, box)
        abort = self.session.abort_controller
        try:
            while not done.wait(0.1):
                if abort.requested:
                    self.session.push(PromptCancelled(prompt_id, "the run is aborting"))
                    raise RunAborted(abort.reason)
        finally:
            with self._lock:
                self._pending.pop(prompt_id, None)
        if "answer" not in box:
            raise PromptUnanswered(f"prompt {prompt_id} was withdrawn before it was answered")
        return box["answer"], f"operator:{box['by']}"

    def answer(self, prompt_id: str, answer: str, by: str) -> bool:
        """The operator's answer (UI thread). False when the prompt is no longer open."""
        with self._lock:
            pending = self._pending.get(prompt_id)
        if pending is None:
            return False
        done, box = pending
        box.update(answer=answer, by=by, at=time.time())
        done.set()
        return True

    def cancel(self, prompt_id: str) -> None:
        """Called by the engine when the prompt's timeout expired or the run is aborting."""
        with self._lock:
            pending = self._pending.get(prompt_id)
        aborting = self.session.abort_controller.requested
        self.session.push(PromptCancelled(prompt_id, "the run is aborting" if aborting
                                          else "nobody answered within the prompt's timeout"))
        if pending is not None:
            pending[0].set()


class RunSession:
    """A run request executing in a worker thread of the app."""

    def __init__(self, request: Any, *, operator: str) -> None:
        self.request = request
        self.operator = operator
        self.abort_controller = AbortController()
        self.prompter = TuiPrompter(self)
        self._buffer: deque[Any] = deque()
        self._wake_pending = threading.Event()
        self.target: Any = None  # the widget told when events are buffered (the run screen)
        self.station: Any = None  # the open station (for its session log), once opened
        self.output: Any = None  # labctl.launch.RunOutput when the engine returned
        self.error: Any = None  # a LabctlError raised before the run started (nothing powered)
        self.exit_code: int | None = None
        self.finished = False
        self.started_at: float | None = None
        self._done = threading.Event()
        #: interlock name -> (value, unit, low, high): the safety monitor's latest good readings
        self.interlocks: dict[str, tuple[float, str, float | None, float | None]] = {}

    # ------------------------------------------------------------------ engine side
    def push(self, item: Any) -> None:
        """Buffer one event (any thread); wake the screen once per batch."""
        self._buffer.append(item)
        target = self.target
        if target is not None and not self._wake_pending.is_set():
            self._wake_pending.set()
            target.post_message(EventsReady())

    def subscriber(self, event: Any) -> None:
        self.push(event)

    def say(self, text: str) -> None:
        self.push(Note(text))

    def run(self, bench: Any) -> None:
        """The worker body: waits for the status poll to let go of the instruments, then runs."""
        from labctl.errors import LabctlError
        from labctl.launch import execute

        self.started_at = time.time()
        request = self.request
        if request.reply_spin_us is None:  # the screen's thread needs the interpreter while a query waits
            request = replace(request, reply_spin_us=0)
        request = replace(request, front_end="tui")  # a refused start says what to do here, not on a command line
        try:
            with bench.instruments_lock:
                self.output = execute(request, [self.subscriber], say=self.say, abort=self.abort_controller,
                                      handle_signals=False, station_hook=self._station_opened,
                                      interlock_hook=self._interlock_read)
            self.exit_code = int(self.output.exit_code)
            for note in self.output.notes:
                self.push(Note(note, "warning"))
        except LabctlError as err:
            self.error = err
            self.exit_code = int(err.exit_code)
            self.push(Note(err.format(), "error"))
        except Exception as err:  # noqa: BLE001 - shown on the screen, never a crashed UI
            from labctl.errors import ExitCode

            self.error = err
            self.exit_code = int(ExitCode.ERROR)
            self.push(Note(f"internal error: {type(err).__name__}: {err}", "error"))
        finally:
            self.finished = True
            self._done.set()
            self.push(Note("", "finished"))

    def _station_opened(self, station: Any) -> None:
        self.station = station

    def _interlock_read(self, interlock: Any, value: float) -> None:
        self.interlocks[interlock.name] = (value, interlock.unit, interlock.low, interlock.high)

    @property
    def running(self) -> bool:
        return self.started_at is not None and not self.finished

    def abort_and_wait(self, reason: str, timeout: float | None = None) -> bool:
        """Abort the run and block until the engine returned (teardown and safe state done).
        For the app's very end, when no screen is left to show it. True when it finished."""
        if not self.running:
            return True
        self.abort(reason)
        return self._done.wait(timeout)

    # ------------------------------------------------------------------ UI side
    def drain(self) -> list[Any]:
        """Everything buffered so far (UI thread)."""
        self._wake_pending.clear()
        items = []
        while self._buffer:
            items.append(self._buffer.popleft())
        return items

    def abort(self, message: str = "operator aborted the run from the TUI") -> bool:
        return self.abort_controller.request("operator", message)

    def answer(self, prompt_id: str, answer: str) -> bool:
        return self.prompter.answer(prompt_id, answer, self.operator)
