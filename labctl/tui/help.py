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
| `t` | the lab's stations (registry of `labctl agent`s: state, heartbeat, run, step, calibration, queue) |
| `?` / `f1` | this help |
| `q` / `ctrl+c` | quit (during a run: asks, then aborts to the safe state) |
| `ctrl+t` | light / dark colours (`labctl tui --light` starts light) |
| `ctrl+p` | command palette |

## Station screen
| key | action |
|---|---|
| `enter` / `r` | start the selected plan (opens the start form) |
| `ctrl+r` | read the instruments and the plan files now |
| `tab` / `shift+tab` | next / previous pane |

## Start form
| key | action |
|---|---|
| `ctrl+s` / *Start* | start the run (when pre-flight has nothing blocking) |
| `enter` | next field (a barcode scanner's Enter never starts a run) |
| `tab` / `shift+tab` | next / previous field (keys typed after it, however fast, go to that field) |
| `escape` | cancel |

## Run screen
| key | action |
|---|---|
| `a` | abort (asks first: `y` aborts, `n` / `escape` keeps running; the safe state always runs) |
| `l` | show/hide the instrument I/O of the current step |
| `m` | all measurements / only the current step's |
| `p` | next plotted unit (degC, V, A …) |
| `escape` | back to the station screen (when the run is over) |

## Prompt dialog
Answer with the buttons or type the answer and press `enter`; `ctrl+a` aborts the run
instead (asks first). The prompt's `timeout:` counts down in the dialog; when it expires the
dialog is withdrawn and the step ends ERROR.

## History
| key | action |
|---|---|
| `enter` | the run's detail |
| `/` | filters: plan, DUT, station (`*` wildcards), outcome (`failed,error`), since (`7d`, `2026-11-30`) |
| `m` | mark a run; `c` compares the marked run with the one under the cursor |
| `c` | (no mark) compare with the same DUT's previous run |
| `r` | reload |
| `tab` / `shift+tab` | next / previous filter field, the runs list |
| `escape` | back |

## Run detail
| key | action |
|---|---|
| `p` | side by side with the same DUT's previous run |
| `f` | re-run the failed steps on the board now on the fixture (a new run, asks first) |
| `s` | re-run the step under the cursor |
| `tab` | between the measurements and the steps |
| `escape` | back |

## Re-run (asks first)
| key | action |
|---|---|
| `y` | re-run: a new run on the live run screen |
| `n` / `escape` | cancel |

## Compare
| key | action |
|---|---|
| `x` | swap A and B |
| `escape` | back |

## Watch
| key | action |
|---|---|
| `enter` | follow the run under the cursor |
| `f` | follow the newest running run again |
| `d` | the followed run's detail |
| `u` | plot the series of the next unit |
| `escape` | back |

## Stations
| key | action |
|---|---|
| `r` | read the registry now |
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(HELP)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
