"""What every profile-driven role implementation shares."""

from __future__ import annotations

from typing import Any

from labctl.instruments.driver import ProfileDriver
from labctl.instruments.roles import InstrumentErrorEntry


class RoleImpl:
    """A role served by a :class:`ProfileDriver`. ``name`` is the fixture's role name."""

    kind = ""

    def __init__(self, driver: ProfileDriver, name: str) -> None:
        self.driver = driver
        self.name = name

    @property
    def profile(self):
        return self.driver.profile

    def has(self, name: str) -> bool:
        return self.driver.profile.has(name)

    def safe_state(self) -> list[str]:
        return self.driver.safe_state()

    def drain_errors(self) -> list[InstrumentErrorEntry]:
        return self.driver.drain_errors()

    def _get(self, name: str, channel: Any = None, **kw: Any) -> Any:
        return self.driver.get(name, channel, **kw)

    def check_setting(self, name: str, value: Any, channel: Any = None) -> None:
        """Raise what setting ``name`` to ``value`` would (out of range …), sending nothing."""
        if self.has(name):
            self.driver.check_setting(name, value, channel)

    def _set(self, name: str, value: Any, channel: Any = None, **kw: Any) -> None:
        self.driver.set(name, value, channel, **kw)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ({self.driver.profile.name})>"
