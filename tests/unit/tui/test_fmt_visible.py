"""The TUI's screens over stored runs (run detail, watch, compare) show what a DUT or an
instrument sent as text: its control characters as escapes, never as terminal commands."""

from __future__ import annotations

from labctl.tui import fmt
from labctl.tui.compare import _shown


def test_stored_values_labels_and_limits_show_control_characters_as_escapes():
    m = {"name": "version", "value": None, "value_text": "\x1b[32m1.4.2\x1b[0m", "unit": "",
         "labels": {"port": "tty\x07"}, "limit_text": "~ /^1\\.4/\r"}
    assert fmt.value(m) == "\\x1b[32m1.4.2\\x1b[0m"
    assert fmt.labels(m) == "port tty\\x07"
    assert fmt.limits(m) == "~ /^1\\.4/\\x0d"
    assert fmt.value({"value": 0.75, "unit": "V"}) == "0.75 V"  # numbers as before
    assert _shown("\x9b2J", "") == "\\x9b2J"


def test_plain_text_keeps_brackets_and_shows_control_characters():
    shown = fmt.plain("got '[/b]' \x1b[2J")
    assert shown.plain == "got '[/b]' \\x1b[2J" and not shown.spans


def test_a_text_table_shows_cells_that_look_like_markup_as_written():
    """Textual reads a str cell as markup: "[/b]" raised MarkupError (the app ended), "[red]"
    coloured the cell, and a corner such as "[ambient=25 degC]" vanished as a style tag."""
    import asyncio

    from textual.app import App, ComposeResult

    cells = ("got '[/b]'", "[red]ACME[/red]", "rails [ambient=25 degC]", "tty\x1b[2J")

    class One(App):
        def compose(self) -> ComposeResult:
            yield fmt.TextTable(id="t")

    async def shown() -> list[str]:
        async with One().run_test(size=(160, 10)) as pilot:
            table = pilot.app.query_one("#t", fmt.TextTable)
            table.add_columns(*(f"c{i}" for i in range(len(cells))))
            table.add_rows([cells])
            await pilot.pause()
            return table.render_line(1).text.split()  # the first row, as drawn

    assert asyncio.run(shown()) == ["got", "'[/b]'", "[red]ACME[/red]", "rails", "[ambient=25", "degC]",
                                    "tty\\x1b[2J"]
