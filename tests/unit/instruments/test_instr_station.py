"""The station factory over real loopback sockets (a tiny responder, not the simulated lab)."""

from __future__ import annotations

import pytest
from instr_linesrv import LineServer

from labctl.errors import FixtureError
from labctl.fixture.model import Fixture
from labctl.instruments import Multimeter, PowerSupply, SessionLog, open_station

IDN = "Keysight Technologies,E36312A,MY59002391,2.1.0"


def psu_responder(line: str) -> str | None:
    if line == "*IDN?":
        return IDN
    if line.startswith("SYST:ERR?"):
        return '+0,"No error"'
    if line.startswith("MEAS:VOLT?"):
        return "+5.00000000E+00"
    if line.startswith("OUTP?"):
        return "0"
    return None


def make_fixture(psu_resource: str, dead_resource: str, **extra) -> Fixture:
    return Fixture.model_validate({
        "station": "unit-bench",
        "roles": {
            "psu": {"driver": "keysight-e36312a", "resource": psu_resource, "timeout": "500 ms"},
            "dmm": {"driver": "keysight-34465a", "resource": dead_resource, "timeout": 0.5,
                    "options": {"reconnect_attempts": 0}},
        },
        "channels": {"VIN": "psu@(@1)", "VCORE": "dmm@x"},
        **extra,
    })


@pytest.fixture
def servers():
    with LineServer(psu_responder) as psu:
        dead = LineServer(psu_responder)
        dead.close()  # a port nothing listens on
        yield psu, dead


def test_roles_open_lazily_and_are_typed(servers):
    psu_srv, dead = servers
    log = SessionLog()
    with open_station(make_fixture(psu_srv.resource, dead.resource), session_log=log) as st:
        assert not st.driver_is_open("psu") and psu_srv.received == [], "nothing is opened before use"
        psu = st.role("psu")
        assert isinstance(psu, PowerSupply)
        assert st.role("psu") is psu
        assert psu.measure_voltage("1") == 5.0
        role, ch = st.channel("VIN")
        assert role is psu and ch == "1"
        assert st.driver("psu").transport.timeout == 0.5
        with pytest.raises(FixtureError, match="is not a multimeter"):
            st.role("psu", Multimeter)
        with pytest.raises(FixtureError, match="no role 'scope'"):
            st.role("scope")
        with pytest.raises(FixtureError, match="no channel named 'NOPE'"):
            st.channel("NOPE")
    assert any(r["kind"] == "query" and r["text"] == "MEAS:VOLT? (@1)" for r in log.records)


def test_safe_state_continues_past_a_dead_instrument(servers):
    psu_srv, dead = servers
    with open_station(make_fixture(psu_srv.resource, dead.resource)) as st:
        results = st.safe_state()
    assert results["psu"].ok and results["psu"].actions[:3] == ["OUTP 0,(@1)", "OUTP 0,(@2)", "OUTP 0,(@3)"]
    assert not results["dmm"].ok and "nothing listens" in results["dmm"].error
    assert psu_srv.wait_received(6)[-6:] == ["OUTP 0,(@1)", "OUTP 0,(@2)", "OUTP 0,(@3)",
                                             "OUTP? (@1)", "OUTP? (@2)", "OUTP? (@3)"]


def test_open_all_reports_per_role(servers):
    psu_srv, dead = servers
    with open_station(make_fixture(psu_srv.resource, dead.resource)) as st:
        errors = st.open_all()
    assert errors["psu"] is None and errors["dmm"] is not None


def test_bad_profile_or_timeout_fails_when_the_station_is_made(servers):
    psu_srv, dead = servers
    fx = make_fixture(psu_srv.resource, dead.resource)
    fx.roles["dmm"].driver = "no-such-model"
    with pytest.raises(FixtureError, match="role dmm: no driver profile named 'no-such-model'"):
        open_station(fx)
    fx = make_fixture(psu_srv.resource, dead.resource)
    fx.roles["psu"].timeout = "soon"
    with pytest.raises(FixtureError, match="roles.psu.timeout"):
        open_station(fx)


def test_slot_overrides_roles_and_channels(servers):
    psu_srv, dead = servers
    fx = make_fixture(dead.resource, dead.resource, slots=[
        {"id": "B", "roles": {"psu": {"driver": "keysight-e36312a", "resource": psu_srv.resource}},
         "channels": {"VIN": "psu@(@2)"}},
    ])
    with open_station(fx, slot="B") as st:
        role, ch = st.channel("VIN")
        assert ch == "2" and role.measure_voltage(ch) == 5.0
    with pytest.raises(FixtureError, match="no slot 'Z'"):
        open_station(fx, slot="Z")


def test_every_default_implementation_satisfies_its_role_interface():
    from labctl.instruments.impl import DEFAULT_IMPLS
    from labctl.instruments.roles import ROLE_TYPES

    for kind, proto in ROLE_TYPES.items():
        cls = DEFAULT_IMPLS[kind]
        members = [m for m in dir(proto) if not m.startswith("_")]
        missing = [m for m in members if not hasattr(cls, m) and m not in ("name",)]
        assert not missing, f"{cls.__name__} lacks {missing} of {proto.__name__}"
