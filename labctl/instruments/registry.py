"""Python driver classes named by profiles (``class: my-name`` in the YAML).

For what templates cannot express (binary blocks, multi-step sequences), a profile names a
class. Register it with the decorator, or ship it in a package with an entry point::

    [project.entry-points."labctl.drivers"]
    acme-chamber = "acme_labctl.chamber:AcmeChamber"

The class subclasses one of the role implementations in ``labctl.instruments.impl`` (or at
least takes ``(driver, name)`` and implements the role's interface).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from labctl.instruments.profile import ProfileError

_CLASSES: dict[str, type] = {}
ENTRY_POINT_GROUP = "labctl.drivers"


def register_driver(name: str):
    """Class decorator: make ``name`` usable as ``class:`` in a profile."""

    def deco(cls: type) -> type:
        _CLASSES[name] = cls
        return cls

    return deco


def driver_class(name: str, *, profile_file: str | None = None) -> Any:
    if name not in _CLASSES:
        import labctl.instruments.impl  # noqa: F401  (registers the built-in classes)
    if name not in _CLASSES:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                _CLASSES[name] = ep.load()
                break
    if name not in _CLASSES:
        raise ProfileError(
            f"driver class {name!r} is not registered",
            file=profile_file,
            hint=f"register it with @register_driver({name!r}) or an entry point in group {ENTRY_POINT_GROUP!r}",
        )
    return _CLASSES[name]


def registered() -> dict[str, type]:
    return dict(_CLASSES)
