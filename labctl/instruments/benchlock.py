"""One run per bench: an advisory lock on every instrument address a run drives.

Two runs on one bench would power the same supply, move the same chamber and read each
other's error queues. A run (``labctl run``, ``resume``, ``rerun``, ``demo``, a TUI run, an
agent's job, a ``--slots`` run) therefore takes an exclusive ``flock`` per instrument address
before it opens the results store or any instrument, and holds it until its safe state is
done. The kernel drops the locks when the process dies (``kill -9``, power loss of the
process), so there is never a stale lock to clear by hand.

The locks live in ``$LABCTL_LOCK_DIR`` (default: ``<tmp>/labctl-locks``, shared by every user
of the machine). They protect a bench driven from one machine; instruments shared between
machines on a LAN need the lab's own arbitration (the fleet queue sends a job to one station).
``labctl instruments check`` takes them for its few seconds (it drains the error queues); the
TUI's station poll only probes them and reads nothing while another process holds the bench.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import socket
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from labctl.errors import BenchBusy
from labctl.instruments.address import instrument_key as address_key  # one spelling per instrument


def lock_dir() -> Path:
    return Path(os.environ.get("LABCTL_LOCK_DIR") or Path(tempfile.gettempdir()) / "labctl-locks")


def _unusable(directory: Path, why: str) -> Any:
    from labctl.errors import UsageError

    return UsageError(f"cannot keep the bench's locks in {directory}: {why}; nothing was started",
                      hint="point $LABCTL_LOCK_DIR at a folder (or unset it for the default)")


def _file_for(key: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", key)[:60]
    return f"{readable}-{hashlib.sha1(key.encode()).hexdigest()[:10]}.lock"


class BenchLock:
    """Exclusive locks on a set of instrument addresses; all or none, taken in one order."""

    def __init__(self, resources: Iterable[str], *, station: str, directory: Path | None = None) -> None:
        self.station = station
        self.directory = directory or lock_dir()
        keys: dict[str, str] = {}
        for res in resources:
            keys.setdefault(address_key(res), res)
        self._wanted = sorted(keys.items())
        self._held: list[int] = []

    def __enter__(self) -> BenchLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        self._make_dir()
        me = {"pid": os.getpid(), "host": socket.gethostname(), "station": self.station,
              "command": " ".join(Path(sys.argv[0]).name.split() + sys.argv[1:])[:300],
              "since": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}  # (one zone for every reader)
        try:
            for key, resource in self._wanted:
                path = self.directory / _file_for(key)
                try:
                    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
                except OSError as err:  # a folder of another user's, read-only …
                    raise _unusable(self.directory, err.strerror or str(err)) from None
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    os.close(fd)
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise
                    raise self._busy(path, resource) from None
                self._held.append(fd)
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        while self._held:
            fd = self._held.pop()
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # the holder's note goes with the lock
            with contextlib.suppress(OSError):
                os.close(fd)

    def _make_dir(self) -> None:
        d = self.directory
        if not d.is_dir():
            try:
                d.mkdir(parents=True)
            except FileExistsError:
                if not d.is_dir():  # a file of that name (a mistyped $LABCTL_LOCK_DIR)
                    raise _unusable(d, "it is a file, not a folder") from None
                return
            except OSError as err:
                raise _unusable(d, err.strerror or str(err)) from None
            with contextlib.suppress(OSError):
                d.chmod(0o1777)  # every user of the machine locks here, as in /tmp

    def _busy(self, path: Path, resource: str) -> BenchBusy:
        holder: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            holder = json.loads(path.read_text(encoding="utf-8") or "{}")
        who = (f"process {holder.get('pid')} ({holder.get('command') or 'labctl'}), station "
               f"{holder.get('station')}, since {holder.get('since')}") if holder.get("pid") else "another process"
        return BenchBusy(f"station {self.station}: instrument {resource} is in use by {who}",
                         resource=resource, holder=holder,
                         hint="one run drives a bench at a time: wait for that run to end or abort it "
                              "(Ctrl-C in its terminal, `labctl queue cancel` for an agent's job); "
                              "nothing was powered or recorded")


def bench_lock(fixture: Any, slots: Iterable[str] | None = None) -> BenchLock:
    """The lock of every address a run on ``fixture`` drives: the station's roles, plus the
    roles of ``slots`` (every slot when None)."""
    resources = [b.resource for b in (fixture.roles or {}).values()]
    wanted = None if slots is None else set(slots)
    for slot in getattr(fixture, "slots", None) or []:
        if wanted is None or slot.id in wanted:
            resources += [b.resource for b in (slot.roles or {}).values()]
    return BenchLock(resources, station=fixture.station)
