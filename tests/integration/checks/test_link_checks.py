"""Link checks on the simulated bench: training, BER (duration and verdict from the Poisson
bound), eye margins; a marginal lane fails BER naming the lane."""

from __future__ import annotations

import pytest

from labctl.checks.ber import ber_upper_bound, test_duration
from labctl.checks.link import upper_bound
from labctl.engine.events import Verdict
from tests.integration.checks.conftest import lim

pytestmark = pytest.mark.timeout(90)

BER = {"lanes": "all", "pattern": "PRBS31", "line_rate": "32 Gbps", "target_ber": "1e-12", "confidence": "95 %"}
LANES = [str(n) for n in range(1, 9)]


def test_training_golden_with_retrains(bench):
    bench.power_on()
    out = bench.run("link.training", {"lanes": "all", "speed": "32 GT/s", "width": 8, "retrain": 5})
    assert out.outcome == "PASS", out.message
    assert out.value("speed") == 32.0
    assert out.value("width") == 8
    assert out.value("state") == "L0"
    assert out.value("success_ratio") == 100.0
    assert any("retrain 5 of 5" in p for p in out.progress)


def test_training_on_an_unpowered_board_fails_naming_the_lanes(bench):
    out = bench.run("link.training", {"lanes": [1, 2], "speed": "32 GT/s", "timeout": "1 s"})
    assert out.outcome == "FAIL"
    assert "lane 1: LTSSM DETECT_QUIET, expected L0" in out.message
    assert "lane 2:" in out.message and "lane 3" not in out.message


def test_ber_golden_all_lanes_duration_from_target_and_confidence(bench):
    bench.power_on()
    out = bench.run("link.ber", BER, {"ber": lim("", hi=1e-12)})
    assert out.outcome == "PASS", out.message
    needed = 32e9 * test_duration(1e-12, 0.95, 32e9)  # 2.996e12 bits: -ln(0.05)/1e-12
    assert needed == pytest.approx(2.996e12, rel=1e-3)
    assert set(out.values("ber")) == set(LANES)
    for lane, bits in out.values("bits").items():
        assert needed <= bits <= needed * 1.02, lane  # the gate is rounded up to whole seconds
        assert out.values("errors")[lane] == 0
        assert out.values("ber")[lane] == pytest.approx(ber_upper_bound(bits, 0, 0.95))
        assert out.values("ber")[lane] < 1e-12
    assert any("BER PRBS31 at 32 Gb/s on 8 lanes" in p and "errors none" in p for p in out.progress)
    assert bench.station.role("bert").running() is False


def test_marginal_lane_hot_and_loaded_fails_ber_naming_the_lane(faulty):
    bench = faulty("marginal_lane", lane=3)
    bench.power_on()
    assert bench.run("thermal.soak", {"setpoint": "85 degC", "hold": "1 min"}).outcome == "PASS"
    bench.workload(100)
    out = bench.run("link.ber", BER)  # no plan limit: the target BER is the limit
    assert out.outcome == "FAIL"
    assert out.message.startswith("lane 3: BER upper bound ")
    assert "> target 1e-12 at 95 % CL (" in out.message and " errors in 3.0" in out.message
    verdicts = out.verdicts("ber")
    assert verdicts.pop("3") is Verdict.FAIL
    assert set(verdicts.values()) == {Verdict.PASS}  # every other lane passes
    errors, bits = out.values("errors")["3"], out.values("bits")["3"]
    assert errors > 0
    # the verdict is on the upper bound at the confidence level, not on the raw count
    assert out.values("ber")["3"] == pytest.approx(upper_bound(bits, errors, 0.95))
    assert out.values("ber")["3"] > errors / bits


def test_ber_via_dut_checkers_on_chosen_lanes(faulty):
    bench = faulty("marginal_lane", lane=2, q0=6.6)
    bench.power_on()
    out = bench.run("link.ber", {**BER, "lanes": [1, 2], "via": "dut"}, {"ber": lim("", hi=1e-12)})
    assert out.outcome == "FAIL"
    assert out.message.startswith("lane 2: BER upper bound")
    assert "limit x ≤ 1e-12" in out.message
    assert set(out.values("bits")) == {"1", "2"}
    assert out.values("bits")["1"] >= 2.99e12


def test_ber_without_pattern_sync_fails_saying_no_bits_were_compared(bench):
    bench.power_on()
    out = bench.run("link.ber", {**BER, "lanes": [4], "line_rate": "28 Gbps"})  # the DUT sends 32 Gb/s
    assert out.outcome == "FAIL"
    assert out.message.startswith("lane 4: no bits compared")
    assert out.values("bits") == {"4": 0}


def test_margin_golden_and_marginal_lane(bench, faulty):
    bench.power_on()
    limits = {"eye_height": lim("mV", lo=60.0), "eye_width": lim("UI", lo=0.3)}
    out = bench.run("link.margin", {"lanes": "all"}, limits)
    assert out.outcome == "PASS", out.message
    assert set(out.values("eye_height")) == set(LANES)
    assert all(80 < h < 140 for h in out.values("eye_height").values())
    weak = faulty("marginal_lane", lane=5, q0=4.0)
    weak.power_on()
    bad = weak.run("link.margin", {"lanes": [4, 5]}, limits)
    assert bad.outcome == "FAIL"
    assert bad.message.startswith("lane 5: eye_height")
    assert "lane 4" not in bad.message


def test_bathtub_on_the_mp1900a_extrapolates_each_lane_s_opening(faulty):
    weak = faulty("marginal_lane", lane=5, q0=7.5)
    weak.power_on()
    out = weak.run("link.bathtub", {"lanes": [1, 5], "points": 21, "dwell": "1 s"}, {"opening": lim("UI", lo=0.1)})
    assert out.outcome == "FAIL", out.message
    assert out.message.startswith("lane 5: opening"), out.message
    openings = out.values("opening")
    assert 0.12 < openings["1"] < 0.28  # golden: Q ≈ 9 at the centre, eye closed at ≈ ±0.45 UI
    assert openings["5"] < 0.05
    assert len(out.samples("bathtub_lane1")) == 21
    bert = weak.station.driver("bert")
    assert bert.get("sample_phase", "1") == 0.0  # the sampling point is back at the eye centre


def test_bathtub_on_the_threshold_axis_in_millivolts(bench):
    bench.power_on()
    out = bench.run("link.bathtub", {"lanes": [2], "axis": "voltage", "points": 21, "dwell": "1 s"},
                    {"opening": lim("mV", lo=20.0)})
    assert out.outcome == "PASS", out.message
    # golden ≈ 32–42 mV on a cool board; a busy machine lets the die warm (lower Q) before the scan
    assert 20.0 < out.value("opening") < 50.0
