"""Synthetic run records for tests and ``bench/report_scaling.py``: a population of runs of a
plan with rails, sequencing, BER per lane and corner, soak temperatures, efficiency and
perf-per-watt, built directly as :class:`RunRecord` objects (no plan is run, no store)."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from labctl.report.record import Limits, Measurement, Plan, RunRecord, Sample, Session, Step

T0 = 1_795_000_000.0  # 2026-11-18
CORNERS = [MappingProxyType({"temp": t}) for t in ("0 degC", "25 degC", "85 degC")]
LANES = 4
PLAN = Plan(name="accelerator-evt", version="1.2", hash="ab" * 32, path="accelerator-evt.yaml", text="",
            parameters=MappingProxyType({}), corners=tuple(CORNERS))


def _spec(extra: int) -> list[tuple[str, str, dict, str, float, float, float | None, float | None]]:
    """(step, measurement, labels, unit, mean, sigma, low, high), measured at every corner."""
    rows = [("rails", "VDD_CORE", {"rail": "VDD_CORE"}, "V", 0.75, 0.004, 0.7275, 0.7725),
            ("rails", "VDD_IO", {"rail": "VDD_IO"}, "V", 1.8, 0.006, 1.746, 1.854),
            ("ripple", "VDD_CORE", {"rail": "VDD_CORE"}, "mV", 11.0, 1.5, None, 20.0),
            ("sequencing", "VDD_CORE->VDD_IO", {"rail": "VDD_IO"}, "ms", 2.0, 0.1, 1.0, 5.0),
            ("sequencing", "VDD_IO->VDD_DDR", {"rail": "VDD_DDR"}, "ms", 1.5, 0.08, 1.0, 5.0),
            ("efficiency", "efficiency", {"load": "10 A"}, "%", 88.0, 0.6, 85.0, None),
            ("efficiency", "efficiency", {"load": "30 A"}, "%", 91.0, 0.5, 85.0, None),
            ("perf", "perf_per_watt", {}, "TOPS/W", 2.4, 0.05, 2.0, None),
            ("soak", "temperature", {"sensor": "die"}, "degC", 70.0, 1.2, None, 95.0)]
    rows += [("ber", "ber", {"lane": str(i)}, "", 2e-13 * (1 + i), 5e-14, None, 1e-12) for i in range(LANES)]
    rows += [("aux_rails", f"AUX{i}", {"rail": f"AUX{i}"}, "V", 1.0, 0.01, 0.95, 1.05) for i in range(extra)]
    return rows


def synthetic_records(runs: int = 20, measurements_per_run: int | None = None, *, seed: int = 1,
                      serials: list[str] | None = None, operator: str = "alice",
                      samples_per_run: int = 60) -> list[RunRecord]:
    """``runs`` runs over about runs/1.2 DUTs (some retested), every spec row at every corner;
    ``measurements_per_run`` pads with auxiliary rails to about that many measurements. The
    core rail drifts by 2 σ over the population; values beyond a limit FAIL."""
    rng = np.random.default_rng(seed)
    base = len(_spec(0)) * len(CORNERS)
    spec = _spec(max(0, ((measurements_per_run or 0) - base) // len(CORNERS)))
    duts = serials or [f"EVT-{i:04d}" for i in range(max(1, int(runs / 1.2)))]
    limits = [Limits(low=s[6], high=s[7]) for s in spec]
    labels = [MappingProxyType(s[2]) for s in spec]
    means, sigmas = np.array([s[4] for s in spec]), np.array([s[5] for s in spec])
    steps_of = list(dict.fromkeys(s[0] for s in spec))
    rows_of = {name: [i for i, s in enumerate(spec) if s[0] == name] for name in steps_of}
    t = np.arange(samples_per_run)
    out = []
    for r in range(runs):
        start = T0 + 1800.0 * r
        drift = np.zeros(len(spec))
        drift[0] = 2 * sigmas[0] * r / max(1, runs - 1)
        values = means + drift + rng.standard_normal((len(CORNERS), len(spec))) * sigmas
        steps, failed = [], False
        for ci, corner in enumerate(CORNERS):
            for name in steps_of:
                ms = []
                for i in rows_of[name]:
                    v = float(values[ci, i])
                    lo, hi = spec[i][6], spec[i][7]
                    verdict = "FAIL" if (lo is not None and v < lo) or (hi is not None and v > hi) else "PASS"
                    ms.append(Measurement(name=spec[i][1], value=v, value_text=None, unit=spec[i][3],
                                          limits=limits[i], verdict=verdict, labels=labels[i], time=start + 60 * ci,
                                          seq=len(ms)))
                outcome = "FAIL" if any(m.verdict == "FAIL" for m in ms) else "PASS"
                failed |= outcome == "FAIL"
                samples = ()
                if name == "soak" and ci == len(CORNERS) - 1:
                    curve = 25 + 45 * (1 - np.exp(-t / 12)) + rng.standard_normal(len(t)) * 0.3
                    samples = tuple(Sample("die", float(c), "degC", start + 10.0 * k) for k, c in enumerate(curve))
                steps.append(Step(step_key=f"steps/{name}@{ci}#1", step_id=name, group="steps", check="generic.measure",
                                  corner=corner, corner_index=ci, attempt=1, session=0, tags=(), started_at=start,
                                  ended_at=start + 30, duration=30.0, duration_sim=None, outcome=outcome,
                                  message="a limit was missed" if outcome == "FAIL" else "", final=True,
                                  measurements=tuple(ms), samples=samples))
        outcome = "failed" if failed else "passed"
        out.append(RunRecord(
            run_id=f"run-{r:05d}", outcome=outcome, message="", plan=PLAN,
            station="bench-1" if r % 2 == 0 else "bench-2", slot=None, dut_serial=duts[r % len(duts)],
            operator=operator, host="lab-pc", labctl_version="0.1.0", started_at=start, ended_at=start + 1500,
            resumed_from=None, sessions=(Session(0, start, start + 1500, outcome, "lab-pc", 1, "0.1.0", PLAN.hash,
                                                 False, None),),
            instruments=(), steps=tuple(steps), prompts=(), instrument_errors=(), logs=(), attachments=()))
    return out
