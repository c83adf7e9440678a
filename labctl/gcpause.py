"""Pause Python's cyclic garbage collector while a large structure is built.

Reading a 10,000-step plan creates a few hundred thousand small objects that all stay alive;
every automatic collection would walk all of them again, so loading time would grow faster
than the plan. Nothing built there forms garbage cycles, so collection waits until the end.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable automatic collection inside the block; restore it (if it was on) afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
