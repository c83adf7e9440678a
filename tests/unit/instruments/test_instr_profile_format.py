"""The profile format: validation errors are one line naming the file; parsers; extends;
Python classes named by profiles."""

from __future__ import annotations

import textwrap

import pytest

from labctl.errors import InstrumentReplyError
from labctl.instruments import register_driver
from labctl.instruments.driver import ProfileDriver
from labctl.instruments.impl import ProfilePowerSupply
from labctl.instruments.parsers import parse_reply
from labctl.instruments.profile import ProfileError, load_profile, load_profile_file
from labctl.instruments.testing import expected_protocol
from labctl.instruments.transports.protocol import ProtocolTransport

MINIMAL = """\
name: {name}
manufacturer: Acme
model: PS-1
roles: [power_supply]
identity: {{model: PS-1}}
channels: {{ids: [1]}}
properties:
  voltage: {{get: "VOLT?", set: "VOLT {{value:g}}", parse: float, range: [0, 10]}}
  current_limit: {{get: "CURR?", set: "CURR {{value:g}}", parse: float}}
  output: {{get: "OUTP?", set: "OUTP {{value}}", parse: bool}}
  measured_voltage: {{get: "MEAS:VOLT?", parse: float}}
  measured_current: {{get: "MEAS:CURR?", parse: float}}
"""


def write(tmp_path, name: str, text: str):
    p = tmp_path / f"{name}.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_minimal_profile_loads(tmp_path):
    prof = load_profile_file(write(tmp_path, "acme-ps1", MINIMAL.format(name="acme-ps1")))
    assert prof.roles == ["power_supply"] and prof.channels.ids == ["1"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("  measured_current: {get: \"MEAS:CURR?\", parse: float}\n", ""),
         "role power_supply needs measured_current"),
        (lambda t: t.replace("parse: float, range", "parse: decimal, range"), "properties.voltage.parse"),
        (lambda t: t.replace("range: [0, 10]", "range: [10, 0]"), "range must be [min, max]"),
        (lambda t: t.replace("roles: [power_supply]", "roles: [toaster]"), "roles.0"),
        (lambda t: t + "colour: red\n", "colour: Extra inputs are not permitted"),
        (lambda t: t.replace('get: "OUTP?"', 'get: "OUTP? {ch"'), "bad template"),
        (lambda t: t.replace("name: acme-bad", "name: something-else"), "differs from the file name"),
        (lambda t: t.replace("identity: {model: PS-1}", 'identity: {model: "PS-(1"}'), "identity.model: bad regular expression"),
    ],
)
def test_bad_profiles_are_one_line_errors_with_the_file(tmp_path, edit, message):
    path = write(tmp_path, "acme-bad", edit(MINIMAL.format(name="acme-bad")))
    with pytest.raises(ProfileError) as info:
        load_profile_file(path)
    text = str(info.value)
    assert message in text
    assert text.startswith(str(path)) and "\n" not in text


def test_yaml_syntax_error_has_line_and_column(tmp_path):
    path = write(tmp_path, "acme-yaml", "name: x\nroles: [power_supply\n")
    with pytest.raises(ProfileError) as info:
        load_profile_file(path)
    assert info.value.line is not None and f"{path}:" in str(info.value)


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(ProfileError, match="no driver profile named 'nope'") as info:
        load_profile("nope")
    assert "keysight-e36312a" in info.value.hint


def test_cli_validates_a_profile_file(tmp_path, labctl):
    good = write(tmp_path, "acme-ps1", MINIMAL.format(name="acme-ps1"))
    bad = write(tmp_path, "acme-bad", MINIMAL.format(name="acme-bad").replace("range: [0, 10]", "range: [10, 0]"))
    res = labctl("instruments", "profiles", str(good), str(bad))
    assert res.returncode == 4
    assert "acme-ps1" in res.stdout and "Acme PS-1" in res.stdout
    assert f"{bad}: properties.voltage: range must be [min, max]" in res.stderr
    assert "Traceback" not in res.stderr


def test_extends_merges_over_the_base(tmp_path):
    write(tmp_path, "acme-ps1", MINIMAL.format(name="acme-ps1"))
    child = write(tmp_path, "acme-ps2", """\
        name: acme-ps2
        extends: acme-ps1
        model: PS-2
        identity: {model: PS-2}
        properties:
          voltage: {range: [0, 20]}
        """)
    prof = load_profile_file(child)
    assert prof.model == "PS-2" and prof.identity.model == "PS-2"
    assert prof.properties["voltage"].range == [0, 20]
    assert prof.properties["voltage"].get == "VOLT?", "the base's template is kept"


def test_parsers():
    assert parse_reply("+1.5E+00,+2.0E+00", "csv") == [1.5, 2.0]
    assert parse_reply("", "csv") == []
    assert parse_reply("#214(@101,102,103)", "block") == "(@101,102,103)"
    assert parse_reply("#13(@)", "block") == "(@)"
    assert parse_reply("ON", "bool") is True and parse_reply("0", "bool") is False
    assert parse_reply('"VOLT"', "str") == "VOLT"
    assert parse_reply("+1.0E+00", "int") == 1
    assert parse_reply("a=1 b=2.5", "kv") == {"a": 1.0, "b": 2.5}
    assert parse_reply("x 1 V\ny never\n", "table") == {"x": 1.0, "y": "never"}
    assert parse_reply("CV", "enum", values={"CV": "const-v"}) == "const-v"
    assert parse_reply("T=12.5C", "regex", pattern=r"T=([\d.]+)") == 12.5
    with pytest.raises(ValueError):
        parse_reply("abc", "float")
    with pytest.raises(ValueError):
        parse_reply("MAYBE", "bool")
    # Python reads these as numbers; an instrument never sends them: a garbled reply, an ERROR
    for garbled, kind in (("0.7_5", "float"), ("1_0", "int"), ("１_0", "float"), ("５", "float"), ("1_0", "csv"),
                          ("1_0", "bool")):
        with pytest.raises(ValueError, match="expected"):
            parse_reply(garbled, kind)


def test_garbage_reply_is_an_instrument_reply_error():
    with pytest.raises(InstrumentReplyError, match="expected a number") as info:
        with expected_protocol("keysight-e36312a", [("MEAS:VOLT? (@1)", "\x15#?!@garbage")]) as psu:
            psu.measure_voltage("1")
    assert info.value.command == "MEAS:VOLT? (@1)"


def test_error_queue_drain_is_bounded():
    prof = load_profile("keysight-e36312a")
    limit = prof.errors[0].max_reads
    transport = ProtocolTransport([("SYST:ERR?", '-350,"Queue overflow"')] * limit)
    errors = ProfileDriver(prof, transport).drain_errors()
    assert len(errors) == limit + 1
    assert "still not empty" in errors[-1].message
    transport.verify()


def test_error_queue_garbage_is_a_reply_error():
    transport = ProtocolTransport([("SYST:ERR?", "garbage")])
    with pytest.raises(InstrumentReplyError, match="not code"):
        ProfileDriver(load_profile("keysight-e36312a"), transport).drain_errors()


@register_driver("acme-ps-with-trim")
class TrimmedSupply(ProfilePowerSupply):
    """A Python class named by a profile: adds a step templates cannot express."""

    def set_voltage(self, channel: str, volts: float) -> None:
        super().set_voltage(channel, round(volts, 1))
        self.driver.query("*OPC?")


def test_profile_can_name_a_registered_class(tmp_path):
    path = write(tmp_path, "acme-ps3", MINIMAL.format(name="acme-ps3") + "class: acme-ps-with-trim\n")
    prof = load_profile_file(path)
    with expected_protocol(prof, [("VOLT 1.2", None), ("*OPC?", "1")]) as psu:
        assert isinstance(psu, TrimmedSupply)
        psu.set_voltage("1", 1.234)


def test_unregistered_class_is_a_profile_error(tmp_path):
    path = write(tmp_path, "acme-ps4", MINIMAL.format(name="acme-ps4") + "class: nobody-registered-me\n")
    prof = load_profile_file(path)
    with pytest.raises(ProfileError, match="driver class 'nobody-registered-me' is not registered"):
        with expected_protocol(prof, []):
            pass


def test_entry_point_classes_are_found(monkeypatch, tmp_path):
    from labctl.instruments import registry

    class FakeEntryPoint:
        name = "third-party-psu"

        def load(self):
            return TrimmedSupply

    monkeypatch.setattr(registry, "entry_points", lambda group: [FakeEntryPoint()] if group == "labctl.drivers" else [])
    assert registry.driver_class("third-party-psu") is TrimmedSupply


def test_a_huge_garbage_reply_is_quoted_short_with_its_length():
    """A 5 MB reply (a stuck serial line, a binary dump) is the step's ERROR in one readable
    line: quoted to 200 characters with its length, not three 5 MB lines and a 5 MB message."""
    with pytest.raises(InstrumentReplyError) as info:
        with expected_protocol("keysight-e36312a", [("MEAS:VOLT? (@1)", "A" * 5_000_000)]) as psu:
            psu.measure_voltage("1")
    message = str(info.value)
    assert "(5,000,000 characters)" in message and len(message) < 400, message[:500]
