"""A ``prompt`` step as a modal dialog: the question, the choices (or a text field), and the
plan's ``timeout:`` counting down. The engine enforces the timeout; the dialog only shows it
(and is closed by the run screen when the engine withdraws the prompt)."""

from __future__ import annotations

import time

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from labctl.engine.events import PromptAsked
from labctl.tui import fmt


class PromptDialog(ModalScreen[str | None]):
    """Dismisses with the answer; None only when withdrawn (timeout, abort)."""

    BINDINGS = [Binding("escape", "noop", "Answer required", show=False),
                Binding("ctrl+a", "abort_run", "Abort run")]

    def __init__(self, asked: PromptAsked, operator: str, *, now: float | None = None) -> None:
        super().__init__()
        self.asked = asked
        self.operator = operator
        self._deadline = (now if now is not None else time.monotonic()) + asked.timeout if asked.timeout else None

    def compose(self) -> ComposeResult:
        a = self.asked
        with Vertical(classes="dialog", id="prompt-dialog"):
            yield fmt.PlainStatic(f"Operator prompt · step {a.prompt_id}", classes="dialog-title")
            yield fmt.PlainStatic(fmt.plain(a.text), classes="dialog-text", id="prompt-text")
            yield fmt.PlainStatic(self._countdown_text(), id="prompt-countdown")
            if a.choices:
                with Horizontal(classes="dialog-buttons"):
                    for i, choice in enumerate(a.choices):
                        yield Button(choice, id=f"choice-{i}", variant="primary" if i == 0 else "default")
            else:
                yield Input(placeholder="type or scan the answer, then enter", id="prompt-input")
                yield fmt.PlainStatic("", id="prompt-error")
            yield fmt.PlainStatic(f"answered as {self.operator} · ctrl+a aborts the run", classes="dialog-text")

    def on_mount(self) -> None:
        if self._deadline is not None:
            self.set_interval(0.5, self._tick)
        else:
            self.query_one("#prompt-countdown", Static).display = False

    def _countdown_text(self) -> str:
        if self._deadline is None:
            return ""
        left = max(0.0, self._deadline - time.monotonic())
        return f"answer within {left:.0f} s (timeout {self.asked.timeout:g} s)"

    def _tick(self) -> None:
        self.query_one("#prompt-countdown", Static).update(self._countdown_text())

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        index = int((event.button.id or "choice-0").removeprefix("choice-"))
        self.dismiss(self.asked.choices[index])

    @on(Input.Submitted, "#prompt-input")
    def _typed(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            self.query_one("#prompt-error", Static).update("an answer is required")
            return
        self.dismiss(value)

    def action_noop(self) -> None:
        self.notify("the run waits for this answer (ctrl+a aborts the run)", severity="warning")

    def action_abort_run(self) -> None:
        """Abort instead of answering (asks first, like `a` on the run screen)."""
        from labctl.tui.run import RunScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, RunScreen):
                screen.action_abort()
