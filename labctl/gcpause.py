"""Pause Python's cyclic garbage collector while a large structure is built.

Reading a 10,000-step plan creates a few hundred thousand small objects that all stay alive;
every automatic collection would walk all of them again, so loading time would grow faster
than the plan. Nothing built there forms garbage cycles, so collection waits until the end.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


class Pause:
    """What a :func:`gc_paused` block says of what it built: ``kept = True`` when it is to
    stay (a loaded plan, with no garbage cycles among it)."""

    kept = False


@contextlib.contextmanager
def gc_paused() -> Iterator[Pause]:
    """Disable automatic collection inside the block; restore it (if it was on) afterwards.

    When the block sets ``kept`` on what it is given, what it built is long-lived and goes
    straight to the oldest generation (``gc.freeze`` then ``gc.unfreeze``, two list splices):
    a young collection would otherwise walk all of it at the first allocation after the block,
    and again one generation up. Nothing is left frozen; when something else holds objects
    frozen (a run under :func:`gc_settled`), the young generation is left as it is."""
    was_enabled = gc.isenabled()
    gc.disable()
    pause = Pause()
    try:
        yield pause
    finally:
        if was_enabled:
            if pause.kept and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


_settled_lock = threading.Lock()
_settled_depth = 0
_saved_threshold: tuple[int, int, int] | None = None
#: young-generation threshold while a run executes: a step allocates a few hundred short-lived
#: containers (events, rows, I/O records), nearly all freed by reference counting; at Python's
#: default of 700 the collector would run every step or two
RUN_GEN0_THRESHOLD = 20_000


@contextlib.contextmanager
def gc_settled() -> Iterator[None]:
    """While a run executes: everything alive at its start (the plan, the drivers, imported
    modules) is set aside from collection (``gc.freeze``), and young collections run less often.

    Without it every full collection walks the whole loaded plan again, so a step of a
    10,000-step plan would cost more than a step of a 10-step one. Cycles made during the run
    are still collected. Nested and concurrent runs (slots in threads) share one setting; the
    last to end restores the collector as it was."""
    global _settled_depth, _saved_threshold
    with _settled_lock:
        if _settled_depth == 0:
            gc.freeze()  # no collection first: in a large process (the TUI, a test run) it costs ~0.3 s
            _saved_threshold = gc.get_threshold()
            gen0, gen1, gen2 = _saved_threshold
            gc.set_threshold(max(gen0, RUN_GEN0_THRESHOLD), gen1, gen2)
        _settled_depth += 1
    try:
        yield
    finally:
        with _settled_lock:
            _settled_depth -= 1
            if _settled_depth == 0:
                if _saved_threshold is not None:
                    gc.set_threshold(*_saved_threshold)
                gc.unfreeze()
