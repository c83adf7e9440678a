"""Importing pyvisa without numpy.

pyvisa imports numpy when it can (``pyvisa.util``: ``try: import numpy … except ImportError``)
only to parse ``query_binary_values`` / ``query_ascii_values`` replies into numpy arrays
faster. numpy is an optional dependency of pyvisa, labctl's drivers never call those
routines, and importing numpy costs about 0.15–0.2 s of every ``labctl run``'s start-up.

So :func:`import_pyvisa` makes the first import of pyvisa with numpy unavailable *to the
importing thread only*, for the duration of that import: a finder at the head of
``sys.meta_path`` refuses ``numpy`` to that thread (the ``ImportError`` pyvisa expects when
numpy is not installed) and is removed again at once. Other threads import numpy as usual
meanwhile, and when numpy is already imported, pyvisa simply uses it. Afterwards pyvisa
parses blocks in pure Python (a caller passing ``container=numpy.array`` still gets an array).
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType
from typing import Any


class _RefuseToThread:
    """A ``sys.meta_path`` finder that refuses ``names`` (and their submodules) to one thread."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.thread = threading.get_ident()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if threading.get_ident() == self.thread and name.split(".", 1)[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} (labctl imports pyvisa without it)", name=name)
        return None  # not ours: the next finder decides


def import_without(module: str, refused: tuple[str, ...]) -> ModuleType:
    """Import ``module`` (the first time) while this thread cannot import ``refused``."""
    if module in sys.modules or any(name in sys.modules for name in refused):
        return importlib.import_module(module)  # already there (waits for another thread still importing it)
    finder = _RefuseToThread(refused)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module(module)
    finally:
        sys.meta_path.remove(finder)
    return sys.modules[module]


def import_pyvisa() -> ModuleType:
    """The ``pyvisa`` module, imported without numpy unless numpy is already imported."""
    return import_without("pyvisa", ("numpy",))
