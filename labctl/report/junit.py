"""JUnit XML of run records: a ``<testsuite>`` per run and corner, a ``<testcase>`` per step
(the attempt that counts), failures with the failing measurements against their limits, so a
CI system shows what failed and by how much. An aborted run has one ``<error>``, the step the
abort cut short; the steps it never ran are ``<skipped>`` with the reason. A run that did not
pass although no step shows an error or a failure (aborted as its last step passed, a result
not saved) gets one more test case, ``run``, with the run's outcome as its ``<error>``: a run
that did not pass never reads as passed. The teardown's safe state of each role appears only
when it did not pass."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from labctl.console import format_value
from labctl.report.formats import ExportOptions
from labctl.report.json_export import iso_utc
from labctl.report.record import Measurement, RunRecord, Step, format_pairs

_KIND = {"FAIL": "failure", "ERROR": "error", "ABORTED": "error", "INTERRUPTED": "error", "SKIPPED": "skipped",
         "RUNNING": "skipped"}


def measurement_line(m: Measurement) -> str:
    """``VDD_CORE (rail=VDD_CORE) = 0.70 V [0.75 V ± 3 %] FAIL``."""
    labels = format_pairs(m.labels)
    value = m.display_value
    limit = f" [{m.limits.describe()}]" if m.limits and m.limits.describe() else ""
    return (f"{m.name}{f' ({labels})' if labels else ''} = {'-' if value is None else format_value(value)} "
            f"{m.unit}{limit} {m.verdict}")


def _suites(rec: RunRecord) -> list[tuple[str, list[Step]]]:
    """(corner text, steps): the steps outside corners first, then one group per corner."""
    groups: dict[int | None, list[Step]] = {}
    for s in rec.steps:
        if s.final and (not s.is_safe_state or s.outcome != "PASS"):
            groups.setdefault(s.corner_index, []).append(s)
    suites = [(format_pairs(steps[0].corner), steps) for _, steps in
              sorted(groups.items(), key=lambda kv: -1 if kv[0] is None else kv[0])]
    return suites or [("", [])]  # a run without a step still has its suite: its id, DUT, station, outcome


def _unrun_skipped(rec: RunRecord) -> frozenset[tuple[int, str]]:
    """(session, step key) of the steps an abort left unrun that are ``<skipped>``: all of them,
    but for the first when no other step is an error or a failure (the abort came between two
    steps, or as a step passed): that one carries the ``<error>``, so an aborted run never
    reads as passed."""
    unrun = [(s.session, s.step_key) for s in rec.steps if s.final and s.never_ran]
    shown = any(s.final and not s.never_ran and rec.outcome_of(s) in ("ABORTED", "ERROR", "FAIL", "INTERRUPTED")
                for s in rec.steps)
    return frozenset(unrun if shown else unrun[1:])


def _kind(rec: RunRecord, s: Step, skipped: frozenset[tuple[int, str]]) -> str | None:
    """``failure``, ``error``, ``skipped`` (also a step an abort left unrun) or None (passed)."""
    return "skipped" if (s.session, s.step_key) in skipped else _KIND.get(rec.outcome_of(s))


def _case(suite: ET.Element, rec: RunRecord, s: Step, kind: str | None, title: str = "") -> None:
    case = ET.SubElement(suite, "testcase", classname=f"{rec.plan.name}.{s.group}", name=s.step_id,
                         time=f"{s.duration or 0.0:.3f}")
    if title:  # the step's name: in the plan (a test case property, as pytest writes them)
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="title", value=title)
    outcome = rec.outcome_of(s)
    if kind:
        bad = [m for m in s.measurements if m.verdict == "FAIL"]
        message = s.message or ("still running when the report was made" if outcome == "RUNNING" else outcome)
        el = ET.SubElement(case, kind, message=message, type=outcome)
        if kind != "skipped":
            detail = [message, *(measurement_line(m) for m in bad)]
            if s.attempt > 1:
                detail.append(f"attempt {s.attempt}")
            el.text = "\n".join(detail)
    lines = [measurement_line(m) for m in s.measurements]
    if lines:
        ET.SubElement(case, "system-out").text = "\n".join(lines)


#: run outcomes that are not a pass (a run still ``running`` has not passed either: a report made
#: meanwhile must not read as green)
_NOT_PASSED = ("failed", "error", "aborted", "interrupted", "running")


def _run_case(suite: ET.Element, rec: RunRecord) -> None:
    """The ``run`` test case: the run's outcome as an ``<error>`` (no step shows it)."""
    case = ET.SubElement(suite, "testcase", classname=f"{rec.plan.name}.run", name="run", time="0.000")
    message = (f"run {rec.outcome}" + (f": {rec.message}" if rec.message else "") if rec.outcome != "running"
               else "run still running when the report was made: it has not passed (yet)")
    ET.SubElement(case, "error", message=message, type=rec.outcome.upper()).text = message


def junit_tree(records: Sequence[RunRecord]) -> ET.Element:
    root = ET.Element("testsuites", name="labctl")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for rec in records:
        skipped = _unrun_skipped(rec)
        titles = rec.plan.step_titles()
        suites = [(corner, steps, [_kind(rec, s, skipped) for s in steps]) for corner, steps in _suites(rec)]
        shown = any(k in ("failure", "error") for _corner, _steps, kinds in suites for k in kinds)
        run_case = rec.outcome in _NOT_PASSED and not shown  # in the first suite
        for index, (corner, steps, kinds) in enumerate(suites):
            name = f"{rec.plan.name} {rec.plan.version} {rec.dut_serial or '-'} {rec.run_id}".replace("  ", " ")
            extra = run_case and index == 0
            counts = {
                "tests": len(steps) + extra,
                "failures": kinds.count("failure"),
                "errors": kinds.count("error") + extra,
                "skipped": kinds.count("skipped"),
            }
            for k, v in counts.items():
                totals[k] += v
            suite = ET.SubElement(root, "testsuite", name=f"{name} [{corner}]" if corner else name,
                                  timestamp=(iso_utc(steps[0].started_at if steps else rec.started_at) or "")[:19],
                                  time=f"{sum(s.duration or 0.0 for s in steps):.3f}",
                                  hostname=rec.host, **{k: str(v) for k, v in counts.items()})
            props = ET.SubElement(suite, "properties")
            for key, value in (("run_id", rec.run_id), ("run_outcome", rec.outcome), ("plan", rec.plan.name),
                               ("plan_version", rec.plan.version), ("plan_hash", rec.plan.hash),
                               ("station", rec.station), ("dut", rec.dut_serial), ("operator", rec.operator),
                               ("corner", corner)):
                if value:
                    ET.SubElement(props, "property", name=key, value=str(value))
            for i in rec.current_instruments:  # the calibration evidence (only what was recorded)
                evidence = "; ".join(x for x in (i.idn, f"asset {i.asset_serial}" if i.asset_serial else "",
                                                 f"calibration due {i.calibration_due}" if i.calibration_due else "")
                                     if x)
                if evidence:
                    ET.SubElement(props, "property", name=f"instrument.{i.role}", value=evidence)
            for s, kind in zip(steps, kinds, strict=True):
                _case(suite, rec, s, kind, titles.get(s.step_id, ""))
            if extra:
                _run_case(suite, rec)
    for k, v in totals.items():
        root.set(k, str(v))
    return root


def junit_xml(records: Sequence[RunRecord]) -> str:
    return ET.tostring(junit_tree(records), encoding="unicode", xml_declaration=True)


def write_junit(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    Path(path).write_text(junit_xml(records), encoding="utf-8")
