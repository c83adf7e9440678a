"""A long table piped (``runs show --all | less``) is written line by line, and reads exactly as
the table rich draws: the same characters, widths and cells, whatever the cells hold."""

from __future__ import annotations

import io

from labctl.cli._table import CliTable
from labctl.cli.runs import Markup, _data, _styled
from labctl.console import make_console

CASES = [
    ("A = x   B = y   (1 verdict change, 4 measurements): a title wider than the table",
     ["step", "measurement", "Δ %", "verdict (A→B)"],
     [["m0", "value", "+0.00", _styled("PASS")],
      ["m1 [x]", _data("a reply [/b] with \x1b[2J in it\\"), "", Markup(f"{_styled('PASS')}→{_styled('FAIL')}")],
      ["温度 ✓", _data("µV ≤ 3 :smile: 22:08:51"), "-", _data(None)],
      ["", _data(3.0700000000000003), "-12.50", _styled("ERROR")]]),
    ("short", ["a", "a header wider than its cells"], [["1", "2"], ["a cell wider than its header", "4"]]),
    (None, ["x"], [[""], ["y"]]),
    ("cells of several lines", ["a", "message"],
     [["1", _data("line one\nline two, longer")], ["1\n2\n3", _data("x\n")], ["2", "y"]]),
    ("a tab", ["a", "message"], [["1", _data("tab\there")], ["2", _data("ab\tc")]]),  # (rich's own way)
]


def render(renderable) -> str:
    out = io.StringIO()
    make_console(file=out).print(renderable)  # a StringIO is not a terminal: piped
    return out.getvalue()


def test_a_large_piped_table_is_the_text_rich_draws():
    for title, columns, rows in CASES:
        table = CliTable(title, columns, rows, plain_rows=0)  # line by line from the first row
        assert render(table) == render(table.rich_table()), title


def test_small_tables_and_terminals_are_drawn_by_rich():
    title, columns, rows = CASES[0]
    table = CliTable(title, columns, rows)
    assert render(table) == render(table.rich_table())
    on_terminal = io.StringIO()
    make_console(file=on_terminal, force_terminal=True, width=60).print(CliTable(title, columns, rows, plain_rows=0))
    assert "\x1b[" in on_terminal.getvalue()  # rich's colours and fitting, not the plain lines
