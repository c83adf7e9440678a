"""The tables of the reading commands (``runs``, ``runs show``, ``runs compare`` …).

A rich ``Table`` measures and renders every cell through its layout engine: about 0.1 ms a
cell here, so ``runs show --all`` of a 100,000-step run took minutes. Piped (a file, ``less``,
``grep``: no wrapping, no colour), a table of more than :data:`PLAIN_ROWS` rows is written
line by line in the same box-drawing characters and column widths rich would give it (the
same text, tested against rich); on a terminal, and below that size, rich draws it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

#: piped tables with more rows than this are written line by line (rich below it)
PLAIN_ROWS = 1000


class CliTable:
    """Rows of markup cells under a title, drawn by rich, or written plainly when large and piped."""

    def __init__(self, title: str | None, columns: Iterable[str], rows: Iterable[Iterable[str]],
                 plain_rows: int = PLAIN_ROWS) -> None:
        self.title = title
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        self.plain_rows = plain_rows

    def rich_table(self) -> Any:
        from rich.table import Table

        table = Table(title=self.title, title_justify="left", header_style="bold")
        for c in self.columns:
            table.add_column(c, overflow="fold")
        for r in self.rows:
            table.add_row(*r)
        return table

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        if console.is_terminal or len(self.rows) <= self.plain_rows or self._has_tabs():
            yield self.rich_table()  # (rich folds a cell at its tabs: left to it)
            return
        from rich.segment import Segment

        for line in self.lines():
            yield Segment(line + "\n")

    def _has_tabs(self) -> bool:
        return any("\t" in c for r in self.rows for c in r) or any("\t" in c for c in self.columns)

    def lines(self) -> Iterator[str]:
        """The table as rich draws it unwrapped and without colour (box ``HEAVY_HEAD``, one space
        of padding each side of a cell, columns as wide as their widest cell line, a cell of
        several lines making its row as high)."""
        shown: dict[str, tuple[tuple[tuple[str, int], ...], int]] = {}  # markup -> its lines, width

        def cell(markup: str) -> tuple[tuple[tuple[str, int], ...], int]:
            found = shown.get(markup)
            if found is None:
                text = _visible(markup)
                lines = tuple((line, _width(line)) for line in text.split("\n"))
                found = shown[markup] = (lines, max(w for _line, w in lines))
            return found

        header = [cell(c) for c in self.columns]
        body = [[cell(c) for c in r] for r in self.rows]
        widths = [w for _lines, w in header]
        for r in body:
            for i, (_lines, w) in enumerate(r):
                if w > widths[i]:
                    widths[i] = w
        if self.title:
            yield _visible(self.title)
        yield "┏" + "┳".join("━" * (w + 2) for w in widths) + "┓"
        yield from _row(header, widths, "┃")
        yield "┡" + "╇".join("━" * (w + 2) for w in widths) + "┩"
        for r in body:
            yield from _row(r, widths, "│")
        yield "└" + "┴".join("─" * (w + 2) for w in widths) + "┘"


def _row(cells: list[tuple[tuple[tuple[str, int], ...], int]], widths: list[int], bar: str) -> Iterator[str]:
    """A row's lines: as many as its highest cell has, the others blank below theirs."""
    height = max(len(lines) for lines, _w in cells)
    if height == 1:
        yield bar + bar.join(f" {lines[0][0]}{' ' * (w - lines[0][1])} "
                             for (lines, _own), w in zip(cells, widths, strict=True)) + bar
        return
    for k in range(height):
        parts = []
        for (lines, _own), w in zip(cells, widths, strict=True):
            text, own = lines[k] if k < len(lines) else ("", 0)
            parts.append(f" {text}{' ' * (w - own)} ")
        yield bar + bar.join(parts) + bar


def _visible(markup: str) -> str:
    """What a markup cell shows: its text without tags, escapes and emoji codes (``:smile:``)."""
    if "[" not in markup and ":" not in markup:
        return markup
    from rich.text import Text

    return Text.from_markup(markup).plain


def _width(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)
