"""A population of run records as the frames analytics and the HTML report work on: the
record's measurements frame (every attempt), and one frame each of runs, steps and samples.

Built from :class:`~labctl.report.record.RunRecord` objects only (never from the store)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from labctl.report.record import RunRecord, format_pairs, measurements_frame

RUN_COLUMNS = ["run", "plan", "version", "station", "DUT", "operator", "started", "ended", "outcome",
               "message", "labctl_version"]
STEP_COLUMNS = ["run", "step", "title", "corner", "attempt", "outcome", "duration", "duration_sim", "message",
                "final"]
SAMPLE_COLUMNS = ["run", "step", "series", "time", "value", "unit"]


@dataclass
class Population:
    """``measurements``: the record's measurements frame with every attempt (``final`` marks the
    one that counts); ``runs``: RUN_COLUMNS; ``steps``: STEP_COLUMNS (every attempt, ``final``
    marks the one that counts; safe-state steps left out); ``samples``: SAMPLE_COLUMNS (times as
    UTC timestamps); ``details``: per run id, the small context a run's page shows (host, plan hash, instruments, prompts, instrument errors)."""

    measurements: pd.DataFrame
    runs: pd.DataFrame
    steps: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=STEP_COLUMNS))
    samples: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SAMPLE_COLUMNS))
    title: str = "labctl test report"
    details: dict[str, dict[str, Any]] = field(default_factory=dict)


def _utc(seconds: Sequence[float | None]) -> pd.Series:
    return pd.to_datetime(pd.Series(seconds, dtype="float64"), unit="s", utc=True)


def population(records: Sequence[RunRecord], *, samples: bool = True, title: str | None = None) -> Population:
    runs = pd.DataFrame([(r.run_id, r.plan.name, r.plan.version, r.station + (f"/{r.slot}" if r.slot else ""),
                          r.dut_serial or "", r.operator or "", r.outcome, r.message, r.labctl_version)
                         for r in records],
                        columns=["run", "plan", "version", "station", "DUT", "operator", "outcome", "message",
                                 "labctl_version"])
    runs["started"] = _utc([r.started_at for r in records])
    runs["ended"] = _utc([r.ended_at for r in records])
    titles = {r.run_id: r.plan.step_titles() for r in records}
    steps = pd.DataFrame([(r.run_id, s.step_id, titles[r.run_id].get(s.step_id, ""), format_pairs(s.corner), s.attempt,
                           s.outcome, s.duration, s.duration_sim, s.message, s.final)
                          for r in records for s in r.steps if not s.is_safe_state], columns=STEP_COLUMNS)
    smp = pd.DataFrame([(r.run_id, s.step_id, x.series, x.time, x.value, x.unit)
                        for r in records for s in r.steps for x in s.samples] if samples else [],
                       columns=SAMPLE_COLUMNS)
    smp["time"] = _utc(smp["time"].tolist())
    if title is None:
        plans = sorted({f"{r.plan.name} {r.plan.version}".strip() for r in records})
        title = (f"Test report: {', '.join(plans[:3])}" + (" …" if len(plans) > 3 else "")) if plans else \
            "labctl test report"
    return Population(measurements_frame(records, final_only=False), runs[RUN_COLUMNS], steps, smp, title,
                      {r.run_id: _details(r) for r in records})


def _details(r: RunRecord) -> dict[str, Any]:
    return {
        "host": r.host, "plan_hash": r.plan.hash, "plan_path": r.plan.path, "sessions": len(r.sessions),
        "parameters": format_pairs(r.plan.parameters),
        "instruments": [{"role": i.role, "driver": i.driver, "identity": i.idn, "asset": i.asset_serial or "-",
                         "calibration_due": i.calibration_due or "-", "resource": i.resource}
                        for i in r.current_instruments],
        "prompts": [{"step": p.step_key or "-", "text": p.text, "answer": p.answer or "(unanswered)",
                     "source": p.answer_source or "-"} for p in r.prompts],
        "errors": [{"step": e.step_key or "-", "role": e.role, "code": e.code, "message": e.message}
                   for e in r.instrument_errors],
    }
