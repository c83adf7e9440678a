"""The session log: every command and reply exchanged with the instruments, timestamped.

Cheap enough to stay on by default: one small dict appended to a list per message (and,
when a path is given, one JSON line written and flushed). The results store persists
``records`` with the run later.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


class SessionLog:
    """Records of ``{"t", "instrument", "resource", "kind", "text"}`` in the order they happened.

    ``kind`` is one of ``write`` (command sent), ``query`` (command sent, reply expected),
    ``reply`` (what came back, with ``elapsed_s``), ``error`` (a timeout, a disconnect, a
    reply that did not parse) or ``note`` (open/close/reconnect).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        clock: Callable[[], float] | None = None,
        max_records: int | None = None,
    ) -> None:
        self.records: list[dict[str, Any]] = []
        self.total = 0  # records ever kept (the index of the next one), trimmed ones included
        self.path = Path(path) if path is not None else None
        self._time = clock or time.time
        self._max = max_records
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")

    def record(self, instrument: str, resource: str, kind: str, text: str, elapsed_s: float | None = None,
               **extra: Any) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "t": self._time(),
            "instrument": instrument,
            "resource": resource,
            "kind": kind,
            "text": text,
        }
        if elapsed_s is not None:
            rec["elapsed_s"] = elapsed_s
        if extra:
            rec.update(extra)
        self._keep([rec])
        return rec

    def record_lines(self, instrument: str, resource: str, kind: str, texts: list[str]) -> None:
        """:meth:`record` of each of ``texts`` (lines read together: one timestamp, one lock)."""
        if not texts:
            return
        t = self._time()
        self._keep([{"t": t, "instrument": instrument, "resource": resource, "kind": kind, "text": text}
                    for text in texts])

    def _keep(self, recs: list[dict[str, Any]]) -> None:
        with self._lock:
            self.records.extend(recs)
            self.total += len(recs)
            if self._max is not None and len(self.records) > self._max + self._max // 4:
                del self.records[: len(self.records) - self._max]  # in chunks: amortised O(1)
            if self._file is not None:
                self._file.write("".join(json.dumps(rec, default=str) + "\n" for rec in recs))
                self._file.flush()

    def since(self, index: int) -> tuple[list[dict[str, Any]], int]:
        """``(records, next_index)``: the records from the ``index``-th ever kept on (those
        trimmed by ``max_records`` meanwhile are gone) and the index to ask from next time."""
        with self._lock:
            first = self.total - len(self.records)
            return self.records[max(0, index - first):], self.total

    def for_instrument(self, instrument: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.records if r["instrument"] == instrument]

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
        """Load a JSONL session log written by a previous run."""
        with Path(path).open(encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
