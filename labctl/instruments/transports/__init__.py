"""Transports: one interface (:class:`Transport`) over pyvisa, pyserial, or a scripted protocol."""

from __future__ import annotations

from typing import Any

from labctl.instruments.transports.base import Transport
from labctl.instruments.transports.protocol import ProtocolMismatch, ProtocolTransport

__all__ = ["Transport", "ProtocolTransport", "ProtocolMismatch", "make_transport", "is_serial_path"]


def is_serial_path(resource: str) -> bool:
    """A device path (``/dev/ttyUSB0``, ``COM3``, a pty) rather than a VISA resource string."""
    text = resource.strip()
    return text.startswith("/") or text.upper().startswith("COM") or "://" in text


def make_transport(resource: str, *, kind: str = "auto", backend: str = "@py", **kw: Any) -> Transport:
    """The transport for a resource: pyserial for device paths, pyvisa for everything else.

    ``kind`` forces ``visa`` or ``serial``; ``backend`` is the pyvisa backend ("@py" default).
    """
    if kind == "auto":
        kind = "serial" if is_serial_path(resource) else "visa"
    if kind == "serial":
        from labctl.instruments.transports.serial import SerialTransport

        return SerialTransport(resource, **kw)
    if kind == "visa":
        from labctl.instruments.transports.visa import VisaTransport

        return VisaTransport(resource, backend=backend, **kw)
    raise ValueError(f"unknown transport kind {kind!r} (expected auto, visa or serial)")
