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
        if console.is_terminal or len(self.rows) <= self.plain_rows:
            yield self.rich_table()
            return
        from rich.segment import Segment

        for line in self.lines():
            yield Segment(line + "\n")

    def lines(self) -> Iterator[str]:
        """The table as rich draws it unwrapped and without colour (box ``HEAVY_HEAD``, one space
        of padding each side of a cell, columns as wide as their widest cell)."""
        shown: dict[str, tuple[str, int]] = {}  # markup -> (text shown, its width): cells repeat

        def cell(markup: str) -> tuple[str, int]:
            found = shown.get(markup)
            if found is None:
                text = _visible(markup)
                found = shown[markup] = (text, _width(text))
            return found

        header = [cell(c) for c in self.columns]
        body = [[cell(c) for c in r] for r in self.rows]
        widths = [w for _text, w in header]
        for r in body:
            for i, (_text, w) in enumerate(r):
                if w > widths[i]:
                    widths[i] = w
        if self.title:
            yield _visible(self.title)
        yield "┏" + "┳".join("━" * (w + 2) for w in widths) + "┓"
        yield _row(header, widths, "┃")
        yield "┡" + "╇".join("━" * (w + 2) for w in widths) + "┩"
        for r in body:
            yield _row(r, widths, "│")
        yield "└" + "┴".join("─" * (w + 2) for w in widths) + "┘"


def _row(cells: list[tuple[str, int]], widths: list[int], bar: str) -> str:
    return bar + bar.join(f" {text}{' ' * (w - own)} " for (text, own), w in zip(cells, widths, strict=True)) + bar


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
