"""The help screen (``?``): every key binding of the app and of the screen below it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# labctl tui

A front panel for the bench: the station, its plans, and the run in progress.

## Everywhere
| key | action |
|---|---|
| `s` | station screen (instruments, DUT, interlocks, plans) |
| `h` | history of recorded runs |
| `w` | watch runs in progress (this database) |
| `?` / `F1` | this help |
| `q` | quit (during a run: asks, then aborts to the safe state) |
| `ctrl+p` | command palette |

## Station screen
| key | action |
|---|---|
| `enter` / `r` | start the selected plan (opens the start form) |
| `ctrl+r` | refresh the instruments' status now |
| `tab` | next pane |

## Start form
| key | action |
|---|---|
| `ctrl+s` / *Start* | start the run (when pre-flight has nothing blocking) |
| `escape` | cancel |

## Run screen
| key | action |
|---|---|
| `a` | abort (asks first; the safe state always runs) |
| `l` | show/hide the instrument I/O of the current step |
| `m` | all measurements / only the current step's |
| `escape` | back to the station screen (when the run is over) |

## Prompt dialog
Answer with the buttons or type the answer and press `enter`. The prompt's `timeout:` counts
down in the dialog; when it expires the step fails as the plan says.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(HELP)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
