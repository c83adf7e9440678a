"""Analytics against figures computed by hand (docs/reports.md, "Statistics")."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from labctl.analysis.capability import capability
from labctl.analysis.compare import compare
from labctl.analysis.frames import prepare
from labctl.analysis.pareto import pareto
from labctl.analysis.trends import by_group, drift
from labctl.analysis.yields import run_yield, step_yield

T0 = pd.Timestamp("2026-11-20T08:00:00Z")


def row(run, dut, step, name, value, low=None, high=None, verdict="PASS", *, station="bench-1",
        version="1.0", corner=None, labels=None, attempt=1, day=0, unit="V"):
    return {"run": run, "plan": "evt", "version": version, "station": station, "DUT": dut,
            "corner": corner or {}, "step": step, "attempt": attempt, "measurement": name,
            "labels": labels or {}, "value": value, "unit": unit,
            "limits": {"low": low, "high": high}, "verdict": verdict, "time": T0 + pd.Timedelta(days=day)}


def frame(rows):
    return pd.DataFrame(rows)


def test_cp_cpk_two_sided_match_hand_computation():
    # values 1..5: mean 3, sample sigma sqrt(2.5) = 1.5811; limits 0..9
    df = prepare(frame([row(f"r{i}", f"D{i}", "rails", "vdd", float(i), 0.0, 9.0) for i in range(1, 6)]))
    c = capability(df).iloc[0]
    sigma = math.sqrt(2.5)
    assert c["std"] == pytest.approx(sigma)
    assert c["cp"] == pytest.approx(9 / (6 * sigma))  # 0.9487
    assert c["cpk"] == pytest.approx(3 / (3 * sigma))  # 0.6325 (the lower limit is nearer)
    assert c["side"] == "LSL"
    assert c["rating"] == "not capable"


@pytest.mark.parametrize(("low", "high", "cpk", "side"), [
    (None, 9.0, 6 / (3 * math.sqrt(2.5)), "USL"),   # 1.2649: marginal
    (0.0, None, 3 / (3 * math.sqrt(2.5)), "LSL"),   # 0.6325
])
def test_one_sided_cpk_uses_the_one_limit(low, high, cpk, side):
    df = prepare(frame([row(f"r{i}", f"D{i}", "rails", "vdd", float(i), low, high) for i in range(1, 6)]))
    c = capability(df).iloc[0]
    assert math.isnan(c["cp"])
    assert c["cpk"] == pytest.approx(cpk)
    assert c["side"] == side
    assert c["rating"] == ("marginal" if side == "USL" else "not capable")


def test_capable_rating_and_worst_first():
    good = [row(f"g{i}", f"D{i}", "rails", "good", 5.0 + 0.01 * i, 0.0, 10.0) for i in range(5)]
    bad = [row(f"g{i}", f"D{i}", "rails", "bad", float(i), 0.0, 9.0) for i in range(1, 6)]
    c = capability(prepare(frame(good + bad)))
    assert list(c["measurement"]) == ["bad", "good"]
    assert c.iloc[1]["rating"] == "capable"


def test_capability_keeps_only_the_last_attempt():
    rows = [row("r1", "D1", "rails", "vdd", 100.0, 0.0, 9.0, "FAIL", attempt=1)]
    rows += [row(f"r{i}", f"D{i}", "rails", "vdd", float(i), 0.0, 9.0, attempt=2 if i == 1 else 1)
             for i in range(1, 6)]
    c = capability(prepare(frame(rows))).iloc[0]
    assert c["n"] == 5 and c["mean"] == pytest.approx(3.0)


def runs_frame(outcomes):
    """{dut: [outcome of run 1, run 2…]} → runs frame."""
    rows = []
    for dut, seq in outcomes.items():
        for i, outcome in enumerate(seq):
            rows.append({"run": f"{dut}-{i}", "plan": "evt", "DUT": dut, "station": "bench-1",
                         "started": T0 + pd.Timedelta(hours=i), "outcome": outcome})
    return pd.DataFrame(rows)


def test_first_pass_and_final_yield_per_plan():
    runs = runs_frame({"A": ["failed", "passed"], "B": ["passed"], "C": ["failed", "error"],
                       "D": ["passed", "failed"], "E": ["running"]})
    y = run_yield(runs).iloc[0]
    assert y["duts"] == 4  # E is still running
    assert y["first_pass"] == 2 and y["first_pass_yield"] == pytest.approx(0.5)  # B, D
    assert y["final_pass"] == 2 and y["final_yield"] == pytest.approx(0.5)  # A, B
    assert y["runs"] == 7


def test_step_yield_first_pass_needs_first_attempt_and_every_corner():
    runs = runs_frame({"A": ["passed"], "B": ["passed"], "C": ["failed", "passed"]})
    steps = pd.DataFrame([
        {"run": "A-0", "step": "soak", "corner": "t=25", "attempt": 1, "outcome": "PASS"},
        {"run": "A-0", "step": "soak", "corner": "t=85", "attempt": 1, "outcome": "PASS"},
        {"run": "B-0", "step": "soak", "corner": "t=25", "attempt": 1, "outcome": "PASS"},
        {"run": "B-0", "step": "soak", "corner": "t=85", "attempt": 1, "outcome": "FAIL"},
        {"run": "B-0", "step": "soak", "corner": "t=85", "attempt": 2, "outcome": "PASS"},  # retry passed
        {"run": "C-0", "step": "soak", "corner": "t=25", "attempt": 1, "outcome": "FAIL"},
        {"run": "C-1", "step": "soak", "corner": "t=25", "attempt": 1, "outcome": "PASS"},
        {"run": "A-0", "step": "ber", "corner": "", "attempt": 1, "outcome": "SKIPPED"},
    ])
    y = step_yield(steps, runs)
    assert list(y["step"]) == ["soak"]
    soak = y.iloc[0]
    assert soak["duts"] == 3
    assert soak["first_pass_yield"] == pytest.approx(1 / 3)  # only A
    assert soak["final_yield"] == pytest.approx(1.0)


def test_pareto_counts_runs_per_cause_with_cumulative_share():
    rows = [row(f"r{i}", f"D{i}", "rails", "vdd", 2.0, 0, 1, "FAIL", labels={"rail": "core"}) for i in range(3)]
    rows += [row("r0", "D0", "rails", "vdd", 2.0, 0, 1, "FAIL", labels={"rail": "core"}, attempt=2)]  # same run
    rows += [row("r3", "D3", "ber", "ber", 1e-9, None, 1e-12, "FAIL", labels={"lane": "0"})]
    rows += [row("r4", "D4", "ber", "ber", 1e-15, None, 1e-12, "PASS", labels={"lane": "0"})]
    steps = pd.DataFrame([{"run": "r4", "step": "soak", "outcome": "ERROR"}])
    p = pareto(prepare(frame(rows), last_attempt=False), steps)
    assert list(p["cause"]) == ["rails / vdd [rail=core]", "ber / ber [lane=0]", "soak / (error)"]
    assert list(p["runs"]) == [3, 1, 1]
    assert list(p["share"]) == pytest.approx([0.6, 0.2, 0.2])
    assert list(p["cumulative"]) == pytest.approx([0.6, 0.8, 1.0])


def test_compare_flags_the_shifted_measurement_only():
    rows = []
    for i in range(20):
        noise = (i % 5 - 2) * 0.01  # mean 0, sample sd 0.0145
        rows.append(row(f"a{i}", f"A{i}", "rails", "vdd", 0.75 + noise, station="bench-1"))
        rows.append(row(f"b{i}", f"B{i}", "rails", "vdd", 0.80 + noise, station="bench-2"))
        rows.append(row(f"a{i}", f"A{i}", "rails", "vio", 1.8 + noise, station="bench-1"))
        rows.append(row(f"b{i}", f"B{i}", "rails", "vio", 1.8 - noise, station="bench-2"))
    c = compare(prepare(frame(rows)), "station", "bench-1", "bench-2")
    vdd = c[c["measurement"] == "vdd"].iloc[0]
    vio = c[c["measurement"] == "vio"].iloc[0]
    sd = pd.Series([(i % 5 - 2) * 0.01 for i in range(20)]).std()
    assert vdd["shift_sigma"] == pytest.approx(0.05 / sd)
    assert vdd["t"] == pytest.approx(0.05 / math.sqrt(2 * sd * sd / 20))
    assert vdd["differs"] and vdd["p"] < 1e-6
    assert not vio["differs"] and vio["p"] == pytest.approx(1.0)
    assert c.iloc[0]["measurement"] == "vdd"  # flagged first


def test_compare_with_wildcards_splits_board_revisions():
    rows = [row(f"a{i}", f"REVA-{i}", "rails", "vdd", 1.0 + i * 0.001) for i in range(5)]
    rows += [row(f"b{i}", f"REVB-{i}", "rails", "vdd", 2.0 + i * 0.001) for i in range(5)]
    c = compare(prepare(frame(rows)), "DUT", "REVA-*", "REVB-*").iloc[0]
    assert c["n_a"] == 5 and c["n_b"] == 5 and c["differs"]


def test_drift_flags_a_steady_rise_over_days_not_noise():
    rows = [row(f"r{d}", f"D{d}", "soak", "temp", 50.0 + 0.5 * d, unit="degC", day=d) for d in range(10)]
    rows += [row(f"r{d}", f"D{d}", "soak", "flat", 50.0 + (0.5 if d % 2 else -0.5), unit="degC", day=d)
             for d in range(10)]
    d = drift(prepare(frame(rows)))
    temp = d[d["measurement"] == "temp"].iloc[0]
    assert temp["slope_per_day"] == pytest.approx(0.5)
    assert temp["span_days"] == pytest.approx(9.0)
    assert temp["flag"]
    assert not d[d["measurement"] == "flat"].iloc[0]["flag"]


def test_by_group_shift_of_a_station():
    rows = [row(f"r{i}", f"D{i}", "rails", "vdd", v, station=s)
            for i, (v, s) in enumerate([(1.0, "b1"), (1.0, "b1"), (2.0, "b2"), (2.0, "b2")])]
    g = by_group(prepare(frame(rows)), "station").set_index("station")
    assert g.loc["b1", "mean"] == 1.0 and g.loc["b2", "n"] == 2
    assert g.loc["b2", "shift_sigma"] == pytest.approx(0.5 / pd.Series([1.0, 1, 2, 2]).std())


def test_yield_per_dut_and_per_station():
    runs = runs_frame({"A": ["failed", "passed"], "B": ["passed"]})
    per_dut = run_yield(runs, by=["DUT"]).set_index("DUT")
    assert per_dut.loc["A", "first_pass_yield"] == 0 and per_dut.loc["A", "final_yield"] == 1
    assert per_dut.loc["A", "runs"] == 2
    per_station = run_yield(runs, by=["station"])
    assert list(per_station["duts"]) == [2]


def test_compare_does_not_flag_a_population_of_one():
    rows = [row(f"a{i}", f"REVA-{i}", "rails", "vdd", 1.0 + i * 0.001) for i in range(5)]
    rows += [row("b0", "REVB-0", "rails", "vdd", 2.0)]
    c = compare(prepare(frame(rows)), "DUT", "REVA-*", "REVB-*").iloc[0]
    assert c["n_b"] == 1 and not c["differs"] and math.isnan(c["p"])


def test_drift_needs_enough_points_to_be_significant():
    rows = [row(f"r{d}", f"D{d}", "soak", "temp", v, unit="degC", day=d) for d, v in enumerate([50.0, 50.4, 51.0])]
    d = drift(prepare(frame(rows))).iloc[0]
    assert d["drift_sigma"] > 1 and not d["flag"]  # three points: a slope, not evidence
    assert 0 < d["p"] < 1  # ... whose p-value is shown all the same (it was empty below five)
    rows.append(row("r3", "D3", "soak", "temp", 51.3, unit="degC", day=3))
    four = drift(prepare(frame(rows))).iloc[0]
    assert four["p"] < d["p"] and not four["flag"]


@pytest.mark.parametrize(("value", "low", "high", "cp", "cpk", "side", "rating"), [
    (0.1, 0.0, 9.0, math.inf, math.inf, "LSL", "n/a (σ = 0)"),  # inside: unbounded, not rated
    (7.0, None, 9.0, None, math.inf, "USL", "n/a (σ = 0)"),     # one-sided, inside
    (9.5, 0.0, 9.0, math.inf, -math.inf, "USL", "not capable"),  # every value outside a limit
    (9.0, 0.0, 9.0, math.inf, 0.0, "USL", "not capable"),        # every value on the limit
])
def test_identical_values_give_unbounded_indices_not_a_blank(value, low, high, cp, cpk, side, rating):
    """σ = 0: a quality engineer sees why the index has no finite value (docs/reports.md), not '-'."""
    df = prepare(frame([row(f"r{i}", f"D{i}", "rails", "vdd", value, low, high) for i in range(3)]))
    c = capability(df).iloc[0]
    assert (c["std"], c["mean"]) == (0.0, value)
    assert math.isnan(c["cp"]) if cp is None else c["cp"] == cp
    assert (c["cpk"], c["side"], c["rating"]) == (cpk, side, rating)


def test_one_value_is_still_undefined_and_values_without_spread_sort_after_rated_ones():
    rows = [row("r0", "D0", "rails", "single", 1.0, 0.0, 9.0)]
    rows += [row(f"r{i}", f"D{i}", "rails", "flat", 5.0, 0.0, 9.0) for i in range(3)]
    rows += [row(f"r{i}", f"D{i}", "rails", "spread", float(i), 0.0, 9.0) for i in range(1, 6)]
    c = capability(prepare(frame(rows)))
    assert list(c["measurement"]) == ["spread", "flat", "single"]
    assert list(c["rating"]) == ["not capable", "n/a (σ = 0)", "-"]
