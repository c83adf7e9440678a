"""Small modal dialogs: a yes/no confirmation (abort, quit)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button

from labctl.tui import fmt


class ConfirmDialog(ModalScreen[bool]):
    """Asks one question; dismisses with True (yes) or False. ``escape`` is no: the
    dangerous answer is never the default."""

    BINDINGS = [Binding("escape,n", "no", "No"), Binding("y", "yes", "Yes")]

    def __init__(self, title: str, text: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self._title, self._text, self._yes, self._no = title, text, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield fmt.PlainStatic(self._title, classes="dialog-title")
            yield fmt.PlainStatic(self._text, classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self._no} [n]", id="no", variant="primary")
                yield Button(f"{self._yes} [y]", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def action_yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_no(self) -> None:
        self.dismiss(False)
