"""Emulators of real instrument models, registered by the fixture's ``driver:`` name."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

EMULATORS: dict[str, type] = {}

_MODULES = ("e36312a", "e3631a", "dp832", "el34143a", "dmm34465a", "daq970a", "mp1900a", "ats545", "console")


def emulator(driver: str) -> Callable[[type], type]:
    """Class decorator: ``@emulator("keysight-e36312a")`` serves roles with that driver."""

    def deco(cls: type) -> type:
        EMULATORS[driver] = cls
        cls.driver = driver  # type: ignore[attr-defined]
        return cls

    return deco


def load_all() -> dict[str, type]:
    for name in _MODULES:
        importlib.import_module(f"labctl.sim.emulators.{name}")
    return EMULATORS


def emulator_class(driver: str) -> type:
    load_all()
    try:
        return EMULATORS[driver]
    except KeyError:
        raise KeyError(f"no emulator for driver {driver!r}; known: {', '.join(sorted(EMULATORS))}") from None


def create(driver: str, **kw: Any) -> Any:
    return emulator_class(driver)(**kw)
