"""The terminal UI (``labctl tui``): a Textual app, its screens and widgets.

All styling lives in ``labctl.tcss``; no widget sets colours or sizes in Python.
The app is a subscriber of the engine like any other: the engine runs in a worker thread
and its events reach the app only as messages (see :mod:`labctl.tui.bridge`).
"""

from labctl.tui.app import LabctlApp
from labctl.tui.config import TuiConfig

__all__ = ["LabctlApp", "TuiConfig"]
