"""Run records as OCP Test & Validation diagnostic output (the results spec's JSON lines),
made with the ``ocptv`` package, for data-center hardware validation pipelines.

One OCP test run per labctl run, one after another in the file (each stream starts with its
``schemaVersion`` line and numbers its lines from 0). Timestamps are the recorded wall-clock
times, not the time of the export, in time order within each step. The mapping (docs/reports.md):

* test run: plan name and version; parameters: the plan's parameters plus run id, station,
  plan hash, labctl version, operator; DUT: its serial, with the station and its instruments (identity,
  asset, calibration due) as metadata; end: COMPLETE with PASS/FAIL for a passed/failed run,
  ERROR with NOT_APPLICABLE otherwise.
* test step: one per step (the attempt that counts; every attempt with ``all_attempts``),
  named ``group/step_id [corner]``; measurements with validators from the limits and the
  lane/rail/channel/sensor label as subcomponent; a diagnosis per step (PASS/FAIL, the
  failing measurements named); errors for ERROR/ABORTED/cut-off steps and instrument errors
  (a step an abort never ran ends SKIP with its "not run: …" as a log line);
  samples as measurement series; prompts and logs as log lines; attachments as files.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from labctl.report.formats import ExportOptions
from labctl.report.json_export import iso_utc
from labctl.report.record import Measurement, RunRecord, Sample, Step, format_pairs

_LOCK = threading.Lock()  # ocptv keeps its writer in module state: one export at a time
_SEVERITY = {"debug": "DEBUG", "info": "INFO", "warning": "WARNING", "warn": "WARNING", "error": "ERROR",
             "critical": "FATAL", "fatal": "FATAL"}
_SUBCOMPONENT_LABELS = ("lane", "rail", "channel", "sensor")
_STAMP = '"timestamp": "'


class _Writer:
    """ocptv's output channel: stamps every line with the recorded time of what it carries."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.at = 0.0

    def write(self, buffer: str) -> None:
        stamp = iso_utc(self.at)
        # ocptv's line is json.dumps of the artifact, its timestamp the last key: a line with
        # nothing escaped as \\uXXXX and no NaN or Infinity (which JSON has not) is what
        # parsing and writing it again would give, but for the timestamp, put in as text
        at = buffer.rfind(_STAMP)
        if (at >= 0 and buffer.endswith('"}') and buffer.find('"', at + len(_STAMP)) == len(buffer) - 2
                and "\\u" not in buffer and "NaN" not in buffer and "Infinity" not in buffer):
            self.out.write(f"{buffer[:at + len(_STAMP)]}{stamp}\"}}\n")
            return
        line = json.loads(buffer)
        line["timestamp"] = stamp
        self.out.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")


def _flat(value: Any) -> str | int:
    return value if isinstance(value, int) and not isinstance(value, bool) else (
        value if isinstance(value, str) else json.dumps(value, default=str))


def _validators(tv: Any, m: Measurement) -> list[Any]:
    lim = m.limits
    if lim is None:
        return []
    VT = tv.ValidatorType
    out = []
    if lim.low is not None:
        out.append(tv.Validator(type=VT.GREATER_THAN_OR_EQUAL, value=lim.low, name="low"))
    if lim.high is not None:
        out.append(tv.Validator(type=VT.LESS_THAN_OR_EQUAL, value=lim.high, name="high"))
    if lim.equals is not None and isinstance(lim.equals, str | int | float | bool):
        out.append(tv.Validator(type=VT.EQUAL, value=lim.equals, name="equals"))
    if lim.regex:
        out.append(tv.Validator(type=VT.REGEX_MATCH, value=lim.regex, name="regex"))
    return out


def _step_name(s: Step) -> str:
    """``group/step [corner]``; an attempt that does not count (``all_attempts``) says why not."""
    from labctl.engine.replay import REPLAY_TAG

    corner = f" [{format_pairs(s.corner)}]" if s.corner else ""
    if s.final:
        return f"{s.group}/{s.step_id}{corner}"
    why = ("replayed on resume" if REPLAY_TAG in s.tags else "cut off" if s.outcome in (None, "INTERRUPTED")
           else "retried")
    return f"{s.group}/{s.step_id}{corner} (attempt {s.attempt}, {why})"


def _emit_step(tv: Any, run: Any, w: _Writer, rec: RunRecord, s: Step) -> None:
    """One step's lines in the order of their recorded times (stable for equal times), as the
    OCP output expects of a stream: a line is never stamped earlier than the one before it in
    the step (a time recorded before the step's start, or a step cut off without an end, is
    stamped with the previous line's time)."""
    w.at = s.started_at
    step = run.add_step(_step_name(s))
    step.start()
    items = [*_measurement_items(tv, s, step), *_series_items(s, step), *_step_extras(tv, rec, s, step)]
    for t, emit in sorted(items, key=lambda x: x[0]):
        w.at = max(w.at, t)
        emit()
    w.at = max(w.at, s.ended_at if s.ended_at is not None else s.started_at)
    outcome = rec.outcome_of(s)
    if outcome in ("PASS", "FAIL"):
        failing = [m.name for m in s.measurements if m.verdict == "FAIL"]
        verdict = f"{s.step_id}-{outcome.lower()}"
        step.add_diagnosis(tv.DiagnosisType.PASS if outcome == "PASS" else tv.DiagnosisType.FAIL, verdict=verdict,
                           message=s.message or (f"failing: {', '.join(failing)}" if failing else None),
                           source_location=None)
        step.end(status=tv.TestStatus.COMPLETE)
    elif s.never_ran:  # a step an abort kept from running: "not run: REASON"
        step.add_log(tv.LogSeverity.WARNING, s.message, source_location=None)
        step.end(status=tv.TestStatus.SKIP)
    elif outcome in ("SKIPPED", "RUNNING"):
        note = s.message if outcome == "SKIPPED" else "still running when the report was made"
        if note:
            step.add_log(tv.LogSeverity.INFO, f"{outcome.lower()}: {note}", source_location=None)
        step.end(status=tv.TestStatus.SKIP)
    else:
        step.add_error(symptom=f"step-{outcome.lower()}", message=s.message or outcome, source_location=None)
        step.end(status=tv.TestStatus.ERROR)


_Item = tuple[float, Callable[[], Any]]


def _measurement_items(tv: Any, s: Step, step: Any) -> list[_Item]:
    def emit(m: Measurement) -> None:
        labels = dict(m.labels)
        part = next((f"{k}={labels[k]}" for k in _SUBCOMPONENT_LABELS if k in labels), None)
        value = m.value if m.value is not None else (m.value_text or "")
        meta = tv.Metadata(verdict=m.verdict)
        if m.limits is not None:
            meta["limits"] = m.limits.describe()
        if labels:
            meta["labels"] = {k: str(v) for k, v in labels.items()}
        step.add_measurement(name=m.name, value=value, unit=m.unit or None, validators=_validators(tv, m),
                             subcomponent=tv.Subcomponent(name=part) if part else None, metadata=meta)

    return [(m.time, lambda m=m: emit(m)) for m in s.measurements]


def _series_items(s: Step, step: Any) -> list[_Item]:
    """A measurement series per series name, started with its first point and ended with its last."""
    left = Counter(smp.series for smp in s.samples)
    series: dict[str, Any] = {}

    def emit(smp: Sample) -> None:
        if smp.series not in series:
            series[smp.series] = step.start_measurement_series(name=smp.series, unit=smp.unit or None)
        series[smp.series].add_measurement(value=smp.value, timestamp=smp.time)
        left[smp.series] -= 1
        if not left[smp.series]:
            series[smp.series].end()

    return [(smp.time, lambda smp=smp: emit(smp)) for smp in s.samples]


def _step_extras(tv: Any, rec: RunRecord, s: Step, step: Any) -> list[_Item]:
    """The step's prompts, logs, instrument errors and attachments."""
    items: list[_Item] = []

    def same(x: Any) -> bool:
        return x.step_key == s.step_key and x.session == s.session

    for p in filter(same, rec.prompts):
        text = f"prompt {p.prompt_id}: {p.text} -> {p.answer if p.answer is not None else '(unanswered)'}" + (
            f" ({p.answer_source})" if p.answer_source else "")
        items.append((p.asked_at, lambda text=text: step.add_log(tv.LogSeverity.INFO, text, source_location=None)))
    for lg in filter(same, rec.logs):
        sev = getattr(tv.LogSeverity, _SEVERITY.get(lg.level.lower(), "INFO"))
        items.append((lg.time, lambda sev=sev, msg=lg.message: step.add_log(sev, msg, source_location=None)))
    for e in filter(same, rec.instrument_errors):
        items.append((e.time, lambda e=e: step.add_error(
            symptom=f"instrument-error-{e.role}", message=f"{e.code}, {e.message}", source_location=None)))
    for a in filter(same, rec.attachments):
        meta = tv.Metadata({k: v for k, v in (("sha256", a.sha256), ("size", a.size)) if v is not None})
        items.append((a.time, lambda a=a, meta=meta: step.add_file(
            name=a.name, uri=Path(a.path).absolute().as_uri() if a.path else "file:///",
            content_type=a.media_type, metadata=meta or None)))
    return items


def _emit_run(tv: Any, w: _Writer, rec: RunRecord, all_attempts: bool) -> None:
    params: dict[str, str | int] = {k: _flat(v) for k, v in rec.plan.parameters.items()}
    params.update({"labctl.run_id": rec.run_id, "labctl.station": rec.station, "labctl.plan_hash": rec.plan.hash,
                   "labctl.version": rec.labctl_version})
    if rec.operator:
        params["labctl.operator"] = rec.operator
    run = tv.TestRun(name=rec.plan.name, version=rec.plan.version or "0",
                     command_line=f"labctl run {rec.plan.path or rec.plan.name}", parameters=params)
    dut = tv.Dut(id=rec.dut_serial or "unknown", name=rec.dut_serial, metadata=tv.Metadata({
        "station": rec.station, "slot": rec.slot or "",
        "instruments": [{"role": i.role, "driver": i.driver, "idn": i.idn, "asset_serial": i.asset_serial or "",
                         "calibration_due": i.calibration_due or "", "resource": i.resource}
                        for i in rec.current_instruments],
    }))
    if rec.dut_serial:
        dut.add_hardware_info(name="board", serial_no=rec.dut_serial)
    w.at = rec.started_at
    run.start(dut=dut)
    run_logs = sorted((lg for lg in rec.logs if lg.step_key is None), key=lambda lg: lg.time)

    def logs_until(t: float | None) -> None:  # the run's own log lines, in their place among the steps
        while run_logs and (t is None or run_logs[0].time <= t):
            lg = run_logs.pop(0)
            w.at = lg.time
            run.add_log(getattr(tv.LogSeverity, _SEVERITY.get(lg.level.lower(), "INFO")), lg.message,
                        source_location=None)

    for s in rec.steps:
        if s.final or all_attempts:
            logs_until(s.started_at)
            _emit_step(tv, run, w, rec, s)
    logs_until(None)
    w.at = rec.ended_at if rec.ended_at is not None else max([rec.started_at, *(s.started_at for s in rec.steps)])
    if rec.outcome in ("passed", "failed"):
        run.end(status=tv.TestStatus.COMPLETE,
                result=tv.TestResult.PASS if rec.outcome == "passed" else tv.TestResult.FAIL)
    else:
        run.add_error(symptom=f"run-{rec.outcome}", message=rec.message or rec.outcome, source_location=None)
        run.end(status=tv.TestStatus.ERROR, result=tv.TestResult.NOT_APPLICABLE)


def write_ocp_stream(records: Sequence[RunRecord], out: IO[str], *, all_attempts: bool = False) -> None:
    import ocptv.output as tv
    from ocptv.output import config as ocp_config
    from ocptv.output.config import get_config

    writer = _Writer(out)
    with _LOCK:  # the library keeps its writer in a module global: set it for this export only
        previous, checks = get_config().writer, get_config().enable_runtime_checks
        # Its runtime type checks of every object cost two thirds of an export (6 s for a run
        # of 10,000 steps); what goes in comes typed from the store, and tests check the
        # stream against the OCP JSON schema.
        ocp_config(enable_runtime_checks=False)
        try:
            for rec in records:
                ocp_config(writer=writer)  # a TestRun takes the writer when it is made
                _emit_run(tv, writer, rec, all_attempts)
        finally:
            ocp_config(writer=previous, enable_runtime_checks=checks)


def write_ocp(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        write_ocp_stream(records, fh, all_attempts=options.all_attempts)
