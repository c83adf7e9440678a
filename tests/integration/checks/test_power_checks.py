"""Power checks on the simulated bench: a golden board passes sensible limits; each power
fault fails the check you would expect, with a message naming the rail."""

from __future__ import annotations

import pytest

from tests.integration.checks.conftest import lim, nominal

pytestmark = pytest.mark.timeout(60)

RAILS = ["VDD_AUX", "VDD_CORE", "VDD_IO", "VDD_HBM"]
NOMINAL = {"VDD_AUX": 3.3, "VDD_CORE": 0.75, "VDD_IO": 0.9, "VDD_HBM": 1.2}
RAIL_LIMITS = {r: nominal(v, 0.03, "V") for r, v in NOMINAL.items()}
SEQUENCE = {"order": RAILS, "threshold": "90 %", "gap_min": "1 ms", "gap_max": "10 ms"}


def test_power_on_switches_the_input_on_and_records_inrush(bench):
    out = bench.run("power.on", {"voltage": "5 V", "current_limit": "5 A", "settle": "500 ms"},
                    {"input_voltage": nominal(5.0, 0.02, "V"), "inrush_peak": lim("A", hi=5.0)})
    assert out.outcome == "PASS", out.message
    assert out.value("input_voltage") == pytest.approx(5.0, abs=0.05)
    assert 0.5 < out.value("input_current") < 2.0  # the idle board
    assert out.value("inrush_peak") >= out.value("input_current") * 0.9
    assert out.samples("VIN_current"), "the inrush current is recorded as a series"
    assert bench.station.role("psu").output("1") is True


def test_power_on_with_a_current_limit_the_supply_cannot_do_is_an_error_naming_it(bench):
    out = bench.run("power.on", {"voltage": "5 V", "current_limit": "50 A"})
    assert out.outcome == "ERROR"
    assert "current_limit 50 A" in out.message and "psu" in out.message


def test_golden_rails_pass_via_daq_and_via_dut_telemetry(bench):
    bench.power_on()
    for via in ("daq", "dut"):
        out = bench.run("power.rails", {"rails": RAILS, "via": via, "samples": 2}, RAIL_LIMITS)
        assert out.outcome == "PASS", (via, out.message)
        for rail, volts in NOMINAL.items():
            assert out.values(rail)[rail] == pytest.approx(volts, rel=0.01)


def test_dead_rail_fails_rails_and_sequencing_naming_the_rail(faulty):
    bench = faulty("dead_rail", rail="VDD_HBM")
    bench.power_on()
    out = bench.run("power.rails", {"rails": RAILS, "via": "daq"}, RAIL_LIMITS)
    assert out.outcome == "FAIL"
    assert out.message.startswith("VDD_HBM"), out.message
    assert "VDD_CORE" not in out.message  # only the dead rail is named
    seq = bench.run("power.sequencing", {**SEQUENCE, "timeout": "2 s"})
    assert seq.outcome == "FAIL"
    assert "VDD_HBM: power-good never came up" in seq.message
    assert seq.value("order") == "VDD_AUX,VDD_CORE,VDD_IO"


def test_sequencing_golden_order_and_gaps(bench):
    bench.power_on()
    out = bench.run("power.sequencing", SEQUENCE)
    assert out.outcome == "PASS", out.message
    assert out.value("order") == ",".join(RAILS)
    gaps = {m.name: m.value for m in out.measurements if "->" in m.name}
    assert set(gaps) == {"VDD_AUX->VDD_CORE", "VDD_CORE->VDD_IO", "VDD_IO->VDD_HBM"}
    assert all(1.0 <= g <= 10.0 for g in gaps.values()), gaps
    assert all(m.unit == "ms" for m in out.measurements if "->" in m.name)


def test_slow_sequencing_fails_the_gap_window_naming_the_rails(faulty):
    bench = faulty("slow_sequencing")
    bench.power_on()
    out = bench.run("power.sequencing", SEQUENCE)
    assert out.outcome == "FAIL"
    assert "VDD_AUX->VDD_CORE" in out.message and "outside" in out.message
    assert out.value("VDD_AUX->VDD_CORE") > 10.0


def test_ripple_golden_and_noisy_rail(bench, faulty):
    bench.power_on()
    limits = {"VDD_CORE": lim("mV", hi=20.0)}
    out = bench.run("power.ripple", {"rails": ["VDD_CORE"], "via": "dmm"}, limits)
    assert out.outcome == "PASS", out.message
    assert 0.5 < out.value("VDD_CORE") < 10.0  # about 3 mV p-p on a golden board
    noisy = faulty("noisy_rail", rail="VDD_CORE", ripple_mvpp=60)
    noisy.power_on()
    bad = noisy.run("power.ripple", {"rails": ["VDD_CORE"], "via": "dmm"}, limits)
    assert bad.outcome == "FAIL"
    assert bad.message.startswith("VDD_CORE") and "mV" in bad.message
    assert bad.value("VDD_CORE") == pytest.approx(60.0, rel=0.1)


def test_budget_idle_and_stress(bench):
    bench.power_on()
    idle = bench.run("power.budget", {"workload": "idle", "duration": "10 s"}, {"input_power": lim("W", hi=8.0)})
    stress = bench.run("power.budget", {"workload": "stress", "duration": "20 s"}, {"input_power": lim("W", hi=8.0)})
    assert idle.outcome == "PASS", idle.message
    assert stress.outcome == "FAIL" and stress.message.startswith("load stress: input_power")
    assert stress.value("input_power") > 2 * idle.value("input_power")
    assert stress.value("peak_power") >= stress.value("input_power")
    # one sample every duration/20; at ×600 each reading's own wall time also passes on the
    # simulated clock, so a loaded machine fits fewer than 20 into the window (seen: 9)
    assert len(stress.samples("input_power")) >= 5
    assert bench.station.role("dut").load() == 0  # the workload is put back as it was


@pytest.mark.parametrize("counter", ["throughput", "ops"])
def test_perf_per_watt_is_throughput_over_input_power(bench, counter):
    bench.power_on()
    out = bench.run("power.perf_per_watt", {"workload": "inference", "load": "100 %", "duration": "30 s",
                                             "counter": counter}, {"perf_per_watt": lim("TOPS/W", lo=6.0)})
    assert out.outcome == "PASS", out.message
    assert out.value("throughput") == pytest.approx(120.0, rel=0.1)  # the DUT peak at 100 % (time-scale jitter)
    assert out.value("perf_per_watt") == pytest.approx(out.value("throughput") / out.value("input_power"))
    half = bench.run("power.perf_per_watt", {"load": "50 %", "duration": "30 s", "counter": counter})
    assert half.value("throughput") == pytest.approx(60.0, rel=0.1)


def test_efficiency_curve_over_load_steps(bench):
    bench.power_on()
    out = bench.run("power.efficiency", {"load_steps": ["0.5 A", "1 A", "2 A"], "dwell": "2 s"},
                    {"efficiency": lim("%", lo=80.0)})
    assert out.outcome == "PASS", out.message
    curve = out.values("efficiency")
    assert list(curve) == ["0.5 A", "1 A", "2 A"]
    assert all(80 < e < 102 for e in curve.values()), curve
    assert bench.station.role("load").input() is False  # the load is switched off afterwards


def test_efficiency_on_an_unpowered_board_fails_clearly(bench):
    out = bench.run("power.efficiency", {"load_steps": ["1 A"], "dwell": "1 s"})
    assert out.outcome == "FAIL"
    assert "is it powered" in out.message


def test_ripple_via_the_dmm_uses_the_dmm_alone(bench):
    """VDD_CORE is wired to a daq channel too; finding out that the daq is no multimeter must
    not count it as used by the step (its error queue would be read, and a daq that stopped
    answering would make a ripple step that never touched it an ERROR)."""
    bench.power_on()
    out = bench.run("power.ripple", {"rails": ["VDD_CORE"], "via": "dmm"})
    assert out.outcome == "PASS", out.message
    assert out.ctx.roles_used == {"dmm"}


def test_rails_via_the_dmm_read_the_rail_it_probes_and_refuse_one_it_does_not(bench):
    """The sim bench's dmm probes VDD_CORE (`options: {signal: VDD_CORE}`): that rail is read on
    it alone; VDD_HBM, which no multimeter probes, is an ERROR saying what to do."""
    bench.power_on()
    out = bench.run("power.rails", {"rails": ["VDD_CORE"], "via": "dmm"}, RAIL_LIMITS)
    assert out.outcome == "PASS", out.message
    assert out.ctx.roles_used == {"dmm"}
    assert out.values("VDD_CORE")["VDD_CORE"] == pytest.approx(0.75, rel=0.02)
    out = bench.run("power.rails", {"rails": ["VDD_HBM"], "via": "dmm"}, RAIL_LIMITS)
    assert out.outcome == "ERROR"
    assert "rail VDD_HBM: no multimeter is wired to it" in out.message and "via: daq" in out.message


def test_progress_names_the_rail_being_read(bench):
    """The operator's progress line names the rail the DAQ is reading now, not the one before
    (power.ripple reports its rails the same way)."""
    from labctl.engine.events import Progress

    bench.power_on()
    log = bench.station.session_log
    named: list[tuple[str, int]] = []  # (rail named, session log records by then)

    def watch(event):
        if isinstance(event, Progress):
            named.append((event.text.split()[1], log.total))

    out = bench.run("power.rails", {"rails": RAILS, "via": "daq"}, RAIL_LIMITS, watch=watch)
    assert out.outcome == "PASS", out.message
    assert [rail for rail, _ in named] == RAILS
    channel = {r: bench.fixture.channels[r].split("@", 1)[1] for r in RAILS}  # daq@(@111) -> (@111)
    ends = [n for _, n in named[1:]] + [log.total]
    for (rail, begin), end in zip(named, ends, strict=True):
        io = [r["text"] for r in log.since(begin)[0][: end - begin] if r["kind"] in ("query", "write")]
        assert io and all(channel[rail] in cmd for cmd in io if "(@" in cmd), (rail, io)
