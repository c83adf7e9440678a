"""Start a writer in a real child process, read its report lines, SIGKILL it.

Reusable for any writer that prints ``READY`` / ``COMMITTED <step_key> <n>`` / ``DONE`` lines
(kill_child.py here; ``labctl run`` in the engine's kill test): pass ``argv``.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

CHILD = Path(__file__).with_name("kill_child.py")
LINE_TIMEOUT = 60.0


class Child:
    def __init__(self, db: str, run_id: str, *extra: str, argv: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv or [sys.executable, str(CHILD), "--db", db, "--run-id", run_id, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.strip())
        self._queue.put(None)

    def wait_for(self, prefix: str, count: int = 1, timeout: float = LINE_TIMEOUT) -> bool:
        """Read lines until ``count`` lines start with ``prefix`` (False if the child ended first)."""
        while sum(1 for ln in self.lines if ln.startswith(prefix)) < count:
            line = self._queue.get(timeout=timeout)
            if line is None:
                return False
            self.lines.append(line)
        return True

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.finish()

    def finish(self, timeout: float = 120.0) -> int:
        """Wait for the child to end (reaped, so it is really gone) and collect every line."""
        rc = self.proc.wait(timeout=timeout)
        while True:
            line = self._queue.get(timeout=LINE_TIMEOUT)
            if line is None:
                break
            self.lines.append(line)
        return rc

    @property
    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def committed(self) -> dict[str, int]:
        """step key -> measurement count, for every step the child reported as committed."""
        out = {}
        for ln in self.lines:
            if ln.startswith("COMMITTED "):
                _, key, n = ln.split()
                out[key] = int(n)
        return out

    @property
    def done(self) -> bool:
        return any(ln.startswith("DONE ") for ln in self.lines)
