"""Start a run: the plan, the DUT serial (typed or scanned; checked against the board's
console before anything is powered), the operator, parameter overrides (validated as
``--set`` is, each error shown under its field) and the pre-flight: what blocks a start.
An instrument whose calibration expired blocks it unless the form's allow-expired box is
ticked (``labctl run --allow-expired``; recorded with the run)."""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from typing import Any

from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from labctl.tui import fmt
from labctl.tui.catalog import PlanEntry
from labctl.tui.status import StationStatus


@dataclass
class StartCheck:
    """The outcome of validating the form: errors per field, and the pre-flight lines."""

    field_errors: dict[str, str] = field(default_factory=dict)  # field id -> message
    blocking: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.blocking and not self.field_errors


def check_start(entry: PlanEntry, fixture: Any, status: StationStatus | None, dut: str,
                overrides: dict[str, str], *, allow_expired: bool = False) -> StartCheck:
    """Validate a start (blocking: loads the plan with the overrides; call off the UI thread)."""
    from labctl.errors import LabctlError
    from labctl.plan.loader import load_plan

    out = StartCheck()
    try:
        load_plan(entry.path, overrides, fixture)
    except LabctlError as err:
        for problem in getattr(err, "errors", None) or [err]:
            text = problem.message if hasattr(problem, "message") else str(problem)
            name = next((n for n in overrides if text.startswith(f"--set {n}=")), None)
            if name is not None:
                out.field_errors.setdefault(f"param-{name}", text.split(": ", 1)[-1])
            else:
                out.blocking.append(f"plan: {problem.format() if hasattr(problem, 'format') else text}")
    missing = [r for r in entry.requires if r not in fixture.roles]
    if missing:
        out.blocking.append(f"the station has no {', '.join(missing)} (the plan requires it)")
    if status is None:
        out.warnings.append("the station's status is not read yet (the run's own pre-flight still checks it)")
    else:
        out.blocking.extend(status.blocking_with(allow_expired=allow_expired))
        out.blocking.extend(status.problems)
        if allow_expired:
            out.warnings.extend(f"{e} (allowed: recorded with the run)" for e in status.expired)
        for inst in status.instruments:
            if inst.status == "warn" and inst.detail:
                out.warnings.append(f"{inst.role}: {inst.detail}")
        if dut and status.dut_serial and dut != status.dut_serial:
            out.field_errors["dut"] = (f"the board on the fixture reports {status.dut_serial}: "
                                       "put the right board on, or correct the serial")
        elif "dut" in fixture.roles and not status.dut_serial and not status.busy:
            # (while another run holds the bench the console was not read: that is said already)
            out.blocking.append("the DUT console did not answer: is the board on the fixture?")
    return out


class StartRunScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "start", "Start", priority=True),
                # Enter in a field moves on as the key arrives (a priority binding): the keys a
                # scanner or a fast typist sends after it go to the next field, not all to this one
                Binding("enter", "next_field", show=False, priority=True), *fmt.FIELD_KEYS]

    def __init__(self, entry: PlanEntry, status: StationStatus | None) -> None:
        super().__init__()
        self.entry = entry
        self.status = status
        self.start_check: StartCheck | None = None

    def compose(self) -> ComposeResult:
        e = self.entry
        cfg = self.app.config
        with Vertical(id="start-form", classes="dialog"):
            yield fmt.PlainStatic(fmt.plain(f"Start {e.name}"), classes="dialog-title")
            yield fmt.PlainStatic(fmt.plain(f"{e.expanded} steps, {e.corners or 'no'} corners, est. {e.estimate}; "
                                   f"roles {', '.join(e.requires) or '—'}"), classes="dialog-text")
            with VerticalScroll(id="start-fields"):
                yield from self._field("dut", "DUT serial", "scan or type the board's serial",
                                       self.status.dut_serial if self.status else "")
                yield from self._field("operator", "Operator", "who runs this", cfg.operator or _whoami())
                for name, default in e.parameters.items():
                    yield from self._field(f"param-{name}", name, f"default {default}", "")
            # shown while an instrument's calibration has expired (station_polled keeps it current)
            yield Checkbox("run on instruments whose calibration expired (recorded with the run)",
                           id="allow-expired", classes="-hidden" if not self._expired() else "")
            yield fmt.PlainStatic("", id="start-preflight")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel [esc]", id="cancel")
                yield Button("Start [ctrl+s]", id="start", variant="success", disabled=True)

    def _field(self, ident: str, label: str, placeholder: str, value: str) -> ComposeResult:
        with Horizontal(classes="field-row"):
            yield Label(label, classes="field-label")
            yield Input(value=value, placeholder=placeholder, id=ident)
        yield fmt.PlainStatic("", id=f"{ident}-error", classes="field-error -empty")

    def on_mount(self) -> None:
        # the labels as wide as the longest parameter name (up to 32 cells): a name is never
        # cut (input_current_limit read "input_current_l"), and the inputs stay in one column
        widest = max((len(str(label.render())) for label in self.query(".field-label").results(Label)), default=0)
        width = min(max(widest + 1, 16), 33)
        for label in self.query(".field-label").results(Label):
            label.styles.width = width
        for error in self.query(".field-error"):
            error.styles.padding = (0, 0, 0, width)
        self.query_one("#dut", Input).focus()
        self.validate_form()

    # ------------------------------------------------------------------ validation
    def _expired(self) -> list[str]:
        return self.status.expired if self.status is not None else []

    @property
    def allow_expired(self) -> bool:
        """The allow-expired box is shown and ticked."""
        box = self.query_one("#allow-expired", Checkbox)
        return bool(self._expired()) and box.value

    def form_values(self) -> tuple[str, str, dict[str, str]]:
        dut = self.query_one("#dut", Input).value.strip()
        operator = self.query_one("#operator", Input).value.strip()
        overrides = {}
        for name in self.entry.parameters:
            value = self.query_one(f"#param-{name}", Input).value.strip()
            if value:
                overrides[name] = value
        return dut, operator, overrides

    def station_polled(self, status: StationStatus) -> None:
        """A newer reading of the station while the form is open: the pre-flight is checked
        again (a problem fixed meanwhile no longer blocks the start; a new one does)."""
        self.status = status
        self.query_one("#allow-expired", Checkbox).set_class(not self._expired(), "-hidden")
        self.validate_form()

    @on(Input.Changed)
    @on(Checkbox.Changed)
    def _changed(self) -> None:
        self.query_one("#start", Button).disabled = True
        self.validate_form()

    @work(thread=True, exclusive=True, group="start-check")
    def validate_form(self) -> None:
        (dut, operator, overrides), allow = self.app.call_from_thread(lambda: (self.form_values(), self.allow_expired))
        check = check_start(self.entry, self.app.bench.fixture, self.status, dut, overrides, allow_expired=allow)
        if not operator:
            check.field_errors["operator"] = "say who runs this (it is recorded with the run and every answer)"
        self.app.call_from_thread(self.show_check, check, (dut, operator, overrides), allow)

    def show_check(self, check: StartCheck, values: tuple[str, str, dict[str, str]], allow: bool = False) -> None:
        if values != self.form_values() or allow != self.allow_expired:
            return  # the form changed meanwhile: a newer check is on its way
        self.start_check = check
        for widget in self.query(".field-error"):
            ident = (widget.id or "").removesuffix("-error")
            error = check.field_errors.get(ident, "")
            widget.update(fmt.plain(error))
            widget.set_class(not error, "-empty")
        lines = [f"✖ {b}" for b in check.blocking] + [f"▲ {w}" for w in check.warnings]
        pre = self.query_one("#start-preflight", Static)
        if check.ok:
            pre.update(fmt.plain("\n".join(["Pre-flight: nothing blocks the start", *lines])))
        else:
            n = len(check.blocking) + len(check.field_errors)
            pre.update(fmt.plain("\n".join([f"Pre-flight: {n} problem(s) block the start", *lines])))
        pre.set_class(not check.ok, "-blocked")
        pre.set_class(check.ok, "-clear")
        self.query_one("#start", Button).disabled = not check.ok

    # ------------------------------------------------------------------ actions
    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        if self.start_check is None or not self.start_check.ok or self.query_one("#start", Button).disabled:
            self.notify("the start is blocked: see the pre-flight", severity="warning")
            return
        dut, operator, overrides = self.form_values()
        from labctl.launch import RunRequest
        from labctl.tui.run import RunScreen
        from labctl.tui.session import RunSession

        cfg = self.app.config
        session = RunSession(None, operator=operator)
        session.request = RunRequest(
            plan=self.entry.path, fixture=self.app.bench.fixture_path, dut=dut or None, overrides=overrides,
            db=cfg.db, operator=operator, time_scale=cfg.time_scale, prompt_handler=session.prompter,
            allow_expired=self.allow_expired)
        self.app.run_session = session
        self.dismiss(None)
        self.app.push_screen(RunScreen(session, self.entry))

    def action_next_field(self) -> None:
        """Enter (a barcode scanner ends with one) in a field goes to the next field: it never
        starts a run; starting takes ctrl+s or the Start button. Elsewhere (a button, the
        checkbox) Enter does what it does there."""
        if not isinstance(self.focused, Input):
            raise SkipAction()
        self.focus_next(Input)


def _whoami() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001
        return ""
