"""MP1900A BERT: gated PRBS measurements per lane, sync rules, BER physics."""

from __future__ import annotations

import pytest
import serial

from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)

EC, CC, ER = '"CURRent:EC:TOTal"', '"CURRent:CC:TOTal"', '"CURRent:ER:TOTal"'
PSL, CLOS = '"CURRent:AINTerval:PSLoss"', '"CURRent:AINTerval:CLOSs"'


def result(bert, item: str) -> str:
    """The result's text, inside the quotes of the string the ED answers."""
    reply = bert.query(f":CALCulate:DATA:EALarm? {item}")
    assert len(reply) >= 2 and reply[0] == reply[-1] == '"', reply
    return reply[1:-1]


def test_gated_measurement_counts_bits_at_line_rate(mvisa, mconsole, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    bert.write(":MODule:ID 1;:SENSe:PATTern:TYPE PRBS;:SENSe:PATTern:PRBS:LENGth 31")
    bert.write(":SENS:MEAS:EAL:PER 0,0,0,30;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(10)
    assert bert.query(":SENSe:MEASure:EALarm:STATe?") == "1"
    assert bert.query(":SENSe:MEASure:EALarm:ELAPsed?") == "0,0,0,10"
    clock.advance(25)
    assert bert.query(":SENSe:MEASure:EALarm:STATe?") == "0"
    assert bert.query(":SENSe:MEASure:EALarm:ELAPsed?") == "0,0,0,30"
    assert int(result(bert, CC)) == 32_000_000_000 * 30
    assert result(bert, EC) == "0"
    assert result(bert, ER) == "0.0000E+00"
    assert result(bert, PSL) == "0"
    assert bert.query(":SENS:PATT:PRBS:LENG?") == "31"
    assert bert.query(":SENS:MEAS:EAL:PER?") == "0,0,0,30"


def test_unpowered_board_is_clock_and_sync_loss(mvisa, clock):
    bert = mvisa("bert")
    bert.write(":MOD:ID 2;:SENS:MEAS:EAL:PER 0,0,0,20;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(30)
    assert result(bert, CC) == "0"
    assert result(bert, PSL) == "20" and result(bert, CLOS) == "20"
    assert result(bert, ER) == "-------"  # no bit compared: the ED has no BER (was 9.9100E+37)


def test_pattern_must_match_the_dut_transmitter(mvisa, mconsole, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    bert.write(":MOD:ID 4;:SENS:PATT:PRBS:LENG 7;:SENS:MEAS:EAL:PER 0,0,0,10;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(12)
    assert result(bert, CC) == "0" and result(bert, PSL) == "10"
    mconsole.cmd("prbs start 7")  # the DUT now transmits PRBS7
    bert.write(":SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(12)
    assert int(result(bert, CC)) == 32_000_000_000 * 10


def test_all_lanes_at_once_and_lane_selection(mvisa, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    bert.write(":SENS:MEAS:EAL:MODE UNT;:SENS:MEAS:ALL:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(5)
    bert.write(":SENS:MEAS:ALL:STOP")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(5)
    for lane in (1, 8):
        bert.write(f":MOD:ID {lane}")
        assert bert.query(":MOD:ID?") == str(lane)
        assert int(result(bert, CC)) == 32_000_000_000 * 5


def test_repeat_gating_starts_the_counts_again_at_each_period(mvisa, clock):
    """REPeat: the measurement runs on, one gating period after another, and the current result
    is that of the period under way (UNTimed counts on from the start; SINGle stops)."""
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    bert.write(":MOD:ID 2;:SENS:MEAS:EAL:MODE REP;:SENS:MEAS:EAL:PER 0,0,0,10;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(25)
    assert bert.query(":SENS:MEAS:EAL:STAT?") == "1"  # still measuring after two periods
    assert bert.query(":SENS:MEAS:EAL:ELAP?") == "0,0,0,5"  # 5 s into the third period
    assert int(result(bert, CC)) == 32_000_000_000 * 5
    bert.write(":SENS:MEAS:EAL:MODE UNT;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(25)
    assert int(result(bert, CC)) == 32_000_000_000 * 25


def test_marginal_lane_fails_at_the_hot_corner_only(manual_lab, mvisa, mconsole, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    manual_lab.inject({"fault": "marginal_lane", "lane": 3})
    power_on(psu, clock=clock)
    bert.write(":MOD:ID 3;:SENS:MEAS:EAL:PER 0,0,1,0;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(61)
    assert int(result(bert, EC)) <= 2  # room temperature, idle: fine
    chamber = serial.Serial(manual_lab.addresses["chamber"], 9600, timeout=2)
    chamber.write(b"SETP 45\n*OPC?\n")  # the flagship plan's hot corner
    assert chamber.readline() == b"1\n"
    chamber.close()
    mconsole.cmd("load stress 100")
    clock.advance(900)
    for lane in (1, 3):
        bert.write(f":MOD:ID {lane};:SENS:MEAS:STAR")
        assert bert.query("*OPC?") == "1"  # the commands above are done
    clock.advance(61)
    bert.write(":MOD:ID 3")
    ber = float(result(bert, ER))
    assert 1e-10 < ber < 1e-8
    hot_eye = float(bert.query(':CALC:DATA:EYE? "HEIGht"'))
    bert.write(":MOD:ID 1")
    assert result(bert, EC) == "0"
    assert float(bert.query(':CALC:DATA:EYE? "HEIGht"')) > hot_eye + 15
    assert 0.3 < float(bert.query(':CALC:DATA:EYE? "WIDTh"')) < 0.7


def test_bert_rejects_bad_settings(mvisa):
    bert = mvisa("bert")
    bert.write(":MOD:ID 9")
    bert.write(":SENS:PATT:PRBS:LENG 8")
    bert.write(":SENS:MEAS:EAL:PER 0,0,0")
    bert.write(':CALC:DATA:EAL? "CURRent:XX:TOTal"')
    codes = [bert.query("SYST:ERR?").split(",")[0] for _ in range(4)]
    assert codes == ["-222", "-224", "-109", "-224"]


def test_moving_the_sampling_point_off_the_eye_centre_raises_the_ber(mvisa, clock):
    psu, bert = mvisa("psu"), mvisa("bert")
    power_on(psu, clock=clock)
    assert bert.query(":MOD:ID 3;:INP:CLOC:DEL 200,UI;:INP:CLOC:DEL? UI") == "200"
    bert.write(":SENS:MEAS:EAL:PER 0,0,0,10;:SENS:MEAS:STAR")
    assert bert.query("*OPC?") == "1"
    clock.advance(11)
    off_centre = int(result(bert, EC))
    assert 100 < off_centre and int(result(bert, CC)) == 32_000_000_000 * 10  # BER ≈ 1e-7 at 0.2 UI
    bert.write(":INP:CLOC:DEL 480,UI;:SENS:MEAS:STAR")  # in the crossing: the ED loses pattern sync
    assert bert.query("*OPC?") == "1"
    clock.advance(11)
    assert result(bert, CC) == "0" and result(bert, PSL) == "10"
    bert.write(":INP:CLOC:DEL 0,UI;:INP:DATA:THR DATA,0.04;:SENS:MEAS:STAR")  # 40 mV off the middle
    assert bert.query("*OPC?") == "1"
    clock.advance(11)
    assert float(bert.query(":INP:DATA:THR? DATA")) == pytest.approx(0.04)
    assert int(result(bert, EC)) > 100
    bert.write(":INP:CLOC:DEL 1500,UI")
    assert bert.query("SYST:ERR?").startswith("-222")
