"""The instrument layer: role interfaces, profile-driven drivers, transports, station.

Checks use :func:`open_station` and the role interfaces in :mod:`labctl.instruments.roles`;
SCPI strings live only in the profiles (``drivers/*.yaml``).

Imports are lazy so ``import labctl.instruments`` stays cheap.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "open_station": "labctl.instruments.station",
    "Station": "labctl.instruments.station",
    "SessionLog": "labctl.instruments.sessionlog",
    "ProtocolTransport": "labctl.instruments.transports.protocol",
    "ProfileDriver": "labctl.instruments.driver",
    "load_profile": "labctl.instruments.profile",
    "register_driver": "labctl.instruments.registry",
    "PowerSupply": "labctl.instruments.roles",
    "ElectronicLoad": "labctl.instruments.roles",
    "Multimeter": "labctl.instruments.roles",
    "TemperatureScanner": "labctl.instruments.roles",
    "ThermalChamber": "labctl.instruments.roles",
    "LinkTester": "labctl.instruments.roles",
    "DutConsole": "labctl.instruments.roles",
    "BerResult": "labctl.instruments.roles",
    "InstrumentErrorEntry": "labctl.instruments.roles",
    "SafeStateResult": "labctl.instruments.roles",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'labctl.instruments' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
