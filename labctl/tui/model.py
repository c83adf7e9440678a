"""What the run screen shows, built from the engine's events (no Textual here: the screen
applies a whole batch of events to this model, then re-renders what changed once)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from labctl.console import visible
from labctl.engine import events as ev

MAX_POINTS = 600  # per time series kept for the plots
MAX_MEASUREMENTS = 2000  # kept for the "all measurements" view


@dataclass
class StepRow:
    key: str  # step key without the attempt ("steps/soak[1]")
    step_id: str
    group: str  # setup | steps | teardown | safe-state
    check: str
    corner_index: int | None
    corner: dict[str, Any]
    attempt: int = 1
    status: str = "RUNNING"  # RUNNING, or a StepOutcome value
    duration: float | None = None
    duration_sim: float | None = None
    message: str = ""
    started: float = 0.0  # wall time of the current attempt's start
    order: int = 0  # position in the run (the tree's order)
    flagged: dict[str, int] = field(default_factory=dict)  # MARGINAL / FAIL -> measurements of this attempt
    not_run: bool = False  # recorded without running (after an abort or a stop, or its when: was false)


@dataclass
class Measurement:
    step_key: str
    name: str
    value: Any
    unit: str
    limits: ev.Limits | None
    verdict: str
    labels: dict[str, str]


@dataclass
class RunModel:
    run_id: str = ""
    plan: str = ""
    dut: str = ""
    operator: str = ""
    station: str = ""
    corners: list[dict[str, Any]] = field(default_factory=list)
    steps: dict[str, StepRow] = field(default_factory=dict)
    current: str | None = None  # key of the step running now
    measurements: deque[Measurement] = field(default_factory=lambda: deque(maxlen=MAX_MEASUREMENTS))
    series: dict[str, deque[tuple[float, float]]] = field(default_factory=dict)
    series_unit: dict[str, str] = field(default_factory=dict)
    progress_text: str = ""
    progress_fraction: float | None = None
    outcome: str = ""  # RunOutcome value once the run ended
    outcome_message: str = ""
    counts: dict[str, int] = field(default_factory=dict)  # verdict -> measurements
    # what changed since the screen last looked (cleared by the screen)
    changed_steps: set[str] = field(default_factory=set)
    new_measurements: list[Measurement] = field(default_factory=list)
    new_logs: list[tuple[str, str]] = field(default_factory=list)  # (level, text)
    prompts: list[ev.PromptAsked] = field(default_factory=list)
    samples_changed: bool = False
    header_changed: bool = False

    def apply(self, e: Any) -> None:  # noqa: C901 - one branch per event kind
        if isinstance(e, ev.RunStarted):
            self.run_id, self.plan, self.dut = e.run_id, f"{e.plan_name} v{e.plan_version}", e.dut_serial or ""
            self.operator, self.station, self.corners = e.operator or "", e.station, list(e.corners)
            self.header_changed = True
        elif isinstance(e, ev.StepStarted):
            key, _, _ = e.step_key.rpartition("#")
            group = "safe-state" if e.check == "safe_state" else e.group
            row = self.steps.get(key)
            if row is None:
                row = self.steps[key] = StepRow(key, e.step_id, group, e.check, e.corner_index, dict(e.corner),
                                                order=len(self.steps))
            row.attempt, row.status, row.started, row.message = e.attempt, "RUNNING", e.time, ""
            row.flagged = {}
            row.duration = row.duration_sim = None
            row.not_run = False
            self.current = key
            self.progress_text, self.progress_fraction = f"{e.step_id} ({e.check})", None
            self.changed_steps.add(key)
        elif isinstance(e, ev.StepEnded):
            key = e.step_key.rpartition("#")[0]
            row = self.steps.get(key)
            if row is not None:
                row.status, row.duration, row.duration_sim, row.message = (
                    e.outcome.value, e.duration, e.duration_sim, visible(e.message))
                # the engine records a step it does not run as started and ended at once
                row.not_run = e.outcome.value in ("ABORTED", "SKIPPED") and not e.duration and e.duration_sim is None
                self.changed_steps.add(key)
                if e.message and e.outcome.value not in ("PASS", "SKIPPED"):
                    self.new_logs.append(("error" if e.outcome.value in ("FAIL", "ERROR") else "warning",
                                          f"{row.step_id}: {e.outcome.value}: {row.message}"))
        elif isinstance(e, ev.MeasurementRecorded):
            m = Measurement(e.step_key.rpartition("#")[0], e.name, e.value, e.unit, e.limits, e.verdict.value,
                            dict(e.labels))
            self.measurements.append(m)
            self.new_measurements.append(m)
            self.counts[m.verdict] = self.counts.get(m.verdict, 0) + 1
            self.header_changed = True
            row = self.steps.get(m.step_key)
            if row is not None and m.verdict in ("MARGINAL", "FAIL"):
                row.flagged[m.verdict] = row.flagged.get(m.verdict, 0) + 1
                self.changed_steps.add(m.step_key)
        elif isinstance(e, ev.SampleRecorded):
            points = self.series.get(e.series)
            if points is None:
                points = self.series[e.series] = deque(maxlen=MAX_POINTS)
            points.append((e.time, e.value))
            self.series_unit[e.series] = e.unit
            self.samples_changed = True
        elif isinstance(e, ev.Progress):
            self.progress_text, self.progress_fraction = visible(e.text), e.fraction
        elif isinstance(e, ev.PromptAsked):
            self.prompts.append(e)
            self.new_logs.append(("info", visible(f"prompt {e.prompt_id}: {e.text}")))
        elif isinstance(e, ev.PromptAnswered):
            self.new_logs.append(("info", visible(f"prompt {e.prompt_id} answered {e.answer!r} by {e.source}")))
        elif isinstance(e, ev.LogMessage):
            if e.level != "debug":
                self.new_logs.append((e.level, visible(e.message)))
        elif isinstance(e, ev.InstrumentErrorReported):
            self.new_logs.append(("error", visible(f"{e.role}: error {e.code:+d} {e.message}")))
        elif isinstance(e, ev.RunEnded):
            self.outcome, self.outcome_message = e.outcome.value, visible(e.message)
            self.current = None
            self.progress_text, self.progress_fraction = f"run {e.outcome.value}: {self.outcome_message}", 1.0
            self.header_changed = True

    def take_changes(self) -> tuple[set[str], list[Measurement], list[tuple[str, str]], list[ev.PromptAsked]]:
        out = (self.changed_steps, self.new_measurements, self.new_logs, self.prompts)
        self.changed_steps, self.new_measurements, self.new_logs, self.prompts = set(), [], [], []
        return out

    def corner_label(self, index: int | None) -> str:
        if index is None:
            return "steps"
        values = self.corners[index] if 0 <= index < len(self.corners) else {}
        text = ", ".join(f"{k}={v}" for k, v in values.items()) if isinstance(values, dict) else ""
        return f"corner {index + 1}" + (f" [{text}]" if text else "")

    def ber_by_lane(self) -> list[tuple[str, float]]:
        """The latest BER measured per lane (for the bar chart)."""
        latest: dict[str, float] = {}
        for m in self.measurements:
            if "ber" in m.name.lower() and "lane" in m.labels and isinstance(m.value, int | float):
                latest[m.labels["lane"]] = float(m.value)
        return sorted(latest.items(), key=lambda kv: (len(kv[0]), kv[0]))


def margin(value: Any, limits: ev.Limits | None, unit: str = "") -> tuple[str, float | None]:
    """Distance to the nearest limit, in the measurement's unit and as a share of the
    tolerance band: ("+0.012 V (24 %)", 0.24). Negative when outside. ("", None) for
    measurements without numeric limits."""
    if limits is None or not isinstance(value, int | float) or isinstance(value, bool):
        return "", None
    lo, hi = limits.low, limits.high
    dists = [d for d in ((value - lo) if lo is not None else None, (hi - value) if hi is not None else None)
             if d is not None]
    if not dists:
        return "", None
    nearest = min(dists)
    text = f"{nearest:+.4g} {unit}".rstrip()
    if lo is not None and hi is not None and hi > lo:
        share = nearest / ((hi - lo) / 2)
        return f"{text} ({share * 100:.0f} %)", share
    return text, None


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
