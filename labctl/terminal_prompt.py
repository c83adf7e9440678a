"""Operator prompts on the terminal for a headless run (``labctl run`` on a terminal, without
``--answers``): the question, its choices, and the answer read from standard input.

The engine calls the prompter in a helper thread and enforces the plan's ``timeout:`` and
aborts itself (``StepContext.prompt``); :meth:`TerminalPrompter.cancel` then makes the
prompter stop reading, so a late line is never taken as the answer to something else.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable
from typing import IO

from labctl.errors import LabctlError


class PromptWithdrawn(LabctlError):
    """The engine withdrew the prompt (timeout or abort) while the terminal was asked."""


class TerminalPrompter:
    def __init__(self, operator: str, *, stdin: IO[str] | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.operator = operator
        self.stdin = stdin or sys.stdin
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self._cancelled = threading.Event()

    def __call__(self, prompt_id: str, text: str, choices: tuple[str, ...]) -> tuple[str, str]:
        self._cancelled.clear()
        options = f" [{'/'.join(choices)}]" if choices else ""
        self.say(f"? {text}{options}  (prompt {prompt_id}; type the answer and press Enter)")
        while True:
            answer = self._read_line().strip()
            if not answer:
                continue
            if choices and answer not in choices:
                self.say(f"  answer one of: {', '.join(choices)}")
                continue
            return answer, f"operator:{self.operator}"

    def cancel(self, prompt_id: str) -> None:
        self._cancelled.set()

    def _read_line(self) -> str:
        fd = self.stdin.fileno()
        buf = b""
        while True:
            if self._cancelled.is_set():
                raise PromptWithdrawn("the prompt was withdrawn before it was answered")
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(fd, 1024)
            if not chunk:
                raise PromptWithdrawn("standard input closed before the prompt was answered")
            buf += chunk
            if b"\n" in buf or b"\r" in buf:
                return buf.replace(b"\r", b"\n").split(b"\n", 1)[0].decode(errors="replace")


def terminal_prompter(operator: str | None, *, interactive: bool | None = None) -> TerminalPrompter | None:
    """A prompter when standard input is a terminal (None otherwise: a rig's run is not asked)."""
    import getpass

    if interactive is None:
        try:
            interactive = sys.stdin is not None and sys.stdin.isatty()
        except (ValueError, OSError):
            interactive = False
    if not interactive:
        return None
    try:
        who = operator or getpass.getuser()
    except Exception:  # noqa: BLE001
        who = "operator"
    return TerminalPrompter(who)
