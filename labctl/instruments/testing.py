"""Test helpers for driver authors: run a role against an exact expected conversation.

>>> with expected_protocol("keysight-e36312a", [("VOLT 5,(@1)", None), ("MEAS:VOLT? (@1)", "+5.0E+00")]) as psu:
...     psu.set_voltage("1", 5.0)
...     assert psu.measure_voltage("1") == 5.0

The block fails if the role sends a command other than the next expected one, and at the
end if expected pairs were left unused (like PyMeasure's ``expected_protocol``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labctl.instruments.driver import ProfileDriver
from labctl.instruments.profile import Profile, load_profile
from labctl.instruments.sessionlog import SessionLog
from labctl.instruments.transports.protocol import Pair, ProtocolTransport


@contextmanager
def expected_protocol(
    profile: str | Path | Profile,
    pairs: Sequence[Pair],
    *,
    role: str | None = None,
    options: dict[str, Any] | None = None,
    name: str = "dut",
    session_log: SessionLog | None = None,
) -> Iterator[Any]:
    """Yield the role object of ``profile`` speaking to a :class:`ProtocolTransport`."""
    from labctl.instruments.station import _impl_class

    prof = profile if isinstance(profile, Profile) else load_profile(str(profile))
    transport = ProtocolTransport(pairs, name=name, session_log=session_log)
    driver = ProfileDriver(prof, transport, options=options)
    driver.open()
    impl = _impl_class(prof, role or prof.roles[0])(driver, name)
    yield impl
    transport.verify()
