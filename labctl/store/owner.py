"""Who owns a running run: host name, process id and the process's start time.

A run left ``running`` is interrupted when its owner process is gone: on this host we ask
the kernel (a pid reused by another process is told apart by its start time); on another
host we rely on the heartbeat the owner refreshes every few seconds.
"""

from __future__ import annotations

import os
import socket
from functools import cache


@cache
def this_host() -> str:
    return socket.gethostname()


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            data = f.read()
    except OSError:
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'.
    return data[data.rfind(")") + 2 :].split()


def process_token(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' where /proc is missing)."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else ""


def process_alive(pid: int, token: str = "") -> bool:
    """Whether process ``pid`` on this host is alive and is the one that had ``token``."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    fields = _stat_fields(pid)
    if fields is None:
        return True  # no /proc: trust kill(0)
    if fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent
        return False
    return not token or len(fields) <= 19 or fields[19] == token
