"""Profile-driven implementations of the role interfaces, one per role."""

from __future__ import annotations

from labctl.instruments.impl.base import RoleImpl
from labctl.instruments.impl.console import ProfileDutConsole
from labctl.instruments.impl.link import ProfileLinkTester
from labctl.instruments.impl.meters import ProfileMultimeter, ProfileTemperatureScanner
from labctl.instruments.impl.power import ProfileElectronicLoad, ProfilePowerSupply
from labctl.instruments.impl.thermal import ProfileThermalChamber

DEFAULT_IMPLS: dict[str, type[RoleImpl]] = {
    cls.kind: cls
    for cls in (
        ProfilePowerSupply,
        ProfileElectronicLoad,
        ProfileMultimeter,
        ProfileTemperatureScanner,
        ProfileThermalChamber,
        ProfileLinkTester,
        ProfileDutConsole,
    )
}

__all__ = ["DEFAULT_IMPLS", "RoleImpl", *(c.__name__ for c in DEFAULT_IMPLS.values())]
