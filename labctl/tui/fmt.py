"""How the TUI's history, detail, compare and watch screens write values: times, durations,
measured values against their limits, outcomes and verdicts.

Colours come from the stylesheet: an outcome or verdict is styled with the screen's
component class for it (``status-ok``, ``status-fail`` …, labctl.tcss), read through
:func:`status_style`, so the light and the dark theme both read well."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable, Static

from labctl.console import _fmt, format_value, visible

#: outcome or verdict -> the stylesheet's component class that colours it
STATUS_CLASS = {
    "passed": "status-ok", "PASS": "status-ok",
    "failed": "status-fail", "error": "status-fail", "FAIL": "status-fail", "ERROR": "status-fail",
    "aborted": "status-warn", "interrupted": "status-warn", "ABORTED": "status-warn", "MARGINAL": "status-warn",
    "running": "status-running",
    "SKIPPED": "status-dim", "NONE": "status-dim",
}


def plain(value: Any) -> Text:
    """Data (a reply, a message, a plan's or an operator's text) for a widget that would read a
    ``str`` as markup (``Static``): shown as it is, ``[/b]`` and all, control characters as
    escapes. A closing tag in a str there raises (Textual's ``MarkupError``)."""
    return Text(visible(str(value)))


#: a screen of input fields: focus moves as tab arrives (a priority binding), so the keys
#: typed after it in one burst (type-ahead, a scanner) go to the next field, not to this one
FIELD_KEYS = [Binding("tab", "app.focus_next", show=False, priority=True),
              Binding("shift+tab", "app.focus_previous", show=False, priority=True)]


class PlainStatic(Static):
    """A ``Static`` whose ``str`` content is data, shown as written (no markup): a progress
    line, a message or a plan's name quoting ``[/b]`` cannot end the app, nor ``[red]`` turn
    it red. Every ``Static`` of the app that shows text from outside is one."""

    def __init__(self, content: Any = "", **kwargs: Any) -> None:
        super().__init__(content, markup=False, **kwargs)


class TextTable(DataTable):
    """A ``DataTable`` whose ``str`` cells are data: shown as written. (Textual reads a ``str``
    cell as markup: a reply quoting ``[/b]`` raised ``MarkupError`` and ended the app, and one
    with ``[red]`` in it turned red.) Brackets that look like tags are escaped, control
    characters shown as escapes; other cells (``Text``, numbers) go in as they are."""

    def add_row(self, *cells: Any, **kwargs: Any) -> Any:
        return super().add_row(*[_fmt(c) if isinstance(c, str) else c for c in cells], **kwargs)


def status_style(widget: Any, component: str) -> Any:
    """The rich style of one of the stylesheet's status classes, for ``widget`` (a screen that
    lists them in ``COMPONENT_CLASSES``)."""
    return widget.get_component_rich_style(component, partial=True) if component else ""


def styled(word: str | None, widget: Any) -> Text:
    """An outcome or a verdict in its colour ("-" when there is none)."""
    return Text(word or "-", style=status_style(widget, STATUS_CLASS.get(word or "", "")))


def problem(err: Exception) -> str:
    """One line for a failed store read: a labctl error as it formats itself; anything else
    (a database that went away mid-query) as what it is."""
    from labctl.errors import LabctlError

    if isinstance(err, LabctlError):  # its hint (how to do it right) on the same line
        return " · ".join(line.strip() for line in err.format().splitlines())
    first = str(err).splitlines()[0] if str(err) else ""
    return f"the results database did not answer: {type(err).__name__}: {first}".rstrip(": ")


def when(t: float | None) -> str:
    """Local wall-clock time of a record: ``2026-11-30 14:02``."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t is not None else "-"


def clock(t: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t)) if t is not None else "-"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{s} s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def short_id(run_id: str | None, n: int = 12) -> str:
    return (run_id or "-")[:n]


def value(m: dict[str, Any]) -> str:
    """The measured value with its unit (numbers to 6 significant digits)."""
    v = m.get("value")
    shown = format_value(v if v is not None else (m.get("value_text") or "-"))
    return f"{shown} {m.get('unit') or ''}".rstrip()


def labels(m: dict[str, Any]) -> str:
    """``lane 3 rail VDD_IO``; a label that repeats the measurement's name is left out."""
    return visible(" ".join(f"{k} {v}" for k, v in (m.get("labels") or {}).items() if v != m.get("name")))


def limits(m: dict[str, Any]) -> str:
    """The limits in words as they were judged, else low..high."""
    if m.get("limit_text"):
        return visible(str(m["limit_text"]))
    low, high = m.get("low"), m.get("high")
    if low is None and high is None:
        return ""
    return f"{format_value(low) if low is not None else ''}..{format_value(high) if high is not None else ''}"


def margin(m: dict[str, Any], widget: Any) -> Text:
    """How far the value is inside its nearest limit (negative: outside), with the unit."""
    v, low, high = m.get("value"), m.get("low"), m.get("high")
    if not isinstance(v, float | int) or (low is None and high is None):
        return Text("")
    gaps = [g for g in ((v - low) if low is not None else None, (high - v) if high is not None else None)
            if g is not None]
    gap = min(gaps)
    return Text(f"{gap:+.3g} {m.get('unit') or ''}".rstrip(), style=status_style(widget, "status-fail") if gap < 0 else "")


def step_name(step_key: str | None) -> str:
    """``steps/rails@2#1`` -> ``rails@2`` (the group and attempt are shown elsewhere)."""
    if not step_key:
        return "-"
    base = step_key.rpartition("#")[0] or step_key
    return base.partition("/")[2] or base
